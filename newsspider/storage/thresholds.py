"""Per-site xpath thresholds (Hou & Yang 2011 §3.3) kept in SQL.

``scrapy train SITE`` learns ``Length_Threshold`` and ``B_n_Threshold`` of a site from
sample pages (the pure :func:`newsspider.extraction.xpathseg.train_thresholds`) and stores
them here, one row per site of ``xpath_thresholds`` (``models.XpathThresholds``);
extraction with the ``xpath`` method passes a site's row as keyword arguments
(:func:`thresholds_params`) and, for a site without a row, uses the page's own thresholds
(the documented default of ``extract_xpath``).

The caller owns the session and its transaction, as everywhere in ``storage``, except in
:func:`load_all_thresholds`, which a crawl calls once with nothing but the database URL.
"""

from __future__ import annotations

import logging

from sqlalchemy import inspect, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from newsspider.extraction.xpathseg import Thresholds

from .db import dialect_insert
from .engine import engine_for
from .models import XpathThresholds, utcnow

__all__ = [
    "all_thresholds",
    "load_all_thresholds",
    "load_thresholds",
    "save_thresholds",
    "thresholds_params",
]

logger = logging.getLogger(__name__)

TABLE = XpathThresholds.__table__


def save_thresholds(session: Session, site: str, thresholds: Thresholds) -> None:
    """Insert or replace the site's row (an upsert on ``site``); ``trained_at`` is now."""
    values = {
        "site": site,
        "Length_Threshold": float(thresholds.Length_Threshold),
        "B_n_Threshold": float(thresholds.B_n_Threshold),
        "pages": int(thresholds.pages),
        "trained_at": utcnow(),
    }
    stmt = dialect_insert(session, TABLE).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=[TABLE.c.site],
        set_={
            TABLE.c[k]: stmt.excluded[k]
            for k in ("Length_Threshold", "B_n_Threshold", "pages", "trained_at")
        },
    )
    session.execute(stmt)


def load_thresholds(session: Session, site: str) -> Thresholds | None:
    """The site's trained thresholds, or None when it has not been trained."""
    row = session.get(XpathThresholds, site)
    if row is None:
        return None
    return Thresholds(row.Length_Threshold, row.B_n_Threshold, row.pages)


def all_thresholds(session: Session) -> dict[str, Thresholds]:
    """Every trained site's thresholds, by site key (one query, e.g. when a crawl opens)."""
    rows = session.scalars(select(XpathThresholds).order_by(XpathThresholds.site))
    return {r.site: Thresholds(r.Length_Threshold, r.B_n_Threshold, r.pages) for r in rows}


def load_all_thresholds(database_url: str) -> dict[str, Thresholds]:
    """:func:`all_thresholds` of the database at ``database_url``, read without writing.

    No table (nothing was ever trained there), no row or no database: ``{}``, so every
    site uses its pages' own thresholds; a database that could not be read is logged as a
    warning. The schema is not created here: a crawl that only reads thresholds leaves the
    database as it found it.
    """
    try:
        engine = engine_for(database_url)
        if not inspect(engine).has_table(XpathThresholds.__tablename__):
            return {}
        with Session(engine) as session:
            return all_thresholds(session)
    except SQLAlchemyError as exc:
        logger.warning("xpath thresholds not read (%s): per-page thresholds for every site", exc)
        return {}


def thresholds_params(session: Session, site: str) -> dict[str, float]:
    """Keyword arguments for ``extract_xpath``: the site's thresholds, or ``{}`` (defaults)."""
    found = load_thresholds(session, site)
    return found.as_params() if found is not None else {}
