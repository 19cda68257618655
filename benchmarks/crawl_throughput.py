"""Crawl throughput: where a crawl's CPU goes per stored page, on two replay archives.

    python benchmarks/crawl_throughput.py [--pages 5000] [--archives mix,copies]
        [--sites 1] [--mix-sites 10] [--concurrency 16] [--repeat 1]
        [--variant NAME:SETTING=VALUE,...] [--set SETTING=VALUE] [--profile] [--json out.json]

Two WARC replay archives of ``--pages`` article pages, both made from the saved pages of the
labelled datasets (built or reused under ``--work``):

* ``mix``, the realistic mix (``crawl_mix.py``): most stories once, a tenth reprinted on 2
  to 10 of ten sites (a power law), nine in ten stories Chinese, each page a real saved
  page with a story's body planted in it;
* ``copies``, the stress case (``crawl_archive.py``): every saved page about ten times
  under distinct URLs (more than half of them English), on ``--sites`` sites.

Each is crawled in child processes (a fresh reactor each):

* ``bare``: the same ``NewsSpider`` with no item pipelines (Scrapy, the replay middleware,
  link extraction and the spider callbacks: what a crawl costs before we do anything);
* ``full``: the project's pipelines with its defaults (extraction in the worker processes,
  line table, SQLite upserts, search index, reprint detection) into a fresh database;
* each ``--variant``: ``full`` with some settings changed (e.g.
  ``noreprints:REPRINTS_ENABLED=False``).

``--set SETTING=VALUE`` changes a setting for every crawl, bare and full alike. Same settings
for all (``DOWNLOAD_DELAY=0``, AutoThrottle off, robots.txt obeyed, the given concurrency).
``--repeat`` runs the modes alternately that many times and keeps each mode's fastest.

What it measures: the CPU seconds of a full crawl by stage, and the share of them that is
fetch + extraction (the work no crawl can avoid), against 80 % on the mix and 65 % on the
copies. CPU time, not wall time, because the machine is shared:

* fetch and link-following: the bare crawl's process CPU (``getrusage``, from the first
  ``spider_opened`` to the last ``spider_closed``);
* extraction: the worker processes' CPU (``RUSAGE_CHILDREN`` once they are reaped);
* inside the full crawl process, the stages charged by ``newsspider.workers.stage_cpu``
  (a benchmark-only hook: ``STAGE_CPU`` is None in a real crawl) with ``time.thread_time``
  in the thread that runs them, exclusive of nested stages: the extraction hand-off
  (the pool's pipe threads, pickling jobs and unpickling replies), the line table, the
  storage (rows, upserts, commit), the search index and reprint detection;
* item handling and the rest: the full crawl process's CPU less the bare crawl's and the
  stages above (Scrapy's item path, the pipelines' reactor-side code, stats, logging).

Every article must be stored: the benchmark asserts that the corpus pipeline dropped
nothing, that the database holds every item that passed both pipelines, and on the mix
(where every page is an article) one row per page. Prints markdown; ``--json`` writes the
report. With ``--profile`` each crawl's reactor thread runs under cProfile and the report
names the profile files.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_archive import (
    Archive,
    add_archive_arguments,
    add_output_arguments,
    archive_for,
    crawl_config,
    emit,
    machine,
    run_child,
    setting,
)
from crawl_mix import MIX_SITES, build_mix_archive, mix_plan, plan_summary


def _variant(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME:SETTING=VALUE,...`` -> (name, settings); values are read as JSON when they parse."""
    name, _, rest = text.partition(":")
    settings: dict[str, Any] = {}
    for pair in filter(None, rest.split(",")):
        key, value = setting(pair)
        settings[key] = value
    if not name or not settings:
        raise argparse.ArgumentTypeError(f"expected NAME:SETTING=VALUE[,...], got {text!r}")
    return name, settings


#: The archives (``--archives``): the realistic mix first, the ten-copies stress case second.
ARCHIVES = ("mix", "copies")
#: Shares of the crawl's CPU per stored page that fetch + extraction must reach, per archive.
SHARE_TARGET = {"mix": 0.80, "copies": 0.65}
#: The stages of the crawl process measured inside it (``newsspider.workers.stage_cpu``), in
#: report order; what is left of the crawl process's CPU beyond these and the bare crawl's
#: is reported as "item handling and the rest".
STAGES = (
    "extraction hand-off",
    "line table",
    "storage",
    "search index",
    "reprints",
    "garbage collection",
)
#: Drop reasons of the corpus pipeline: a stored article's, never an extraction's.
CORPUS_DROPS = ("AllBoilerplate", "StoreError", "DatabaseUnavailable")


def build(args: argparse.Namespace, kind: str) -> Archive:
    """The archive ``kind`` (``mix`` or ``copies``) of the options, built or reused."""
    if kind == "copies":
        return archive_for(args)
    return build_mix_archive(
        Path(args.work) / f"mix-{args.pages}-{args.mix_sites}",
        args.pages,
        sites=args.mix_sites,
        per_page=args.per_page,
        datasets=Path(args.datasets),
    )


def stage_breakdown(bare: dict[str, Any], full: dict[str, Any]) -> dict[str, Any]:
    """CPU seconds of a full crawl by stage, and the share that is fetch + extraction.

    Fetch and link-following: the bare crawl's process CPU (same archive, same spiders, no
    pipelines). Extraction: the worker processes' CPU. The crawl process's stages: as
    charged inside it. The rest of the full crawl process's CPU is item handling (Scrapy's
    item path, the pipelines' reactor-side code, stats, logging).
    """
    stages = full.get("stage_cpu_seconds") or {}
    fetch = bare["cpu_seconds"] or 0.0
    extraction = full["children_cpu_seconds"] or 0.0
    process = full["cpu_seconds"] or 0.0
    measured = {name: stages.get(name, 0.0) for name in STAGES}
    rest = process - fetch - sum(measured.values())
    total = process + extraction
    rows = {
        "fetch and link-following (bare crawl)": fetch,
        "extraction (worker processes)": extraction,
        **measured,
        "item handling and the rest": rest,
    }
    stored = full.get("stored") or 0
    return {
        "cpu_seconds": {k: round(v, 2) for k, v in rows.items()},
        "ms_per_stored_page": {
            k: round(1000 * v / stored, 2) if stored else None for k, v in rows.items()
        },
        "total_cpu_seconds": round(total, 2),
        "share_fetch_extraction": round((fetch + extraction) / total, 3) if total else None,
    }


def check_stored(kind: str, result: dict[str, Any], pages: int) -> None:
    """Every article stored: what passed both pipelines is in the database, the corpus
    pipeline dropped nothing, and on the mix (every page an article) nothing was dropped."""
    stats = result["stats"]
    scraped = stats.get("item_scraped_count", 0)
    corpus_drops = sum(stats.get(f"item_dropped_reasons_count/{r}", 0) for r in CORPUS_DROPS)
    assert corpus_drops == 0, f"{kind}: {corpus_drops} articles dropped by the corpus pipeline"
    assert result["stored"] == scraped, f"{kind}: {result['stored']} stored of {scraped}"
    if kind == "mix":
        assert result["stored"] == pages, f"mix: {result['stored']} stored of {pages} articles"


def run(args: argparse.Namespace) -> dict[str, Any]:
    from newsspider.storage import engine_for
    from newsspider.storage.fts import pending_rows

    work = Path(args.work)
    common = dict(args.set)
    runs: list[tuple[str, str, dict[str, Any]]] = [
        ("bare", "bare", common),
        ("full", "full", common),
    ]
    runs += [(name, "full", {**common, **settings}) for name, settings in args.variant]
    archives: list[dict[str, Any]] = []
    for kind in args.archives:
        archive = build(args, kind)
        best: dict[str, dict[str, Any]] = {}
        for r in range(args.repeat):
            for name, mode, settings in runs:
                db = work / f"{kind}-{name}.db"
                cfg = crawl_config(
                    f"{kind}-{name}-{r}",
                    archive,
                    mode,
                    database=db if mode == "full" else None,
                    concurrency=args.concurrency,
                    settings=settings,
                    profile=args.profile,
                    stages=True,
                )
                result = run_child(cfg, work)
                if mode == "full":  # the invariants: every article stored, and indexed
                    engine = engine_for(f"sqlite:///{db}")
                    result["index_pending"] = pending_rows(engine)
                    with sqlite3.connect(db) as con:
                        result["stored"] = con.execute("SELECT count(*) FROM articles").fetchone()[
                            0
                        ]
                    engine.dispose()
                    check_stored(kind, result, archive.pages)
                print(
                    f"  {kind} {name} #{r + 1}: {result['pages']} pages in {result['seconds']} s "
                    f"= {result['pages_per_s']} pages/s, CPU {result['cpu_seconds']} s + "
                    f"{result['children_cpu_seconds']} s",
                    file=sys.stderr,
                )
                result["name"] = name
                if name not in best or (result["pages_per_s"] or 0) > (
                    best[name]["pages_per_s"] or 0
                ):
                    best[name] = result
        bare = best["bare"]["pages_per_s"] or 0
        for result in best.values():
            result["ratio_to_bare"] = (
                round((result["pages_per_s"] or 0) / bare, 3) if bare else None
            )
            if result["mode"] == "full":
                result["breakdown"] = stage_breakdown(best["bare"], result)
        share = best["full"]["breakdown"]["share_fetch_extraction"]
        entry = {
            "kind": kind,
            "archive": archive.summary(),
            "share": share,
            "share_target": SHARE_TARGET[kind],
            "share_met": (share or 0) >= SHARE_TARGET[kind],
            "ratio": best["full"]["ratio_to_bare"],
            "runs": list(best.values()),
        }
        if kind == "mix":
            entry["plan"] = plan_summary(mix_plan(archive.pages))
        archives.append(entry)
    return {
        "benchmark": "crawl_throughput",
        "machine": machine(),
        "concurrency": args.concurrency,
        "repeat": args.repeat,
        "archives": archives,
    }


def markdown(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        f"Machine: {m['nproc']} cores, {m['cpu']}, {m['ram_gib']} GiB RAM, Python {m['python']}; "
        f"concurrency {report['concurrency']}, best of {report['repeat']}.",
    ]
    for entry in report["archives"]:
        a = entry["archive"]
        lines += [
            "",
            f"### {entry['kind']}: {a['pages']} article pages over {a['sites']} site(s)",
            "",
            f"{a['article_mib']} MiB of HTML ({a['disk_mib']} MiB gzipped) from {a['pool_pages']} "
            f"saved pages, {a['per_page']} links per list page.",
        ]
        if entry.get("plan"):
            p = entry["plan"]
            lines.append(
                f"Plan: {p['stories']} stories, {p['stories_once']:.1%} of them once; "
                f"{p['pages_repeating_a_story']:.1%} of pages repeat a story; "
                f"{p['zh_pages']:.1%} of pages Chinese; copies per story {p['copies']}."
            )
        lines += [
            "",
            "| crawl | settings | pages | s | pages/s | vs bare | CPU s (crawl) | CPU s (workers) "
            "| peak RSS MiB | stored | dropped | not indexed after |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in entry["runs"]:
            stats = r["stats"]
            settings = ", ".join(f"{k}={v}" for k, v in r["settings"].items()) or "-"
            lines.append(
                f"| {r['name']} | {settings} | {r['pages']} | {r['seconds']} | "
                f"{r['pages_per_s']} | "
                f"{r['ratio_to_bare']:.0%} | {r['cpu_seconds']} | {r['children_cpu_seconds']} | "
                f"{r['peak_rss_mib']} | {r.get('stored', '-')} | "
                f"{stats.get('item_dropped_count', 0)} | {r.get('index_pending', '-')} |"
            )
        full = [r for r in entry["runs"] if r.get("breakdown")]
        lines += [
            "",
            "| CPU by stage | " + " | ".join(f"{r['name']} s | ms/page" for r in full) + " |",
            "|---|" + "---|---|" * len(full),
        ]
        for stage in full[0]["breakdown"]["cpu_seconds"]:
            cells = " | ".join(
                f"{r['breakdown']['cpu_seconds'][stage]} | "
                f"{r['breakdown']['ms_per_stored_page'][stage]}"
                for r in full
            )
            lines.append(f"| {stage} | {cells} |")
        cells = " | ".join(f"**{r['breakdown']['total_cpu_seconds']}** | " for r in full)
        lines.append(f"| total | {cells}|")
        shares = ", ".join(
            f"{r['name']} {r['breakdown']['share_fetch_extraction']:.1%}" for r in full
        )
        verdict = "met" if entry["share_met"] else "missed"
        lines += [
            "",
            f"fetch + extraction share of the crawl's CPU: {shares} "
            f"(full: target >= {entry['share_target']:.0%}, {verdict}); "
            f"full / bare pages/s = {entry['ratio']:.0%}.",
        ]
        for r in entry["runs"]:
            if r.get("profile"):
                lines.append(f"profile of {entry['kind']} {r['name']}: {r['profile']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_archive_arguments(parser, pages=5000, sites=1)
    parser.add_argument("--repeat", type=int, default=1, help="runs per mode, best kept")
    parser.add_argument(
        "--variant",
        type=_variant,
        action="append",
        default=[],
        metavar="NAME:SETTING=VALUE,...",
        help="an extra full crawl with these settings",
    )
    parser.add_argument(
        "--set",
        type=setting,
        action="append",
        default=[],
        metavar="SETTING=VALUE",
        help="a setting for every crawl, bare and full",
    )
    parser.add_argument(
        "--archives",
        type=lambda text: [a for a in text.split(",") if a],
        default=list(ARCHIVES),
        help="which archives, comma-separated: mix (the realistic mix), copies (ten copies "
        "of every page) (default: %(default)s)",
    )
    parser.add_argument(
        "--mix-sites", type=int, default=MIX_SITES, help="sites of the mix (%(default)s)"
    )
    parser.add_argument("--profile", action="store_true", help="run each crawl under cProfile")
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    return emit(args, run(args), markdown)


if __name__ == "__main__":
    main()
