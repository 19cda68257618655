"""Ablation of the best mode: each rule of the registry switched off alone.

Not a test. For every rule of ``newsspider.extraction.rules.RULES`` (in the order the
method applies them) this runs the best mode with that rule's switch off over the
labelled datasets and prints, beside the full best mode and the paper mode, F1 /
qualified % (and date % where the set has date gold) per dataset, and the time: ms a page
over all the datasets' pages with the rule off, and the rule's cost (ms a page with it on
minus with it off; the best of ``--repeat`` timed passes after a warm-up, garbage
collector off, so a rule's cost is read against the run-to-run spread printed under the
table).

    python benchmarks/ablation.py DATASETS_DIR [--datasets cwced-zh,cx163-zh,scrapinghub-en]
        [--only record_lines,edge_lines] [--repeat 3]

DATASETS_DIR is the folder holding the dataset folders (each with ``cases.jsonl``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.evaluation import DatasetReport, evaluate, load_cases  # noqa: E402
from newsspider.extraction import extract_article  # noqa: E402
from newsspider.extraction.rules import RULES  # noqa: E402


def switches() -> dict[str, Callable[[], AbstractContextManager[None]]]:
    """Every rule's name and the context that switches it off, in the registry's order."""
    return {r.name: r.off for r in RULES}


def _cell(r: DatasetReport) -> str:
    cell = f"{r.f1:.3f} / {100 * r.qualified:.1f}"
    if r.date_n:
        cell += f" / {100 * (r.date_accuracy or 0):.1f}"
    return cell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets_dir", type=Path, help="folder holding the dataset folders")
    parser.add_argument("--datasets", default="cwced-zh,cx163-zh,scrapinghub-en")
    parser.add_argument(
        "--only", default=None, help="the rules to switch off, comma-separated (default: all)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed passes (best kept)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if only is not None and (unknown := only - {r.name for r in RULES}):
        raise SystemExit(f"no rule {', '.join(sorted(unknown))}")
    names = args.datasets.split(",")
    cases = {n: list(load_cases(args.datasets_dir / n)) for n in names}
    pages = sum(len(c) for c in cases.values())
    rows = []

    def run(label: str, mode: str = "best") -> float:
        cells, seconds = [], 0.0
        for n in names:
            r = evaluate(
                cases[n],
                lambda raw, url: extract_article(raw, url, mode=mode),
                repeat=args.repeat,
                warmup=True,
                disable_gc=True,
            )
            cells.append(_cell(r))
            seconds += r.seconds
        ms = 1000 * seconds / pages
        rows.append((label, cells, ms))
        return ms

    full = run("best (all rules)")
    for rule in RULES:
        if only is not None and rule.name not in only:
            continue
        with rule.off():
            run(f"best without `{rule.name}`")
    again = run("best (all rules), again")
    run("paper", mode="paper")
    print(
        "| variant | "
        + " | ".join(f"{n} F1 / qualified % (/ date %)" for n in names)
        + " | ms a page | cost ms |"
    )
    print("|---|" + "---|" * (len(names) + 2))
    for label, cells, ms in rows:
        cost = f"{full - ms:+.3f}" if label.startswith("best without") else "-"
        print(f"| {label} | " + " | ".join(cells) + f" | {ms:.3f} | {cost} |")
    print(
        f"\n{pages} pages; the full best mode's two runs differ by {abs(full - again):.3f} ms a "
        "page (the spread a cost is read against)."
    )


if __name__ == "__main__":
    main()
