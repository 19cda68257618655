"""What ``scrapy backfill`` keeps in SQL: the archived captures it fetched, and which of a
batch of URLs are stored already.

A backfill (``newsspider/backfill``) reads a web archive's CDX index page by page and
fetches the captures it chooses. Each fetched capture gets a ``backfill_captures`` row
(:func:`record_captures`) whatever became of it (``stored``, ``dropped``, ``bad_record``,
``not_html``, ``http_<status>``...), so a backfill stopped by a signal, a kill or a crash,
started again, skips what it fetched before (:func:`fetched_captures`), and one started
again after it finished fetches nothing. A URL stored already, by a live crawl or an
earlier capture, is not fetched again either (:func:`stored_urls_among`). The articles
themselves go through the crawl's pipelines and :func:`~newsspider.storage.upsert_articles`
with their ``archive`` and ``captured_at``.

Like ``db.py``, the functions take a ``Session`` and never commit: call them inside
:func:`~newsspider.storage.transaction` (or commit the session) to keep what they write.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from .db import chunked, dialect_insert, multirow_chunks
from .models import Article, BackfillCapture, utcnow

__all__ = ["CAPTURE_COLUMNS", "fetched_captures", "record_captures", "stored_urls_among"]

ARTICLES = Article.__table__
CAPTURES = BackfillCapture.__table__
#: The columns of a ``backfill_captures`` row; ``fetched_at`` may be left out (now).
CAPTURE_COLUMNS = ("archive", "url", "timestamp", "outcome", "fetched_at")
#: The key of a capture: one row each.
_KEY = ("archive", "url", "timestamp")


def fetched_captures(session: Session, archive: str, urls: Iterable[str]) -> set[tuple[str, str]]:
    """The ``(url, timestamp)`` pairs of ``archive`` among ``urls`` that a backfill fetched
    already, whatever their outcome: one ``SELECT ... IN`` per chunk of URLs, over the
    primary key (archive, url, timestamp)."""
    found: set[tuple[str, str]] = set()
    c = CAPTURES.c
    for chunk in chunked(sorted(set(urls))):
        stmt = select(c.url, c.timestamp).where(c.archive == archive, c.url.in_(chunk))
        found.update((url, timestamp) for url, timestamp in session.execute(stmt))
    return found


def record_captures(session: Session, rows: Iterable[dict[str, Any]]) -> int:
    """Insert a ``backfill_captures`` row per capture fetched; return how many were new.

    Each row has :data:`CAPTURE_COLUMNS` (``fetched_at``, aware, defaults to now). A
    capture already recorded, in the table or earlier in ``rows``, keeps its first row
    (``INSERT ... ON CONFLICT DO NOTHING`` on SQLite and PostgreSQL alike), so two workers
    or a restarted backfill recording the same capture never fail. No commit.
    """
    now = utcnow()
    by_key: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        unknown = set(row) - set(CAPTURE_COLUMNS)
        if unknown:
            raise ValueError(f"unknown backfill_captures columns: {sorted(unknown)}")
        missing = [k for k in CAPTURE_COLUMNS[:4] if not row.get(k)]
        if missing:
            raise ValueError(f"capture row lacks {missing}: {row!r}")
        if len(row["timestamp"]) > 14 or len(row["outcome"]) > 32:
            raise ValueError(f"timestamp over 14 or outcome over 32 characters: {row!r}")
        full = {"fetched_at": now, **row}
        by_key.setdefault((full["archive"], full["url"], full["timestamp"]), full)
    if not by_key:
        return 0
    added = 0
    # In key order, so two writers recording overlapping captures lock rows in one order.
    for values in multirow_chunks([by_key[k] for k in sorted(by_key)]):
        stmt = dialect_insert(session, CAPTURES).values(values)
        stmt = stmt.on_conflict_do_nothing(index_elements=[CAPTURES.c[k] for k in _KEY])
        # RETURNING names the rows inserted (the driver's rowcount is -1 on psycopg here).
        added += len(session.execute(stmt.returning(CAPTURES.c.timestamp)).all())
    return added


def stored_urls_among(session: Session, urls: Iterable[str], site: str | None = None) -> set[str]:
    """The ``urls`` that ``articles`` holds (of ``site`` only, when given): one ``SELECT
    url ... IN`` per chunk over the unique index on ``url``, reading no other column.

    ``db.stored_urls`` lists every URL of a site and ``rewrite.stored_by_url`` reads whole
    rows; a backfill asks about one CDX page of URLs at a time, and needs only yes or no.
    """
    found: set[str] = set()
    for chunk in chunked(sorted(set(urls))):
        stmt = select(ARTICLES.c.url).where(ARTICLES.c.url.in_(chunk))
        if site is not None:
            stmt = stmt.where(ARTICLES.c.site == site)
        found.update(session.scalars(stmt))
    return found
