"""Coverage in SQL: which listed URLs the corpus stores, and the ``coverage_days`` rows.

:func:`stored_among` answers "which of these canonical URLs are stored?" with the unique
index on ``articles.url`` (``url IN (...)`` in batches), never a scan of a site's rows.
:func:`save_coverage` replaces each (site, day) row of a comparison
(:class:`newsspider.coverage.compare.DayCoverage`); :func:`coverage_days` and
:func:`latest_coverage` read them back for the nightly report, ``corpus stats`` and the
dashboard. The caller owns sessions and transactions, as everywhere in ``storage``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import inspect, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from newsspider.coverage.compare import DayCoverage, SiteCoverage
from newsspider.errors import DatabaseUnreachable

from .db import dialect_insert
from .engine import SettingsLike, check_database, short_error, transaction
from .engine import session as open_session
from .models import Article, CoverageDay, utcnow
from .schema import create_schema

__all__ = [
    "CoverageRow",
    "coverage_between",
    "coverage_days",
    "coverage_table",
    "latest_coverage",
    "latest_coverage_of",
    "open_corpus",
    "record_coverage",
    "save_coverage",
    "stored_among",
]

TABLE = CoverageDay.__table__
#: URLs per ``IN (...)``: well under SQLite's 32766 bound parameters and PostgreSQL's 65535.
BATCH = 500


@dataclass(frozen=True, slots=True)
class CoverageRow:
    """One stored ``coverage_days`` row."""

    site: str
    day: str
    listed: int
    stored: int
    missing: int
    filled: int
    checked_at: datetime

    @property
    def share(self) -> float | None:
        """(stored + filled) / listed; None when nothing was listed."""
        return (self.stored + self.filled) / self.listed if self.listed else None


def stored_among(session: Session, urls: Iterable[str]) -> set[str]:
    """The URLs of ``urls`` that are stored articles (exact canonical URLs), by the index."""
    wanted = sorted(set(urls))
    found: set[str] = set()
    for i in range(0, len(wanted), BATCH):
        chunk = wanted[i : i + BATCH]
        found.update(session.scalars(select(Article.url).where(Article.url.in_(chunk))))
    return found


def save_coverage(
    session: Session, days: Iterable[DayCoverage], *, checked_at: datetime | None = None
) -> int:
    """Insert or replace the (site, day) row of every day compared; how many were written."""
    when = checked_at or utcnow()
    n = 0
    for d in days:
        values = {
            "site": d.site,
            "day": d.day,
            "listed": d.listed,
            "stored": d.stored,
            "missing": d.missing,
            "filled": d.filled,
            "checked_at": when,
        }
        stmt = dialect_insert(session, TABLE).values(values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[TABLE.c.site, TABLE.c.day],
            set_={TABLE.c[k]: stmt.excluded[k] for k in values if k not in ("site", "day")},
        )
        session.execute(stmt)
        n += 1
    return n


def _row(r: CoverageDay) -> CoverageRow:
    return CoverageRow(r.site, r.day, r.listed, r.stored, r.missing, r.filled, r.checked_at)


def coverage_days(
    session: Session, *, sites: Sequence[str] | None = None, since: str | None = None
) -> list[CoverageRow]:
    """Stored rows by site, then day (oldest first); ``since``: days from ``YYYY-MM-DD``."""
    stmt = select(CoverageDay).order_by(CoverageDay.site, CoverageDay.day)
    if sites is not None:
        stmt = stmt.where(CoverageDay.site.in_(list(sites)))
    if since is not None:
        stmt = stmt.where(CoverageDay.day >= since)
    return [_row(r) for r in session.scalars(stmt)]


def latest_coverage(session: Session, days: int) -> dict[str, list[CoverageRow]]:
    """Each site's ``days`` newest stored days (newest first), by site."""
    out: dict[str, list[CoverageRow]] = {}
    for site in sorted(session.scalars(select(CoverageDay.site).distinct())):
        stmt = (
            select(CoverageDay)
            .where(CoverageDay.site == site)
            .order_by(CoverageDay.day.desc())
            .limit(max(1, days))
        )
        out[site] = [_row(r) for r in session.scalars(stmt)]
    return out


def open_corpus(settings: SettingsLike) -> tuple[Engine | None, str | None]:
    """The engine of ``settings`` with its schema at head, or None and why not in a few
    words (``scrapy sites check`` still prints its checks without a database)."""
    try:
        engine = check_database(settings)
        create_schema(engine)
    except DatabaseUnreachable as exc:
        return None, str(exc)
    except (SQLAlchemyError, OSError) as exc:
        return None, short_error(exc)
    return engine, None


def record_coverage(engine: Engine, coverage: SiteCoverage) -> None:
    """Replace the (site, day) rows of one site's comparison, in one transaction."""
    with transaction(engine) as session:
        save_coverage(session, coverage.days)


def coverage_table(engine: Engine) -> bool:
    """Has the database the ``coverage_days`` table (revision 0010)? A read-only view of
    an older database shows coverage as unknown instead of failing."""
    return inspect(engine).has_table(CoverageDay.__tablename__)


def latest_coverage_of(engine: Engine, days: int) -> dict[str, list[CoverageRow]]:
    """:func:`latest_coverage` in a session of its own; empty without the table."""
    if not coverage_table(engine):
        return {}
    with open_session(engine) as session:
        return latest_coverage(session, days)


def coverage_between(engine: Engine, first: str, last: str) -> list[CoverageRow]:
    """The stored rows of the days ``first``..``last`` (``YYYY-MM-DD``), by site and day;
    empty without the table (the dashboard of an older database)."""
    if not coverage_table(engine):
        return []
    with open_session(engine) as session:
        stmt = (
            select(CoverageDay)
            .where(CoverageDay.day >= first, CoverageDay.day <= last)
            .order_by(CoverageDay.site, CoverageDay.day)
        )
        return [_row(r) for r in session.scalars(stmt)]
