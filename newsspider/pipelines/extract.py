"""Extraction step of the crawl: headline, time and body of each page, off the reactor thread.

``EXTRACTOR`` picks the method (``newsspider/extraction/methods.py``); ``EXTRACTION_MODE``
(``best``/``paper``) goes only to the methods that take a mode other than the paper's:
``blockstats`` and ``visual+blockstats``. ``punctuation``, ``xpath`` and ``visual`` are the
papers' methods alone and run with their own default, ``paper``.

Where a page is extracted, and why:

* ``blockstats``, ``punctuation``, ``xpath`` are pure CPU in Python (lxml parse, then
  statistics; ~5 ms a page for block statistics). Run in the reactor thread they stop
  downloads and the database writes for that long, and a thread would not help (the GIL),
  so they run in ``EXTRACTION_WORKERS`` worker processes (``auto``: one per core but one
  for the crawl process itself, at most 4; ``0``: in the reactor thread, as before). The
  workers are shared by every crawler of the process (``scrapy nightly`` runs all sites in
  one), start in 0.1 s, exit with the crawl even when it is SIGKILLed, and are replaced
  after ``EXTRACTION_WORKER_MAX_TASKS`` pages so a slow leak in a parser cannot grow for a
  whole night (the comment above ``_WORKER_CODE`` says why they are not
  ``multiprocessing``'s). A page that kills its worker (a crash in C) is retried once in a
  fresh one, then dropped as ``ExtractionFailed``; the crawl goes on. Measured on 2 cores:
  89 -> 115 pages/s for the full pipeline (``benchmarks/crawl_throughput.py``).
* ``visual`` and ``visual+blockstats`` mostly wait for headless Chromium (0.3-1 s a page).
  They run in one thread of their own (one renderer, which serialises pages anyway), so the
  reactor keeps downloading while a page renders. A browser per worker process would cost
  hundreds of MB each.

``xpath`` uses each site's trained thresholds (``scrapy train``, table ``xpath_thresholds``),
read once when the spider opens; a site without a row uses each page's own thresholds, the
documented default of ``extract_xpath``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import itertools
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from newsspider.extraction import MODES, ExtractionError, extract_article
from newsspider.extraction.article import content_type_of
from newsspider.extraction.encoding import overruled_declaration
from newsspider.extraction.methods import DEFAULT_METHOD, METHOD_MODES, get_method
from newsspider.extraction.model import ExtractedArticle
from newsspider.sites import SITES
from newsspider.storage import load_all_thresholds

logger = logging.getLogger(__name__)

#: Methods that take ``EXTRACTION_MODE`` (the registry's methods with a choice of mode);
#: the others are paper-only and get no ``mode``.
MODE_METHODS = frozenset(name for name, modes in METHOD_MODES.items() if len(modes) > 1)
#: Methods that render in Chromium: a thread, never the process pool.
VISUAL_METHODS = frozenset({"visual", "visual+blockstats"})
#: ``EXTRACTION_WORKERS = "auto"`` never starts more processes than this.
MAX_AUTO_WORKERS = 4
#: ``EXTRACTION_WORKER_MAX_TASKS`` default: pages a worker extracts before it is replaced.
DEFAULT_MAX_TASKS = 10000


class NotHtml(DropItem):
    """The response is not an HTML page (empty, binary): ExtractionError."""


class EmptyBody(DropItem):
    """The page is HTML but holds no article body (empty mainblockset)."""


class NoTitle(DropItem):
    """The page has a body but no headline could be found."""


class ExtractionFailed(DropItem):
    """The extraction worker died on this page twice (a crash in C, killed by the OS)."""


def auto_workers(cpus: int | None = None) -> int:
    """``EXTRACTION_WORKERS = "auto"``: a core is left to the crawl process itself."""
    cpus = cpus if cpus is not None else (os.cpu_count() or 1)
    return max(0, min(MAX_AUTO_WORKERS, cpus - 1))


def parse_workers(value: Any) -> int:
    """The setting's value as a number of processes (``auto``, ``""`` and None mean auto)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return auto_workers()
    workers = int(value)
    if workers < 0:
        raise ValueError(f"EXTRACTION_WORKERS must be 'auto' or >= 0, not {value!r}")
    return workers


@functools.cache
def _function(method: str) -> Callable[..., ExtractedArticle]:
    """The method's function, looked up once per process (workers included)."""
    return extract_article if method == DEFAULT_METHOD else get_method(method)


def extract_page(
    method: str,
    html: bytes | str,
    url: str | None,
    headers: Mapping[str, str] | None,
    tz: str | None,
    params: Mapping[str, Any],
) -> ExtractedArticle:
    """One page with one method: the job an extraction worker runs (module level: picklable)."""
    return _function(method)(html, url, headers=headers, tz=tz, **params)


# --------------------------------------------------------------------------
# The worker processes, shared by the crawlers of one process
#
# Not multiprocessing: its spawn and forkserver workers import the parent's ``__main__``
# again (a user's crawl script without a main guard would crawl once per worker), fork
# would copy the reactor and its threads' locks, and its workers outlive a SIGKILLed crawl
# (each holds both ends of its task pipe). These are plain ``python -c`` children that
# import only the extractors (0.1 s, against 0.7 s for this package, which imports Scrapy
# and SQLAlchemy), read pickled jobs on stdin, write pickled replies on stdout, and exit at
# EOF or as soon as the crawl process is gone.

_WORKER_CODE = r"""
import os, pickle, select, sys, threading, time

def watch(pid):
    try:
        fd = os.pidfd_open(pid)  # readable once the process has exited (Linux 5.3+)
    except ProcessLookupError:
        os._exit(0)
    except (AttributeError, OSError):
        fd = None
    def run():
        if fd is not None:
            select.select([fd], [], [])
        else:
            while True:
                time.sleep(1.0)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
        os._exit(0)
    threading.Thread(target=run, daemon=True).start()

watch(int(sys.argv[1]))
jobs, replies = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)  # a stray print goes to the log, never into the replies
sys.stdout = sys.stderr
from newsspider.extraction.article import extract_article
from newsspider.extraction.methods import DEFAULT_METHOD, get_method
functions = {}
while True:
    try:
        job_id, (method, html, url, headers, tz, params) = pickle.load(jobs)
    except EOFError:
        break
    try:
        fn = functions.get(method)
        if fn is None:
            fn = extract_article if method == DEFAULT_METHOD else get_method(method)
            functions[method] = fn
        reply = (job_id, True, fn(html, url, headers=headers, tz=tz, **params))
    except Exception as exc:
        reply = (job_id, False, exc)
    try:
        data = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        data = pickle.dumps((job_id, False, RuntimeError(f"{reply[2]!r} ({exc})")))
    replies.write(data)
    replies.flush()
"""


class WorkerDied(Exception):
    """The extraction worker exited (crashed, killed) before answering."""


class _Worker:
    """One extraction process; jobs go in through a writer thread, so that the reactor never
    waits on a full pipe, and replies come back through a reader thread."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])  # the folder holding newsspider/
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        self.lock = threading.Lock()
        self.futures: dict[int, Future[ExtractedArticle]] = {}
        self.jobs: queue.SimpleQueue[tuple[int, tuple[Any, ...]] | None] = queue.SimpleQueue()
        self.sent = 0
        self.alive = True
        for target in (self._write, self._read):
            threading.Thread(target=target, name="newsspider-extract-io", daemon=True).start()

    @property
    def load(self) -> int:
        return len(self.futures)

    def submit(self, job_id: int, job: tuple[Any, ...], future: Future[ExtractedArticle]) -> None:
        with self.lock:
            if not self.alive:
                raise WorkerDied(f"extraction worker {self.proc.pid} is gone")
            self.futures[job_id] = future
            self.sent += 1
        self.jobs.put((job_id, job))

    def close(self) -> None:
        """No more jobs: the worker answers what it holds, then exits at EOF."""
        self.jobs.put(None)

    def _write(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        while (entry := self.jobs.get()) is not None:
            try:
                data = pickle.dumps(entry, pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # an argument that cannot be pickled: that job fails
                with self.lock:
                    future = self.futures.pop(entry[0], None)
                if future is not None and not future.done():
                    future.set_exception(exc)
                continue
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError):
                self._fail()
                return
        with contextlib.suppress(OSError):
            stdin.close()

    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            try:
                job_id, ok, value = pickle.load(stdout)
            except Exception:  # EOF: the worker exited or died
                break
            with self.lock:
                future = self.futures.pop(job_id, None)
            if future is not None and not future.done():
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)
        self._fail()

    def _fail(self) -> None:
        with self.lock:
            self.alive = False
            futures, self.futures = self.futures, {}
        for future in futures.values():
            if not future.done():
                future.set_exception(WorkerDied(f"extraction worker {self.proc.pid} died"))


class WorkerPool:
    """``size`` extraction processes; each job goes to the least loaded one.

    A worker that has taken ``max_tasks`` jobs (0: no limit) takes no more: it answers what
    it holds and exits, and a fresh one takes its place. A dead worker is replaced on the
    next job; the jobs it held fail with :class:`WorkerDied`.
    """

    def __init__(self, size: int, max_tasks: int = 0) -> None:
        if size < 1:
            raise ValueError("a worker pool needs at least one worker")
        self.size = size
        self.max_tasks = max_tasks
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []
        self.retired: list[_Worker] = []
        self.ids = itertools.count()
        self.started = 0
        with self.lock:
            self._maintain()

    def submit(self, *job: Any) -> Future[ExtractedArticle]:
        future: Future[ExtractedArticle] = Future()
        with self.lock:
            for _ in range(3):
                self._maintain()
                worker = min(self.workers, key=lambda w: w.load)
                try:
                    worker.submit(next(self.ids), job, future)
                    return future
                except WorkerDied:
                    continue
        future.set_exception(WorkerDied("no extraction worker could be started"))
        return future

    def _maintain(self) -> None:
        """Drop dead and spent workers, reap retired ones, start new ones (lock held)."""
        for w in list(self.workers):
            if not w.alive or w.proc.poll() is not None:
                self.workers.remove(w)
                self.retired.append(w)
            elif self.max_tasks > 0 and w.sent >= self.max_tasks:
                self.workers.remove(w)
                w.close()
                self.retired.append(w)
        self.retired = [w for w in self.retired if w.proc.poll() is None]
        while len(self.workers) < self.size:
            self.workers.append(_Worker())
            self.started += 1

    def shutdown(self, timeout: float = 10.0) -> None:
        """Close every worker, wait for it to finish its jobs, kill it past ``timeout``."""
        with self.lock:
            workers, self.workers = self.workers + self.retired, []
            self.retired = []
        for w in workers:
            w.close()
        deadline = time.monotonic() + timeout
        for w in workers:
            try:
                w.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
            for pipe in (w.proc.stdin, w.proc.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()


class _SharedPool:
    """One :class:`WorkerPool` per process, started by the first pipeline that needs it and
    shut down when the last one closes (all crawlers of ``scrapy nightly`` share it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool: WorkerPool | None = None
        self.users = 0

    def acquire(self, workers: int, max_tasks: int) -> WorkerPool:
        with self.lock:
            if self.pool is None:
                self.pool = WorkerPool(workers, max_tasks)
            elif (self.pool.size, self.pool.max_tasks) != (workers, max_tasks):
                logger.warning(
                    "extraction pool already running with %s workers; shared", self.pool.size
                )
            self.users += 1
            return self.pool

    def release(self) -> None:
        with self.lock:
            self.users = max(0, self.users - 1)
            pool = self.pool if self.users == 0 else None
            if pool is not None:
                self.pool = None
        if pool is not None:
            pool.shutdown()

    def shutdown(self) -> None:
        with self.lock:
            pool, self.pool, self.users = self.pool, None, 0
        if pool is not None:
            pool.shutdown(timeout=2.0)


_POOL = _SharedPool()
atexit.register(_POOL.shutdown)


async def await_future(future: Future[Any]) -> Any:
    """Await a ``concurrent.futures`` future without blocking the reactor.

    With an asyncio loop running (Scrapy's default reactor, or ``asyncio.run`` in tests)
    the future is wrapped for it; under another Twisted reactor it goes through a Deferred
    fired in the reactor thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        from twisted.internet import reactor
        from twisted.internet.defer import Deferred

        d: Deferred[Any] = Deferred()

        def settle(f: Future[Any]) -> None:
            if f.cancelled():
                d.errback(asyncio.CancelledError())
            elif f.exception() is not None:
                d.errback(f.exception())
            else:
                d.callback(f.result())

        future.add_done_callback(lambda f: reactor.callFromThread(settle, f))
        return await d
    return await asyncio.wrap_future(future)


# --------------------------------------------------------------------------
# The pipeline


class ExtractionPipeline:
    """Fill ``title``, ``published``, ``raw_text`` and ``encoding`` of an ArticleItem.

    The site's time zone (``Site.tz``) is used for times the page gives without
    an offset. Pages without body or title are dropped with a reason that
    Scrapy's core stats count under ``item_dropped_reasons_count/<class>``.
    """

    def __init__(
        self,
        mode: str,
        stats: Any,
        method: str = DEFAULT_METHOD,
        *,
        workers: int = 0,
        max_tasks: int = DEFAULT_MAX_TASKS,
        database_url: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"EXTRACTION_MODE must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.stats = stats
        self.method = method
        # ValueError for an unknown EXTRACTOR: the crawl fails at start, not per item
        self.extract = _function(method)
        #: Keyword arguments of every call: ``mode`` only where the method has a choice.
        self.params: dict[str, Any] = {"mode": mode} if method in MODE_METHODS else {}
        if mode != "paper" and not self.params:
            logger.info("EXTRACTOR %s runs in paper mode only; EXTRACTION_MODE=%s", method, mode)
        self.visual = method in VISUAL_METHODS
        self.workers = 0 if self.visual else workers
        self.max_tasks = max_tasks
        self.database_url = database_url
        #: Per-site keyword arguments: the trained xpath thresholds (loaded in open_spider).
        self.site_params: dict[str, dict[str, Any]] = {}
        self._thread: ThreadPoolExecutor | None = None
        self._pool: WorkerPool | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        s = crawler.settings
        from newsspider.storage import resolve_database_url

        return cls(
            s.get("EXTRACTION_MODE", "best"),
            crawler.stats,
            s.get("EXTRACTOR", DEFAULT_METHOD),
            workers=parse_workers(s.get("EXTRACTION_WORKERS", "auto")),
            max_tasks=s.getint("EXTRACTION_WORKER_MAX_TASKS", DEFAULT_MAX_TASKS),
            database_url=resolve_database_url(s.get("DATABASE_URL")),
        )

    # -- spider lifecycle ---------------------------------------------------

    def open_spider(self, spider: Any = None) -> None:
        if self.method == "xpath" and self.database_url:
            self.site_params = trained_xpath_params(self.database_url)
        if self.visual:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="newsspider-visual")
            where = "a render thread"
        elif self.workers > 0:
            self._pool = _POOL.acquire(self.workers, self.max_tasks)
            where = f"{self.workers} worker processes"
        else:
            where = "the reactor thread"
        if self.stats is not None:
            self.stats.set_value("newsspider/extraction_workers", self.workers)
        logger.info("extraction: %s in %s", self.method, where)

    def close_spider(self, spider: Any = None) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = None
        if self._pool is not None:
            self._pool = None
            _POOL.release()

    # -- items ----------------------------------------------------------------

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url = adapter["url"]
        site_key = adapter["site"]
        site = SITES.get(site_key)
        params = {**self.params, **self.site_params.get(site_key, {})}
        job = (self.method, adapter["html"], url, adapter.get("headers") or None, site and site.tz)
        try:
            article = await self._run(*job, params)
        except ExtractionError as exc:
            raise NotHtml(f"not an HTML page ({exc}): {url}") from exc
        return self._fill(adapter, item, article, url)

    async def _run(self, *job: Any) -> ExtractedArticle:
        """Extract where the method belongs (module docstring): pool, thread or inline."""
        if self._thread is not None:
            return await await_future(self._thread.submit(extract_page, *job))
        if self._pool is None:
            return extract_page(*job)
        try:
            return await await_future(self._pool.submit(*job))
        except WorkerDied:
            self.stats.inc_value("newsspider/extraction_worker_died")
            logger.warning("extraction worker died on %s; trying a fresh one", job[2])
        try:
            return await await_future(self._pool.submit(*job))
        except WorkerDied as exc:
            raise ExtractionFailed(f"extraction worker died twice: {job[2]}") from exc

    def _fill(self, adapter: ItemAdapter, item: Any, article: ExtractedArticle, url: str) -> Any:
        if not article.text:
            raise EmptyBody(f"no body: {url}", log_level="INFO")
        if not article.title:
            raise NoTitle(f"no title: {url}", log_level="INFO")
        if "\ufffd" in article.text:
            logger.warning("U+FFFD in the body after decoding as %s: %s", article.encoding, url)
        raw = adapter["html"]
        declared = isinstance(raw, bytes) and overruled_declaration(
            raw, content_type_of(adapter.get("headers")), article.encoding
        )
        if declared:
            logger.info(
                "declared charset %s overruled, decoded as %s: %s", declared, article.encoding, url
            )
            self.stats.inc_value("newsspider/charset_overruled")
        if article.published is None:
            logger.warning("no publication time found: %s", url)
            self.stats.inc_value("newsspider/no_time")
        adapter["title"] = article.title
        adapter["published"] = article.published
        adapter["published_source"] = article.published_source
        adapter["raw_text"] = article.text
        adapter["encoding"] = article.encoding
        self.stats.inc_value(f"newsspider/extracted/{adapter['site']}")
        return item


def trained_xpath_params(database_url: str) -> dict[str, dict[str, float]]:
    """Every trained site's xpath thresholds as ``extract_xpath`` keyword arguments.

    Read once per crawl. No table, no row or no database: ``{}``, and every site uses its
    pages' own thresholds (the documented default), with a warning when the database
    could not be read.
    """
    found = load_all_thresholds(database_url)
    for site, t in found.items():
        logger.info(
            "xpath thresholds of %s: Length_Threshold=%.1f, B_n_Threshold=%.3f (M=%s)",
            site,
            t.Length_Threshold,
            t.B_n_Threshold,
            t.pages,
        )
    return {site: t.as_params() for site, t in found.items()}


__all__ = [
    "EmptyBody",
    "ExtractionFailed",
    "ExtractionPipeline",
    "NoTitle",
    "NotHtml",
    "WorkerDied",
    "WorkerPool",
    "auto_workers",
    "await_future",
    "extract_page",
    "parse_workers",
    "trained_xpath_params",
]
