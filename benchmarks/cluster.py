"""Cluster mode measured: N worker processes on one Redis frontier and one PostgreSQL corpus.

Not a test; ``tests/test_cluster.py`` imports its machinery, and it runs itself as each
worker process (``python benchmarks/cluster.py child CONFIG.json``).

The archive is ``crawl_archive.py``'s: real saved pages of every dataset under
``--datasets`` reused under distinct URLs of ``--sites`` bench sites, each site a chain
of list pages. A worker is one process with one spider per site (as ``scrapy nightly``
runs them), each replaying its site's archive, with the project's pipelines (extraction,
line table, PostgreSQL) and, with a Redis URL, cluster mode (``enable_cluster``). Each
worker writes what it fetched, its CPU time, its SQL statements and transactions (counted
by a SQLAlchemy event listener) and its stats as JSON.

``main`` runs the model's measurements: one crawl per worker count in ``--workers``
(default 1, 2, 4), each on a fresh database and an emptied Redis, and reports pages/s,
worker CPU per page, Redis commands and bytes per page (``INFO commandstats``, the
largest ``used_memory`` sampled during the run) and PostgreSQL statements per batch::

    python benchmarks/cluster.py --pages 3000 --sites 3 --workers 1,2,4 \\
        --redis-url redis://127.0.0.1:6390/0 \\
        --database-url postgresql+psycopg://postgres@127.0.0.1:5433/bench

``--check`` runs the acceptance check of cluster mode instead (:func:`compare`, which
``tests/test_cluster.py`` runs on a smaller archive): one local process, then three
workers, over one archive, into two databases::

    python benchmarks/cluster.py --check --pages 3000 --sites 3 \
        --redis-url redis://127.0.0.1:6390/0 \
        --database-url postgresql+psycopg://postgres@127.0.0.1:5433/cluster \
        --single-database-url postgresql+psycopg://postgres@127.0.0.1:5433/single
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import crawl_archive  # noqa: E402

#: Settings of every measured worker (the archive's crawl, as crawl_archive.py runs it).
WORKER_SETTINGS: dict[str, Any] = {
    "DOWNLOAD_DELAY": 0,
    "RANDOMIZE_DOWNLOAD_DELAY": False,
    "AUTOTHROTTLE_ENABLED": False,
    "ROBOTSTXT_OBEY": True,
    "DEPTH_LIMIT": 0,
    "LOG_LEVEL": "INFO",
    "PROGRESS_BAR": False,
    "PROGRESS_LOG_INTERVAL": 0,
    "INCREMENTAL": False,
    "EXTRACTION_WORKERS": 0,
    "CLUSTER_IDLE_CLOSE": 3.0,
    "CLUSTER_WORKER_TIMEOUT": 10.0,
    # Reprint detection takes one database-wide lock per stored batch (storage/stories.py),
    # which serializes every writer of a cluster; measured apart (docs/cluster.md).
    "REPRINTS_ENABLED": False,
}


def worker_config(
    tag: str,
    archive: Any,
    work: Path,
    *,
    database_url: str,
    redis_url: str | None,
    settings: dict[str, Any] | None = None,
    site_base: str | None = None,
) -> Path:
    """Write one worker's configuration; return its path (``site_base``: a live local
    site instead of the archive)."""
    work.mkdir(parents=True, exist_ok=True)
    cfg = {
        "tag": tag,
        "archives": [str(archive.path(s)) for s in range(archive.sites)] if archive else [],
        "database_url": database_url,
        "redis_url": redis_url,
        "settings": {**WORKER_SETTINGS, **(settings or {})},
        "site_base": site_base,
        "result": str(work / f"{tag}.result.json"),
        "ready": str(work / f"{tag}.ready"),
        "go": str(work / "go"),
    }
    path = work / f"{tag}.config.json"
    Path(cfg["result"]).unlink(missing_ok=True)
    Path(cfg["ready"]).unlink(missing_ok=True)
    Path(cfg["go"]).unlink(missing_ok=True)
    path.write_text(json.dumps(cfg, indent=1))
    return path


def start_worker(cfg_path: Path) -> subprocess.Popen[bytes]:
    """Start one worker process (its log beside its configuration)."""
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "newsspider.settings", "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    log = open(cfg_path.with_suffix(".log"), "wb")  # noqa: SIM115 (the child owns it)
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "child", str(cfg_path)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def finish_worker(proc: subprocess.Popen[bytes], cfg_path: Path, timeout: float) -> dict[str, Any]:
    """Wait for a worker; its result JSON (raises with the log's tail when it failed)."""
    code = proc.wait(timeout=timeout)
    result_path = Path(json.loads(cfg_path.read_text())["result"])
    log = cfg_path.with_suffix(".log")
    if code != 0 or not result_path.is_file():
        tail = log.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"worker {cfg_path.stem} failed (exit {code}), log {log}:\n{tail}")
    result = json.loads(result_path.read_text())
    result["log"] = str(log)
    return result


def run_workers(
    n: int,
    archive: Any,
    work: Path,
    *,
    database_url: str,
    redis_url: str | None,
    settings: dict[str, Any] | None = None,
    timeout: float = 900,
    tag: str = "w",
    site_base: str | None = None,
) -> list[dict[str, Any]]:
    """Run ``n`` workers side by side to their end; their results."""
    cfgs = [
        worker_config(f"{tag}{i}", archive, work, database_url=database_url,
                      redis_url=redis_url, settings=settings, site_base=site_base)
        for i in range(n)
    ]  # fmt: skip
    procs = [start_worker(c) for c in cfgs]
    release_workers(procs, cfgs, timeout)
    return [finish_worker(p, c, timeout) for p, c in zip(procs, cfgs, strict=True)]


def release_workers(procs: list[subprocess.Popen[bytes]], cfgs: list[Path], timeout: float) -> None:
    """Let the workers crawl once every one is ready (imports done, crawlers made).

    Machines of a cluster start their workers at about the same moment; on one busy
    machine, starting N interpreters takes seconds, and a short crawl would be over
    before the last worker came. A worker that ended before it was ready is left to
    :func:`finish_worker` to report.
    """
    readies = [Path(json.loads(c.read_text())["ready"]) for c in cfgs]
    deadline = time.monotonic() + timeout
    while not all(r.exists() or p.poll() is not None for r, p in zip(readies, procs, strict=True)):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    Path(json.loads(cfgs[0].read_text())["go"]).touch()


def wait_for_release(cfg: dict[str, Any], timeout: float = 900) -> None:
    """In a worker: say it is ready, and wait for :func:`release_workers`."""
    Path(cfg["ready"]).touch()
    go, deadline = Path(cfg["go"]), time.monotonic() + timeout
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


# --------------------------------------------------------------------------
# The worker process


def local_site(base: str) -> Any:
    """The ``Site`` row of a local test server at ``base``: ``/`` and ``/list/<n>.html``
    list ``/article/*.html`` (and further list pages)."""
    from newsspider.sites import Site

    return Site(
        key="local",
        source="本地新闻",
        allowed_domains=("127.0.0.1",),
        start_urls=(base + "/",),
        article_patterns=(r"^https?://[^/]+/article/[\w.-]+\.html",),
        list_patterns=(r"^https?://[^/]+/(list/\d+\.html)?$",),
    )


def child_main(cfg_path: Path) -> None:
    """One worker: one spider per bench site in one ``CrawlerProcess``."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from newsspider.cluster import enable_cluster
    from newsspider.spiders.news import spider_class

    cfg = json.loads(Path(cfg_path).read_text())
    sql = {"statements": 0, "commits": 0, "transaction_seconds": 0.0}
    lock = threading.Lock()
    begun: dict[int, float] = {}

    def count_statement(*_: Any) -> None:
        with lock:
            sql["statements"] += 1

    def count_begin(conn: Any) -> None:
        begun[id(conn)] = time.perf_counter()

    def count_commit(conn: Any) -> None:
        start = begun.pop(id(conn), None)
        with lock:
            sql["commits"] += 1
            if start is not None:  # wall time from BEGIN to COMMIT, the site lock's hold
                sql["transaction_seconds"] += time.perf_counter() - start

    event.listen(Engine, "before_cursor_execute", count_statement)
    event.listen(Engine, "begin", count_begin)
    event.listen(Engine, "commit", count_commit)

    settings = get_project_settings()
    overrides = {**cfg["settings"], "DATABASE_URL": cfg["database_url"]}
    if cfg.get("redis_url"):
        overrides["REDIS_URL"] = cfg["redis_url"]
    settings.setdict(overrides, priority="cmdline")
    enable_cluster(settings)
    process = CrawlerProcess(settings)
    fetched: dict[str, list[str]] = {}
    crawlers = []
    handlers: list[Any] = []
    t: dict[str, float] = {}

    targets = [(crawl_archive.bench_site(s), archive) for s, archive in enumerate(cfg["archives"])]
    if cfg.get("site_base"):  # a live site instead: the local test server of test_cluster_rate
        targets = [(local_site(cfg["site_base"]), None)]
    for site, archive in targets:
        crawler = process.create_crawler(spider_class(site, module=__name__))
        if archive:
            crawler.settings.set("REPLAY_ARCHIVE", archive, priority="cmdline")
        urls = fetched.setdefault(site.key, [])

        def on_response(response: Any, request: Any, spider: Any, urls: list[str] = urls) -> None:
            if not response.url.endswith("robots.txt"):
                urls.append(response.url)

        def on_open(spider: Any) -> None:
            t.setdefault("start", time.perf_counter())

        def on_close(spider: Any, reason: str) -> None:
            t["end"] = time.perf_counter()

        handlers.extend((on_response, on_open, on_close))  # signals keep weak references
        crawler.signals.connect(on_response, signal=signals.response_received)
        crawler.signals.connect(on_open, signal=signals.spider_opened)
        crawler.signals.connect(on_close, signal=signals.spider_closed)
        crawlers.append(crawler)
        process.crawl(crawler, start_urls=site.start_urls[0])
    wait_for_release(cfg)
    process.start()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = {}
    for crawler in crawlers:
        for key, value in (crawler.stats.get_stats() if crawler.stats else {}).items():
            if key.startswith("cluster/") or key == "finish_reason":  # per spider
                stats[f"{key}/{crawler.spider.name if crawler.spider else '?'}"] = str(value)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                stats[key] = stats.get(key, 0) + value
    result = {
        "tag": cfg["tag"],
        "fetched": fetched,
        "pages": sum(len(v) for v in fetched.values()),
        "seconds": round(t.get("end", 0) - t.get("start", 0), 2),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
        "children_cpu_seconds": round(children.ru_utime + children.ru_stime, 2),
        "sql": sql,
        "stats": stats,
        "exit_ok": not process.bootstrap_failed,
    }
    Path(cfg["result"]).write_text(json.dumps(result, indent=1, default=str))


# --------------------------------------------------------------------------
# The check: N workers against one process


def corpus_figures(database_url: str) -> dict[str, Any]:
    """What a crawl left in the database, in comparable form."""
    from sqlalchemy import create_engine, text

    from newsspider.storage.models import unpack_text

    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:

            def rows(sql: str) -> list[tuple[Any, ...]]:
                # raw_text comes back packed from SQLite (PackedText): compare it as text
                return [tuple(unpack_text(v) if isinstance(v, bytes) else v for v in r)
                        for r in conn.execute(text(sql))]

            return {
                "articles": rows(
                    "SELECT url, site, title, published, raw_text, content_md5 FROM articles"
                    " ORDER BY url"
                ),
                "rows": rows("SELECT count(*), count(DISTINCT url) FROM articles")[0],
                "RC": rows("SELECT site, rc FROM site_line_stats ORDER BY site"),
                "LC": rows("SELECT site, md5, lc FROM line_counts ORDER BY site, md5"),
                "crawl_runs": rows("SELECT count(*) FROM crawl_runs")[0][0],
            }
    finally:
        engine.dispose()


def compare(
    single: dict[str, Any],
    workers: list[dict[str, Any]],
    *,
    single_db: str,
    cluster_db: str,
    pages: int,
    sites: int,
) -> dict[str, Any]:
    """The acceptance check of N workers against one local process over one archive.

    Each URL fetched once across the workers, and every URL the single process fetched;
    every worker at least 20 % of the fetches; each site's run seeded by one worker; the
    stored articles, ``RC`` and every ``LC`` equal to the single process's; no URL stored
    twice; a ``crawl_runs`` row per worker and site. Returns the figures and a list of
    ``failures`` (empty when everything holds).
    """
    from collections import Counter

    failures: list[str] = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            failures.append(what)

    fetched = Counter(u for w in workers for urls in w["fetched"].values() for u in urls)
    twice = sorted(u for u, n in fetched.items() if n > 1)
    check(not twice, f"{len(twice)} URLs fetched more than once: {twice[:5]}")
    single_fetched = {u for urls in single["fetched"].values() for u in urls}
    check(set(fetched) == single_fetched,
          f"fetched sets differ: {len(set(fetched) ^ single_fetched)} URLs")  # fmt: skip
    articles = [u for u in single_fetched if "/news/" in u]
    check(len(articles) == pages, f"{len(articles)} article pages fetched, not {pages}")
    total = sum(fetched.values())
    shares = [round(w["pages"] / total, 3) if total else 0.0 for w in workers]
    check(all(s >= 0.2 for s in shares), f"a worker below 20 % of the fetches: {shares}")
    statuses = [w["stats"].get("newsspider/exit_status", 0) for w in workers]
    check(statuses == [0] * len(workers), f"exit statuses (summed over sites): {statuses}")
    seeders = Counter(
        k.rsplit("/", 1)[1] for w in workers for k, v in w["stats"].items()
        if k.startswith("cluster/seeder/") and v == "1"
    )  # fmt: skip
    check(seeders == {f"bench{s}": 1 for s in range(sites)}, f"seeders per site: {dict(seeders)}")
    one, many = corpus_figures(single_db), corpus_figures(cluster_db)
    check(one["rows"][0] >= 0.9 * pages, f"the single process stored {one['rows'][0]} rows")
    check(many["rows"][0] == many["rows"][1], f"duplicate rows: {many['rows']}")
    check(many["rows"] == one["rows"], f"rows {many['rows']} vs {one['rows']}")
    check(many["articles"] == one["articles"], "stored articles differ")
    check(many["RC"] == one["RC"], f"RC {many['RC']} vs {one['RC']}")
    check(many["LC"] == one["LC"], f"LC differs ({len(many['LC'])} vs {len(one['LC'])} lines)")
    check(many["crawl_runs"] == len(workers) * sites,
          f"{many['crawl_runs']} crawl_runs rows, not {len(workers) * sites}")  # fmt: skip
    return {
        "pages": pages,
        "sites": sites,
        "workers": len(workers),
        "fetches": total,
        "shares": shares,
        "rows": many["rows"][0],
        "line_counts": len(many["LC"]),
        "RC": many["RC"],
        "single_seconds": single["seconds"],
        "cluster_seconds": max(w["seconds"] for w in workers),
        "failures": failures,
    }


def check_main(args: argparse.Namespace) -> dict[str, Any]:
    """``--check``: one process, then ``--check-workers`` workers, over one archive."""
    import redis

    archive = crawl_archive.build_archive(
        args.work / "archive", args.pages, sites=args.sites, per_page=args.per_page,
        datasets=args.datasets,
    )  # fmt: skip
    reset_database(args.database_url)
    reset_database(args.single_database_url)
    redis.Redis.from_url(args.redis_url).flushall()
    exact = {"LINEHASH_PRUNE_EVERY": 0}  # pruning off: the line table is a pure count
    [single] = run_workers(1, archive, args.work / "single", database_url=args.single_database_url,
                           redis_url=None, settings=exact, tag="single")  # fmt: skip
    workers = run_workers(args.check_workers, archive, args.work / "check",
                          database_url=args.database_url, redis_url=args.redis_url,
                          settings=exact)  # fmt: skip
    report = compare(single, workers, single_db=args.single_database_url,
                     cluster_db=args.database_url, pages=args.pages, sites=args.sites)  # fmt: skip
    report["redis_keys_left"] = len(redis.Redis.from_url(args.redis_url).keys("newsspider:bench*"))
    return report


def reset_database(url: str) -> None:
    """Empty a PostgreSQL database (its public schema dropped and made again)."""
    from sqlalchemy import create_engine

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA public CASCADE")
        conn.exec_driver_sql("CREATE SCHEMA public")
    engine.dispose()


# --------------------------------------------------------------------------
# The measurements


def process_tree_cpu(pid: int | None) -> float:
    """CPU seconds of process ``pid`` (a postmaster, a redis-server), its live children
    and the children it has reaped (PostgreSQL's backends end with their connections)."""
    if not pid:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")

    def fields(p: int | str) -> list[str]:
        text = Path(f"/proc/{p}/stat").read_text()
        return text[text.rindex(")") + 2 :].split()

    try:
        own = fields(pid)
        total = sum(int(x) for x in own[11:15])  # utime stime cutime cstime
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    for child in children:
        try:
            total += sum(int(x) for x in fields(child)[11:13])
        except OSError:
            continue
    return total / tick


def redis_figures(client: Any) -> dict[str, int]:
    """Commands served so far and memory in use, from ``INFO``."""
    commands = sum(v["calls"] for v in client.info("commandstats").values())
    return {"commands": commands, "used_memory": int(client.info("memory")["used_memory"])}


def measure(
    n: int,
    archive: Any,
    work: Path,
    *,
    database_url: str,
    redis_url: str,
    reset_db: Any,
    pg_pid: int | None = None,
    redis_pid: int | None = None,
) -> dict[str, Any]:
    """One cluster crawl of ``archive`` with ``n`` workers; the model's figures."""
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushall()
    client.config_resetstat()
    reset_db()
    base = redis_figures(client)
    peak = {"used_memory": base["used_memory"]}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            try:
                mem = int(client.info("memory")["used_memory"])
            except Exception:  # noqa: BLE001 (a sample lost is no failure)
                continue
            peak["used_memory"] = max(peak["used_memory"], mem)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    servers_before = (process_tree_cpu(pg_pid), process_tree_cpu(redis_pid))
    t0 = time.perf_counter()
    results = run_workers(n, archive, work / f"n{n}", database_url=database_url, redis_url=redis_url)
    wall = time.perf_counter() - t0
    pg_cpu = process_tree_cpu(pg_pid) - servers_before[0]
    redis_cpu = process_tree_cpu(redis_pid) - servers_before[1]
    stop.set()
    sampler.join()
    after = redis_figures(client)
    pages = sum(r["pages"] for r in results)
    commits = sum(r["sql"]["commits"] for r in results)
    statements = sum(r["sql"]["statements"] for r in results)
    cpu = sum(r["cpu_seconds"] + r["children_cpu_seconds"] for r in results)
    crawl_seconds = max(r["seconds"] for r in results)
    return {
        "workers": n,
        "pages": pages,
        "wall_seconds": round(wall, 1),
        "crawl_seconds": crawl_seconds,
        "pages_per_s": round(pages / crawl_seconds, 1) if crawl_seconds else None,
        "worker_cpu_ms_per_page": round(1000 * cpu / pages, 2) if pages else None,
        "postgres_cpu_ms_per_page": round(1000 * pg_cpu / pages, 2) if pg_pid and pages else None,
        "redis_cpu_ms_per_page": round(1000 * redis_cpu / pages, 3) if redis_pid and pages else None,
        "redis_commands_per_page": round((after["commands"] - base["commands"]) / pages, 2),
        "redis_peak_bytes_per_page": round((peak["used_memory"] - base["used_memory"]) / pages, 1),
        "sql_statements": statements,
        "sql_commits": commits,
        "sql_statements_per_commit": round(statements / commits, 1) if commits else None,
        "sql_ms_per_transaction": round(
            1000 * sum(r["sql"]["transaction_seconds"] for r in results) / commits, 1
        ) if commits else None,  # fmt: skip
        "shares": [round(r["pages"] / pages, 3) for r in results],
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--sites", type=int, default=3)
    parser.add_argument("--per-page", type=int, default=100)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--database-url", required=True, help="a PostgreSQL database, emptied per run")
    parser.add_argument("--work", type=Path, default=Path("/tmp/newsspider-cluster-bench"))
    parser.add_argument("--datasets", type=Path, default=crawl_archive.DATASETS)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--pg-pid", type=int, help="the postmaster's PID: PostgreSQL CPU per page")
    parser.add_argument("--redis-pid", type=int, help="redis-server's PID: Redis CPU per page")
    parser.add_argument("--check", action="store_true",
                        help="the acceptance check instead: --check-workers workers against one "
                        "process (needs --single-database-url)")  # fmt: skip
    parser.add_argument("--check-workers", type=int, default=3)
    parser.add_argument("--single-database-url", help="the single process's database (--check)")
    args = parser.parse_args(argv)
    if args.check:
        if not args.single_database_url:
            parser.error("--check needs --single-database-url")
        report = check_main(args)
        print(json.dumps(report), flush=True)
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))
        if report["failures"]:
            raise SystemExit(1)
        return [report]

    archive = crawl_archive.build_archive(
        args.work / "archive", args.pages, sites=args.sites, per_page=args.per_page,
        datasets=args.datasets,
    )  # fmt: skip

    def reset_db() -> None:
        reset_database(args.database_url)

    rows = []
    for n in (int(x) for x in args.workers.split(",")):
        row = measure(n, archive, args.work, database_url=args.database_url,
                      redis_url=args.redis_url, reset_db=reset_db, pg_pid=args.pg_pid,
                      redis_pid=args.redis_pid)  # fmt: skip
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "child":
        child_main(Path(sys.argv[2]))
    else:
        main()
