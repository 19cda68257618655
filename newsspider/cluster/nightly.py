"""One nightly run for every ``scrapy nightly`` worker of a cluster: join, heartbeat, leave.

On one machine a ``flock`` keeps nightly runs apart (``newsspider/nightly/lock.py``). A
cluster is many machines, so the run is decided in Redis, the one place every worker
reaches: :data:`JOIN` (a Lua script, so atomic) drops members whose heartbeat is older
than ``CLUSTER_WORKER_TIMEOUT``; when none is left the joining worker **founds** the run:
it inserts the ``nightly_runs`` row in the shared database and publishes its id under
:data:`RUN_KEY`. Every later worker joins that id instead of starting a run of its own,
so the cluster's night is one ``nightly_runs`` row. The sites need no lock of their own:
each site's crawl is a cluster crawl (``frontier.py``), seeded once per run with one
duplicate filter, so each page is fetched once across the workers.

Members keep a heartbeat (a thread, so it also beats while the reactor is busy and during
the report). :data:`LEAVE` removes a worker and answers whether it was the last one; the
last one out writes the report over every worker's rows. A worker killed with SIGKILL
stops beating; the next :data:`JOIN` or :data:`LEAVE` drops it once its heartbeat is
``CLUSTER_WORKER_TIMEOUT`` old, so it never keeps the run open. When every worker of a run
died, the next founder gets the dead run's id (``previous``) and closes its row as killed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis import Redis

from .connection import KEY_PREFIX, PRUNE_DEAD

__all__ = [
    "JOIN",
    "JOINED_KEY",
    "LEAVE",
    "RUN_KEY",
    "WORKERS_KEY",
    "Left",
    "NightlyMembership",
]

logger = logging.getLogger(__name__)

#: Live workers of the nightly run: worker id -> last heartbeat, Redis time (a hash).
WORKERS_KEY = f"{KEY_PREFIX}:nightly:workers"
#: The run's ``nightly_runs.id``, set by the worker that founded it.
RUN_KEY = f"{KEY_PREFIX}:nightly:run"
#: Every worker that joined the run, dead or alive (a set), for the report's header.
JOINED_KEY = f"{KEY_PREFIX}:nightly:joined"

#: Seconds between heartbeats, and between looks for the founder's run id.
BEAT_SECONDS = 0.5

#: KEYS: workers, run, joined. ARGV: worker id, timeout.
#: Returns {1 if this worker founds the run else 0, the run id or '' while the founder has
#: not published it, the id of the previous run when every one of its workers died or ''}.
JOIN = (
    PRUNE_DEAD
    + """
local previous = ''
local new = 0
if redis.call('HLEN', KEYS[1]) == 0 then
  previous = redis.call('GET', KEYS[2]) or ''
  redis.call('DEL', KEYS[2], KEYS[3])
  new = 1
end
redis.call('HSET', KEYS[1], ARGV[1], tostring(now))
redis.call('SADD', KEYS[3], ARGV[1])
return {new, redis.call('GET', KEYS[2]) or '', previous}
"""
)

#: KEYS: workers. ARGV: worker id. Refreshes the heartbeat of a member only: a worker
#: already dropped as dead must not slip back into a run (returns 0 then).
HEARTBEAT = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], ARGV[1], tostring(tonumber(t[1]) + tonumber(t[2]) / 1000000))
return 1
"""

#: KEYS: workers, run, joined. ARGV: worker id, timeout, the worker's run id.
#: Returns {1, every worker that joined...} for the last worker out (the run's keys are
#: deleted), {0, live workers left} otherwise, {-1} when the run ended without this worker
#: (it was taken for dead and the others finished).
LEAVE = (
    """
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[3] then
  return {-1}
end
redis.call('HDEL', KEYS[1], ARGV[1])
"""
    + PRUNE_DEAD
    + """
local left = redis.call('HLEN', KEYS[1])
if left == 0 then
  local joined = redis.call('SMEMBERS', KEYS[3])
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  table.insert(joined, 1, 1)
  return joined
end
return {0, left}
"""
)


def _text(value: bytes | str | int) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True, slots=True)
class Left:
    """What :meth:`NightlyMembership.leave` found: whether this worker was the last one
    (it writes the report then), every worker that joined the run (sorted; known to the
    last one only), the live workers still running, and whether the run had already
    ended without this worker."""

    last: bool
    workers: tuple[str, ...] = ()
    remaining: int = 0
    gone: bool = False


class NightlyMembership:
    """This process's membership of the cluster's nightly run (see the module docstring).

    ``worker`` names the process (``host:pid``); ``timeout`` is ``CLUSTER_WORKER_TIMEOUT``.
    """

    def __init__(self, redis: Redis, worker: str, *, timeout: float) -> None:
        self.redis = redis
        self.worker = worker
        self.timeout = timeout
        self.run_id: int | None = None
        self.founder = False
        self._join = redis.register_script(JOIN)
        self._leave = redis.register_script(LEAVE)
        self._beat = redis.register_script(HEARTBEAT)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def join(self, start_run: Callable[[int | None], int]) -> int:
        """Join the cluster's nightly run, or found it; return its ``nightly_runs`` id.

        The founder calls ``start_run(previous)`` (``previous``: the id of a run whose
        workers all died, else None), which inserts the row and returns its id, and
        publishes it. Others wait up to ``timeout`` seconds for that id.
        """
        keys = [WORKERS_KEY, RUN_KEY, JOINED_KEY]
        new, run, previous = self._join(keys=keys, args=[self.worker, self.timeout])
        self.founder = bool(int(new))
        self._start_heartbeat()
        try:
            if self.founder:
                self.run_id = start_run(int(_text(previous)) if _text(previous) else None)
                self.redis.set(RUN_KEY, str(self.run_id))
            else:
                self.run_id = self._wait_for_run(_text(run))
        except BaseException:
            self._stop_heartbeat()
            self.redis.hdel(WORKERS_KEY, self.worker)
            raise
        logger.info(
            "cluster nightly: worker %s %s nightly run %s",
            self.worker,
            "starts" if self.founder else "joins",
            self.run_id,
        )
        return self.run_id

    def _wait_for_run(self, run: str) -> int:
        """The run id the founder publishes once its ``nightly_runs`` row exists."""
        deadline = time.monotonic() + self.timeout
        while not run:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the founder of the cluster's nightly run published no run id within "
                    f"{self.timeout:g} s (CLUSTER_WORKER_TIMEOUT)"
                )
            time.sleep(0.05)
            run = _text(self.redis.get(RUN_KEY) or "")
        return int(run)

    def _start_heartbeat(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beats, name="nightly-heartbeat", daemon=True)
        self._thread.start()

    def _beats(self) -> None:
        while not self._stop.wait(BEAT_SECONDS):
            try:
                if not int(self._beat(keys=[WORKERS_KEY], args=[self.worker])):
                    logger.warning(
                        "cluster nightly: worker %s was dropped from nightly run %s as dead "
                        "(no heartbeat for CLUSTER_WORKER_TIMEOUT)",
                        self.worker,
                        self.run_id,
                    )
                    return
            except Exception as exc:  # Redis away for longer than the client's retries
                logger.warning("cluster nightly heartbeat failed: %s", exc)

    def _stop_heartbeat(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def leave(self) -> Left:
        """Leave the run (after this worker's rows are committed): see :class:`Left`."""
        self._stop_heartbeat()
        keys = [WORKERS_KEY, RUN_KEY, JOINED_KEY]
        reply = self._leave(keys=keys, args=[self.worker, self.timeout, str(self.run_id)])
        status = int(reply[0])
        if status < 0:
            return Left(last=False, gone=True)
        if status == 1:
            return Left(last=True, workers=tuple(sorted(_text(w) for w in reply[1:])))
        return Left(last=False, remaining=int(reply[1]))
