"""Crawl at scale: a 100,000-page replay crawl into SQLite, watched every 10,000 pages.

    python benchmarks/crawl_scale.py [--pages 100000] [--sites 4] [--every N]
        [--concurrency 16] [--tracemalloc FRAMES] [--json out.json]

Builds (or reuses) a replay archive of ``--pages`` article pages (``crawl_archive.py``: the
saved pages of the labelled datasets reused under distinct URLs, with unique body lines,
one archive file per site, written as a stream) and crawls it with the full pipeline, one
``NewsSpider`` per site in one process as ``scrapy nightly`` runs them, into a fresh SQLite
database. Every ``--every`` pages (default: a tenth of ``--pages``) the crawl process
records:

* peak RSS (``VmHWM``) and current RSS of the crawl process, and the RSS of its
  children (the extraction workers);
* line-table rows per site (``line_counts``, bounded by pruning) and each site's ``RC``;
* database size (file + WAL) and articles stored;
* the scheduler queue, the dupefilter's fingerprints and the live Python objects;
* elapsed time, hence pages/s per window.

Targets checked in the report: peak RSS at the end <= 1.2 x peak RSS at the first
checkpoint, and no slowdown (the last window's pages/s >= 0.8 x the first's).
``--tracemalloc N`` traces allocations (N frames; slow) and adds the top growth since the
first checkpoint to each one, to find a leak.
"""

from __future__ import annotations

import argparse
import sys
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
    pages_per_window,
    run_child,
    setting,
)

RSS_TARGET = 1.2  # peak RSS at the end / peak RSS at the first checkpoint
SPEED_FLOOR = 0.8  # last window's pages/s / first window's


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work)
    every = args.every or max(1, args.pages // 10)
    archive = archive_for(args)
    cfg = crawl_config(
        "scale",
        archive,
        "full",
        database=work / "scale.db",
        concurrency=args.concurrency,
        every=every,
        settings=dict(args.set),
        tracemalloc_frames=args.tracemalloc,
    )
    result = run_child(cfg, work, timeout=args.timeout)
    points = [c for c in result["checkpoints"] if not c["final"] or c["pages"] % every]
    final = result["checkpoints"][-1]
    windows = [
        {"from": a, "to": b, "pages_per_s": round(r, 1)}
        for a, b, r in pages_per_window(result["checkpoints"])
    ]
    first = points[0] if points else final
    rss_ratio = round(final["peak_rss_mib"] / first["peak_rss_mib"], 3)
    full_windows = [w for w in windows if w["to"] - w["from"] >= every * 0.5]
    speed_ratio = (
        round(full_windows[-1]["pages_per_s"] / full_windows[0]["pages_per_s"], 3)
        if len(full_windows) >= 2
        else None
    )
    return {
        "benchmark": "crawl_scale",
        "machine": machine(),
        "archive": archive.summary(),
        "every": every,
        "concurrency": args.concurrency,
        "pages": result["pages"],
        "seconds": result["seconds"],
        "pages_per_s": result["pages_per_s"],
        "stored": result["stats"].get("newsspider/articles_new", 0),
        "dropped": result["stats"].get("item_dropped_count", 0),
        "checkpoints": result["checkpoints"],
        "windows": windows,
        "rss_ratio": rss_ratio,
        "rss_target": RSS_TARGET,
        "rss_flat": rss_ratio <= RSS_TARGET,
        "speed_ratio": speed_ratio,
        "no_slowdown": speed_ratio is None or speed_ratio >= SPEED_FLOOR,
        "db_mib": final.get("db_mib"),
        "line_rows": final.get("line_rows", {}),
        "stats": result["stats"],
        "log": result["log"],
    }


def markdown(report: dict[str, Any]) -> str:
    m, a = report["machine"], report["archive"]
    sites = sorted(report["line_rows"]) or sorted(
        {s for c in report["checkpoints"] for s in c.get("line_rows", {})}
    )
    lines = [
        f"Machine: {m['nproc']} cores, {m['cpu']}, {m['ram_gib']} GiB RAM, Python {m['python']}.",
        f"Archive: {a['pages']} article pages over {a['sites']} site(s) ({a['article_mib']} MiB "
        f"of HTML, {a['disk_mib']} MiB gzipped, built in {a['build_seconds']} s) from "
        f"{a['pool_pages']} saved pages; concurrency {report['concurrency']}.",
        f"Crawl: {report['pages']} pages in {report['seconds']} s = {report['pages_per_s']} "
        f"pages/s; {report['stored']} stored, {report['dropped']} dropped; database "
        f"{report['db_mib']} MiB.",
        "",
        "| pages | s | window pages/s | RSS MiB | peak RSS MiB | workers RSS MiB | "
        + " | ".join(f"line rows {s}" for s in sites)
        + " | DB MiB | queue | dupefilter | objects |",
        "|---" * (10 + len(sites)) + "|",
    ]
    rates = {w["to"]: w["pages_per_s"] for w in report["windows"]}
    shown = [
        c
        for i, c in enumerate(report["checkpoints"])
        if i == 0 or c["pages"] != report["checkpoints"][i - 1]["pages"] or not c["final"]
    ]
    for c in shown:
        rows = c.get("line_rows", {})
        lines.append(
            f"| {c['pages']} | {c['seconds']} | {rates.get(c['pages'], '-')} | {c['rss_mib']} | "
            f"{c['peak_rss_mib']} | {c['children_rss_mib']} | "
            + " | ".join(str(rows.get(s, "-")) for s in sites)
            + f" | {c.get('db_mib', '-')} | {c['scheduler_queue']} | "
            f"{c['dupefilter_fingerprints']} | {c['gc_objects']} |"
        )
    flat = "met" if report["rss_flat"] else "missed"
    lines += [
        "",
        f"Peak RSS at the end / at the first checkpoint: {report['rss_ratio']} "
        f"(target <= {report['rss_target']}: {flat}).",
    ]
    if report["speed_ratio"] is not None:
        verdict = "no slowdown" if report["no_slowdown"] else "slowdown"
        lines.append(
            f"Last window / first window pages/s: {report['speed_ratio']} ({verdict}; "
            f"floor {SPEED_FLOOR})."
        )
    for c in report["checkpoints"]:
        for entry in c.get("tracemalloc_top", []):
            lines.append(f"    tracemalloc @{c['pages']}: {entry}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_archive_arguments(parser, pages=100_000, sites=4)
    parser.add_argument("--every", type=int, default=0, help="checkpoint interval (pages/10)")
    parser.add_argument("--tracemalloc", type=int, default=0, metavar="FRAMES")
    parser.add_argument("--set", type=setting, action="append", default=[], metavar="SETTING=VALUE")
    parser.add_argument("--timeout", type=float, default=None, help="seconds for the crawl")
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    return emit(args, run(args), markdown)


if __name__ == "__main__":
    main()
