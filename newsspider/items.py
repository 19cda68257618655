"""The crawl's one item type.

``ArticleItem`` carries the fields of Li & Jiang 2012 fig. 2 under the names the
whole project uses, item to column (fig. 2 ``urladdr`` is ``url``, ``newstime`` is
``published``; ``source``, ``title`` and ``content`` keep the paper's names), plus
what the pipeline needs in between: the response
as fetched (``html`` bytes, so decoding stays the extractor's job, and the
headers carrying the charset) and the extraction outputs it fills in.

The spider fills the first six fields (a backfill also ``archive`` and ``captured_at``,
where the bytes came from; a multi-page article ``pages`` and ``page_urls``); the
pipeline fills the rest.  Pipelines
read and write it only through ``ItemAdapter(item)``, so it can change shape
without touching them.

Field ``serializer`` metadata (honoured by Scrapy's feed exporters) makes
``-o items.jsonl`` work: ``html`` is written as base64 (JSON has no bytes) and
the times as ISO 8601 with their offset (Scrapy's JSON encoder drops it).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["ArticleItem"]


def _export_bytes(value: bytes) -> str:
    """Feed-export form of ``html``: base64, lossless whatever the page's charset."""
    return base64.b64encode(value).decode("ascii")


def _export_time(value: datetime | None) -> str | None:
    """Feed-export form of a time: ISO 8601 keeping the offset."""
    return None if value is None else value.isoformat()


def _export_pages(value: tuple[tuple[str, bytes], ...]) -> list[dict[str, str]]:
    """Feed-export form of ``pages``: each further page's URL and its bytes in base64."""
    return [{"url": url, "html": _export_bytes(body)} for url, body in value]


_BYTES = {"serializer": _export_bytes}
_PAGES = {"serializer": _export_pages}
_TIME = {"serializer": _export_time}


@dataclass(slots=True)
class ArticleItem:
    """One fetched article page and, once extracted, its headline, time and body.

    Set by the spider:

    - ``url``: the page's URL after redirects (fig. 2 ``urladdr``);
    - ``site``: the key of its :class:`~newsspider.sites.Site` row;
    - ``source``: the site's display name (fig. 2 ``source``, e.g. 网易新闻);
    - ``html``: the body bytes exactly as served (GBK stays GBK);
    - ``headers``: a few response headers as ``str`` (``Content-Type`` at
      least, when sent), for the charset and as date hints;
    - ``fetched_at``: when it was fetched, timezone-aware UTC;
    - for a multi-page article (``newsspider/extraction/pager.py``), ``pages``: the pages
      after the first, in order, as ``(url, body bytes)`` (extracted like ``html`` and
      their bodies joined to it), and ``page_urls``: the URLs of every page whose body makes
      the article, in order (``html``'s first; a one-page version of a paged article, its
      全文 link, is one URL that is not ``url``). Both empty for an ordinary page;
      ``url`` is always the first page's, the row the article is stored under
      (``articles.page_urls`` keeps ``page_urls`` as a JSON list).

    Filled by the extraction pipeline:

    - ``title``, ``published`` (aware), ``published_source`` (where the time
      came from, as in ``ExtractedArticle.published_source``) and
      ``published_precision`` (what it states: ``second`` ... ``day``, ``month``);
    - ``raw_text``: the extracted body, one block per line;
    - ``content``: ``raw_text`` after the line-hash filter (Li & Jiang §2.2),
      the fig. 2 ``content``;
    - ``encoding``: the encoding the bytes were decoded with;
    - what the page states about itself, under ``ExtractedArticle``'s names
      (docs/fields.md), None or empty when it states nothing: ``authors`` (a tuple of
      names) and ``authors_source``, ``origin`` (the stated source, 来源, normalised)
      and ``origin_source``, ``editor``, ``section`` and ``section_source`` (``url``:
      from the URL's path, when the site row has ``section_from_path``), ``language``
      (ISO 639-1), ``script``, ``image`` (a URL) and ``image_caption``;
    - ``kind``: the page's kind (``article``, ``gallery``, ``video``, ``live``; ``topic``,
      ``list`` and ``blocked`` pages are dropped, docs/crawling.md "Page kinds").

    Set by the spider for the pipeline: ``depth``, the page's crawl depth (the links of a
    topic or list page under an article URL are followed from it, within ``DEPTH_LIMIT``).

    Set by ``scrapy backfill`` (``newsspider/backfill``), None for a live fetch:

    - ``archive``: the web archive the bytes came from (``cc:CC-MAIN-2024-10``,
      ``wayback``, a CDX endpoint's URL, ``warc:<file name>``);
    - ``captured_at``: when the archive captured the page, timezone-aware UTC.

    The corpus pipeline stores both (``articles.archive``, ``captured_at``), and every
    field above in the column of its name (``authors`` joined by ``、``).
    """

    url: str
    site: str
    source: str
    html: bytes = field(repr=False, metadata=_BYTES)
    headers: dict[str, str]
    fetched_at: datetime = field(metadata=_TIME)
    title: str | None = None
    published: datetime | None = field(default=None, metadata=_TIME)
    published_source: str | None = None
    published_precision: str | None = None
    raw_text: str = field(default="", repr=False)
    content: str = field(default="", repr=False)
    encoding: str | None = None
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
    kind: str | None = None
    depth: int = 0
    archive: str | None = None
    captured_at: datetime | None = field(default=None, metadata=_TIME)
    pages: tuple[tuple[str, bytes], ...] = field(default=(), repr=False, metadata=_PAGES)
    page_urls: tuple[str, ...] = ()
