"""Querying the corpus from Python: search, look-up, streaming export and statistics.

``Corpus(engine_or_url)`` is the one entry point; ``scrapy corpus`` is a thin shell around
it. Search is full-text and works for Chinese on both backends (``storage/fts.py``):
SQLite FTS5 with the trigram tokenizer, PostgreSQL pg_trgm, the same answers either way.

Time filters take aware datetimes and compare instants (stored in UTC): ``since`` is
inclusive, ``until`` exclusive. Results are newest first (``published`` descending, rows
without a time last, then id descending so ties have one order). Search also filters by
what a page states about itself (revision 0008): an author's name, the stated origin, the
section and the language, exact values, and by the page's kind (``kind``: ``article``,
``gallery``, ``video``, ``live``; a row stored before kinds existed, NULL, is an article).

Exports write every column: JSON lines and CSV as text, Parquet (pyarrow, imported only
when a Parquet file is written or read: it is large) with typed columns, written a row
group at a time as the rows stream. docs/fields.md is the field table of all three.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from os import PathLike
from typing import IO, Any, Literal
from zoneinfo import ZoneInfo

from sqlalchemy import (
    ColumnElement,
    Connection,
    DateTime,
    Engine,
    Integer,
    Select,
    cast,
    func,
    inspect,
    literal,
    or_,
    select,
)
from sqlalchemy.orm import Session, defer
from sqlalchemy.orm.attributes import set_committed_value

import newsspider.storage.fts as fts
from newsspider.errors import UserError
from newsspider.extraction.kinds import STORED
from newsspider.sites import SITES

from .counts import COUNTS, NO_HOUR, has_counts, hour_key, month_counts, parse_hour
from .engine import engine_for
from .models import AUTHOR_SEPARATOR, Article, LineCount, SiteLineStats, SiteReclean, UTCDateTime
from .schema import create_schema, head_revision

ExportFormat = Literal["jsonl", "csv", "parquet"]
EXPORT_FORMATS: tuple[str, ...] = ("jsonl", "csv", "parquet")
#: A Parquet row group is written once it holds this many rows or this many characters of
#: text, whichever comes first, so memory stays flat at any corpus size (the text is held
#: twice while a group is built: as Python strings, then as Arrow's UTF-8).
PARQUET_GROUP_ROWS = 10_000
PARQUET_GROUP_CHARS = 4_000_000
#: Parquet's compression: zstd keeps Chinese text at about a third of its UTF-8 size.
PARQUET_COMPRESSION = "zstd"
#: Columns of few distinct values, dictionary-encoded in Parquet; the others (bodies,
#: titles, URLs) are not, which saves the writer a hash table of every value.
PARQUET_DICTIONARY = (
    "site",
    "source",
    "encoding",
    "published_source",
    "published_precision",
    "archive",
    "authors_source",
    "origin",
    "origin_source",
    "section",
    "section_source",
    "language",
    "script",
)
#: Origins and sections listed per site by :meth:`Corpus.stats` (most articles first).
TOP_RECORD = 5
#: PostgreSQL search reads the newest this many rows of the filters first
#: (:meth:`Corpus._recent_first`); it took 转载请注明出处 from 1,511 to 32 ms on 410,000
#: articles and costs a rare word 120-180 ms more (benchmarks/scale_plans.py).
PG_RECENT_WINDOW = 2000
ARTICLES = Article.__table__
#: Every stored column, in table order: what ``export`` writes and ``read_export`` reads.
EXPORT_COLUMNS: tuple[str, ...] = tuple(ARTICLES.c.keys())
#: Rows fetched per round trip while exporting (a server-side cursor on PostgreSQL).
EXPORT_BATCH = 1000
#: Zone of the per-day statistics for a site missing from the site table.
DEFAULT_TZ = "Asia/Shanghai"
#: The origin of an article fetched live (``articles.archive`` NULL) in the per-month
#: figures; an archived article's origin is its archive's name (``cc:CC-MAIN-2024-10``...).
LIVE = "live"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: the article's id, URL, site, time and title, and a snippet of
    its content around the first match (the match between ``[`` and ``]``)."""

    id: int
    url: str
    site: str
    published: datetime | None
    title: str | None
    snippet: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": self.url,
            "site": self.site,
            "published": _iso(self.published),
            "title": self.title,
            "snippet": self.snippet,
        }


@dataclass(slots=True)
class SiteStats:
    """One site in :class:`CorpusStats`: its articles, newest article and line table.

    ``line_counts`` is the number of rows the site holds in ``line_counts`` (the table's
    size), ``RC`` its page count, ``last_reclean_RC`` the ``RC`` of its last re-clean
    (``None``: never).
    """

    site: str
    articles: int = 0
    newest_id: int | None = None
    newest_title: str | None = None
    newest_published: datetime | None = None
    line_counts: int = 0
    RC: int = 0
    last_reclean_RC: int | None = None
    #: The :data:`TOP_RECORD` stated origins and sections with the most articles, as
    #: ``(name, articles)``, most first (articles stating none are not counted).
    top_origins: list[tuple[str, int]] = field(default_factory=list)
    top_sections: list[tuple[str, int]] = field(default_factory=list)
    #: Stored articles per kind (``article``, ``gallery``, ``video``, ``live``; NULL counted
    #: as ``article``), in :data:`~newsspider.extraction.kinds.STORED` order.
    kinds: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "site": self.site,
            "articles": self.articles,
            "kinds": dict(self.kinds),
            "newest": None
            if self.newest_id is None
            else {
                "id": self.newest_id,
                "title": self.newest_title,
                "published": _iso(self.newest_published),
            },
            "line_counts": self.line_counts,
            "RC": self.RC,
            "last_reclean_RC": self.last_reclean_RC,
            "top_origins": [{"origin": o, "articles": n} for o, n in self.top_origins],
            "top_sections": [{"section": o, "articles": n} for o, n in self.top_sections],
        }


@dataclass(slots=True)
class CorpusStats:
    """Corpus figures: totals per site, articles per site and day, and per site, month and
    origin.

    ``per_day[site][day]`` counts articles by their **site-local** publication date (the
    site's ``tz`` from the site table, Asia/Shanghai for a site not in it): a Beijing
    article of 07:00 belongs to that day, not to the previous UTC day. ``day`` is ``None``
    for articles without a time.

    ``per_month[site][month][origin]`` counts articles by their **UTC** publication month
    (``"2019-03"``; ``None`` without a time) and where their bytes came from: :data:`LIVE`,
    or the archive's name (``articles.archive``). Months run oldest first, ``None`` last;
    origins ``live`` first, then archives by name.
    """

    total: int
    sites: dict[str, SiteStats] = field(default_factory=dict)
    per_day: dict[str, dict[date | None, int]] = field(default_factory=dict)
    per_month: dict[str, dict[str | None, dict[str, int]]] = field(default_factory=dict)

    def only(self, site: str) -> CorpusStats:
        """The figures of one site (``scrapy corpus stats --site``)."""
        sites = {k: v for k, v in self.sites.items() if k == site}
        return CorpusStats(
            total=sum(s.articles for s in sites.values()),
            sites=sites,
            per_day={k: v for k, v in self.per_day.items() if k == site},
            per_month={k: v for k, v in self.per_month.items() if k == site},
        )

    def origins(self, site: str | None = None) -> list[str]:
        """The origins of ``per_month`` (of one site, when given): ``live`` first."""
        found = {
            origin
            for key, months in self.per_month.items()
            if site is None or key == site
            for origins in months.values()
            for origin in origins
        }
        return sorted(found, key=lambda o: (o != LIVE, o))

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "sites": {k: v.as_dict() for k, v in self.sites.items()},
            "per_day": {
                site: {(d.isoformat() if d else None): n for d, n in days.items()}
                for site, days in self.per_day.items()
            },
            "per_month_by_origin": {
                site: {month: dict(origins) for month, origins in months.items()}
                for site, months in self.per_month.items()
            },
        }


class Corpus:
    """Search, read, export and count the stored articles of one database.

    ``engine_or_url`` is an ``Engine`` or a SQLAlchemy URL (the process's cached engine is
    used). ``setup=True`` runs the idempotent ``create_schema`` first, which also builds
    the search index of a corpus crawled before search existed; pass ``False`` for a
    read-only account. Without setup the database may be at an older revision:
    :meth:`get` then reads the article columns added since (``archive``, ...) as ``None``.
    """

    def __init__(self, engine_or_url: Engine | str, *, setup: bool = True) -> None:
        self.engine = engine_for(engine_or_url) if isinstance(engine_or_url, str) else engine_or_url
        if setup:
            create_schema(self.engine)
            self._absent: tuple[str, ...] = ()
        else:
            self._absent = _absent_columns(self.engine)
        self.dialect = self.engine.dialect.name
        self.backend: fts.SearchBackend = fts.search_backend(self.engine)

    # -- search -----------------------------------------------------------------------

    def search(
        self,
        query: str | None,
        *,
        site: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 20,
        author: str | None = None,
        origin: str | None = None,
        section: str | None = None,
        language: str | None = None,
        kind: str | Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """Articles whose title or content contains ``query``, newest first.

        A substring match, case-insensitive for ASCII letters, with no query syntax: ``"``,
        ``%``, ``_``, ``*`` and ``'`` are ordinary characters. On SQLite, queries of 3+
        characters use the FTS5 trigram index, rare two-character words the index's
        trigram list plus column-tail indexes, and the rest a ``LIKE`` walk in time order
        (``storage/fts.py``); on PostgreSQL ``ILIKE`` served by pg_trgm's GIN indexes.

        ``author`` keeps articles with that exact name among their authors; ``origin``,
        ``section`` and ``language`` (ISO 639-1, any case) those with that exact value;
        ``kind`` those of that kind or kinds (:func:`parse_kinds`).
        With one of them the query may be empty or None: the newest matching articles,
        each with the start of its body as the snippet.
        """
        filters = _record_filters(
            self.dialect, author=author, origin=origin, section=section, language=language
        )
        if (by_kind := kind_filter(kind)) is not None:
            filters.append(by_kind)
        # No query: the filters alone (a query of nothing but spaces is still refused).
        q = fts.normalize_query(query or "") if query or not filters else ""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        use_fts = bool(q) and self.backend == "fts5" and len(q) >= fts.MIN_FTS_CHARS
        with self.engine.connect() as conn:
            if not q:
                match = None
            elif use_fts:
                # queued rows too (fts.py's invariant); many candidates: walk newest first
                walk = fts.candidate_count(conn, q, fts.CANDIDATES_SORTED) > fts.CANDIDATES_SORTED
                match = fts.fts_or_queued(q, walk=walk)
            else:
                short = fts.short_match(conn, q, limit) if self.backend == "fts5" else None
                match = short if short is not None else fts.like_clause(q, self.dialect)
            stmt = _filtered(
                select(
                    ARTICLES.c.id,
                    ARTICLES.c.url,
                    ARTICLES.c.site,
                    ARTICLES.c.published,
                    ARTICLES.c.title,
                ).where(*filters, *([match] if match is not None else [])),
                site,
                since,
                until,
            )
            stmt = stmt.order_by(ARTICLES.c.published.desc().nulls_last(), ARTICLES.c.id.desc())
            rows = None
            if self.dialect == "postgresql" and q:
                rows = self._recent_first(conn, q, filters, site, since, until, limit)
            if rows is None:
                rows = conn.execute(stmt.limit(limit)).all()
            if not rows:
                return []
            ids_found = [r.id for r in rows]
            # Snippets only for the hits kept, in Python: the index keeps no positions for
            # FTS5's snippet() to use (fts.CREATE_FTS).
            snippets = {
                r.id: fts.make_snippet(r.content, q) if q else _head(r.content)
                for r in conn.execute(
                    select(ARTICLES.c.id, ARTICLES.c.content).where(ARTICLES.c.id.in_(ids_found))
                )
            }
        return [
            SearchHit(r.id, r.url, r.site, r.published, r.title, snippets.get(r.id, ""))
            for r in rows
        ]

    @staticmethod
    def _recent_first(
        conn: Connection,
        q: str,
        filters: list[Any],
        site: str | None,
        since: datetime | None,
        until: datetime | None,
        limit: int,
    ) -> list[Any] | None:
        """PostgreSQL: the hits among the newest :data:`PG_RECENT_WINDOW` rows of the
        filters, or None when they hold fewer than ``limit`` (then the whole statement runs).

        PostgreSQL cannot estimate how many rows hold a common phrase (ANALYZE skips values
        over 1 KB: every body), so it read 10,526 rows of 转载请注明出处 through the trigram
        index, checked and sorted them: 1,511 ms on 410,000 articles, where this walk of
        the time index took 32 ms (benchmarks/scale_plans.py). The newest rows already in
        order, the hits are exact whenever ``limit`` of them are among them.
        """
        order = (ARTICLES.c.published.desc().nulls_last(), ARTICLES.c.id.desc())
        recent = (
            _filtered(select(ARTICLES).where(*filters), site, since, until)
            .order_by(*order)
            .limit(PG_RECENT_WINDOW)
            .subquery()
        )
        hits = (
            select(recent.c.id, recent.c.url, recent.c.site, recent.c.published, recent.c.title)
            .where(fts.like_clause(q, "postgresql", columns=(recent.c.title, recent.c.content)))
            .order_by(recent.c.published.desc().nulls_last(), recent.c.id.desc())
            .limit(limit)
        )
        rows = conn.execute(hits).all()
        return rows if len(rows) == limit else None

    # -- one article ------------------------------------------------------------------

    def get(self, id_or_url: int | str) -> Article | None:
        """The article with this id (an ``int`` or a string of digits) or URL, or ``None``.

        The object is detached from its session with every column loaded (a column the
        database lacks, see the class, as ``None``).
        """
        options = [defer(getattr(Article, name)) for name in self._absent]
        with Session(self.engine, expire_on_commit=False) as session:
            if isinstance(id_or_url, int) or (
                isinstance(id_or_url, str) and id_or_url.strip().isdigit()
            ):
                article = session.get(Article, int(id_or_url), options=options)
            else:
                article = session.scalar(
                    select(Article).options(*options).where(Article.url == id_or_url.strip())
                )
            if article is not None:
                for name in self._absent:
                    set_committed_value(article, name, None)
            return article

    # -- export -----------------------------------------------------------------------

    def export(
        self,
        fh: IO[Any] | str | PathLike[str],
        format: ExportFormat = "jsonl",
        *,
        site: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        batch: int = EXPORT_BATCH,
        progress: Callable[[int], None] | None = None,
        kind: str | Iterable[str] | None = None,
    ) -> int:
        """Write every stored column of the matching articles to ``fh``; return the count.

        Streams in constant memory: rows come ``batch`` at a time (a server-side cursor on
        PostgreSQL) and are written one by one, in id order. Times are ISO 8601 with their
        offset (UTC, ``+00:00``). ``jsonl``: one JSON object per line, ``null`` for NULL.
        ``csv``: a header line, then every value double-quoted and NULL as an empty
        *unquoted* field (PostgreSQL ``COPY ... CSV`` reads it back as NULL, Python 3.12's
        ``csv.QUOTE_NOTNULL`` too); :func:`read_export` reads either format back exactly.
        Open ``fh`` with ``newline=""`` for CSV. ``parquet``: ``fh`` is a binary file or a
        path; typed columns (:func:`parquet_schema`: integers, times as UTC timestamps,
        the rest strings), zstd, a row group written every :data:`PARQUET_GROUP_ROWS` rows
        or :data:`PARQUET_GROUP_CHARS` characters of text. ``progress(1)`` is called after
        each article written (a command's bar, whose total :meth:`count` gives). ``kind``:
        only the articles of that kind or kinds (:func:`parse_kinds`).
        """
        if format not in EXPORT_FORMATS:
            raise ValueError(f"unknown export format {format!r}: use jsonl, csv or parquet")
        stmt = _filtered(select(ARTICLES), site, since, until, kind).order_by(ARTICLES.c.id)
        if format == "parquet":
            return self._export_parquet(fh, stmt, batch, progress)
        assert not isinstance(fh, str | PathLike)
        n = 0
        if format == "csv":
            fh.write(",".join(EXPORT_COLUMNS) + "\r\n")
        with self._streaming() as conn:
            result = conn.execution_options(yield_per=batch).execute(stmt)
            for row in result:
                values = row._mapping
                if format == "jsonl":
                    record = {k: _jsonable(values[k]) for k in EXPORT_COLUMNS}
                    fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                else:
                    fh.write(",".join(_csv_field(values[k]) for k in EXPORT_COLUMNS) + "\r\n")
                n += 1
                if progress is not None:
                    progress(1)
        return n

    @contextmanager
    def _streaming(self) -> Iterator[Connection]:
        """A connection for reading the whole table once, in order: on SQLite without its
        memory map (``NEWS_DB_SQLITE_MMAP``) while it reads, restored afterwards. A mapped
        page the scan touched stays in the process's memory, so an export's RSS would grow
        to the size of the database (up to the map's size); ``read()`` calls go through the
        page cache alike and keep it flat (``benchmarks/export_parquet.py``)."""
        with self.engine.connect() as conn:
            if self.dialect != "sqlite":
                yield conn
                return
            mapped = conn.exec_driver_sql("PRAGMA mmap_size").scalar()
            conn.exec_driver_sql("PRAGMA mmap_size=0")
            try:
                yield conn
            finally:
                conn.rollback()
                conn.exec_driver_sql(f"PRAGMA mmap_size={int(mapped or 0)}")

    def _export_parquet(
        self,
        target: IO[Any] | str | PathLike[str],
        stmt: Select[Any],
        batch: int,
        progress: Callable[[int], None] | None,
    ) -> int:
        """:meth:`export` as Parquet: rows gathered column by column and written as one row
        group whenever a group is full, so at most one group is in memory."""
        pa, pq = _pyarrow()
        schema = parquet_schema()
        n = rows = chars = 0
        columns: dict[str, list[Any]] = {k: [] for k in EXPORT_COLUMNS}
        where = str(target) if isinstance(target, str | PathLike) else target
        with (
            pq.ParquetWriter(
                where,
                schema,
                compression=PARQUET_COMPRESSION,
                use_dictionary=list(PARQUET_DICTIONARY),
            ) as writer,
            self._streaming() as conn,
        ):
            result = conn.execution_options(yield_per=batch).execute(stmt)
            for row in result:
                for k, value in zip(EXPORT_COLUMNS, row, strict=True):
                    columns[k].append(value)
                    if isinstance(value, str):
                        chars += len(value)
                rows += 1
                n += 1
                if rows >= PARQUET_GROUP_ROWS or chars >= PARQUET_GROUP_CHARS:
                    writer.write_table(pa.Table.from_pydict(columns, schema=schema))
                    columns = {k: [] for k in EXPORT_COLUMNS}
                    rows = chars = 0
                if progress is not None:
                    progress(1)
            if rows:
                writer.write_table(pa.Table.from_pydict(columns, schema=schema))
        return n

    def count(
        self,
        *,
        site: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: str | Iterable[str] | None = None,
    ) -> int:
        """How many stored articles match the filters: what :meth:`export` would write."""
        stmt = _filtered(select(func.count()).select_from(ARTICLES), site, since, until, kind)
        with self.engine.connect() as conn:
            return int(conn.execute(stmt).scalar_one())

    # -- statistics -------------------------------------------------------------------

    def stats(self) -> CorpusStats:
        """Articles per site and per site-local day, per site, UTC month and origin, newest
        article, line table, and the top stated origins and sections per site.

        Day counts are grouped in SQL by UTC hour and then moved to the site's zone in
        Python: the database does the counting whatever the corpus size, and the dates are
        exact for every zone with a whole-hour offset (all of the site table). Month counts
        are grouped in SQL by site, origin and UTC month over the index ``(site, archive,
        published)`` alone; stated origins and sections by site over ``(site, origin)`` and
        ``(site, section)`` alone; kinds by site over ``(site, kind)``.
        """
        sites: dict[str, SiteStats] = {}

        def entry(key: str) -> SiteStats:
            return sites.setdefault(key, SiteStats(key))

        per_day: dict[str, dict[date | None, int]] = {}
        per_month: dict[str, dict[str | None, dict[str, int]]] = {}
        with self.engine.connect() as conn:
            counted = has_counts(conn)
            per_site = (
                select(COUNTS.c.site, func.sum(COUNTS.c.n)).group_by(COUNTS.c.site)
                if counted
                else select(ARTICLES.c.site, func.count()).group_by(ARTICLES.c.site)
            )
            for key, n in conn.execute(per_site):
                entry(key).articles = int(n)
            for key, n in conn.execute(
                select(LineCount.site, func.count()).group_by(LineCount.site)
            ):
                entry(key).line_counts = n
            for key, RC in conn.execute(select(SiteLineStats.site, SiteLineStats.RC)):
                entry(key).RC = RC
            for key, last in conn.execute(select(SiteReclean.site, SiteReclean.last_reclean_RC)):
                entry(key).last_reclean_RC = last
            for key, s in sites.items():
                if not s.articles:
                    continue
                newest = conn.execute(
                    select(ARTICLES.c.id, ARTICLES.c.title, ARTICLES.c.published)
                    .where(ARTICLES.c.site == key, ARTICLES.c.published.is_not(None))
                    .order_by(ARTICLES.c.published.desc().nulls_last(), ARTICLES.c.id.desc())
                    .limit(1)
                ).first()
                if newest is not None:
                    s.newest_id, s.newest_title, s.newest_published = newest
            if counted:
                per_day.update(self._days_counted(conn))
            else:
                hour = self._utc_hour(ARTICLES.c.published)
                for key, bucket, n in conn.execute(
                    select(ARTICLES.c.site, hour, func.count()).group_by(ARTICLES.c.site, hour)
                ):
                    day = None if bucket is None else _local_day(bucket, key)
                    days = per_day.setdefault(key, {})
                    days[day] = days.get(day, 0) + n
            if "kind" not in self._absent:  # revision 0010
                kind = func.coalesce(ARTICLES.c.kind, "article")
                counts: dict[str, dict[str, int]] = {}
                for key, name, n in conn.execute(
                    select(ARTICLES.c.site, kind, func.count()).group_by(ARTICLES.c.site, kind)
                ):
                    per = counts.setdefault(key, {})
                    per[name] = per.get(name, 0) + int(n)
                for key, per in counts.items():
                    rank = {k: i for i, k in enumerate(STORED)}
                    entry(key).kinds = dict(
                        sorted(per.items(), key=lambda kn: (rank.get(kn[0], len(rank)), kn[0]))
                    )
            for name in ("origin", "section"):
                if name in self._absent:  # a database before revision 0008, not migrated
                    continue
                col = ARTICLES.c[name]
                grouped: dict[str, list[tuple[str, int]]] = {}
                for key, value, n in conn.execute(
                    select(ARTICLES.c.site, col, func.count())
                    .where(col.is_not(None))
                    .group_by(ARTICLES.c.site, col)
                ):
                    grouped.setdefault(key, []).append((value, n))
                for key, values in grouped.items():
                    top = sorted(values, key=lambda vn: (-vn[1], vn[0]))[:TOP_RECORD]
                    setattr(entry(key), f"top_{name}s", top)
            month = utc_month(self.dialect, ARTICLES.c.published)
            archive = ARTICLES.c.archive
            months_stmt = (
                month_counts(by_site=True)
                if counted
                else select(ARTICLES.c.site, month, archive, func.count()).group_by(
                    ARTICLES.c.site, archive, month
                )
            )
            for key, bucket, origin, n in conn.execute(months_stmt):
                bucket = bucket or None  # article_counts: '' for no time
                origins = per_month.setdefault(key, {}).setdefault(bucket, {})
                origins[origin or LIVE] = origins.get(origin or LIVE, 0) + int(n)
        per_day = {
            key: dict(sorted(days.items(), key=lambda kv: (kv[0] is None, kv[0] or date.min)))
            for key, days in sorted(per_day.items())
        }
        per_month = {
            key: {
                m: dict(sorted(origins.items(), key=lambda kv: (kv[0] != LIVE, kv[0])))
                for m, origins in sorted(months.items(), key=lambda kv: (kv[0] is None, kv[0]))
            }
            for key, months in sorted(per_month.items())
        }
        return CorpusStats(
            total=sum(s.articles for s in sites.values()),
            sites=dict(sorted(sites.items())),
            per_day=per_day,
            per_month=per_month,
        )

    @staticmethod
    def _days_counted(conn: Connection) -> dict[str, dict[date | None, int]]:
        """Per site and local day from ``article_counts``, grouped in the database
        (:func:`days_from_counts` over the whole span), untimed articles under None."""
        first, last = conn.execute(
            select(func.min(COUNTS.c.hour), func.max(COUNTS.c.hour)).where(
                COUNTS.c.hour != NO_HOUR
            )
        ).one()
        out: dict[str, dict[date | None, int]] = {}
        if first is not None:
            since = parse_hour(first)
            until = parse_hour(last)
            assert since is not None and until is not None
            for key, days in days_from_counts(conn, since, until + timedelta(hours=1)).items():
                out[key] = dict(days)
        for key, n in conn.execute(
            select(COUNTS.c.site, func.sum(COUNTS.c.n))
            .where(COUNTS.c.hour == NO_HOUR)
            .group_by(COUNTS.c.site)
        ):
            out.setdefault(key, {})[None] = int(n)
        return out

    def _utc_hour(self, col: Any) -> Any:
        """The UTC hour of a stored time, as the backend can group by it."""
        if self.dialect == "postgresql":
            return func.date_trunc("hour", func.timezone("UTC", col))
        return func.strftime("%Y-%m-%d %H", col)  # SQLite stores the UTC wall time


def utc_month(dialect: str, col: Any) -> Any:
    """The UTC month of a stored time as ``YYYY-MM`` text (NULL for NULL), grouped by in
    SQL: SQLite's ``strftime`` reads the stored UTC text, PostgreSQL's ``to_char`` the
    ``timestamptz`` moved to UTC."""
    if dialect == "postgresql":
        return func.to_char(func.timezone("UTC", col), "YYYY-MM")
    return func.strftime("%Y-%m", col)


def _absent_columns(engine: Engine) -> tuple[str, ...]:
    """The columns of ``articles`` in the models that the database lacks (an older
    revision, opened without migrating it)."""
    insp = inspect(engine)
    if not insp.has_table(ARTICLES.name):
        return ()
    have = {c["name"] for c in insp.get_columns(ARTICLES.name)}
    return tuple(c.key for c in ARTICLES.c if c.name not in have)


def _record_filters(
    dialect: str,
    *,
    author: str | None = None,
    origin: str | None = None,
    section: str | None = None,
    language: str | None = None,
) -> list[Any]:
    """The ``WHERE`` conditions of :meth:`Corpus.search`'s record filters (empty: none).

    ``author`` is one whole name of ``authors`` (the names joined by ``、``): the column
    framed by ``、`` on both sides contains ``、name、``, tested with ``instr`` (SQLite) or
    ``strpos`` (PostgreSQL), so no character of a name is a pattern. The others are
    equalities, served with the site by the indexes ``(site, origin)`` and ``(site,
    section)`` and alone by ``(language)``.
    """
    c = ARTICLES.c
    out: list[Any] = []
    if author and author.strip():
        framed = literal(AUTHOR_SEPARATOR) + c.authors + literal(AUTHOR_SEPARATOR)
        needle = literal(AUTHOR_SEPARATOR + author.strip() + AUTHOR_SEPARATOR)
        find = func.strpos if dialect == "postgresql" else func.instr
        out.append(find(framed, needle) > 0)
    if origin and origin.strip():
        out.append(c.origin == origin.strip())
    if section and section.strip():
        out.append(c.section == section.strip())
    if language and language.strip():
        out.append(c.language == language.strip().lower())
    return out


def parse_kinds(kind: str | Iterable[str] | None) -> tuple[str, ...]:
    """The kinds of a ``kind`` filter: a name, a comma list, or several of either (the
    repeatable ``--kind``); empty for none. A kind that is never stored (``topic``, ``list``,
    ``blocked``) or unknown is a :class:`~newsspider.errors.UserError` naming the stored ones."""
    if kind is None:
        return ()
    values = [kind] if isinstance(kind, str) else list(kind)
    out: list[str] = []
    for value in values:
        for name in str(value).split(","):
            name = name.strip().lower()
            if not name:
                continue
            if name not in STORED:
                raise UserError(
                    f"kind {name!r} is not a stored kind; the stored kinds are "
                    f"{', '.join(STORED)} (topic, list and blocked pages are never stored)"
                )
            if name not in out:
                out.append(name)
    return tuple(out)


def kind_filter(kind: str | Iterable[str] | None) -> ColumnElement[bool] | None:
    """The ``WHERE`` condition of a ``kind`` filter (:func:`parse_kinds`), None for none:
    ``article`` also matches rows stored before kinds existed (NULL). Served with the site
    by the index ``(site, kind)``."""
    kinds = parse_kinds(kind)
    if not kinds:
        return None
    column = ARTICLES.c.kind
    condition = column.in_(kinds)
    return or_(condition, column.is_(None)) if "article" in kinds else condition


def _head(content: str | None) -> str:
    """The snippet of a hit found by filters alone: the start of its body."""
    text = content or ""
    width = fts.SNIPPET_TOKENS
    return fts.flat_text(text[:width]) + (fts.SNIPPET_ELLIPSIS if len(text) > width else "")


def _filtered(
    stmt: Select[Any],
    site: str | None,
    since: datetime | None,
    until: datetime | None,
    kind: str | Iterable[str] | None = None,
) -> Select[Any]:
    if (by_kind := kind_filter(kind)) is not None:
        stmt = stmt.where(by_kind)
    if site:
        stmt = stmt.where(ARTICLES.c.site == site)
    if since is not None:
        stmt = stmt.where(ARTICLES.c.published >= _aware(since, "since"))
    if until is not None:
        stmt = stmt.where(ARTICLES.c.published < _aware(until, "until"))
    return stmt


def _aware(value: datetime, name: str) -> datetime:
    if not isinstance(value, datetime):
        raise TypeError(f"{name} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} is a naive datetime: attach a time zone")
    return value.astimezone(UTC)


def fixed_offset(zone: ZoneInfo, since: datetime, until: datetime) -> timedelta | None:
    """The zone's one UTC offset over ``[since, until)``, None when it changes (DST)."""
    step = max((until - since) / 48, timedelta(hours=1))
    offsets = set()
    t = since
    while t <= until:
        offsets.add(t.astimezone(zone).utcoffset())
        t += step
    offsets.add(until.astimezone(zone).utcoffset())
    return offsets.pop() if len(offsets) == 1 else None


def days_from_counts(
    conn: Connection, since: datetime, until: datetime
) -> dict[str, dict[date, int]]:
    """Articles per site and site-local day from ``article_counts`` (``web_queries.article_days``,
    :meth:`Corpus.stats`), grouped by site and local day in the
    database: one query per UTC offset the site table's zones hold over the window (sites
    outside the table go with the default zone's), and by UTC hour, moved to the site's
    zone in Python, for the sites whose offset changes in the window (DST)."""
    groups: dict[timedelta | None, list[str]] = {}
    for key, site in SITES.items():
        groups.setdefault(fixed_offset(site.zone, since, until), []).append(key)
    default = fixed_offset(ZoneInfo(DEFAULT_TZ), since, until)
    groups.setdefault(default, [])
    hour = COUNTS.c.hour
    out: dict[str, dict[date, int]] = {}
    for offset, keys in groups.items():
        sites = COUNTS.c.site.in_(keys)
        if offset == default:
            sites = sites | COUNTS.c.site.not_in(list(SITES))
        if offset is None:
            bucket: Any = hour
        elif conn.dialect.name == "postgresql":
            stamp = cast(hour.concat(":00:00"), DateTime())  # a UTC wall time, no zone
            bucket = func.to_char(stamp + offset, "YYYY-MM-DD")
        else:
            minutes = int(offset.total_seconds() // 60)
            bucket = func.substr(func.datetime(hour.concat(":00"), f"{minutes:+d} minutes"), 1, 10)
        stmt = (
            select(COUNTS.c.site, bucket, func.sum(COUNTS.c.n))
            .where(hour >= hour_key(since), hour < hour_key(until), hour != NO_HOUR, sites)
            .group_by(COUNTS.c.site, bucket)
        )
        for site, value, n in conn.execute(stmt):
            if offset is not None:
                day = date.fromisoformat(value)
            else:  # 'YYYY-MM-DD HH', parsed by hand: strptime costs 30 us a row
                y, m, d, h = int(value[:4]), int(value[5:7]), int(value[8:10]), int(value[11:13])
                day = datetime(y, m, d, h, tzinfo=UTC).astimezone(site_zone(site)).date()
            days = out.setdefault(site, {})
            days[day] = days.get(day, 0) + int(n)
    return {site: dict(sorted(days.items())) for site, days in sorted(out.items())}


def site_zone(site: str) -> ZoneInfo:
    """The zone of a site's local days: its row's, else the default zone."""
    return SITES[site].zone if site in SITES else ZoneInfo(DEFAULT_TZ)


def _local_day(bucket: Any, site: str) -> date:
    if isinstance(bucket, str):  # SQLite: 'YYYY-MM-DD HH'
        bucket = datetime.strptime(bucket, "%Y-%m-%d %H")
    return bucket.replace(tzinfo=UTC).astimezone(site_zone(site)).date()


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _jsonable(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _csv_field(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        value = value.isoformat()
    return '"' + str(value).replace('"', '""') + '"'


# -- Parquet -------------------------------------------------------------------------------


def _pyarrow() -> tuple[Any, Any]:
    """``pyarrow`` and ``pyarrow.parquet``, imported at the first Parquet file only: the
    import costs about 150 ms and tens of MB, which no other command should pay."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise UserError("Parquet needs pyarrow: pip install pyarrow") from None
    return pyarrow, pyarrow.parquet


def parquet_schema() -> Any:
    """The Arrow schema of a Parquet export: every column of ``articles`` in table order,
    integers as ``int64``, times as ``timestamp[us, tz=UTC]``, the rest ``string``; a
    column the table declares NOT NULL is a required field. The schema's metadata names
    the schema revision the rows were stored under (``newsspider.revision``)."""
    pa, _ = _pyarrow()
    fields = []
    for c in ARTICLES.c:
        if isinstance(c.type, UTCDateTime):
            kind = pa.timestamp("us", tz="UTC")
        elif isinstance(c.type, Integer):
            kind = pa.int64()
        else:
            kind = pa.string()
        fields.append(pa.field(c.key, kind, nullable=bool(c.nullable)))
    return pa.schema(fields, metadata={"newsspider.revision": head_revision()})


# -- reading an export back --------------------------------------------------------------

_CSV_FIELD = re.compile(r'"((?:[^"]|"")*)"|([^,"\r\n]*)')


def _csv_records(fh: IO[str]) -> Iterator[list[str | None]]:
    """Records of an RFC 4180 file, ``None`` for unquoted empty fields (NULL).

    Python 3.11's ``csv`` cannot tell ``""`` from an empty field; this reader can, and
    keeps line breaks inside quoted values. A record ends at a line end outside quotes.
    """
    pending = ""
    for line in fh:
        pending += line
        if pending.count('"') % 2:
            continue  # inside a quoted value that spans lines
        record = pending.rstrip("\r\n")
        pending = ""
        if not record:
            continue
        out: list[str | None] = []
        pos = 0
        while True:
            m = _CSV_FIELD.match(record, pos)
            if m is None:
                raise ValueError(f"malformed CSV record: {record[:80]!r}")
            quoted, bare = m.group(1), m.group(2)
            out.append(quoted.replace('""', '"') if quoted is not None else (bare or None))
            pos = m.end()
            if pos >= len(record):
                break
            if record[pos] != ",":
                raise ValueError(f"malformed CSV record: {record[:80]!r}")
            pos += 1
            if pos == len(record):
                out.append(None)
                break
        yield out
    if pending.strip():
        raise ValueError("CSV ends inside a quoted value")


def read_export(
    fh: IO[Any] | str | PathLike[str], format: ExportFormat = "jsonl"
) -> Iterator[dict[str, Any]]:
    """Rows of an :meth:`Corpus.export` file with their stored types restored.

    Integers come back as ``int`` and times as aware ``datetime`` in UTC; everything else
    is a string or ``None``. The inverse of ``export`` for every format (round-trip
    tested); a Parquet file is read a row group at a time, from a binary file or a path.
    """
    if format == "parquet":
        _, pq = _pyarrow()
        where = str(fh) if isinstance(fh, str | PathLike) else fh
        for batch in pq.ParquetFile(where).iter_batches(batch_size=EXPORT_BATCH):
            for record in batch.to_pylist():
                yield {
                    k: v.astimezone(UTC) if isinstance(v, datetime) else v
                    for k, v in record.items()
                }
        return
    assert not isinstance(fh, str | PathLike)
    types = {c.key: c.type for c in ARTICLES.c}

    def typed(record: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in record.items():
            kind = types.get(k)
            if v is not None and isinstance(kind, UTCDateTime):
                v = datetime.fromisoformat(v)
            elif v is not None and isinstance(kind, Integer):
                v = int(v)
            out[k] = v
        return out

    if format == "jsonl":
        for line in fh:
            if line.strip():
                yield typed(json.loads(line))
    elif format == "csv":
        records = _csv_records(fh)
        header = next(records, None)
        if header is None:
            return
        for values in records:
            yield typed(dict(zip(header, values, strict=True)))
    else:
        raise ValueError(f"unknown export format {format!r}: use jsonl, csv or parquet")


def utc_day_bounds(day: date, tz: str = DEFAULT_TZ) -> tuple[datetime, datetime]:
    """``[start, end)`` of a calendar day in ``tz``, as aware datetimes (for filters)."""
    zone = ZoneInfo(tz)
    start = datetime(day.year, day.month, day.day, tzinfo=zone)
    nxt = day + timedelta(days=1)
    return start, datetime(nxt.year, nxt.month, nxt.day, tzinfo=zone)
