"""Re-cleaning stored articles with the matured line table (Li & Jiang 2012 §2.2).

The line table learns as it goes: a boilerplate line is kept on the first page that shows
it (``LC = 1 <= int(1 + RC/L)``), and a line that repeats slowly (a footer on one page in
ten) is kept until its ``LC`` outgrows the threshold. The paper admits this weakness: the
first pages of a site keep their boilerplate. Every article stores the extracted body
before cleaning (``raw_text``), so once the table has matured :func:`reclean` runs it over
them again with :meth:`SqlLineTable.apply` (filter only, no learning: the pages were
counted when they were crawled) and rewrites ``content`` where the lines differ.

A re-clean can also *restore* lines: the threshold grows with ``RC``, so a line that a few
early pages shared and that never came back is body again by today's table.

``site_reclean`` (``models.SiteReclean``) remembers the ``RC`` of each site's last
re-clean, so :func:`reclean_due` can say when the table has grown enough (by a factor,
the setting ``RECLEAN_GROWTH``) for another pass to be worth its time; a site never
re-cleaned waits for ``RECLEAN_MIN_RC`` pages, before which the table is too young to know
more than it knew while crawling. Both defaults come from ``settings.py``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from newsspider import settings as defaults
from newsspider.extraction.linehash import DEFAULT_L, split_lines

from .db import dialect_insert
from .lines import SqlLineTable
from .models import Article, SiteLineStats, SiteReclean, utcnow

logger = logging.getLogger(__name__)

#: Articles read, re-cleaned and committed per transaction.
BATCH = 500

ARTICLES = Article.__table__

#: ``progress`` of a re-clean: called with the number of articles just examined (a
#: command's bar); None: no report. Storage never draws one itself.
Progress = Callable[[int], None]


@dataclass(slots=True)
class RecleanReport:
    """What a re-clean did to one site.

    ``articles`` were examined, ``changed`` had their ``content`` rewritten;
    ``lines_removed`` were in the old content and are not in the new (boilerplate the young
    table missed), ``lines_restored`` the reverse. ``RC`` is the table's page count used.
    """

    articles: int = 0
    changed: int = 0
    lines_removed: int = 0
    lines_restored: int = 0
    RC: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def reclean(
    session: Session,
    site: str | None = None,
    *,
    L: int = DEFAULT_L,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> dict[str, RecleanReport]:
    """Re-apply each site's line table to the ``raw_text`` of its stored articles.

    ``site=None`` does every site that has articles. Articles are read by id in batches of
    ``batch`` (keyset pagination, so memory stays constant) and **the session is committed
    after every batch** and at the end: a long re-clean must not hold SQLite's write lock
    for minutes while a crawl waits, so pass a session that is not inside a
    ``session.begin()`` block. A site whose table has counted nothing is skipped (there is
    nothing to apply). An update only lands if the article's ``raw_text`` is still the one
    re-cleaned (``content_md5`` unchanged): a crawl re-fetching the page meanwhile wins.
    ``progress(n)`` is called after each batch with the articles it examined.
    """
    if batch < 1:
        raise ValueError("batch must be at least 1")
    if site is None:
        sites = list(session.scalars(select(ARTICLES.c.site).distinct().order_by(ARTICLES.c.site)))
    else:
        sites = [site]
    reports: dict[str, RecleanReport] = {}
    for key in sites:
        reports[key] = _reclean_site(session, key, L, batch, progress)
    return reports


def _reclean_site(
    session: Session, site: str, L: int, batch: int, progress: Progress | None
) -> RecleanReport:
    RC = session.scalar(select(SiteLineStats.RC).where(SiteLineStats.site == site)) or 0
    report = RecleanReport(RC=RC)
    if RC == 0:
        logger.info("reclean %s: the line table has counted no page, nothing to apply", site)
        session.commit()
        return report
    table = SqlLineTable(session, site, L=L)
    last_id = 0
    while True:
        rows = session.execute(
            select(ARTICLES.c.id, ARTICLES.c.raw_text, ARTICLES.c.content, ARTICLES.c.content_md5)
            .where(ARTICLES.c.site == site, ARTICLES.c.id > last_id)
            .order_by(ARTICLES.c.id)
            .limit(batch)
        ).all()
        if not rows:
            break
        for row in rows:
            report.articles += 1
            result = table.apply(row.raw_text)
            old, new = split_lines(row.content), split_lines(result.text)
            if old == new:
                continue
            done = session.execute(
                update(ARTICLES)
                .where(ARTICLES.c.id == row.id, ARTICLES.c.content_md5 == row.content_md5)
                .values(content=result.text)
            ).rowcount
            if done:
                report.changed += 1
                report.lines_removed += sum((Counter(old) - Counter(new)).values())
                report.lines_restored += sum((Counter(new) - Counter(old)).values())
        last_id = rows[-1].id
        session.commit()
        if progress is not None:
            progress(len(rows))
    _record(session, site, report)
    session.commit()
    logger.info(
        "reclean %s at RC=%s: %s articles, %s changed, %s lines removed, %s restored",
        site, RC, report.articles, report.changed, report.lines_removed, report.lines_restored,
    )  # fmt: skip
    return report


def _record(session: Session, site: str, report: RecleanReport) -> None:
    values = {
        "site": site,
        "last_reclean_RC": report.RC,
        "reclean_at": utcnow(),
        "articles": report.articles,
        "changed": report.changed,
        "lines_removed": report.lines_removed,
        "lines_restored": report.lines_restored,
    }
    table = SiteReclean.__table__
    stmt = dialect_insert(session, table).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=[table.c.site],
        set_={k: stmt.excluded[k] for k in values if k != "site"},
    )
    session.execute(stmt)


def run_reclean(
    engine: Engine,
    site: str | None = None,
    *,
    L: int = DEFAULT_L,
    growth: float | None = None,
    min_RC: int = defaults.RECLEAN_MIN_RC,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> dict[str, RecleanReport]:
    """``scrapy reclean`` in one call: the stored sites (or ``site``), optionally only those
    :func:`reclean_due` with ``growth``, each re-cleaned in its own session
    (:func:`reclean_plan`, then :func:`reclean_sites`).

    Raises ``LookupError`` for a ``site`` without stored articles.
    """
    plan = reclean_plan(engine, site, growth=growth, min_RC=min_RC)
    return reclean_sites(engine, plan, L=L, batch=batch, progress=progress)


def reclean_plan(
    engine: Engine,
    site: str | None = None,
    *,
    growth: float | None = None,
    min_RC: int = defaults.RECLEAN_MIN_RC,
) -> dict[str, int]:
    """The sites :func:`run_reclean` re-cleans, each with its stored article count (the
    work ahead, e.g. a bar's total): the stored sites (or ``site``), with ``growth`` only
    those :func:`reclean_due`.

    Raises ``LookupError`` for a ``site`` without stored articles.
    """
    with Session(engine) as session:
        stored: dict[str, int] = {
            key: n
            for key, n in session.execute(
                select(ARTICLES.c.site, func.count())
                .group_by(ARTICLES.c.site)
                .order_by(ARTICLES.c.site)
            )
        }
        if site is not None and site not in stored:
            raise LookupError(f"no stored articles of site {site!r}")
        sites = [site] if site is not None else list(stored)
        if growth is not None:
            sites = [k for k in sites if reclean_due(session, k, growth, min_RC=min_RC)]
    return {k: stored[k] for k in sites}


def reclean_sites(
    engine: Engine,
    plan: Mapping[str, int],
    *,
    L: int = DEFAULT_L,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> dict[str, RecleanReport]:
    """Re-clean the sites of ``plan`` (:func:`reclean_plan`), each in its own session.

    ``progress(n)`` is called with the articles examined; once a site is done, with what
    is left of its planned count too (a site whose table has counted nothing is skipped
    whole, and a crawl may delete articles meanwhile), so the calls add up to at least the
    plan's total.
    """
    reports: dict[str, RecleanReport] = {}
    for key, planned in plan.items():
        with Session(engine) as session:
            report = reclean(session, key, L=L, batch=batch, progress=progress)[key]
        reports[key] = report
        if progress is not None and planned > report.articles:
            progress(planned - report.articles)
    return reports


def reclean_due(
    session: Session, site: str, growth: float, *, min_RC: int = defaults.RECLEAN_MIN_RC
) -> bool:
    """Whether ``site``'s table has grown enough since its last re-clean to run another.

    Due when ``RC >= growth * last_reclean_RC`` (and ``RC`` moved at all); a site never
    re-cleaned is due once ``RC >= min_RC``. With ``growth = 2`` re-cleans happen at
    ``RC`` 100, 200, 400, ...: their total cost stays proportional to the corpus, while
    the table doubles its evidence between passes.
    """
    if growth < 1:
        raise ValueError("growth must be at least 1")
    RC = session.scalar(select(SiteLineStats.RC).where(SiteLineStats.site == site)) or 0
    last = session.scalar(select(SiteReclean.last_reclean_RC).where(SiteReclean.site == site))
    if not last:
        return RC >= min_RC
    return RC > last and RC >= growth * last


def reclean_if_due(
    engine: Engine,
    site: str,
    growth: float,
    *,
    L: int = DEFAULT_L,
    min_RC: int = defaults.RECLEAN_MIN_RC,
) -> dict[str, RecleanReport]:
    """Re-clean ``site`` when :func:`reclean_due` says so (the nightly run's step); ``{}``
    when it is not due. Its own session, committed per batch by :func:`reclean`."""
    with Session(engine) as session:
        if not reclean_due(session, site, growth, min_RC=min_RC):
            return {}
        return reclean(session, site, L=L)
