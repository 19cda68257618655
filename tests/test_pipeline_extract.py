"""``ExtractionPipeline`` and its worker pool: trained xpath thresholds, extraction off the
reactor thread (worker processes for CPU methods, a thread for the visual ones), and the
registry name of ``EXTRACTOR`` deciding which.

Offline: pages are strings in this file; the database is a SQLite file under tmp_path.
Items are pushed through ``process_item`` inside ``asyncio.run``, the loop Scrapy's default
reactor runs on. The real-browser test is skipped without ``/usr/bin/chromium``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from newsspider.extraction import extract_article
from newsspider.extraction.registry import NAMES, registered
from newsspider.extraction.render import unavailable_reason
from newsspider.extraction.xpathseg import Thresholds
from newsspider.items import ArticleItem
from newsspider.pipelines import extract as ex
from newsspider.pipelines.extract import (
    EmptyBody,
    ExtractionFailed,
    ExtractionPipeline,
    NotHtml,
    trained_xpath_params,
)
from newsspider.storage import create_schema, engine_for
from newsspider.storage.thresholds import save_thresholds
from newsspider.workers import WorkerDied, WorkerPool, auto_workers, parse_workers
from tests.test_xpathseg import BODY, PAGE

REPO = Path(__file__).resolve().parents[1]
NAV = ["首页", "国内", "国际", "财经", "关于", "联系"]  # PAGE's first cluster: its link bar
#: PAGE with a <title>: an item needs a headline even when the body is the link bar.
TITLED = PAGE.replace("<head>", "<head><title>标题文字</title>", 1)

ARTICLE = """<html><head><meta charset="utf-8"><title>测试新闻标题_网易新闻</title></head>
<body><div class="nav"><a href="/">首页</a> <a href="/a">国内</a></div>
<h1>测试新闻标题</h1><p>2024-05-01 10:00</p>
<div id="content"><p>第一段正文内容，讲述了一件很长很长的事情，字数足够多。</p>
<p>第二段正文内容，继续讲述这件事情的来龙去脉，字数同样足够多。</p>
<p>第三段正文内容，最后总结了这件事情的意义和影响，字数也足够多。</p></div>
</body></html>"""


#: ARTICLE laid out taller than a viewport: its body falls in VL_PS's CENTER region.
TALL = ARTICLE.replace(
    '<div id="content">', '<div style="height:300px"></div><div id="content">'
).replace("</body>", '<div style="height:300px"></div></body>')


class Stats:
    """The two calls the pipeline makes on Scrapy's stats collector."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value


def item(html: str | bytes, site: str = "netease", n: int = 1) -> ArticleItem:
    return ArticleItem(
        url=f"http://money.163.com/24/0501/10/AAAAAAAA0025300{n}.html",
        site=site,
        source="网易新闻",
        html=html.encode("utf-8") if isinstance(html, str) else html,
        headers={"Content-Type": "text/html; charset=utf-8"},
        fetched_at=datetime.now(UTC),
    )


def run(pipe: ExtractionPipeline, *items: ArticleItem) -> list[Any]:
    """``process_item`` of each item concurrently, in one asyncio loop; exceptions returned."""

    async def main() -> list[Any]:
        return await asyncio.gather(*(pipe.process_item(i) for i in items), return_exceptions=True)

    return asyncio.run(main())


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'corpus.db'}"


def train(database_url: str, site: str, t: Thresholds) -> None:
    engine = engine_for(database_url)
    create_schema(engine)
    with Session(engine) as session, session.begin():
        save_thresholds(session, site, t)


# --------------------------------------------------------------------------
# (3) the registry name decides the method, its mode and where it runs


@pytest.mark.parametrize("method", NAMES)
def test_rendering_methods_run_in_a_thread_the_others_in_workers(method: str) -> None:
    pipe = ExtractionPipeline(Stats(), method, workers=2)
    rendering = method.startswith("visual")
    assert registered(method).renders is rendering
    assert (pipe.visual, pipe.workers) == (rendering, 0 if rendering else 2)


@pytest.mark.parametrize("method", ["blockstats", "blockstats-paper", "xpath", "punctuation"])
def test_cpu_methods_fill_the_item(method: str) -> None:
    pipe = ExtractionPipeline(Stats(), method)
    pipe.open_spider()
    try:
        (out,) = run(pipe, item(ARTICLE))
    finally:
        pipe.close_spider()
    assert not isinstance(out, Exception), out
    assert "第一段正文内容" in out.raw_text
    if method.startswith("blockstats"):
        mode = "paper" if method == "blockstats-paper" else "best"
        assert out.raw_text == extract_article(ARTICLE, mode=mode).text


def test_unknown_method_fails_at_start() -> None:
    with pytest.raises(ValueError, match=r"unknown extraction method.*blockstats-paper"):
        ExtractionPipeline(Stats(), "nonsense")


# --------------------------------------------------------------------------
# (1) trained xpath thresholds


def test_trained_thresholds_are_loaded_once(database_url: str) -> None:
    assert trained_xpath_params(database_url) == {}  # no table yet
    train(database_url, "netease", Thresholds(0.0, 0.0, 3))
    train(database_url, "sina", Thresholds(198.4, 0.972, 20))
    assert trained_xpath_params(database_url) == {
        "netease": {"Length_Threshold": 0.0, "B_n_Threshold": 0.0},
        "sina": {"Length_Threshold": 198.4, "B_n_Threshold": 0.972},
    }


@pytest.mark.parametrize("workers", [0, 1], ids=["in-process", "worker-process"])
def test_xpath_uses_the_site_thresholds_and_defaults_elsewhere(
    database_url: str, workers: int
) -> None:
    # Thresholds of 0 make the first cluster (the link bar) the body: visibly the trained ones.
    train(database_url, "netease", Thresholds(0.0, 0.0, 1))
    pipe = ExtractionPipeline(Stats(), "xpath", workers=workers, database_url=database_url)
    pipe.open_spider()
    try:
        trained, untrained = run(pipe, item(TITLED, "netease", 1), item(TITLED, "sina", 2))
    finally:
        pipe.close_spider()
    assert trained.raw_text.split("\n") == NAV
    assert untrained.raw_text.split("\n") == BODY  # the page's own thresholds (the default)


def test_unreadable_database_means_defaults(tmp_path: Path, caplog) -> None:
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"this is not sqlite" * 100)
    assert trained_xpath_params(f"sqlite:///{bad}") == {}
    assert "per-page thresholds" in caplog.text


def test_other_methods_do_not_read_thresholds(database_url: str) -> None:
    train(database_url, "netease", Thresholds(0.0, 0.0, 1))
    pipe = ExtractionPipeline(Stats(), "blockstats", database_url=database_url)
    pipe.open_spider()
    pipe.close_spider()
    assert pipe.site_params == {}


# --------------------------------------------------------------------------
# (2) off the reactor thread: worker processes, and a thread for the visual methods


def test_workers_setting() -> None:
    assert auto_workers(1) == 0 and auto_workers(2) == 1 and auto_workers(64) == 4
    assert parse_workers("auto") == auto_workers() and parse_workers(None) == auto_workers()
    assert parse_workers("3") == 3 and parse_workers(0) == 0
    with pytest.raises(ValueError):
        parse_workers(-1)


def test_from_crawler_reads_the_settings(database_url: str) -> None:
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(
        settings_dict={
            "EXTRACTOR": "xpath",
            "EXTRACTION_WORKERS": "2",
            "EXTRACTION_WORKER_MAX_TASKS": 7,
            "DATABASE_URL": database_url,
        }
    )
    pipe = ExtractionPipeline.from_crawler(crawler)
    assert (pipe.method, pipe.workers, pipe.max_tasks) == ("xpath", 2, 7)
    assert pipe.database_url == database_url
    visual = ExtractionPipeline.from_crawler(get_crawler(settings_dict={"EXTRACTOR": "visual"}))
    assert visual.workers == 0  # never a browser per process


def test_pool_gives_the_same_items_as_inline() -> None:
    pages = [item(ARTICLE, n=n) for n in range(6)] + [item(b"", n=7), item("<p></p>", n=8)]
    inline = ExtractionPipeline(Stats(), "blockstats", workers=0)
    inline.open_spider()
    expected = run(inline, *(ArticleItem(**vars_of(i)) for i in pages))
    inline.close_spider()
    pooled = ExtractionPipeline(Stats(), "blockstats", workers=2)
    pooled.open_spider()
    try:
        got = run(pooled, *pages)
        assert pooled._pool is not None and pooled._pool.size == 2
    finally:
        pooled.close_spider()
    for a, b in zip(expected, got, strict=True):
        assert type(a) is type(b)
        if isinstance(a, ArticleItem):
            assert (a.title, a.published, a.raw_text, a.encoding) == (
                b.title,
                b.published,
                b.raw_text,
                b.encoding,
            )
    assert isinstance(got[6], NotHtml) and isinstance(got[7], EmptyBody)


def vars_of(i: ArticleItem) -> dict[str, Any]:
    return {f: getattr(i, f) for f in i.__slots__}  # type: ignore[attr-defined]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead too
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_pool_replaces_dead_and_spent_workers() -> None:
    pool = WorkerPool(1, max_tasks=2)
    try:
        first = pool.workers[0].proc.pid
        for _ in range(3):  # the third job goes to a fresh worker
            assert pool.submit("blockstats", ARTICLE, None, None, None, {}).result(30).text
        assert pool.started == 2 and pool.workers[0].proc.pid != first
        worker = pool.workers[0]
        worker.proc.send_signal(signal.SIGSTOP)  # it cannot answer before it is killed
        held = pool.submit("blockstats", ARTICLE, None, None, None, {})
        worker.proc.kill()
        with pytest.raises(WorkerDied):
            held.result(30)
        assert pool.submit("blockstats", ARTICLE, None, None, None, {}).result(30).title
        assert pool.started == 3
    finally:
        pool.shutdown()
    assert not any(_alive(w.proc.pid) for w in [*pool.workers, *pool.retired])


def test_a_page_that_kills_its_worker_twice_is_dropped(monkeypatch) -> None:
    pipe = ExtractionPipeline(Stats(), "blockstats", workers=1)
    pipe.open_spider()
    try:

        def dying(*job: Any) -> Any:
            from concurrent.futures import Future

            f: Future[Any] = Future()
            f.set_exception(WorkerDied("killed"))
            return f

        monkeypatch.setattr(pipe._pool, "submit", dying)
        (out,) = run(pipe, item(ARTICLE))
    finally:
        pipe.close_spider()
    assert isinstance(out, ExtractionFailed)
    assert pipe.stats.values["newsspider/extraction_worker_died"] == 1


def test_workers_exit_with_a_killed_crawl_process() -> None:
    """A SIGKILLed crawl leaves no extraction process behind."""
    code = textwrap.dedent(
        """
        import sys, time
        from newsspider import workers
        pool = workers.SHARED_POOL.acquire(2, 0)
        print(*(w.proc.pid for w in pool.workers), flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _ticks_while(coro_factory: Any) -> tuple[Any, int]:
    """Run ``process_item`` with a 10 ms ticker beside it: how often did the loop tick?"""

    async def main() -> tuple[Any, int]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        try:
            result = await coro_factory()
        except Exception as exc:
            result = exc
        stop.set()
        await task
        return result, ticks

    return asyncio.run(main())


def test_visual_methods_run_beside_the_loop(monkeypatch) -> None:
    """A slow (rendering) extraction leaves the event loop free: downloads go on."""
    threads: set[str] = set()
    real = ex.extract_page

    def slow_render(*job: Any) -> Any:
        threads.add(threading.current_thread().name)
        time.sleep(0.5)  # what waiting on Chromium looks like to the loop
        return real("blockstats-paper", *job[1:5], {})

    monkeypatch.setattr(ex, "extract_page", slow_render)
    pipe = ExtractionPipeline(Stats(), "visual+blockstats")
    pipe.open_spider()
    try:
        out, ticks = _ticks_while(lambda: pipe.process_item(item(ARTICLE)))
    finally:
        pipe.close_spider()
    assert out.title == "测试新闻标题"
    assert ticks >= 20  # ~50 in 0.5 s; 0 if the loop were blocked
    assert threads and threading.main_thread().name not in threads


def test_cpu_methods_in_workers_leave_the_loop_free() -> None:
    pipe = ExtractionPipeline(Stats(), "blockstats", workers=1)
    pipe.open_spider()
    try:
        big = item(ARTICLE.replace("</body>", "<p>更多内容，字数足够多。</p>" * 20000 + "</body>"))
        out, ticks = _ticks_while(lambda: pipe.process_item(big))
    finally:
        pipe.close_spider()
    assert out.title == "测试新闻标题"
    assert ticks >= 3


NO_BROWSER = unavailable_reason()


@pytest.mark.skipif(NO_BROWSER is not None, reason=str(NO_BROWSER))
@pytest.mark.parametrize("method", ["visual", "visual+blockstats-best"])
def test_real_visual_extraction_off_the_loop(method: str) -> None:
    pipe = ExtractionPipeline(Stats(), method)
    pipe.open_spider()
    try:
        out, ticks = _ticks_while(lambda: pipe.process_item(item(TALL)))
    finally:
        pipe.close_spider()
    assert not isinstance(out, Exception), out
    assert "第二段正文内容" in out.raw_text
    assert ticks >= 1
