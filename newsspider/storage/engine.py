"""Engines and sessions: where the database is, how to connect, one transaction at a time.

One engine per process, URL and lock timeout (:func:`engine_for` is cached), so every
pipeline, middleware and command of a process shares one connection pool. Components
configured by Scrapy settings get theirs from :func:`engine_from_settings`; the URL comes
from the ``DATABASE_URL`` setting, else ``$DATABASE_URL``, else ``data/corpus.db`` of the
project. Code outside ``storage`` never builds a ``Session`` itself: it opens one with
:func:`transaction` (committed when the block ends) or :func:`session` (the callee commits)
and passes it to the storage functions, which take a session and never commit
(SQLAlchemy ``session_basics``: the caller decides where a transaction ends).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.orm import Session

from newsspider import settings as defaults
from newsspider.errors import DatabaseUnreachable

__all__ = [
    "Engine",
    "Session",
    "SettingsLike",
    "check_database",
    "default_database_url",
    "display_url",
    "engine_for",
    "engine_from_settings",
    "resolve_database_url",
    "session",
    "short_error",
    "transaction",
]

logger = logging.getLogger(__name__)

#: Seconds a first connection to a database server may take before it counts as unreachable.
CONNECT_TIMEOUT = 10

#: Repository root: ``newsspider/storage/engine.py`` -> ``..``/``..``/``..``.
PROJECT_DIR = Path(__file__).resolve().parents[2]


class SettingsLike(Protocol):
    """What :func:`engine_from_settings` reads: Scrapy's ``Settings`` has it, and so can any
    mapping-like object (storage does not import Scrapy)."""

    def get(self, name: str, default: Any = None) -> Any: ...

    def getfloat(self, name: str, default: float = 0.0) -> float: ...


def engine_from_settings(settings: SettingsLike) -> Engine:
    """The engine of ``DATABASE_URL`` (:func:`resolve_database_url`) with the SQLite lock
    wait of ``NEWS_DB_BUSY_TIMEOUT`` and memory map of ``NEWS_DB_SQLITE_MMAP``: what every
    pipeline, middleware and command uses."""
    return engine_for(
        resolve_database_url(settings.get("DATABASE_URL")),
        busy_timeout=settings.getfloat("NEWS_DB_BUSY_TIMEOUT"),
        mmap=settings.getint("NEWS_DB_SQLITE_MMAP"),
    )


def check_database(settings: SettingsLike) -> Engine:
    """The engine of ``settings`` once one connection to it worked.

    Raises :class:`~newsspider.errors.DatabaseUnreachable` with one line naming the
    database (without its password) and the driver's reason when the URL is not a
    database URL or the first connection fails: a crawl checks this as it opens, so an
    unreachable database stops it at once instead of after ``NEWS_DB_RETRY_SECONDS`` of
    retries (those stay for a database that goes away mid-crawl).
    """
    url = resolve_database_url(settings.get("DATABASE_URL"))
    try:
        engine = engine_from_settings(settings)
    except OSError as exc:  # SQLite: the database's folder cannot be made
        raise DatabaseUnreachable(
            f"cannot open the database {_without_password(url)}: {short_error(exc)}"
        ) from exc
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        raise DatabaseUnreachable(
            f"DATABASE_URL {_without_password(url)!r} is not a usable database URL "
            f"({short_error(exc)}); use e.g. sqlite:///data/corpus.db or "
            "postgresql+psycopg://user:password@host/dbname"
        ) from exc
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except (DBAPIError, OSError) as exc:
        raise DatabaseUnreachable(
            f"cannot connect to the database {display_url(engine)}: {short_error(exc)}"
        ) from exc
    return engine


def short_error(exc: BaseException) -> str:
    """One line naming a database error: its class and the driver's first message line."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip()
    message = text.splitlines()[0] if text else ""
    return f"{type(orig).__name__}: {message}" if message else type(orig).__name__


def _without_password(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def engine_for(
    url: str,
    *,
    busy_timeout: float = defaults.NEWS_DB_BUSY_TIMEOUT,
    mmap: int = defaults.NEWS_DB_SQLITE_MMAP,
) -> Engine:
    """The process's engine for ``url`` (cached, so every pipeline shares one pool).

    ``engine_for(url)`` and ``engine_for(url, busy_timeout=30)`` are the same engine: the
    cache is keyed on the URL and the timeout's value, not on how they were passed. The
    default timeout is the ``NEWS_DB_BUSY_TIMEOUT`` of ``settings.py``.

    For SQLite the database's folder is created, and each connection gets WAL journaling
    (readers no longer block the writer, so ``scrapy corpus`` can query during a crawl),
    ``busy_timeout`` (a second crawler waits for the lock instead of failing at once),
    ``foreign_keys`` (off by default in SQLite) and ``mmap_size`` (``NEWS_DB_SQLITE_MMAP``:
    random reads of a large corpus through a memory map, not one ``read()`` a page). Server
    databases get ``pool_pre_ping``, so connections a server restart killed are replaced
    when next checked out.
    """
    return _engine(url, float(busy_timeout), int(mmap))


@functools.cache
def _engine(url: str, busy_timeout: float, mmap: int) -> Engine:
    parsed = make_url(url)
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": busy_timeout}
    else:
        # A server restart leaves every pooled connection dead; a ping on checkout replaces
        # them instead of failing the next batch (PostgreSQL restarted mid-crawl).
        kwargs["pool_pre_ping"] = True
        if parsed.get_backend_name() == "postgresql":
            # A host that drops packets would otherwise hang the first connection.
            kwargs["connect_args"] = {"connect_timeout": CONNECT_TIMEOUT}
    engine = create_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        _install_sqlite_pragmas(engine, busy_timeout, mmap)
    logger.debug("engine created for %s", parsed.render_as_string(hide_password=True))
    return engine


def _install_sqlite_pragmas(engine: Engine, busy_timeout: float, mmap: int) -> None:
    """Set the per-connection SQLite pragmas of :func:`engine_for` on every new connection."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")  # an int
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA mmap_size={int(mmap)}")  # an int
        finally:
            cursor.close()


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


def display_url(database: Engine | str) -> str:
    """The database URL without its password, for logs and messages; a SQLite file opened
    as a URI (``file:<path>?mode=ro``, the web view's read-only engine) is shown as the
    ``sqlite:///<path>`` the user gave."""
    url = database.url if isinstance(database, Engine) else make_url(database)
    name = url.database or ""
    if url.drivername.startswith("sqlite") and url.query.get("uri") and name.startswith("file:"):
        path = unquote(name[len("file:") :]).partition("?")[0]
        return f"sqlite:///{path}"
    return url.render_as_string(hide_password=True)


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """A session inside one transaction: committed when the block ends, rolled back (and
    the exception raised on) when it raises."""
    with Session(engine) as s, s.begin():
        yield s


def session(engine: Engine) -> Session:
    """A plain session, for callees that commit themselves (``reclean`` commits per batch)
    and for reads; use it as a context manager so it is closed."""
    return Session(engine)
