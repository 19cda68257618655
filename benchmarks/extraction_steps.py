"""Where the best mode's time per page goes, step by step, on one dataset.

    python benchmarks/extraction_steps.py "$DATASETS/cwced-zh" [--clock cpu]

Extracts every page of the folder once to warm up, then once more with a wall-clock timer
around each step of the best mode (decoding, lxml's parse, the metadata and record fields,
the block-marking XSLT, the cut into blocks, the statistics, and the code of every rule of
the registry, ``newsspider.extraction.rules.RULES``, labelled with the rule) and
prints milliseconds per page for each, with the bare-lxml floor of
``extraction_speed.py`` (parse and ``text_content`` of the same bytes) for scale. Nested
steps are counted in their own line and in their caller's, so the lines do not sum to the
total; timers cost a few microseconds a call.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import lxml.html  # noqa: E402

from newsspider.extraction import best, blocks, blockstats, extract_article  # noqa: E402
from newsspider.extraction import method as method_module  # noqa: E402
from newsspider.extraction import page as page_module  # noqa: E402
from newsspider.extraction import record as record_module  # noqa: E402
from newsspider.extraction.rules import RULES  # noqa: E402

#: The pipeline's own steps (module, then function names): decoding and parsing, the
#: metadata and record fields, the blocks and the statistics. The rules' steps are added
#: from the registry (each rule's ``code``).
PIPELINE: list[tuple[Any, tuple[str, ...]]] = [
    (page_module, ("decode_html", "parse_html")),
    (method_module, ("scan_page", "detect_language", "detect_script")),
    (best, ("page_metadata", "json_ld_article_body", "paper_title", "best_title")),
    (blocks, ("mark_blocks", "split_blocks")),
    (blockstats, ("block_statistics",)),
    (record_module, ("page_record",)),
    (best, ("record_around",)),
]


def steps() -> list[tuple[Any, str, str]]:
    """(module, function name, label) of every step timed: the pipeline's, then each rule's
    code in the registry's order (a function shared by rules is timed once, labelled with
    the first rule that names it)."""
    out = [(module, name, name) for module, names in PIPELINE for name in names]
    seen = {name for _, name, _ in out}
    for rule in RULES:
        for name in rule.code:
            if name not in seen:
                seen.add(name)
                out.append((rule.module, name, f"{name} ({rule.name})"))
    return out


#: the clock of every timer: the wall clock, or (``--clock cpu``) this process's CPU time,
#: steadier on a machine whose cores other processes share
CLOCK: Callable[[], float] = time.perf_counter


def timed(spent: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = CLOCK()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + CLOCK() - start

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="a dataset folder (its html/ is read)")
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall", help="wall clock or CPU time"
    )
    args = parser.parse_args()
    global CLOCK
    if args.clock == "cpu":
        CLOCK = time.process_time
    pages = [p.read_bytes() for p in sorted((args.dataset / "html").glob("*")) if p.is_file()]
    if not pages:
        raise SystemExit(f"no pages under {args.dataset / 'html'}")
    for raw in pages:
        extract_article(raw)
    start = CLOCK()
    for raw in pages:
        lxml.html.document_fromstring(raw).text_content()
    floor = CLOCK() - start

    spent: dict[str, float] = {}
    for module, name, label in steps():
        original = getattr(module, name)
        wrapper = timed(spent, label, original)
        # the function is called through its own module and through every module that
        # imported it by name (the pipeline, the method, the blocks' callers)
        for holder in (module, best, method_module, blocks, blockstats, record_module):
            if getattr(holder, name, None) is original:
                setattr(holder, name, wrapper)
    start = CLOCK()
    for raw in pages:
        extract_article(raw)
    total = CLOCK() - start

    n = len(pages)
    print(
        f"{args.dataset.name}: {n} pages, {1000 * total / n:.2f} ms a page with timers, "
        f"floor {1000 * floor / n:.2f} ms"
    )
    for name, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {name:40} {1000 * seconds / n:6.3f} ms")


if __name__ == "__main__":
    main()
