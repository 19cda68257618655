"""Read-only queries of the web view (``newsspider/web/``): a read-only engine, articles per
day, articles per month by origin, crawl runs and the health warnings of the last nightly
runs.

Search and single articles go through :class:`~newsspider.storage.Corpus` as everywhere;
this module adds what only the dashboard needs, each function one or two parameterised
statements returning plain values, so the web package never sees SQLAlchemy.

:func:`readonly_engine` is the web view's engine and the first of its safety measures: on
SQLite the file is opened with ``mode=ro`` (the SQLite library itself refuses every write)
plus ``PRAGMA query_only``; on PostgreSQL every transaction of the session is ``READ ONLY``
(``default_transaction_read_only``), so a write fails in the server whatever the SQL.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    Engine,
    Integer,
    String,
    column,
    create_engine,
    event,
    func,
    inspect,
    select,
    table,
)
from sqlalchemy.engine import make_url

from newsspider.errors import UserError
from newsspider.sites import SITES

from .corpus import LIVE, days_from_counts, fixed_offset, site_zone, utc_month
from .counts import COUNTS, NO_HOUR, has_counts, hour_key, month_counts, parse_hour
from .engine import CONNECT_TIMEOUT
from .models import Article, CrawlRun, NightlyRun

__all__ = [
    "CrawlRunRow",
    "NightlyWarnings",
    "ReadOnlyDatabaseError",
    "article_days",
    "article_months",
    "crawl_runs",
    "has_column",
    "nightly_warnings",
    "readonly_engine",
    "relevance",
    "reprint_pairs",
    "stories",
    "story_ids",
    "story_members",
    "texts",
]

logger = logging.getLogger(__name__)

ARTICLES = Article.__table__
#: Zone of the per-day figures of a site missing from the site table (as ``corpus.py``).
DEFAULT_TZ = "Asia/Shanghai"


class ReadOnlyDatabaseError(UserError):
    """The database cannot be opened for the web view (missing file, no corpus tables)."""


def readonly_engine(url: str, *, busy_timeout: float) -> Engine:
    """An engine on ``url`` that cannot write.

    SQLite: ``file:<path>?mode=ro`` as a URI, and ``PRAGMA query_only=ON`` on every
    connection; the journal mode is left as it is (WAL, set by the writers). A missing
    file is an error here rather than a new empty database. PostgreSQL:
    ``default_transaction_read_only=on`` for the session, so every transaction is
    ``READ ONLY``. Not cached: the web app makes one and keeps it.
    """
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database or ""
        if not database or database == ":memory:" or database.startswith("file:"):
            raise ReadOnlyDatabaseError(f"the web view needs a SQLite file, not {database!r}")
        path = Path(database).expanduser().resolve()
        if not path.is_file():
            raise ReadOnlyDatabaseError(f"no database at {path}")
        ro = parsed.set(database=f"file:{path}?mode=ro", query={"uri": "true"})
        engine = create_engine(ro, connect_args={"timeout": busy_timeout})

        @event.listens_for(engine, "connect")
        def _read_only(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute("PRAGMA query_only=ON")
                cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            finally:
                cursor.close()

    elif backend == "postgresql":
        engine = create_engine(
            parsed,
            pool_pre_ping=True,
            connect_args={
                "connect_timeout": CONNECT_TIMEOUT,
                "options": "-c default_transaction_read_only=on",
            },
        )
    else:
        raise ReadOnlyDatabaseError(f"the web view supports SQLite and PostgreSQL, not {backend}")
    if not inspect(engine).has_table("articles"):
        engine.dispose()
        raise ReadOnlyDatabaseError(
            "the database holds no corpus (no articles table): crawl or run scrapy demo first"
        )
    return engine


def has_column(engine: Engine, table: str, column: str) -> bool:
    """Does ``table`` have ``column`` (e.g. ``articles.story_id`` once stories exist)?"""
    insp = inspect(engine)
    if not insp.has_table(table):
        return False
    return any(c["name"] == column for c in insp.get_columns(table))


def texts(engine: Engine, ids: list[int]) -> dict[int, tuple[str | None, str]]:
    """``{id: (title, content)}`` of these articles (snippets and relevance of a page of
    hits: at most a few hundred ids, one statement)."""
    if not ids:
        return {}
    stmt = select(ARTICLES.c.id, ARTICLES.c.title, ARTICLES.c.content).where(
        ARTICLES.c.id.in_(ids)
    )
    with engine.connect() as conn:
        return {r.id: (r.title, r.content or "") for r in conn.execute(stmt)}


def _utc_hour(engine: Engine, col: Any) -> Any:
    if engine.dialect.name == "postgresql":
        return func.date_trunc("hour", func.timezone("UTC", col))
    return func.strftime("%Y-%m-%d %H", col)  # SQLite stores the UTC wall time


def relevance(engine: Engine, ids: list[int], query: str) -> dict[int, tuple[int, int]]:
    """``{id: (query in title, matches in content)}``, counted in the database (no body
    leaves it): ASCII letters case-insensitive, as search is."""
    if not ids:
        return {}
    q = query.lower()
    title = func.lower(func.coalesce(ARTICLES.c.title, ""))
    content = func.lower(ARTICLES.c.content)
    stmt = select(
        ARTICLES.c.id,
        func.instr(title, q) if engine.dialect.name == "sqlite" else func.strpos(title, q),
        (func.length(content) - func.length(func.replace(content, q, ""))) / len(q),
    ).where(ARTICLES.c.id.in_(ids))
    with engine.connect() as conn:
        return {r[0]: (int(r[1] > 0), int(r[2] or 0)) for r in conn.execute(stmt)}


def article_days(engine: Engine, since: datetime, until: datetime) -> dict[str, dict[date, int]]:
    """Articles per site and site-local publication day, published in ``[since, until)``.

    When every zone of the site table (and the default zone) has one and the same UTC
    offset over the window (all of today's sites: UTC+8, no DST) the database groups by
    site and local day directly, over the covering index ``(site, published)``: a few
    hundred groups for a year. Otherwise it groups by UTC hour and Python moves each hour
    to its site's zone (as ``Corpus.stats``), exact for any whole-hour offset.

    Where the count triggers exist (``counts.py``, revision 0009) the same grouping runs
    over the hours of ``article_counts`` in the window instead of the articles: a read
    that grows with the window, not with the corpus. ``since`` and ``until`` are then taken
    to the hour, which day bounds in whole-hour zones are.
    """
    with engine.connect() as conn:
        if has_counts(conn):
            return days_from_counts(conn, since, until)
    zones = {s.zone for s in SITES.values()} | {ZoneInfo(DEFAULT_TZ)}
    offsets = {fixed_offset(z, since, until) for z in zones}
    offset = offsets.pop() if len(offsets) == 1 else None
    col = ARTICLES.c.published
    if offset is not None:
        minutes = int(offset.total_seconds() // 60)
        if engine.dialect.name == "postgresql":
            bucket = func.date(func.timezone("UTC", col) + offset)
        else:  # SQLite: the stored text is UTC with its offset, which datetime() reads
            bucket = func.substr(func.datetime(col, f"{minutes:+d} minutes"), 1, 10)
    else:
        bucket = _utc_hour(engine, col)
    stmt = (
        select(ARTICLES.c.site, bucket, func.count())
        .where(col >= since.astimezone(UTC))
        .where(col < until.astimezone(UTC))
        .group_by(ARTICLES.c.site, bucket)
    )
    out: dict[str, dict[date, int]] = {}
    with engine.connect() as conn:
        for site, value, n in conn.execute(stmt):
            if offset is not None:
                day = value if isinstance(value, date) else date.fromisoformat(value)
            else:
                if isinstance(value, str):
                    value = datetime.strptime(value, "%Y-%m-%d %H")
                day = value.replace(tzinfo=UTC).astimezone(site_zone(site)).date()
            days = out.setdefault(site, {})
            days[day] = days.get(day, 0) + n
    return {site: dict(sorted(days.items())) for site, days in sorted(out.items())}


#: ``articles`` as :func:`article_months` names it: ``archive`` comes with revision 0007,
#: and the web view reads databases of any revision without migrating them.
ORIGIN = table(
    "articles",
    column("archive", String),
    column("published", ARTICLES.c.published.type),
)


def article_months(engine: Engine, *, origins: bool = True) -> dict[str, dict[str, int]]:
    """Articles per origin and UTC publication month (``YYYY-MM``), every site together:
    ``{origin: {month: articles}}``, origins ``live`` (``archive`` NULL) first, then each
    archive by name; months oldest first; articles without a time left out.

    One ``GROUP BY`` over the whole table, answered from the index ``(site, archive,
    published)`` alone on SQLite (a scan of the index, never of the rows with their
    bodies). ``origins=False`` (a database from before revision 0007, without
    ``articles.archive``): every article counts as live. With the count triggers
    (revision 0009) ``article_counts`` is read instead.
    """
    out: dict[str, dict[str, int]] = {}
    with engine.connect() as conn:
        if has_counts(conn):
            for month_name, archive_name, n in conn.execute(month_counts()):
                months = out.setdefault((archive_name if origins else None) or LIVE, {})
                months[month_name] = months.get(month_name, 0) + n
            return _by_origin(out)
    month = utc_month(engine.dialect.name, ORIGIN.c.published)
    archive = ORIGIN.c.archive if origins else None
    keys = [month] if archive is None else [archive, month]
    stmt = (
        select(*keys, func.count())
        .select_from(ORIGIN)
        .where(ORIGIN.c.published.is_not(None))
        .group_by(*keys)
    )
    with engine.connect() as conn:
        for row in conn.execute(stmt):
            origin, bucket, n = (LIVE, *row) if archive is None else row
            if bucket is None:  # a value that is not a time
                continue
            months = out.setdefault(origin or LIVE, {})
            months[bucket] = months.get(bucket, 0) + n
    return _by_origin(out)


def _by_origin(out: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {
        origin: dict(sorted(months.items()))
        for origin, months in sorted(out.items(), key=lambda kv: (kv[0] != LIVE, kv[0]))
    }


def newest_published(engine: Engine, now: datetime) -> datetime | None:
    """The newest publication time at or before ``now`` (times in the future are wrong
    dates, not news), to the hour; None for a corpus without timed articles. Read from
    ``article_counts`` (one index seek) where its triggers exist, else from the index on
    ``published``."""
    with engine.connect() as conn:
        if has_counts(conn):
            hour = conn.scalar(
                select(func.max(COUNTS.c.hour)).where(
                    COUNTS.c.hour != NO_HOUR, COUNTS.c.hour <= hour_key(now)
                )
            )
            return parse_hour(hour) if hour else None
        value = conn.scalar(
            select(func.max(ARTICLES.c.published)).where(ARTICLES.c.published <= now)
        )
    if isinstance(value, str):  # SQLite's text, read without the column's type
        value = datetime.fromisoformat(value)
    return value.astimezone(UTC) if value is not None else None


@dataclass(frozen=True, slots=True)
class CrawlRunRow:
    """One ``crawl_runs`` row as the dashboard shows it (reasons decoded from JSON)."""

    id: int
    site: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    pages_fetched: int
    items_new: int
    items_updated: int
    items_dropped: int
    drop_reasons: dict[str, int]
    fetch_failures: int
    fetch_failure_reasons: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "site": self.site,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "status": self.status,
            "pages_fetched": self.pages_fetched,
            "items_new": self.items_new,
            "items_updated": self.items_updated,
            "items_dropped": self.items_dropped,
            "drop_reasons": self.drop_reasons,
            "fetch_failures": self.fetch_failures,
            "fetch_failure_reasons": self.fetch_failure_reasons,
        }


def _reasons(text: str | None) -> dict[str, int]:
    if not text:
        return {}
    try:
        return {str(k): int(v) for k, v in json.loads(text).items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def crawl_runs(engine: Engine, since: datetime) -> list[CrawlRunRow]:
    """The crawls that started at or after ``since``, oldest first."""
    c = CrawlRun.__table__.c
    stmt = (
        select(
            c.id, c.site, c.started_at, c.finished_at, c.status, c.pages_fetched, c.items_new,
            c.items_updated, c.items_dropped, c.drop_reasons, c.fetch_failures,
            c.fetch_failure_reasons,
        )
        .where(c.started_at >= since.astimezone(UTC))
        .order_by(c.started_at, c.id)
    )  # fmt: skip
    with engine.connect() as conn:
        return [
            CrawlRunRow(
                id=r.id,
                site=r.site,
                started_at=r.started_at,
                finished_at=r.finished_at,
                status=r.status,
                pages_fetched=r.pages_fetched or 0,
                items_new=r.items_new or 0,
                items_updated=r.items_updated or 0,
                items_dropped=r.items_dropped or 0,
                drop_reasons=_reasons(r.drop_reasons),
                fetch_failures=r.fetch_failures or 0,
                fetch_failure_reasons=_reasons(r.fetch_failure_reasons),
            )
            for r in conn.execute(stmt)
        ]


@dataclass(frozen=True, slots=True)
class NightlyWarnings:
    """One nightly run and the ``WARNING`` lines of its stored report."""

    id: int
    started_at: datetime
    finished_at: datetime | None
    status: str
    exit_code: int | None
    sites: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "status": self.status,
            "exit_code": self.exit_code,
            "sites": self.sites,
            "warnings": self.warnings,
        }


def nightly_warnings(engine: Engine, runs: int) -> list[NightlyWarnings]:
    """The last ``runs`` nightly runs, newest first, each with its report's WARNING lines."""
    c = NightlyRun.__table__.c
    stmt = (
        select(c.id, c.started_at, c.finished_at, c.status, c.exit_code, c.sites, c.report)
        .order_by(c.id.desc())
        .limit(runs)
    )
    with engine.connect() as conn:
        return [
            NightlyWarnings(
                id=r.id,
                started_at=r.started_at,
                finished_at=r.finished_at,
                status=r.status,
                exit_code=r.exit_code,
                sites=[s for s in (r.sites or "").split(",") if s],
                warnings=[
                    line.strip()[len("WARNING ") :]
                    for line in (r.report or "").splitlines()
                    if line.strip().startswith("WARNING ")
                ],
            )
            for r in conn.execute(stmt)
        ]


# -- stories (reprints) ---------------------------------------------------------------------
#
# ``articles.story_id`` comes with reprint detection (revision 0004): the web view shows
# stories only when the column is there (:func:`has_column`), and names it through a
# lightweight table so these queries do not depend on the model declaring it.

STORY = table(
    "articles",
    column("id", Integer),
    column("story_id", Integer),
    column("site", String),
    column("title", String),
    column("url", String),
    column("published", ARTICLES.c.published.type),
)


def story_ids(engine: Engine, ids: list[int]) -> dict[int, int | None]:
    """``{id: story_id}`` of these articles."""
    if not ids:
        return {}
    stmt = select(STORY.c.id, STORY.c.story_id).where(STORY.c.id.in_(ids))
    with engine.connect() as conn:
        return {r.id: r.story_id for r in conn.execute(stmt)}


@dataclass(frozen=True, slots=True)
class StoryArticle:
    id: int
    site: str
    title: str | None
    url: str
    published: datetime | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "site": self.site,
            "title": self.title,
            "url": self.url,
            "published": self.published.isoformat() if self.published else None,
        }


def story_members(engine: Engine, story_id: int, limit: int) -> list[StoryArticle]:
    """The articles of one story, earliest first (through the index on ``story_id``)."""
    stmt = (
        select(STORY.c.id, STORY.c.site, STORY.c.title, STORY.c.url, STORY.c.published)
        .where(STORY.c.story_id == story_id)
        .order_by(STORY.c.published.asc().nulls_last(), STORY.c.id)
        .limit(limit)
    )
    with engine.connect() as conn:
        return [StoryArticle(*r) for r in conn.execute(stmt)]


def stories(engine: Engine, limit: int) -> list[dict[str, Any]]:
    """The largest stories: ``story_id``, articles, sites, and the story's first article."""
    c = STORY.c
    grouped = (
        select(c.story_id, func.count().label("articles"), func.count(c.site.distinct()).label("sites"))
        .where(c.story_id.is_not(None))
        .group_by(c.story_id)
        .having(func.count() > 1)
        .order_by(func.count().desc(), c.story_id)
        .limit(limit)
        .subquery()
    )
    first = STORY.alias("first")
    stmt = select(
        grouped.c.story_id, grouped.c.articles, grouped.c.sites, first.c.site, first.c.title,
        first.c.published,
    ).join(first, first.c.id == grouped.c.story_id, isouter=True).order_by(
        grouped.c.articles.desc(), grouped.c.story_id
    )  # fmt: skip
    with engine.connect() as conn:
        return [
            {
                "story_id": r[0], "articles": r[1], "sites": r[2], "first_site": r[3],
                "first_title": r[4], "first_published": r[5].isoformat() if r[5] else None,
            }
            for r in conn.execute(stmt)
        ]  # fmt: skip


def reprint_pairs(engine: Engine, limit: int) -> list[dict[str, Any]]:
    """Source -> reprinting site: articles of a story on ``site`` whose story began (its
    first indexed article, ``id == story_id``) on ``source``; most frequent first."""
    a, s = STORY.alias("a"), STORY.alias("s")
    n = func.count()
    stmt = (
        select(s.c.site, a.c.site, n)
        .join(s, s.c.id == a.c.story_id)
        .where(a.c.id != a.c.story_id)
        .group_by(s.c.site, a.c.site)
        .order_by(n.desc(), s.c.site, a.c.site)
        .limit(limit)
    )
    with engine.connect() as conn:
        return [{"source": r[0], "site": r[1], "articles": r[2]} for r in conn.execute(stmt)]
