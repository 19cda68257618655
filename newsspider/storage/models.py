"""Every newsspider table: the corpus, the line-hash state, crawl and nightly runs, re-cleans
and trained xpath thresholds. ``schema.create_schema`` creates them all.

``articles`` is the corpus table of Li & Jiang 2012 fig. 2 (``urladdr`` -> ``url``, ``newstime`` ->
``published``, ``updatetime`` -> ``updated_at``), plus what we need to re-clean and
de-duplicate: the text before line-hash cleaning, its MD5 and the encoding it was decoded
from; and where its time came from and what it states (``published_source``: ``json-ld``,
``meta:<key>``, ``text``, ``url``...; ``published_precision``: ``second`` ... ``month``; NULL
for rows stored before these columns existed). ``line_counts`` and ``site_line_stats``
hold the §2.2 table (``LC`` per line, ``RC`` per site); their DB columns are lower case
(``lc``, ``rc``) so PostgreSQL needs no quoted identifiers, while Python keeps the papers'
names (``LineCount.LC``, ``table.c.LC``); so do ``site_reclean.last_reclean_rc`` and the
Hou & Yang 2011 §3.3 thresholds of ``xpath_thresholds``
(``XpathThresholds.Length_Threshold``, ``B_n_Threshold``).

Reprint detection (``newsspider/reprints``, docs/reprints.md) adds ``articles.story_id``,
``reprint_signatures`` (each article's MinHash signature) and ``reprint_bands`` (the LSH
band keys in SQL, so every night, worker and backend share one index).

The nightly run adds ``nightly_runs`` (the run as a whole: host and PID, which sites,
status, exit code, the printed report, so a morning reader finds last night's report in
the database) and ``nightly_site_runs`` (per site: the link to its ``crawl_runs`` row and
what only the nightly run sees). They are tables of their own rather than more
``crawl_runs`` columns because a plain ``scrapy crawl`` has none of these figures.

``site_checks`` keeps the last ``scrapy sites check`` of each site row (when, and what it
found), so ``scrapy sites list`` can say which rows were checked and when.

``scrapy backfill`` (articles fetched from web archives) adds where each row's bytes came
from, ``articles.archive`` and ``captured_at`` (NULL: fetched live), and
``backfill_captures``, one row per archived capture a backfill fetched, so a stopped
backfill resumes without fetching a capture twice.

What a page states about itself (revision 0008: authors, the stated origin, editor,
section, language and script, lead image and caption) is in ``articles`` too, one column
per field (docs/fields.md), for search filters, statistics and exports.

Every timestamp is stored in UTC through :class:`UTCDateTime` because SQLite's ``DATETIME``
keeps no offset: without it a value written as Asia/Shanghai would read back naive and
eight hours off. On SQLite the stored text carries its offset (``2024-01-16
00:30:00.000000+00:00``), so a reader with nothing but ``sqlite3``, pandas or datasette sees
UTC rather than guessing local time; PostgreSQL's ``timestamptz`` shows its offset anyway.

The schema's history is versioned with Alembic (``migrations/``; ``schema.create_schema``
brings a database to the newest revision): a change to a table here comes with a revision.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

import zstandard
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    TypeDecorator,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeEngine

#: How ``articles.authors`` joins the names of an article's authors (the enumeration comma).
AUTHOR_SEPARATOR = "、"


def utcnow() -> datetime:
    """Aware current time in UTC; the default of every timestamp column."""
    return datetime.now(UTC)


#: How SQLite stores a time: fixed-width ISO 8601 in UTC with its offset, e.g.
#: ``2024-01-16 00:30:00.000000+00:00``. Every value has the same width and offset, so text
#: order is time order (``ORDER BY``, ``BETWEEN``, the indexes on ``published``), and SQLite's
#: date functions read it (``strftime('%Y-%m-%d %H', published)``, ``datetime(published,
#: '+8 hours')``). Older versions stored the same text without ``+00:00``; such values
#: still read as UTC, and the migration of revision 0002 rewrites them.
SQLITE_STORAGE_FORMAT = (
    "%(year)04d-%(month)02d-%(day)02d "
    "%(hour)02d:%(minute)02d:%(second)02d.%(microsecond)06d+00:00"
)


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that always stores UTC and always returns aware UTC.

    Naive datetimes are refused: their zone is unknown, and guessing (server local time,
    UTC, the site's zone) would silently shift news times by hours. On SQLite the column
    is still declared ``DATETIME`` and the value is text in :data:`SQLITE_STORAGE_FORMAT`;
    PostgreSQL gets ``timestamp with time zone``.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sqlite.DATETIME(storage_format=SQLITE_STORAGE_FORMAT))
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: attach a time zone before storing")
        # SQLite: the storage format writes the UTC fields and the +00:00 after them.
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:  # stored by a version before the offset was written
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


#: zstd level of ``raw_text`` on SQLite (:class:`PackedText`): measured on 20,000 Chinese
#: bodies, level 3 keeps 53.3 % of the UTF-8 bytes at 43 us a row; level 9 51.5 % at 182 us,
#: zlib level 6 49.8 % at 203 us (the write path pays it on every stored page).
RAW_TEXT_ZSTD_LEVEL = 3
_zstd_compress = zstandard.ZstdCompressor(level=RAW_TEXT_ZSTD_LEVEL).compress
_zstd_decompress = zstandard.ZstdDecompressor().decompress


class PackedText(TypeDecorator[str]):
    """Text stored zstd-compressed on SQLite, as it is on PostgreSQL: a ``str`` in Python.

    ``articles.raw_text`` is the page's text before line-hash cleaning (Li & Jiang 2012
    §2.2), kept so a matured table can clean old rows again; it is nearly ``content`` a
    second time, and on SQLite it was half of every row. PostgreSQL compresses long text
    itself (TOAST), so there it stays plain ``text``. On SQLite the value is a zstd frame
    in a ``BLOB`` (SQLite types values, not columns: the column stays declared ``TEXT``, and
    rows stored before remain text, read as they are, until a re-crawl, ``reextract`` or
    ``reclean`` writes them again). A reader with bare ``sqlite3`` sees bytes:
    :func:`unpack_text`, ``zstd -d`` or Python's ``zstandard`` opens them.
    """

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | bytes | None:
        if value is None or dialect.name != "sqlite":
            return value
        return _zstd_compress(value.encode("utf-8"))

    def process_result_value(self, value: str | bytes | None, dialect: Dialect) -> str | None:
        if isinstance(value, bytes):
            return _zstd_decompress(value).decode("utf-8")
        return value


def unpack_text(value: str | bytes | None) -> str | None:
    """A :class:`PackedText` value as raw SQL returns it (bytes on SQLite), as text."""
    return PackedText().process_result_value(value, sqlite.dialect())


class Base(DeclarativeBase):
    """Declarative base of every newsspider table."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime()}


#: Alembic's record of the schema revision a database is at (``schema.create_schema``), in
#: Alembic's own shape. Declared here so that ``Base.metadata`` knows every table of a
#: newsspider database: ``drop_all`` leaves none behind, so a fresh schema can follow.
alembic_version = Table(
    "alembic_version",
    Base.metadata,
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)


class Article(Base):
    """One news article: a row of the corpus table (Li & Jiang 2012 fig. 2)."""

    __tablename__ = "articles"
    __table_args__ = (
        # Exact duplicate pages are skipped before the line table counts them:
        # looked up per site by seen_contents().
        Index("ix_articles_site_content_md5", "site", "content_md5"),
        # Articles per month by origin (``Corpus.stats``, the dashboard): a scan of this
        # index alone, never of the rows with their bodies (revision 0007).
        Index("ix_articles_site_archive_published", "site", "archive", "published"),
        # Revision 0008: the top origins and sections per site (``Corpus.stats``) read these
        # indexes alone; ``--lang`` and the web view's language filter use the third.
        Index("ix_articles_site_origin", "site", "origin"),
        Index("ix_articles_site_section", "site", "section"),
        Index("ix_articles_language", "language"),
        # Revision 0010: articles per kind and site (``Corpus.stats``), the index alone.
        Index("ix_articles_site_kind", "site", "kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(String(2048), unique=True, index=True)
    site: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(128))
    title: Mapped[str | None] = mapped_column(Text)
    published: Mapped[datetime | None]
    content: Mapped[str] = mapped_column(Text)
    raw_text: Mapped[str] = mapped_column(PackedText)
    encoding: Mapped[str | None] = mapped_column(String(32))
    content_md5: Mapped[str] = mapped_column(String(32))
    fetched_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # Last, where the migration of an older database adds them (revision 0002), so a
    # fresh database and a migrated one have the same column order.
    published_source: Mapped[str | None] = mapped_column(String(64))
    published_precision: Mapped[str | None] = mapped_column(String(16))
    # Revision 0004: the story (reprints of one text, docs/reprints.md) the article belongs
    # to, the id of the story's first indexed article; its own id when it stands alone;
    # NULL until reprint detection has seen it (``scrapy corpus reprints --rebuild``).
    story_id: Mapped[int | None] = mapped_column(Integer, index=True)
    # Revision 0007: where the stored bytes came from. NULL: fetched live from the site;
    # else the web archive's name (``cc:CC-MAIN-2024-10``, ``wayback``, a CDX endpoint's
    # URL, ``warc:<file name>``) and the capture's time. Every upsert writes both, so a
    # live crawl refetching a backfilled URL makes the row live again.
    archive: Mapped[str | None] = mapped_column(String(256))
    captured_at: Mapped[datetime | None]
    # Revision 0008: what the page states about itself (``ExtractedArticle``'s record
    # fields, docs/fields.md), NULL when it states nothing or the row was stored before
    # (``scrapy reextract`` fills them from archived pages). ``authors``: the names joined
    # by ``、`` (:data:`AUTHOR_SEPARATOR`); ``origin``: the stated source (来源), normalised;
    # ``editor``: 责任编辑; ``section``: the site's section; ``language``: ISO 639-1;
    # ``script``: ``simplified``, ``traditional`` or ``mixed``; ``image``: the lead image's
    # URL and ``image_caption``. ``*_source`` says where a value was read. Lengths are
    # enforced alike on both backends: longer values are cut (``db.RECORD_LIMITS``).
    authors: Mapped[str | None] = mapped_column(Text)
    authors_source: Mapped[str | None] = mapped_column(String(64))
    origin: Mapped[str | None] = mapped_column(String(128))
    origin_source: Mapped[str | None] = mapped_column(String(64))
    editor: Mapped[str | None] = mapped_column(String(128))
    section: Mapped[str | None] = mapped_column(String(128))
    section_source: Mapped[str | None] = mapped_column(String(64))
    language: Mapped[str | None] = mapped_column(String(16))
    script: Mapped[str | None] = mapped_column(String(16))
    image: Mapped[str | None] = mapped_column(String(2048))
    image_caption: Mapped[str | None] = mapped_column(Text)
    # Revision 0010: the page's kind (``article``, ``gallery``, ``video``, ``live``; NULL
    # for rows stored before, read as ``article``) and, for an article joined from several
    # pages, their URLs in order as a JSON list, the first being ``url`` (NULL: one page).
    kind: Mapped[str | None] = mapped_column(String(16))
    page_urls: Mapped[str | None] = mapped_column(Text)

    def __repr__(self) -> str:
        return f"Article(id={self.id!r}, url={self.url!r})"


class ReprintSignature(Base):
    """An article's MinHash signature for reprint detection (``newsspider/reprints``).

    ``signature`` is the little-endian uint32 values; ``content_md5`` is the stored text it
    was made from, so a re-stored article whose text is unchanged is not indexed again.
    ``chars`` is the normalised length; an article below ``REPRINTS_MIN_CHARS`` has a row
    with a NULL signature and no band keys: it is never grouped.
    """

    __tablename__ = "reprint_signatures"

    article_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    content_md5: Mapped[str] = mapped_column(String(32))
    chars: Mapped[int] = mapped_column(Integer)
    signature: Mapped[bytes | None] = mapped_column(LargeBinary)


class ReprintBand(Base):
    """The LSH index of reprint detection: one row per (band key, article). Articles that
    share a band key are candidates, checked exactly before they join one story."""

    __tablename__ = "reprint_bands"
    # SQLite: the primary key is the table (no rowid beside it), half the bytes.
    __table_args__ = {"sqlite_with_rowid": False}

    band_key: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    article_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)


class ArticleCount(Base):
    """How many articles each site has per UTC hour of publication and origin, kept on
    write by triggers on ``articles`` (``counts.py``, revision 0009), so the dashboard and
    ``scrapy corpus stats`` read a table that grows with the hours a corpus spans, never
    with its articles.

    ``hour`` is the UTC hour as ``YYYY-MM-DD HH`` (``''``: no publication time);
    ``archive`` the row's ``articles.archive`` (``''``: fetched live). An hour, not a day:
    a site's days are local, and every zone of the site table is a whole-hour offset, so
    hours move to any site's days exactly. The key leads with ``hour`` because the
    dashboard reads a window of hours across all sites.
    """

    __tablename__ = "article_counts"
    __table_args__ = {"sqlite_with_rowid": False}

    hour: Mapped[str] = mapped_column(String(13), primary_key=True)
    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    archive: Mapped[str] = mapped_column(String(256), primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


class LineCount(Base):
    """``LC`` of one line MD5 on one site (Li & Jiang 2012 §2.2)."""

    __tablename__ = "line_counts"

    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    md5: Mapped[str] = mapped_column(String(32), primary_key=True)
    LC: Mapped[int] = mapped_column("lc", Integer, key="LC")


class SiteLineStats(Base):
    """``RC`` of one site (pages counted, Li & Jiang 2012 §2.2 step 3) and the ``RC`` of its
    last pruning."""

    __tablename__ = "site_line_stats"

    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    RC: Mapped[int] = mapped_column("rc", Integer, key="RC", default=0)
    pruned_at_RC: Mapped[int] = mapped_column(
        "pruned_at_rc", Integer, key="pruned_at_RC", default=0
    )


class CrawlRun(Base):
    """One crawl of one site: counts and a human-readable report, for the nightly summary.

    ``drop_reasons`` is JSON text (reason -> count, e.g. ``{"EmptyMainblockset": 3}``),
    kept as text so both SQLite and PostgreSQL store it the same way.

    What failed on the way, so a report shows a site going bad before it fails entirely:
    ``fetch_failures`` counts requests that ended without a usable response after any
    retries (``NewsSpider.fetch_failed``), ``fetch_failure_reasons`` splits them by reason
    (JSON: ``{"http_404": 2, "timeout": 1}``), ``retries`` counts the downloads Scrapy's
    ``RetryMiddleware`` repeated (``retry/count``), ``db_retries`` the write batches that
    had to wait for the database (locked, restarting) and were then stored.

    How it ended (``newsspider/outcome.py``): ``status`` ``finished`` (it did its job),
    ``nothing_fetched``, ``all_dropped``, ``blocked`` (anti-bot challenges) or ``failed``
    (the database, or a bug);
    ``exit_status`` the status ``scrapy crawl`` exits with for it; ``summary`` its closing
    line (``netease: 12 articles stored (10 new, 2 updated), 3 dropped (EmptyBody 3),
    0 fetches failed, 0m41s``).
    """

    __tablename__ = "crawl_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    site: Mapped[str] = mapped_column(String(64), index=True)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(32), default="running")
    pages_fetched: Mapped[int] = mapped_column(Integer, default=0)
    items_new: Mapped[int] = mapped_column(Integer, default=0)
    items_updated: Mapped[int] = mapped_column(Integer, default=0)
    items_dropped: Mapped[int] = mapped_column(Integer, default=0)
    drop_reasons: Mapped[str] = mapped_column(Text, default="{}")
    errors: Mapped[int] = mapped_column(Integer, default=0)
    report: Mapped[str | None] = mapped_column(Text)
    fetch_failures: Mapped[int] = mapped_column(Integer, default=0)
    fetch_failure_reasons: Mapped[str] = mapped_column(Text, default="{}")
    retries: Mapped[int] = mapped_column(Integer, default=0)
    db_retries: Mapped[int] = mapped_column(Integer, default=0)
    summary: Mapped[str | None] = mapped_column(Text)
    exit_status: Mapped[int | None] = mapped_column(Integer)


class SiteReclean(Base):
    """The last re-clean of one site (``reclean.py``): the ``RC`` it used, when, and what it
    changed; ``reclean_due`` compares the table's ``RC`` of today with it."""

    __tablename__ = "site_reclean"

    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_reclean_RC: Mapped[int] = mapped_column(
        "last_reclean_rc", Integer, key="last_reclean_RC", default=0
    )
    reclean_at: Mapped[datetime | None]
    articles: Mapped[int] = mapped_column(Integer, default=0)
    changed: Mapped[int] = mapped_column(Integer, default=0)
    lines_removed: Mapped[int] = mapped_column(Integer, default=0)
    lines_restored: Mapped[int] = mapped_column(Integer, default=0)


class XpathThresholds(Base):
    """A site's trained Hou & Yang 2011 §3.3 thresholds and its sample page count ``M``."""

    __tablename__ = "xpath_thresholds"

    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    Length_Threshold: Mapped[float] = mapped_column(
        "length_threshold", Float, key="Length_Threshold"
    )
    B_n_Threshold: Mapped[float] = mapped_column("b_n_threshold", Float, key="B_n_Threshold")
    pages: Mapped[int] = mapped_column(Integer)
    trained_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    def __repr__(self) -> str:
        return (
            f"XpathThresholds(site={self.site!r}, Length_Threshold={self.Length_Threshold!r}, "
            f"B_n_Threshold={self.B_n_Threshold!r}, pages={self.pages!r})"
        )


class NightlyRun(Base):
    """One ``scrapy nightly`` invocation that got past the lock.

    ``status``: ``running`` while it runs, then ``finished`` (exit status 0),
    ``failed`` (non-zero), or ``killed`` when a later run on the same host found it
    still ``running`` (the process died without finishing its row).

    ``workers``: NULL for a run on one machine; for a cluster run (``REDIS_URL``,
    ``newsspider/cluster/nightly.py``) the number of ``scrapy nightly`` workers that
    joined it, each leaving its own ``crawl_runs`` and ``nightly_site_runs`` row per
    site; ``host`` and ``pid`` are then the founder's.
    """

    __tablename__ = "nightly_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    host: Mapped[str] = mapped_column(String(255), index=True)
    pid: Mapped[int] = mapped_column(Integer)
    sites: Mapped[str] = mapped_column(Text)  # comma-separated site keys
    status: Mapped[str] = mapped_column(String(32), default="running")
    exit_code: Mapped[int | None] = mapped_column(Integer)
    report: Mapped[str | None] = mapped_column(Text)
    workers: Mapped[int | None] = mapped_column(Integer)


class NightlySiteRun(Base):
    """One site's crawl inside a nightly run: the figures ``crawl_runs`` lacks.

    ``outcome``: ``ok``, ``failed`` (the exit status is non-zero) or ``interrupted``
    (stopped by SIGTERM/SIGINT; its job directory is kept for the next start), NULL
    while running. ``pages_ok`` counts 2xx responses other than robots.txt;
    ``median_body_chars`` is over the ``raw_text`` of the items stored, NULL when none:
    measured at run time from the items themselves, because recomputing it later from
    ``articles`` would drift as re-crawls and re-cleans rewrite rows, and the health checks
    compare it across runs. A site that failed before its ``crawl_runs`` row existed (a bad
    spider argument, an unreachable database) still gets a row, with ``crawl_run_id``
    NULL, so the failure is on record. In a cluster run each worker has its own row per
    site (distinct by ``crawl_run_id``); the report sums them per site
    (``nightly.report.merge_site_runs``).
    """

    __tablename__ = "nightly_site_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    nightly_run_id: Mapped[int] = mapped_column(ForeignKey("nightly_runs.id"), index=True)
    crawl_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("crawl_runs.id"), unique=True, index=True
    )
    site: Mapped[str] = mapped_column(String(64), index=True)
    outcome: Mapped[str | None] = mapped_column(String(32))
    finish_reason: Mapped[str | None] = mapped_column(String(64))
    resumed: Mapped[bool] = mapped_column(Boolean, default=False)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    pages_ok: Mapped[int] = mapped_column(Integer, default=0)
    skipped_stored: Mapped[int] = mapped_column(Integer, default=0)
    bodies: Mapped[int] = mapped_column(Integer, default=0)
    median_body_chars: Mapped[int | None] = mapped_column(Integer)
    note: Mapped[str | None] = mapped_column(Text)


class SiteCheck(Base):
    """The last ``scrapy sites check`` of one site row (``sitechecks.py``): when, its status
    (``ok``, ``no start page``, ``no article links``, ``patterns match nothing``,
    ``extraction empty``), the article links its patterns matched and the line it printed.
    One row per site key, replaced by each check; ``scrapy sites list`` reads it."""

    __tablename__ = "site_checks"

    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    checked_at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(32))
    article_links: Mapped[int] = mapped_column(Integer, default=0)
    detail: Mapped[str | None] = mapped_column(Text)


class BackfillCapture(Base):
    """One archived capture a ``scrapy backfill`` fetched (``backfill.py``), so a backfill
    stopped by a signal, a kill or a crash resumes without fetching it again.

    ``archive`` is the archive's name as in ``articles.archive``, ``url`` the canonical URL
    the capture was stored under, ``timestamp`` the CDX timestamp (``YYYYMMDDhhmmss``),
    ``outcome`` what became of it: ``stored``, ``dropped`` (extraction or cleaning
    refused it), ``bad_record``, ``not_html``, ``http_<status>``... One row per capture:
    the primary key is (archive, url, timestamp), and a capture recorded twice keeps its
    first row.
    """

    __tablename__ = "backfill_captures"

    archive: Mapped[str] = mapped_column(String(256), primary_key=True)
    url: Mapped[str] = mapped_column(String(2048), primary_key=True)
    timestamp: Mapped[str] = mapped_column(String(14), primary_key=True)
    outcome: Mapped[str] = mapped_column(String(32))
    fetched_at: Mapped[datetime] = mapped_column(default=utcnow)


class CoverageDay(Base):
    """What share of a site's own published list the corpus holds, per site and local day
    (revision 0010; ``newsspider/coverage``): ``listed`` article URLs in the site's news
    sitemaps and feeds for that day, ``stored`` of them in the corpus when compared,
    ``missing`` the rest, ``filled`` how many of the missing the gap fill then stored, and
    ``checked_at`` the comparison's time. One row per (site, day), replaced by each
    comparison. A site that lists nothing has no row: its coverage is unknown, not 100 %."""

    __tablename__ = "coverage_days"

    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    listed: Mapped[int] = mapped_column(Integer)
    stored: Mapped[int] = mapped_column(Integer)
    missing: Mapped[int] = mapped_column(Integer)
    filled: Mapped[int] = mapped_column(Integer)
    checked_at: Mapped[datetime]
