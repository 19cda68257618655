"""Ablation of the best mode: each rule of the registry switched off alone.

Not a test. For every rule of ``newsspider.extraction.rules.RULES`` (in the order the
method applies them) this runs the best mode with that rule's switch off over the
labelled datasets and prints, beside the full best mode and the paper mode, F1 /
qualified % (and date % where the set has date gold, exact authors % where it has author
gold: the byline rules change only those) per dataset, and the time: ms a page
over all the datasets' pages with the rule off, and the rule's cost (ms a page with it on
minus with it off, in passes that alternate the two). Times are the process's CPU time
(steadier than the wall clock on a shared machine), the best of ``--repeat`` passes over
every page after the scoring pass has warmed the caches, garbage collector off; a rule's
cost is read against the spread of the full mode's time printed under the table.

    python benchmarks/ablation.py DATASETS_DIR [--datasets cwced-zh,cx163-zh,scrapinghub-en]
        [--only record_lines,edge_lines] [--repeat 3]

DATASETS_DIR is the folder holding the dataset folders (each with ``cases.jsonl``).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
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
    if r.author_n:
        cell += f" / authors {100 * (r.author_accuracy or 0):.1f}"
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
    raw = [(c.html, c.url) for n in names for c in cases[n]]

    def quality(mode: str = "best") -> list[str]:
        def extract(html: bytes, url: str | None) -> object:
            return extract_article(html, url, mode=mode)

        return [_cell(evaluate(cases[n], extract)) for n in names]

    def one_pass(mode: str = "best") -> float:
        """Seconds of this process's CPU time for one pass over every page (steadier than
        the wall clock on a shared machine), garbage collector off."""
        gc.disable()
        try:
            start = time.process_time()
            for html, url in raw:
                extract_article(html, url, mode=mode)
            return time.process_time() - start
        finally:
            gc.enable()

    full_cells = quality()
    spread: list[float] = []
    for rule in RULES:
        if only is not None and rule.name not in only:
            continue
        with rule.off():
            cells = quality()
        # paired passes, alternating with the full mode: the best of --repeat each
        on = off = float("inf")
        for _ in range(args.repeat):
            on = min(on, one_pass())
            with rule.off():
                off = min(off, one_pass())
        spread.append(1000 * on / pages)
        rows.append(
            (f"best without `{rule.name}`", cells, 1000 * off / pages, 1000 * (on - off) / pages)
        )
    full_ms = min(1000 * min(one_pass() for _ in range(args.repeat)) / pages, *spread)
    rows.insert(0, ("best (all rules)", full_cells, full_ms, None))
    paper = min(one_pass("paper") for _ in range(args.repeat))
    rows.append(("paper", quality("paper"), 1000 * paper / pages, None))
    print(
        "| variant | "
        + " | ".join(f"{n} F1 / qualified % (/ date %) (/ authors %)" for n in names)
        + " | ms a page | cost ms a page |"
    )
    print("|---|" + "---|" * (len(names) + 2))
    for label, cells, ms, cost in rows:
        shown = "-" if cost is None else f"{cost:+.3f}"
        print(f"| {label} | " + " | ".join(cells) + f" | {ms:.3f} | {shown} |")
    if spread:
        print(
            f"\n{pages} pages; the full mode's time, measured beside each rule, ranged "
            f"{min(spread):.3f}-{max(spread):.3f} ms a page (the spread a cost is read against)."
        )


if __name__ == "__main__":
    main()
