"""The schema: every table of ``models.py``, versioned with Alembic, and the full-text search
structures of ``fts.py``, in one idempotent :func:`create_schema`.

Alembic keeps the schema's history: each change to the tables is a revision in
``migrations/versions/`` (``0001`` the baseline, the tables as they were before versioning;
``0002`` the ``published_source`` and ``published_precision`` columns and SQLite times
with their ``+00:00`` offset), and the ``alembic_version`` table records the revision a
database is at. Alembic rather than more ad hoc ``ALTER TABLE``: a data change (times
rewritten in place) has to run exactly once, in order, on SQLite and PostgreSQL alike, and
a database has to say which changes it already has; that is what a migration tool is for,
and Alembic is SQLAlchemy's own.

The migration environment (``migrations/env.py``) is configured here, from
``alembic.config.Config`` with ``script_location`` set, so no ``alembic.ini`` is needed; the
one in ``migrations/`` only serves the ``alembic`` command run by hand
(``alembic -c newsspider/storage/migrations/alembic.ini history``).
"""

from __future__ import annotations

import atexit
import functools
import logging
import shutil
import tempfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, MetaData, bindparam, inspect, text
from sqlalchemy.exc import OperationalError, ProgrammingError

import newsspider.storage.fts as fts

from .counts import setup_counts
from .engine import display_url
from .fts import setup_search, upgrade_triggers
from .models import Base

__all__ = [
    "BASELINE",
    "add_missing_columns",
    "add_missing_indexes",
    "alembic_config",
    "create_schema",
    "current_revision",
    "head_revision",
    "include_object",
    "lock_for_migration",
]

logger = logging.getLogger(__name__)

#: The migration environment: ``env.py``, ``versions/`` (a package, so an egg carries it).
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: The revision of the schema as it was before versioning.
BASELINE = "0001"
#: Alembic's table of the revision a database is at.
VERSION_TABLE = "alembic_version"
#: PostgreSQL advisory lock held while a database is migrated, so two crawls starting at
#: once migrate it once (SQLite gets the same from ``BEGIN IMMEDIATE``).
PG_MIGRATION_LOCK = 0x6E6577735F736368  # "news_sch"
#: Indexes of ``fts.py`` (``setup_search``), on either backend.
SEARCH_INDEXES = frozenset({*fts.ORDER_INDEXES, *fts.PG_ORDER_INDEXES, *fts.PG_TRGM_INDEXES})


def create_schema(engine: Engine) -> None:
    """Bring ``engine``'s database to the newest schema, then its search structures.

    - at the newest revision with every table (the usual case, at the start of every
      crawl and command): one query, nothing else; a table missing at the newest revision
      (dropped by hand) is created;
    - empty (none of our tables): every table of ``models.py`` created, stamped at the
      newest revision;
    - our tables but no ``alembic_version`` (made before versioning): upgraded from
      nothing, so the baseline revision brings them to its shape (missing tables, columns
      and indexes added, as an older version may lack some), Alembic stamps the baseline
      and the later revisions follow;
    - at an older revision: upgraded.

    A migration runs in one transaction with the database locked for writing
    (:func:`lock_for_migration`) and is logged at INFO. A database at a revision this
    version does not know (made by a newer newsspider) raises ``RuntimeError``. Last come
    the search structures (``fts.py``): the FTS5 trigram table and its triggers on SQLite,
    pg_trgm indexes on PostgreSQL, backfilled when added to an existing corpus; and the
    triggers that keep ``article_counts`` (``counts.py``), filled when new.
    """
    head = head_revision()
    with engine.connect() as conn:
        if _state(conn) != (head, len(_our_tables())):
            conn.rollback()
            _migrate(conn, head)
    _setup_search_locked(engine)


def _setup_search_locked(engine: Engine) -> None:
    """``setup_search`` and ``setup_counts`` under :data:`PG_MIGRATION_LOCK` on PostgreSQL.

    Its ``CREATE EXTENSION`` and ``CREATE INDEX`` run outside the migration's transaction;
    workers starting together on a fresh database would each run them, and all but one
    fail (``UniqueViolation`` on ``pg_class``). A session-level lock makes them take turns:
    the first creates, the others find everything made.
    """
    if engine.dialect.name != "postgresql":
        setup_search(engine)
        setup_counts(engine)
        return
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": PG_MIGRATION_LOCK})
        conn.commit()
        try:
            setup_search(engine)
            setup_counts(engine)
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": PG_MIGRATION_LOCK})
            conn.commit()


def _our_tables() -> list[str]:
    return sorted(set(Base.metadata.tables) - {VERSION_TABLE})


#: How many of our tables exist, from the backend's catalogue (a scalar subquery).
_TABLE_COUNT = {
    "sqlite": "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN :names",
    "postgresql": "SELECT count(*) FROM pg_catalog.pg_tables "
    "WHERE schemaname = current_schema() AND tablename IN :names",
}


def _state(conn: Connection) -> tuple[str | None, int]:
    """(revision, how many of our tables exist) in one query; (None, 0) without
    ``alembic_version``. A table dropped behind the schema's back is made again."""
    count = _TABLE_COUNT.get(conn.dialect.name)
    if count is None:
        tables = set(inspect(conn).get_table_names())
        return current_revision(conn), len(tables & set(_our_tables()))
    stmt = text(f"SELECT version_num, ({count}) FROM {VERSION_TABLE}").bindparams(
        bindparam("names", _our_tables(), expanding=True)
    )
    for attempt in range(2):
        try:
            row = conn.execute(stmt).first()
            break
        except (OperationalError, ProgrammingError):
            conn.rollback()
            if not inspect(conn).has_table(VERSION_TABLE):
                return None, 0
            if attempt:
                raise  # not a missing table: locked, unreachable...
            # Missing a moment ago, there now: another process (a cluster worker starting
            # at the same moment) just created the schema. Read it again.
    return (row[0], row[1]) if row is not None else (None, 0)


def current_revision(conn: Connection) -> str | None:
    """The revision in ``alembic_version``, None when the table is missing or empty."""
    try:
        return conn.scalar(text(f"SELECT version_num FROM {VERSION_TABLE}"))
    except (OperationalError, ProgrammingError):
        conn.rollback()
        if inspect(conn).has_table(VERSION_TABLE):
            raise  # not a missing table: locked, unreachable...
        return None


@functools.cache
def head_revision() -> str:
    """The newest revision of ``migrations/versions``."""
    head = _scripts().get_current_head()
    if head is None:
        raise RuntimeError(f"no revision in {_script_location()}")
    return head


def _migrate(conn: Connection, head: str) -> None:
    """Migrate in one locked transaction; the state is read again under the lock."""
    where = display_url(conn.engine)
    with conn.begin():
        lock_for_migration(conn)
        tables = set(inspect(conn).get_table_names())
        before = current_revision(conn) if VERSION_TABLE in tables else None
        if before == head:
            # Another process migrated it while we waited for the lock, or a table was
            # dropped behind the schema's back: make what is missing.
            Base.metadata.create_all(conn)
            return
        if before is not None and before not in _revisions():
            raise RuntimeError(
                f"{where} is at schema revision {before}, which this version of newsspider "
                f"does not know (its newest is {head}): run a newer newsspider on it"
            )
        config = alembic_config(conn)
        if before is None and not tables & (set(Base.metadata.tables) - {VERSION_TABLE}):
            Base.metadata.create_all(conn)
            command.stamp(config, "head")
            logger.info("created the schema of %s at revision %s", where, head)
            return
        # Unversioned: the baseline revision brings the tables to its shape, Alembic stamps
        # it, and the later revisions follow. Search triggers of an earlier version are
        # replaced first (fts.py), in this transaction, so objects keep one order.
        upgrade_triggers(conn)
        command.upgrade(config, "head")
        logger.info(
            "migrated %s from %s to %s", where, before or f"no version (baseline {BASELINE})", head
        )


def include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """What Alembic compares with the models (autogenerate, ``compare_metadata``): not the
    search structures of ``fts.py`` (made by ``setup_search``, not by revisions) nor
    Alembic's own version table."""
    if type_ == "table" and name is not None:
        return not (
            name == VERSION_TABLE or name.startswith(fts.FTS_TABLE) or name == fts.TAIL_TABLE
        )
    return not (type_ == "index" and name in SEARCH_INDEXES)


def lock_for_migration(conn: Connection) -> None:
    """Take the database's write lock for the rest of ``conn``'s transaction.

    SQLite: ``BEGIN IMMEDIATE`` (the driver would otherwise start the transaction only at
    the first data change, leaving earlier DDL outside it), so the whole migration commits
    or rolls back as one and a second process waits for it (``busy_timeout``).
    PostgreSQL (transactional DDL anyway): an advisory lock held to the transaction's end.
    """
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_MIGRATION_LOCK})


def alembic_config(conn: Connection | None = None) -> Config:
    """Alembic's configuration, made here rather than read from an ``alembic.ini``.

    ``conn`` (in a transaction) is the connection ``env.py`` migrates.
    """
    config = Config()
    config.set_main_option("script_location", str(_script_location()).replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    config.attributes["connection"] = conn
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


@functools.cache
def _revisions() -> frozenset[str]:
    return frozenset(script.revision for script in _scripts().walk_revisions())


@functools.cache
def _script_location() -> Path:
    """``migrations/``; out of a zipped egg (Scrapyd) a copy in a temporary folder, since
    Alembic reads its scripts from files."""
    if MIGRATIONS.is_dir():
        return MIGRATIONS
    copy = Path(tempfile.mkdtemp(prefix="newsspider-migrations-"))
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    _copy_tree(resources.files(__package__) / "migrations", copy)
    return copy


def _copy_tree(source: Traversable, target: Path) -> None:
    for entry in source.iterdir():
        if entry.name == "__pycache__":
            continue
        if entry.is_dir():
            (target / entry.name).mkdir()
            _copy_tree(entry, target / entry.name)
        else:
            (target / entry.name).write_bytes(entry.read_bytes())


def add_missing_columns(
    bind: Engine | Connection, metadata: MetaData = Base.metadata
) -> list[str]:
    """Add ``metadata``'s columns that an existing table lacks; return them as ``table.column``.

    ``create_all`` creates missing tables but never alters existing ones, so a corpus made
    by an older version would fail on the first query naming a newer column (the fetch
    failure counts of ``crawl_runs``, say). Only nullable columns or columns with a scalar
    default are added (``ALTER TABLE ... ADD COLUMN``, which SQLite and PostgreSQL both
    support with a constant default); existing rows get that default. The baseline
    revision uses it to bring a database made before versioning to its shape. With an
    ``Engine`` each column is added in a transaction of its own; with a ``Connection``, in
    the caller's.
    """
    insp = inspect(bind)
    present_tables = set(insp.get_table_names())
    added: list[str] = []
    for table in metadata.sorted_tables:
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
                column.type.compile(dialect=bind.dialect)
            )
            if default is not None:
                ddl += " DEFAULT " + _sql_literal(default)
            if isinstance(bind, Engine):
                with bind.begin() as conn:
                    conn.exec_driver_sql(ddl)
            else:
                bind.exec_driver_sql(ddl)
            added.append(f"{table.name}.{column.name}")
    if added:
        logger.info("added columns to an older schema: %s", ", ".join(added))
    return added


def add_missing_indexes(conn: Connection, metadata: MetaData) -> list[str]:
    """Create ``metadata``'s indexes that an existing table lacks (by name); return them."""
    insp = inspect(conn)
    present_tables = set(insp.get_table_names())
    added: list[str] = []
    for table in metadata.sorted_tables:
        if table.name not in present_tables:
            continue
        have = {ix["name"] for ix in insp.get_indexes(table.name)}
        have |= {uc["name"] for uc in insp.get_unique_constraints(table.name)}
        for index in table.indexes:
            if index.name not in have:
                index.create(conn)
                added.append(str(index.name))
    if added:
        logger.info("added indexes to an older schema: %s", ", ".join(added))
    return added


def _sql_literal(value: object) -> str:
    """A column default as SQL: numbers as they are, text quoted (only our own constants)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"
