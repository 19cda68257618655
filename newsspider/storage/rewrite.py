"""Rewriting stored articles in place: what ``scrapy reextract`` needs from SQL.

:func:`stored_by_url` reads the rows a batch of archived pages refers to;
:func:`rewrite_articles` overwrites the extracted columns of some of them, by id, in the
caller's transaction. The row keeps its id, URL, site, source and ``fetched_at``. An update
only lands when the row's ``content_md5`` is still the one read (a crawl that refreshed
the page meanwhile wins), as in :mod:`newsspider.storage.reclean`.

The record columns (revision 0008: authors, origin, editor, section, language, script,
image; :data:`~newsspider.storage.db.RECORD_COLUMNS`) are rewritten too when the values
carry them: :func:`record_values` makes them from an ``ExtractedArticle``, so rows stored
before the revision get them from their archived pages. A change that leaves them out
keeps the stored ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from newsspider.sites import Site

from .db import RECORD_COLUMNS, _no_nul, chunked, record_row
from .models import Article, utcnow

__all__ = [
    "BODY_COLUMNS",
    "RECORD_COLUMNS",
    "REWRITE_COLUMNS",
    "StoredArticle",
    "paged_articles",
    "record_values",
    "rewrite_articles",
    "stored_by_url",
]

ARTICLES = Article.__table__

#: The headline, time and body columns a re-extraction rewrites.
BODY_COLUMNS = (
    "title",
    "published",
    "published_source",
    "published_precision",
    "content",
    "raw_text",
    "encoding",
    "content_md5",
)
#: Every column a re-extraction rewrites (what extraction and cleaning produce).
REWRITE_COLUMNS = (*BODY_COLUMNS, *RECORD_COLUMNS)


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
    authors: str | None = None
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

    def values(self, names: Iterable[str] = BODY_COLUMNS) -> dict[str, Any]:
        """The stored values of ``names`` (the body columns by default): compare a
        re-extraction's values with ``row.values(values)`` to see whether anything changed."""
        return {name: getattr(self, name) for name in names}


def record_values(article: Any, site: Site | None = None) -> dict[str, Any]:
    """The record columns of an ``ExtractedArticle`` as stored (``authors`` joined by ``、``,
    empty values NULL, lengths cut as every upsert cuts them).

    ``site``: its row; when the page states no section and the row has
    ``section_from_path``, the section is the first segment of the article's URL path
    (``section_source`` ``url``), as in a crawl.
    """
    values = {name: getattr(article, name, None) for name in RECORD_COLUMNS}
    if not values["section"] and site is not None:
        section = site.path_section(getattr(article, "url", None) or "")
        if section:
            values["section"], values["section_source"] = section, "url"
    return record_row(values)


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


def paged_articles(session: Session, site: str | None = None) -> dict[str, tuple[str, ...]]:
    """The stored multi-page articles (of ``site`` only, when given): each row's URL and
    its ``page_urls`` (the pages its body was read from, in order). A value that is not a
    JSON list of URLs is left out, with the row read as one page."""
    stmt = select(ARTICLES.c.url, ARTICLES.c.page_urls).where(ARTICLES.c.page_urls.is_not(None))
    if site is not None:
        stmt = stmt.where(ARTICLES.c.site == site)
    found: dict[str, tuple[str, ...]] = {}
    for url, value in session.execute(stmt):
        try:
            pages = json.loads(value)
        except ValueError:
            continue
        if isinstance(pages, list) and pages and all(isinstance(u, str) for u in pages):
            found[url] = tuple(pages)
    return found


def rewrite_articles(
    session: Session, changes: Sequence[tuple[StoredArticle, dict[str, Any]]]
) -> int:
    """Overwrite the :data:`REWRITE_COLUMNS` of each ``(stored, values)`` by id (and
    ``updated_at``); return how many rows changed. A record column missing from ``values``
    keeps its stored value. A row whose ``content_md5`` is no longer
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
        values = record_row(
            {**stored.values(RECORD_COLUMNS), **{k: _no_nul(v) for k, v in values.items()}}
        )
        row = {f"v_{name}": values[name] for name in REWRITE_COLUMNS}
        row.update(b_id=stored.id, b_md5=stored.content_md5, v_updated_at=now)
        params.append(row)
    done = 0
    for start in range(0, len(params), 500):
        result = session.connection().execute(stmt, params[start : start + 500])
        done += max(0, result.rowcount)
    return done
