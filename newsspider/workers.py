"""Extraction off the reactor thread: worker processes, and awaiting their results.

Block statistics, punctuation and xpath are pure CPU in Python (lxml parse, then
statistics). Run in the reactor thread they stop downloads and the database writes
for as long as a page takes, and a thread would not help (the GIL), so the crawl's
:class:`~newsspider.pipelines.extract.ExtractionPipeline` sends them to
``EXTRACTION_WORKERS`` worker processes (:func:`parse_workers`: ``auto`` is one per
core but one for the crawl process itself, at most :data:`MAX_AUTO_WORKERS`; ``0``:
in the reactor thread). The workers are shared by every crawler of the process
(:data:`SHARED_POOL`; ``scrapy nightly`` runs all sites in one), exit with the crawl
even when it is SIGKILLed, and are replaced after ``EXTRACTION_WORKER_MAX_TASKS``
pages so a slow leak in a parser cannot grow for a whole night (the comment above
``_WORKER_CODE`` says why they are not ``multiprocessing``'s). A page that kills its
worker (a crash in C) fails with :class:`WorkerDied`.

:func:`await_future` awaits any ``concurrent.futures`` future (a worker's answer, a
thread's result) without blocking the reactor; the corpus pipeline's database
writer thread uses it too.

:func:`stage_cpu` charges the CPU time of a block to a named stage of the crawl in
:data:`STAGE_CPU`, which is None (nothing measured, nothing paid but a test) unless a
benchmark sets it to a dict (``benchmarks/crawl_throughput.py`` reports the crawl's CPU
by stage from it).

Two per-site steps around a method (a site row's fields): :func:`extract_page` takes the
body from the page's embedded JSON (``json_path``, :func:`with_json_body`), and
:func:`render_page` turns a script shell into the DOM its inline scripts build (``render``;
it waits on Chromium, so the crawl runs it in its render thread, never in the reactor).

No Scrapy here: the jobs are registry names (:mod:`newsspider.extraction.registry`)
and their arguments.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from newsspider.extraction.embedded import text_at_json_path
from newsspider.extraction.encoding import decode_html
from newsspider.extraction.model import ExtractedArticle
from newsspider.extraction.page import content_type_of
from newsspider.extraction.registry import get_extractor
from newsspider.extraction.render import render_html

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_AUTO_WORKERS",
    "SHARED_POOL",
    "STAGE_CPU",
    "WorkerDied",
    "WorkerPool",
    "auto_workers",
    "await_future",
    "extract_page",
    "parse_workers",
    "render_page",
    "site_headers",
    "stage_cpu",
    "with_json_body",
]

#: ``EXTRACTION_WORKERS = "auto"`` never starts more processes than this.
MAX_AUTO_WORKERS = 4

#: CPU seconds of the crawl process by stage (:func:`stage_cpu`), when a benchmark sets this
#: to a dict; None in every real crawl.
STAGE_CPU: dict[str, float] | None = None
_STAGE_LOCK = threading.Lock()
_STAGE_STACK = threading.local()


def _charge(name: str, seconds: float) -> None:
    if STAGE_CPU is not None:
        with _STAGE_LOCK:
            STAGE_CPU[name] = STAGE_CPU.get(name, 0.0) + seconds


@contextlib.contextmanager
def stage_cpu(name: str) -> Iterator[None]:
    """Charge this thread's CPU time (``time.thread_time``) in the block to stage ``name``.

    Exclusive time: a stage entered inside another is charged to itself only, and the outer
    stage resumes afterwards, so the stages add up to the thread's time in them. Costs a
    test when :data:`STAGE_CPU` is None (every real crawl).
    """
    if STAGE_CPU is None:
        yield
        return
    stack: list[list[Any]] = _STAGE_STACK.__dict__.setdefault("stack", [])
    now = time.thread_time()
    if stack:
        outer = stack[-1]
        _charge(outer[0], now - outer[1])
    entry = [name, now]
    stack.append(entry)
    try:
        yield
    finally:
        now = time.thread_time()
        stack.pop()
        _charge(name, now - entry[1])
        if stack:
            stack[-1][1] = now


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


def extract_page(
    method: str,
    html: bytes | str,
    url: str | None,
    headers: Mapping[str, str] | None,
    tz: str | None,
    params: Mapping[str, Any],
    json_path: str | None = None,
) -> ExtractedArticle:
    """One page with the registry's method ``method``: the job an extraction worker runs
    (module level: picklable), and what a render thread or the reactor thread runs.
    ``json_path`` (a site row's): the body may come from the page's embedded JSON
    (:func:`with_json_body`)."""
    article = get_extractor(method)(html, url, headers=headers, tz=tz, **params)
    if json_path:
        article = with_json_body(article, html, json_path)
    return article


def site_headers(
    headers: Mapping[str, str] | None, encoding: str | None
) -> Mapping[str, str] | None:
    """The response headers extraction gets: when the Content-Type names no charset and
    the site row has an ``encoding`` (the charset its pages are in), that charset is
    added to it (``text/html`` when there was no Content-Type)."""
    if not encoding:
        return headers
    ctype = content_type_of(headers)
    if ctype and "charset=" in ctype.lower():
        return headers
    mime = (ctype or "").split(";", 1)[0].strip() or "text/html"
    merged = {k: v for k, v in (headers or {}).items() if str(k).lower() != "content-type"}
    merged["Content-Type"] = f"{mime}; charset={encoding}"
    return merged


def with_json_body(
    article: ExtractedArticle, html: bytes | str, json_path: str
) -> ExtractedArticle:
    """``article`` with the text at ``json_path`` in the page's embedded JSON as its body,
    when the method's own body is empty or shorter than that text (a script shell's
    ``<body>`` holds a loading notice, the article sits in ``__NEXT_DATA__``). Title and
    time stay the method's (``<title>``, ``<meta>``, JSON-LD). The page is read in the
    charset the method decoded it with."""
    if isinstance(html, str):
        data = html.encode("utf-8")
    elif article.encoding in ("utf-8", "ascii", "unicode"):
        data = bytes(html)
    else:
        try:
            data = bytes(html).decode(article.encoding, errors="replace").encode("utf-8")
        except LookupError:
            data = bytes(html)
    text = text_at_json_path(data, json_path)
    if text and _chars(text) > _chars(article.text):
        article.text = text
    return article


def _chars(text: str) -> int:
    return sum(not c.isspace() for c in text)


def render_page(
    html: bytes | str, headers: Mapping[str, str] | None, *, timeout: float | None = None
) -> tuple[str, str]:
    """A page whose text appears only after its scripts run (a site row's ``render``):
    decoded as every method decodes it, rendered in the process's Chromium with JavaScript
    on (inline scripts only, no network: :func:`~newsspider.extraction.render.render_html`),
    and returned as the rendered DOM's HTML with the codec the bytes were decoded with.

    Blocks while Chromium renders: the crawl runs it in its render thread. Raises
    :class:`~newsspider.extraction.ExtractionError` for bytes that are no page, and the
    render module's errors (``BrowserUnavailable``, ``RenderTimeout``, ``RenderCrash``).
    """
    if isinstance(html, str):
        text, codec = html, "unicode"
    else:
        text, codec = decode_html(bytes(html), content_type_of(headers))
    return render_html(text, javascript=True, timeout=timeout), codec


# --------------------------------------------------------------------------
# The worker processes, shared by the crawlers of one process
#
# Not multiprocessing: its spawn and forkserver workers import the parent's ``__main__``
# again (a user's crawl script without a main guard would crawl once per worker), fork
# would copy the reactor and its threads' locks, and its workers outlive a SIGKILLed crawl
# (each holds both ends of its task pipe). These are plain ``python -c`` children that
# import only the extractors (not Scrapy and SQLAlchemy, which the crawl process has),
# read pickled jobs (:func:`extract_page`'s arguments) on stdin, write pickled replies on
# stdout, and exit at EOF or as soon as the crawl process is gone.

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
from newsspider.workers import extract_page
while True:
    try:
        job_id, job = pickle.load(jobs)
    except EOFError:
        break
    try:
        reply = (job_id, True, extract_page(*job))
    except Exception as exc:
        reply = (job_id, False, exc)
    try:
        data = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        data = pickle.dumps((job_id, False, RuntimeError(f"{reply[2]!r} ({exc})")))
    replies.write(data)
    replies.flush()
"""


#: The stage of the worker pool's pipe threads (pickling jobs, unpickling replies).
HANDOFF = "extraction hand-off"


class WorkerDied(Exception):
    """The extraction worker exited (crashed, killed) before answering."""


class _Worker:
    """One extraction process; jobs go in through a writer thread, so that the reactor never
    waits on a full pipe, and replies come back through a reader thread."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[1])  # the folder holding newsspider/
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
        _charge(HANDOFF, time.thread_time())

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
        _charge(HANDOFF, time.thread_time())

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


#: The process's pool: every crawler's pipeline acquires and releases it.
SHARED_POOL = _SharedPool()
atexit.register(SHARED_POOL.shutdown)


async def await_future(future: Future[Any]) -> Any:
    """Await a ``concurrent.futures`` future without blocking the reactor.

    With an asyncio loop running (Scrapy's default reactor, or ``asyncio.run`` in tests)
    the future is wrapped for it; under another Twisted reactor it goes through a Deferred
    fired in the reactor thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        # Imported here: importing the reactor installs Twisted's default one, which must
        # not happen before Scrapy has installed the reactor its settings ask for.
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
