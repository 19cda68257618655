"""The last ``scrapy sites check`` of each site row, kept in SQL (``site_checks``).

``scrapy sites check`` (:mod:`newsspider.discovery.check`) records each site's result
with :func:`record_checks`, one row per site key (``models.SiteCheck``), replaced by the
next check; ``scrapy sites list`` reads them back with :func:`read_last_checks` to say
whether and when a row was checked. Both take the crawl's settings, as a command has
nothing else, and neither raises for a database that cannot be used: a check still prints
its results, a listing still lists the rows (the caller says what was not recorded).

The caller owns sessions and transactions for :func:`save_check` and :func:`last_checks`,
as everywhere in ``storage``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session

from newsspider.errors import DatabaseUnreachable

from .db import dialect_insert
from .engine import (
    SettingsLike,
    check_database,
    resolve_database_url,
    short_error,
    transaction,
)
from .models import SiteCheck
from .schema import create_schema

__all__ = ["LastCheck", "last_checks", "read_last_checks", "record_checks", "save_check"]

logger = logging.getLogger(__name__)

TABLE = SiteCheck.__table__


@dataclass(frozen=True, slots=True)
class LastCheck:
    """One site's last check, as stored: ``checked_at`` is aware UTC."""

    site: str
    checked_at: datetime
    status: str
    article_links: int = 0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def save_check(session: Session, check: LastCheck) -> None:
    """Insert or replace the site's row (an upsert on ``site``)."""
    values = {
        "site": check.site,
        "checked_at": check.checked_at,
        "status": check.status,
        "article_links": int(check.article_links),
        "detail": check.detail,
    }
    stmt = dialect_insert(session, TABLE).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=[TABLE.c.site],
        set_={TABLE.c[k]: stmt.excluded[k] for k in values if k != "site"},
    )
    session.execute(stmt)


def last_checks(session: Session) -> dict[str, LastCheck]:
    """Every stored check, by site key."""
    rows = session.scalars(select(SiteCheck).order_by(SiteCheck.site))
    return {
        r.site: LastCheck(r.site, r.checked_at, r.status, r.article_links or 0, r.detail or "")
        for r in rows
    }


def record_checks(settings: SettingsLike, checks: Iterable[LastCheck]) -> str | None:
    """Store ``checks`` in the database of ``settings`` (schema brought up to date first).

    Returns None when they were stored, else why not, in a few words (the database could
    not be reached, or a statement failed): nothing is stored then.
    """
    checks = list(checks)
    if not checks:
        return None
    try:
        engine = check_database(settings)
        create_schema(engine)
        with transaction(engine) as session:
            for check in checks:
                save_check(session, check)
    except DatabaseUnreachable as exc:
        return str(exc)
    except (SQLAlchemyError, OSError) as exc:
        return short_error(exc)
    return None


def read_last_checks(settings: SettingsLike) -> tuple[dict[str, LastCheck], str | None]:
    """The stored checks of the database of ``settings``, read without writing, and why
    they could not be read (None when they could).

    No database file or no table yet (nothing was ever checked there): ``({}, None)``. The
    schema is not created here, nor a SQLite file: a listing leaves the database as it
    found it.
    """
    if _missing_sqlite_file(resolve_database_url(settings.get("DATABASE_URL"))):
        return {}, None
    try:
        engine = check_database(settings)
        if not inspect(engine).has_table(SiteCheck.__tablename__):
            return {}, None
        with Session(engine) as session:
            return last_checks(session), None
    except DatabaseUnreachable as exc:
        return {}, str(exc)
    except (SQLAlchemyError, OSError) as exc:
        return {}, short_error(exc)


def _missing_sqlite_file(url: str) -> bool:
    """Is ``url`` a SQLite file that does not exist (connecting would create it)?"""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return False  # check_database names the bad URL
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return False
    return not database.startswith("file:") and not Path(database).expanduser().exists()
