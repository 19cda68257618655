"""Full-text search that works for Chinese, on SQLite (FTS5 trigram) and PostgreSQL (pg_trgm).

Chinese has no spaces, so word tokenizers see a whole sentence as one token and find
nothing. Both backends index character *trigrams* instead, which turns "does the text
contain this substring" into an index lookup:

- **SQLite**: an FTS5 virtual table ``articles_fts`` with ``tokenize='trigram'`` over
  ``articles.title`` and ``articles.content``, as an *external content* table
  (``content='articles', content_rowid='id'``: the text is not stored twice, only the
  index). The index is kept **out of the write path**: three triggers on ``articles``
  only queue each inserted or changed row's id in ``articles_fts_pending`` (and take an
  indexed row's old text out of the index, which needs its old values), and
  :func:`sync_search` indexes the queue in bulk, a few thousand rows per transaction, so
  a row is in the index whole or not at all. The crawl pipeline calls it at a crawl's
  end and at most every :data:`SEARCH_SYNC_SECONDS` during one; ``scrapy reclean``,
  ``scrapy reextract`` and hand edits are indexed by the next call. **The invariant**: a
  search sees every committed article at every moment, never a half-indexed one: the
  indexed rows through FTS5, the queued ones by a ``LIKE`` over the queue (short, since
  it is emptied at every crawl's end), so an article is findable as soon as its
  transaction commits, and through the index after its crawl ends.
  A phrase query of three or more characters is exactly a substring test. Shorter
  queries have no trigram of their own. A two-character query ``ab`` still goes through
  indexes when it is rare enough: every occurrence is either followed by a character,
  so the row holds a trigram ``ab?`` (listed by the ``fts5vocab`` table
  ``articles_fts_vocab``, then matched as ``"ab1" OR "ab2" OR ...``), or ends its
  column, which the indexed side table ``articles_search_tail`` (the last two characters
  of each title and body, kept by the same triggers) finds. Frequent two-character words
  (a cost model picks the faster path) and one-character queries fall back to ``LIKE``
  (escaped, with an ``ESCAPE`` clause) walked in ``published`` order through an index:
  a word on one row in twenty is found after a few hundred rows.
- **PostgreSQL**: the ``pg_trgm`` extension and GIN trigram indexes on ``title`` and
  ``content``, which ``ILIKE '%...%'`` uses directly. They are GIN indexes with
  ``fastupdate`` (PostgreSQL's default) and a 16 MB pending list: an insert appends to
  the list, which searches read too (so the invariant above holds by construction), and
  :func:`sync_search` merges it into the index in bulk (``gin_clean_pending_list``) at a
  crawl's end instead of inserts doing so every 4 MB. Without permission to create the
  extension, search still answers through ``ILIKE`` (a sequential scan) and a warning says
  so. pg_trgm only takes trigrams of *word* characters: in a database whose ``LC_CTYPE`` is
  ``C`` the CJK characters are not alphanumeric, so create the database with a UTF-8 ctype
  (``C.UTF-8``, ``en_US.UTF-8``) for the index to help; the answers are the same either way.

:func:`setup_search` is called by ``create_schema`` and is idempotent; when it adds search
to a database that already holds articles, or finds the triggers gone, it fills the index
from ``articles`` (FTS5 ``rebuild``) in the same transaction.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable
from typing import Literal

from sqlalchemy import (
    DDL,
    Connection,
    Engine,
    Integer,
    and_,
    bindparam,
    column,
    event,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.sql.elements import ColumnElement, TextClause

from .models import Article

logger = logging.getLogger(__name__)

SearchBackend = Literal["fts5", "pg_trgm", "like"]

FTS_TABLE = "articles_fts"
#: Queries at least this long (in characters) go through the trigram index.
MIN_FTS_CHARS = 3
#: ``snippet()`` tokens around the match; with the trigram tokenizer one token is one
#: character (FTS5 caps it at 64).
SNIPPET_TOKENS = 48
SNIPPET_OPEN, SNIPPET_CLOSE, SNIPPET_ELLIPSIS = "[", "]", "…"
LIKE_ESCAPE = "\\"

#: Lightweight handle for the FTS table in Core statements (not part of ``Base.metadata``,
#: which must not try to create it as an ordinary table).
FTS = table(FTS_TABLE, column("rowid", Integer), column("title"), column("content"))

#: ``detail="none"``: the index keeps which rows hold each trigram, not where. Measured on
#: 20,000 rows of Chinese bodies (``benchmarks/corpus_search.py``'s), 2.9 KB a row against
#: 11.3 KB with positions (``detail="full"``, the default) and 6.1 KB with columns. Without
#: positions FTS5 cannot match a phrase, so a query's trigrams are matched together
#: (:func:`fts_candidates`) and each candidate row is checked with ``LIKE``: the same
#: answers, the check reading only the rows a page of hits needs (``Corpus.search``).
# ``content="articles"`` in double quotes: the form Datasette and sqlite-utils look for to
# offer full-text search on the ``articles`` table itself.
CREATE_FTS = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    'title, content, content="articles", content_rowid="id", tokenize="trigram", '
    'detail="none")'
)

FTS_VOCAB = f"{FTS_TABLE}_vocab"
#: The last two characters of each column, for two-character queries: an occurrence at
#: the very end of a title or body has no trigram ``ab?`` in the index. A side table kept
#: by the same triggers (not expression indexes on ``articles``, which SQLAlchemy cannot
#: reflect and would warn about).
TAIL_TABLE = "articles_search_tail"
TAIL = table(TAIL_TABLE, column("id", Integer), column("title_tail"), column("content_tail"))
#: Ids of the rows inserted or changed since :func:`sync_search` last indexed them.
PENDING_TABLE = "articles_fts_pending"
PENDING = table(PENDING_TABLE, column("id", Integer))
#: Segments FTS5 gathers at a level before merging them (its default is 4). Merging
#: rewrites every indexed row once per level; 16 makes half as many levels. Measured on
#: 30,000 Chinese bodies indexed 5,000 rows a transaction: 1.39 ms of CPU a row against
#: 1.88 with the default; queries read at most 16 segments a level instead of 4.
FTS_AUTOMERGE = 16
SET_AUTOMERGE = f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('automerge', {FTS_AUTOMERGE})"
#: Every stored row queued for indexing: how the index is (re)built, by :func:`sync_search`
#: in transactions of :data:`SYNC_BATCH` rows, never one long ``rebuild`` (at a million
#: rows that was one 45-minute transaction with 11 GB of WAL). A search meanwhile sees
#: queued rows through ``LIKE`` (the module's invariant), slower, never incomplete.
QUEUE_ALL = f"INSERT OR IGNORE INTO {PENDING_TABLE}(id) SELECT id FROM articles"
#: How often a crawl brings the index up to date while it runs (and always at its end).
SEARCH_SYNC_SECONDS = 60.0
#: Rows indexed per transaction by :func:`sync_search`.
SYNC_BATCH = 5000
#: Candidates (rows holding every trigram of a query) up to which search reads them all
#: and sorts the hits; past it, it walks the articles newest first (:func:`fts_or_queued`).
CANDIDATES_SORTED = 2000
#: Queued rows past which ``setup_search`` says how to index them at once.
QUEUED_WARNING = 20_000
SQLITE_TABLES = {
    FTS_TABLE: CREATE_FTS,
    PENDING_TABLE: f"CREATE TABLE IF NOT EXISTS {PENDING_TABLE} (id INTEGER PRIMARY KEY)",
    FTS_VOCAB: f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_VOCAB} USING fts5vocab({FTS_TABLE}, row)",
    TAIL_TABLE: f"CREATE TABLE IF NOT EXISTS {TAIL_TABLE} "
    "(id INTEGER PRIMARY KEY, title_tail TEXT, content_tail TEXT)",
    "ix_search_tail_title": f"CREATE INDEX IF NOT EXISTS ix_search_tail_title "
    f"ON {TAIL_TABLE} (title_tail)",
    "ix_search_tail_content": f"CREATE INDEX IF NOT EXISTS ix_search_tail_content "
    f"ON {TAIL_TABLE} (content_tail)",
    # the last character alone, for one-character queries (short_match)
    "ix_search_tail_title_last": f"CREATE INDEX IF NOT EXISTS ix_search_tail_title_last "
    f"ON {TAIL_TABLE} (substr(title_tail, 2, 1))",
    "ix_search_tail_content_last": f"CREATE INDEX IF NOT EXISTS ix_search_tail_content_last "
    f"ON {TAIL_TABLE} (substr(content_tail, 2, 1))",
}
#: Statements that (re)fill the search structures from ``articles``.
BACKFILL = {
    FTS_TABLE: (QUEUE_ALL,),
    TAIL_TABLE: (
        f"DELETE FROM {TAIL_TABLE}",
        f"INSERT INTO {TAIL_TABLE} (id, title_tail, content_tail) "
        "SELECT id, substr(title, -2), substr(content, -2) FROM articles",
    ),
}
_TAIL_SET = (
    f"INSERT OR REPLACE INTO {TAIL_TABLE} (id, title_tail, content_tail) "
    "VALUES (new.id, substr(new.title, -2), substr(new.content, -2));"
)
# The external-content recipe of the FTS5 documentation (§4.4.3): a 'delete' needs the old
# values exactly, which only a trigger can guarantee, so taking an indexed row's old text
# out stays here; a queued row was never indexed and has nothing to take out. Adding the
# new text is deferred to sync_search. The update trigger skips rows whose indexed text
# did not change (a re-crawl of an unchanged page, a reclean without effect).
_FTS_TAKE_OUT = (
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, content) "
    "SELECT 'delete', old.id, old.title, old.content "
    f"WHERE NOT EXISTS (SELECT 1 FROM {PENDING_TABLE} WHERE id = old.id);"
)
SQLITE_TRIGGERS = {
    f"{FTS_TABLE}_ai": f"""
        CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ai AFTER INSERT ON articles BEGIN
            INSERT OR IGNORE INTO {PENDING_TABLE}(id) VALUES (new.id);
            {_TAIL_SET}
        END""",
    f"{FTS_TABLE}_ad": f"""
        CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ad AFTER DELETE ON articles BEGIN
            {_FTS_TAKE_OUT}
            DELETE FROM {PENDING_TABLE} WHERE id = old.id;
            DELETE FROM {TAIL_TABLE} WHERE id = old.id;
        END""",
    f"{FTS_TABLE}_au": f"""
        CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_au AFTER UPDATE OF id, title, content
        ON articles
        WHEN old.id IS NOT new.id OR old.title IS NOT new.title
             OR old.content IS NOT new.content
        BEGIN
            {_FTS_TAKE_OUT}
            DELETE FROM {PENDING_TABLE} WHERE id = old.id;
            INSERT OR IGNORE INTO {PENDING_TABLE}(id) VALUES (new.id);
            DELETE FROM {TAIL_TABLE} WHERE id = old.id;
            {_TAIL_SET}
        END""",
}
#: Earlier versions' triggers had these names and indexed every row as it was written;
#: one without the queue in its body is replaced (the index it kept is complete, so
#: nothing is re-indexed).
#: Cost model of a two-character query (measured, benchmarks/corpus_search.py): the index
#: path reads every row entry of the ``ab?`` trigrams (``sum_doc``); the ``LIKE`` walk
#: tests rows in time order until ``limit`` hits, about ``limit * rows / matches`` of
#: them, and testing a row costs about this many index entries.
SHORT_ROW_COST = 30
#: More ``ab?`` trigrams than this make a long MATCH expression: use the walk.
SHORT_MAX_TERMS = 1000

#: Time-ordered indexes for "newest first" results, filters and per-site stats: a short
#: query walks ``published`` downwards and stops after ``limit`` hits.
ORDER_INDEXES = {
    "ix_articles_published": "CREATE INDEX IF NOT EXISTS ix_articles_published "
    "ON articles (published)",
    "ix_articles_site_published": "CREATE INDEX IF NOT EXISTS ix_articles_site_published "
    "ON articles (site, published)",
}
# PostgreSQL sorts NULLs first in DESC order unless told; results put untimed rows last,
# and a backward scan of an ascending index cannot give DESC NULLS LAST.
PG_ORDER_INDEXES = {
    "ix_articles_published": "CREATE INDEX IF NOT EXISTS ix_articles_published "
    "ON articles (published DESC NULLS LAST)",
    "ix_articles_site_published": "CREATE INDEX IF NOT EXISTS ix_articles_site_published "
    "ON articles (site, published DESC NULLS LAST)",
}
PG_TRGM_INDEXES = {
    "ix_articles_title_trgm": "CREATE INDEX IF NOT EXISTS ix_articles_title_trgm "
    "ON articles USING gin (title gin_trgm_ops) WITH (fastupdate = on, "
    "gin_pending_list_limit = 16384)",
    "ix_articles_content_trgm": "CREATE INDEX IF NOT EXISTS ix_articles_content_trgm "
    "ON articles USING gin (content gin_trgm_ops) WITH (fastupdate = on, "
    "gin_pending_list_limit = 16384)",
}

# drop_all() drops ``articles`` and with it the triggers; the FTS index must go too, or a
# new ``articles`` table would inherit an index of rows that no longer exist.
for _name in (FTS_VOCAB, FTS_TABLE, TAIL_TABLE, PENDING_TABLE):
    _ddl = f"DROP TABLE IF EXISTS {_name}"
    event.listen(Article.__table__, "after_drop", DDL(_ddl).execute_if(dialect="sqlite"))


def setup_search(engine: Engine) -> SearchBackend:
    """Create the search structures of ``engine``'s backend if missing; return the backend.

    Idempotent and cheap when everything exists (one catalogue query), so every
    ``create_schema`` may call it. Returns ``"fts5"``, ``"pg_trgm"`` or ``"like"`` (no
    index: SQLite without FTS5/trigram, PostgreSQL without the extension, other backends).
    """
    if engine.dialect.name == "sqlite":
        return _setup_sqlite(engine)
    if engine.dialect.name == "postgresql":
        return _setup_postgresql(engine)
    logger.warning("no full-text index for %s: search scans with LIKE", engine.dialect.name)
    return "like"


def upgrade_triggers(conn: Connection) -> bool:
    """Replace an earlier version's index-on-write triggers by today's queueing ones, in
    the caller's transaction (SQLite; nothing else). ``create_schema`` calls it before the
    migrations, so a database converted once lists its objects in the order a fresh upgrade
    gives. True if replaced."""
    if conn.dialect.name != "sqlite":
        return False
    old = _old_triggers(conn)
    if not old:
        return False
    conn.exec_driver_sql(SQLITE_TABLES[PENDING_TABLE])
    for name in old:
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
        conn.exec_driver_sql(SQLITE_TRIGGERS[name])
    logger.info("search index: triggers now queue rows for sync_search")
    return True


def _sqlite_objects(conn: Connection) -> set[str]:
    names = [*SQLITE_TABLES, *SQLITE_TRIGGERS, *ORDER_INDEXES]
    stmt = text("SELECT name, sql FROM sqlite_master WHERE name IN :names").bindparams(
        bindparam("names", expanding=True)
    )
    return {
        name
        for name, sql in conn.execute(stmt, {"names": names})
        if (name not in SQLITE_TRIGGERS or PENDING_TABLE in (sql or ""))
        and (name != FTS_TABLE or _lean(sql))
    }


def _lean(sql: str | None) -> bool:
    """The FTS table's DDL is today's: no positions (``detail="none"``)."""
    return bool(re.search(r"""detail\s*=\s*["']?none""", sql or "", re.IGNORECASE))


def _replace_old_index(conn: Connection) -> bool:
    """Drop an FTS table of an earlier version (positions kept, four times the bytes) and
    its vocabulary table, in the caller's transaction; True if there was one. Its rows are
    then queued and indexed again in batches (:data:`QUEUE_ALL`, :func:`sync_search`)."""
    sql = conn.scalar(text("SELECT sql FROM sqlite_master WHERE name = :n"), {"n": FTS_TABLE})
    if sql is None or _lean(sql):
        return False
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {FTS_VOCAB}")
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {FTS_TABLE}")
    logger.info("search index: the earlier index with positions is replaced by a leaner one")
    return True


def _old_triggers(conn: Connection) -> list[str]:
    """Triggers of an earlier version (index on write) present under today's names."""
    stmt = text("SELECT name, sql FROM sqlite_master WHERE name IN :names").bindparams(
        bindparam("names", expanding=True)
    )
    rows = conn.execute(stmt, {"names": list(SQLITE_TRIGGERS)})
    return [name for name, sql in rows if PENDING_TABLE not in (sql or "")]


def _setup_sqlite(engine: Engine) -> SearchBackend:
    wanted = {*SQLITE_TABLES, *SQLITE_TRIGGERS, *ORDER_INDEXES}
    with engine.connect() as conn:
        if _sqlite_objects(conn) >= wanted:
            return "fts5"
        conn.rollback()
        # One write transaction for table, triggers and backfill: a second process waits
        # here (busy_timeout) and then finds everything made, and a crash in between leaves
        # no FTS table without its rows. pysqlite opens no transaction before DDL by itself.
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            if _replace_old_index(conn):
                present = _sqlite_objects(conn) - {FTS_VOCAB}
            else:
                present = _sqlite_objects(conn)
            for name, ddl in ORDER_INDEXES.items():
                if name not in present:
                    conn.exec_driver_sql(ddl)
            created = [name for name in SQLITE_TABLES if name not in present]
            for name in created:
                conn.exec_driver_sql(SQLITE_TABLES[name])
            if FTS_TABLE in created:
                conn.exec_driver_sql(SET_AUTOMERGE)
            # Without its triggers (a corpus from before search, or ``articles`` dropped
            # and made again by hand) the rows may differ from the index: refill it all.
            # The older, index-on-write triggers kept it complete: they are only replaced.
            old = _old_triggers(conn)
            untracked = not old and any(name not in present for name in SQLITE_TRIGGERS)
            for name in old:
                conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
            for ddl in SQLITE_TRIGGERS.values():
                conn.exec_driver_sql(ddl)
            backfill = [name for name in BACKFILL if untracked or name in created]
            if backfill and conn.scalar(text("SELECT EXISTS (SELECT 1 FROM articles)")):
                logger.info("indexing the stored articles for search: %s", ", ".join(backfill))
                for name in backfill:
                    for statement in BACKFILL[name]:
                        conn.exec_driver_sql(statement)
            queued = conn.scalar(text(f"SELECT count(*) FROM {PENDING_TABLE}")) or 0
            conn.commit()
            if queued >= QUEUED_WARNING:
                logger.warning(
                    "%s stored articles are queued for the search index: `scrapy corpus "
                    "index` indexes them in batches (search finds them meanwhile, slower)",
                    queued,
                )
        except OperationalError as exc:
            conn.rollback()
            if "fts5" in str(exc) or "trigram" in str(exc):
                logger.warning("SQLite lacks FTS5 with the trigram tokenizer (%s): search "
                               "scans with LIKE; SQLite 3.34+ is needed", exc)  # fmt: skip
                with engine.begin() as conn2:
                    for ddl in ORDER_INDEXES.values():
                        conn2.exec_driver_sql(ddl)
                return "like"
            raise
    return "fts5"


def _setup_postgresql(engine: Engine) -> SearchBackend:
    has_trgm = _pg_has_trgm(engine)
    if not has_trgm:
        try:
            with engine.begin() as conn:
                conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            has_trgm = True
        except DBAPIError as exc:
            logger.warning(
                "cannot create the pg_trgm extension (%s): search falls back to ILIKE scans; "
                "ask an administrator to run CREATE EXTENSION pg_trgm",
                str(exc.orig).strip() if exc.orig else exc,
            )
    wanted = dict(PG_ORDER_INDEXES) | (PG_TRGM_INDEXES if has_trgm else {})
    with engine.begin() as conn:
        present = set(
            conn.scalars(
                text(
                    "SELECT indexname FROM pg_indexes "
                    "WHERE tablename = 'articles' AND schemaname = current_schema()"
                )
            )
        )
        for name, ddl in wanted.items():
            if name not in present:
                logger.info("creating index %s", name)
                conn.exec_driver_sql(ddl)
    return "pg_trgm" if has_trgm else "like"


def _pg_has_trgm(engine: Engine) -> bool:
    with engine.connect() as conn:
        stmt = text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')")
        return bool(conn.scalar(stmt))


def sync_search(
    engine: Engine, *, batch: int = SYNC_BATCH, progress: Callable[[int], object] | None = None
) -> int:
    """Bring the search index up to date in bulk; return the rows indexed.

    ``progress`` is called with the rows of each batch done (``scrapy corpus index``'s bar).

    SQLite: the queued rows (``articles_fts_pending``) are indexed ``batch`` at a time, each
    batch in one transaction that also takes them off the queue, so a row is indexed whole
    or not at all and a crash loses nothing (the queue still holds what was not done).
    PostgreSQL: the trigram indexes' pending lists are merged (``gin_clean_pending_list``;
    searches read them either way). Other backends: nothing to do.
    """
    if engine.dialect.name == "postgresql":
        return _sync_postgresql(engine)
    if engine.dialect.name != "sqlite":
        return 0
    done = 0
    while True:
        with engine.begin() as conn:
            if PENDING_TABLE not in set(
                conn.scalars(text("SELECT name FROM sqlite_master WHERE name = :n"), {"n": PENDING_TABLE})
            ):
                return done
            top = conn.scalar(
                text(f"SELECT id FROM {PENDING_TABLE} ORDER BY id LIMIT 1 OFFSET :k"),
                {"k": batch - 1},
            )
            if top is None:
                top = conn.scalar(text(f"SELECT max(id) FROM {PENDING_TABLE}"))
                if top is None:
                    return done
            conn.execute(
                text(
                    f"INSERT INTO {FTS_TABLE}(rowid, title, content) "
                    "SELECT a.id, a.title, a.content FROM articles AS a "
                    f"JOIN {PENDING_TABLE} AS p ON p.id = a.id WHERE p.id <= :top"
                ),
                {"top": top},
            )
            n = conn.execute(
                text(f"DELETE FROM {PENDING_TABLE} WHERE id <= :top"), {"top": top}
            ).rowcount
            done += max(0, n)
        if progress is not None:
            progress(max(0, n))
        if n < batch:
            return done


def _sync_postgresql(engine: Engine) -> int:
    merged = 0
    with engine.begin() as conn:
        present = set(
            conn.scalars(
                text(
                    "SELECT indexname FROM pg_indexes "
                    "WHERE tablename = 'articles' AND schemaname = current_schema()"
                )
            )
        )
        for name in PG_TRGM_INDEXES:
            if name in present:
                merged += int(
                    conn.scalar(text("SELECT gin_clean_pending_list(CAST(:i AS regclass))"), {"i": name})
                    or 0
                )
    return merged


def pending_rows(engine: Engine) -> int:
    """Rows stored but not yet in the SQLite search index (0 elsewhere)."""
    if engine.dialect.name != "sqlite":
        return 0
    with engine.connect() as conn:
        if not conn.scalar(
            text("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = :n)"), {"n": PENDING_TABLE}
        ):
            return 0
        return int(conn.scalar(text(f"SELECT count(*) FROM {PENDING_TABLE}")) or 0)


def queued_like(query: str) -> ColumnElement[bool]:
    """Rows still queued for the index whose title or content contains ``query``: what
    an index lookup must add to see every committed article (the module's invariant)."""
    queued = select(PENDING.c.id)
    return Article.__table__.c.id.in_(queued) & like_clause(query, "sqlite")


def index_missing(engine: Engine) -> bool:
    """True when ``setup_search`` would have to index stored articles (SQLite corpus from
    before search): a command can say why its first run takes a while."""
    if engine.dialect.name != "sqlite":
        return False
    with engine.connect() as conn:
        if not conn.scalar(
            text("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'articles')")
        ):
            return False
        present = _sqlite_objects(conn)
        return not present >= {*SQLITE_TABLES, *SQLITE_TRIGGERS}


def search_backend(engine: Engine) -> SearchBackend:
    """Which search path ``engine`` supports now (without creating anything). An earlier
    version's index (with positions, not yet replaced: a read-only web view does not
    migrate) answers the same trigram queries."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            present = _sqlite_objects(conn)
            if conn.scalar(text("SELECT 1 FROM sqlite_master WHERE name = :n"), {"n": FTS_TABLE}):
                present.add(FTS_TABLE)
            return "fts5" if present >= set(SQLITE_TABLES) else "like"
    if engine.dialect.name == "postgresql":
        return "pg_trgm" if _pg_has_trgm(engine) else "like"
    return "like"


# -- query pieces ---------------------------------------------------------------------------


def normalize_query(query: str) -> str:
    """The query as searched: surrounding whitespace removed; empty queries are refused.

    NUL characters are removed first: stored text never holds them (``db._no_nul``), and
    left in, SQLite's ``LIKE`` reads a NUL as the end of the pattern (``%\0%`` matched
    every row) while PostgreSQL refuses the parameter.
    """
    q = query.replace("\x00", "").strip()
    if not q:
        raise ValueError("empty search query")
    return q


def fts_phrase(query: str) -> str:
    """``query`` as one FTS5 phrase string (``"..."`` with ``"`` doubled).

    Bound as a parameter, never spliced into SQL; quoting it makes FTS5 read operators
    (``AND``, ``*``, ``:``, ``-``) as plain text. With the trigram tokenizer a phrase matches
    exactly where the text contains the query as a substring.
    """
    return '"' + query.replace('"', '""') + '"'


def like_pattern(query: str) -> str:
    r"""``%query%`` with ``\``, ``%`` and ``_`` escaped for ``LIKE ... ESCAPE '\'``."""
    escaped = query.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2).replace("%", r"\%").replace("_", r"\_")
    return f"%{escaped}%"


def fts_match(query: str, name: str = "fts_query") -> TextClause:
    """``articles_fts MATCH :fts_query`` with the query bound as a phrase."""
    return fts_match_expr(fts_phrase(query), name)


def fts_candidates(query: str, name: str = "fts_query") -> TextClause:
    """``articles_fts MATCH`` every trigram of ``query`` (3+ characters): the rows that
    may contain it. The index keeps no positions (:data:`CREATE_FTS`), so a row holding
    the trigrams apart is a candidate too; :func:`fts_or_queued` checks each."""
    trigrams = sorted({query[i : i + 3] for i in range(len(query) - 2)})
    return fts_match_expr(" AND ".join(fts_phrase(t) for t in trigrams), name)


def candidate_count(conn: Connection, query: str, cap: int) -> int:
    """How many indexed rows hold every trigram of ``query``, counted up to ``cap + 1``
    (the doclists are read only that far)."""
    found = select(FTS.c.rowid).where(fts_candidates(query)).limit(cap + 1).subquery()
    return int(conn.scalar(select(func.count()).select_from(found)) or 0)


def fts_or_queued(query: str, *, walk: bool = False) -> ColumnElement[bool]:
    """Articles containing ``query`` (3+ characters): indexed candidates
    (:func:`fts_candidates`) and queued rows (not indexed yet), each checked by ``LIKE``.
    SQLite tests the cheap membership first and reads a row's text only for a candidate.

    Two plans, chosen by the caller from :func:`candidate_count`. Few candidates (at most
    :data:`CANDIDATES_SORTED`): each is looked up by id, checked and the hits sorted. Many
    (``walk``): the articles are walked newest first through the index on ``published``,
    each tested against the candidate set (materialised once) and checked only if in it,
    until a page of hits: a common word stops after a few hundred rows instead of reading
    and sorting tens of thousands. ``id + 0`` keeps SQLite from driving the plan by the
    set, which would read every candidate before the sort.
    """
    ids = Article.__table__.c.id
    key = ids + 0 if walk else ids
    indexed = key.in_(select(FTS.c.rowid).where(fts_candidates(query)))
    return and_(or_(indexed, key.in_(select(PENDING.c.id))), like_clause(query, "sqlite"))


def fts_match_expr(expression: str, name: str = "fts_query") -> TextClause:
    """``articles_fts MATCH :name`` with a ready FTS5 expression bound as a parameter."""
    return text(f"{FTS_TABLE} MATCH :{name}").bindparams(**{name: expression})


def short_match(conn: Connection, query: str, limit: int = 20) -> ColumnElement[bool] | None:
    """Indexed condition for a one- or two-character ``query`` on SQLite FTS5, or ``None``.

    Exact, not a candidate filter: a row contains ``ab`` iff its index holds a trigram
    starting with ``ab`` (the occurrence is followed by a character) or a column ends with
    ``ab``; it contains ``a`` iff it holds a trigram starting with ``a`` or one of a
    column's last two characters is ``a`` (a rare character is then found through the
    index instead of a walk of every body: on 200,000 articles an absent one took 10.5 s).
    ``None`` sends the query to the ``LIKE`` walk instead: for common words, which
    the walk finds within a few hundred rows (a row holding the most frequent trigram
    ``ab?`` proves at least that many matches), and for queries with non-ASCII cased
    letters, which the trigram tokenizer folds but ``LIKE`` does not.
    """
    if len(query) not in (1, 2) or not all(c.isascii() or c.lower() == c.upper() for c in query):
        return None
    folded = query.lower()
    terms = conn.execute(
        text(f"SELECT term, doc FROM {FTS_VOCAB} WHERE term >= :lo AND term <= :hi LIMIT :n"),
        {"lo": folded, "hi": folded + "\U0010ffff", "n": SHORT_MAX_TERMS + 1},
    ).all()
    if len(terms) > SHORT_MAX_TERMS:
        return None
    queued = conn.scalar(select(func.count()).select_from(PENDING)) or 0
    if terms or queued:
        sum_doc = sum(t.doc for t in terms)
        max_doc = max((t.doc for t in terms), default=1)  # matching rows: at least this many
        rows = conn.scalar(select(func.max(Article.__table__.c.id))) or 0
        # index cost ~ sum_doc + a LIKE test of each queued row;
        # walk cost ~ SHORT_ROW_COST * limit * rows / max_doc
        if (sum_doc + SHORT_ROW_COST * queued) * max_doc >= SHORT_ROW_COST * limit * rows:
            return None
    variants = sorted(
        {"".join(p) for p in itertools.product(*({c.lower(), c.upper()} for c in query))}
    )
    if len(query) == 2:
        tails = select(TAIL.c.id).where(
            TAIL.c.title_tail.in_(variants) | TAIL.c.content_tail.in_(variants)
        )
    else:  # the character starts a column's last two, or ends the column
        first = [
            (col >= v) & (col < v + "\U0010ffff")
            for col in (TAIL.c.title_tail, TAIL.c.content_tail)
            for v in variants
        ]
        # spelled as the expression indexes are, literals and all, for SQLite to use them
        last = [
            literal_column(f"substr({name}, 2, 1)").in_(variants)
            for name in ("title_tail", "content_tail")
        ]
        tails = select(TAIL.c.id).where(or_(*first, *last))
    clauses: list[ColumnElement[bool]] = [Article.__table__.c.id.in_(tails), queued_like(query)]
    if terms:
        expr = " OR ".join(fts_phrase(t.term) for t in terms)
        ids = select(FTS.c.rowid).where(fts_match_expr(expr, "short_terms"))
        clauses.insert(0, Article.__table__.c.id.in_(ids))
    return or_(*clauses)


def like_clause(
    query: str, dialect: str, *, columns: tuple[ColumnElement[str], ...] | None = None
) -> ColumnElement[bool]:
    """Title or content (or ``columns``) contains ``query``: ``LIKE`` on SQLite (ASCII
    case-insensitive already, and ``lower()`` would copy every row); on PostgreSQL
    ``ILIKE`` (what the trigram GIN indexes serve, as they serve ``LIKE``) for a query with
    cased letters, else ``LIKE``, the same answer at a third to half the cost a row tested
    (60 against 140 us, benchmarks/scale_plans.py)."""
    pattern = like_pattern(query)
    title, content = columns or (Article.__table__.c.title, Article.__table__.c.content)
    if dialect == "postgresql" and query.lower() != query.upper():
        return title.ilike(pattern, escape=LIKE_ESCAPE) | content.ilike(pattern, escape=LIKE_ESCAPE)
    return title.like(pattern, escape=LIKE_ESCAPE) | content.like(pattern, escape=LIKE_ESCAPE)


def make_snippet(
    content: str,
    query: str,
    width: int = SNIPPET_TOKENS,
    markers: tuple[str, str] = (SNIPPET_OPEN, SNIPPET_CLOSE),
    ellipsis: str = SNIPPET_ELLIPSIS,
) -> str:
    """``content`` around the first case-insensitive match of ``query``, the match marked.

    The Python twin of FTS5's ``snippet()`` for PostgreSQL and for short queries on SQLite:
    about ``width`` characters in all, the match roughly centred, line breaks flattened to
    spaces. Without a match in ``content`` (the query was in the title) it is the start of
    the text.
    """
    m = re.search(re.escape(query), content, re.IGNORECASE)
    if m is None:
        head = content[:width]
        return flat_text(head) + (ellipsis if len(content) > width else "")
    before = max(0, (width - len(m.group())) // 3)
    start = max(0, m.start() - before)
    end = min(len(content), max(m.end(), start + width))
    out = content[start : m.start()] + markers[0] + m.group() + markers[1] + content[m.end() : end]
    return (
        (ellipsis if start > 0 else "") + flat_text(out) + (ellipsis if end < len(content) else "")
    )


def flat_text(s: str) -> str:
    """Line breaks (and the spaces around them) as one space: a snippet is one line."""
    return re.sub(r"\s*\n\s*", " ", s)
