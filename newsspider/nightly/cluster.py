"""``scrapy nightly`` with ``REDIS_URL``: one nightly run shared by every worker of a cluster.

Started on N machines (from the same timer), the N processes form **one** run:

1. **Join** (``newsspider/cluster/nightly.py``): instead of the host's ``flock``, one
   atomic step in Redis. The first worker founds the run, inserting the ``nightly_runs``
   row (``workers`` 1) in the shared database; the others join its id. A run whose
   workers all died is closed as ``killed`` by the next founder.
2. **Crawl** every site as a cluster crawl (``enable_cluster``): each site's frontier is
   seeded once per run and shares one duplicate filter, so each page is fetched once
   across the cluster. Each worker keeps its own ``crawl_runs`` row per site, linked to
   the one run by its own ``nightly_site_runs`` row. No ``JOBDIR``: the queue is Redis's.
3. **Leave** once this worker's sites are done and its rows committed. A worker that is
   not the last exits with its own sites' status and a line saying the report comes from
   the last worker. The **last** one marks the rows of dead workers ``killed``, re-cleans
   the sites that ended ``ok``, builds the report over every worker's rows (figures
   summed per site, health judged as on one machine) and closes the run's row.

A worker whose heartbeat is ``CLUSTER_WORKER_TIMEOUT`` old counts as dead: it can never
keep the run open. A worker started after every other one left founds the next run.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import TYPE_CHECKING

import newsspider.nightly.report as report
from newsspider.cluster import enable_cluster
from newsspider.cluster.connection import redis_client
from newsspider.cluster.nightly import NightlyMembership
from newsspider.storage import runs as runstore
from newsspider.storage import session as open_session
from newsspider.storage import transaction

from .run import NightlyResult, abort, crawl_sites, prepare, reclean_and_report

if TYPE_CHECKING:
    from scrapy.crawler import CrawlerProcessBase

__all__ = ["run_cluster_nightly"]

logger = logging.getLogger(__name__)


def run_cluster_nightly(
    process: CrawlerProcessBase, sites: list[str], spargs: dict[str, str], *, growth: float
) -> NightlyResult:
    """This process's part in the cluster's nightly run (see the module docstring).

    The exit status is the whole run's for the last worker (it writes the report), this
    worker's own sites' otherwise.
    """
    settings = process.settings
    enable_cluster(settings)
    engine = prepare(process)
    host, pid = socket.gethostname(), os.getpid()
    membership = NightlyMembership(
        redis_client(settings),
        f"{host}:{pid}",
        timeout=settings.getfloat("CLUSTER_WORKER_TIMEOUT"),
    )

    def start_run(previous: int | None) -> int:
        with transaction(engine) as session:
            if previous is not None and runstore.mark_killed_runs(session, ids=[previous]):
                logger.warning(
                    "cluster nightly run %s: every worker died before it ended; marked killed",
                    previous,
                )
            return runstore.start_nightly_run(session, host=host, pid=pid, sites=sites, workers=1)

    nightly_id = membership.join(start_run)
    logger.info(
        "nightly run %s (cluster worker %s): %s", nightly_id, membership.worker, ", ".join(sites)
    )
    try:
        crawls, _ = crawl_sites(process, engine, sites, spargs, nightly_id, jobdirs=False)
        with open_session(engine) as session:
            own = [runstore.site_run(session, c.site_run_id) for c in crawls if c.site_run_id]
    except BaseException as exc:
        if membership.leave().last:
            abort(engine, nightly_id, exc)
        raise
    left = membership.leave()
    if not left.last:
        status = report.exit_status(own)
        outcomes = ", ".join(f"{r.site} {r.outcome}" for r in own)
        if left.gone:
            why = "the run ended without it (this worker was taken for dead)"
        else:
            why = (
                "the run report comes from the last worker to finish "
                f"({left.remaining} still running)"
            )
        text = (
            f"nightly run {nightly_id} (cluster): worker {membership.worker} finished its part "
            f"({outcomes}), exit status {status}; {why}"
        )
        logger.info("%s", text)
        return NightlyResult(status, text)
    try:
        with transaction(engine) as session:
            dead = runstore.mark_killed_site_runs(session, nightly_id)
        if dead:
            logger.warning(
                "nightly run %s: a worker died while crawling %s", nightly_id, ", ".join(dead)
            )
        with open_session(engine) as session:
            rows = runstore.nightly_site_runs(session, nightly_id)
            started_at = runstore.nightly_run(session, nightly_id).started_at
        workers = len(left.workers)
        plural = "s" if workers != 1 else ""
        label = f"a cluster of {workers} worker{plural} ({', '.join(left.workers)})"
        return reclean_and_report(
            settings, engine, rows, nightly_id, label, started_at, growth, workers=workers
        )
    except BaseException as exc:
        abort(engine, nightly_id, exc)
        raise
