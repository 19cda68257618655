"""The web view at scale: response times of ``scrapy corpus serve`` on a 100,000-article corpus.

Not a test. Builds a SQLite corpus of N articles (default 100,000) the way
``benchmarks/corpus_search.py`` does (real Chinese article bodies from the labelled
datasets, replicated with distinct URLs, sites and shuffled paragraphs), with publication
times spread over the last two years so every dashboard window is full; adds a year of
nightly history (one ``crawl_runs`` row per site and night, some failed, with drop reasons
and fetch failures, and one ``nightly_runs`` row per night with WARNING lines). Then
starts ``scrapy corpus serve`` in a subprocess (the real command, read-only) and times, from
one client, sequentially, after one warm-up each:

- search pages ``/?q=...`` for 1, 2, 3, 4 and 7-character queries, common and rare, some
  with a site or date filter or ``sort=relevance``, pages 1 and 2;
- article pages ``/article/<id>`` of random ids;
- dashboard pages ``/dashboard?days=30|90|365``;

and prints p50, p95 and max per kind (milliseconds, whole response read), and the CPU
time the server process spent on each request (from ``/proc``, 10 ms steps): the figure
that does not grow when other processes share the cores.

    python benchmarks/web.py [--rows 100000] [--db PATH] [--keep] [--requests 200]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import corpus_search  # noqa: E402
from sqlalchemy import insert, text  # noqa: E402

from newsspider.storage import Article, Base, create_schema, engine_for  # noqa: E402
from newsspider.storage.models import CrawlRun, NightlyRun  # noqa: E402

QUERIES = ("经济", "央行", "华为", "税", "互联网", "人工智能", "新冠肺炎", "中华人民共和国", "饕餮")
SITES = corpus_search.SITES


def build(url: str, n: int) -> None:
    tpls = corpus_search.templates()
    if not tpls:
        sys.exit("no templates: the labelled datasets of corpus_search.DATASETS are missing")
    # corpus_search.rows spreads times over 2023-2024: move them to the last two years.
    shift = datetime.now(UTC) - datetime(2025, 1, 1, tzinfo=UTC)
    engine = engine_for(url)
    Base.metadata.create_all(engine)
    batch: list[dict] = []
    for i, row in enumerate(corpus_search.rows(n, tpls)):
        batch.append(row | {"published": row["published"] + shift})
        if len(batch) == 2000 or i == n - 1:
            with engine.begin() as conn:
                conn.execute(insert(Article.__table__), batch)
            batch = []
            print(f"  loaded {i + 1} rows", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    create_schema(engine)  # the search index, backfilled
    rng = random.Random(3)
    now = datetime.now(UTC)
    runs, nightly = [], []
    for night in range(365):
        start = (now - timedelta(days=night)).replace(hour=2, minute=0, second=0, microsecond=0)
        for site in SITES:
            bad = rng.random() < 0.03
            pages = 0 if bad else rng.randint(200, 900)
            dropped = rng.randint(0, 30)
            runs.append({
                "site": site, "started_at": start, "finished_at": start + timedelta(minutes=20),
                "status": "nothing_fetched" if bad else "finished", "pages_fetched": pages,
                "items_new": pages // 4, "items_updated": 0, "items_dropped": dropped,
                "drop_reasons": json.dumps({"EmptyMainblockset": dropped // 2,
                                            "NoTitle": dropped - dropped // 2}),
                "errors": 0, "fetch_failures": 40 if bad else rng.randint(0, 5),
                "fetch_failure_reasons": json.dumps({"timeout": 1}), "retries": 0, "db_retries": 0,
            })  # fmt: skip
        nightly.append({
            "started_at": start, "finished_at": start + timedelta(minutes=25), "host": "bench",
            "pid": 1, "sites": ",".join(SITES), "status": "finished", "exit_code": 0,
            "report": "report\nWARNING sina: drop share 12% outside its band 1%-5%\n",
        })  # fmt: skip
    with engine.begin() as conn:
        conn.execute(insert(CrawlRun.__table__), runs)
        conn.execute(insert(NightlyRun.__table__), nightly)
        conn.exec_driver_sql("ANALYZE")
    corpus_search.checkpoint(engine)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) the process has used, in ms (clock ticks: 10 ms steps)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


SERVER_PID = 0


def fetch(url: str) -> tuple[float, float]:
    """(wall ms, server CPU ms) of one request, the whole response read."""
    cpu = cpu_ms(SERVER_PID) if SERVER_PID else 0.0
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310
        resp.read()
        assert resp.status == 200, url
    wall = (time.perf_counter() - start) * 1000
    return wall, (cpu_ms(SERVER_PID) - cpu if SERVER_PID else 0.0)


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--db", default=None, help="reuse or keep the corpus here")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--requests", type=int, default=200, help="per kind of page")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="web-bench-")
    db = Path(args.db) if args.db else Path(tmp) / "corpus.db"
    url = f"sqlite:///{db}"
    if not db.exists():
        t0 = time.perf_counter()
        build(url, args.rows)
        print(f"built {args.rows} articles in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    with engine_for(url).connect() as conn:
        articles = conn.execute(text("SELECT count(*), max(id) FROM articles")).one()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "corpus", "serve", "--port", str(port)],
        cwd=REPO, env={**os.environ, "DATABASE_URL": url}, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    global SERVER_PID
    SERVER_PID = server.pid
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/static/style.css", timeout=5).read()  # noqa: S310
                break
            except OSError:
                time.sleep(0.1)
        rng = random.Random(5)
        today = datetime.now(UTC).date()
        searches = []
        for i in range(args.requests):
            params = {"q": QUERIES[i % len(QUERIES)]}
            if i % 5 == 1:
                params["site"] = SITES[i % len(SITES)]
            if i % 5 == 2:
                params["since"] = (today - timedelta(days=90)).isoformat()
            if i % 5 == 3:
                params["sort"] = "relevance"
            if i % 5 == 4:
                params["page"] = "2"
            searches.append("/?" + urlencode(params))
        kinds = {
            "search": searches,
            "article": [f"/article/{rng.randint(1, articles[1])}" for _ in range(args.requests)],
            "dashboard": [f"/dashboard?days={(30, 90, 365)[i % 3]}" for i in range(max(30, args.requests // 4))],
        }
        load = os.getloadavg()[0]
        print(f"\n{articles[0]} articles, SQLite, `scrapy corpus serve`, one client, sequential; "
              f"{os.cpu_count()} cores, load average {load:.1f} at the start\n")  # fmt: skip
        print("| page | requests | p50 ms | p95 ms | max ms | server CPU p50 ms | server CPU p95 ms |")
        print("|---|---|---|---|---|---|---|")

        def line(kind: str, results: list[tuple[float, float]]) -> None:
            wall = [w for w, _ in results]
            cpu = [c for _, c in results]
            print(f"| {kind} | {len(wall)} | {statistics.median(wall):.0f} | "
                  f"{percentile(wall, 95):.0f} | {max(wall):.0f} | {statistics.median(cpu):.0f} | "
                  f"{percentile(cpu, 95):.0f} |")  # fmt: skip

        for kind, paths in kinds.items():
            for p in paths[:5]:
                fetch(base + p)  # warm-up
            line(kind, [fetch(base + p) for p in paths])
        for days in (30, 90, 365):
            line(f"dashboard, {days} days", [fetch(f"{base}/dashboard?days={days}") for _ in range(10)])
        worst = {}
        for q in QUERIES:
            ms = [fetch(base + "/?" + urlencode({"q": q}))[0] for _ in range(5)]
            worst[q] = statistics.median(ms)
        print("\nsearch page by query (median of 5, ms): "
              + ", ".join(f"{q} {ms:.0f}" for q, ms in worst.items()))  # fmt: skip
    finally:
        server.terminate()
        server.wait(20)
        if not args.keep and not args.db:
            for f in Path(tmp).iterdir():
                f.unlink()
            os.rmdir(tmp)


if __name__ == "__main__":
    main()
