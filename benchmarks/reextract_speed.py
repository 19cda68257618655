"""Re-extraction speed: ``scrapy reextract``'s pages/s against cores x one process's.

    python benchmarks/reextract_speed.py [--pages 5000] [--workers N] [--json out.json]

Builds (or reuses) the crawl benchmarks' replay archive (``crawl_archive.py``), stores its
pages as a fresh crawl would (the ``full`` crawl of ``crawl_throughput.py``, in a child
process, into a fresh SQLite database), then measures:

* **single**: the default method (``EXTRACTOR``) over every archived article page in this
  process, one after the other: pages/s of one core;
* **reextract**: :func:`newsspider.reextract.reextract` over the same archive into that
  database, with ``--workers`` extraction processes (default: one per core), wall time
  from the first record read to the last row written: pages/s, and its ratio to
  ``workers x single`` (the issue's target: >= 90%);
* **CPU per page** of reading the archive alone, and of ``reextract``'s own process
  (reading, cleaning, writing, feeding the workers): work outside ``workers x single``
  that shares the cores with the workers;
* **identity**: the same extractor gives the stored titles, times and raw bodies back
  (titles and times changed must be 0); ``content`` may change where today's matured line
  table drops boilerplate the crawl's young table kept (as ``scrapy reclean`` would);
* **archive size**: the same pages written by the nightly recorder's code
  (``WarcRecorderExtension``: a request and a response record each, gzip per record),
  MiB per 1,000 pages.

``uptime`` is printed before and after: on a shared machine the figures move with load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_archive import (
    add_archive_arguments,
    add_output_arguments,
    archive_for,
    crawl_config,
    emit,
    machine,
    register_bench_site,
    run_child,
)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run(args: argparse.Namespace) -> dict[str, Any]:
    from scrapy import Request
    from scrapy.http import HtmlResponse

    from newsspider import settings as defaults
    from newsspider.reextract import archive_pages, reextract
    from newsspider.replay import WarcRecorderExtension
    from newsspider.sites import SITES
    from newsspider.storage import engine_for
    from newsspider.workers import extract_page

    load_before = uptime()
    work = Path(args.work)
    archive = archive_for(args)
    for i in range(args.sites):  # the bench sites, as the crawl child registers them
        register_bench_site(i)
    paths = [archive.path(i) for i in range(args.sites)]
    database = work / "reextract.db"
    if database.exists():
        database.unlink()
    cfg = crawl_config("reextract-crawl", archive, "full", database=database, concurrency=16)
    crawl = run_child(cfg, work)
    print(f"  crawl: {crawl['pages']} pages, {crawl['pages_per_s']} pages/s", file=sys.stderr)

    # reading the archive alone (gunzip, WARC parsing, headers): CPU per page
    c0 = time.process_time()
    pages = [p for path in paths for p in archive_pages(path) if "/news/" in p.url and not p.skip]
    read_ms = (time.process_time() - c0) * 1000 / len(pages)
    # single: one process, one page after another
    method = defaults.EXTRACTOR
    t0 = time.perf_counter()
    for p in pages:
        site = SITES.get(p.url.split("/")[2].split(".")[0])
        extract_page(method, p.body, p.url, p.headers or None, site and site.tz, {})
    single_s = time.perf_counter() - t0
    single = len(pages) / single_s

    workers = args.workers or (os.cpu_count() or 1)
    engine = engine_for(f"sqlite:///{database}")
    t0, c0 = time.perf_counter(), time.process_time()
    report = reextract(engine, paths, method=method, workers=workers)
    re_s = time.perf_counter() - t0
    parent_ms = (time.process_time() - c0) * 1000 / max(1, report.pages)  # this process only
    re_pps = report.pages / re_s

    # archive size in the nightly recorder's format
    out = work / "recorded.warc.gz"

    class _Stats:
        def inc_value(self, *a: Any) -> None:
            pass

    rec = WarcRecorderExtension(out, _Stats())
    for p in pages:
        req = Request(p.url)
        rec.response_downloaded(HtmlResponse(p.url, body=p.body, request=req), req)
    rec.spider_closed()
    size_mib = out.stat().st_size / 2**20
    shutil.rmtree(work / "unused", ignore_errors=True)
    return {
        "benchmark": "reextract_speed",
        "machine": machine(),
        "load_before": load_before,
        "load_after": uptime(),
        "pages": len(pages),
        "stored": report.pages,
        "single_pages_per_s": round(single, 1),
        "workers": workers,
        "reextract_seconds": round(re_s, 2),
        "reextract_pages_per_s": round(re_pps, 1),
        "ratio_to_workers_x_single": round(re_pps / (workers * single), 3),
        "archive_read_cpu_ms_per_page": round(read_ms, 2),
        "parent_cpu_ms_per_page": round(parent_ms, 2),
        "single_ms_per_page": round(1000 / single, 2),
        "rewritten": report.rewritten,
        "unchanged": report.unchanged,
        "bodies_changed": report.bodies_changed,
        "titles_changed": report.titles_changed,
        "times_changed": report.times_changed,
        "skipped": dict(report.skipped),
        "recorded_mib_per_1000": round(size_mib * 1000 / len(pages), 2),
        "html_mib_per_1000": round(sum(len(p.body) for p in pages) / 2**20 * 1000 / len(pages), 2),
    }


def markdown(r: dict[str, Any]) -> str:
    m = r["machine"]
    return "\n".join(
        [
            f"Machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']}.",
            f"Load before: {r['load_before']}",
            f"Load after:  {r['load_after']}",
            "",
            "| pages | single pages/s | workers | reextract s | reextract pages/s "
            "| vs workers x single | rewritten (bodies, titles, times) | unchanged | skipped |",
            "|---|---|---|---|---|---|---|---|---|",
            f"| {r['pages']} | {r['single_pages_per_s']} | {r['workers']} | "
            f"{r['reextract_seconds']} | {r['reextract_pages_per_s']} | "
            f"{r['ratio_to_workers_x_single']:.0%} | {r['rewritten']} ({r['bodies_changed']}, "
            f"{r['titles_changed']}, {r['times_changed']}) | {r['unchanged']} | "
            f"{r['skipped'] or '-'} |",
            "",
            f"CPU per page: extraction in one process {r['single_ms_per_page']} ms; reading "
            f"the archive alone {r['archive_read_cpu_ms_per_page']} ms; reextract's own process "
            f"(reading, cleaning, writing, feeding the workers) "
            f"{r['parent_cpu_ms_per_page']} ms.",
            "",
            f"Nightly's WARC: {r['recorded_mib_per_1000']} MiB per 1,000 pages "
            f"(request + response records, gzip per record; the pages' HTML is "
            f"{r['html_mib_per_1000']} MiB per 1,000).",
        ]
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_archive_arguments(parser, pages=5000, sites=1)
    parser.add_argument("--workers", type=int, default=0, help="processes (0: one per core)")
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    return emit(args, run(args), markdown)


if __name__ == "__main__":
    main()
