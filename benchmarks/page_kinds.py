"""Page kinds over saved pages: the confusion of ``newsspider.extraction.kinds`` on real pages.

Not a test. Every page of every dataset folder is extracted with the default method (which
decides the kind, :mod:`newsspider.extraction.kinds`) and its kind counted against what the
dataset holds: ``list-pages`` holds list pages (channel, rolling, search and forum lists), every
other dataset articles. Prints per dataset the kinds found, then the confusion and the
false-kind rate of the articles (any kind but ``article``) and of the list pages (any kind
but ``list`` or ``topic``, both followed and never stored), and with ``--show`` every page
whose kind is not the expected one with its signals.

    python benchmarks/page_kinds.py DATASETS_DIR [--datasets list-pages,cx163-zh] [--show]
        [--time]

``--time`` also prints the CPU milliseconds a page of reading the signals
(:func:`~newsspider.extraction.kinds.page_signals`, on pages parsed and scanned beforehand,
the best of three passes) against the whole extraction of the same pages.

DATASETS_DIR is the folder holding the dataset folders (each with ``cases.jsonl``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.evaluation import load_cases  # noqa: E402
from newsspider.extraction import ExtractionError, extract_article  # noqa: E402
from newsspider.extraction.kinds import KINDS, page_signals, signals_summary  # noqa: E402
from newsspider.extraction.page import load_page  # noqa: E402
from newsspider.extraction.record import scan_page  # noqa: E402

#: The dataset whose pages are lists; every other dataset holds articles.
LIST_DATASET = "list-pages"
#: The kinds a list page may rightly get (both are followed for links, never stored).
LINK_KINDS = ("list", "topic")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets_dir", type=Path)
    parser.add_argument("--datasets", default="", help="comma list (default: every folder)")
    parser.add_argument("--show", action="store_true", help="print every page of a wrong kind")
    parser.add_argument("--time", action="store_true", help="CPU ms a page of the signals")
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
    if args.time:
        timing([c for name in names for c in load_cases(args.datasets_dir / name)])
    return 0


def timing(cases: list) -> None:
    """CPU ms a page: the signals alone (pages parsed and scanned before), the extraction."""
    pages = [(load_page(c.html, url=c.url), c.url) for c in cases]
    pages = [(p, url, scan_page(p.root, p.markup)) for p, url in pages if p.root is not None]
    passes = []
    for _ in range(3):
        start = time.process_time()
        for page, url, scan in pages:
            page_signals(page.root, url, scan)
        passes.append(time.process_time() - start)
    start = time.process_time()
    for c in cases:
        try:
            extract_article(c.html, c.url)
        except ExtractionError:
            pass
    whole = time.process_time() - start
    n = max(1, len(pages))
    print(f"signals {min(passes) / n * 1000:.2f} ms a page, extraction {whole / n * 1000:.2f} ms")


if __name__ == "__main__":
    raise SystemExit(main())
