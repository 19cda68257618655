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
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, Table, create_engine, event, exists, inspect, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
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


def engine_for(url: str, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> Engine:
    """The process's engine for ``url`` (cached, so every pipeline shares one pool).

    ``engine_for(url)`` and ``engine_for(url, busy_timeout=30)`` are the same engine: the
    cache is keyed on the URL and the timeout's value, not on how they were passed.

    For SQLite the database's folder is created, and each connection gets WAL journaling
    (readers no longer block the writer, so ``scrapy corpus`` can query during a crawl),
    ``busy_timeout`` (a second crawler waits for the lock instead of failing at once) and
    ``foreign_keys`` (off by default in SQLite). Server databases get ``pool_pre_ping``,
    so connections a server restart killed are replaced when next checked out.
    """
    return _engine(url, float(busy_timeout))


@functools.cache
def _engine(url: str, busy_timeout: float) -> Engine:
    parsed = make_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": busy_timeout}
    else:
        # A server restart leaves every pooled connection dead; a ping on checkout replaces
        # them instead of failing the next batch (issue 7: PostgreSQL restarted mid-crawl).
        kwargs["pool_pre_ping"] = True
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
    add_missing_columns(engine)
    setup_search(engine)


def add_missing_columns(engine: Engine) -> list[str]:
    """Add model columns that an existing table lacks; return them as ``table.column``.

    ``create_all`` creates missing tables but never alters existing ones, so a corpus made
    by an older version would fail on the first query naming a newer column (the fetch
    failure counts of ``crawl_runs``, say). Only nullable columns or columns with a scalar
    default are added (``ALTER TABLE ... ADD COLUMN``, which SQLite and PostgreSQL both
    support with a constant default); existing rows get that default.
    """
    insp = inspect(engine)
    present_tables = set(insp.get_table_names())
    added: list[str] = []
    for table in Base.metadata.sorted_tables:
        if table.name not in present_tables:
            continue
        have = {c["name"] for c in insp.get_columns(table.name)}
        for column in table.columns:
            if column.name in have:
                continue
            default = column.default.arg if column.default is not None else None
            if callable(default) or (default is None and not column.nullable):
                logger.warning(
                    "%s.%s is missing and cannot be added automatically", table.name, column.name
                )
                continue
            ddl = f"ALTER TABLE {table.name} ADD COLUMN {column.name} " + str(
                column.type.compile(dialect=engine.dialect)
            )
            if default is not None:
                ddl += " DEFAULT " + _sql_literal(default)
            with engine.begin() as conn:
                conn.exec_driver_sql(ddl)
            added.append(f"{table.name}.{column.name}")
    if added:
        logger.info("added columns to an older schema: %s", ", ".join(added))
    return added


def _sql_literal(value: object) -> str:
    """A column default as SQL: numbers as they are, text quoted (only our own constants)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


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


#: Bound parameters per multi-row statement: SQLite's limit before 3.32 (999).
MAX_PARAMS = 999


def multirow_chunks(rows: list[dict[str, Any]]) -> Iterable[list[dict[str, Any]]]:
    """``rows`` cut for multi-row ``INSERT ... VALUES`` statements: rows with the same keys
    together (one statement has one column list), at most :data:`MAX_PARAMS` values each."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row), []).append(row)
    for keys, group in groups.items():
        size = max(1, MAX_PARAMS // max(1, len(keys)))
        for start in range(0, len(group), size):
            yield group[start : start + size]


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
        row = {k: _no_nul(v) for k, v in row.items()}
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


def _no_nul(value: Any) -> Any:
    """``value`` without NUL characters when it is text.

    PostgreSQL refuses NUL in text (the whole batch would fail) and SQLite keeps it, which
    C tools then read as the end of the string; HTML never means it as content (the HTML
    standard drops it from text), so it goes on every backend alike.
    """
    return value.replace("\x00", "") if isinstance(value, str) and "\x00" in value else value


def upsert_articles(session: Session, rows: list[dict[str, Any]]) -> tuple[int, int]:
    """Insert or update articles by URL; return ``(new, updated)``.

    A URL already stored gets its title, published time, content, raw text, encoding,
    content MD5 and ``updated_at`` overwritten, so a re-crawl never duplicates a row. Rows
    repeating a URL within ``rows`` collapse to the last one (an upsert statement may not
    touch a row twice on PostgreSQL). ``content_md5`` defaults to
    ``page_md5(raw_text)``; ``fetched_at``/``updated_at`` to now. NUL characters are removed
    from text values (:func:`_no_nul`).

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
    # One multi-row INSERT per chunk rather than an executemany: SQLite then indexes the
    # whole chunk (FTS triggers) in one call without the GIL, where an executemany takes
    # the GIL back after every row and, beside a busy reactor thread, waits up to the
    # interpreter's switch interval (5 ms) each time (issue 7, crawl throughput).
    for values in multirow_chunks(list(by_url.values())):
        stmt = dialect_insert(session, table).values(values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[table.c.url],
            set_={name: stmt.excluded[name] for name in UPDATE_COLUMNS},
        )
        session.execute(stmt)
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


def seen_contents(session: Session, site: str, md5s: Iterable[str]) -> set[str]:
    """The ``md5s`` that ``site`` already stores: :func:`seen_content` for a whole batch,
    one ``SELECT ... IN`` per chunk instead of one query per page."""
    found: set[str] = set()
    column = Article.content_md5
    for chunk in chunked(sorted(set(md5s))):
        stmt = select(column).where(Article.site == site, column.in_(chunk)).distinct()
        found.update(session.scalars(stmt))
    return found


# -- transient failures ---------------------------------------------------------------------

#: Default of ``NEWS_DB_RETRY_SECONDS``: how long a write keeps retrying a transient failure.
DEFAULT_RETRY_SECONDS = 300.0
#: First and longest wait between retries (doubling in between).
RETRY_FIRST_DELAY = 0.5
RETRY_MAX_DELAY = 30.0


def is_transient(exc: BaseException) -> bool:
    """Would the same transaction succeed if tried again later?

    True for a lost connection (a server restart: SQLAlchemy flags it
    ``connection_invalidated``), for PostgreSQL's operational errors (cannot connect, the
    server shutting down or starting up, serialization failures and deadlocks) and for a
    SQLite database locked by another writer longer than ``busy_timeout``. False for
    everything that would fail again the same way: constraint violations, bad data, a
    missing table, a disk that is full or a file that is corrupt.
    """
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if not isinstance(exc, OperationalError | InterfaceError):
        return False
    orig = getattr(exc, "orig", None)
    if type(orig).__module__.startswith("sqlite3"):
        message = str(orig).lower()
        return "locked" in message or "busy" in message
    return True


class Backoff:
    """Waits between retries of one write: doubling from ``first`` up to ``longest``, and
    none once ``seconds`` have passed since the first failure (time in attempts counts).

    ``next_delay()`` gives the next wait, or None when it is time to give up.
    """

    def __init__(
        self,
        seconds: float,
        *,
        first: float = RETRY_FIRST_DELAY,
        longest: float = RETRY_MAX_DELAY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.deadline = clock() + seconds
        self.delay = first
        self.longest = longest
        self.retries = 0

    def next_delay(self) -> float | None:
        left = self.deadline - self.clock()
        if left <= 0:
            return None
        wait = min(self.delay, left)
        self.delay = min(self.delay * 2, self.longest)
        self.retries += 1
        return wait
