"""The crawl process's write path alone: a crawl's items stored again, CPU by stage.

    python benchmarks/crawl_write.py DATABASE [--batch 50] [--set SETTING=VALUE] [--repeat 3]

Reads the articles a crawl stored (e.g. ``/tmp/newsspider-bench/mix-full.db`` after
``benchmarks/crawl_throughput.py``), turns each back into the item the extraction pipeline
handed over (its URL, site, ``raw_text``, title, time and record fields), and stores them
again through ``CorpusPipeline`` into a fresh SQLite database, in crawl order, with the
project's settings (``--set`` changes one): line table, upserts, reprint detection and
the search index at the end, in one thread, without fetching or extracting. Prints the CPU
seconds (``time.thread_time``, so other work on the machine does not count) of each stage
as ``newsspider.workers.stage_cpu`` charges it, the best of ``--repeat`` runs each. A
before/after figure of a change to the write path, without a whole crawl's noise.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from crawl_archive import register_bench_site, setting  # noqa: E402

COLUMNS = (
    "url, site, source, title, published, published_source, published_precision, raw_text, "
    "encoding, authors, authors_source, origin, origin_source, editor, section, "
    "section_source, language, script, image, image_caption"
)


def items(database: Path) -> list[Any]:
    """The stored articles as ``ArticleItem``s before cleaning, in the order stored."""
    from newsspider.items import ArticleItem
    from newsspider.storage.models import unpack_text

    out = []
    with sqlite3.connect(database) as con:
        con.row_factory = sqlite3.Row
        for r in con.execute(f"SELECT {COLUMNS} FROM articles ORDER BY id"):
            published = datetime.fromisoformat(r["published"]) if r["published"] else None
            if published is not None and published.tzinfo is None:
                published = published.replace(tzinfo=UTC)
            fields = {k: r[k] for k in r.keys() if k not in ("authors", "published")}
            fields["raw_text"] = unpack_text(fields["raw_text"])  # zstd on SQLite
            out.append(
                ArticleItem(
                    html=b"",
                    headers={},
                    fetched_at=datetime.now(UTC),
                    published=published,
                    authors=tuple(filter(None, (r["authors"] or "").split("、"))),
                    **fields,
                )
            )
    return out


def run_once(stored: list[Any], settings: dict[str, Any], work: Path) -> dict[str, float]:
    """Store ``stored`` through a fresh ``CorpusPipeline``; CPU seconds by stage."""
    from scrapy.settings import Settings
    from scrapy.statscollectors import MemoryStatsCollector

    import newsspider.workers as workers
    from newsspider import settings as defaults
    from newsspider.pipelines.corpus import CorpusPipeline

    db = work / "write.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    s = Settings()
    s.setmodule(defaults)
    s.setdict({"DATABASE_URL": f"sqlite:///{db}", **settings})
    stats = MemoryStatsCollector(type("C", (), {"settings": s})())  # stats need no crawler
    pipeline = CorpusPipeline.from_settings(s, stats=stats)
    by_site: dict[str, list[Any]] = {}
    for item in stored:
        by_site.setdefault(item.site, []).append(item)
    pipeline.open_spider(type("S", (), {"name": "bench0"})())
    workers.STAGE_CPU = {}
    start = time.thread_time()
    try:
        with workers.stage_cpu("pipeline (reactor side)"):
            for item in stored:
                pipeline.process_item(item)
            pipeline.flush()
            pipeline._sync_search()
        stages = dict(workers.STAGE_CPU)
    finally:
        workers.STAGE_CPU = None
    stages["total"] = time.thread_time() - start
    pipeline.close_spider()
    pipeline.engine.dispose()
    return stages


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("database", type=Path, help="a crawl's SQLite database")
    parser.add_argument("--set", type=setting, action="append", default=[], metavar="S=V")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N articles")
    args = parser.parse_args(argv)
    stored = items(args.database)
    if args.limit:
        stored = stored[: args.limit]
    for site in sorted({i.site for i in stored}):
        register_bench_site(int(site.removeprefix("bench")))
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            stages = run_once(stored, dict(args.set), Path(tmp))
            if not best or stages["total"] < best["total"]:
                best = stages
    print(f"{len(stored)} articles, {len({i.site for i in stored})} sites, best of {args.repeat}:")
    for name, seconds in sorted(best.items(), key=lambda kv: kv[0] == "total"):
        print(f"  {name}: {seconds:.2f} CPU s, {1000 * seconds / len(stored):.2f} ms/article")
    return best


if __name__ == "__main__":
    main()
