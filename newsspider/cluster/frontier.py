"""A worker's part in a cluster run: join, seed once, heartbeat, idle-close, leave.

A **run** of one spider is the time between the first worker joining an empty cluster
and the last worker leaving it. :data:`JOIN` (one Lua script, so atomic) drops workers
whose heartbeat is older than ``CLUSTER_WORKER_TIMEOUT``; when none is left, the joining
worker starts a new run: it deletes the previous run's queue and fingerprints (left by
workers that were all killed) and seeds the start pages, which no other worker of the run
does. Every worker refreshes its heartbeat while it runs. A worker closes once the shared
queue has been empty, and itself idle, for ``CLUSTER_IDLE_CLOSE`` seconds; :data:`LEAVE`
removes it, and the last worker out deletes the run's keys, so Redis never holds more
than one run's URLs.

A worker killed with SIGKILL loses the requests it had popped and not finished (those in
its downloader and its engine's hands, at most ``CONCURRENT_REQUESTS`` and the few
waiting for a slot), the articles of its batch not yet committed (``NEWS_DB_BATCH``), and
the links of a list page it had in flight. Their fingerprints stay in the run's duplicate
filter, so no other worker of the run fetches them: nothing requeues them after a
timeout. The **next run** fetches them: once the dead worker's heartbeat is older than
``CLUSTER_WORKER_TIMEOUT`` it starts from the start pages with a fresh filter, and with
``INCREMENTAL`` on (nightly, the worker unit of deploy/cluster) every stored article is
skipped, so it fetches exactly what is missing (tests/test_cluster_faults.py).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import AsyncIterator
from typing import Any, Self

from redis import Redis
from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured
from twisted.internet.task import LoopingCall

from .connection import PRUNE_DEAD, Keys, keys, redis_client

__all__ = ["JOIN", "LEAVE", "ClusterWorker", "worker_id"]

logger = logging.getLogger(__name__)

#: Seconds between looks at the shared queue while idle: other workers fill it, and a
#: worker that looked less often would leave a freshly parsed list page's links to the
#: busy worker that found them (it pops at once).
POLL_SECONDS = 0.1
#: Looks per heartbeat (a heartbeat every half second).
BEAT_EVERY = 5

#: KEYS: workers, requests, dupefilter, run, fetched. ARGV: worker id, timeout, new run id.
#: Returns {1 if this worker starts the run else 0, the run id}.
JOIN = PRUNE_DEAD + """
local new = 0
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  redis.call('SET', KEYS[4], ARGV[3])
  new = 1
end
redis.call('HSET', KEYS[1], ARGV[1], tostring(now))
return {new, redis.call('GET', KEYS[4])}
"""

#: KEYS: workers, fetched. ARGV: worker id, its fetches so far. The heartbeat, in Redis
#: time (one clock for all), with the worker's fetch count for the run's total.
HEARTBEAT = """
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], ARGV[1], tostring(tonumber(t[1]) + tonumber(t[2]) / 1000000))
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""

#: KEYS: workers, requests, dupefilter, run, fetched. ARGV: worker id, timeout, its fetches.
#: Returns {1 when this worker was the last one and deleted the run's keys else 0, the
#: fetches of every worker of the run so far (as their heartbeats reported them)}.
LEAVE = """
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[3])
local total = 0
for _, n in ipairs(redis.call('HVALS', KEYS[5])) do total = total + tonumber(n) end
""" + PRUNE_DEAD + """
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  return {1, total}
end
return {0, total}
"""


def worker_id(spider: str) -> str:
    """This process's name in a run: host, PID and spider."""
    return f"{socket.gethostname()}:{os.getpid()}:{spider}"


class ClusterWorker:
    """Spider middleware and signal handler: this process's part in a cluster run.

    As a spider middleware it passes the start requests through only in the worker that
    starts the run (:meth:`process_start`); its signal handlers keep the heartbeat, keep
    the spider open while the shared queue has work or has been empty for less than
    ``CLUSTER_IDLE_CLOSE`` seconds, and leave the run when the spider closes.
    """

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.get("REDIS_URL"):
            raise NotConfigured("REDIS_URL is not set")
        self.crawler = crawler
        self.idle_close = settings.getfloat("CLUSTER_IDLE_CLOSE")
        self.timeout = settings.getfloat("CLUSTER_WORKER_TIMEOUT")
        self.redis: Redis = redis_client(settings)
        self.keys: Keys | None = None
        self.worker = ""
        self.run_id: str | None = None
        self.seeder = False
        self.fetched = 0
        self._polls = 0
        self._idle_since: float | None = None
        self._loop: LoopingCall | None = None
        self._join_script = self.redis.register_script(JOIN)
        self._leave_script = self.redis.register_script(LEAVE)
        self._beat_script = self.redis.register_script(HEARTBEAT)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        worker = cls(crawler)
        crawler.signals.connect(worker.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(worker.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(worker.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(worker.response_received, signal=signals.response_received)
        return worker

    def _key_args(self) -> list[str]:
        assert self.keys is not None
        k = self.keys
        return [k.workers, k.requests, k.dupefilter, k.run, k.fetched]

    def join(self, spider: Spider) -> None:
        """Join (or start) the spider's run; idempotent."""
        if self.keys is not None:
            return
        self.keys = keys(spider.name)
        self.worker = worker_id(spider.name)
        new_run = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{self.worker}"
        started, run = self._join_script(keys=self._key_args(), args=[self.worker, self.timeout, new_run])
        self.seeder = bool(int(started))
        self.run_id = run.decode() if isinstance(run, bytes) else str(run)
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value("cluster/run", self.run_id)
            stats.set_value("cluster/worker", self.worker)
            stats.set_value("cluster/seeder", int(self.seeder))
        logger.info(
            "cluster worker %s %s run %s (queue %s)",
            self.worker,
            "starts" if self.seeder else "joins",
            self.run_id,
            self.keys.requests,
        )

    # -- spider middleware ------------------------------------------------------

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """The start requests, in the run's first worker only (seeded once per run)."""
        spider = self.crawler.spider
        assert spider is not None
        self.join(spider)
        seeded = 0
        async for item_or_request in start:
            if not self.seeder and isinstance(item_or_request, Request):
                continue
            seeded += isinstance(item_or_request, Request)
            yield item_or_request
        if self.seeder:
            logger.info("seeded %s start requests into the shared queue", seeded)

    # -- signals ------------------------------------------------------------------

    def spider_opened(self, spider: Spider) -> None:
        self.join(spider)
        self._loop = LoopingCall(self._poll)
        self._loop.start(POLL_SECONDS, now=False)

    def response_received(self, response: Any, request: Request, spider: Spider) -> None:
        self.fetched += 1
        self._idle_since = None

    def _poll(self) -> None:
        """A nudge to the engine so it pops shared work at once, and every
        :data:`BEAT_EVERY` polls the heartbeat.

        Scrapy's engine only looks at an idle scheduler every 5 s (its heartbeat); the
        queue is filled by other processes, so this worker looks ten times a second.
        """
        self._polls += 1
        if self._polls % BEAT_EVERY == 0:
            try:
                assert self.keys is not None
                self._beat_script(
                    keys=[self.keys.workers, self.keys.fetched], args=[self.worker, self.fetched]
                )
            except Exception as exc:  # Redis away for longer than the client's retries
                logger.warning("cluster heartbeat failed: %s", exc)
                return
        slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    def spider_idle(self, spider: Spider) -> None:
        """Stay open while the shared queue has work, or has been empty only briefly."""
        assert self.keys is not None
        if self.redis.llen(self.keys.requests):
            self._idle_since = None
            raise DontCloseSpider
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if now - self._idle_since < self.idle_close:
            raise DontCloseSpider
        logger.info(
            "cluster queue %s empty for %.0f s (CLUSTER_IDLE_CLOSE): closing",
            self.keys.requests,
            now - self._idle_since,
        )

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self.keys is None:
            return
        try:
            last, total = map(
                int,
                self._leave_script(
                    keys=self._key_args(), args=[self.worker, self.timeout, self.fetched]
                ),
            )
        except Exception as exc:
            logger.warning("could not leave cluster run %s: %s", self.run_id, exc)
            return
        if self.crawler.stats is not None:
            self.crawler.stats.set_value("cluster/fetched", self.fetched)
            self.crawler.stats.set_value("cluster/run_fetched", total)
        logger.info(
            "cluster worker %s left run %s after %s fetches%s",
            self.worker,
            self.run_id,
            self.fetched,
            " (the last one: run keys deleted)" if last else "",
        )
