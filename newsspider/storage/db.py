"""Engines, schema and article upserts, for SQLite and PostgreSQL alike.

One engine per process and URL (:func:`engine_for` is cached), one session per batch, owned
by the caller: the functions here take a ``Session`` and never commit, so a pipeline decides
where a transaction ends (SQLAlchemy ``session_basics``). Every statement is built with
SQLAlchemy constructs and bound parameters, never from strings.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, Table, create_engine, event, exists, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from newsspider.extraction.linehash import page_md5

from .models import Article, Base, utcnow

logger = logging.getLogger(__name__)

#: Default wait for a locked SQLite database, in seconds (setting-friendly: a float).
DEFAULT_BUSY_TIMEOUT = 30.0
#: Repository root: ``newsspider/storage/db.py`` -> ``..``/``..``/``..``.
PROJECT_DIR = Path(__file__).resolve().parents[2]
#: Rows per ``IN (...)`` lookup; far below SQLite's 32766 and PostgreSQL's 65535 parameters.
CHUNK = 500
#: Columns an upsert overwrites when the URL is already stored. ``content_md5`` follows
#: ``raw_text`` so duplicate-page detection stays true; ``fetched_at`` keeps the first fetch.
UPDATE_COLUMNS = (
    "title",
    "published",
    "content",
    "raw_text",
    "encoding",
    "content_md5",
    "updated_at",
)
REQUIRED_COLUMNS = ("url", "site", "source", "content", "raw_text")


@functools.cache
def engine_for(url: str, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> Engine:
    """The process's engine for ``url`` (cached, so every pipeline shares one pool).

    For SQLite the database's folder is created, and each connection gets WAL journaling
    (readers no longer block the writer, so ``scrapy corpus`` can query during a crawl),
    ``busy_timeout`` (a second crawler waits for the lock instead of failing at once) and
    ``foreign_keys`` (off by default in SQLite).
    """
    parsed = make_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": busy_timeout}
    engine = create_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        _install_sqlite_pragmas(engine, busy_timeout)
    logger.debug("engine created for %s", parsed.render_as_string(hide_password=True))
    return engine


def _install_sqlite_pragmas(engine: Engine, busy_timeout: float) -> None:
    """Set the per-connection SQLite pragmas of :func:`engine_for` on every new connection."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")  # an int
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()


def create_schema(engine: Engine) -> None:
    """Create every missing table and index (idempotent; existing tables are left alone).

    Then the search structures (``storage/fts.py``): the FTS5 trigram table and its triggers
    on SQLite, pg_trgm indexes on PostgreSQL, backfilled when added to an existing corpus.
    """
    from . import reclean as _reclean  # noqa: F401  (registers site_reclean on Base)
    from .fts import setup_search

    Base.metadata.create_all(engine)
    setup_search(engine)


def default_database_url(project_dir: Path | str = PROJECT_DIR) -> str:
    """``sqlite:///<project>/data/corpus.db``: the corpus when nothing else is configured."""
    return f"sqlite:///{Path(project_dir).resolve() / 'data' / 'corpus.db'}"


def resolve_database_url(setting_value: str | None, project_dir: Path | str = PROJECT_DIR) -> str:
    """The URL to use: the ``DATABASE_URL`` setting, else ``$DATABASE_URL``, else the default.

    Empty strings count as unset so ``-s DATABASE_URL=`` falls back instead of failing.
    """
    if setting_value:
        return setting_value
    from_env = os.environ.get("DATABASE_URL")
    if from_env:
        return from_env
    return default_database_url(project_dir)


def dialect_insert(session: Session, table: Table) -> sqlite.Insert | postgresql.Insert:
    """The dialect's ``insert()``, the only one with ``on_conflict_do_update`` (no neutral one).

    Raises ``NotImplementedError`` for other backends rather than falling back to a
    select-then-insert that would race between processes.
    """
    name = session.get_bind().dialect.name
    if name == "sqlite":
        return sqlite.insert(table)
    if name == "postgresql":
        return postgresql.insert(table)
    raise NotImplementedError(f"no upsert for database dialect {name!r}")


def chunked(items: Sequence[str], size: int = CHUNK) -> Iterable[Sequence[str]]:
    """Slices of at most ``size`` items, to keep ``IN (...)`` lists under parameter limits."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _prepare_rows(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rows keyed by URL (last wins), each with every column the upsert writes."""
    columns = set(Article.__table__.c.keys()) - {"id"}
    now = utcnow()
    by_url: dict[str, dict[str, Any]] = {}
    for row in rows:
        unknown = set(row) - columns
        if unknown:
            raise ValueError(f"unknown article columns: {sorted(unknown)}")
        missing = [c for c in REQUIRED_COLUMNS if row.get(c) is None]
        if missing:
            raise ValueError(f"article row lacks {missing}: {row.get('url')!r}")
        full = {
            "title": None,
            "published": None,
            "encoding": None,
            "content_md5": page_md5(row["raw_text"]),
            "fetched_at": now,
            "updated_at": now,
            **row,
        }
        by_url[full["url"]] = full
    return by_url


def upsert_articles(session: Session, rows: list[dict[str, Any]]) -> tuple[int, int]:
    """Insert or update articles by URL; return ``(new, updated)``.

    A URL already stored gets its title, published time, content, raw text, encoding,
    content MD5 and ``updated_at`` overwritten, so a re-crawl never duplicates a row. Rows
    repeating a URL within ``rows`` collapse to the last one (an upsert statement may not
    touch a row twice on PostgreSQL). ``content_md5`` defaults to
    ``page_md5(raw_text)``; ``fetched_at``/``updated_at`` to now.

    The counts come from one ``SELECT url ... IN`` per chunk inside the caller's
    transaction before the upsert; a concurrent writer inserting the same URL in between
    only makes the counts off by that row, never the data.
    """
    by_url = _prepare_rows(rows)
    if not by_url:
        return 0, 0
    urls = list(by_url)
    table = Article.__table__
    existing: set[str] = set()
    for chunk in chunked(urls):
        existing.update(session.scalars(select(table.c.url).where(table.c.url.in_(chunk))))
    stmt = dialect_insert(session, table)
    stmt = stmt.on_conflict_do_update(
        index_elements=[table.c.url],
        set_={name: stmt.excluded[name] for name in UPDATE_COLUMNS},
    )
    session.execute(stmt, list(by_url.values()))
    new, updated = len(urls) - len(existing), len(existing)
    logger.debug("upserted articles: %s new, %s updated", new, updated)
    return new, updated


def seen_content(session: Session, site: str, md5: str) -> bool:
    """Whether ``site`` already stores a page whose ``content_md5`` is ``md5``.

    Lets the pipeline skip exact duplicate pages *before* the line table counts them
    (§B3 improvement); otherwise a mirrored article would mark its own lines boilerplate.
    """
    stmt = select(exists().where(Article.site == site, Article.content_md5 == md5))
    return bool(session.scalar(stmt))
