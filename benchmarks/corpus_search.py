"""Corpus search at scale: FTS5 trigram (via ``Corpus.search``) against a full LIKE scan.

Not a test. Builds a SQLite corpus of N articles (default 100,000) from the real Chinese
pages of the labelled datasets (``--datasets``): each page's body is extracted once with ``extract_article``,
then replicated with distinct URLs, sites and times and with its paragraphs shuffled (and
some dropped) so that no two rows are alike. Rows are loaded into the schema as it was
before search, then ``create_schema`` adds the FTS table and backfills it, as on upgrading
an existing corpus; a further 2,000 inserts measure the trigger path a crawl takes.

Then, per query (2, 3, 4 and more Chinese characters, common and rare), in the same run:

- ``Corpus.search(q, limit=20)``: FTS5 MATCH for 3+ characters; for two characters the
  index's trigram list plus the column-tail indexes, or the LIKE walk in ``published``
  order for common words; the walk for one character;
- the same answer by a full LIKE scan (``articles NOT INDEXED``, every row's title and
  content tested, then sorted); both must return the same ids;

each timed as the median of several runs after one warm-up, and the number of matching
rows. Then the database size, the load rate and the export rate (JSONL and CSV to
/dev/null). Prints markdown.

    python benchmarks/corpus_search.py [--rows 100000] [--db PATH] [--runs 5] [--keep]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sqlalchemy import insert, text  # noqa: E402

from newsspider.evaluation import load_cases  # noqa: E402
from newsspider.extraction import ExtractionError, extract_article  # noqa: E402
from newsspider.extraction.linehash import page_md5, split_lines  # noqa: E402
from newsspider.storage import Article, Base, Corpus, create_schema, engine_for, fts  # noqa: E402
from newsspider.storage.fts import fts_phrase, like_pattern  # noqa: E402

DATASETS = REPO.parent / "shared" / "datasets"
#: Chinese article pages (list-pages are section pages, scrapinghub-en is mostly English).
ZH_DATASETS = (
    "cwced-zh",
    "cx163-zh",
    "gne-unlabelled-zh",
    "gerapy-detail-unlabelled",
    "newspaper4k-fixtures-zh",
    "readability-fixtures-zh",
)
SITES = ("netease", "sina", "tencent", "sohu", "xinhua", "thepaper", "chinadaily", "zaobao")
#: (query, what it is); chosen to cover every path and both common and rare words.
QUERIES = (
    ("经济", "2 chars, common"),
    ("央行", "2 chars, rarer"),
    ("华为", "2 chars, rare"),
    ("饕餮", "2 chars, absent"),
    ("税", "1 char"),
    ("互联网", "3 chars"),
    ("人工智能", "4 chars"),
    ("新冠肺炎", "4 chars, rare"),
    ("中华人民共和国", "7 chars"),
    ("饕餮盛宴", "4 chars, absent"),
)
FULL_SCAN = (
    "SELECT id FROM articles NOT INDEXED "
    "WHERE title LIKE :p ESCAPE '\\' OR content LIKE :p ESCAPE '\\' "
    "ORDER BY published DESC NULLS LAST, id DESC LIMIT :n"
)


def templates() -> list[tuple[str, list[str]]]:
    """(title, body lines) of every Chinese page the extractor finds an article on."""
    out = []
    for name in ZH_DATASETS:
        folder = DATASETS / name
        if not folder.is_dir():
            continue
        for case in load_cases(folder):
            try:
                art = extract_article(case.html, case.url)
            except ExtractionError:
                continue
            lines = split_lines(art.text)
            if len(lines) >= 2:
                out.append((art.title or lines[0][:30], lines))
    return out


def rows(n: int, tpls: list[tuple[str, list[str]]], seed: int = 7):
    """n distinct article rows made from the templates (a generator: constant memory)."""
    rng = random.Random(seed)
    t0 = datetime(2023, 1, 1, tzinfo=UTC)
    now = datetime.now(UTC)
    for i in range(n):
        title, lines = tpls[i % len(tpls)]
        lines = lines[:]
        rng.shuffle(lines)
        lines = lines[: max(2, int(len(lines) * rng.uniform(0.5, 1.0)))]
        content = "\n".join(lines)
        site = SITES[i % len(SITES)]
        yield {
            "url": f"https://bench.example/{site}/{i}.html",
            "site": site,
            "source": site,
            "title": f"{title}（{i}）",
            "published": t0 + timedelta(seconds=rng.randrange(0, 2 * 365 * 86400)),
            "content": content,
            "raw_text": content,
            "encoding": "utf-8",
            "content_md5": page_md5(content),
            "fetched_at": now,
            "updated_at": now,
        }


def build(url: str, n: int, tpls) -> tuple[float, float]:
    """Load n rows as a corpus crawled before search existed, then add search to it.

    The rows go in (transactions of 2,000) with the pre-search schema; ``create_schema``
    then creates the FTS table and backfills it (FTS5 ``rebuild``), the path an existing
    corpus takes on upgrade and the fastest way to index 100,000 rows at once. Returns
    (load seconds, index seconds).
    """
    engine = engine_for(url)
    Base.metadata.create_all(engine)
    stmt = insert(Article.__table__)
    start = time.perf_counter()
    batch: list[dict] = []
    loaded = 0
    for row in rows(n, tpls):
        batch.append(row)
        if len(batch) == 2000 or loaded + len(batch) == n:
            with engine.begin() as conn:
                conn.execute(stmt, batch)
            loaded += len(batch)
            batch = []
            print(f"  loaded {loaded} rows", file=sys.stderr, end="\r")
    load_s = time.perf_counter() - start
    print(file=sys.stderr)
    start = time.perf_counter()
    create_schema(engine)
    index_s = time.perf_counter() - start
    with engine.begin() as conn:
        conn.exec_driver_sql("ANALYZE")
    checkpoint(engine)
    return load_s, index_s


def insert_rate(url: str, tpls, n: int = 2000) -> float:
    """Rows/s of inserts through the FTS triggers (one crawl batch after another)."""
    engine = engine_for(url)
    extra = [
        r | {"url": r["url"].replace("bench.example", "more.example")}
        for r in rows(n, tpls, seed=11)
    ]
    start = time.perf_counter()
    for i in range(0, n, 50):  # NEWS_DB_BATCH: 50 articles per transaction
        with engine.begin() as conn:
            conn.execute(insert(Article.__table__), extra[i : i + 50])
    elapsed = time.perf_counter() - start
    with engine.begin() as conn:  # back to the measured corpus
        conn.execute(text("DELETE FROM articles WHERE url LIKE 'https://more.example/%'"))
    checkpoint(engine)
    return n / elapsed


def checkpoint(engine) -> None:
    """Fold the WAL into the database file, so its size is the corpus's."""
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def timed(fn, runs: int) -> tuple[float, object]:
    """Median milliseconds of ``runs`` calls after one warm-up, and the last result."""
    result = fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--db", default=None, help="database file (default: a temporary one)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per query (median)")
    ap.add_argument("--scan-runs", type=int, default=3, help="timed runs of the full scan")
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = ap.parse_args()
    if not DATASETS.is_dir():
        sys.exit(f"no datasets at {DATASETS}")

    t = time.perf_counter()
    tpls = templates()
    extract_s = time.perf_counter() - t
    tmpdir = None
    if args.db:
        path = Path(args.db)
        if path.exists():
            sys.exit(f"{path} exists; give a new path")
    else:
        tmpdir = tempfile.mkdtemp(prefix="corpus-bench-")
        path = Path(tmpdir) / "corpus.db"
    url = f"sqlite:///{path}"
    print(
        f"{len(tpls)} pages extracted in {extract_s:.1f} s; building {args.rows} rows in {path}",
        file=sys.stderr,
    )
    load_s, index_s = build(url, args.rows, tpls)
    size = path.stat().st_size
    engine = engine_for(url)
    corpus = Corpus(engine)
    assert corpus.backend == "fts5"

    with engine.connect() as conn:
        chars = conn.scalar(text("SELECT sum(length(content)) FROM articles"))
        try:
            fts_bytes = conn.scalar(
                text("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'articles_fts%'")
            )
        except Exception:  # dbstat is an optional SQLite build feature
            fts_bytes = None

    print(f"\n## Corpus search, {args.rows:,} articles (SQLite {sqlite_version(engine)})\n")
    print(
        "| query | chars | path | matching rows | Corpus.search ms | full LIKE scan ms | speed-up |"
    )
    print("|---|---|---|---|---|---|---|")
    for q, what in QUERIES:
        with engine.connect() as conn:
            if len(q) >= 3:
                count_sql = "SELECT count(*) FROM articles_fts WHERE articles_fts MATCH :q"
                matches = conn.scalar(text(count_sql), {"q": fts_phrase(q)})
            else:
                count_sql = (
                    "SELECT count(*) FROM articles "
                    "WHERE title LIKE :p ESCAPE '\\' OR content LIKE :p ESCAPE '\\'"
                )
                matches = conn.scalar(text(count_sql), {"p": like_pattern(q)})
        search_ms, hits = timed(lambda q=q: corpus.search(q, limit=20), args.runs)

        def scan(q=q):
            with engine.connect() as conn:
                return list(conn.scalars(text(FULL_SCAN), {"p": like_pattern(q), "n": 20}))

        scan_ms, scan_ids = timed(scan, args.scan_runs)
        assert [h.id for h in hits] == scan_ids, (q, [h.id for h in hits], scan_ids)
        if len(q) >= 3:
            path_name = "FTS5 phrase MATCH"
        else:
            with engine.connect() as conn:
                short = fts.short_match(conn, q)
            path_name = "trigram list + tails" if short is not None else "LIKE walk by time"
        print(
            f"| {q} ({what}) | {len(q)} | {path_name} | {matches:,} | {search_ms:.1f} "
            f"| {scan_ms:.0f} | {scan_ms / search_ms:.0f}x |"
        )

    # A filtered query: one site, one month.
    since, until = datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC)
    ms, _ = timed(
        lambda: corpus.search("人工智能", site="sina", since=since, until=until), args.runs
    )
    print(f"\n`人工智能` with site and month filters: {ms:.1f} ms")

    trigger_rate = insert_rate(url, tpls)  # last: it leaves free pages behind
    print("\n| figure | value |")
    print("|---|---|")
    print(f"| articles | {args.rows:,} |")
    print(f"| content characters | {chars:,} ({chars / args.rows:,.0f} per article) |")
    per_article = size / args.rows / 1024
    print(f"| database size | {size / 2**20:,.0f} MiB ({per_article:.1f} KiB/article) |")
    if fts_bytes:
        print(f"| of which FTS5 trigram index | {fts_bytes / 2**20:,.0f} MiB |")
    print(f"| bulk load, no search index | {args.rows / load_s:,.0f} rows/s ({load_s:.0f} s) |")
    print(f"| FTS5 backfill (`rebuild`) | {args.rows / index_s:,.0f} rows/s ({index_s:.0f} s) |")
    print(f"| inserts through the FTS triggers | {trigger_rate:,.0f} rows/s (50 per transaction) |")
    for fmt in ("jsonl", "csv"):
        with open(os.devnull, "w", encoding="utf-8", newline="") as fh:
            t = time.perf_counter()
            n = corpus.export(fh, fmt)
            export_s = time.perf_counter() - t
        print(f"| export {fmt} to /dev/null | {n / export_s:,.0f} rows/s ({export_s:.1f} s) |")

    engine.dispose()
    if not args.keep:
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        if tmpdir:
            os.rmdir(tmpdir)
    else:
        print(f"\nkept {path}", file=sys.stderr)


def sqlite_version(engine) -> str:
    with engine.connect() as conn:
        return str(conn.scalar(text("SELECT sqlite_version()")))


if __name__ == "__main__":
    main()
