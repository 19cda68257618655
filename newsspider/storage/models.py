"""Tables of the corpus (Li & Jiang 2012 fig. 2, ALGORITHMS.md §B4) and of the line-hash state.

``articles`` is the corpus table of fig. 2 (``urladdr`` -> ``url``, ``newstime`` ->
``published``, ``updatetime`` -> ``updated_at``), plus what we need to re-clean and
de-duplicate: the text before line-hash cleaning, its MD5 and the encoding it was decoded
from. ``line_counts`` and ``site_line_stats`` hold the §B3 table (``LC`` per line, ``RC`` per
site); their DB columns are lower case (``lc``, ``rc``) so PostgreSQL needs no quoted
identifiers, while Python keeps the papers' names (``LineCount.LC``, ``table.c.LC``).

Every timestamp is stored in UTC through :class:`UTCDateTime` because SQLite's ``DATETIME``
keeps no offset: without it a value written as Asia/Shanghai would read back naive and
eight hours off.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import DateTime, Index, Integer, String, Text, TypeDecorator
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """Aware current time in UTC; the default of every timestamp column."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that always stores UTC and always returns aware UTC.

    Naive datetimes are refused: their zone is unknown, and guessing (server local time,
    UTC, the site's zone) would silently shift news times by hours.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: attach a time zone before storing")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            # SQLite's DATETIME text has no offset; store the UTC wall time explicitly.
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base of every newsspider table."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime()}


class Article(Base):
    """One news article: a row of the corpus table (Li & Jiang fig. 2, §B4)."""

    __tablename__ = "articles"
    __table_args__ = (
        # "Skip exact duplicate pages" (§B3): looked up per site by seen_content().
        Index("ix_articles_site_content_md5", "site", "content_md5"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(String(2048), unique=True, index=True)
    site: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(128))
    title: Mapped[str | None] = mapped_column(Text)
    published: Mapped[datetime | None]
    content: Mapped[str] = mapped_column(Text)
    raw_text: Mapped[str] = mapped_column(Text)
    encoding: Mapped[str | None] = mapped_column(String(32))
    content_md5: Mapped[str] = mapped_column(String(32))
    fetched_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    def __repr__(self) -> str:
        return f"Article(id={self.id!r}, url={self.url!r})"


class LineCount(Base):
    """``LC`` of one line MD5 on one site (Li & Jiang §2.2, ALGORITHMS.md §B3)."""

    __tablename__ = "line_counts"

    site: Mapped[str] = mapped_column(String(64), primary_key=True)
    md5: Mapped[str] = mapped_column(String(32), primary_key=True)
    LC: Mapped[int] = mapped_column("lc", Integer, key="LC")


class SiteLineStats(Base):
    """``RC`` of one site (pages counted, §B3 step 3) and the ``RC`` of its last pruning."""

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
