"""A SQLite corpus copied into PostgreSQL, resumably and verified (``scrapy corpus migrate``).

SQLite serves one machine; a cluster, several writers or a corpus that outgrows one file
wants PostgreSQL (docs/migrate.md). :func:`plan_migration` checks both databases and says
how much is left to do; :meth:`Migration.run` does it:

1. **Schema.** Both databases are brought to the newest revision by ``create_schema``,
   so their tables are those of ``models.py``. Every table of ``Base.metadata`` is copied,
   in dependency order (``sorted_tables``), whatever its columns: nothing here names a
   table or a column. Not copied: Alembic's version row (``create_schema`` stamps the
   target) and SQLite's own search structures (the FTS5 index, its queue and tail table,
   which are not in the models); the target gets PostgreSQL's search index instead.
2. **Copy.** Each table in primary-key order, ``batch`` rows at a time (keyset pagination:
   ``WHERE key > last ORDER BY key LIMIT batch``, so each batch costs the same however far
   in it is), each batch written with ``COPY`` in one transaction. Values go through the
   models' types both ways (read as Python values, written with the target's bind
   processing), so times stay exact aware UTC instants and bytes stay bytes. The search
   indexes (GIN trigram, ``published`` order) are dropped while rows go in and built once
   at the end: one index build costs a fraction of updating it row by row.
3. **Resume.** A batch is committed whole or not at all and batches are committed in key
   order, so after a kill the target holds, per table, exactly the source's rows up to
   its largest key. A second run starts each table after that key (text keys compared
   byte-wise on both sides: ``COLLATE "C"`` on PostgreSQL is SQLite's ``BINARY``). Before
   that, what is there is checked to be the start of *this* corpus (as many rows as the
   source has up to that key, and the first and last rows equal); a target holding
   anything else is refused.
4. **Sequences** of the id columns are set past the copied ids, so later inserts (a crawl
   writing to the new database) get fresh ids.
5. **Verification.** Every table is read whole on both sides: row counts must be equal,
   and so must an order-independent digest of the rows (the sum of each row's BLAKE2b
   over the Python values both sides read back). A difference is a
   :class:`MigrationMismatch`, naming the table.

An advisory lock on the target keeps two migrations from writing into it at once.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Table,
    bindparam,
    create_engine,
    func,
    inspect,
    select,
    text,
    tuple_,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.pool import NullPool
from sqlalchemy.sql.elements import ColumnElement

from newsspider.errors import DatabaseUnreachable, UserError

from . import fts
from .engine import CONNECT_TIMEOUT, display_url, engine_for, short_error
from .models import Base
from .schema import create_schema, current_revision, head_revision, include_object

__all__ = [
    "MIGRATE_LOCK",
    "Migration",
    "MigrationMismatch",
    "MigrationReport",
    "TableCheck",
    "copied_tables",
    "plan_migration",
    "table_digest",
]

logger = logging.getLogger(__name__)

#: PostgreSQL advisory lock a migration holds on its target while it writes.
MIGRATE_LOCK = 0x6E6577735F6D6967  # "news_mig"
#: Attempts at the lock, :data:`LOCK_WAIT` seconds apart, before another migration is
#: taken to hold it.
LOCK_TRIES, LOCK_WAIT = 10, 0.5
#: The indexes of ``fts.setup_search`` on PostgreSQL, dropped during the bulk copy and
#: built again by ``create_schema`` at its end.
SEARCH_INDEXES = (*fts.PG_TRGM_INDEXES, *fts.PG_ORDER_INDEXES)
#: ``maintenance_work_mem`` of the connection that builds the search indexes at the end.
INDEX_MEMORY = "512MB"
#: Triggers of a table other than PostgreSQL's own (foreign keys): those ``COPY`` would fire.
USER_TRIGGERS = (
    "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = CAST(:t AS regclass)"
)
#: The digest of a table is the sum of its rows' hashes modulo this.
DIGEST_MODULUS = 1 << 128

Progress = Callable[[int], object]


class MigrationMismatch(Exception):
    """The target's rows differ from the source's after the copy (count or content)."""


@dataclass(frozen=True, slots=True)
class TableCheck:
    """One table verified: its rows on each side and their order-independent digests."""

    table: str
    source_rows: int
    target_rows: int
    source_digest: int
    target_digest: int

    @property
    def equal(self) -> bool:
        return self.source_rows == self.target_rows and self.source_digest == self.target_digest


@dataclass(slots=True)
class MigrationReport:
    """What a run did: rows copied now (earlier runs' rows excluded), time, the checks."""

    target: str
    copied: int = 0
    copy_seconds: float = 0.0
    index_seconds: float = 0.0
    verify_seconds: float = 0.0
    resumed: bool = False
    checks: list[TableCheck] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(c.source_rows for c in self.checks)

    @property
    def seconds(self) -> float:
        return self.copy_seconds + self.index_seconds + self.verify_seconds

    def line(self) -> str:
        """The command's last line: what was copied and what was verified."""
        rate = self.copied / self.copy_seconds if self.copy_seconds > 0 else 0.0
        how = " (resumed)" if self.resumed else ""
        return (
            f"copied {self.copied:,} rows{how} in {self.copy_seconds:.1f} s ({rate:,.0f} rows/s), "
            f"search index {self.index_seconds:.1f} s; verified {len(self.checks)} tables, "
            f"{self.rows:,} rows in {self.verify_seconds:.1f} s: counts and content digests "
            f"equal in {self.target}"
        )


def copied_tables() -> list[Table]:
    """The tables a migration copies: every table of the models in dependency order,
    but Alembic's version table and the search structures (``schema.include_object``)."""
    return [
        t for t in Base.metadata.sorted_tables if include_object(t, t.name, "table", False, None)
    ]


def plan_migration(source: Engine, target_url: str, *, batch: int) -> Migration:
    """Check the source and the target, bring both to the newest schema, find where each
    table's copy stands; raise :class:`UserError` (one line) on bad input.

    Refused: a source that is not SQLite, a target URL that is not PostgreSQL or cannot be
    reached, a target at a schema revision this version does not know, a target holding
    rows that are not the start of this corpus, a target another migration is writing.
    """
    if batch < 1:
        raise UserError(f"--batch must be at least 1, not {batch}")
    if source.dialect.name != "sqlite":
        raise UserError(
            f"the corpus to migrate must be SQLite, not {display_url(source)}: "
            "set DATABASE_URL to the SQLite file"
        )
    target = _target_engine(target_url)
    migration = Migration(source, target, batch)
    migration.prepare()
    return migration


def _target_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UserError(
            f"--to {url!r} is not a database URL; give postgresql+psycopg://user:password@host/dbname"
        ) from None
    if parsed.get_backend_name() != "postgresql":
        raise UserError(
            f"--to must be a PostgreSQL URL (postgresql+psycopg://user:password@host/dbname), "
            f"not {parsed.render_as_string(hide_password=True)}"
        )
    try:
        engine = engine_for(url)
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except (DBAPIError, OSError, ImportError) as exc:
        raise DatabaseUnreachable(
            f"cannot connect to {parsed.render_as_string(hide_password=True)}: {short_error(exc)}"
        ) from exc
    return engine


@dataclass(slots=True)
class _TableState:
    table: Table
    source_rows: int
    target_rows: int
    after: tuple[Any, ...] | None  # the largest key copied, None: nothing yet


class Migration:
    """A planned copy of ``source`` into ``target`` (:func:`plan_migration` makes it)."""

    def __init__(self, source: Engine, target: Engine, batch: int) -> None:
        self.source = source
        self.target = target
        self.batch = batch
        self.tables: list[_TableState] = []
        self._lock: Connection | None = None

    @property
    def remaining(self) -> int:
        """Rows still to copy."""
        return sum(max(0, s.source_rows - s.target_rows) for s in self.tables)

    @property
    def work(self) -> int:
        """Units of :meth:`run`'s ``progress``: rows to copy, then every row read back on
        both sides by the verification."""
        return self.remaining + sum(s.source_rows * 2 for s in self.tables)

    def prepare(self) -> None:
        """Lock the target, migrate both schemas, read where each table stands."""
        where = display_url(self.target)
        self._lock = self.target.connect()
        for _ in range(LOCK_TRIES):
            # A killed migration's lock goes when the server sees its connection close.
            got = self._lock.exec_driver_sql(
                f"SELECT pg_try_advisory_lock({MIGRATE_LOCK})"
            ).scalar()
            self._lock.commit()
            if got:
                break
            time.sleep(LOCK_WAIT)
        else:
            self.close()
            raise UserError(f"another scrapy corpus migrate is writing into {where}")
        try:
            create_schema(self.source)
            if self._schema_missing():
                try:
                    create_schema(self.target)
                except RuntimeError as exc:  # a revision this version does not know
                    raise UserError(str(exc)) from None
            with self.source.connect() as s, self.target.connect() as t:
                if current_revision(s) != current_revision(t):
                    raise UserError(
                        f"{where} is at schema revision {current_revision(t)}, the corpus at "
                        f"{current_revision(s)}"
                    )
                self.tables = [self._state(s, t, table) for table in copied_tables()]
        except BaseException:
            self.close()
            raise

    def _schema_missing(self) -> bool:
        """The target is not at the newest revision with every table. A resumed copy skips
        ``create_schema``, which would build the search indexes over the rows copied so far
        only to have them dropped again."""
        with self.target.connect() as t:
            tables = set(inspect(t).get_table_names())
            if not tables >= {table.name for table in copied_tables()}:
                return True
            return current_revision(t) != head_revision()

    def _state(self, s: Connection, t: Connection, table: Table) -> _TableState:
        """Where ``table``'s copy stands; a target that is not a start of the source is
        refused here."""
        source_rows = int(s.scalar(select(func.count()).select_from(table)) or 0)
        target_rows = int(t.scalar(select(func.count()).select_from(table)) or 0)
        if not target_rows:
            return _TableState(table, source_rows, 0, None)
        key = _key(table)
        last = t.execute(select(*key).order_by(*(_bytewise(c).desc() for c in key)).limit(1)).one()
        first = t.execute(select(*key).order_by(*(_bytewise(c) for c in key)).limit(1)).one()
        upto = int(
            s.scalar(select(func.count()).select_from(table).where(_compare(key, "<=", last))) or 0
        )
        differs = upto != target_rows or any(
            _row_hash(_row_at(s, table, k)) != _row_hash(_row_at(t, table, k))
            for k in (tuple(first), tuple(last))
        )
        if differs:
            raise UserError(
                f"{display_url(self.target)} holds another corpus ({table.name}: "
                f"{target_rows:,} rows, not the start of this corpus's {source_rows:,}); "
                "migrate into an empty database"
            )
        return _TableState(table, source_rows, target_rows, tuple(last))

    def close(self) -> None:
        """Release the target's lock (a pooled connection would keep holding it)."""
        if self._lock is not None:
            try:
                self._lock.rollback()
                self._lock.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATE_LOCK})")
                self._lock.commit()
            finally:
                self._lock.close()
                self._lock = None

    def run(self, progress: Progress | None = None) -> MigrationReport:
        """Copy what is left, set the sequences, build the search index, verify.

        ``progress`` is called with the rows just copied or read back (:attr:`work` in
        all). Raises :class:`MigrationMismatch` when a table's count or digest differs
        after the copy, :class:`UserError` when the target refuses a row (one line naming
        the table and key).
        """
        report = MigrationReport(display_url(self.target))
        report.resumed = any(s.target_rows for s in self.tables)
        try:
            start = time.perf_counter()
            if self.remaining:
                self._drop_search_indexes()
            for state in self.tables:
                report.copied += self._copy(state, progress)
            self._set_sequences()
            report.copy_seconds = time.perf_counter() - start
            start = time.perf_counter()
            self._build_search()
            with self.target.begin() as conn:
                conn.exec_driver_sql("ANALYZE")
            report.index_seconds = time.perf_counter() - start
            start = time.perf_counter()
            for state in self.tables:
                rows_s, digest_s = _count_digest(self.source, state.table, self.batch, progress)
                rows_t, digest_t = _count_digest(self.target, state.table, self.batch, progress)
                check = TableCheck(state.table.name, rows_s, rows_t, digest_s, digest_t)
                report.checks.append(check)
                if not check.equal:
                    raise MigrationMismatch(_mismatch(check, report.target))
            report.verify_seconds = time.perf_counter() - start
        finally:
            self.close()
        logger.info("%s", report.line())
        return report

    def _build_search(self) -> None:
        """``create_schema`` on the target once every row is in: the search indexes built
        in one pass each, on a connection allowed :data:`INDEX_MEMORY` (a GIN build
        sorts its trigrams in memory, and PostgreSQL's default 64 MB splits the sort)."""
        options = f"-c maintenance_work_mem={INDEX_MEMORY}"
        engine = create_engine(
            self.target.url,
            poolclass=NullPool,
            connect_args={"connect_timeout": CONNECT_TIMEOUT, "options": options},
        )
        try:
            create_schema(engine)
        finally:
            engine.dispose()

    def _drop_search_indexes(self) -> None:
        with self.target.begin() as conn:
            for name in SEARCH_INDEXES:
                conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")

    def _copy(self, state: _TableState, progress: Progress | None) -> int:
        """The source's rows of one table after ``state.after``, a batch per transaction."""
        table = state.table
        key = _key(table)
        positions = [list(table.columns).index(c) for c in key]
        prep = self.target.dialect.identifier_preparer
        columns = ", ".join(prep.quote(c.name) for c in table.columns)
        copy_sql = f"COPY {prep.format_table(table)} ({columns}) FROM STDIN"
        binds = [c.type.bind_processor(self.target.dialect) for c in table.columns]
        with self.target.connect() as t:
            triggers = bool(t.scalar(text(USER_TRIGGERS), {"t": table.name}))
        copied = 0
        with self.source.connect() as s:
            while True:
                stmt = select(table).order_by(*key).limit(self.batch)
                if state.after is not None:
                    stmt = stmt.where(_compare(key, ">", state.after))
                try:
                    rows = s.execute(stmt).all()
                except ValueError as exc:  # a stored value its type cannot read
                    raise UserError(
                        f"cannot read {table.name} after key {state.after}: {exc}"
                    ) from None
                if not rows:
                    return copied
                self._write(table, copy_sql, binds, rows, positions, triggers)
                state.after = tuple(rows[-1][i] for i in positions)
                copied += len(rows)
                if progress is not None:
                    progress(len(rows))

    def _write(
        self,
        table: Table,
        copy_sql: str,
        binds: Sequence[Callable[[Any], Any] | None],
        rows: Sequence[Any],
        positions: Sequence[int],
        triggers: bool,
    ) -> None:
        """One batch in one transaction, with ``COPY``; a refused row is one line.

        The table's own triggers (``triggers``) are off for the batch, in its transaction
        (a kill leaves them on): what they would derive, such as ``article_counts`` from
        ``articles``, is a table of the source copied as it is.
        """
        dbapi_error = self.target.dialect.loaded_dbapi.Error
        try:
            with self.target.begin() as conn:
                # A crash of the server may lose the last commits, never reorder them: the
                # target stays a start of the source, which is all a resume needs.
                conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
                name = self.target.dialect.identifier_preparer.format_table(table)
                if triggers:
                    conn.exec_driver_sql(f"ALTER TABLE {name} DISABLE TRIGGER USER")
                raw = conn.connection.driver_connection
                with raw.cursor() as cur, cur.copy(copy_sql) as copy:
                    if not any(binds):
                        for row in rows:
                            copy.write_row(row)
                    else:
                        for row in rows:
                            copy.write_row(
                                [v if b is None else b(v) for b, v in zip(binds, row, strict=True)]
                            )
                if triggers:
                    conn.exec_driver_sql(f"ALTER TABLE {name} ENABLE TRIGGER USER")
        except (dbapi_error, DBAPIError) as exc:
            first = tuple(rows[0][i] for i in positions)
            last = tuple(rows[-1][i] for i in positions)
            raise UserError(
                f"{display_url(self.target)} refused {table.name} rows {_show(first)} to "
                f"{_show(last)}: {short_error(exc)}"
            ) from exc

    def _set_sequences(self) -> None:
        """Each serial id column's sequence past the largest copied id."""
        with self.target.begin() as conn:
            for state in self.tables:
                table = state.table
                for column in _key(table):
                    seq = conn.scalar(select(func.pg_get_serial_sequence(table.name, column.name)))
                    if seq is None:
                        continue
                    top = conn.scalar(select(func.max(column))) or 0
                    conn.execute(select(func.setval(seq, int(top) + 1, False)))


def _mismatch(check: TableCheck, target: str) -> str:
    if check.source_rows != check.target_rows:
        return (
            f"{check.table} differs: {check.source_rows:,} rows in the corpus, "
            f"{check.target_rows:,} in {target}"
        )
    return (
        f"{check.table} differs: {check.source_rows:,} rows on both sides but their content "
        f"digests differ ({check.source_digest:032x} != {check.target_digest:032x}) in {target}"
    )


def _key(table: Table) -> list[Column[Any]]:
    key = list(table.primary_key.columns)
    if not key:
        raise RuntimeError(f"table {table.name} has no primary key: it cannot be copied by key")
    return key


def _is_text(column: Column[Any]) -> bool:
    try:
        return column.type.python_type is str
    except NotImplementedError:
        return False


def _bytewise(column: Column[Any]) -> ColumnElement[Any]:
    """``column`` ordered as SQLite's ``BINARY`` does (UTF-8 bytes) on PostgreSQL too."""
    return column.collate("C") if _is_text(column) else column


def _compare(key: Sequence[Column[Any]], op: str, values: Sequence[Any]) -> ColumnElement[bool]:
    """``key op values``, a row-value comparison for a composite key, values typed."""
    bound = [bindparam(None, v, type_=c.type) for c, v in zip(key, values, strict=True)]
    left: Any = key[0] if len(key) == 1 else tuple_(*key)
    right: Any = bound[0] if len(key) == 1 else tuple_(*bound)
    return left > right if op == ">" else left <= right


def _row_at(conn: Connection, table: Table, values: Sequence[Any]) -> tuple[Any, ...]:
    key = _key(table)
    where = [c == bindparam(None, v, type_=c.type) for c, v in zip(key, values, strict=True)]
    row = conn.execute(select(table).where(*where)).one_or_none()
    return tuple(row) if row is not None else ()


def _row_hash(row: Sequence[Any]) -> int:
    """A row's 128-bit hash over the Python values its types read back.

    ``repr`` of the tuple is unambiguous (strings quoted and escaped, bytes as ``b'..'``,
    ``None``, ``True``, floats exactly, aware times with their zone), and both sides read
    the same Python values through the models' types, times as aware UTC.
    """
    text = repr(tuple(row)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(text, digest_size=16).digest(), "big")


def _count_digest(
    engine: Engine, table: Table, batch: int, progress: Progress | None
) -> tuple[int, int]:
    """(rows, order-independent digest) of ``table`` on ``engine``, streamed."""
    rows = digest = 0
    for chunk in _stream(engine, table, batch):
        rows += len(chunk)
        digest = (digest + sum(map(_row_hash, chunk))) % DIGEST_MODULUS
        if progress is not None:
            progress(len(chunk))
    return rows, digest


def table_digest(engine: Engine, table: Table, batch: int = 2000) -> tuple[int, int]:
    """(rows, digest) of ``table`` as the verification computes it: the sum of every
    row's hash modulo 2**128, so equal tables have equal digests in any order."""
    return _count_digest(engine, table, batch, None)


def _stream(engine: Engine, table: Table, batch: int) -> Iterator[Sequence[Any]]:
    """Every row of ``table`` in chunks, in whatever order the database reads fastest
    (a server-side cursor on PostgreSQL)."""
    with engine.connect() as conn:
        result = conn.execution_options(yield_per=batch).execute(select(table))
        yield from result.partitions(batch)


def _show(key: tuple[Any, ...]) -> str:
    return str(key[0]) if len(key) == 1 else str(key)
