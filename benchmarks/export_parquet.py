"""Parquet export at scale: peak memory and time of ``scrapy corpus export --format parquet``.

Not a test. Builds SQLite corpora of 10,000 and 100,000 articles (``--rows``) directly
through the schema (``create_schema``, then multi-row inserts of 2,000 rows, the FTS
triggers on), with synthetic Chinese bodies of 0.5-4 KB (a fixed pool of sentences,
shuffled per row, so no two rows are alike) and every column filled the way a crawl fills
it: record columns (authors, origin, editor, section, language, script, image, caption)
with some NULLs, times over two years, a few archived rows.

Then, per corpus, in a child process each (the real command, ``-o FILE``, default
settings):

- ``scrapy corpus export --format parquet`` and, for comparison, ``--format jsonl``;
- peak RSS of that child (``os.wait4``'s ``ru_maxrss``; the child is started by a small
  launcher process, so no page of this one counts), wall time, output size;

and reads the Parquet file back with pyarrow: its schema must be
``newsspider.storage.corpus.parquet_schema()`` and every row equal to the stored row
(read from SQL in id order, value by value, types included), row groups counted.

Last, on the largest corpus, what the indexes of revision 0008 cost: their size (SQLite's
``dbstat``), the time to build them, the time of 2,000 inserts (50 per transaction) with
and without them, and the top-origins query of ``scrapy corpus stats`` with and without
them. Prints markdown.

    python benchmarks/export_parquet.py [--rows 10000,100000] [--dir /tmp/pq] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pyarrow  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from sqlalchemy import insert, select, text  # noqa: E402

from newsspider.extraction.linehash import page_md5  # noqa: E402
from newsspider.storage import Article, create_schema, engine_for  # noqa: E402
from newsspider.storage.corpus import EXPORT_COLUMNS, parquet_schema, read_export  # noqa: E402

SITES = ("netease", "sina", "tencent", "sohu", "xinhua", "thepaper", "chinadaily", "zaobao")
SOURCES = (
    "网易新闻",
    "新浪新闻",
    "腾讯新闻",
    "搜狐新闻",
    "新华网",
    "澎湃新闻",
    "中国日报网",
    "联合早报",
)
ORIGINS = ("新华社", "中国新闻网", "人民日报", "央视新闻", "澎湃新闻", "环球时报", "经济日报", None)
SECTIONS = ("国内", "国际", "财经", "科技", "体育", "社会", "评论", None)
NAMES = ("张伟", "王芳", "李娜", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周杰", "吴婷")
SENTENCES = (
    "国家统计局今天发布数据显示，前三季度国内生产总值同比增长百分之五点二。",
    "受冷空气影响，北方多地迎来今冬首场降雪，气象部门提醒注意交通安全。",
    "人工智能技术正在加速进入制造业、医疗和教育等领域。",
    "市场监管部门表示，将进一步加强对网络交易平台的监督检查。",
    "专家认为，扩大内需仍是下一阶段经济工作的重点。",
    "记者从铁路部门获悉，春运期间预计发送旅客超过四亿人次。",
    "新能源汽车销量继续保持快速增长，出口规模再创新高。",
    "多地出台措施支持中小企业发展，减轻企业税费负担。",
    "该研究成果已发表在国际学术期刊上，引起广泛关注。",
    "当地政府表示，将全力做好群众安置和灾后重建工作。",
    "中国人民银行宣布下调金融机构存款准备金率零点二五个百分点。",
    "比赛中，中国队以三比一战胜对手，晋级下一轮。",
)
INDEXES = {
    "ix_articles_site_origin": "(site, origin)",
    "ix_articles_site_section": "(site, section)",
    "ix_articles_language": "(language)",
}
TOP_ORIGINS = (
    "SELECT site, origin, count(*) FROM articles{hint} WHERE origin IS NOT NULL "
    "GROUP BY site, origin"
)


def rows(n: int, seed: int = 7, prefix: str = "bench"):
    """n distinct article rows (a generator: constant memory)."""
    rng = random.Random(seed)
    t0 = datetime(2023, 1, 1, tzinfo=UTC)
    now = datetime.now(UTC)
    for i in range(n):
        k = i % len(SITES)
        lines = [rng.choice(SENTENCES) for _ in range(rng.randrange(4, 40))]
        content = "\n".join(f"{line}（{i}-{j}）" for j, line in enumerate(lines))
        raw = "首页 新闻 体育\n" + content + "\n责任编辑：" + rng.choice(NAMES)
        authors = rng.sample(NAMES, rng.randrange(0, 3))
        origin = rng.choice(ORIGINS)
        archived = i % 50 == 0
        yield {
            "url": f"https://{prefix}.example/{SITES[k]}/{i}.html",
            "site": SITES[k],
            "source": SOURCES[k],
            "title": f"{lines[0][:20]}（{i}）",
            "published": t0 + timedelta(seconds=rng.randrange(0, 2 * 365 * 86400)),
            "published_source": "meta:article:published_time",
            "published_precision": "second",
            "content": content,
            "raw_text": raw,
            "encoding": "utf-8",
            "content_md5": page_md5(raw),
            "fetched_at": now,
            "updated_at": now,
            "archive": "wayback" if archived else None,
            "captured_at": now - timedelta(days=400) if archived else None,
            "authors": "、".join(authors) or None,
            "authors_source": "text:byline" if authors else None,
            "origin": origin,
            "origin_source": "text:来源" if origin else None,
            "editor": rng.choice(NAMES),
            "section": rng.choice(SECTIONS),
            "section_source": "meta:article:section",
            "language": "zh" if i % 40 else "en",
            "script": "simplified" if i % 9 else "traditional",
            "image": f"https://img.{prefix}.example/{i}.jpg" if i % 3 else None,
            "image_caption": f"图为现场（{i}）" if i % 6 == 1 else None,
        }


def build(path: Path, n: int) -> float:
    """A corpus of n rows at ``path`` (the schema at the newest revision, search on)."""
    engine = engine_for(f"sqlite:///{path}")
    create_schema(engine)
    stmt = insert(Article.__table__)
    start = time.perf_counter()
    batch: list[dict] = []
    loaded = 0
    for row in rows(n):
        batch.append(row)
        if len(batch) == 2000 or loaded + len(batch) == n:
            with engine.begin() as conn:
                conn.execute(stmt, batch)
            loaded += len(batch)
            batch = []
            print(f"  {path.name}: {loaded} rows", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return time.perf_counter() - start


#: Started by a small Python process of its own: a child forked straight from this one
#: would count this process's pages (the corpus just built) in its peak RSS until exec.
LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(proc.pid, 0)
elapsed = time.perf_counter() - start
if os.waitstatus_to_exitcode(status):
    sys.exit(proc.stderr.read().decode()[-2000:])
print(elapsed, usage.ru_maxrss * 1024)  # Linux: kilobytes
"""


def run_child(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one child process (``os.wait4``)."""
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *argv], cwd=REPO, env=env,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    seconds, rss = done.stdout.split()
    return float(seconds), int(rss)


def check(db: Path, parquet: Path) -> tuple[int, int]:
    """Rows and row groups of the file, after checking its schema and every value against
    the stored rows (id order)."""
    file = pq.ParquetFile(parquet)
    want = parquet_schema()
    assert file.schema_arrow.equals(want, check_metadata=True), (file.schema_arrow, want)
    engine = engine_for(f"sqlite:///{db}")
    table = Article.__table__
    n = 0
    with engine.connect() as conn:
        stored = conn.execution_options(yield_per=1000).execute(select(table).order_by(table.c.id))
        for got, row in zip(read_export(parquet, "parquet"), stored, strict=True):
            expected = dict(zip(EXPORT_COLUMNS, row, strict=True))
            assert got == expected, (got["id"], expected["id"])
            for key, value in got.items():
                assert type(value) is type(expected[key]) or value is None, key
            n += 1
    engine.dispose()
    return n, file.num_row_groups


def index_costs(db: Path) -> dict[str, str]:
    """Size and build time of the revision 0008 indexes; inserts and the top-origins query
    with and without them."""
    engine = engine_for(f"sqlite:///{db}")
    out: dict[str, str] = {}
    with engine.connect() as conn:
        sizes = dict(conn.exec_driver_sql(
            "SELECT name, sum(pgsize) FROM dbstat WHERE name IN "
            "('ix_articles_site_origin', 'ix_articles_site_section', 'ix_articles_language', "
            "'articles') GROUP BY name"
        ).all())  # fmt: skip
        out["index size"] = (
            ", ".join(
                f"{name.removeprefix('ix_articles_')} {sizes.get(name, 0) / 2**20:.1f} MB"
                for name in INDEXES
            )
            + f" (the articles table: {sizes.get('articles', 0) / 2**20:.0f} MB)"
        )

        def top_origins(hint: str) -> float:
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                conn.exec_driver_sql(TOP_ORIGINS.format(hint=hint)).all()
                best = min(best, time.perf_counter() - t)
            return best * 1000

        with_ix = top_origins("")
        without = top_origins(" NOT INDEXED")
        out["top origins per site (stats)"] = (
            f"{with_ix:.0f} ms with the index, {without:.0f} ms without (a scan of the rows)"
        )
    rates: dict[bool, list[float]] = {True: [], False: []}
    build_s: dict[str, list[float]] = {name: [] for name in INDEXES}
    for k in range(6):  # alternating, so a change of load on the machine hits both alike
        indexed = k % 2 == 0
        rates[indexed].append(insert_rate(engine))
        with engine.begin() as conn:
            for name, columns in INDEXES.items():
                t = time.perf_counter()
                conn.exec_driver_sql(
                    f"DROP INDEX {name}"
                    if indexed
                    else f"CREATE INDEX {name} ON articles {columns}"
                )
                if not indexed:
                    build_s[name].append(time.perf_counter() - t)
    out["index build"] = ", ".join(
        f"{name.removeprefix('ix_articles_')} {statistics.median(s):.2f} s"
        for name, s in build_s.items()
    )
    with_ix, without = statistics.median(rates[True]), statistics.median(rates[False])
    out["2,000 inserts, 50 per transaction, FTS triggers on (median of 3)"] = (
        f"{with_ix:,.0f} rows/s with the indexes, {without:,.0f} rows/s without: "
        f"{(1 / with_ix - 1 / without) * 1000:.2f} ms more per article"
    )
    engine.dispose()
    return out


def insert_rate(engine, n: int = 2000) -> float:
    extra = list(rows(n, seed=11, prefix="more"))
    start = time.perf_counter()
    for i in range(0, n, 50):
        with engine.begin() as conn:
            conn.execute(insert(Article.__table__), extra[i : i + 50])
    elapsed = time.perf_counter() - start
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM articles WHERE url LIKE 'https://more.example/%'"))
    return n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="10000,100000", help="corpus sizes, comma-separated")
    ap.add_argument("--dir", default=None, help="folder of the corpora (reused when there)")
    ap.add_argument("--keep", action="store_true", help="keep the folder afterwards")
    args = ap.parse_args()
    sizes = [int(n) for n in args.rows.split(",")]
    folder = Path(args.dir or tempfile.mkdtemp(prefix="export-parquet-"))
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for n in sizes:
            db = folder / f"corpus-{n}.db"
            if not db.exists():
                print(f"building {n} articles: {build(db, n):.0f} s", file=sys.stderr)
            env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}"}
            measured = {}
            for fmt in ("parquet", "jsonl"):
                out = folder / f"corpus-{n}.{fmt}"
                argv = [sys.executable, "-m", "scrapy.cmdline", "corpus", "export",
                        "--format", fmt, "-o", str(out)]  # fmt: skip
                seconds, rss = run_child(argv, env)
                measured[fmt] = (seconds, rss, out.stat().st_size)
            checked, groups = check(db, folder / f"corpus-{n}.parquet")
            assert checked == n, (checked, n)
            results.append((n, db.stat().st_size, measured, groups))
        print(
            f"SQLite {sqlite3.sqlite_version}, pyarrow {pyarrow.__version__}, "
            f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}\n"
        )
        print(
            "| articles | database | format | time s | articles/s | peak RSS MB | file MB "
            "| row groups |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for n, size, measured, groups in results:
            for fmt, (seconds, rss, out_size) in measured.items():
                print(
                    f"| {n:,} | {size / 2**20:.0f} MB | {fmt} | {seconds:.1f} | {n / seconds:,.0f} "
                    f"| {rss / 2**20:.0f} | {out_size / 2**20:.1f} "
                    f"| {groups if fmt == 'parquet' else '-'} |"
                )
        print("\nRead back with pyarrow: every row equal to the stored one, the schema "
              "newsspider.storage.corpus.parquet_schema().\n")  # fmt: skip
        largest = folder / f"corpus-{max(sizes)}.db"
        print(f"Indexes of revision 0008 on {max(sizes):,} articles:\n")
        for what, figure in index_costs(largest).items():
            print(f"- {what}: {figure}")
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
