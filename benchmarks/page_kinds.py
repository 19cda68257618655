"""Page kinds over saved pages: the confusion of ``newsspider.extraction.kinds`` on real pages.

Not a test. Every page of every dataset folder is extracted with the default method (which
decides the kind, :mod:`newsspider.extraction.kinds`) and its kind counted against what the
dataset holds: ``list-pages`` holds list pages (channel, rolling, search and forum lists), every
other dataset articles. Prints per dataset the kinds found, then the confusion and the
false-kind rate of the articles (any kind but ``article``) and of the list pages (any kind
but ``list`` or ``topic``, both followed and never stored), and with ``--show`` every page
whose kind is not the expected one with its signals.

    python benchmarks/page_kinds.py DATASETS_DIR [--datasets list-pages,cx163-zh] [--show]

DATASETS_DIR is the folder holding the dataset folders (each with ``cases.jsonl``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.evaluation import load_cases  # noqa: E402
from newsspider.extraction import ExtractionError, extract_article  # noqa: E402
from newsspider.extraction.kinds import KINDS, page_signals, signals_summary  # noqa: E402
from newsspider.extraction.page import load_page  # noqa: E402

#: The dataset whose pages are lists; every other dataset holds articles.
LIST_DATASET = "list-pages"
#: The kinds a list page may rightly get (both are followed for links, never stored).
LINK_KINDS = ("list", "topic")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets_dir", type=Path)
    parser.add_argument("--datasets", default="", help="comma list (default: every folder)")
    parser.add_argument("--show", action="store_true", help="print every page of a wrong kind")
    args = parser.parse_args()
    names = [n for n in args.datasets.split(",") if n] or sorted(
        p.name for p in args.datasets_dir.iterdir() if (p / "cases.jsonl").is_file()
    )
    confusion: dict[str, Counter[str]] = {"article": Counter(), "list": Counter()}
    wrong: list[tuple[str, str, str, str]] = []
    for name in names:
        expected = "list" if name == LIST_DATASET else "article"
        found: Counter[str] = Counter()
        for case in load_cases(args.datasets_dir / name):
            try:
                kind = extract_article(case.html, case.url).kind
            except ExtractionError:
                kind = "not-html"
            found[kind] += 1
            confusion[expected][kind] += 1
            right = kind in LINK_KINDS if expected == "list" else kind == "article"
            if not right:
                page = load_page(case.html, url=case.url)
                signals = page_signals(page.root, case.url) if page.root is not None else None
                detail = str(signals_summary(signals)) if signals is not None else ""
                wrong.append((name, case.id, kind, detail))
        kinds = ", ".join(f"{k} {n}" for k, n in found.most_common())
        print(f"{name:28} {sum(found.values()):4} pages: {kinds}")
    print()
    header = "expected   " + " ".join(f"{k:>8}" for k in KINDS)
    print(header)
    for expected, counts in confusion.items():
        print(f"{expected:10} " + " ".join(f"{counts.get(k, 0):>8}" for k in KINDS))
    for expected, counts in confusion.items():
        total = sum(counts.values())
        good = sum(counts[k] for k in LINK_KINDS) if expected == "list" else counts["article"]
        if total:
            rate = (total - good) / total
            print(f"{expected} pages of another kind: {total - good}/{total} ({rate:.1%})")
    if args.show:
        for name, case_id, kind, detail in wrong:
            print(f"{name}/{case_id}: {kind} {detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
