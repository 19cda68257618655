"""Articles per site, UTC hour and origin, kept on write (``article_counts``).

The dashboard's per-day chart, its per-month chart by origin and ``scrapy corpus stats``
used to group every article row; at a million articles a year's dashboard took 409 ms and
it grows with the corpus. Triggers on ``articles`` keep ``article_counts`` instead: one
small upsert per inserted, deleted or re-dated article, in the writer's own transaction,
so the counts are exact at every commit whoever writes (a crawl, ``reextract``, a backfill,
a hand edit). Readers then read at most one row per site, origin and hour.

The triggers live here, not in an Alembic revision, like the search triggers of ``fts.py``:
:func:`setup_counts` (called by ``create_schema``) creates them when missing, and in that
same transaction fills the table from ``articles`` (a fresh database, one migrated to
revision 0009, one copied by ``scrapy corpus migrate``), so counts and triggers arrive
together and the counts start exact.

SQLite groups by ``strftime('%Y-%m-%d %H', published)``: the stored text is UTC with its
offset (``models.SQLITE_STORAGE_FORMAT``). PostgreSQL by ``to_char(published AT TIME ZONE
'UTC', 'YYYY-MM-DD HH24')``. Both give the same ``hour`` text.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, Select, bindparam, func, select, text

from .models import ArticleCount

logger = logging.getLogger(__name__)

COUNTS = ArticleCount.__table__
#: ``hour`` of an article without a publication time, and ``archive`` of a live one.
NO_HOUR = ""
LIVE_ARCHIVE = ""
HOUR_FORMAT = "%Y-%m-%d %H"

_SQLITE_HOUR = "coalesce(strftime('%Y-%m-%d %H', {row}.published), '')"
_SQLITE_ADD = (
    "INSERT INTO article_counts (hour, site, archive, n) VALUES ("
    + _SQLITE_HOUR.format(row="new")
    + ", new.site, coalesce(new.archive, ''), 1) "
    "ON CONFLICT (hour, site, archive) DO UPDATE SET n = n + 1;"
)
_SQLITE_TAKE = (
    "UPDATE article_counts SET n = n - 1 WHERE hour = "
    + _SQLITE_HOUR.format(row="old")
    + " AND site = old.site AND archive = coalesce(old.archive, '');"
    " DELETE FROM article_counts WHERE n <= 0 AND hour = "
    + _SQLITE_HOUR.format(row="old")
    + " AND site = old.site AND archive = coalesce(old.archive, '');"
)
SQLITE_TRIGGERS = {
    "article_counts_ai": f"""
        CREATE TRIGGER IF NOT EXISTS article_counts_ai AFTER INSERT ON articles BEGIN
            {_SQLITE_ADD}
        END""",
    "article_counts_ad": f"""
        CREATE TRIGGER IF NOT EXISTS article_counts_ad AFTER DELETE ON articles BEGIN
            {_SQLITE_TAKE}
        END""",
    "article_counts_au": f"""
        CREATE TRIGGER IF NOT EXISTS article_counts_au AFTER UPDATE OF site, archive, published
        ON articles
        WHEN old.site IS NOT new.site OR old.archive IS NOT new.archive
             OR old.published IS NOT new.published
        BEGIN
            {_SQLITE_TAKE}
            {_SQLITE_ADD}
        END""",
}
SQLITE_FILL = (
    "INSERT INTO article_counts (hour, site, archive, n) SELECT "
    + _SQLITE_HOUR.format(row="articles")
    + " AS h, site, coalesce(archive, '') AS a, count(*) FROM articles GROUP BY h, site, a"
)

_PG_HOUR = "coalesce(to_char({row}.published AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'), '')"
PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION article_counts_keep() RETURNS trigger AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE article_counts SET n = n - 1
         WHERE hour = {_PG_HOUR.format(row="OLD")} AND site = OLD.site
           AND archive = coalesce(OLD.archive, '');
        DELETE FROM article_counts
         WHERE n <= 0 AND hour = {_PG_HOUR.format(row="OLD")} AND site = OLD.site
           AND archive = coalesce(OLD.archive, '');
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO article_counts (hour, site, archive, n)
        VALUES ({_PG_HOUR.format(row="NEW")}, NEW.site, coalesce(NEW.archive, ''), 1)
        ON CONFLICT (hour, site, archive) DO UPDATE SET n = article_counts.n + 1;
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
PG_TRIGGERS = {
    "article_counts_insdel": "CREATE TRIGGER article_counts_insdel AFTER INSERT OR DELETE "
    "ON articles FOR EACH ROW EXECUTE FUNCTION article_counts_keep()",
    "article_counts_upd": "CREATE TRIGGER article_counts_upd AFTER UPDATE OF site, archive, "
    "published ON articles FOR EACH ROW WHEN (OLD.site IS DISTINCT FROM NEW.site OR "
    "OLD.archive IS DISTINCT FROM NEW.archive OR OLD.published IS DISTINCT FROM "
    "NEW.published) EXECUTE FUNCTION article_counts_keep()",
}
PG_FILL = (
    "INSERT INTO article_counts (hour, site, archive, n) SELECT "
    + _PG_HOUR.format(row="articles")
    + " AS h, site, coalesce(archive, '') AS a, count(*) FROM articles GROUP BY 1, 2, 3"
)


def setup_counts(engine: Engine) -> bool:
    """Create the count triggers if missing, filling ``article_counts`` from ``articles``
    in the same transaction; True when it did. Cheap when they exist (one catalogue
    query), so ``create_schema`` calls it every time. Other backends: nothing (readers
    fall back to grouping the articles)."""
    if engine.dialect.name == "sqlite":
        return _setup(engine, "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                      "AND name IN :names", SQLITE_TRIGGERS, [], SQLITE_FILL)  # fmt: skip
    if engine.dialect.name == "postgresql":
        return _setup(engine, "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal "
                      "AND tgname IN :names", PG_TRIGGERS, [PG_FUNCTION], PG_FILL)  # fmt: skip
    return False


def _setup(
    engine: Engine, present_sql: str, triggers: dict[str, str], before: list[str], fill: str
) -> bool:
    stmt = text(present_sql).bindparams(bindparam("names", list(triggers), expanding=True))
    with engine.connect() as conn:
        if set(conn.scalars(stmt)) >= set(triggers):
            return False
        conn.rollback()
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.begin()
            conn.exec_driver_sql("LOCK TABLE articles IN SHARE ROW EXCLUSIVE MODE")
        try:
            present = set(conn.scalars(stmt))
            if present >= set(triggers):
                conn.rollback()
                return False
            for ddl in before:
                conn.exec_driver_sql(ddl)
            for name in present:
                conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}" + (
                    " ON articles" if conn.dialect.name == "postgresql" else ""))  # fmt: skip
            for ddl in triggers.values():
                conn.exec_driver_sql(ddl)
            conn.execute(COUNTS.delete())
            conn.exec_driver_sql(fill)
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
    logger.info("article counts: triggers created, counts filled from the stored articles")
    return True


def has_counts(conn: Connection) -> bool:
    """The count triggers exist: ``article_counts`` is exact (a database the web view
    reads without migrating may be older)."""
    if conn.dialect.name == "sqlite":
        sql = "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN :names"
        names = list(SQLITE_TRIGGERS)
    elif conn.dialect.name == "postgresql":
        sql = "SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal AND tgname IN :names"
        names = list(PG_TRIGGERS)
    else:
        return False
    stmt = text(sql).bindparams(bindparam("names", names, expanding=True))
    return conn.scalar(stmt) == len(names)


def hour_key(t: datetime) -> str:
    """``t``'s UTC hour as ``article_counts.hour`` writes it."""
    return t.astimezone(UTC).strftime(HOUR_FORMAT)


def parse_hour(hour: str) -> datetime | None:
    """An ``hour`` back as an aware UTC time; None for :data:`NO_HOUR`."""
    return datetime.strptime(hour, HOUR_FORMAT).replace(tzinfo=UTC) if hour else None


def month_counts(*, by_site: bool = False) -> Select[tuple[str, str, int]]:
    """``(month, archive, n)`` summed in the database over every timed row (``YYYY-MM``,
    UTC); with ``by_site``, ``(site, month, archive, n)`` over every row, month ``''`` for
    articles without a time."""
    month = func.substr(COUNTS.c.hour, 1, 7).label("month")
    if by_site:
        keys = [COUNTS.c.site, month, COUNTS.c.archive]
        return select(*keys, func.sum(COUNTS.c.n)).group_by(*keys)
    keys = [month, COUNTS.c.archive]
    return select(*keys, func.sum(COUNTS.c.n)).where(COUNTS.c.hour != NO_HOUR).group_by(*keys)
