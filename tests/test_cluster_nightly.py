"""``scrapy nightly`` in cluster mode (``REDIS_URL``), with a real redis-server and PostgreSQL.

Two ``scrapy nightly`` processes against one Redis and one PostgreSQL crawl a WARC replay
archive of real saved NetEase and Sina pages (``tests/test_nightly.py``'s) and must form
one nightly run: one ``nightly_runs`` row, a ``crawl_runs`` row per worker and site, each
article fetched and stored once, and one report, from the last worker, that counts both
workers' pages. :class:`BothWorkers` (a test-only downloader middleware) holds each
site's article requests until both workers have joined that site's frontier, so the work
is shared whatever the order the two interpreters start in; no test sleeps for a fixed
time except to let a heartbeat go stale.

The join/leave logic (``newsspider/cluster/nightly.py``) is tested on its own: founder
and joiner, the last worker out, a dead worker dropped after ``CLUSTER_WORKER_TIMEOUT``,
a run whose workers all died handed to the next founder; and the report's sums over
workers (``merge_site_runs``, ``recent_site_runs``).
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Self

import redis
from scrapy.http import Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from newsspider.cluster.nightly import JOINED_KEY, RUN_KEY, WORKERS_KEY, NightlyMembership
from newsspider.nightly.report import FAILED, OK, SiteRun, merge_site_runs
from newsspider.storage import Base, CrawlRun, NightlyRun, NightlySiteRun, create_schema, engine_for
from newsspider.storage.runs import recent_site_runs
from tests.redisserver import redis_server, redis_url  # noqa: F401 (fixtures)
from tests.test_nightly import CRAWLED, REPO, build_archive, nightly_cmd, site_pages

# -- the join/leave logic -------------------------------------------------------------------


def member(url: str, name: str, timeout: float = 5.0) -> NightlyMembership:
    return NightlyMembership(redis.Redis.from_url(url), name, timeout=timeout)


def never(previous: int | None) -> int:
    raise AssertionError("a joiner must not start a run")


def test_first_worker_founds_the_run_the_others_join_the_last_one_reports(redis_url):  # noqa: F811
    a, b = member(redis_url, "a"), member(redis_url, "b")
    founded: list[int | None] = []

    def start(previous: int | None) -> int:
        founded.append(previous)
        return 7

    assert a.join(start) == 7 and a.founder
    assert b.join(never) == 7 and not b.founder
    assert founded == [None]
    first = a.leave()
    assert (first.last, first.remaining) == (False, 1)
    last = b.leave()
    assert last.last and last.workers == ("a", "b")
    assert redis.Redis.from_url(redis_url).exists(WORKERS_KEY, RUN_KEY, JOINED_KEY) == 0


def test_a_joiner_waits_for_the_founders_row(redis_url):  # noqa: F811
    """A worker joining while the founder inserts the row gets its id once published."""
    a, b = member(redis_url, "a"), member(redis_url, "b")
    joined: list[int] = []

    def start(previous: int | None) -> int:
        t = threading.Thread(target=lambda: joined.append(b.join(never)))
        t.start()
        deadline = time.monotonic() + 10
        while not redis.Redis.from_url(redis_url).hexists(WORKERS_KEY, "b"):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        start.thread = t  # type: ignore[attr-defined]
        return 11

    assert a.join(start) == 11
    start.thread.join(timeout=10)  # type: ignore[attr-defined]
    assert joined == [11]
    assert not a.leave().last and b.leave().last


def test_a_dead_worker_neither_keeps_the_run_open_nor_slips_back(redis_url):  # noqa: F811
    a, dead = member(redis_url, "a", timeout=1.0), member(redis_url, "dead", timeout=1.0)
    assert a.join(lambda _: 5) == 5
    assert dead.join(never) == 5
    dead._stop_heartbeat()  # SIGKILL: it never beats again
    time.sleep(1.3)  # the dead worker's heartbeat is now older than the timeout
    left = a.leave()
    assert left.last and left.workers == ("a", "dead")
    assert dead.leave().gone  # the run ended without it


def test_a_run_whose_workers_all_died_goes_to_the_next_founder(redis_url):  # noqa: F811
    dead = member(redis_url, "dead", timeout=1.0)
    assert dead.join(lambda _: 3) == 3
    dead._stop_heartbeat()
    time.sleep(1.3)
    previous: list[int | None] = []
    nxt = member(redis_url, "next", timeout=1.0)
    assert nxt.join(lambda p: previous.append(p) or 4) == 4
    assert previous == [3] and nxt.founder
    assert nxt.leave().workers == ("next",)


# -- the report over workers ------------------------------------------------------------------


def test_merge_sums_workers_and_takes_the_worst_outcome():
    a = SiteRun("netease", OK, crawl_run_id=1, requests=10, pages_ok=9, items_new=8,
                drop_reasons={"EmptyBody": 1}, median_body_chars=100, bodies=8)  # fmt: skip
    b = SiteRun("netease", OK, crawl_run_id=2, requests=5, pages_ok=4, items_new=3,
                drop_reasons={"EmptyBody": 2, "NotHtml": 1}, median_body_chars=300,
                bodies=3)  # fmt: skip
    s = SiteRun("sina", OK, crawl_run_id=3, requests=2)
    netease, sina = merge_site_runs([a, s, b])
    assert sina is s  # one worker's row is returned as it is
    figures = (netease.requests, netease.pages_ok, netease.items_new, netease.workers)
    assert figures == (15, 13, 11, 2)
    assert netease.drop_reasons == {"EmptyBody": 3, "NotHtml": 1}
    assert netease.median_body_chars == 100  # the middle of 11 bodies lies among the 8
    failed = SiteRun("netease", FAILED, note="no page fetched")
    assert merge_site_runs([a, failed])[0].outcome == FAILED


def test_recent_site_runs_sum_a_cluster_runs_workers(tmp_path):
    """A cluster run's rows are one crawl of the site in the health history; a run on one
    machine keeps one crawl per row, as before."""
    engine = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    create_schema(engine)
    with Session(engine) as s, s.begin():
        for workers, outcomes in ((None, [OK]), (2, [OK, OK]), (2, [OK, FAILED]), (3, [OK] * 3)):
            night = NightlyRun(host="h", pid=1, sites="netease", workers=workers)
            s.add(night)
            s.flush()
            for i, outcome in enumerate(outcomes):
                crawl = CrawlRun(site="netease", items_new=10 + i)
                s.add(crawl)
                s.flush()
                s.add(NightlySiteRun(nightly_run_id=night.id, crawl_run_id=crawl.id,
                                     site="netease", outcome=outcome))  # fmt: skip
    with Session(engine) as s:
        history = recent_site_runs(s, "netease")
        assert [(r.workers, r.items_new) for r in history] == [(3, 33), (2, 21), (1, 10)]
        assert [r.items_new for r in recent_site_runs(s, "netease", limit=2)] == [33, 21]


def test_the_last_worker_closes_dead_workers_rows_and_runs(tmp_path):
    """A dead worker's unfinished site row becomes ``killed`` (its crawl too); a cluster
    run whose workers all died is closed by id, never by host; a local run's host check
    leaves cluster runs alone."""
    from newsspider.storage.runs import mark_killed_runs, mark_killed_site_runs

    engine = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    create_schema(engine)
    with Session(engine) as s, s.begin():
        night = NightlyRun(host="h", pid=1, sites="netease", workers=1)
        s.add(night)
        s.flush()
        ids = []
        for outcome in (OK, None):
            crawl = CrawlRun(site="netease", status="finished" if outcome else "running")
            s.add(crawl)
            s.flush()
            ids.append(crawl.id)
            s.add(NightlySiteRun(nightly_run_id=night.id, crawl_run_id=crawl.id,
                                 site="netease", outcome=outcome))  # fmt: skip
        run_id = night.id
    with Session(engine) as s, s.begin():
        assert mark_killed_runs(s, "h") == []  # a cluster run outlives any one host
        assert mark_killed_site_runs(s, run_id) == ["netease"]
    with Session(engine) as s:
        assert s.get(CrawlRun, ids[0]).status == "finished"
        assert s.get(CrawlRun, ids[1]).status == "killed"
        outcomes = s.scalars(select(NightlySiteRun.outcome).order_by(NightlySiteRun.id)).all()
        assert outcomes == [OK, "killed"]
    with Session(engine) as s, s.begin():
        assert mark_killed_runs(s, ids=[run_id]) == [run_id]
    with Session(engine) as s:
        assert s.get(NightlyRun, run_id).status == "killed"


# -- two scrapy nightly workers ---------------------------------------------------------------


class BothWorkers:
    """Test-only downloader middleware: a site's article requests wait until
    ``CLUSTER_TEST_WORKERS`` workers have joined the site's frontier run, then each takes
    ``CLUSTER_TEST_DELAY`` seconds: with ``CONCURRENT_REQUESTS`` 2 a worker alone would
    need longer than the other's look at the shared queue (ten times a second), so both
    workers of the test get a share of it. Loaded by the nightly child processes
    (priority below the replay middleware's 950)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.workers = crawler.settings.getint("CLUSTER_TEST_WORKERS")
        self.delay = crawler.settings.getfloat("CLUSTER_TEST_DELAY")
        self.redis = redis.Redis.from_url(crawler.settings.get("REDIS_URL"))
        self.open = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        spider = self.crawler.spider
        if not spider.site.is_article(request.url):
            return
        while not self.open:
            self.open = self.redis.hlen(f"newsspider:{spider.name}:workers") >= self.workers
            if not self.open:
                await asyncio.sleep(0.05)
        await asyncio.sleep(self.delay)


def query(url: str, statement: str) -> list[tuple[Any, ...]]:
    from sqlalchemy import text

    with engine_for(url).connect() as conn:
        return [tuple(r) for r in conn.execute(text(statement))]


def start_worker(
    work: Path,
    archive: Path,
    database_url: str,
    redis_url: str,  # noqa: F811
    *,
    workers: int = 2,
    delay: float = 0.2,
    timeout: float = 10,
) -> tuple[subprocess.Popen[str], Path]:
    """One ``scrapy nightly`` cluster worker over ``archive`` (netease and sina) whose
    article requests wait for ``workers`` workers, then ``delay`` seconds each; its stderr
    goes to the returned log file."""
    work.mkdir()
    middlewares = json.dumps({
        "newsspider.replay.WarcReplayMiddleware": 950,
        "tests.test_cluster_nightly.BothWorkers": 940,
    })
    cmd = nightly_cmd(
        work, archive, database_url, "netease,sina",
        "-s", f"REDIS_URL={redis_url}",
        "-s", f"DOWNLOADER_MIDDLEWARES={middlewares}",
        "-s", f"CLUSTER_TEST_WORKERS={workers}", "-s", f"CLUSTER_TEST_DELAY={delay}",
        "-s", "CONCURRENT_REQUESTS=2",
        "-s", "CLUSTER_IDLE_CLOSE=1", "-s", f"CLUSTER_WORKER_TIMEOUT={timeout}",
        "-s", f"NIGHTLY_WARC_DIR={work / 'warc'}",
        "-s", "REPRINTS_ENABLED=False", "-s", "LOG_LEVEL=DEBUG",
    )  # fmt: skip
    log = work / "stderr.log"
    with open(log, "w") as err:  # the child keeps its own descriptor
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=err, text=True)
    return proc, log


def test_two_nightly_workers_form_one_run(
    tmp_path, postgresql_url, redis_url, datasets  # noqa: F811
):
    netease, sina = site_pages("netease")[:30], site_pages("sina")[:4]
    archive = build_archive(tmp_path, "night", netease + sina)
    Base.metadata.drop_all(engine_for(postgresql_url))  # a fresh schema
    procs, logs = [], []
    for i in range(2):
        proc, log = start_worker(tmp_path / f"w{i}", archive, postgresql_url, redis_url)
        procs.append(proc)
        logs.append(log)
    outs = [p.communicate(timeout=180)[0] for p in procs]
    errs = [log.read_text() for log in logs]
    for p, err in zip(procs, errs, strict=True):
        assert p.returncode == 0, err[-4000:]
        assert "Traceback" not in err, err[-4000:]

    # One run, both workers in it, finished.
    [(run_id, workers, status, stored_report)] = query(
        postgresql_url, "SELECT id, workers, status, report FROM nightly_runs"
    )
    assert (workers, status) == (2, "finished")
    # A crawl_runs row per worker and site, each linked to the one run.
    rows = query(
        postgresql_url,
        "SELECT n.site, n.outcome, n.pages_ok, c.items_new, c.report FROM nightly_site_runs n "
        "JOIN crawl_runs c ON c.id = n.crawl_run_id ORDER BY n.id",
    )
    assert sorted(r[0] for r in rows) == ["netease", "netease", "sina", "sina"]
    assert query(postgresql_url, "SELECT count(*) FROM crawl_runs") == [(4,)]
    assert {r[1] for r in rows} == {OK}
    assert all(r[4].startswith(f"{r[0]}: ok") for r in rows)  # the site's summed part
    # Each article fetched once across the cluster, and stored once.
    articles = {p.url for p in netease + sina}
    per_worker = [
        [u for status, u in CRAWLED.findall(err) if status == "200" and u in articles]
        for err in errs
    ]
    assert all(per_worker), "each worker fetched a share of the articles"
    together = per_worker[0] + per_worker[1]
    assert len(together) == len(set(together)) and set(together) == articles
    assert query(postgresql_url, "SELECT count(*), count(DISTINCT url) FROM articles") == [
        (len(articles), len(articles))
    ]
    # One report, from the last worker, counting both workers' pages.
    [full] = [o for o in outs if o.startswith(f"newsspider nightly run {run_id} on a cluster of 2")]
    [short] = [o for o in outs if o is not full]
    print(full, short, sep="\n")
    assert "the run report comes from the last worker" in short
    assert full.strip() == stored_report
    for site, pages in (("netease", netease), ("sina", sina)):
        site_rows = [r for r in rows if r[0] == site]
        pages_ok = sum(r[2] for r in site_rows)
        new = sum(r[3] for r in site_rows)
        assert new == len(pages)
        assert re.search(rf"^{site}\s+ok\s+\d+\s+{pages_ok}\s+0\s+{new}\s", full, re.M), full
    assert "netease: crawled by 2 cluster workers, figures summed" in full
    # The last worker out deleted the run's keys.
    assert redis.Redis.from_url(redis_url).keys("newsspider:*") == []
    with Session(engine_for(postgresql_url)) as s:
        assert s.scalar(select(NightlyRun.exit_code)) == 0


def test_a_nightly_worker_killed_mid_crawl(
    tmp_path, postgresql_url, redis_url, datasets  # noqa: F811
):
    """SIGKILL of one of two nightly workers once it has fetched articles: the other one
    finishes the run, waits out the dead one's heartbeat, marks its rows ``killed`` and
    reports; nothing is stored twice, and the next run fetches what the dead one held."""
    netease, sina = site_pages("netease")[:30], site_pages("sina")[:4]
    archive = build_archive(tmp_path, "night", netease + sina)
    articles = {p.url for p in netease + sina}
    Base.metadata.drop_all(engine_for(postgresql_url))  # a fresh schema
    victim, victim_log = start_worker(tmp_path / "w0", archive, postgresql_url, redis_url,
                                      delay=0.5, timeout=3)  # fmt: skip
    survivor, _ = start_worker(tmp_path / "w1", archive, postgresql_url, redis_url,
                               delay=0.5, timeout=3)  # fmt: skip
    deadline = time.monotonic() + 120
    def fetched_an_article() -> bool:
        found = CRAWLED.findall(victim_log.read_text())
        return any(status == "200" and url in articles for status, url in found)

    while not fetched_an_article():
        assert victim.poll() is None and time.monotonic() < deadline, victim_log.read_text()[-3000:]
        time.sleep(0.05)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(timeout=60) == -signal.SIGKILL
    out, _ = survivor.communicate(timeout=180)
    assert survivor.returncode == 0, out

    [(status, report)] = query(postgresql_url, "SELECT status, report FROM nightly_runs")
    assert status == "finished"
    assert out.strip() == report  # the survivor was the last worker: it wrote the report
    rows = query(
        postgresql_url,
        "SELECT n.site, n.outcome, c.status FROM nightly_site_runs n "
        "JOIN crawl_runs c ON c.id = n.crawl_run_id ORDER BY n.id",
    )
    killed = [r for r in rows if r[1] == "killed"]
    assert killed and all(r[2] == "killed" for r in killed), rows
    assert all(r[1] == OK for r in rows if r not in killed), rows
    assert re.search(r"^netease\s+killed\s", report, re.M), report
    stored_urls = [u for (u,) in query(postgresql_url, "SELECT url FROM articles")]
    assert len(stored_urls) == len(set(stored_urls))  # nothing stored twice

    # The next run (one worker, the dead one's heartbeat long gone) fetches what it held.
    time.sleep(3)
    nxt, nxt_log = start_worker(tmp_path / "next", archive, postgresql_url, redis_url,
                                workers=1, delay=0, timeout=3)  # fmt: skip
    out, _ = nxt.communicate(timeout=180)
    assert nxt.returncode == 0, nxt_log.read_text()[-3000:]
    assert query(postgresql_url, "SELECT count(*), count(DISTINCT url) FROM articles") == [
        (len(articles), len(articles))
    ]
    assert len(query(postgresql_url, "SELECT id FROM nightly_runs")) == 2
