"""Faults of a cluster run, with real parts: a worker killed with SIGKILL, Redis restarted.

Three worker processes (``benchmarks/cluster.py``'s) crawl a local site (``/`` links
:data:`LISTS` list pages of :data:`PER_LIST` articles each) through one Redis into one
PostgreSQL, with a shared ``DOWNLOAD_DELAY`` that keeps the crawl going for several
seconds, so the fault lands mid-crawl: it is triggered by the number of article requests
the server has seen, never by a clock.

The documented recovery (docs/cluster.md) is the next run: once the killed worker's
heartbeat is older than ``CLUSTER_WORKER_TIMEOUT``, a run started with ``INCREMENTAL``
on (as ``scrapy nightly`` runs) starts from the start pages with a fresh duplicate
filter and skips every stored article, so it fetches exactly what is missing. After it,
the corpus must equal a single local crawl's: the same rows, none twice, and the same
line table (``RC`` and every ``LC``, pruning off).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.localserver import LocalServer, Page, article_html, links_page, serve
from tests.pgserver import PgServer
from tests.redisserver import RedisServer, binary, redis_server, redis_url  # noqa: F401
from tests.test_cluster import load, new_database, query

LISTS = 6
PER_LIST = 30
ARTICLES = LISTS * PER_LIST
#: Article requests the server has seen when the fault is made (a third of the crawl).
FAULT_AT = ARTICLES // 3
#: Seconds the workers wait for each other, and for the server to see FAULT_AT requests.
TIMEOUT = 600
SETTINGS: dict[str, Any] = {
    # 25 requests/s across the cluster: the crawl lasts about 7 s, plenty to fault it.
    "DOWNLOAD_DELAY": 0.04,
    "RANDOMIZE_DOWNLOAD_DELAY": False,
    "AUTOTHROTTLE_ENABLED": False,
    "ROBOTSTXT_OBEY": False,
    "CLUSTER_IDLE_CLOSE": 3.0,
    "CLUSTER_WORKER_TIMEOUT": 5.0,
    # Pruning off: the line table is a pure count, comparable with the reference crawl.
    "LINEHASH_PRUNE_EVERY": 0,
    "NEWS_DB_BATCH": 10,
}
#: The next run: stored articles are skipped (the recovery).
RECOVERY = {**SETTINGS, "INCREMENTAL": True}
#: The reference: one local crawl, no delay.
REFERENCE = {**SETTINGS, "DOWNLOAD_DELAY": 0}


def site_routes() -> dict[str, Page]:
    routes = {"/": Page(links_page(*(f"/list/{j}.html" for j in range(LISTS))))}
    for j in range(LISTS):
        numbers = range(j * PER_LIST, (j + 1) * PER_LIST)
        routes[f"/list/{j}.html"] = Page(links_page(*(f"/article/a{n}.html" for n in numbers)))
    for n in range(ARTICLES):
        routes[f"/article/a{n}.html"] = Page(article_html(n).encode())
    return routes


EXPECTED = sorted(f"/article/a{n}.html" for n in range(ARTICLES))


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load("cluster")


def articles_seen(server: LocalServer, since: int = 0) -> list[str]:
    return [s.path for s in server.seen[since:] if s.path.startswith("/article/")]


def stored(url: str) -> dict[str, Any]:
    """The stored corpus in comparable form (paths, not the server's port)."""
    rows = query(url, "SELECT url, title, raw_text, content_md5 FROM articles ORDER BY url")
    return {
        "articles": sorted((u.split("/", 3)[3], t, r, m) for u, t, r, m in rows),
        "rows": query(url, "SELECT count(*), count(DISTINCT url) FROM articles")[0],
        "RC": query(url, "SELECT site, rc FROM site_line_stats ORDER BY site"),
        "LC": query(url, "SELECT site, md5, lc FROM line_counts ORDER BY site, md5"),
    }


def paths(corpus: dict[str, Any]) -> list[str]:
    return ["/" + row[0] for row in corpus["articles"]]


def wait_for_articles(server: LocalServer, n: int, procs: list[Any]) -> None:
    """Until the server has seen ``n`` article requests (fails if every worker ended)."""
    deadline = time.monotonic() + TIMEOUT
    while len(articles_seen(server)) < n:
        assert time.monotonic() < deadline, "the crawl never reached the fault point"
        assert any(p.poll() is None for p in procs), "the workers ended before the fault"
        time.sleep(0.02)


def reference(bench: ModuleType, pg: PgServer, server: LocalServer, tmp: Path) -> dict[str, Any]:
    db = new_database(pg, "faults_reference")
    bench.run_workers(
        1, None, tmp / "reference", database_url=db, redis_url=None, settings=REFERENCE,
        site_base=server.base, timeout=TIMEOUT, tag="ref",
    )  # fmt: skip
    corpus = stored(db)
    assert paths(corpus) == EXPECTED
    return corpus


def recover(
    bench: ModuleType, server: LocalServer, db: str, redis: str, tmp: Path, faulted_at: float
) -> list[str]:
    """The documented recovery: the next run, once the dead worker's heartbeat is stale.
    Returns the articles it fetched."""
    stale = faulted_at + SETTINGS["CLUSTER_WORKER_TIMEOUT"] + 1
    time.sleep(max(0.0, stale - time.monotonic()))
    before = len(server.seen)
    bench.run_workers(
        1, None, tmp / "recovery", database_url=db, redis_url=redis, settings=RECOVERY,
        site_base=server.base, timeout=TIMEOUT, tag="next",
    )  # fmt: skip
    return sorted(articles_seen(server, before))


def test_sigkill_of_a_worker_then_the_next_run(
    bench: ModuleType,
    postgresql_server: PgServer,
    redis_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = new_database(postgresql_server, "faults_sigkill")
    with serve(site_routes()) as server:
        cfgs = [
            bench.worker_config(f"w{i}", None, tmp_path / "cluster", database_url=db,
                                redis_url=redis_url, settings=SETTINGS, site_base=server.base)
            for i in range(3)
        ]  # fmt: skip
        procs = [bench.start_worker(c) for c in cfgs]
        bench.release_workers(procs, cfgs, TIMEOUT)
        wait_for_articles(server, FAULT_AT, procs)
        victim = procs[0]
        assert victim.poll() is None, "worker 0 ended before it could be killed"
        victim.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        assert victim.wait(timeout=60) == -signal.SIGKILL
        at_kill = len(articles_seen(server))
        survivors = [
            bench.finish_worker(p, c, TIMEOUT) for p, c in zip(procs[1:], cfgs[1:], strict=True)
        ]
        # The crawl went on without the killed worker.
        assert len(articles_seen(server)) > at_kill
        assert all(r["exit_ok"] for r in survivors)
        # Each URL fetched at most once in the run, even by the killed worker.
        fetched = articles_seen(server)
        assert len(fetched) == len(set(fetched))

        before = stored(db)
        assert before["rows"][0] == before["rows"][1], "a row stored twice"
        missing = sorted(set(EXPECTED) - set(paths(before)))
        # The kill lost this worker's requests in flight and its unsaved batch (and, with
        # a list page in flight, that page's articles); the next run fetches them.
        next_run = recover(bench, server, db, redis_url, tmp_path, killed_at)
        assert next_run == missing
        after = stored(db)
        ref = reference(bench, postgresql_server, server, tmp_path)
    print(f"sigkill: {len(missing)} articles missing after the run, fetched by the next one")
    assert after["rows"] == (ARTICLES, ARTICLES)
    assert after["articles"] == ref["articles"]
    assert after["RC"] == ref["RC"]
    assert after["LC"] == ref["LC"]


def test_redis_restart_mid_crawl(
    bench: ModuleType, postgresql_server: PgServer, tmp_path: Path
) -> None:
    binary()
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    # Persistence on, as a production Redis has it (deploy/cluster/README.md): the queue
    # and the fingerprints survive the restart.
    redis = RedisServer.start(redis_dir, appendonly=True)
    db = new_database(postgresql_server, "faults_redis")
    try:
        with serve(site_routes()) as server:
            cfgs = [
                bench.worker_config(f"w{i}", None, tmp_path / "cluster", database_url=db,
                                    redis_url=redis.url, settings=SETTINGS, site_base=server.base)
                for i in range(3)
            ]  # fmt: skip
            procs = [bench.start_worker(c) for c in cfgs]
            bench.release_workers(procs, cfgs, TIMEOUT)
            wait_for_articles(server, FAULT_AT, procs)
            redis.restart()  # SIGTERM (the append-only file is written), then the same port
            restarted_at = time.monotonic()
            at_restart = len(articles_seen(server))
            results = [bench.finish_worker(p, c, TIMEOUT) for p, c in zip(procs, cfgs, strict=True)]
            # The workers waited for Redis and went on: the crawl went on after the restart.
            assert len(articles_seen(server)) > at_restart
            assert all(r["exit_ok"] for r in results)
            before = stored(db)
            assert before["rows"][0] == before["rows"][1], "a row stored twice"
            missing = sorted(set(EXPECTED) - set(paths(before)))
            next_run = recover(bench, server, db, redis.url, tmp_path, restarted_at)
            assert next_run == missing
            after = stored(db)
            ref = reference(bench, postgresql_server, server, tmp_path)
    finally:
        redis.stop(kill=True)
    print(f"redis restart: {len(missing)} articles missing after the run")
    assert after["rows"] == (ARTICLES, ARTICLES)
    assert after["articles"] == ref["articles"]
    assert after["RC"] == ref["RC"]
    assert after["LC"] == ref["LC"]
