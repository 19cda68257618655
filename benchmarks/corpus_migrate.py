"""``scrapy corpus migrate`` at scale: a SQLite corpus of N articles copied into PostgreSQL.

Not a test. Builds a SQLite corpus of N articles (default 100,000) from real Chinese
article bodies, with ``benchmarks/corpus_search.py``'s builder (each labelled page's body
extracted once, then replicated with distinct URLs, sites, times and shuffled
paragraphs), plus what a crawl leaves beside them: the line-hash table (one
``line_counts`` row per distinct line and site, ``site_line_stats``) and a year of
nightly history (``crawl_runs``, ``nightly_runs``, as ``benchmarks/web.py`` makes it).

Then runs the real command in a subprocess, as a user would:

    DATABASE_URL=sqlite:///... scrapy corpus migrate --to postgresql+psycopg://... --batch B

and reports its wall time, rows per second (all tables, and articles alone), and the
split the command itself prints (copy, search index, verification). The target is
``--to`` (an empty database), or else a throwaway PostgreSQL server started on loopback
from ``/usr/lib/postgresql/*/bin`` (as ``tests/pgserver.py`` does; fsync on) with a
``C.UTF-8`` database, so pg_trgm indexes the Chinese text as in production. Prints
markdown.

    python benchmarks/corpus_migrate.py [--rows 100000] [--batch 2000] [--to URL] [--db PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import corpus_search  # noqa: E402
from sqlalchemy import func, insert, select  # noqa: E402

from newsspider import settings as defaults  # noqa: E402
from newsspider.extraction.linehash import line_md5, split_lines  # noqa: E402
from newsspider.storage import Article, create_schema, engine_for  # noqa: E402
from newsspider.storage.migrate import copied_tables  # noqa: E402
from newsspider.storage.models import CrawlRun, LineCount, NightlyRun, SiteLineStats  # noqa: E402
from tests.pgserver import USER, find_bindir, free_port  # noqa: E402


def build(url: str, n: int) -> dict[str, int]:
    """The source corpus; returns its rows per table."""
    tpls = corpus_search.templates()
    if not tpls:
        sys.exit("no templates: the labelled datasets of corpus_search.DATASETS are missing")
    engine = engine_for(url)
    create_schema(engine)
    lines: Counter[tuple[str, str]] = Counter()
    batch: list[dict] = []
    for i, row in enumerate(corpus_search.rows(n, tpls)):
        batch.append(row)
        for line in split_lines(row["raw_text"]):
            lines[(row["site"], line_md5(line))] += 1
        if len(batch) == 2000 or i == n - 1:
            with engine.begin() as conn:
                conn.execute(insert(Article.__table__), batch)
            batch = []
            print(f"  loaded {i + 1} articles", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    rng = random.Random(5)
    now = datetime.now(UTC)
    runs, nightly = [], []
    for night in range(365):
        start = (now - timedelta(days=night)).replace(hour=2, minute=0, second=0, microsecond=0)
        for site in corpus_search.SITES:
            pages = rng.randint(200, 900)
            runs.append({
                "site": site, "started_at": start, "finished_at": start + timedelta(minutes=20),
                "status": "finished", "pages_fetched": pages, "items_new": pages // 4,
                "drop_reasons": json.dumps({"EmptyMainblockset": rng.randint(0, 9)}),
                "summary": f"{site}: {pages // 4} articles stored",
            })  # fmt: skip
        nightly.append({"started_at": start, "finished_at": start + timedelta(minutes=25),
                        "host": "bench", "pid": 1, "sites": ",".join(corpus_search.SITES),
                        "status": "finished", "exit_code": 0, "report": "report\n"})  # fmt: skip
    lc_rows = [{"site": s, "md5": m, "LC": c} for (s, m), c in lines.items()]
    with engine.begin() as conn:
        for i in range(0, len(lc_rows), 20_000):
            conn.execute(insert(LineCount.__table__), lc_rows[i : i + 20_000])
        sites = Counter(s for s, _ in lines)
        conn.execute(insert(SiteLineStats.__table__), [{"site": s, "RC": n} for s in sites])
        conn.execute(insert(CrawlRun.__table__), runs)
        conn.execute(insert(NightlyRun.__table__), nightly)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return counts(url)


def counts(url: str) -> dict[str, int]:
    """Rows per table of the corpus at ``url``, every table the command copies."""
    engine = engine_for(url)
    with engine.connect() as conn:
        out = {t.name: int(conn.scalar(select(func.count()).select_from(t)) or 0)
               for t in copied_tables()}  # fmt: skip
    engine.dispose()
    return out


def start_server(base: Path) -> tuple[str, list[str], Path]:
    """A throwaway PostgreSQL on 127.0.0.1 with a C.UTF-8 database ``bench``; returns its
    URL, the command prefix that runs its binaries and its data directory."""
    bindir = find_bindir()
    if bindir is None:
        sys.exit("no PostgreSQL binaries under /usr/lib/postgresql/*/bin: give --to URL")
    prefix = ["runuser", "-u", USER, "--"] if os.geteuid() == 0 else []
    base.mkdir()
    for folder in (base.parent, base):  # the server's user walks into it
        folder.chmod(0o755)
    if prefix:
        shutil.chown(base, user=USER)
    datadir = base / "data"
    run = {"check": True, "capture_output": True, "cwd": base}
    subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(datadir), "-U", USER, "-A",
                    "trust", "-E", "UTF8", "--locale=C.UTF-8"], **run)  # fmt: skip
    port = free_port()
    subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(datadir), "-l",
                    str(base / "server.log"), "-o", f"-h 127.0.0.1 -p {port} -k {base}", "-w",
                    "start"], **run)  # fmt: skip
    subprocess.run([*prefix, str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U",
                    USER, "bench"], **run)  # fmt: skip
    stop = [*prefix, str(bindir / "pg_ctl"), "-D", str(datadir), "-m", "fast", "-w", "stop"]
    return f"postgresql+psycopg://{USER}@127.0.0.1:{port}/bench", stop, base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000, help="articles in the corpus")
    ap.add_argument("--batch", type=int, default=defaults.MIGRATE_BATCH, help="--batch")
    ap.add_argument("--to", default=None, help="an empty PostgreSQL database (default: own)")
    ap.add_argument("--db", default=None, help="the SQLite corpus (built if missing)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="newsspider-migrate-bench-"))
    db = Path(args.db) if args.db else work / "corpus.db"
    stop: list[str] | None = None
    try:
        source_url = f"sqlite:///{db}"
        start = time.perf_counter()
        tables = counts(source_url) if db.exists() else build(source_url, args.rows)
        build_s = time.perf_counter() - start
        target_url = args.to
        if target_url is None:
            target_url, stop, _ = start_server(work / "pg")
        cmd = ["scrapy", "corpus", "migrate", "--to", target_url, "--batch", str(args.batch)]
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy.cmdline", *cmd[1:]], cwd=REPO, text=True,
            capture_output=True, env=os.environ | {"DATABASE_URL": source_url}, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"migrate failed ({proc.returncode}): {proc.stderr.strip()}")
        last = proc.stdout.strip().splitlines()[-1]
        copy_s = float(re.search(r"rows(?: \(resumed\))? in ([\d.]+) s", last).group(1))
        index_s = float(re.search(r"search index ([\d.]+) s", last).group(1))
        verify_s = float(re.search(r"rows in ([\d.]+) s:", last).group(1))
        total = sum(tables.values())
        size = db.stat().st_size / 2**20
        print(f"## scrapy corpus migrate, {args.rows:,} articles ({size:,.0f} MB SQLite)\n")
        print(f"`python benchmarks/corpus_migrate.py --rows {args.rows} --batch {args.batch}`; "
              f"source built or read in {build_s:.0f} s\n")  # fmt: skip
        print("| table | rows |\n|---|---:|")
        for name, rows in tables.items():
            if rows:
                print(f"| {name} | {rows:,} |")
        print(f"| all | {total:,} |\n")
        print(f"- wall time of the command: {wall:.1f} s ({total / wall:,.0f} rows/s, "
              f"{tables['articles'] / wall:,.0f} articles/s), all included")  # fmt: skip
        print(f"- of which copy {copy_s:.1f} s ({total / copy_s:,.0f} rows/s), search index "
              f"{index_s:.1f} s, verification {verify_s:.1f} s")  # fmt: skip
        print(f"- the command's last line: `{last}`")
    finally:
        if stop is not None:
            subprocess.run(stop, capture_output=True, cwd=work, check=False)
        if not args.db:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
