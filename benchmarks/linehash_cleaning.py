"""What the Li & Jiang line-hash table removes from real pages (not a test).

Runs extraction (best and paper mode) over a dataset in its case order, feeds
each body to the line table (Li & Jiang 2012 §2.2, L = 50, our once-per-page
improvement on), and counts the lines it drops, split into boilerplate (not in
the page's gold body) and body lines lost (in the gold body), against the
extracted body before cleaning.

    python benchmarks/linehash_cleaning.py [DATASET_DIR ...]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.evaluation import load_cases  # noqa: E402
from newsspider.extraction import extract_article  # noqa: E402
from newsspider.extraction.linehash import LineTable, split_lines  # noqa: E402


def measure(dataset: Path, mode: str, *, repeat: int = 1) -> dict:
    cases = [c for c in load_cases(dataset)]
    table = LineTable()
    lines_in = removed = lost = 0
    removed_lines: Counter[str] = Counter()
    for _ in range(repeat):
        for case in cases:
            body = extract_article(case.html, case.url, mode=mode).text
            result = table.clean(body)
            lines_in += len(split_lines(body))
            gold = set(split_lines(case.body or ""))
            removed += result.dropped
            for line in result.dropped_lines:
                removed_lines[line] += 1
                if line in gold:
                    lost += 1
    return {
        "pages": len(cases) * repeat,
        "lines": lines_in,
        "removed": removed,
        "body_lost": lost,
        "boilerplate_removed": removed - lost,
        "top": removed_lines.most_common(8),
        "RC": table.RC,
        "table_rows": len(table.LC),
    }


def main() -> None:
    dirs = [Path(a) for a in sys.argv[1:]] or [REPO.parent / "shared" / "datasets" / "cx163-zh"]
    print("| dataset | mode | pages | body lines before | removed | boilerplate | body lost |")
    print("|---|---|---|---|---|---|---|")
    tops = []
    for d in dirs:
        for mode in ("best", "paper"):
            m = measure(d, mode)
            print(
                f"| {d.name} | {mode} | {m['pages']} | {m['lines']} | {m['removed']} "
                f"| {m['boilerplate_removed']} | {m['body_lost']} |"
            )
            tops.append((d.name, mode, m["top"]))
    for name, mode, top in tops:
        print(f"\nmost removed ({name}, {mode}):")
        for line, n in top:
            print(f"  {n:3d}  {line[:60]}")


if __name__ == "__main__":
    main()
