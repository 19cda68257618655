"""Crawl and nightly runs in SQL: the ``crawl_runs`` row of a crawl, the rows of
``scrapy nightly``, the site history, and the stored-URL check of incremental crawls.

The caller owns sessions and transactions (SQLAlchemy ``session_basics``): every function
takes a ``Session`` and never commits. Rows are turned into
:class:`newsspider.nightly.report.SiteRun` values here, so the report and health checks
stay pure and never see SQLAlchemy.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import case, exists, func, select, update
from sqlalchemy.orm import Session

from newsspider.nightly.report import SiteRun, merge_site_runs

from .models import Article, CrawlRun, NightlyRun, NightlySiteRun, utcnow

__all__ = [
    "finish_crawl_run",
    "finish_nightly_run",
    "finish_site_run",
    "link_site_run",
    "mark_killed_runs",
    "mark_killed_site_runs",
    "nightly_run",
    "nightly_site_runs",
    "recent_site_runs",
    "save_site_report",
    "site_run",
    "site_run_status",
    "start_crawl_run",
    "start_nightly_run",
    "url_is_stored",
]

logger = logging.getLogger(__name__)


# -- crawl runs -----------------------------------------------------------------------------


def start_crawl_run(session: Session, site: str) -> int:
    """Insert the ``running`` ``crawl_runs`` row of a crawl that opens; return its id."""
    run = CrawlRun(site=site, started_at=utcnow(), status="running")
    session.add(run)
    session.flush()
    return run.id


def finish_crawl_run(session: Session, crawl_run_id: int, **figures: Any) -> None:
    """Write a crawl's final figures (columns of ``CrawlRun``: ``status``, counts...) and
    its ``finished_at`` (now)."""
    unknown = set(figures) - set(CrawlRun.__table__.c.keys())
    if unknown:
        raise ValueError(f"unknown crawl_runs columns: {sorted(unknown)}")
    run = session.get(CrawlRun, crawl_run_id)
    if run is None:
        raise LookupError(f"no crawl_runs row {crawl_run_id}")
    run.finished_at = utcnow()
    for name, value in figures.items():
        setattr(run, name, value)


# -- incremental crawling -------------------------------------------------------------------


def url_is_stored(session: Session, url: str) -> bool:
    """Is ``url`` a stored article?  One lookup on the unique index of ``articles.url``."""
    return bool(session.scalar(select(exists().where(Article.url == url))))


# -- nightly runs ---------------------------------------------------------------------------


def start_nightly_run(
    session: Session, *, host: str, pid: int, sites: Sequence[str], workers: int | None = None
) -> int:
    """Insert the ``running`` row of a new nightly run; return its id (``workers``: 1 for
    a cluster run, whose last worker sets the final count; None on one machine)."""
    run = NightlyRun(
        host=host, pid=pid, sites=",".join(sites), status="running", workers=workers
    )
    session.add(run)
    session.flush()
    return run.id


def mark_killed_runs(
    session: Session,
    host: str | None = None,
    *,
    current: int | None = None,
    ids: Sequence[int] | None = None,
) -> list[int]:
    """Mark this host's nightly runs still ``running`` as ``killed``; return their ids.

    Called while holding the host's lock, so no other nightly process on ``host`` is
    alive: a ``running`` row of this host is one whose process died (SIGKILL, OOM, power
    loss). Rows of other hosts sharing the database are left alone, and so are cluster
    runs (``workers`` set), which outlive any one worker: their founder's host proves
    nothing; the next cluster run closes a dead one by its id (``ids`` instead of
    ``host``: those runs, if still ``running``). Their site rows get outcome ``killed``
    and their ``crawl_runs`` rows status ``killed``, so neither counts as a finished run
    in a later report or health baseline.
    """
    conditions = [NightlyRun.status == "running"]
    if ids is not None:
        conditions.append(NightlyRun.id.in_(list(ids)))
    else:
        conditions += [NightlyRun.host == host, NightlyRun.workers.is_(None)]
    if current is not None:
        conditions.append(NightlyRun.id != current)
    ids = list(session.scalars(select(NightlyRun.id).where(*conditions)))
    if not ids:
        return []
    session.execute(update(NightlyRun).where(NightlyRun.id.in_(ids)).values(status="killed"))
    crawl_ids = list(
        session.scalars(
            select(NightlySiteRun.crawl_run_id).where(
                NightlySiteRun.nightly_run_id.in_(ids),
                NightlySiteRun.crawl_run_id.is_not(None),
            )
        )
    )
    session.execute(
        update(NightlySiteRun)
        .where(NightlySiteRun.nightly_run_id.in_(ids), NightlySiteRun.outcome.is_(None))
        .values(outcome="killed")
    )
    if crawl_ids:
        session.execute(
            update(CrawlRun)
            .where(CrawlRun.id.in_(crawl_ids), CrawlRun.status == "running")
            .values(status="killed")
        )
    return ids


def mark_killed_site_runs(session: Session, nightly_run_id: int) -> list[str]:
    """Mark the run's site rows still without an outcome ``killed``; return their sites.

    For the last worker of a cluster run: every other worker has left it or was dropped
    as dead (no heartbeat for ``CLUSTER_WORKER_TIMEOUT``), so an unfinished row is a
    dead worker's; its ``crawl_runs`` row gets status ``killed`` too.
    """
    rows = list(
        session.scalars(
            select(NightlySiteRun).where(
                NightlySiteRun.nightly_run_id == nightly_run_id, NightlySiteRun.outcome.is_(None)
            )
        )
    )
    for row in rows:
        row.outcome = "killed"
        row.note = "its worker died mid-crawl (no heartbeat for CLUSTER_WORKER_TIMEOUT)"
    crawl_ids = [r.crawl_run_id for r in rows if r.crawl_run_id is not None]
    if crawl_ids:
        session.execute(
            update(CrawlRun)
            .where(CrawlRun.id.in_(crawl_ids), CrawlRun.status == "running")
            .values(status="killed")
        )
    session.flush()
    return sorted({r.site for r in rows})


def link_site_run(
    session: Session, *, nightly_run_id: int, site: str, crawl_run_id: int | None
) -> int:
    """Insert a site's row as its spider opens (outcome NULL until it finishes)."""
    row = NightlySiteRun(nightly_run_id=nightly_run_id, site=site, crawl_run_id=crawl_run_id)
    session.add(row)
    session.flush()
    return row.id


def finish_site_run(
    session: Session,
    site_run_id: int | None,
    *,
    nightly_run_id: int,
    site: str,
    crawl_run_id: int | None,
    **figures: Any,
) -> int:
    """Write a site's final figures (columns of ``NightlySiteRun``); return the row id.

    ``site_run_id`` None (the spider never opened) inserts the row instead.
    """
    unknown = set(figures) - set(NightlySiteRun.__table__.c.keys())
    if unknown:
        raise ValueError(f"unknown nightly_site_runs columns: {sorted(unknown)}")
    if site_run_id is None:
        site_run_id = link_site_run(
            session, nightly_run_id=nightly_run_id, site=site, crawl_run_id=crawl_run_id
        )
    session.execute(
        update(NightlySiteRun).where(NightlySiteRun.id == site_run_id).values(**figures)
    )
    return site_run_id


def site_run_status(session: Session, crawl_run_id: int) -> str | None:
    """``crawl_runs.status`` of a crawl (``finished``/``failed``), None without the row."""
    return session.scalar(select(CrawlRun.status).where(CrawlRun.id == crawl_run_id))


def save_site_report(session: Session, crawl_run_id: int, text: str) -> None:
    """Keep a site's part of the report in its ``crawl_runs.report``."""
    session.execute(update(CrawlRun).where(CrawlRun.id == crawl_run_id).values(report=text))


def finish_nightly_run(
    session: Session,
    nightly_run_id: int,
    *,
    exit_code: int,
    report: str,
    workers: int | None = None,
) -> None:
    """Close the run's row: ``finished`` (exit status 0) or ``failed``, with the report
    (and, for a cluster run, the number of workers that joined it)."""
    values: dict[str, Any] = {
        "finished_at": utcnow(),
        "status": "finished" if exit_code == 0 else "failed",
        "exit_code": exit_code,
        "report": report,
    }
    if workers is not None:
        values["workers"] = workers
    session.execute(update(NightlyRun).where(NightlyRun.id == nightly_run_id).values(**values))


def nightly_run(session: Session, nightly_run_id: int) -> NightlyRun:
    """The ``nightly_runs`` row (its start time, founder and sites)."""
    row = session.get(NightlyRun, nightly_run_id)
    if row is None:
        raise LookupError(f"no nightly_runs row {nightly_run_id}")
    return row


# -- SiteRun values for the report ------------------------------------------------------------


def _counts(crawl: CrawlRun | None, column: str) -> dict[str, int]:
    """A JSON ``{reason: count}`` column of ``crawl_runs``; empty when absent or unreadable."""
    text = getattr(crawl, column, None) if crawl is not None else None
    if not text:
        return {}
    try:
        return {str(k): int(v) for k, v in json.loads(text).items()}
    except (ValueError, TypeError, AttributeError):
        logger.warning("crawl run %s: unreadable %s %r", crawl.id, column, text)
        return {}


def _site_run(nsr: NightlySiteRun, crawl: CrawlRun | None) -> SiteRun:
    reasons = _counts(crawl, "drop_reasons")
    return SiteRun(
        site=nsr.site,
        outcome=nsr.outcome or "running",
        crawl_run_id=nsr.crawl_run_id,
        started_at=crawl.started_at if crawl else None,
        finished_at=crawl.finished_at if crawl else None,
        finish_reason=nsr.finish_reason,
        resumed=bool(nsr.resumed),
        requests=nsr.requests or 0,
        pages_fetched=crawl.pages_fetched if crawl else 0,
        pages_ok=nsr.pages_ok or 0,
        skipped_stored=nsr.skipped_stored or 0,
        items_new=crawl.items_new if crawl else 0,
        items_updated=crawl.items_updated if crawl else 0,
        items_dropped=crawl.items_dropped if crawl else 0,
        drop_reasons=reasons,
        errors=crawl.errors if crawl else 0,
        fetch_failures=(crawl.fetch_failures or 0) if crawl else 0,
        fetch_failure_reasons=_counts(crawl, "fetch_failure_reasons"),
        retries=(crawl.retries or 0) if crawl else 0,
        db_retries=(crawl.db_retries or 0) if crawl else 0,
        median_body_chars=nsr.median_body_chars,
        note=nsr.note or "",
        bodies=nsr.bodies or 0,
    )


def _with_crawl_runs(session: Session, rows: Iterable[NightlySiteRun]) -> list[SiteRun]:
    rows = list(rows)
    ids = [r.crawl_run_id for r in rows if r.crawl_run_id is not None]
    crawls = {c.id: c for c in session.scalars(select(CrawlRun).where(CrawlRun.id.in_(ids)))}
    return [_site_run(r, crawls.get(r.crawl_run_id) if r.crawl_run_id else None) for r in rows]


def site_run(session: Session, site_run_id: int) -> SiteRun:
    """One site crawl of a nightly run, with its ``crawl_runs`` counts."""
    row = session.get(NightlySiteRun, site_run_id)
    if row is None:
        raise LookupError(f"no nightly_site_runs row {site_run_id}")
    return _with_crawl_runs(session, [row])[0]


def nightly_site_runs(session: Session, nightly_run_id: int) -> list[SiteRun]:
    """Every site row of a nightly run, oldest first: one per site on one machine, one per
    worker and site in a cluster run (``nightly.report.merge_site_runs`` sums them)."""
    rows = session.scalars(
        select(NightlySiteRun)
        .where(NightlySiteRun.nightly_run_id == nightly_run_id)
        .order_by(NightlySiteRun.id)
    )
    return _with_crawl_runs(session, rows)


def recent_site_runs(
    session: Session, site: str, *, exclude_nightly_run_id: int | None = None, limit: int = 7
) -> list[SiteRun]:
    """The site's last ``limit`` nightly crawls that ended ``ok``, newest first.

    The health baseline (``nightly.report.check_health``): failed, interrupted and killed
    crawls are left out, and so is the run being judged. A crawl is a row of a run on one
    machine, or all the rows of a cluster run (``nightly_runs.workers`` set; one row per
    worker), summed by ``merge_site_runs`` so the baseline compares a whole site's night
    with a whole site's night; such a crawl counts only when every worker's row is ``ok``.
    """
    # The crawl a row belongs to: itself (-id) on one machine, its run in a cluster.
    crawl = case(
        (NightlyRun.workers.is_(None), -NightlySiteRun.id), else_=NightlySiteRun.nightly_run_id
    )
    ok_rows = func.count(case((NightlySiteRun.outcome == "ok", 1)))
    query = (
        select(crawl)
        .join(NightlyRun, NightlyRun.id == NightlySiteRun.nightly_run_id)
        .where(NightlySiteRun.site == site)
        .group_by(crawl)
        .having(ok_rows == func.count())
        .order_by(func.max(NightlySiteRun.id).desc())
        .limit(limit)
    )
    if exclude_nightly_run_id is not None:
        query = query.where(NightlySiteRun.nightly_run_id != exclude_nightly_run_id)
    keys = list(session.scalars(query))
    if not keys:
        return []
    single = [-k for k in keys if k < 0]
    runs = [k for k in keys if k > 0]
    rows = list(
        session.scalars(
            select(NightlySiteRun)
            .where(
                NightlySiteRun.site == site,
                NightlySiteRun.id.in_(single) | NightlySiteRun.nightly_run_id.in_(runs),
            )
            .order_by(NightlySiteRun.id)
        )
    )
    local = set(single)
    by_crawl: dict[int, list[SiteRun]] = {}
    for row, value in zip(rows, _with_crawl_runs(session, rows), strict=True):
        key = -row.id if row.id in local else row.nightly_run_id
        by_crawl.setdefault(key, []).append(value)
    return [merge_site_runs(by_crawl[k])[0] for k in keys]
