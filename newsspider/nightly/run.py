"""One nightly run, start to end: lock, crawl every site, record, re-clean, report.

What one run does, in this order:

1. **Lock** (``lock.py``): a second start raises :class:`~.lock.LockHeld`, which the
   command turns into exit status 75.
2. **Crawl every site concurrently** (``crawl.py``). The sites share one engine (one
   SQLite writer at a time, ``NEWS_DB_BUSY_TIMEOUT`` for the others; short transactions
   of ``NEWS_DB_BATCH`` articles). One site that fails does not stop the others.
3. **Incremental**: ``INCREMENTAL`` is on (``newsspider.incremental.StoredUrlFilter``),
   so an article URL already in ``articles`` is never downloaded again; ``-s
   INCREMENTAL=False`` refreshes everything instead.
4. **Resumable** (``jobdir.py``): each site crawls with ``JOBDIR = NIGHTLY_JOBDIR/<site>``;
   a cleanly stopped crawl is resumed by a start within ``NIGHTLY_RESUME_HOURS``.
   Every fetched page is kept (``warc.py``): ``NIGHTLY_WARC_DIR/<site>/<date>.warc.gz``,
   appended to by a second run that day, for ``scrapy reextract``.
5. **Record**: ``CorpusPipeline`` writes each site's ``crawl_runs`` row; the run adds
   ``nightly_runs`` (the run) and ``nightly_site_runs`` (per site: outcome, requests,
   skipped, median body length).
6. **Re-clean** (``newsspider.storage.reclean``, Li & Jiang 2012 §2.2 applied again to
   stored articles) every site whose crawl ended ``ok`` and whose line table grew by
   ``RECLEAN_GROWTH`` (0 turns it off) since its last re-clean.
7. **Report** (``report.py``): kept in ``nightly_runs.report`` and each site's part in its
   ``crawl_runs.report``, with a WARNING line for each site figure outside its recent
   range, and per site what failed on the way: requests that got no page after their
   retries, by reason (``http_404``, ``timeout``, ``connection_lost``…), downloads
   retried and write batches that waited for the database. A crawl closed because the
   database stayed unavailable (``database_unavailable``) counts as a failed site.

Exit status: 0; 1 when a site failed entirely (the crawl raised, storing failed, or no
page came back 2xx) or a re-clean failed.

With ``REDIS_URL`` (cluster mode) the lock is the cluster's, held in Redis, and the run is
shared by every worker started on any machine: ``cluster.py`` in this package.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from scrapy.settings import SETTINGS_PRIORITIES

import newsspider.nightly.report as report
from newsspider.coverage.gapfill import GapFill
from newsspider.incremental import PRIORITY, StoredUrlFilter
from newsspider.paths import project_path
from newsspider.storage import (
    Engine,
    create_schema,
    engine_from_settings,
    reclean_if_due,
    transaction,
)
from newsspider.storage import runs as runstore
from newsspider.storage import session as open_session

from .crawl import SiteCrawl
from .jobdir import prepare_jobdir
from .lock import RunLock
from .warc import enable_recording

if TYPE_CHECKING:
    from scrapy.crawler import CrawlerProcessBase
    from scrapy.settings import Settings

__all__ = [
    "NightlyResult", "abort", "crawl_sites", "prepare", "project_path", "reclean_and_report",
    "run_nightly",
]  # fmt: skip

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class NightlyResult:
    """How a nightly run ended: its exit status and the report to print."""

    exit_code: int
    report: str


def run_nightly(
    process: CrawlerProcessBase,
    sites: list[str],
    spargs: dict[str, str],
    *,
    growth: float,
) -> NightlyResult:
    """Run the nightly crawl of ``sites`` in ``process`` under the host's lock.

    ``spargs`` go to every site's spider; ``growth`` is ``RECLEAN_GROWTH`` (0: no
    re-clean), checked by the caller. Raises :class:`~.lock.LockHeld` when another run
    holds the lock (nothing is started then). With ``REDIS_URL`` the command calls
    :func:`.cluster.run_cluster_nightly` instead: one worker of the cluster's run.
    """
    with RunLock(project_path(process.settings.get("NIGHTLY_LOCK"))):
        return _run_locked(process, sites, spargs, growth)


def _enable_incremental(settings: Settings) -> None:
    """INCREMENTAL on unless given on the command line; the middleware in the chain.

    Set at ``cmdline`` priority: a command's ``default_settings`` rank below the
    project's ``settings.py``, which keeps it off for plain crawls.
    """
    if (settings.getpriority("INCREMENTAL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
        settings.set("INCREMENTAL", True, priority="cmdline")
    settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", StoredUrlFilter, PRIORITY)
    if settings.get("JOBDIR"):
        logger.warning(
            "JOBDIR=%s is ignored: nightly gives each site its own under NIGHTLY_JOBDIR",
            settings.get("JOBDIR"),
        )


def prepare(process: CrawlerProcessBase) -> Engine:
    """What every nightly process does before its run starts: INCREMENTAL on, pages
    recorded, and the database's schema at head; returns the engine."""
    _enable_incremental(process.settings)
    warc_setting = process.settings.get("NIGHTLY_WARC_DIR")  # "" turns recording off
    warc_root = project_path(warc_setting) if warc_setting else None
    enable_recording(process.settings, warc_root, today=datetime.now(UTC).date())
    engine = engine_from_settings(process.settings)
    create_schema(engine)
    return engine


def _run_locked(
    process: CrawlerProcessBase, sites: list[str], spargs: dict[str, str], growth: float
) -> NightlyResult:
    engine = prepare(process)
    host = socket.gethostname()
    with transaction(engine) as session:
        killed = runstore.mark_killed_runs(session, host)
        nightly_id = runstore.start_nightly_run(session, host=host, pid=os.getpid(), sites=sites)
    if killed:
        logger.warning(
            "nightly runs %s on %s never finished (killed?): marked killed", killed, host
        )
    logger.info("nightly run %s: %s", nightly_id, ", ".join(sites))
    gapfill = GapFill(process, engine) if process.settings.getbool("COVERAGE_ENABLED") else None
    try:
        crawls, started_at = crawl_sites(
            process, engine, sites, spargs, nightly_id, gapfill=gapfill
        )
        with open_session(engine) as session:
            rows = [runstore.site_run(session, c.site_run_id) for c in crawls if c.site_run_id]
        return reclean_and_report(
            process.settings, engine, rows, nightly_id, host, started_at, growth,
            coverage=gapfill.report_lines(sites) if gapfill is not None else (),
        )  # fmt: skip
    except BaseException as exc:
        abort(engine, nightly_id, exc)
        raise


def crawl_sites(
    process: CrawlerProcessBase,
    engine: Engine,
    sites: list[str],
    spargs: dict[str, str],
    nightly_id: int,
    *,
    jobdirs: bool = True,
    gapfill: GapFill | None = None,
) -> tuple[list[SiteCrawl], datetime]:
    """Crawl every site in ``process`` and settle each one's row; the crawls and when
    they started. ``jobdirs`` False: no ``JOBDIR`` (a cluster worker's queue is Redis's).
    ``gapfill``: each site's coverage is compared and its gap filled after its crawl."""
    s = process.settings
    started_at = datetime.now(UTC)
    jobs_setting = s.get("NIGHTLY_JOBDIR") if jobdirs else ""  # "" turns JOBDIR off
    jobs_root = project_path(jobs_setting) if jobs_setting else None
    max_age = timedelta(hours=s.getfloat("NIGHTLY_RESUME_HOURS"))
    crawls: list[SiteCrawl] = []
    for site in sites:
        crawler = process.create_crawler(site)
        job = None
        if jobs_root is not None:
            job = prepare_jobdir(jobs_root / site, now=started_at, max_age=max_age)
            if job.note:  # a resume is news; discarded state is worth a look
                level = logging.INFO if job.resumed else logging.WARNING
                logger.log(level, "%s: %s", site, job.note)
            crawler.settings.set("JOBDIR", str(job.path), priority="cmdline")
        crawl = SiteCrawl(site, crawler, job, engine, nightly_id)
        crawl.connect()
        started = process.crawl(crawler, **spargs)
        crawl.watch(started)
        if gapfill is not None:
            gapfill.after(site, crawler, started)
        crawls.append(crawl)
    process.start()

    finished = datetime.now(UTC)
    for c in crawls:
        c.finish(now=finished)
    return crawls, started_at


def reclean_and_report(
    s: Settings,
    engine: Engine,
    rows: list[report.SiteRun],
    nightly_id: int,
    host: str,
    started_at: datetime,
    growth: float,
    *,
    workers: int | None = None,
    coverage: Sequence[str] = (),
) -> NightlyResult:
    """Re-clean the sites that ended ``ok``, then report on ``rows`` (the run's site rows;
    a cluster run's, one per worker and site, are summed per site) and close the run.
    ``coverage``: the coverage lines (``newsspider.coverage``), reported before re-cleaning."""
    runs = report.merge_site_runs(rows)
    ok_sites = [r.site for r in runs if r.outcome == report.OK]
    extra, reclean_failures = _reclean(
        engine, ok_sites, growth, L=s.getint("LINEHASH_L"), min_RC=s.getint("RECLEAN_MIN_RC")
    )
    policy = report.HealthPolicy(
        window=s.getint("NIGHTLY_HEALTH_RUNS"), k=s.getfloat("NIGHTLY_HEALTH_K")
    )
    return _report(
        engine, rows, runs, nightly_id, host, started_at, [*coverage, *extra],
        reclean_failures, policy, workers=workers,
    )  # fmt: skip


def _reclean(
    engine: Engine, sites: list[str], growth: float, *, L: int, min_RC: int
) -> tuple[list[str], int]:
    """Re-clean the sites whose line table grew enough; report lines and failures."""
    if growth <= 0:
        return ["reclean: off (RECLEAN_GROWTH = 0)"], 0
    lines: list[str] = []
    failures = 0
    for site in sites:
        try:
            reports = reclean_if_due(engine, site, growth, L=L, min_RC=min_RC)
        except Exception:
            # Any failure here (database, a bug) must not cost the crawl report: it is
            # logged with its traceback, named in the report, and makes the exit status 1.
            logger.exception("reclean of %s failed", site)
            failures += 1
            lines.append(f"reclean: {site} FAILED (see the log)")
            continue
        for key, found in reports.items():
            figures = found.as_dict()
            lines.append(f"reclean: {key}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    if not lines:
        lines.append(f"reclean: no site due (RECLEAN_GROWTH = {growth:g})")
    return lines, failures


def _report(
    engine: Engine,
    rows: list[report.SiteRun],
    site_runs: list[report.SiteRun],
    nightly_id: int,
    host: str,
    started_at: datetime,
    extra: list[str],
    other_failures: int,
    policy: report.HealthPolicy,
    *,
    workers: int | None = None,
) -> NightlyResult:
    """Build, store and log the report: on ``site_runs`` (one per site), each site's part
    kept in the ``crawl_runs`` row of each of its ``rows``."""
    with open_session(engine) as session:
        history = {
            r.site: runstore.recent_site_runs(
                session, r.site, exclude_nightly_run_id=nightly_id, limit=policy.window
            )
            for r in site_runs
        }
    warnings = {r.site: report.check_health(r, history[r.site], policy) for r in site_runs}
    sizes = {site: report.history_size(h, policy) for site, h in history.items()}
    exit_code = report.exit_status(site_runs, other_failures=other_failures)
    text = report.nightly_report(
        site_runs,
        warnings,
        nightly_run_id=nightly_id,
        host=host,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        exit_code=exit_code,
        history_runs=sizes,
        policy=policy,
        extra=extra,
    )
    site_texts = {
        r.site: report.site_report(
            r, warnings[r.site], history_runs=sizes[r.site], policy=policy,
            nightly_run_id=nightly_id,
        )
        for r in site_runs
    }  # fmt: skip
    with transaction(engine) as session:
        for r in rows:
            if r.crawl_run_id is not None:
                runstore.save_site_report(session, r.crawl_run_id, site_texts[r.site])
        runstore.finish_nightly_run(
            session, nightly_id, exit_code=exit_code, report=text, workers=workers
        )
    for site_warnings in warnings.values():
        for w in site_warnings:
            logger.warning("health: %s", w.message)
    for r in site_runs:
        if r.outcome == report.FAILED:
            logger.error("%s failed: %s", r.site, r.note)
    return NightlyResult(exit_code, text)


def abort(engine: Engine, nightly_id: int, exc: BaseException) -> None:
    """Close the run's row as failed when the run itself breaks, then let it raise.

    Best effort: when the database is what broke, the row stays ``running`` and the next
    run on this host marks it ``killed``.
    """
    try:
        with transaction(engine) as session:
            runstore.finish_nightly_run(
                session,
                nightly_id,
                exit_code=1,
                report=f"nightly run {nightly_id} aborted: {type(exc).__name__}: {exc}",
            )
    except Exception:
        logger.exception("could not record the end of nightly run %s", nightly_id)

