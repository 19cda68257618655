"""The Redis client of cluster mode and the names of its keys.

Every component (scrapy-redis's scheduler, queue and filter, and ours) connects with the
same parameters, :func:`redis_params`: a lost connection or a Redis restart is retried
with a backoff capped at :data:`RETRY_CAP` seconds for about :data:`REDIS_WAIT_SECONDS`
seconds, so a worker waits for Redis to come back and goes on (docs/cluster.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from scrapy.settings import BaseSettings

__all__ = [
    "KEY_PREFIX", "PRUNE_DEAD", "RETRY_CAP", "Keys", "keys", "rate_key", "redis_client", "redis_params",
    "slots_key",
]  # fmt: skip

#: Longest wait between two attempts to reach Redis (seconds).
RETRY_CAP = 2.0
#: First wait (seconds), doubling up to :data:`RETRY_CAP`.
RETRY_BASE = 0.1
#: Every key of cluster mode starts with this (``newsspider:<spider>:requests``, ...).
KEY_PREFIX = "newsspider"
#: Seconds a worker waits for Redis to come back (a restart, a network cut) before failing.
REDIS_WAIT_SECONDS = 300.0
#: Seconds a command may take (a blocking pop is never used: FIFO pops are immediate).
SOCKET_TIMEOUT = 10.0

#: Lua, the start of the join and leave scripts of a crawl run (``frontier.py``) and of a
#: nightly run (``nightly.py``): drop from the hash ``KEYS[1]`` (worker -> heartbeat, Redis
#: time) every worker silent for more than ``ARGV[2]`` seconds; ``now`` is left set.
PRUNE_DEAD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) < now - tonumber(ARGV[2]) then
    redis.call('HDEL', KEYS[1], all[i])
  end
end
"""


def redis_params() -> dict[str, Any]:
    """``REDIS_PARAMS`` for scrapy-redis: its defaults plus retries while Redis is away."""
    wait = REDIS_WAIT_SECONDS
    return {
        "socket_timeout": SOCKET_TIMEOUT,
        "socket_connect_timeout": SOCKET_TIMEOUT,
        "retry_on_timeout": True,
        "retry": Retry(ExponentialBackoff(cap=RETRY_CAP, base=RETRY_BASE), int(wait / RETRY_CAP) + 1),
        "retry_on_error": [RedisConnectionError, RedisTimeoutError, ConnectionResetError],
        "health_check_interval": 30,
    }


def redis_client(settings: BaseSettings) -> Redis:
    """A client for ``REDIS_URL`` with :func:`redis_params`, the ``REDIS_PARAMS`` cluster
    mode gives scrapy-redis: built as scrapy-redis builds its own, so both speak to Redis
    alike (bytes in and out) and wait alike while it is away."""
    return Redis.from_url(settings.get("REDIS_URL"), **redis_params())


@dataclass(frozen=True, slots=True)
class Keys:
    """The Redis keys of one spider's frontier (``<prefix>:<spider>:...``)."""

    prefix: str
    spider: str

    def _key(self, name: str) -> str:
        return f"{self.prefix}:{self.spider}:{name}"

    @property
    def requests(self) -> str:
        """scrapy-redis's FIFO queue of serialized requests (a list)."""
        return self._key("requests")

    @property
    def dupefilter(self) -> str:
        """scrapy-redis's request fingerprints of the run (a set)."""
        return self._key("dupefilter")

    @property
    def workers(self) -> str:
        """Live workers of the run: worker id -> last heartbeat, Redis time (a hash)."""
        return self._key("workers")

    @property
    def run(self) -> str:
        """The run's id, set by the worker that started it."""
        return self._key("run")

    @property
    def fetched(self) -> str:
        """Fetches per worker in this run (a hash), for the run's figures."""
        return self._key("fetched")


def keys(spider: str) -> Keys:
    """The keys of ``spider``'s frontier."""
    return Keys(KEY_PREFIX, spider)


def rate_key(domain: str) -> str:
    """The key holding the next free moment (ms, Redis time) for requests to ``domain``."""
    return f"{KEY_PREFIX}:rate:{domain}"


def slots_key(domain: str) -> str:
    """The key holding the domain's taken download slots (a sorted set: token -> expiry)."""
    return f"{KEY_PREFIX}:slots:{domain}"
