"""Cluster mode: many crawl workers on one frontier shared in Redis, one corpus in PostgreSQL.

``-s REDIS_URL=redis://host:port/db`` switches a crawl to cluster mode
(:func:`cluster_settings`); without it nothing here is loaded and a crawl is exactly the
local one. In cluster mode:

- The scheduler, its FIFO queue and the duplicate filter are scrapy-redis's (pinned
  0.9.1): any number of workers, on any machine, take requests from the same Redis list
  and share one set of request fingerprints, so each URL is fetched once per run.
  scrapy-redis's spider classes lag behind Scrapy 2.13+'s asynchronous ``start()``, so
  they are not used; the scheduler, queue and filter are, and :mod:`.frontier` adds what
  its spiders would have: a run, seeded once, and workers that close when it is done.
- :mod:`.frontier`: :class:`~.frontier.ClusterWorker` joins the run (the first worker of a
  run clears the previous run's keys and seeds the start pages), keeps a heartbeat,
  closes the worker once the shared queue has been empty for ``CLUSTER_IDLE_CLOSE``
  seconds, and the last worker out deletes the run's keys, so Redis holds one run's URLs,
  never the corpus's history.
- :mod:`.rate`: :class:`~.rate.ClusterDownloader` keeps one domain within one crawler's
  ``CONCURRENT_REQUESTS_PER_DOMAIN`` and ``DOWNLOAD_DELAY`` (or AutoThrottle's longer
  delay) across every worker, through atomic Lua scripts right before each download.

The corpus side needs no cluster code: schema creation is an Alembic migration under a
PostgreSQL advisory lock (``storage/schema.py``), article upserts are by URL, line counts
are ``LC = LC + n`` upserts, and a site's batches are checked for duplicate pages and
counted one at a time across processes (``storage.db.seen_contents``).
"""

from __future__ import annotations

from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from scrapy.settings import BaseSettings

from newsspider.errors import UserError

from .connection import KEY_PREFIX, keys, redis_params

__all__ = ["check_redis", "cluster_settings", "enable_cluster", "is_cluster", "keys"]

#: Order of the cluster's components among the project's.
WORKER_ORDER = 40  # spider middleware: before the project's (none today)


def is_cluster(settings: BaseSettings) -> bool:
    """Whether ``settings`` ask for cluster mode (``REDIS_URL`` set and not empty)."""
    return bool(settings.get("REDIS_URL"))


def cluster_settings(settings: BaseSettings) -> dict[str, Any]:
    """The settings that turn a crawl into a cluster worker (scrapy-redis and ours)."""
    prefix = KEY_PREFIX
    spider_mw = dict(settings.getdict("SPIDER_MIDDLEWARES"))
    spider_mw["newsspider.cluster.frontier.ClusterWorker"] = WORKER_ORDER
    return {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.FifoQueue",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        # Never flush on close: the queue is the other workers' too; the last one out
        # deletes the run's keys (frontier.LEAVE).
        "SCHEDULER_PERSIST": True,
        "SCHEDULER_QUEUE_KEY": f"{prefix}:%(spider)s:requests",
        "SCHEDULER_DUPEFILTER_KEY": f"{prefix}:%(spider)s:dupefilter",
        "REDIS_PARAMS": redis_params(),
        "SPIDER_MIDDLEWARES": spider_mw,
        "DOWNLOADER": "newsspider.cluster.rate.ClusterDownloader",
        # A worker's JOBDIR would keep a local queue the shared scheduler never reads.
        "JOBDIR": None,
    }


def enable_cluster(settings: BaseSettings) -> bool:
    """Apply :func:`cluster_settings` to ``settings`` when ``REDIS_URL`` is set.

    Returns whether it did; without ``REDIS_URL`` the settings are left untouched.
    """
    if not is_cluster(settings):
        return False
    settings.setdict(cluster_settings(settings), priority="cmdline")
    return True


def check_redis(settings: BaseSettings) -> None:
    """In cluster mode, Redis answers one ``PING`` (one try), else a :class:`UserError`.

    A wrong ``REDIS_URL`` is a set-up mistake, reported before anything starts, as an
    unreachable database is (``newsspider/preflight.py``).
    """
    if not is_cluster(settings):
        return
    url = settings.get("REDIS_URL")
    try:
        Redis.from_url(url, socket_connect_timeout=5, socket_timeout=5).ping()
    except (RedisError, OSError, ValueError) as exc:
        raise UserError(f"cannot reach Redis at REDIS_URL={url}: {exc}") from exc
