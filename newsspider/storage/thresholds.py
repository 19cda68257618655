"""Per-site xpath thresholds (Hou & Yang 2011 §3.3, ALGORITHMS.md §D7) kept in SQL.

``scrapy train SITE`` learns ``Length_Threshold`` and ``B_n_Threshold`` of a site from
sample pages (the pure :func:`newsspider.extraction.xpathseg.train_thresholds`) and stores
them here, one row per site; extraction with the ``xpath`` method passes a site's row as
keyword arguments (:func:`thresholds_params`) and, for a site without a row, uses the
page's own thresholds (the documented default of ``extract_xpath``).

The table is ``xpath_thresholds`` on the declarative :class:`~.models.Base` of every
newsspider table. Its DB columns are lower case (``length_threshold``, ``b_n_threshold``)
so PostgreSQL needs no quoted identifiers, while Python keeps the paper's names
(``XpathThresholds.Length_Threshold``), as ``models.py`` does for ``LC``/``RC``.
``create_schema`` creates every table registered on ``Base``: import this module first
(``scrapy train`` does), or call :func:`create_thresholds_table`.

The caller owns the session and its transaction, as everywhere in ``storage``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, Float, Integer, String, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from newsspider.extraction.xpathseg import Thresholds

from .db import dialect_insert
from .models import Base, utcnow

__all__ = [
    "XpathThresholds",
    "all_thresholds",
    "create_thresholds_table",
    "load_thresholds",
    "save_thresholds",
    "thresholds_params",
]


class XpathThresholds(Base):
    """The trained §3.3 thresholds of one site and how many sample pages (``M``) gave them."""

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


TABLE = XpathThresholds.__table__


def create_thresholds_table(engine: Engine) -> None:
    """Create ``xpath_thresholds`` when it is missing (idempotent)."""
    TABLE.create(engine, checkfirst=True)


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


def thresholds_params(session: Session, site: str) -> dict[str, float]:
    """Keyword arguments for ``extract_xpath``: the site's thresholds, or ``{}`` (defaults)."""
    found = load_thresholds(session, site)
    return found.as_params() if found is not None else {}
