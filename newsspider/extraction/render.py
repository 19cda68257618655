"""Headless Chromium layout for VL_PS (Jing & Zuo §2.3).

Jing & Zuo §2.3 step a renders the page in a real browser engine (IE through
COM in the paper) and step c reads every element's absolute box. Here the
engine is Debian's Chromium (``/usr/bin/chromium``, never a downloaded
browser) driven through Playwright over the DevTools protocol.

How a page is rendered
    * One browser per :class:`Renderer`, reused across pages; each document
      gets a new page (tab) in a long-lived browser context, so the per-page
      cost is a tab, not a browser start.
    * The decoded page goes in as a string with ``page.set_content`` (UTF-8
      all the way; the page's own charset declaration no longer matters). The
      document's URL stays ``about:blank``, so relative URLs (``/css/a.css``,
      ``img/b.png``) resolve to nothing and are never requested.
    * No network: every request the page makes (absolute URLs of images,
      style sheets, frames; scripts when JavaScript is on) is aborted by a
      route on the context; service workers are blocked; Chromium resolves
      no host name at all (``--host-resolver-rules``), as a second wall.
    * JavaScript is off unless asked for (speed and safety); ``<noscript>``
      content is then rendered, as in a browser with scripts disabled.
    * Fixed viewport: ``VIEWPORT`` = 1280 × 800 CSS px, device scale 1,
      scroll bars hidden, so ``W`` is 1280 unless the page is wider.
    * Two readings of a rendered page: :meth:`Renderer.layout` measures every
      element's box (the visual method); :meth:`Renderer.html` (and
      :func:`render_html`) returns the HTML of the DOM after the page's inline
      scripts ran, for sites whose HTML is a script shell (a site row's
      ``render = true``): JavaScript on, the network still closed, so only the
      scripts the page carries inline run.

Robustness
    Chromium is started by this module (not by Playwright) in its own
    process group and session, with a fresh empty ``--user-data-dir`` and
    ``HOME`` inside a temporary folder, and Playwright connects to it over
    CDP. Every Playwright call runs in one worker thread per browser, and the
    caller waits with a deadline: a page that hangs (scripts in an endless
    loop, a stuck renderer) or crashes the renderer makes the whole browser
    be killed (``SIGKILL`` to its process group and to every process whose
    command line names its temporary folder, e.g. the crash handler), the
    folder removed, and :class:`RenderTimeout` / :class:`RenderCrash` raised;
    the next page starts a fresh browser. The browser is also killed when the
    :class:`Renderer` is closed, garbage-collected, at interpreter exit, and
    (``PR_SET_PDEATHSIG``) by the kernel when the thread that started it dies,
    so a killed Python leaves no Chromium behind either.

Pure in the project's sense: no Scrapy, no SQL. Playwright is imported only
when a browser is started, so this module imports without it
(:func:`unavailable_reason` says what is missing).
"""

from __future__ import annotations

import contextlib
import ctypes
import html as html_escape
import importlib.util
import logging
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

from .errors import ExtractionError

logger = logging.getLogger(__name__)

#: Debian's Chromium (``apt-get install chromium``); never a downloaded build.
CHROMIUM = "/usr/bin/chromium"
#: The flags that keep Chromium headless and off the network on this machine.
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
#: Ours: no host name resolves (a second wall behind the route that aborts
#: every request), no scroll bars (``W`` = viewport width), scale 1, no
#: extensions, no audio.
EXTRA_FLAGS: tuple[str, ...] = (
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--disable-extensions",
    "--mute-audio",
    "--no-default-browser-check",
)
#: Viewport (CSS px): the page width ``W`` is at least 1280.
VIEWPORT: tuple[int, int] = (1280, 800)
#: Seconds a page may take to render and be measured.
DEFAULT_TIMEOUT = 10.0
#: Seconds a browser may take to start.
LAUNCH_TIMEOUT = 30.0
#: Pages one browser serves before it is replaced by a fresh one (one browser start).
RECYCLE_AFTER = 1000
#: Extra seconds the caller waits past a timeout before it kills the browser itself.
GRACE = 3.0
#: The attribute that numbers the elements of a page (see :class:`Layout`).
ID_ATTRIBUTE = "data-vlps"

#: Content-Security-Policy of a page rendered for its DOM (:meth:`Renderer.html`): its
#: inline scripts run (``eval`` too), nothing is loaded (scripts, styles, images, frames).
RENDER_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline' 'unsafe-eval'"
)

#: Temporary folders are named ``<prefix><owner pid>-<random>``.
FOLDER_PREFIX = "newsspider-chromium-"

_PR_SET_PDEATHSIG = 1

T = TypeVar("T")


class VisualError(ExtractionError):
    """The page could not be rendered (no browser, a timeout, a crash)."""


class BrowserUnavailable(VisualError):
    """Playwright or Chromium is missing, or Chromium did not start."""


class RenderTimeout(VisualError):
    """The page did not render (or could not be measured) within the timeout."""


class RenderCrash(VisualError):
    """The renderer or the browser crashed while rendering the page."""


@dataclass(frozen=True, slots=True)
class Box:
    """An element's absolute box in CSS px (Jing & Zuo §2.3 c: LEFT, TOP, WIDTH, HEIGHT)."""

    left: float
    top: float
    width: float
    height: float


@dataclass(slots=True)
class Layout:
    """What the browser measured on one page.

    ``width`` and ``height`` are the page's real size ``W`` and ``H``
    (Jing & Zuo §2.3 a: "页面实际大小"): ``W`` is the layout width (the
    viewport's, unless a box reaches further right); ``H`` is the bottom
    edge of the lowest visible box inside BODY. ``H`` is not clamped to the
    viewport (nor to the viewport-high ``<html>``/``<body>`` of quirks mode),
    so a page shorter than the window still has its own bottom 160 px as
    FOOTER. ``boxes`` maps the
    number an element carries in :data:`ID_ATTRIBUTE` to its box, for every
    numbered element that has a layout box and is visible: an element that
    is ``display: none`` (or inside one), ``visibility: hidden``, outside the
    rendered DOM (``<template>`` content, ``<head>``) or not in the page at
    all has no entry.
    """

    width: float
    height: float
    boxes: dict[int, Box]
    seconds: float = 0.0


#: Run in the page: the page size and the box of every numbered, visible element.
_MEASURE_JS = """
(attr) => {
  const de = document.documentElement;
  const sx = window.scrollX, sy = window.scrollY;
  const body = document.body;
  let W = de.scrollWidth;
  let H = 0;
  const els = document.querySelectorAll('[' + attr + ']');
  const ids = [], boxes = [];
  for (let i = 0; i < els.length; i++) {
    const el = els[i];
    if (el.getClientRects().length === 0) continue;
    if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true})) continue;
    const r = el.getBoundingClientRect();
    ids.push(+el.getAttribute(attr));
    boxes.push(r.left + sx, r.top + sy, r.width, r.height);
    if (el === de || el === body) continue;
    if (r.right + sx > W) W = r.right + sx;
    if (r.bottom + sy > H) H = r.bottom + sy;
  }
  if (H === 0) H = de.getBoundingClientRect().bottom + sy;
  return [W, H, ids, boxes];
}
"""


def unavailable_reason(executable: str = CHROMIUM) -> str | None:
    """Why pages cannot be rendered here (None when Playwright and Chromium are present)."""
    try:
        found = importlib.util.find_spec("playwright") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return "Playwright is not installed (pip install playwright)"
    if not os.access(executable, os.X_OK):
        return f"no Chromium at {executable} (apt-get install chromium)"
    return None


# --------------------------------------------------------------------------
# Processes


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of a process from /proc, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("latin-1")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def process_tree(root_pid: int, marker: str | None = None) -> set[int]:
    """Live processes of one browser: its process group, its descendants, and
    every process whose command line contains ``marker`` (its temporary
    folder; the crash handler double-forks out of the tree but names it).
    Zombies are not counted: they are dead, waiting to be reaped."""
    stats = {pid: _proc_stat(pid) for pid in _pids()}
    live = {pid: s for pid, s in stats.items() if s is not None and s[0] != "Z"}
    found = {pid for pid, (_, _, pgid) in live.items() if pgid == root_pid}
    if root_pid in live:
        found.add(root_pid)
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in live.items():
        children.setdefault(ppid, []).append(pid)
    todo, seen = [root_pid], {root_pid}
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                found.add(child)
                todo.append(child)
    if marker:
        found.update(pid for pid in live if pid != os.getpid() and marker in _cmdline(pid))
    return found


def chromium_processes() -> list[int]:
    """Every live (non-zombie) Chromium process on the machine (for tests and checks)."""
    found = []
    for pid in _pids():
        stat = _proc_stat(pid)
        if stat is None or stat[0] == "Z":
            continue
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            exe = ""
        if "chromium" in exe or "chrome" in Path(exe).name:
            found.append(pid)
    return found


def sweep_stale_folders(directory: str | None = None) -> list[str]:
    """Remove the temporary folders of browsers whose Python process is gone.

    A Python killed outright (SIGKILL) takes its browser with it (the
    parent-death signal) but cannot remove the browser's folder; the next
    browser started on the machine does. Returns the folders removed.
    """
    directory = directory or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if not entry.name.startswith(FOLDER_PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            owner = entry.name[len(FOLDER_PREFIX) :].split("-", 1)[0]
            if not owner.isdigit() or _alive(int(owner)):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def _alive(pid: int) -> bool:
    stat = _proc_stat(pid)
    return stat is not None and stat[0] != "Z"


def _pdeathsig() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking the kernel to SIGKILL the child when its parent dies (Linux)."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    sig = int(signal.SIGKILL)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)

    return preexec


class _Browser:
    """One Chromium process and the Playwright connection to it.

    Created, used and closed in one worker thread (Playwright's sync API is
    bound to its thread); :meth:`kill` alone may be called from any thread.
    """

    def __init__(self, executable: str, viewport: tuple[int, int]) -> None:
        self.executable = executable
        self.viewport = viewport
        self.folder: str | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._pw: Any = None
        self._browser: Any = None
        self._contexts: dict[bool, Any] = {}
        self._kill_lock = threading.Lock()
        self._reaped = False
        #: Set by the page's ``crash`` event; the caller watches it while it waits.
        self.crashed = threading.Event()

    # -- lifetime ---------------------------------------------------------

    def start(self, timeout: float) -> None:
        """Start Chromium in its own process group and connect Playwright over CDP."""
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as e:
            raise BrowserUnavailable(f"Playwright is not installed: {e}") from e
        if not os.access(self.executable, os.X_OK):
            raise BrowserUnavailable(f"no Chromium at {self.executable}")
        sweep_stale_folders()
        self.folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-")
        profile = os.path.join(self.folder, "profile")
        # HOME and XDG_CONFIG_HOME inside the folder: nothing is written to the
        # user's ~/.config, and the crash handler's command line names the folder.
        env = dict(os.environ, HOME=self.folder, XDG_CONFIG_HOME=self.folder)
        args = [
            self.executable,
            *CHROMIUM_FLAGS,
            *EXTRA_FLAGS,
            f"--user-data-dir={profile}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "about:blank",
        ]
        deadline = time.monotonic() + timeout
        with open(os.path.join(self.folder, "stderr.log"), "wb") as log:
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=env,
                start_new_session=True,
                preexec_fn=_pdeathsig(),  # one prctl call in the child, nothing else
            )
        port_file = Path(profile, "DevToolsActivePort")
        endpoint = None
        while endpoint is None:
            if self.proc.poll() is not None:
                raise BrowserUnavailable(
                    f"Chromium exited with {self.proc.returncode}: {self._stderr_tail()}"
                )
            if time.monotonic() > deadline:
                raise BrowserUnavailable(f"Chromium did not start in {timeout:g} s")
            with contextlib.suppress(OSError):
                lines = port_file.read_text().split("\n")
                if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].strip():
                    endpoint = f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}"
            if endpoint is None:
                time.sleep(0.02)
        try:
            self._pw = sync_playwright().start()
            remaining = max(1.0, deadline - time.monotonic())
            self._browser = self._pw.chromium.connect_over_cdp(endpoint, timeout=remaining * 1000)
        except Exception as e:  # the driver or the connection: no browser to use
            raise BrowserUnavailable(f"cannot connect to Chromium: {_first_line(e)}") from e

    def close(self) -> None:
        """Disconnect Playwright and kill the browser (used after success and failure alike)."""
        try:
            if self._pw is not None:
                with contextlib.suppress(Exception):  # the connection may be gone already
                    self._pw.stop()
        finally:
            self._pw = self._browser = None
            self._contexts.clear()
            self.kill()

    def kill(self) -> None:
        """SIGKILL every process of this browser and wait until none is alive (any thread)."""
        with self._kill_lock:
            proc = self.proc
            if proc is None or self._reaped:  # never signal a pid that may be reused
                self._remove_folder()
                return
            marker = self.folder
            # Liveness from /proc only (zombies excluded): Popen.poll() answers
            # None while another thread holds its wait lock.
            pids: set[int] = set()
            for attempt in range(100):
                pids = process_tree(proc.pid, marker)
                if not pids:
                    break
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=0.05 if attempt else 0.2)
            if pids:
                logger.error(
                    "Chromium processes still alive after SIGKILL: %s",
                    [(pid, _proc_stat(pid), _cmdline(pid)[:100]) for pid in sorted(pids)],
                )
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)  # reap the browser, our child
            self._reaped = proc.returncode is not None and not pids
            self._remove_folder()

    def _remove_folder(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def _stderr_tail(self) -> str:
        if self.folder is None:
            return ""
        try:
            data = Path(self.folder, "stderr.log").read_bytes()
        except OSError:
            return ""
        return data[-500:].decode("utf-8", "replace").strip()

    def processes(self) -> set[int]:
        """Live processes of this browser."""
        proc = self.proc
        if proc is None:
            return set()
        return process_tree(proc.pid, self.folder)

    # -- pages ------------------------------------------------------------

    def _context(self, javascript: bool) -> Any:
        ctx = self._contexts.get(javascript)
        if ctx is None:
            width, height = self.viewport
            ctx = self._browser.new_context(
                viewport={"width": width, "height": height},
                device_scale_factor=1,
                java_script_enabled=javascript,
                service_workers="block",
                accept_downloads=False,
            )
            ctx.route("**/*", _abort)
            if javascript and hasattr(ctx, "route_web_socket"):
                ctx.route_web_socket("**/*", _close_socket)
            self._contexts[javascript] = ctx
        return ctx

    def measure(
        self,
        html: str,
        *,
        javascript: bool,
        timeout: float,
        attribute: str,
        page_hook: Callable[[Any], None] | None,
    ) -> Layout:
        """Render ``html`` in a new tab and measure it (worker thread only)."""
        started = time.perf_counter()
        w, h, ids, flat = self._on_page(
            html,
            javascript=javascript,
            timeout=timeout,
            page_hook=page_hook,
            read=lambda page: page.evaluate(_MEASURE_JS, attribute),
        )
        boxes = {
            int(k): Box(flat[4 * i], flat[4 * i + 1], flat[4 * i + 2], flat[4 * i + 3])
            for i, k in enumerate(ids)
        }
        return Layout(
            width=float(w),
            height=float(h),
            boxes=boxes,
            seconds=time.perf_counter() - started,
        )

    def dom(
        self,
        html: str,
        *,
        javascript: bool,
        timeout: float,
        page_hook: Callable[[Any], None] | None,
    ) -> str:
        """Render ``html`` in a new tab and serialise the DOM its scripts built (worker thread
        only)."""
        return self._on_page(
            html,
            javascript=javascript,
            timeout=timeout,
            page_hook=page_hook,
            read=_settled_content if javascript else _content,
        )

    def _on_page(
        self,
        html: str,
        *,
        javascript: bool,
        timeout: float,
        page_hook: Callable[[Any], None] | None,
        read: Callable[[Any], T],
    ) -> T:
        """Set ``html`` as a new tab's content, then ``read(page)``; Playwright's errors as
        :class:`RenderTimeout`, :class:`RenderCrash` or :class:`VisualError`."""
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        self.crashed.clear()
        try:
            page = self._context(javascript).new_page()
            page.on("crash", lambda _page: self.crashed.set())
            page.set_default_timeout(timeout * 1000)
            page.set_content(html, timeout=timeout * 1000, wait_until="load")
            if page_hook is not None:
                page_hook(page)
            result = read(page)
            page.close()
        except PlaywrightTimeout as e:
            raise RenderTimeout(f"page did not render in {timeout:g} s") from e
        except PlaywrightError as e:
            if self.crashed.is_set() or "crash" in str(e).lower():
                raise RenderCrash(f"renderer crashed: {_first_line(e)}") from e
            if self.proc is not None and self.proc.poll() is not None:
                raise RenderCrash(f"browser exited: {_first_line(e)}") from e
            raise VisualError(f"rendering failed: {_first_line(e)}") from e
        return result


#: Run in the page after its load event: one turn of the event loop, so that what the
#: scripts queued with ``setTimeout(..., 0)`` or on ``load`` has run before the DOM is read.
_SETTLE_JS = "() => new Promise((resolve) => setTimeout(resolve, 0))"


def _settled_content(page: Any) -> str:
    page.evaluate(_SETTLE_JS)
    return page.content()


def _content(page: Any) -> str:
    return page.content()  # no scripts: no timer would ever fire


def _abort(route: Any) -> None:
    """Every request of a page is aborted: no network, and nothing served but the page itself."""
    route.abort()


def _close_socket(ws: Any) -> None:
    ws.close()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# --------------------------------------------------------------------------
# The worker thread


class _Worker(threading.Thread):
    """Runs the jobs of one browser, one at a time, in one thread (Playwright's sync API)."""

    def __init__(self) -> None:
        super().__init__(name="newsspider-render", daemon=True)
        self.jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self.browser: _Browser | None = None

    def run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as e:  # handed to the caller through the future
                future.set_exception(e)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self.jobs.put((fn, future))
        return future

    def stop(self) -> None:
        self.jobs.put(None)


class _State:
    """A renderer's mutable state, kept apart from the :class:`Renderer` so
    that its finalizer (``weakref.finalize``, also run at exit) can shut the
    browser down without keeping the renderer alive."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.worker: _Worker | None = None
        self.closed = False
        self.pages = 0  # pages served by the current browser

    def discard_worker(self, *, kill_first: bool) -> None:
        """Close the worker's browser and Playwright driver, and end the thread.

        ``kill_first`` (after a failure): SIGKILL the browser before asking the
        thread to disconnect, so a call stuck on the page fails at once. The
        browser is killed in any case, also when the thread does not answer.
        """
        worker, self.worker = self.worker, None
        self.pages = 0
        if worker is None:
            return
        browser = worker.browser
        if browser is not None:
            if kill_first:
                browser.kill()
            future = worker.submit(browser.close)
            try:
                future.result(timeout=GRACE + 5)
            except FutureTimeout:
                logger.warning("render thread did not answer; killing Chromium")
            except Exception:  # a failed disconnect still ends in the kill below
                logger.debug("closing the browser failed", exc_info=True)
            browser.kill()
        worker.stop()
        worker.join(timeout=GRACE)
        if worker.is_alive():
            logger.warning("render thread still busy after the kill; abandoned")

    def shutdown(self) -> None:
        with self.lock:
            self.closed = True
            self.discard_worker(kill_first=False)


class Renderer:
    """Headless Chromium, reused across pages (Jing & Zuo §2.3 a: render the page).

    ::

        with Renderer(timeout=10) as r:
            layout = r.layout(html)      # Layout(width=W, height=H, boxes={...})

    One browser is started on first use and serves every page until it
    fails, has served ``recycle_after`` pages, or the renderer is closed;
    each page gets a new tab. Calls may come from any thread (they are
    serialised). ``javascript`` is the default for :meth:`layout`;
    ``viewport`` is (width, height) in CSS px.
    """

    def __init__(
        self,
        *,
        executable: str = CHROMIUM,
        timeout: float = DEFAULT_TIMEOUT,
        javascript: bool = False,
        viewport: tuple[int, int] = VIEWPORT,
        launch_timeout: float = LAUNCH_TIMEOUT,
        recycle_after: int = RECYCLE_AFTER,
    ) -> None:
        self.executable = executable
        self.recycle_after = recycle_after
        self.timeout = timeout
        self.javascript = javascript
        self.viewport = viewport
        self.launch_timeout = launch_timeout
        self._state = _State()
        self._finalizer = weakref.finalize(self, self._state.shutdown)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the browser and wait until no process of it is left."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._state.closed

    def processes(self) -> set[int]:
        """Live processes of the current browser (empty when none is running)."""
        worker = self._state.worker
        browser = worker.browser if worker is not None else None
        return browser.processes() if browser is not None else set()

    def layout(
        self,
        html: str,
        *,
        javascript: bool | None = None,
        timeout: float | None = None,
        attribute: str = ID_ATTRIBUTE,
        page_hook: Callable[[Any], None] | None = None,
    ) -> Layout:
        """Render one decoded page and measure it.

        ``timeout`` (seconds) bounds the render and the measurement together.
        ``page_hook`` is called in the render thread with the Playwright page
        after the content is set and before it is measured (for tests and
        debugging, e.g. to send CDP ``Page.crash``).

        Raises :class:`RenderTimeout` or :class:`RenderCrash` (the browser is
        then killed; the next call starts a new one) and
        :class:`BrowserUnavailable`.
        """
        js = self.javascript if javascript is None else javascript
        limit = self.timeout if timeout is None else timeout
        return self._call(
            lambda browser: browser.measure(
                html, javascript=js, timeout=limit, attribute=attribute, page_hook=page_hook
            ),
            limit,
        )

    def html(
        self,
        html: str,
        *,
        javascript: bool = True,
        timeout: float | None = None,
        page_hook: Callable[[Any], None] | None = None,
    ) -> str:
        """Render one decoded page with JavaScript on (by default) and return the HTML of
        the DOM its inline scripts built (``document.write``, DOM calls), read after the
        load event and one more turn of the event loop.

        The network stays closed as for :meth:`layout`: external scripts, style sheets and
        images are never fetched, so only what the page carries inline runs; a
        :data:`RENDER_CSP` ``<meta>`` (inline scripts and ``eval`` allowed, nothing
        loaded) is put first in ``<head>`` and stays in the returned HTML. Same failures,
        and the same kill of a hung or crashed browser, as :meth:`layout`.
        """
        limit = self.timeout if timeout is None else timeout
        source = with_render_csp(html)
        return self._call(
            lambda browser: browser.dom(
                source, javascript=javascript, timeout=limit, page_hook=page_hook
            ),
            limit,
        )

    def _call(self, job: Callable[[_Browser], T], limit: float) -> T:
        """Run ``job`` with the browser in its thread, waiting at most ``limit`` + GRACE."""
        state = self._state
        with state.lock:
            if state.closed:
                raise VisualError("renderer is closed")
            worker = self._ready_worker()
            browser = worker.browser
            assert browser is not None
            future = worker.submit(lambda: job(browser))
            try:
                return _wait(future, browser, limit + GRACE)
            except FutureTimeout:
                # Stuck in a call that has no timeout of its own (evaluate on a
                # page whose scripts loop): kill the browser from here, which
                # makes the pending call fail; the next page starts afresh.
                state.discard_worker(kill_first=True)
                raise RenderTimeout(f"page did not render in {limit:g} s") from None
            except _Crashed:
                state.discard_worker(kill_first=True)
                raise RenderCrash("renderer crashed") from None
            except BaseException:
                state.discard_worker(kill_first=True)
                raise

    def _ready_worker(self) -> _Worker:
        """The worker with a started browser, starting both when needed (lock held)."""
        state = self._state
        worker = state.worker
        if worker is not None and state.pages >= self.recycle_after:
            state.discard_worker(kill_first=False)
            worker = None
        if worker is not None and worker.browser is not None:
            proc = worker.browser.proc
            if proc is not None and proc.poll() is None:  # idle worker: no race on wait()
                state.pages += 1
                return worker
            state.discard_worker(kill_first=True)  # the browser died between pages
        worker = _Worker()
        worker.start()
        state.worker = worker
        browser = _Browser(self.executable, self.viewport)
        worker.browser = browser
        future = worker.submit(lambda: browser.start(self.launch_timeout))
        try:
            future.result(timeout=self.launch_timeout + GRACE)
        except FutureTimeout:
            state.discard_worker(kill_first=True)
            raise BrowserUnavailable(
                f"Chromium did not start in {self.launch_timeout:g} s"
            ) from None
        except BaseException:
            state.discard_worker(kill_first=True)
            raise
        state.pages = 1
        return worker


class _Crashed(Exception):
    """The page crashed while the render thread was still waiting on it."""


def _wait(future: Future[T], browser: _Browser, seconds: float) -> T:
    """The future's result within ``seconds``; :class:`_Crashed` as soon as the page crashes.

    Playwright fails its own pending page calls when the renderer dies, but
    not every call (a raw CDP command never returns), so the page's ``crash``
    event is watched too.
    """
    deadline = time.monotonic() + seconds
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FutureTimeout
        try:
            return future.result(timeout=min(remaining, 0.2))
        except FutureTimeout:
            if browser.crashed.is_set() and not future.done():
                raise _Crashed from None


_shared: Renderer | None = None
_shared_lock = threading.Lock()


def shared_renderer() -> Renderer:
    """One process-wide :class:`Renderer` with the defaults (closed at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.closed:
            _shared = Renderer()
        return _shared


def close_shared_renderer() -> None:
    """Close the process-wide renderer, if one was started."""
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.close()
            _shared = None


_HEAD = re.compile(r"<head(?:\s[^>]*)?>", re.I)
_DOCTYPE = re.compile(r"\s*<!doctype[^>]*>", re.I)


def with_render_csp(html: str) -> str:
    """``html`` with a :data:`RENDER_CSP` ``<meta>`` first in its ``<head>`` (after the
    doctype when there is no ``<head>`` tag: the parser then opens the head for it)."""
    meta = (
        '<meta http-equiv="Content-Security-Policy" content="'
        + html_escape.escape(RENDER_CSP, quote=True)
        + '">'
    )
    if m := _HEAD.search(html):
        return html[: m.end()] + meta + html[m.end() :]
    m = _DOCTYPE.match(html)
    at = m.end() if m else 0
    return html[:at] + meta + html[at:]


def render_html(
    html: str,
    *,
    javascript: bool = True,
    timeout: float | None = None,
    renderer: Renderer | None = None,
) -> str:
    """The HTML of ``html``'s DOM after its inline scripts ran (:meth:`Renderer.html`), in
    ``renderer`` or the process-wide one (:func:`shared_renderer`)."""
    return (renderer or shared_renderer()).html(html, javascript=javascript, timeout=timeout)
