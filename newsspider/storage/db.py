"""Article upserts and lookups, shared statement helpers, and transient-failure handling,
for SQLite and PostgreSQL alike.

The functions here take a ``Session`` and never commit, so a pipeline decides where a
transaction ends (SQLAlchemy ``session_basics``). Every statement is built with
SQLAlchemy constructs and bound parameters, never from strings; the exceptions are
:func:`select_in`, :func:`execute_many` and :func:`insert_values`, driver SQL written in the
code whose only generated part is its placeholders (values are always bound).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import Table, exists, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.orm import Session

from newsspider.extraction.linehash import page_md5
from newsspider.extraction.model import RECORD_FIELDS

from .models import AUTHOR_SEPARATOR, Article, utcnow

logger = logging.getLogger(__name__)

#: Rows per ``IN (...)`` lookup; far below SQLite's 32766 and PostgreSQL's 65535 parameters.
CHUNK = 500
#: What a page states about itself (revision 0008): ``ExtractedArticle``'s record fields,
#: stored as columns of the same names (docs/fields.md). Every upsert writes them, NULL
#: when not given.
RECORD_COLUMNS = RECORD_FIELDS
#: The longest value of each record column with a declared length, in characters: a longer
#: one is cut on both backends alike (PostgreSQL would refuse it, failing the batch, and
#: SQLite would keep it), except ``image``, a URL that cut would be wrong: it is dropped.
RECORD_LIMITS: dict[str, int] = {
    name: Article.__table__.c[name].type.length
    for name in RECORD_COLUMNS
    if getattr(Article.__table__.c[name].type, "length", None)
}
#: Columns an upsert overwrites when the URL is already stored. ``content_md5`` follows
#: ``raw_text`` so duplicate-page detection stays true; ``fetched_at`` keeps the first fetch.
#: ``archive`` and ``captured_at`` say where the bytes now stored came from (NULL: live).
UPDATE_COLUMNS = (
    "title",
    "published",
    "published_source",
    "published_precision",
    "content",
    "raw_text",
    "encoding",
    "content_md5",
    "updated_at",
    "archive",
    "captured_at",
    *RECORD_COLUMNS,
    "page_urls",  # a multi-page article's pages, JSON list (NULL: one page)
)
REQUIRED_COLUMNS = ("url", "site", "source", "content", "raw_text")


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


def _placeholder(conn: Any) -> str:
    """The driver's placeholder: ``%s`` for psycopg (PostgreSQL), ``?`` for sqlite3."""
    return "%s" if conn.dialect.name == "postgresql" else "?"


def _in_statements(
    session: Session, sql: str, values: Sequence[Any]
) -> Iterator[tuple[Any, str, tuple[Any, ...]]]:
    """(connection, statement, parameters) of driver-level ``sql`` whose ``{in_}`` is a
    membership test of ``values``: ``IN (?, ?, ...)`` on SQLite, :data:`CHUNK` values at a
    time, ``= ANY(%s)`` with one array on PostgreSQL."""
    if not values:
        return
    conn = session.connection()
    mark = _placeholder(conn)
    if conn.dialect.name == "postgresql":
        yield conn, sql.format(in_=f"= ANY({mark})"), (list(values),)
        return
    for chunk in chunked(values):
        yield conn, sql.format(in_=f"IN ({', '.join([mark] * len(chunk))})"), tuple(chunk)


def select_in(session: Session, sql: str, values: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of driver-level ``sql`` whose ``{in_}`` is a membership test of ``values``.

    SQLAlchemy compiles an ``IN`` of an expanding list anew for every call, one bound
    parameter at a time: for reprint detection's lookups (2,000 band keys a batch) that was
    most of their cost, more than SQLite's own search (``benchmarks/reprints_cost.py``).
    ``sql`` is a constant of the caller's code (:func:`_in_statements` fills ``{in_}``).
    """
    for conn, statement, params in _in_statements(session, sql, values):
        yield from conn.exec_driver_sql(statement, params).all()


def execute_in(session: Session, sql: str, values: Sequence[Any]) -> None:
    """:func:`select_in` for a statement that returns no rows (an ``UPDATE``)."""
    for conn, statement, params in _in_statements(session, sql, values):
        conn.exec_driver_sql(statement, params)


def execute_many(session: Session, sql: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """``executemany`` of driver-level ``sql`` whose ``{}`` are its placeholders, one per
    column (``?`` on SQLite, ``%s`` on PostgreSQL), over ``rows`` as tuples: no statement
    compilation and no parameter dict per row (:func:`select_in` says why)."""
    if not rows:
        return
    conn = session.connection()
    conn.exec_driver_sql(sql.format(*([_placeholder(conn)] * len(rows[0]))), list(rows))


#: Bound parameters per multi-row statement: SQLite's limit before 3.32 (999).
MAX_PARAMS = 999


def insert_values(
    session: Session, head: str, rows: Sequence[tuple[Any, ...]], tail: str = ""
) -> None:
    """Multi-row ``INSERT`` at the driver level: ``head`` (``INSERT INTO t (a, b)``), then
    ``VALUES`` of ``rows`` (tuples, one value per column), then ``tail`` (``ON CONFLICT
    ...``), at most :data:`MAX_PARAMS` values per statement.

    One statement per chunk rather than an ``executemany``, for the reason
    :func:`upsert_articles` gives (SQLite runs it in one step without the GIL), and without
    SQLAlchemy's compilation of every bound value, which for the line table's 2,000
    counts a batch cost more than SQLite's own work (``benchmarks/crawl_throughput.py``).
    ``head`` and ``tail`` are constants of the caller's code; values are always bound.
    """
    if not rows:
        return
    conn = session.connection()
    width = len(rows[0])
    group = "(" + ", ".join([_placeholder(conn)] * width) + ")"
    per = max(1, MAX_PARAMS // width)
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        sql = f"{head} VALUES {', '.join([group] * len(chunk))} {tail}"
        conn.exec_driver_sql(sql, tuple(v for row in chunk for v in row))


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
        row = record_row({k: _no_nul(v) for k, v in row.items()})
        full = {
            "title": None,
            "published": None,
            "published_source": None,
            "published_precision": None,
            "encoding": None,
            "archive": None,
            "captured_at": None,
            **dict.fromkeys(RECORD_COLUMNS),
            "page_urls": None,
            "fetched_at": now,
            "updated_at": now,
            **row,
        }
        if full.get("content_md5") is None:  # the pipeline passes the one it computed
            full["content_md5"] = page_md5(row["raw_text"])
        by_url[full["url"]] = full
    return by_url


def join_authors(names: Iterable[str] | str | None) -> str | None:
    """``articles.authors`` of a sequence of names: joined by ``、``, NULL when none.

    Names are stripped, empty ones and repeats left out, and a ``、`` inside a name (which
    would split it when read) becomes a space. A string is taken as stored already.
    """
    if names is None:
        return None
    if isinstance(names, str):
        return names.strip() or None
    out: list[str] = []
    for name in names:
        name = " ".join(str(name).replace("\x00", "").replace(AUTHOR_SEPARATOR, " ").split())
        if name and name not in out:
            out.append(name)
    return AUTHOR_SEPARATOR.join(out) or None


def page_urls_json(urls: Iterable[str] | None) -> str | None:
    """``articles.page_urls`` of a multi-page article: its pages' URLs as a JSON list, in
    order; NULL for an article of one page (no URLs given)."""
    urls = list(urls or ())
    return json.dumps(urls, ensure_ascii=False) if urls else None


def split_authors(value: str | None) -> list[str]:
    """The names of an ``articles.authors`` value (the inverse of :func:`join_authors`)."""
    return [n for n in (value or "").split(AUTHOR_SEPARATOR) if n]


def record_row(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with its record columns as stored: ``authors`` joined (a list or tuple of
    names is accepted), empty strings as NULL, values cut to :data:`RECORD_LIMITS`."""
    out = dict(row)
    if "authors" in out:
        out["authors"] = join_authors(out["authors"])
    for name in RECORD_COLUMNS:
        value = out.get(name)
        if not isinstance(value, str):
            continue
        value = value.strip()
        limit = RECORD_LIMITS.get(name)
        if limit is not None and len(value) > limit:
            value = None if name == "image" else value[:limit].rstrip()
        out[name] = value or None
    return out


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
    content MD5, ``updated_at``, provenance (``archive``, ``captured_at``: NULL when a
    row leaves them out, a live fetch) and record columns (:data:`RECORD_COLUMNS`, NULL
    when left out; ``authors`` may be a list of names, :func:`record_row`) overwritten,
    so a re-crawl never duplicates a row, and a live fetch of a backfilled URL makes it
    live again. Rows
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
    # interpreter's switch interval (5 ms) each time (benchmarks/crawl_throughput.py).
    # In URL order, so two writers upserting overlapping URLs lock rows in one order.
    for values in multirow_chunks([by_url[u] for u in sorted(by_url)]):
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

    Lets the pipeline skip exact duplicate pages *before* the line table counts them (an
    addition to Li & Jiang 2012 §2.2); otherwise a mirrored article would mark its own
    lines boilerplate.
    """
    stmt = select(exists().where(Article.site == site, Article.content_md5 == md5))
    return bool(session.scalar(stmt))


#: First key of the two-key advisory locks that serialize one site's batches
#: (:func:`lock_site`); ``storage/schema.py``'s one-key lock lives in another key space.
SITE_LOCK_CLASS = 0x6E73  # "ns"


def lock_site(session: Session, site: str) -> None:
    """On PostgreSQL, wait for ``site``'s write lock, held until the transaction ends.

    A transaction-level advisory lock (``pg_advisory_xact_lock``) keyed by the site's
    ``hashtext``: batches of one site, from any number of processes (cluster workers),
    check for duplicate pages and count their lines one after the other, so each sees the
    pages the previous one committed, and ``RC``/``LC`` come out as one writer would count
    them. Batches of other sites go on in parallel. SQLite needs none: its writers are
    serialized already, and a stale read fails with ``SQLITE_BUSY`` and is retried.
    """
    if session.get_bind().dialect.name != "postgresql":
        return
    session.execute(select(func.pg_advisory_xact_lock(SITE_LOCK_CLASS, func.hashtext(site))))


def seen_contents(session: Session, site: str, md5s: Iterable[str]) -> set[str]:
    """The ``md5s`` that ``site`` already stores: :func:`seen_content` for a whole batch,
    one ``SELECT ... IN`` per chunk instead of one query per page.

    Takes the site's write lock first (:func:`lock_site`), so the answer stays true until
    the caller's transaction ends: the duplicate-page check holds across processes.
    """
    lock_site(session, site)
    found: set[str] = set()
    column = Article.content_md5
    for chunk in chunked(sorted(set(md5s))):
        stmt = select(column).where(Article.site == site, column.in_(chunk)).distinct()
        found.update(session.scalars(stmt))
    return found


def stored_urls(session: Session, site: str) -> list[str]:
    """URLs of the site's stored articles, newest fetch first (``scrapy train --warc``)."""
    stmt = (
        select(Article.url)
        .where(Article.site == site)
        .order_by(Article.fetched_at.desc(), Article.id.desc())
    )
    return list(session.scalars(stmt))


# -- transient failures ---------------------------------------------------------------------

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
