"""Rewriting stored articles in place: what ``scrapy reextract`` needs from SQL.

:func:`stored_by_url` reads the rows a batch of archived pages refers to;
:func:`rewrite_articles` overwrites the extracted columns of some of them, by id, in the
caller's transaction. The row keeps its id, URL, site, source and ``fetched_at``. An update
only lands when the row's ``content_md5`` is still the one read (a crawl that refreshed
the page meanwhile wins), as in :mod:`newsspider.storage.reclean`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from .db import _no_nul, chunked
from .models import Article, utcnow

__all__ = ["REWRITE_COLUMNS", "StoredArticle", "rewrite_articles", "stored_by_url"]

ARTICLES = Article.__table__

#: The columns a re-extraction rewrites (what extraction and cleaning produce).
REWRITE_COLUMNS = (
    "title",
    "published",
    "published_source",
    "published_precision",
    "content",
    "raw_text",
    "encoding",
    "content_md5",
)


@dataclass(frozen=True, slots=True)
class StoredArticle:
    """The stored state of one article, as a re-extraction compares it."""

    id: int
    url: str
    site: str
    title: str | None
    published: datetime | None
    published_source: str | None
    published_precision: str | None
    content: str
    raw_text: str
    encoding: str | None
    content_md5: str

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in REWRITE_COLUMNS}


def stored_by_url(
    session: Session, urls: Iterable[str], site: str | None = None
) -> dict[str, StoredArticle]:
    """The stored articles among ``urls`` (of ``site`` only, when given), by URL."""
    columns = [ARTICLES.c.id, ARTICLES.c.url, ARTICLES.c.site]
    columns += [ARTICLES.c[name] for name in REWRITE_COLUMNS]
    found: dict[str, StoredArticle] = {}
    for chunk in chunked(sorted(set(urls))):
        stmt = select(*columns).where(ARTICLES.c.url.in_(chunk))
        if site is not None:
            stmt = stmt.where(ARTICLES.c.site == site)
        for row in session.execute(stmt):
            found[row.url] = StoredArticle(**row._asdict())
    return found


def rewrite_articles(
    session: Session, changes: Sequence[tuple[StoredArticle, dict[str, Any]]]
) -> int:
    """Overwrite the :data:`REWRITE_COLUMNS` of each ``(stored, values)`` by id (and
    ``updated_at``); return how many rows changed. A row whose ``content_md5`` is no longer
    ``stored.content_md5`` is left alone (it was re-fetched meanwhile). No commit."""
    if not changes:
        return 0
    stmt = (
        update(ARTICLES)
        .where(ARTICLES.c.id == bindparam("b_id"), ARTICLES.c.content_md5 == bindparam("b_md5"))
        .values({name: bindparam(f"v_{name}") for name in (*REWRITE_COLUMNS, "updated_at")})
    )
    now = utcnow()
    params = []
    for stored, values in changes:
        row = {f"v_{name}": _no_nul(values[name]) for name in REWRITE_COLUMNS}
        row.update(b_id=stored.id, b_md5=stored.content_md5, v_updated_at=now)
        params.append(row)
    done = 0
    for start in range(0, len(params), 500):
        result = session.connection().execute(stmt, params[start : start + 500])
        done += max(0, result.rowcount)
    return done
