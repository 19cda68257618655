"""Speed and quality of the ``visual`` methods (Jing & Zuo VL_PS) on the labelled datasets.

Not a test. Renders and classifies every page of each dataset in headless
Chromium (one browser for the whole run, a new tab per page, JavaScript off,
every request blocked) with the visual methods of the registry, and prints
per dataset and method: seconds per page (median, p90, max: the whole
``extract_*`` call, i.e. decode + parse + render + measure + classify +
text), F1 / qualified % / excellent % (``newsspider.evaluation``), title and
date accuracy, and errors. Block statistics rows are printed beside them for
reference. Afterwards it checks that no Chromium process is left.

    python benchmarks/visual_speed.py DATASETS_DIR [--datasets cx163-zh,cwced-zh]
        [--methods visual,visual+blockstats,visual+blockstats-best,blockstats-paper]
        [--json report.json]

``--methods`` takes names of ``newsspider/extraction/registry.py``. The visual
methods get the run's one renderer. The summary checks the median seconds of a
visual page against ``LIMIT_SECONDS``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.evaluation import DatasetReport, evaluate, load_cases  # noqa: E402
from newsspider.extraction.render import (  # noqa: E402
    Renderer,
    chromium_processes,
    unavailable_reason,
)
from newsspider.extraction.registry import get_extractor, registered  # noqa: E402

LIMIT_SECONDS = 2.0


def extractor(method: str, renderer: Renderer) -> Callable[[bytes, str | None], Any]:
    """The registry's ``method``; a method that renders gets ``renderer``."""
    try:
        params = {"renderer": renderer} if registered(method).renders else {}
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    fn = get_extractor(method)
    return lambda raw, url: fn(raw, url, **params)


def seconds_summary(report: DatasetReport) -> dict[str, float]:
    times = sorted(c.seconds for c in report.cases)
    if not times:
        return {"median": 0.0, "p90": 0.0, "max": 0.0, "mean": 0.0}
    p90 = statistics.quantiles(times, n=10, method="inclusive")[-1] if len(times) > 1 else times[0]
    return {
        "median": statistics.median(times),
        "p90": p90,
        "max": times[-1],
        "mean": statistics.fmean(times),
    }


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets_dir", type=Path, help="folder holding the dataset folders")
    parser.add_argument("--datasets", default="cx163-zh,cwced-zh")
    parser.add_argument(
        "--methods",
        default="visual,visual+blockstats,visual+blockstats-best,blockstats-paper,blockstats",
    )
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot render: {reason}")

    before = set(chromium_processes())
    rows: list[dict[str, Any]] = []
    with Renderer() as renderer:
        t0 = time.perf_counter()
        renderer.layout("<p>warm-up</p>")
        launch = time.perf_counter() - t0
        print(f"browser start + first page: {launch:.2f} s (not counted below)")
        for name in args.datasets.split(","):
            cases = list(load_cases(args.datasets_dir / name))
            for method in args.methods.split(","):
                report = evaluate(cases, extractor(method, renderer), name=method, dataset=name)
                row = {
                    "dataset": name,
                    "method": method,
                    "pages": report.pages,
                    "f1": report.f1,
                    "qualified": report.qualified,
                    "excellent": report.excellent,
                    "title_accuracy": report.title_accuracy,
                    "title_n": report.title_n,
                    "date_accuracy": report.date_accuracy,
                    "date_n": report.date_n,
                    "errors": [f"{e.case_id}: {e.error}: {e.message}" for e in report.errors],
                    "seconds": seconds_summary(report),
                }
                rows.append(row)
                s = row["seconds"]
                print(
                    f"{name:>10} {method:<24} median {s['median']:.3f} s  p90 {s['p90']:.3f} s"
                    f"  max {s['max']:.3f} s  F1 {report.f1:.3f}  qualified {pct(report.qualified)}"
                    f"  errors {len(report.errors)}",
                    flush=True,
                )
    left = set(chromium_processes()) - before
    print()
    print(
        "| dataset | method | s/page median | p90 | max | F1 | qualified % | excellent % "
        "| title % (n) | date % (n) | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["seconds"]
        title = f"{pct(r['title_accuracy'])} ({r['title_n']})" if r["title_n"] else "-"
        date = f"{pct(r['date_accuracy'])} ({r['date_n']})" if r["date_n"] else "-"
        print(
            f"| {r['dataset']} | {r['method']} | {s['median']:.3f} | {s['p90']:.3f} "
            f"| {s['max']:.3f} | {r['f1']:.3f} | {pct(r['qualified'])} | {pct(r['excellent'])} "
            f"| {title} | {date} | {len(r['errors'])} |"
        )
    visual = [r for r in rows if registered(r["method"]).renders]
    worst = max((r["seconds"]["median"] for r in visual), default=0.0)
    print()
    print(
        f"median seconds per page, slowest visual method: {worst:.3f} s "
        f"({'under' if worst < LIMIT_SECONDS else 'OVER'} the {LIMIT_SECONDS:g} s limit); "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    )
    print(f"Chromium processes left after closing: {len(left)}")
    for r in rows:
        for e in r["errors"]:
            print(f"error: {r['dataset']} {r['method']}: {e}")
    if args.json:
        args.json.write_text(
            json.dumps({"launch_seconds": launch, "rows": rows, "left": sorted(left)}, indent=1)
        )
    if left:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
