"""One domain's request rate and concurrency across every worker of a cluster, in Redis.

Each worker keeps Scrapy's own download slot per domain (its ``DOWNLOAD_DELAY``,
``CONCURRENT_REQUESTS_PER_DOMAIN`` and AutoThrottle), which bounds that worker only. In
cluster mode the worker's downloader is :class:`ClusterDownloader`: when a request has
passed its local slot and is about to go out, it first takes one of the domain's
``CONCURRENT_REQUESTS_PER_DOMAIN`` transfer slots shared in Redis (:data:`ACQUIRE`, a
sorted set of holders, each with an expiry so a killed worker's slots come back), then
reserves a moment in the domain's schedule held in Redis and waits for it, downloads, and
gives the slot back (:data:`RELEASE`). :data:`RESERVE`, one Lua script and so atomic,
hands out moments at least ``delay`` apart across all workers, in Redis's clock (one for
every machine). ``delay`` is the local slot's delay (``DOWNLOAD_DELAY``, or AutoThrottle's
when it stretched it), randomized 0.5 to 1.5 times as Scrapy does when
``RANDOMIZE_DOWNLOAD_DELAY`` is on: N workers together request a domain as one crawler
would. The wait is the last step before the download handler, so nothing the worker
does afterwards bunches requests up again (tests/test_cluster_rate.py measures it).

Requests answered from a replay archive (``REPLAY_ARCHIVE``) never reach the downloader's
slots; with ``DOWNLOAD_DELAY`` 0 and AutoThrottle off no moment is reserved, and the
shared slots alone bound the domain. Both keys expire on their own (a moment's key a minute
after it, a slot with its holder's lifetime), so Redis keeps no per-domain state of a
finished run. robots.txt is fetched and obeyed by each worker, as in a local crawl.
"""

from __future__ import annotations

import itertools
import logging
import random
import uuid

from redis import Redis
from redis.exceptions import RedisError
from scrapy import Request
from scrapy.core.downloader import Downloader, Slot
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.utils.asyncio import sleep
from scrapy.utils.httpobj import urlparse_cached

from .connection import rate_key, redis_client, slots_key

__all__ = ["ACQUIRE", "RELEASE", "RESERVE", "ClusterDownloader", "SharedDomainRate", "SharedDomainSlots"]

logger = logging.getLogger(__name__)

#: KEYS: the domain's key. ARGV: delay (ms). Reserves the next free moment, at least
#: ``delay`` after the previous reservation and not before now; returns the wait (ms).
RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local at = math.max(now, free)
local delay = tonumber(ARGV[1])
redis.call('SET', KEYS[1], tostring(at + delay), 'PX', delay + 60000)
return at - now
"""


#: KEYS: the domain's holders (a sorted set: token -> expiry, ms). ARGV: token, limit,
#: lifetime (ms). Drops expired holders; takes a slot when fewer than ``limit`` are held.
#: Returns 1 when taken, else 0.
ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 1
end
return 0
"""

#: KEYS: the domain's holders. ARGV: token. Gives the slot back.
RELEASE = "return redis.call('ZREM', KEYS[1], ARGV[1])"

#: Seconds a shared slot outlives its longest legitimate hold before it counts as lost.
SLOT_MARGIN = 60.0

#: Seconds between two looks at a domain whose shared slots are all taken.
SLOT_POLL_SECONDS = 0.05


class SharedDomainSlots:
    """A domain's ``CONCURRENT_REQUESTS_PER_DOMAIN`` transfer slots, shared in Redis.

    A slot is held by a token with an expiry (``lifetime``): a worker killed while it
    holds slots loses them at most that long, never for good.
    """

    def __init__(self, redis: Redis, *, limit: int, lifetime: float) -> None:
        self.redis = redis
        self.limit = limit
        self.lifetime_ms = int(lifetime * 1000)
        self._acquire = redis.register_script(ACQUIRE)
        self._release = redis.register_script(RELEASE)
        self._tokens = itertools.count()
        self._prefix = uuid.uuid4().hex

    async def acquire(self, domain: str) -> str:
        """Wait for one of ``domain``'s slots; the token that holds it."""
        token = f"{self._prefix}:{next(self._tokens)}"
        args = [token, self.limit, self.lifetime_ms]
        while not int(self._acquire(keys=[slots_key(domain)], args=args)):
            await sleep(SLOT_POLL_SECONDS)
        return token

    def release(self, domain: str, token: str) -> None:
        """Give the slot back (a failure only leaves it to expire)."""
        try:
            self._release(keys=[slots_key(domain)], args=[token])
        except RedisError as exc:
            logger.warning("could not give back a download slot of %s: %s", domain, exc)


class SharedDomainRate:
    """The per-domain schedule in Redis: :meth:`wait` for a request's moment."""

    def __init__(self, redis: Redis, *, randomize: bool) -> None:
        self.redis = redis
        self.randomize = randomize
        self._reserve = redis.register_script(RESERVE)

    def reserve(self, domain: str, delay: float) -> float:
        """Reserve the next moment for ``domain``, ``delay`` seconds after the previous
        one (randomized when asked); seconds to wait for it."""
        if self.randomize:
            delay *= random.uniform(0.5, 1.5)  # spacing, not secrecy: no CSPRNG needed
        delay_ms = int(delay * 1000)
        if delay_ms <= 0:
            return 0.0
        return int(self._reserve(keys=[rate_key(domain)], args=[delay_ms])) / 1000

    async def wait(self, domain: str, delay: float) -> float:
        """Reserve and wait; the seconds waited."""
        wait = self.reserve(domain, delay)
        if wait > 0:
            await sleep(wait)
        return wait


class ClusterDownloader(Downloader):
    """Scrapy's downloader: before each download, one of the domain's shared slots and the
    domain's next shared moment; the slot is given back when the download ends."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        settings = crawler.settings
        redis = redis_client(settings)
        self.rate = SharedDomainRate(redis, randomize=settings.getbool("RANDOMIZE_DOWNLOAD_DELAY"))
        limit = settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        # A slot outlives its longest legitimate hold: the waits for its moment (at most
        # one delay per slot of the domain, AutoThrottle's longest) and the download.
        longest_delay = max(
            settings.getfloat("DOWNLOAD_DELAY"),
            settings.getfloat("AUTOTHROTTLE_MAX_DELAY") if settings.getbool("AUTOTHROTTLE_ENABLED") else 0.0,
        )
        lifetime = settings.getfloat("DOWNLOAD_TIMEOUT") + limit * 1.5 * longest_delay + SLOT_MARGIN
        self.shared_slots = SharedDomainSlots(redis, limit=limit, lifetime=lifetime)
        self.base_delay = settings.getfloat("DOWNLOAD_DELAY")

    async def _download(self, slot: Slot, request: Request) -> Response:
        domain = urlparse_cached(request).hostname or ""
        delay = max(self.base_delay, slot.delay)
        stats = self.crawler.stats
        # The request holds its local transfer slot while it waits, as it will while it
        # downloads, so the worker's own per-domain concurrency stays what it was.
        slot.transferring.add(request)
        try:
            token = await self.shared_slots.acquire(domain)
            try:
                waited = await self.rate.wait(domain, delay) if delay > 0 else 0.0
            except BaseException:
                self.shared_slots.release(domain, token)
                raise
        finally:
            slot.transferring.discard(request)
        if stats is not None and delay > 0:
            stats.inc_value("cluster/rate_reservations")
            stats.inc_value("cluster/rate_wait_ms", int(waited * 1000))
        try:
            return await super()._download(slot, request)
        finally:
            self.shared_slots.release(domain, token)
