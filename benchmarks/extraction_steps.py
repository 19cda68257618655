"""Where the best mode's time per page goes, step by step, on one dataset.

    python benchmarks/extraction_steps.py "$DATASETS/cwced-zh"

Extracts every page of the folder once to warm up, then once more with a wall-clock timer
around each step of the best mode (decoding, lxml's parse, the block-marking XSLT, the cut
into blocks, the statistics, the body selection, the metadata, the anchors, the dates) and
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

from newsspider.extraction import best, extract_article  # noqa: E402
from newsspider.extraction import page as page_module  # noqa: E402

#: module, then the names of its functions that are steps of the best mode
STEPS: list[tuple[Any, tuple[str, ...]]] = [
    (page_module, ("decode_html", "parse_html")),
    (
        best,
        (
            "page_language",
            "page_metadata",
            "json_ld_article_body",
            "noscript_markup",
            "find_anchor",
            "find_headline",
            "mark_blocks",
            "split_blocks",
            "slideshow_elements",
            "blank_noise_containers",
            "textnums",
            "block_statistics",
            "anchored_textnum",
            "first_post",
            "paper_title",
            "best_title",
            "select_body",
            "drop_title_line",
            "trim_edge_lines",
            "visible_text",
            "best_published",
        ),
    ),
]


def timed(spent: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="a dataset folder (its html/ is read)")
    args = parser.parse_args()
    pages = [p.read_bytes() for p in sorted((args.dataset / "html").glob("*")) if p.is_file()]
    if not pages:
        raise SystemExit(f"no pages under {args.dataset / 'html'}")
    for raw in pages:
        extract_article(raw)
    start = time.perf_counter()
    for raw in pages:
        lxml.html.document_fromstring(raw).text_content()
    floor = time.perf_counter() - start

    spent: dict[str, float] = {}
    for module, names in STEPS:
        for name in names:
            setattr(module, name, timed(spent, name, getattr(module, name)))
    start = time.perf_counter()
    for raw in pages:
        extract_article(raw)
    total = time.perf_counter() - start

    n = len(pages)
    print(f"{args.dataset.name}: {n} pages, {1000 * total / n:.2f} ms a page with timers, "
          f"floor {1000 * floor / n:.2f} ms")
    for name, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {name:24} {1000 * seconds / n:6.3f} ms")


if __name__ == "__main__":
    main()
