"""Result types of extraction, shared by every extractor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .dates import time_precision


@dataclass(slots=True)
class ExtractedArticle:
    """One extracted page.

    ``text`` holds the body, one block or paragraph per line (no empty lines).
    ``published`` is always timezone-aware or None; ``published_source`` says
    where it came from (``"json-ld"``, ``"meta:article:published_time"``,
    ``"time-element"``, ``"text"`` (near the body, Zou & Zhong §1.2.3), ``"url"``,
    ``"text:issue"``: best mode's last resort, a reprint's monthly issue, precise to
    the month only and given as the 1st at midnight). ``published_precision`` says what
    the time states: ``second``, ``minute``, ``hour``, ``day`` (a date without a clock
    time) or ``month`` (``text:issue``); when not given it is derived from ``published``
    and ``published_source`` (:func:`.dates.time_precision`).

    Record fields (:mod:`.record`), each None / empty when the page does not state it:
    ``authors`` the writers' names without roles or agencies (``authors_source`` says
    where they were read); ``origin`` the stated source, normalised (``origin_source``);
    ``editor`` the responsible editor; ``section`` the site's section (``section_source``);
    ``language`` ISO 639-1 of the body; ``script`` ``simplified`` / ``traditional`` /
    ``mixed`` for Chinese; ``image`` an absolute URL and ``image_caption``.

    ``kind`` is the page's kind (:mod:`.kinds`: ``article``, ``gallery``, ``video``,
    ``live``, ``topic``, ``list``; ``blocked`` is the challenge detector's), decided by every
    method from the page and the body it extracted.
    """

    title: str | None
    published: datetime | None
    published_source: str | None
    text: str
    encoding: str
    mode: str
    url: str | None = None
    title_source: str | None = None
    published_precision: str | None = None
    authors: tuple[str, ...] = ()
    authors_source: str | None = None
    origin: str | None = None
    origin_source: str | None = None
    editor: str | None = None
    section: str | None = None
    section_source: str | None = None
    language: str | None = None
    script: str | None = None
    image: str | None = None
    image_caption: str | None = None
    kind: str = "article"

    def __post_init__(self) -> None:
        if self.published_precision is None:
            self.published_precision = time_precision(self.published, self.published_source)


#: What a page states about itself, beside title, time and body: the record fields of
#: :class:`ExtractedArticle`, named alike on the crawl's item (``pipelines/extract.py``)
#: and as ``articles`` columns (``storage/db.py``), docs/fields.md.
RECORD_FIELDS = (
    "authors",
    "authors_source",
    "origin",
    "origin_source",
    "editor",
    "section",
    "section_source",
    "language",
    "script",
    "image",
    "image_caption",
    "kind",
)
