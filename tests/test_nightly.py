"""``scrapy nightly`` end to end, plus its pure parts.

Every crawl runs ``python -m scrapy.cmdline nightly`` in a child process through a WARC
replay archive (``REPLAY_ARCHIVE``: no network) whose start pages sit at the sites' real
start URLs, so the spiders run exactly as at night, with no ``start_urls`` override.
The pages are the real saved NetEase (cx163-zh) and Sina (gne-unlabelled-zh) pages.

To stop a crawl at a known point, :class:`ParkAfter` (a test-only downloader
middleware, loaded by the child from this module) lets ``PARK_AFTER`` article requests
through and parks the rest forever; the test then polls the database until the
batches before the park are committed, and kills the process with SIGKILL. No test
sleeps for a fixed time.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self

import pytest
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request
from scrapy.utils.test import get_crawler
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from newsspider.incremental import SKIPPED_STAT, StoredUrlFilter
from newsspider.nightly.jobdir import JobDir, finish_jobdir, prepare_jobdir
from newsspider.nightly.lock import EXIT_LOCKED, LockHeld, RunLock
from newsspider.nightly.report import (
    FAILED,
    INTERRUPTED,
    OK,
    HealthPolicy,
    SiteRun,
    check_health,
    classify,
    exit_status,
    nightly_report,
    pages_ok_from_stats,
    robust_band,
)
from newsspider.outcome import (
    EXIT_ALL_DROPPED,
    EXIT_DATABASE,
    EXIT_NOTHING_FETCHED,
    EXIT_USAGE,
)
from newsspider.replay import build_warc
from newsspider.sites import SITES
from newsspider.spiders.loader import site_spiders
from newsspider.storage import (
    Article,
    Base,
    CrawlRun,
    NightlyRun,
    NightlySiteRun,
    SiteLineStats,
    create_schema,
    engine_for,
    upsert_articles,
)
from newsspider.storage.runs import recent_site_runs
from tests.conftest import DATASETS

REPO = Path(__file__).resolve().parents[1]
SOURCES = {
    "netease": (DATASETS / "cx163-zh", re.compile(r"163\.com/15/07")),
    "sina": (DATASETS / "gne-unlabelled-zh", re.compile(r"sina\.com\.cn")),
}
CRAWLED = re.compile(r"Crawled \((\d{3})\) <GET ([^>]+)>")


# -- archives ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    site: str
    url: str
    html: Path


def site_pages(site: str) -> list[Page]:
    """The site's saved pages in dataset order, one per URL."""
    folder, match = SOURCES[site]
    if not (folder / "cases.jsonl").is_file():
        pytest.skip(f"{folder} is not available")
    pages: dict[str, Page] = {}
    for line in (folder / "cases.jsonl").read_text("utf-8").splitlines():
        case = json.loads(line)
        if case.get("url") and match.search(case["url"]):
            pages.setdefault(case["url"], Page(site, case["url"], folder / case["html_file"]))
    assert all(SITES[site].is_article(u) for u in pages)
    return list(pages.values())


def build_archive(tmp: Path, name: str, pages: Iterable[Page]) -> Path:
    """One WARC with each site's pages behind a list page at the site's first start URL."""
    by_site: dict[str, list[Page]] = {}
    for page in pages:
        by_site.setdefault(page.site, []).append(page)
    out = tmp / f"{name}.warc.gz"
    with open(out, "wb") as archive:  # a .warc.gz is a series of gzip members
        for site, site_pages_ in by_site.items():
            folder = tmp / f"{name}-{site}"
            folder.mkdir()
            with open(folder / "cases.jsonl", "w", encoding="utf-8") as f:
                for i, p in enumerate(site_pages_):
                    # build_warc reads folder / html_file: an absolute path is used as is.
                    f.write(json.dumps({"id": str(i), "url": p.url, "html_file": str(p.html)}))
                    f.write("\n")
            part = tmp / f"{name}-{site}.warc.gz"
            built = build_warc(
                [folder], part, start_page_url=SITES[site].start_urls[0], per_page=1000
            )
            assert built.count == len(site_pages_)
            archive.write(part.read_bytes())
    return out


# -- running nightly --------------------------------------------------------------------------


def nightly_cmd(tmp: Path, archive: Path, database_url: str, sites: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "scrapy.cmdline", "nightly", "--sites", sites,
        "-s", f"REPLAY_ARCHIVE={archive}",
        "-s", f"DATABASE_URL={database_url}",
        "-s", f"NIGHTLY_LOCK={tmp / 'nightly.lock'}",
        "-s", f"NIGHTLY_JOBDIR={tmp / 'jobs'}",
        "-s", "NEWS_DB_BATCH=5",
        "-s", "DOWNLOAD_DELAY=0",
        "-s", "AUTOTHROTTLE_ENABLED=False",
        *extra,
    ]  # fmt: skip


def run_nightly(
    tmp: Path,
    archive: Path,
    database_url: str,
    sites: str,
    *extra: str,
    status: int = 0,
    traceback: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run nightly to its end; check its exit status and (unless expected) no traceback."""
    cmd = nightly_cmd(tmp, archive, database_url, sites, *extra)
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == status, proc.stdout + proc.stderr[-4000:]
    assert traceback or "Traceback" not in proc.stderr, proc.stderr[-4000:]
    return proc


def crawled_articles(log: str) -> set[str]:
    """Article URLs the downloader fetched, from the DEBUG "Crawled (200) <GET …>" lines."""
    return {
        url
        for status, url in CRAWLED.findall(log)
        if status == "200" and any(s.is_article(url) for s in SITES.values())
    }


def stored(database_url: str) -> dict[str, dict[str, Any]]:
    """Every stored article by URL: the fields a crawl decides (not ids or times)."""
    fields = ("site", "source", "title", "published", "raw_text", "encoding", "content_md5")
    with Session(engine_for(database_url)) as s:
        return {a.url: {f: getattr(a, f) for f in fields} for a in s.scalars(select(Article))}


def count_articles(database_url: str, site: str) -> int:
    with Session(engine_for(database_url)) as s:
        return s.scalar(select(func.count()).select_from(Article).where(Article.site == site))


def last_site_runs(database_url: str) -> dict[str, NightlySiteRun]:
    with Session(engine_for(database_url)) as s:
        last = s.scalar(select(func.max(NightlyRun.id)))
        rows = s.scalars(select(NightlySiteRun).where(NightlySiteRun.nightly_run_id == last))
        return {r.site: r for r in rows}


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'corpus.db'}"
    url = request.getfixturevalue("postgresql_url")
    Base.metadata.drop_all(engine_for(url))  # a fresh schema per test
    return url


class ParkAfter:
    """Test-only downloader middleware: ``PARK_AFTER`` article requests pass, then none.

    Loaded by the nightly child process as ``tests.test_nightly.ParkAfter`` (priority
    below the replay middleware's 950, which answers and ends the chain). Parked
    requests wait on a future that never completes: the test kills the process.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.passed = 0
        self.crawler: Any = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        mw = cls(crawler.settings.getint("PARK_AFTER"))
        mw.crawler = crawler
        return mw

    async def process_request(self, request: Request) -> None:
        if self.crawler.spider.site.is_article(request.url):
            self.passed += 1
            if self.passed > self.limit:
                await asyncio.get_running_loop().create_future()


def wait_for(
    predicate: Callable[[], bool],
    what: str,
    proc: subprocess.Popen[str] | None,
    timeout: float = 60,
) -> None:
    """Poll ``predicate`` with short waits until it holds; fail early if ``proc`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the nightly process exited ({proc.returncode}) before {what}")
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


# -- end to end -------------------------------------------------------------------------------


def test_second_run_downloads_only_new_articles(tmp_path, database_url, datasets):
    """Run 2 sees old and new articles linked; it fetches only the ones not stored.

    A page without a body is dropped, so never stored, so fetched again every night.
    """
    netease, sina = site_pages("netease"), site_pages("sina")
    (tmp_path / "empty.html").write_text("<html><head><title>空</title></head><body></body></html>")
    empty = Page("netease", "https://www.163.com/news/article/EMPTY00000000000.html",
                 tmp_path / "empty.html")  # fmt: skip
    old = [*netease[:40], empty, *sina[:2]]
    new = netease[40:] + sina[2:]
    first = build_archive(tmp_path, "night1", old)
    second = build_archive(tmp_path, "night2", old + new)

    run_nightly(tmp_path, first, database_url, "netease,sina")
    before = stored(database_url)
    assert set(before) == {p.url for p in old} - {empty.url}
    with Session(engine_for(database_url)) as s:
        old_times = dict(s.execute(select(Article.url, Article.updated_at)).all())

    proc = run_nightly(tmp_path, second, database_url, "netease,sina", "-s", "LOG_LEVEL=DEBUG")
    assert crawled_articles(proc.stderr) == {p.url for p in new} | {empty.url}
    after = stored(database_url)
    assert set(after) == set(before) | {p.url for p in new}
    assert {u: after[u] for u in before} == before
    with Session(engine_for(database_url)) as s:
        rows = s.execute(select(Article.url, Article.updated_at)).all()
        assert {u: t for u, t in rows if u in old_times} == old_times  # old rows untouched

    runs = last_site_runs(database_url)
    for site, dropped in (("netease", 1), ("sina", 0)):
        n_stored = sum(p.site == site for p in old) - dropped
        n_new = sum(p.site == site for p in new)
        assert runs[site].outcome == OK
        assert runs[site].skipped_stored == n_stored
        with Session(engine_for(database_url)) as s:
            crawl = s.get(CrawlRun, runs[site].crawl_run_id)
            assert (crawl.items_new, crawl.items_updated, crawl.items_dropped) == (
                n_new,
                0,
                dropped,
            )
            assert crawl.report.startswith(f"{site}: ok")
        # the start page and the articles fetched; the rest were 404s (feeds, robots.txt)
        assert runs[site].pages_ok == 1 + n_new + dropped
    assert re.search(r"^netease\s+ok\s+\d+\s+\d+\s+40\s+17\s+0\s+1\s", proc.stdout, re.M)
    assert "  netease dropped: EmptyBody 1" in proc.stdout, proc.stdout
    assert not (tmp_path / "jobs" / "netease").exists()  # a complete crawl leaves no job


def test_killed_run_resumes_without_loss_or_duplicates(tmp_path, datasets):
    """SIGKILL mid-crawl, start again: the same rows as one clean run.

    Also the lock: a second start while the first runs exits at once (status 75,
    naming the holder), and the killed run's lock does not block the restart.
    """
    pages = site_pages("netease") + site_pages("sina")
    archive = build_archive(tmp_path, "night", pages)
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    create_schema(engine_for(url))  # so the polling below finds the table from the start
    park = json.dumps(
        {"newsspider.replay.WarcReplayMiddleware": 950, "tests.test_nightly.ParkAfter": 940}
    )
    cmd = nightly_cmd(
        tmp_path, archive, url, "netease,sina",
        "-s", f"DOWNLOADER_MIDDLEWARES={park}", "-s", "PARK_AFTER=22",
    )  # fmt: skip
    with open(tmp_path / "killed.log", "w") as log:
        killed = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            # 22 NetEase articles pass: four batches of 5 commit, two stay uncommitted.
            wait_for(lambda: count_articles(url, "netease") == 20, "20 stored articles", killed)

            t0 = time.monotonic()
            second = subprocess.run(
                nightly_cmd(tmp_path, archive, url, "netease,sina"),
                cwd=REPO, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert time.monotonic() - t0 < 30
            assert second.returncode == EXIT_LOCKED, second.stderr[-3000:]
            assert f"another nightly run is in progress (pid {killed.pid}" in second.stderr
            assert killed.poll() is None  # the second start did not wait for the first
        finally:
            killed.send_signal(signal.SIGKILL)
            killed.wait(timeout=30)
    assert count_articles(url, "netease") == 20
    assert (tmp_path / "nightly.lock").read_text().strip() == str(killed.pid)  # left behind

    resumed = run_nightly(tmp_path, archive, url, "netease,sina", "-s", "LOG_LEVEL=DEBUG")
    assert "was killed mid-crawl" in resumed.stderr
    runs = last_site_runs(url)
    assert runs["netease"].skipped_stored == 20
    assert len(crawled_articles(resumed.stderr)) == len(site_pages("netease")) - 20
    assert runs["sina"].skipped_stored == 4  # sina had finished before the kill

    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    clean_url = f"sqlite:///{clean_dir / 'corpus.db'}"
    run_nightly(clean_dir, archive, clean_url, "netease,sina")
    assert stored(url) == stored(clean_url)
    assert len(stored(url)) == len(pages)
    with Session(engine_for(url)) as s, Session(engine_for(clean_url)) as c:
        for site in ("netease", "sina"):  # no page counted twice in the line table
            assert s.get(SiteLineStats, site).RC == c.get(SiteLineStats, site).RC
        assert s.scalars(select(NightlyRun.status).order_by(NightlyRun.id)).all() == [
            "killed",
            "finished",
        ]
        first_night = (
            select(CrawlRun.site, CrawlRun.status, NightlySiteRun.outcome)
            .join(NightlySiteRun, NightlySiteRun.crawl_run_id == CrawlRun.id)
            .join(NightlyRun, NightlyRun.id == NightlySiteRun.nightly_run_id)
        )
        rows = s.execute(first_night.where(NightlyRun.status == "killed")).all()
        # netease was killed mid-crawl; sina had finished its crawl, not its night
        assert sorted(rows) == [("netease", "killed", "killed"), ("sina", "finished", "killed")]
        rows = s.execute(first_night.where(NightlyRun.status == "finished")).all()
        assert sorted(rows) == [("netease", "finished", OK), ("sina", "finished", OK)]


def test_report_warns_when_a_site_leaves_its_recent_range(tmp_path, datasets):
    """Five earlier nights of ~200 long articles; tonight 57 shorter ones: two WARNINGs."""
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    engine = engine_for(url)
    create_schema(engine)
    with Session(engine) as s, s.begin():
        for i in range(5):
            night = NightlyRun(host="elsewhere", pid=1, sites="netease", status="finished")
            crawl = CrawlRun(site="netease", status="finished", items_new=200 + 10 * i)
            s.add_all([night, crawl])
            s.flush()
            s.add(
                NightlySiteRun(
                    nightly_run_id=night.id,
                    crawl_run_id=crawl.id,
                    site="netease",
                    outcome=OK,
                    median_body_chars=6000 + 100 * i,
                )
            )
        # A line table matured well past reclean's first threshold: tonight re-cleans.
        s.add(SiteLineStats(site="netease", RC=150, pruned_at_RC=100))
    archive = build_archive(tmp_path, "night", site_pages("netease"))

    proc = run_nightly(tmp_path, archive, url, "netease")
    out = proc.stdout
    assert re.search(
        r"^WARNING netease: articles per run 57 is outside its recent range", out, re.M
    )
    assert re.search(r"^WARNING netease: median body length \d+ is outside", out, re.M)
    assert "health: netease: articles per run 57" in proc.stderr  # logged as a WARNING too
    with Session(engine) as s:
        night = s.scalars(select(NightlyRun).order_by(NightlyRun.id.desc())).first()
        assert night.status == "finished" and night.exit_code == 0
        assert night.report == out.strip()
        run = last_site_runs(url)["netease"]
        assert "WARNING netease: articles per run" in s.get(CrawlRun, run.crawl_run_id).report
    assert re.search(r"^reclean: netease: .*articles 57", out, re.M), out


def test_exit_status_is_3_when_a_site_fetches_nothing(tmp_path, datasets):
    """A site whose pages all 404 (no start page in the archive) fails the run with the
    status of ``scrapy crawl`` (3: nothing fetched); the other site's crawl is stored all
    the same. A spider argument it does not take stops the run before any site starts."""
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    archive = build_archive(tmp_path, "night", site_pages("sina"))  # nothing of NetEase

    proc = run_nightly(tmp_path, archive, url, "sina,netease", status=EXIT_NOTHING_FETCHED)
    assert re.search(r"^sina\s+ok\s", proc.stdout, re.M), proc.stdout
    assert re.search(r"^netease\s+FAILED\s", proc.stdout, re.M), proc.stdout
    assert "  netease: no page fetched (finish reason: finished)" in proc.stdout
    assert count_articles(url, "sina") == 4
    with Session(engine_for(url)) as s:
        assert s.scalars(select(NightlyRun.status)).all() == ["failed"]

    proc = subprocess.run(
        nightly_cmd(tmp_path, archive, url, "sina", "-a", "limit=0"),
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert proc.stderr.strip() == (
        "scrapy nightly: error: -a limit must be a positive integer (articles), not '0'"
    )
    with Session(engine_for(url)) as s:
        assert s.scalars(select(NightlyRun.status)).all() == ["failed"]  # no second run


def test_lock_is_exclusive_and_dies_with_its_holder(tmp_path):
    lock_path = tmp_path / "nightly.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys; f = open(sys.argv[1], 'w'); "
         "fcntl.flock(f, fcntl.LOCK_EX); f.write(str(os.getpid())); f.flush(); "
         "print('held', flush=True); sys.stdin.read()",
         str(lock_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld) as exc:
            RunLock(lock_path).acquire()
        assert exc.value.pid == holder.pid
        assert f"pid {holder.pid}" in str(exc.value)
    finally:
        holder.kill()
        holder.wait(timeout=10)
    with RunLock(lock_path):  # the dead holder's lock is gone with it
        assert lock_path.read_text().strip() == str(os.getpid())
        with open(lock_path) as f, pytest.raises(BlockingIOError):
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and ours is real


# -- job directories --------------------------------------------------------------------------

NOW = datetime(2025, 3, 1, 2, 15, tzinfo=UTC)


def _job(tmp: Path, marker: dict[str, Any] | None) -> Path:
    path = tmp / "jobs" / "netease"
    (path / "requests.queue").mkdir(parents=True)
    (path / "requests.seen").write_bytes(b"x")
    if marker is not None:
        (path / "nightly.json").write_text(json.dumps(marker))
    return path


def test_a_cleanly_stopped_job_is_resumed(tmp_path):
    stopped = (NOW - timedelta(hours=1)).isoformat()
    path = _job(tmp_path, {"status": "interrupted", "stopped_at": stopped})
    job = prepare_jobdir(path, now=NOW, max_age=timedelta(hours=12))
    assert job.resumed and "resumed" in job.note
    assert (path / "requests.seen").exists()
    assert json.loads((path / "nightly.json").read_text())["status"] == "running"


@pytest.mark.parametrize(
    ("marker", "why"),
    [
        ({"status": "running", "pid": 4321}, "killed mid-crawl"),
        ({"status": "interrupted", "stopped_at": "2025-02-20T02:00:00+00:00"}, "older than"),
        (None, "not left by a nightly run"),
    ],
)
def test_a_killed_stale_or_foreign_job_is_discarded(tmp_path, marker, why):
    path = _job(tmp_path, marker)
    job = prepare_jobdir(path, now=NOW, max_age=timedelta(hours=12))
    assert not job.resumed and why in job.note
    assert sorted(p.name for p in path.iterdir()) == ["nightly.json"]


def test_finished_jobs_are_removed_interrupted_ones_kept(tmp_path):
    path = _job(tmp_path, None)
    finish_jobdir(JobDir(path, False), INTERRUPTED, now=NOW)
    assert json.loads((path / "nightly.json").read_text())["status"] == "interrupted"
    assert prepare_jobdir(path, now=NOW + timedelta(hours=2), max_age=timedelta(hours=12)).resumed
    finish_jobdir(JobDir(path, True), OK, now=NOW)
    assert not path.exists()


# -- the middleware ---------------------------------------------------------------------------


def test_stored_url_filter_is_off_unless_incremental(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    crawler = get_crawler(site_spiders()["netease"], {"DATABASE_URL": url})
    with pytest.raises(NotConfigured):
        StoredUrlFilter.from_crawler(crawler)


def test_stored_url_filter_skips_stored_articles_only(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    article = "https://www.163.com/news/article/ABCDEFGH12345678.html"
    engine = engine_for(url)
    create_schema(engine)
    with Session(engine) as s, s.begin():
        upsert_articles(
            s, [{"url": article, "site": "netease", "source": "网易新闻", "content": "正文",
                 "raw_text": "正文"}],
        )  # fmt: skip
    crawler = get_crawler(site_spiders()["netease"], {"DATABASE_URL": url, "INCREMENTAL": True})
    mw = StoredUrlFilter.from_crawler(crawler)
    mw.spider_opened(crawler._create_spider())
    with pytest.raises(IgnoreRequest):
        mw.process_request(Request(article + "?spss=np"))  # canonical form is stored
    other = "https://www.163.com/news/article/ZZZZZZZZ12345678.html"
    assert mw.process_request(Request(other)) is None
    assert mw.process_request(Request("https://news.163.com/domestic/")) is None
    assert mw.process_request(Request(article, meta={"incremental": False})) is None
    assert crawler.stats.get_value(SKIPPED_STAT) == 1


# -- the report, pure -------------------------------------------------------------------------


def _runs(site: str = "netease", **figures: Iterable[Any]) -> Iterator[SiteRun]:
    keys = list(figures)
    for values in zip(*figures.values(), strict=True):
        yield SiteRun(site=site, outcome=OK, **dict(zip(keys, values, strict=True)))


def test_robust_band_is_median_plus_minus_k_mad_with_a_floor():
    band = robust_band([10, 12, 11, 13, 9], k=3, floor=0)
    assert band.center == 11
    assert band.low == pytest.approx(11 - 3 * 1.4826) and band.high == pytest.approx(
        11 + 3 * 1.4826
    )
    assert robust_band([5, 5, 5], k=3, floor=0.1).high == pytest.approx(5.1)
    ratio = robust_band([99, 99, 99], k=3, floor=2.0, log=True)  # ÷2 … ×2 around 1 + x
    assert (ratio.low, ratio.high) == (pytest.approx(49), pytest.approx(199))


def test_health_warns_outside_the_band_and_only_then():
    history = list(
        _runs(
            items_new=[100, 120, 90, 110, 95, 105, 130, 5000],
            median_body_chars=[1500, 1600, 1550, 1450, 1500, 1480, 1520, 1510],
        )
    )
    policy = HealthPolicy()
    normal = SiteRun("netease", OK, items_new=80, median_body_chars=1400)
    assert check_health(normal, history, policy) == []  # the 8th run is outside the window
    broken = SiteRun("netease", OK, items_new=30, items_dropped=70, median_body_chars=300)
    warnings = {w.figure: w for w in check_health(broken, history, policy)}
    assert set(warnings) == {"drop share", "articles per run", "median body length"}
    assert warnings["articles per run"].message.startswith(
        "netease: articles per run 30 is outside its recent range "
    )
    assert "(median 105 of the last 7 runs)" in warnings["articles per run"].message
    assert warnings["drop share"].message.startswith("netease: drop share 70.0% is outside")


def test_health_needs_history_and_judges_only_ok_runs():
    broken = SiteRun("netease", OK, items_new=1)
    two = list(_runs(items_new=[100, 100]))
    assert check_health(broken, two) == []
    failed = [SiteRun("netease", FAILED)] * 5
    assert check_health(broken, two + failed) == []
    assert check_health(SiteRun("netease", FAILED), two * 3) == []
    assert [w.figure for w in check_health(broken, two * 2)] == ["articles per run"]
    # A drop share over fewer than 10 article pages is noise, not judged.
    few = SiteRun("netease", OK, items_new=3, items_dropped=5)
    assert check_health(few, list(_runs(items_new=[5] * 3))) == []


def test_classify_and_exit_status():
    ok = {"error": None, "crawl_status": "finished", "pages_ok": 3, "resumed": False}
    assert classify(finish_reason="finished", **ok) == (OK, "")
    assert classify(finish_reason="shutdown", **ok)[0] == INTERRUPTED
    assert classify(finish_reason=None, **ok)[0] == FAILED
    assert classify(**{**ok, "error": "ValueError: x"}, finish_reason=None)[1].endswith("x")
    assert classify(**{**ok, "crawl_status": "failed"}, finish_reason="finished")[0] == FAILED
    blocked = {**ok, "pages_ok": 0}
    assert classify(finish_reason="finished", **blocked) == (
        FAILED,
        "no page fetched (finish reason: finished)",
    )
    assert classify(finish_reason="finished", **{**blocked, "resumed": True})[0] == OK
    dropped = classify(finish_reason="finished", all_dropped=True, **ok)
    assert dropped == (FAILED, "every article was dropped (see the drop reasons)")
    # The statuses of scrapy crawl (newsspider/outcome.py), the most severe site's
    assert exit_status([SiteRun("a", OK), SiteRun("b", INTERRUPTED)]) == 0
    assert exit_status([SiteRun("a", OK), SiteRun("b", FAILED, note="crawl failed: X")]) == 1
    assert exit_status([SiteRun("a", OK)], other_failures=1) == 1
    nothing = SiteRun("b", FAILED, note="no page fetched (finish reason: finished)")
    none_stored = SiteRun("c", FAILED, note=dropped[1])
    db_down = SiteRun("d", FAILED, finish_reason="database_unavailable")
    assert exit_status([SiteRun("a", OK), nothing]) == EXIT_NOTHING_FETCHED
    assert exit_status([none_stored]) == EXIT_ALL_DROPPED
    assert exit_status([none_stored, nothing, db_down]) == EXIT_DATABASE


def test_pages_ok_leaves_out_robots_txt_and_errors():
    stats = {
        "downloader/response_status_count/200": 7,
        "downloader/response_status_count/206": 1,
        "downloader/response_status_count/404": 9,
        "robotstxt/response_status_count/200": 1,
        "robotstxt/response_status_count/404": 1,
    }
    assert pages_ok_from_stats(stats) == 7
    assert pages_ok_from_stats({"downloader/response_status_count/403": 5}) == 0


def test_nightly_report_lists_every_site_and_its_notes():
    runs = [
        SiteRun("netease", OK, requests=12, pages_ok=10, skipped_stored=45, items_new=8,
                items_dropped=1, drop_reasons={"EmptyBody": 1}, median_body_chars=1234),
        SiteRun("sina", FAILED, note="no page fetched (finish reason: finished)"),
    ]  # fmt: skip
    text = nightly_report(
        runs,
        {},
        nightly_run_id=7,
        host="box",
        started_at=NOW,
        finished_at=NOW + timedelta(minutes=3, seconds=12),
        exit_code=1,
        history_runs={"netease": 1},
        extra=["reclean: no site due (RECLEAN_GROWTH = 2)"],
    )
    lines = text.splitlines()
    assert lines[0] == (
        "newsspider nightly run 7 on box: started 2025-03-01 02:15:00 UTC, took 3m12s, "
        "exit status 1"
    )
    assert re.match(r"netease\s+ok\s+12\s+10\s+45\s+8\s+0\s+1\s+0\s+1234$", lines[2])
    assert re.match(r"sina\s+FAILED\s+0", lines[3])
    assert "  netease dropped: EmptyBody 1" in lines
    assert "  sina: no page fetched (finish reason: finished)" in lines
    assert "health not judged yet (earlier nightly runs, 3 needed): netease (1)" in lines
    assert lines[-1] == "reclean: no site due (RECLEAN_GROWTH = 2)"


def test_recent_site_runs_are_the_ok_runs_newest_first(tmp_path):
    engine = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    create_schema(engine)
    with Session(engine) as s, s.begin():
        night = NightlyRun(host="h", pid=1, sites="netease")
        s.add(night)
        s.flush()
        night_id = night.id
        for i, outcome in enumerate([OK, FAILED, OK, "killed", OK]):
            crawl = CrawlRun(site="netease", items_new=i, drop_reasons='{"EmptyBody": 2}')
            s.add(crawl)
            s.flush()
            s.add(NightlySiteRun(nightly_run_id=night_id, crawl_run_id=crawl.id,
                                 site="netease", outcome=outcome))  # fmt: skip
    with Session(engine) as s:
        history = recent_site_runs(s, "netease", limit=2)
        assert [r.items_new for r in history] == [4, 2]
        assert history[0].drop_reasons == {"EmptyBody": 2}
        assert recent_site_runs(s, "netease", exclude_nightly_run_id=night_id) == []
