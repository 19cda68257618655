"""Result types of extraction, shared by every extractor."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(slots=True)
class ExtractedArticle:
    """One extracted page.

    ``text`` holds the body, one block or paragraph per line (no empty lines).
    ``published`` is always timezone-aware or None; ``published_source`` says
    where it came from (``"json-ld"``, ``"meta:article:published_time"``,
    ``"time-element"``, ``"text"`` (near the body, Zou & Zhong §1.2.3), ``"url"``,
    ``"text:issue"``: best mode's last resort, a reprint's monthly issue, precise to
    the month only and given as the 1st at midnight).
    """

    title: str | None
    published: datetime | None
    published_source: str | None
    text: str
    encoding: str
    mode: str
    url: str | None = None
    title_source: str | None = None
