"""A local test site and a crawl runner shared by the reliability tests.

Nothing here touches the network: :class:`LocalServer` is a ``ThreadingHTTPServer``
bound to 127.0.0.1 on a free port (bound on construction, so no sleep is needed), serving
a dict of routes. A route is either a :class:`Page` (status, headers, body) or a callable
taking the request handler, for misbehaviour a static page cannot express (a connection
reset, a response that never comes, a 503 before the page). The server records every
request with its headers, so a test can assert what was, and was not, fetched.

:func:`run_crawl` runs ``scrapy runspider`` in a child process (a Twisted reactor cannot
restart in the test process) on a one-row ``NewsSpider`` for the server, with the
project's settings and pipelines, and returns the final stats (written as JSON by
:class:`StatsToFile`, so values keep their types), the log and the requests the server saw.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from scrapy.settings import Settings
from sqlalchemy import event

import newsspider.settings as project_settings_module
from newsspider.storage import Base, engine_for, engine_from_settings

REPO = Path(__file__).resolve().parents[1]

HTML = {"Content-Type": "text/html; charset=utf-8"}


@dataclass(frozen=True)
class Page:
    """A static response: status, headers, body (Content-Length is added unless ``chunked``)."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: dict(HTML))
    #: no Content-Length: the body ends when the connection closes (HTTP/1.0)
    no_length: bool = False


Handler = Callable[["_Handler"], None]
Route = Page | Handler


@dataclass(frozen=True)
class Seen:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    #: ``time.monotonic()`` when the request arrived
    at: float = 0.0


class _Handler(BaseHTTPRequestHandler):
    server: LocalServer

    def do_GET(self) -> None:
        path = self.path.split("#")[0]
        self.server.seen.append(Seen(path, dict(self.headers.items()), time.monotonic()))
        route = self.server.routes.get(path) or self.server.routes.get(path.split("?")[0])
        if route is None:
            route = Page(b"not found", 404, {"Content-Type": "text/plain"})
        if callable(route) and not isinstance(route, Page):
            route(self)
        else:
            self.send_page(route)

    def send_page(self, page: Page) -> None:
        self.send_response(page.status)
        for name, value in page.headers.items():
            self.send_header(name, value)
        if not page.no_length:
            self.send_header("Content-Length", str(len(page.body)))
        self.end_headers()
        try:
            self.wfile.write(page.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a download size limit): expected

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class LocalServer(ThreadingHTTPServer):
    """The test site; ``base`` is ``http://127.0.0.1:PORT``."""

    daemon_threads = True

    def __init__(self, routes: dict[str, Route] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Route] = dict(routes or {})
        self.seen: list[Seen] = []
        #: set when the server stops, so sleeping handlers return at once
        self.stopping = threading.Event()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]


@contextmanager
def serve(routes: dict[str, Route] | None = None) -> Iterator[LocalServer]:
    """Run a :class:`LocalServer` in a thread for the ``with`` block."""
    server = LocalServer(routes)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def fresh_database(url: str) -> str:
    """Drop every newsspider table of ``url`` (a shared PostgreSQL test database); return it.

    ``storage.models`` declares every table, so ``drop_all`` knows each table and foreign
    key a crawl may have created.
    """
    Base.metadata.drop_all(engine_for(url))
    return url


def project_settings(**overrides: Any) -> Settings:
    """The project's settings (``newsspider/settings.py``) with ``overrides``, as a crawl
    started in the project would see them: for building a component without a crawl."""
    settings = Settings()
    settings.setmodule(project_settings_module, priority="project")
    settings.update(overrides, priority="cmdline")
    return settings


# -- misbehaving routes ------------------------------------------------------------------------


def reset_connection(handler: _Handler) -> None:
    """Close the socket with SO_LINGER 0: the client gets a TCP RST, no response."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


def hang(seconds: float) -> Handler:
    """Send nothing for ``seconds`` (or until the server stops), then close."""

    def route(handler: _Handler) -> None:
        handler.server.stopping.wait(seconds)
        handler.close_connection = True

    return route


def slow(page: Page, seconds: float) -> Handler:
    """Send ``page`` after ``seconds`` (a slow site keeps a crawl running for a while)."""

    def route(handler: _Handler) -> None:
        handler.server.stopping.wait(seconds)
        handler.send_page(page)

    return route


def sequence(*routes: Route) -> Handler:
    """Answer the n-th request with the n-th route, the last one ever after."""
    lock = threading.Lock()
    calls = [0]

    def route(handler: _Handler) -> None:
        with lock:
            n = min(calls[0], len(routes) - 1)
            calls[0] += 1
        chosen = routes[n]
        if isinstance(chosen, Page):
            handler.send_page(chosen)
        else:
            chosen(handler)

    return route


def redirect(location: str, status: int = 302) -> Page:
    return Page(b"", status, {"Location": location})


# -- pages ----------------------------------------------------------------------------------------


def article_html(n: int | str, paragraphs: Sequence[str] | None = None, *, extra: str = "") -> str:
    """A small Chinese news article page with a unique body."""
    paras = paragraphs or [
        f"这是第{n}篇测试新闻的第一段正文，记者在现场进行了详细的采访和报道。",
        f"第{n}篇新闻的第二段介绍了事件的背景，专家认为这一变化将产生深远影响。",
        f"报道最后指出，第{n}号事件的后续进展仍需持续关注，有关部门表示将及时公布信息。",
    ]
    body = "".join(f"<p>{p}</p>" for p in paras)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>第{n}篇新闻标题</title>"
        "<meta name='publishdate' content='2024-05-01 08:00:00'></head><body>"
        f"<h1>第{n}篇新闻标题</h1><div class='content'>{body}</div>{extra}</body></html>"
    )


def links_page(*hrefs: str) -> bytes:
    items = "".join(f'<li><a href="{h}">{h}</a></li>' for h in hrefs)
    return f"<!doctype html><html><body><ul>{items}</ul></body></html>".encode()


# -- crawling ---------------------------------------------------------------------------------

SPIDER_MODULE = '''\
from newsspider.sites import Site
from newsspider.spiders.news import NewsSpider


class LocalSpider(NewsSpider):
    """A one-row NewsSpider for the test server."""

    site = Site(
        key="local",
        source="本地新闻",
        allowed_domains=("127.0.0.1",),
        start_urls=({base!r} + "/",),
        article_patterns=(r"^https?://[^/]+/article/[\\w.-]+\\.html",),
        list_patterns=(r"^https?://[^/]+/list/[\\w-]+\\.html$", r"^https?://[^/]+/$"),
        title_stop_words=("_本地新闻",),
    )
'''

#: Settings that make a local crawl quick; politeness is tested on its own (test_politeness).
FAST = (
    "DOWNLOAD_DELAY=0",
    "AUTOTHROTTLE_ENABLED=False",
    "ROBOTSTXT_OBEY=False",
    "TELNETCONSOLE_ENABLED=False",
    "LOG_LEVEL=INFO",
)


class FakeStats(dict):
    """Enough of Scrapy's stats collector for a pipeline used without a crawler."""

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self[key] = self.get(key, start) + count

    def get_value(self, key: str, default: Any = None) -> Any:
        return self.get(key, default)

    def get_stats(self) -> dict[str, Any]:
        return dict(self)


def wait_for_line(path: Path, pattern: str, proc: subprocess.Popen, timeout: float = 60) -> str:
    """Wait until the file ``path`` (a child's log) has a line matching ``pattern``."""
    import re

    deadline = time.monotonic() + timeout
    regex = re.compile(pattern)
    while time.monotonic() < deadline:
        text = path.read_text("utf-8", errors="replace") if path.exists() else ""
        for line in text.splitlines():
            if regex.search(line):
                return line
        if proc.poll() is not None:
            raise AssertionError(f"the crawl ended before {pattern!r}:\n{text[-4000:]}")
        time.sleep(0.05)
    raise AssertionError(f"no {pattern!r} within {timeout} s")


class StatsToFile:
    """Extension: write the crawl's stats as JSON to ``TEST_STATS_FILE`` when it closes."""

    def __init__(self, crawler: Any) -> None:
        from scrapy import signals

        self.crawler = crawler
        self.path = crawler.settings.get("TEST_STATS_FILE")
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> StatsToFile:
        return cls(crawler)

    def spider_closed(self, spider: Any, reason: str) -> None:
        if self.path:
            stats = dict(self.crawler.stats.get_stats())
            stats["finish_reason"] = reason
            Path(self.path).write_text(json.dumps(stats, default=str), "utf-8")


class SlowArticleCommits:
    """Extension for crash tests: make every commit that writes articles slow and visible.

    Before the COMMIT of a transaction that inserted into ``articles`` it prints
    ``TEST-HOOK: committing article batch N`` to stderr and sleeps ``TEST_COMMIT_DELAY``
    seconds, so a test can SIGKILL the crawl while a whole batch (line counts and
    articles) is written but not committed. It listens on the pipeline's own engine
    (``engine_from_settings`` is cached on the same arguments).
    """

    def __init__(self, crawler: Any) -> None:
        s = crawler.settings
        self.delay = s.getfloat("TEST_COMMIT_DELAY", 1.0)
        self.batches = 0
        engine = engine_from_settings(s)
        event.listen(engine, "before_cursor_execute", self.before_cursor_execute)
        event.listen(engine, "commit", self.commit)

    @classmethod
    def from_crawler(cls, crawler: Any) -> SlowArticleCommits:
        return cls(crawler)

    def before_cursor_execute(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        # the articles table itself, not articles_fts (setup_search writes its settings)
        if statement.lstrip().upper().startswith("INSERT INTO ARTICLES ("):
            conn.info["writes_articles"] = True

    def commit(self, conn: Any) -> None:
        if conn.info.pop("writes_articles", False):
            self.batches += 1
            sys.stderr.write(f"TEST-HOOK: committing article batch {self.batches}\n")
            sys.stderr.flush()
            time.sleep(self.delay)


@dataclass
class CrawlResult:
    returncode: int
    stats: dict[str, Any]
    log: str
    seconds: float
    seen: list[Seen] = field(default_factory=list)

    def stat(self, name: str) -> int:
        return int(self.stats.get(name, 0))

    def requested(self, path: str) -> int:
        return sum(1 for s in self.seen if s.path == path)


def spider_module(server: LocalServer, tmp: Path) -> Path:
    module = tmp / "localspider.py"
    module.write_text(SPIDER_MODULE.format(base=server.base), encoding="utf-8")
    return module


def crawl_command(
    server: LocalServer,
    tmp: Path,
    database_url: str,
    *settings: str,
    args: Sequence[str] = (),
    extensions: Sequence[str] = (),
) -> list[str]:
    """``scrapy runspider`` of the local spider with the project's settings and pipelines.

    ``extensions`` are extra extension classes (dotted paths) to enable.
    """
    enabled = {"tests.localserver.StatsToFile": 0, "newsspider.replay.WarcRecorderExtension": 500}
    enabled.update(dict.fromkeys(extensions, 10))
    extensions_json = json.dumps(enabled)
    cmd = [
        sys.executable, "-m", "scrapy.cmdline", "runspider", str(spider_module(server, tmp)),
        "-s", f"DATABASE_URL={database_url}",
        "-s", f"TEST_STATS_FILE={tmp / 'stats.json'}",
        "-s", f"EXTENSIONS={extensions_json}",
    ]  # fmt: skip
    for s in (*FAST, *settings):
        cmd += ["-s", s]
    for a in args:
        cmd += ["-a", a]
    return cmd


def run_crawl(
    server: LocalServer,
    tmp: Path,
    database_url: str,
    *settings: str,
    args: Sequence[str] = (),
    timeout: float = 120,
    check: bool = True,
) -> CrawlResult:
    """Crawl the local site into ``database_url``; the settings are ``NAME=VALUE`` strings."""
    stats_file = tmp / "stats.json"
    stats_file.unlink(missing_ok=True)
    before = len(server.seen)
    started = time.monotonic()
    proc = subprocess.run(
        crawl_command(server, tmp, database_url, *settings, args=args),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.monotonic() - started
    if check:
        assert proc.returncode == 0, proc.stderr[-4000:]
        assert "Traceback" not in proc.stderr, proc.stderr[-6000:]
    stats = json.loads(stats_file.read_text("utf-8")) if stats_file.exists() else {}
    return CrawlResult(proc.returncode, stats, proc.stderr, seconds, server.seen[before:])
