"""The corpus at scale: build a 1M (or 10M) article corpus fast on SQLite or PostgreSQL and
measure what it costs and how it answers.

Not a test. The corpus is bulk-loaded in the storage layer's own format, not crawled:
Core ``insert(Article.__table__)`` in large transactions on a schema made by
``create_schema`` (so the models' type decorators and the database's triggers apply to
every row), then ``fts.sync_search`` (SQLite) or ``fts.setup_search`` (PostgreSQL: the
pg_trgm GIN indexes, dropped for the load, built in bulk) indexes it. Rows:

- bodies from ``benchmarks/corpus_search.py``'s templates (real Chinese article bodies of
  the labelled datasets, paragraphs shuffled and some dropped, so no two rows are alike);
  ``raw_text`` the body plus two boilerplate lines, as the line table leaves it;
  publication times over the last two years; eight sites; a tenth of the rows archived
  (``archive``/``captured_at``); record columns (origin, section, authors, language);
- every row a reprint signature (126 values) and its 42 LSH band keys, 15 % of them
  reprints sharing half of an earlier row's keys and its ``story_id``. Signatures and keys
  are random bytes of the real shape (computing 1M real MinHashes takes 20 CPU minutes),
  except for the newest ``--window`` rows, whose bodies are real sentences drawn at random
  (``benchmarks/reprints_cost.py``) with their real fingerprints: the write path's
  reprints are of those;
- a line table of 3,000 real line hashes per site, a year of nightly runs.

Then it measures, printing markdown tables (progress on stderr):

1. bytes per article, all-in and per table and index (SQLite ``dbstat``; PostgreSQL
   ``pg_relation_size`` per relation, heap, TOAST and each index);
2. build time per phase;
3. ``Corpus.search`` per query (1, 2, 4 and 7 characters; common, rare, absent) without
   and with site and date filters and with the web view's ``collapse`` (a 100-hit window
   and the hits' stories): the first call in the process and warm p50/p95; on PostgreSQL
   ``EXPLAIN (ANALYZE, BUFFERS)`` of the statement ``Corpus.search`` ran (``--plans``), on
   SQLite ``EXPLAIN QUERY PLAN``;
4. the web view (``scrapy corpus serve`` in a subprocess, as ``benchmarks/web.py``): cold
   (the first request of a fresh server process: its engine and connections new, the
   OS page cache not dropped, which a shared machine cannot do) and warm search pages,
   article pages, dashboards of 30, 90 and 365 days, with the server's CPU time; on
   PostgreSQL whether the server's engine pools its connections (sessions opened);
5. ``scrapy corpus stats`` (a subprocess: wall and CPU), export throughput (JSON lines of
   the last 90 days to /dev/null);
6. the write path at that size: ``--nightly`` articles (5,000) stored as a crawl stores
   them (batches of 50: line table, upsert, ``assign_stories`` in one transaction), then
   ``sync_search``; milliseconds an article, wall and CPU.

    python benchmarks/scale.py --backend sqlite --rows 1000000 [--db PATH] [--keep] [--reuse]
    python benchmarks/scale.py --backend postgresql --rows 1000000 [--db URL] [--keep] [--reuse]

Without ``--db`` the corpus goes to a temporary file (SQLite) or a temporary server
(PostgreSQL, ``benchmarks/scale_pg.py``) and is removed at the end unless ``--keep``.
``--reuse`` measures an existing corpus at ``--db`` without building. ``--build-only``
stops after the build and its sizes. The build refuses to start when the disk would pass
85 % (``df`` of the database's folder, estimated at 25 KB an article).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
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
import scale_pg  # noqa: E402
from scrapy.settings import Settings  # noqa: E402
from sqlalchemy import event, insert, text  # noqa: E402

from newsspider.extraction.linehash import line_md5, page_md5  # noqa: E402
from newsspider.reprints import fingerprint, params_from_settings  # noqa: E402
from newsspider.storage import (  # noqa: E402
    Article,
    Corpus,
    CrawlRun,
    LineCount,
    NightlyRun,
    ReprintSignature,
    SiteLineStats,
    SqlLineTable,
    create_schema,
    engine_for,
    fts,
    seen_contents,
    transaction,
    upsert_articles,
)
from newsspider.storage.stories import assign_stories  # noqa: E402
from newsspider.storage.web_queries import story_ids  # noqa: E402

SITES = corpus_search.SITES
#: (query, characters, kind). Rare: in one template of 171 (about 0.4 % of the rows) or,
#: for 7 characters, one row's title number; absent: in no row.
QUERIES = (
    ("的", 1, "common"),
    ("粥", 1, "rare"),
    ("饕", 1, "absent"),
    ("中国", 2, "common"),
    ("熊猫", 2, "rare"),
    ("饕餮", 2, "absent"),
    ("数据显示", 4, "common"),
    ("早产婴儿", 4, "rare"),
    ("饕餮盛宴", 4, "absent"),
    ("转载请注明出处", 7, "common"),
    ("（12345）", 7, "rare"),
)
FILTERS = ("none", "site", "90 days", "site + 90 days")
OUTLETS = ("新华社", "人民日报", "中国新闻网", "央视新闻", "经济日报", "澎湃新闻", "财新网", "第一财经")
SECTIONS = ("国内", "国际", "财经", "科技", "体育", "娱乐", "社会", "军事")
BOILERPLATE = ("责任编辑：{}", "本文来源：{}", "点击进入专题", "扫一扫分享到微信")
REPRINT_SHARE = 0.15
SIG_BYTES = 126 * 4
BANDS = 42
BYTES_PER_ARTICLE_GUESS = 25_000
NOW = datetime.now(UTC).replace(microsecond=0)
#: The PostgreSQL server's log, to count its connections (``--pg-log``).
PG_LOG: Path | None = None


def log(msg: str, end: str = "\n") -> None:
    print(msg, file=sys.stderr, end=end, flush=True)


def reprint_params():
    settings = Settings()
    settings.setmodule("newsspider.settings", priority="project")
    return params_from_settings(settings)


# -- the build ------------------------------------------------------------------------------


class Maker:
    """The rows of the corpus, deterministic for a seed."""

    def __init__(self, n: int, window: int, seed: int = 7):
        import reprints_cost  # the sentence pool and the random-sentence article

        self.reprints_cost = reprints_cost
        self.n, self.window = n, min(window, n)
        self.rng = random.Random(seed)
        self.tpls = corpus_search.templates()
        if not self.tpls:
            sys.exit("no templates: the labelled datasets of corpus_search.DATASETS are missing")
        self.pool = sentence_pool(self.tpls)
        self.chars = [c for s in self.pool for c in s if "\u4e00" <= c <= "\u9fff"]
        self.params = reprint_params()
        self.recent: list[tuple[int, int, list[int]]] = []  # (id, story, keys) ring

    def body(self, i: int) -> tuple[str, str]:
        """(title, body) of row i: a template's shuffled paragraphs, or for the newest
        ``window`` rows random real sentences (reprints_cost.article)."""
        if i >= self.n - self.window:
            content = self.reprints_cost.article(self.pool, self.chars, self.rng)
            return content.split("。", 1)[0][:30] + f"（{i}）", content
        title, lines = self.tpls[i % len(self.tpls)]
        lines = lines[:]
        self.rng.shuffle(lines)
        lines = lines[: max(2, int(len(lines) * self.rng.uniform(0.5, 1.0)))]
        return f"{title}（{i}）", "\n".join(lines)

    def row(self, i: int, title: str, content: str) -> dict:
        rng = self.rng
        site = SITES[i % len(SITES)]
        published = NOW - timedelta(seconds=rng.randrange(0, 2 * 365 * 86400))
        editor = rng.choice(("王", "李", "张", "刘")) + rng.choice(("明", "华", "丽", "强"))
        raw = "\n".join([content, BOILERPLATE[0].format(editor), BOILERPLATE[rng.randrange(1, 4)].format(site)])
        archived = rng.random() < 0.1
        row = {
            "id": i + 1, "url": f"https://{site}.example/{published:%Y/%m%d}/{i}.html", "site": site,
            "source": site, "title": title, "published": published, "content": content,
            "raw_text": raw, "encoding": "utf-8", "content_md5": page_md5(raw),
            "fetched_at": published + timedelta(hours=1), "updated_at": published + timedelta(hours=1),
            "published_source": "json-ld", "published_precision": "second",
            "archive": "cc:CC-MAIN-2024-10" if archived else None,
            "captured_at": published + timedelta(days=3) if archived else None,
            "authors": editor if rng.random() < 0.3 else None,
            "authors_source": "meta:author" if rng.random() < 0.3 else None,
            "origin": rng.choice(OUTLETS) if rng.random() < 0.5 else None,
            "origin_source": "text", "editor": editor,
            "section": rng.choice(SECTIONS) if rng.random() < 0.7 else None,
            "section_source": "url", "language": "zh", "script": "simplified",
        }  # fmt: skip
        return row

    def index_rows(self, row: dict) -> tuple[dict, list[tuple[int, int]]]:
        """The row's reprint signature row and band keys; sets its ``story_id``."""
        rng, aid = self.rng, row["id"]
        if aid > self.n - self.window:
            fp = fingerprint(row["content"], self.params)
            keys = sorted(set(fp.keys))
            sig = fingerprint_bytes(fp.signature)
            chars, story = fp.chars, aid
        else:
            keys = [rng.getrandbits(64) - 2**63 for _ in range(BANDS)]
            story = aid
            if self.recent and rng.random() < REPRINT_SHARE:
                _, story, theirs = self.recent[rng.randrange(len(self.recent))]
                keys[: BANDS // 2] = theirs[: BANDS // 2]
            sig = rng.randbytes(SIG_BYTES)
            chars = int(len(row["content"]) * 0.9)
            self.recent.append((aid, story, keys))
            if len(self.recent) > 5000:
                self.recent.pop(0)
        row["story_id"] = story
        sig_row = {"article_id": aid, "content_md5": row["content_md5"], "chars": chars, "signature": sig}
        return sig_row, [(k, aid) for k in set(keys)]


def sentence_pool(tpls) -> list[str]:
    """The sentences of the templates' bodies (``reprints_cost.sentences`` reads the same
    kind of text from the datasets, extracting pages again: minutes on a busy machine)."""
    return [s for _, lines in tpls for s in _SENTENCE.findall("\n".join(lines))]


_SENTENCE = re.compile(r"[^。！？\n]{6,}[。！？]")


def fingerprint_bytes(sig) -> bytes | None:
    from array import array

    return array("I", sig).tobytes() if sig is not None else None


def disk_check(folder: Path, need: int) -> None:
    """Refuse to build when the disk would pass 85 % (``df`` of ``folder``)."""
    st = os.statvfs(folder)
    total = st.f_blocks * st.f_frsize
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    avail = st.f_bavail * st.f_frsize
    capacity = used + avail  # what df's Use% divides by
    after = (used + need) / capacity
    log(f"disk: {used / 1e9:.0f} GB used of {capacity / 1e9:.0f} GB ({total / 1e9:.0f} GB), "
        f"{avail / 1e9:.0f} GB free; this build needs about {need / 1e9:.0f} GB -> {after:.0%}")  # fmt: skip
    if after > 0.85:
        sys.exit(f"refusing to build: the disk would be {after:.0%} full (limit 85 %)")


def build(url: str, n: int, window: int, batch: int = 5000) -> dict[str, tuple[float, float]]:
    """Load n rows, their reprint index and a line table; index for search. Returns the
    (wall, CPU of this process) seconds of each phase."""
    engine = engine_for(url)
    pg = engine.dialect.name == "postgresql"
    t, c = time.perf_counter(), time.process_time()
    maker = Maker(n, window)
    phases = {"templates and sentence pool": (time.perf_counter() - t, time.process_time() - c)}
    create_schema(engine)  # every table, trigger and search structure, on an empty database
    if pg:  # the trigram GIN indexes are built after the load, in bulk
        with engine.begin() as conn:
            for name in fts.PG_TRGM_INDEXES:
                conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
    band_sql = "INSERT INTO reprint_bands (band_key, article_id) VALUES (?, ?)"
    t, c = time.perf_counter(), time.process_time()
    gen = 0.0
    done = 0
    while done < n:
        g = time.perf_counter()
        rows, sigs, bands = [], [], []
        for i in range(done, min(done + batch, n)):
            title, content = maker.body(i)
            row = maker.row(i, title, content)
            sig, keys = maker.index_rows(row)
            rows.append(row)
            sigs.append(sig)
            bands.extend(keys)
        gen += time.perf_counter() - g
        with engine.begin() as conn:
            if not pg:
                conn.exec_driver_sql("PRAGMA cache_size=-1000000")
            conn.execute(insert(Article.__table__), rows)
            conn.execute(insert(ReprintSignature.__table__), sigs)
            if pg:
                cur = conn.connection.driver_connection.cursor()
                with cur.copy("COPY reprint_bands (band_key, article_id) FROM STDIN") as copy:
                    for b in bands:
                        copy.write_row(b)
            else:
                conn.exec_driver_sql(band_sql, bands)
        done += len(rows)
        el = time.perf_counter() - t
        log(f"  loaded {done:,} / {n:,} rows, {done / el:,.0f} rows/s, {el:.0f} s", end="\r")
    log("")
    phases["rows, signatures, band keys (generating them: %.0f s)" % gen] = (
        time.perf_counter() - t, time.process_time() - c)
    return phases | finish(engine, maker)


def finish(engine, maker: Maker) -> dict[str, tuple[float, float]]:
    """The phases after the load: line table, runs, search index, statistics (also run
    alone by ``--finish`` on a corpus whose load was stopped early)."""
    pg = engine.dialect.name == "postgresql"
    phases = {}
    t, c = time.perf_counter(), time.process_time()
    line_table(engine, maker)
    nightly_history(engine)
    if pg:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "SELECT setval(pg_get_serial_sequence('articles', 'id'), (SELECT max(id) FROM articles))"
            )
    phases["line table, crawl and nightly runs"] = (time.perf_counter() - t, time.process_time() - c)
    t, c = time.perf_counter(), time.process_time()
    if pg:
        fts.setup_search(engine)  # the missing GIN indexes, built over the loaded rows
        name = "pg_trgm GIN indexes (setup_search)"
    else:
        indexed = fts.sync_search(engine, batch=50_000)
        name = f"FTS5 index (sync_search, {indexed:,} rows)"
    phases[name] = (time.perf_counter() - t, time.process_time() - c)
    t, c = time.perf_counter(), time.process_time()
    analyze(engine)
    phases["ANALYZE (and VACUUM on PostgreSQL)"] = (time.perf_counter() - t, time.process_time() - c)
    return phases


def line_table(engine, maker: Maker) -> None:
    rng = random.Random(5)
    lines = sorted({ln for _, body in maker.tpls for ln in body})
    rows, stats = [], []
    per_site = maker.n // len(SITES)
    for site in SITES:
        for ln in rng.sample(lines, min(3000, len(lines))):
            rows.append({"site": site, "md5": line_md5(ln), "LC": rng.randint(2, max(3, per_site // 50))})
        stats.append({"site": site, "RC": per_site, "pruned_at_RC": per_site})
    with engine.begin() as conn:
        conn.execute(insert(LineCount.__table__), rows)
        conn.execute(insert(SiteLineStats.__table__), stats)


def nightly_history(engine) -> None:
    """A year of nightly runs, one crawl_runs row per site and night (as benchmarks/web.py)."""
    rng = random.Random(3)
    runs, nightly = [], []
    for night in range(365):
        start = (NOW - timedelta(days=night)).replace(hour=2, minute=0, second=0)
        for site in SITES:
            bad = rng.random() < 0.03
            pages = 0 if bad else rng.randint(200, 900)
            dropped = rng.randint(0, 30)
            runs.append({
                "site": site, "started_at": start, "finished_at": start + timedelta(minutes=20),
                "status": "nothing_fetched" if bad else "finished", "pages_fetched": pages,
                "items_new": pages // 4, "items_updated": 0, "items_dropped": dropped,
                "drop_reasons": json.dumps({"EmptyMainblockset": dropped}), "errors": 0,
                "fetch_failures": 40 if bad else rng.randint(0, 5),
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


def analyze(engine) -> None:
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM (ANALYZE)")
    else:
        with engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


# -- sizes ----------------------------------------------------------------------------------


def sizes(engine, path: Path | None) -> tuple[int, list[tuple[str, str, int]]]:
    """(all-in bytes, [(relation, what, bytes)]), largest first."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            total = path.stat().st_size if path else 0
            rows = conn.execute(text(
                "SELECT d.name, coalesce(m.type, 'internal'), sum(d.pgsize) FROM dbstat d "
                "LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY d.name ORDER BY 3 DESC"
            )).all()  # fmt: skip
            return total, [(r[0], r[1], int(r[2])) for r in rows]
        total = int(conn.scalar(text("SELECT pg_database_size(current_database())")))
        rows = conn.execute(text("""
            SELECT c.relname, CASE c.relkind WHEN 'r' THEN 'table' WHEN 'i' THEN 'index'
                   ELSE c.relkind::text END, pg_relation_size(c.oid), coalesce(t.relname, '')
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i')
        """)).all()  # fmt: skip
        out = []
        for name, kind, size, toast in rows:
            out.append((name, kind, int(size)))
            if toast:
                tsize = conn.scalar(text(
                    "SELECT pg_total_relation_size(CAST(:t AS regclass))"), {"t": f"pg_toast.{toast}"})  # fmt: skip
                out.append((f"{name} (TOAST)", "toast", int(tsize or 0)))
        return total, sorted(out, key=lambda r: -r[2])


def print_sizes(total: int, rels: list[tuple[str, str, int]], n: int) -> None:
    print(f"\nAll-in: {total / 2**30:,.2f} GiB, **{total / n / 1000:,.1f} KB an article** "
          f"({n:,} articles)\n")  # fmt: skip
    print("| relation | kind | MiB | bytes an article | share |")
    print("|---|---|---|---|---|")
    for name, kind, size in rels:
        if size * 1000 < total:  # under 0.1 %
            continue
        print(f"| {name} | {kind} | {size / 2**20:,.0f} | {size / n:,.0f} | {size / total:.1%} |")


# -- timing helpers -------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class Capture:
    """The statements an engine runs (to EXPLAIN the one ``Corpus.search`` ran)."""

    def __init__(self, engine):
        self.statements: list[tuple[str, object]] = []
        event.listen(engine, "before_cursor_execute", self._on)

    def _on(self, conn, cursor, statement, parameters, context, executemany):
        self.statements.append((statement, parameters))

    def search_statement(self) -> tuple[str, object] | None:
        for stmt, params in self.statements:
            if "ORDER BY articles.published DESC" in stmt and "LIMIT" in stmt:
                return stmt, params
        return None


#: A query slower than this (ms) is timed once, without repeats, and EXPLAINed without
#: ANALYZE when ANALYZE passes twice this: the worst cases, kept within the run's time.
SLOW_MS = 5000


def explain(engine, stmt: str, params) -> str:
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SET statement_timeout = {2 * SLOW_MS}")
            try:
                rows = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS) " + stmt, params).all()
            except Exception:  # noqa: BLE001 - timed out: the plan without running it
                conn.rollback()
                conn.exec_driver_sql(f"SET statement_timeout = {2 * SLOW_MS}")
                rows = conn.exec_driver_sql("EXPLAIN " + stmt, params).all()
                rows = [*rows, (f"(EXPLAIN without ANALYZE: the statement ran over {2 * SLOW_MS} ms)",)]
            conn.rollback()
            return "\n".join(r[0] for r in rows)
        rows = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + stmt, params).all()
        return "\n".join(str(r[-1]) for r in rows)


def plan_summary(plan: str) -> str:
    """The plan's index and sort nodes, in order, in one line."""
    out = []
    for line in plan.splitlines():
        s = line.strip().lstrip("->").strip()
        m = re.match(r"(Bitmap Index Scan on \S+|Index Scan(?: Backward)? using \S+|Index Only Scan using \S+"
                     r"|Seq Scan on \S+|Sort(?= +\()|Incremental Sort(?= +\()|Limit|BitmapOr|Bitmap Heap Scan on \S+)"
                     r".*?(?:actual time=[\d.]+\.\.([\d.]+) rows=(\d+))?", s)  # fmt: skip
        if m and m.group(1) not in ("Limit",):
            actual = re.search(r"actual time=[\d.]+\.\.([\d.]+) rows=(\d+)", s)
            out.append(m.group(1) + (f" ({actual.group(2)} rows)" if actual else ""))
        elif s.startswith(("SCAN", "SEARCH", "USE TEMP B-TREE", "CORRELATED", "LIST SUBQUERY", "MULTI-INDEX")):
            out.append(s)
        if s.startswith("Execution Time"):
            out.append(s)
    return "; ".join(out)


def filter_args(f: str) -> dict:
    out = {}
    if "site" in f:
        out["site"] = "sina"
    if "90 days" in f:
        out["since"] = NOW - timedelta(days=90)
    return out


# -- measurements ---------------------------------------------------------------------------


def measure_search(engine, runs: int, plans_path: Path | None) -> None:
    corpus = Corpus(engine, setup=False)
    cap = Capture(engine)
    plans: list[str] = []
    print(f"\n### Corpus.search, limit 20 ({corpus.backend}); ms; first call in the process, "
          f"then warm p50/p95 of {runs} runs\n")  # fmt: skip
    print("| query | chars | kind | filter | hits | first | p50 | p95 | plan |")
    print("|---|---|---|---|---|---|---|---|---|")
    for q, chars, kind in QUERIES:
        for f in FILTERS:
            args = filter_args(f)
            cap.statements.clear()
            t = time.perf_counter()
            hits = corpus.search(q, limit=20, **args)
            first = (time.perf_counter() - t) * 1000
            found = cap.search_statement()
            summary = ""
            if found:
                plan = explain(engine, *found)
                summary = plan_summary(plan)
                plans.append(f"-- {q} ({chars} chars, {kind}), filter: {f}\n{found[0]}\n-- params: "
                             f"{found[1]}\n{plan}\n")  # fmt: skip
            times = [] if first < SLOW_MS else [first]
            for _ in range(0 if times else runs if first < 1500 else 2):
                t = time.perf_counter()
                corpus.search(q, limit=20, **args)
                times.append((time.perf_counter() - t) * 1000)
            if f == "none":
                unfiltered = first  # the collapse window below is an unfiltered search
            print(f"| {q} | {chars} | {kind} | {f} | {len(hits)} | {first:.0f} | "
                  f"{statistics.median(times):.0f} | {pct(times, 95):.0f} | {summary} |")  # fmt: skip
            log(f"  search {q} {f}: {statistics.median(times):.0f} ms")
        # the web view's collapse: a window of 100 hits and their stories
        times = []
        for _ in range(1 if unfiltered >= SLOW_MS else runs if unfiltered < 1500 else 2):
            t = time.perf_counter()
            found_hits = corpus.search(q, limit=100)
            story_ids(engine, [h.id for h in found_hits])
            times.append((time.perf_counter() - t) * 1000)
        print(f"| {q} | {chars} | {kind} | collapse (100 hits + stories) | {len(found_hits)} | - | "
              f"{statistics.median(times):.0f} | {pct(times, 95):.0f} | |")  # fmt: skip
    if plans_path:
        plans_path.write_text("\n".join(plans), encoding="utf-8")
        log(f"plans written to {plans_path}")


def cpu_ms(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


class Server:
    """``scrapy corpus serve`` in a subprocess (read-only), as benchmarks/web.py starts it."""

    def __init__(self, url: str):
        self.port = scale_pg.free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "corpus", "serve", "--port", str(self.port)],
            cwd=REPO, env={**os.environ, "DATABASE_URL": url}, stderr=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(600):
            try:
                urllib.request.urlopen(self.base + "/static/style.css", timeout=5).read()  # noqa: S310
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def get(self, path: str) -> tuple[float, float]:
        cpu = cpu_ms(self.proc.pid)
        t = time.perf_counter()
        with urllib.request.urlopen(self.base + path, timeout=300) as resp:  # noqa: S310
            resp.read()
            assert resp.status == 200, path
        return (time.perf_counter() - t) * 1000, cpu_ms(self.proc.pid) - cpu

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


#: The query kinds the web view is timed on (``--web-kinds``).
WEB_KINDS = ("common", "rare", "absent")


def web_paths() -> dict[str, str]:
    since = (NOW - timedelta(days=90)).date().isoformat()
    out = {}
    for q, chars, kind in QUERIES:
        if kind not in WEB_KINDS:
            continue
        out[f"{q} ({chars}, {kind})"] = "/?" + urlencode({"q": q})
        out[f"{q} ({chars}, {kind}), site"] = "/?" + urlencode({"q": q, "site": "sina"})
        out[f"{q} ({chars}, {kind}), 90 days"] = "/?" + urlencode({"q": q, "since": since})
        out[f"{q} ({chars}, {kind}), collapse"] = "/?" + urlencode({"q": q, "collapse": "1"})
    return out


def pg_sessions(url: str) -> int:
    engine = engine_for(url)
    with engine.connect() as conn:
        return int(conn.scalar(text(
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()")))  # fmt: skip


def pg_backends(url: str) -> list[tuple[int, datetime]]:
    """(pid, backend_start) of the other client connections to the database."""
    engine = engine_for(url)
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT pid, backend_start FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"))]  # fmt: skip


def log_connections(path: Path | None) -> int:
    """``connection authorized`` lines in the server's log (``log_connections = on``)."""
    if path is None or not path.exists():
        return 0
    return path.read_text(errors="replace").count("connection authorized")


def measure_web(url: str, runs: int, max_id: int) -> None:
    pg = url.startswith("postgresql")
    rng = random.Random(5)
    paths = web_paths()
    print("\n### The web view (`scrapy corpus serve`), one client, sequential; ms, whole "
          "response; server CPU ms beside\n")  # fmt: skip
    # cold: the first request of a fresh server process
    cold: dict[str, tuple[float, float]] = {}
    for q, chars, kind in QUERIES:
        if kind not in WEB_KINDS:
            continue
        s = Server(url)
        try:
            cold[f"{q} ({chars}, {kind})"] = s.get("/?" + urlencode({"q": q}))
        finally:
            s.stop()
    for name, path in (("article", f"/article/{rng.randint(1, max_id)}"),
                       ("dashboard 365 days", "/dashboard?days=365")):  # fmt: skip
        s = Server(url)
        try:
            cold[name] = s.get(path)
        finally:
            s.stop()
    s = Server(url)
    sessions0 = pg_sessions(url) if pg else 0
    logged0 = log_connections(PG_LOG)
    warm_start = datetime.now(UTC)
    requests = 0
    try:
        print("| page | cold ms (CPU) | warm p50 | warm p95 | server CPU p50 | requests |")
        print("|---|---|---|---|---|---|")

        def line(name: str, path_list: list[str], n: int, first: tuple[float, float] | None = None) -> None:
            nonlocal requests
            if first is None:
                s.get(path_list[0])  # warm-up
                requests += 1
            res = [first] if first else []
            res += [s.get(path_list[k % len(path_list)]) for k in range(n)]
            requests += n
            wall = [w for w, _ in res]
            cpu = [c for _, c in res]
            c = cold.get(name)
            cs = f"{c[0]:.0f} ({c[1]:.0f})" if c else "-"
            print(f"| {name} | {cs} | {statistics.median(wall):.0f} | {pct(wall, 95):.0f} | "
                  f"{statistics.median(cpu):.0f} | {n} |")  # fmt: skip
            log(f"  web {name}: {statistics.median(wall):.0f} ms")

        for name, path in paths.items():
            first = s.get(path)  # the warm-up, timed: a slow page is measured once
            requests += 1
            if first[0] >= SLOW_MS:
                line(name, [path], 0, first)
            else:
                line(name, [path], 2 if first[0] > 1500 else runs, None if first[0] < 1500 else first)
        line("article", [f"/article/{rng.randint(1, max_id)}" for _ in range(100)], 100)
        for days in (30, 90, 365):
            line(f"dashboard {days} days" if days != 365 else "dashboard 365 days",
                 [f"/dashboard?days={days}"], 10)  # fmt: skip
        if pg:
            opened = pg_sessions(url) - sessions0
            held = pg_backends(url)
            old_ones = sum(1 for _, started in held if started < warm_start)
            logged = log_connections(PG_LOG) - logged0
            print(f"\nConnection pooling: during {requests} warm requests to one server process "
                  f"the server log recorded {logged} new connections (log_connections; the "
                  f"benchmark's own count too), pg_stat_database.sessions grew by {opened}; "
                  f"after them {len(held)} client connections are open, {old_ones} of them "
                  f"opened before the warm requests began.")  # fmt: skip
    finally:
        s.stop()


def measure_stats_export(url: str, engine) -> None:
    print("\n### Statistics and export\n")
    print("| what | wall s | CPU s | figure |")
    print("|---|---|---|---|")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "scrapy", "corpus", "stats"], cwd=REPO,
                         env={**os.environ, "DATABASE_URL": url}, capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    print(f"| `scrapy corpus stats` (whole command, exit {out.returncode}) | {wall:.1f} | {cpu:.1f} | "
          f"{len(out.stdout.splitlines())} lines |")  # fmt: skip
    corpus = Corpus(engine, setup=False)
    t, c = time.perf_counter(), time.process_time()
    st = corpus.stats()
    print(f"| `Corpus.stats()` in process | {time.perf_counter() - t:.1f} | "
          f"{time.process_time() - c:.1f} | {st.total:,} articles |")  # fmt: skip
    since = NOW - timedelta(days=90)
    with open(os.devnull, "w", encoding="utf-8") as fh:
        t, c = time.perf_counter(), time.process_time()
        n = corpus.export(fh, "jsonl", since=since)
        el = time.perf_counter() - t
    print(f"| export JSON lines, last 90 days, to /dev/null | {el:.1f} | {time.process_time() - c:.1f} | "
          f"{n:,} rows, {n / el:,.0f} rows/s |")  # fmt: skip


def pg_server_cpu_ms(engine) -> float | None:
    """CPU ms of the PostgreSQL server's processes (the postmaster and its children), when
    the server runs on this machine; None elsewhere."""
    if engine.dialect.name != "postgresql":
        return None
    try:
        with engine.connect() as conn:
            datadir = conn.scalar(text("SHOW data_directory"))
        top = int(Path(datadir, "postmaster.pid").read_text().split()[0])
    except Exception:  # noqa: BLE001 - not a superuser, or another machine
        return None
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat.parent.name) == top or int(fields[1]) == top:
            total += (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    return total


def measure_write(engine, nightly: int, window_from: int) -> None:
    """``nightly`` articles stored as the crawl pipeline stores them, 50 a transaction."""
    import reprints_cost
    from reprints import edit_sentences

    params = reprint_params()
    rng = random.Random(11)
    pool = sentence_pool(corpus_search.templates())
    chars = [c for s in pool for c in s if "\u4e00" <= c <= "\u9fff"]
    with engine.connect() as conn:
        top = int(conn.scalar(text("SELECT max(id) FROM articles")))
        window = [r[0] for r in conn.execute(
            text("SELECT content FROM articles WHERE id > :lo ORDER BY id LIMIT 2000"), {"lo": window_from})]  # fmt: skip
    tag = f"{int(time.time())}"
    items = []
    for k in range(nightly):
        site = SITES[k % len(SITES)]
        if k % 5 == 0 and window:
            body = "来源：新华社\n" + edit_sentences(rng.choice(window), 0.15, rng)
        else:
            body = reprints_cost.article(pool, chars, rng)
        raw = "\n".join([body, BOILERPLATE[0].format("王明"), BOILERPLATE[2]])
        items.append({
            "url": f"https://{site}.example/nightly/{tag}/{k}.html", "site": site, "source": site,
            "title": body[:20], "published": NOW - timedelta(minutes=k), "raw_text": raw,
            "encoding": "utf-8", "fetched_at": NOW,
        })  # fmt: skip
    store_wall = reprint_wall = store_cpu = reprint_cpu = 0.0
    server0 = pg_server_cpu_ms(engine)
    t_all = time.perf_counter()
    for start in range(0, nightly, 50):
        chunk = items[start : start + 50]
        w, c = time.perf_counter(), time.thread_time()
        with transaction(engine) as session:
            rows = []
            by_site: dict[str, list[dict]] = {}
            for it in chunk:
                by_site.setdefault(it["site"], []).append(it)
            for site, its in by_site.items():
                md5s = [page_md5(it["raw_text"]) for it in its]
                stored = seen_contents(session, site, md5s)
                results = SqlLineTable(session, site).clean_batch(
                    [(it["raw_text"], m not in stored) for it, m in zip(its, md5s, strict=True)]
                )
                for it, m, res in zip(its, md5s, results, strict=True):
                    rows.append(it | {"content": res.text or it["raw_text"], "content_md5": m})
            upsert_articles(session, rows)
            w2, c2 = time.perf_counter(), time.thread_time()
            assign_stories(session, params, urls=[r["url"] for r in rows])
            w3, c3 = time.perf_counter(), time.thread_time()
        w4, c4 = time.perf_counter(), time.thread_time()
        store_wall += (w2 - w) + (w4 - w3)
        store_cpu += (c2 - c) + (c4 - c3)
        reprint_wall += w3 - w2
        reprint_cpu += c3 - c2
    w, c = time.perf_counter(), time.thread_time()
    indexed = fts.sync_search(engine)
    sync_wall, sync_cpu = time.perf_counter() - w, time.thread_time() - c
    total = time.perf_counter() - t_all
    server1 = pg_server_cpu_ms(engine)
    with engine.connect() as conn:
        joined = conn.scalar(text(
            "SELECT count(*) FROM articles WHERE id > :top AND story_id <= :top"), {"top": top})  # fmt: skip
    print(f"\n### Write path: {nightly:,} articles stored on top, 50 a transaction "
          f"(line table, upsert, reprints), then `sync_search`\n")  # fmt: skip
    print("| step | ms an article (wall) | ms an article (CPU of this process) |")
    print("|---|---|---|")
    for name, wv, cv in (("line table + upsert + commit", store_wall, store_cpu),
                         ("assign_stories (reprints)", reprint_wall, reprint_cpu),
                         (f"sync_search ({indexed:,} rows indexed)", sync_wall, sync_cpu)):  # fmt: skip
        print(f"| {name} | {wv * 1000 / nightly:.2f} | {cv * 1000 / nightly:.2f} |")
    print(f"| **all** | **{total * 1000 / nightly:.2f}** | "
          f"{(store_cpu + reprint_cpu + sync_cpu) * 1000 / nightly:.2f} |")  # fmt: skip
    if server0 is not None and server1 is not None:
        print(f"\nThe PostgreSQL server's processes used {(server1 - server0) / nightly:.2f} ms "
              f"of CPU an article over the same steps (every process of its postmaster).")  # fmt: skip
    print(f"\n{joined} of the {nightly // 5} reprints joined an indexed story.")


# -- main -----------------------------------------------------------------------------------


def main() -> None:
    global PG_LOG, WEB_KINDS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--db", default=None, help="SQLite file or PostgreSQL URL")
    ap.add_argument("--keep", action="store_true", help="keep the corpus afterwards")
    ap.add_argument("--reuse", action="store_true", help="measure the corpus at --db, no build")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--finish", action="store_true",
                    help="with --reuse: index a corpus whose load was stopped (line table, "
                    "runs, search index, ANALYZE)")
    ap.add_argument("--window", type=int, default=20_000, help="rows with real fingerprints")
    ap.add_argument("--runs", type=int, default=7, help="warm runs per query")
    ap.add_argument("--nightly", type=int, default=5000, help="articles of the write path")
    ap.add_argument("--plans", type=Path, default=None, help="write EXPLAIN output here")
    ap.add_argument("--skip", default="", help="comma list of: search,web,stats,write")
    ap.add_argument("--pg-log", type=Path, default=None,
                    help="the PostgreSQL server's log (log_connections on) to count connections")
    ap.add_argument("--web-kinds", default=",".join(WEB_KINDS),
                    help="query kinds timed through the web view (common,rare,absent)")
    args = ap.parse_args()
    PG_LOG = args.pg_log
    WEB_KINDS = tuple(args.web_kinds.split(","))
    skip = set(filter(None, args.skip.split(",")))
    tmp = Path(tempfile.mkdtemp(prefix="scale-bench-"))
    pg_base = None
    path = None
    if args.backend == "sqlite":
        path = Path(args.db).resolve() if args.db else tmp / "corpus.db"
        url = f"sqlite:///{path}"
        exists = path.exists()
        folder = path.parent
    else:
        if args.db:
            url = args.db
        else:
            pg_base = tmp / "pg"
            url = scale_pg.start(pg_base)
            PG_LOG = pg_base / "server.log"
            log(f"PostgreSQL at {url} (data in {pg_base})")
        folder = tmp
        engine = engine_for(url)
        with engine.connect() as conn:
            exists = bool(conn.scalar(text("SELECT to_regclass('articles') IS NOT NULL")))
    try:
        if args.reuse and not exists:
            sys.exit(f"--reuse: no corpus at {args.db}")
        if exists and not args.reuse:
            sys.exit(f"a corpus exists at {args.db}: pass --reuse to measure it, or a new place")
        load = os.getloadavg()
        print(f"## {args.backend}, {args.rows:,} articles\n")
        print(f"{os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
              f"at the start; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit "
              f"{subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=REPO, capture_output=True, text=True).stdout.strip()}")  # fmt: skip
        engine = engine_for(url)
        if args.finish:
            with engine.connect() as conn:
                loaded = int(conn.scalar(text("SELECT count(*) FROM articles")))
            t = time.perf_counter()
            phases = finish(engine, Maker(loaded, 0))
            print(f"\n### Finishing a stopped load of {loaded:,} rows: {time.perf_counter() - t:,.0f} s\n")
            print("| phase | wall s | CPU s of this process |")
            print("|---|---|---|")
            for name, (wall, cpu) in phases.items():
                print(f"| {name} | {wall:,.1f} | {cpu:,.1f} |")
        elif not args.reuse:
            disk_check(folder, args.rows * BYTES_PER_ARTICLE_GUESS)
            t = time.perf_counter()
            phases = build(url, args.rows, args.window)
            total = time.perf_counter() - t
            print(f"\n### Build: {total:,.0f} s ({args.rows / total:,.0f} articles/s)\n")
            print("| phase | wall s | CPU s of this process |")
            print("|---|---|---|")
            for name, (wall, cpu) in phases.items():
                print(f"| {name} | {wall:,.1f} | {cpu:,.1f} |")
        with engine.connect() as conn:
            n, max_id = conn.execute(text("SELECT count(*), max(id) FROM articles")).one()
        total_bytes, rels = sizes(engine, path)
        print_sizes(total_bytes, rels, n)
        sys.stdout.flush()
        if args.build_only:
            return
        window_from = max(0, args.rows - args.window)
        if "search" not in skip:
            measure_search(engine, args.runs, args.plans)
            sys.stdout.flush()
        if "web" not in skip:
            measure_web(url, max(3, args.runs - 2), max_id)
            sys.stdout.flush()
        if "stats" not in skip:
            measure_stats_export(url, engine)
            sys.stdout.flush()
        if "write" not in skip:
            measure_write(engine, args.nightly, window_from)
        load = os.getloadavg()
        print(f"\nload average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    finally:
        engine_for(url).dispose()
        if not args.keep and not args.reuse:
            if pg_base is not None:
                scale_pg.stop(pg_base, remove=True)
            elif path is not None and not args.db:
                for suffix in ("", "-wal", "-shm"):
                    Path(str(path) + suffix).unlink(missing_ok=True)
            elif path is not None:
                log(f"left {path} (given with --db; delete it by hand)")
        elif pg_base is not None:
            log(f"kept the server: python benchmarks/scale_pg.py stop {pg_base}")
        if not any(tmp.iterdir()):
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
