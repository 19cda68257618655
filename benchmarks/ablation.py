"""Ablation of the best mode: each named improvement switched off alone.

Not a test. For every improvement documented in ``newsspider/extraction/best.py``
this runs the best mode without it over the labelled datasets and prints the
F1 / qualified % / title / date figures beside the full best mode and the
paper mode, so each improvement's contribution is a measured number.

    python benchmarks/ablation.py DATASETS_DIR [--datasets cwced-zh,cx163-zh,scrapinghub-en]
        [--only record_lines,edge_lines]

DATASETS_DIR is the folder holding the dataset folders (each with ``cases.jsonl``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.evaluation import evaluate, load_cases  # noqa: E402
from newsspider.extraction import best, blocks, extract_article  # noqa: E402

@contextlib.contextmanager
def patched(obj: object, **values: object) -> Iterator[None]:
    old = {k: getattr(obj, k) for k in values}
    for k, v in values.items():
        setattr(obj, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(obj, k, v)


def _split_without_links(marked, *, keep_links):
    return blocks.split_blocks(marked, keep_links=False)


ABLATIONS: dict[str, Callable[[], contextlib.AbstractContextManager]] = {
    "form_is_layout": lambda: patched(best, BEST_TYPE_I=blocks.TYPE_I, BEST_TYPE_II=blocks.TYPE_II),
    "noise_containers": lambda: patched(best, NOISE=None),
    "links_kept": lambda: patched(best, split_blocks=_split_without_links),
    "container": lambda: patched(best, container_region=lambda *a, **k: None),
    "inner_lines": lambda: patched(best, INNER_LINES=False),
    "duplicate_blocks": lambda: patched(best, MIN_DUPLICATE_CHARS=10**9),
    "title_line": lambda: patched(best, drop_title_line=lambda blockset, body, title: body),
    "edge_lines": lambda: patched(best, trim_edge_lines=lambda blockset, body, tz: body),
    "comment_sections": lambda: patched(best, COMMENT_SECTIONS=False),
    "repeated_lines": lambda: patched(best, REPEATED_LINES=False),
    "consent_dialogs": lambda: patched(best, CONSENT_DIALOGS=False),
    "hidden_elements": lambda: patched(best, HIDDEN_ELEMENTS=False),
    "player_controls": lambda: patched(best, PLAYER_CONTROLS=False),
    "related_sections": lambda: patched(best, RELATED_SECTIONS=False),
    "slideshows": lambda: patched(best, SLIDESHOWS=False),
    "article_anchor": lambda: patched(best, ARTICLE_ANCHOR=False),
    "anchor_trim": lambda: patched(best, ANCHOR_TRIM=False),
    "headline_anchor": lambda: patched(best, HEADLINE_ANCHOR=False),
    "link_blocks": lambda: patched(best, LINK_BLOCKS=False),
    "structure_lines": lambda: patched(best, STRUCTURE_LINES=False),
    "ruby_annotations": lambda: patched(best, RUBY_ANNOTATIONS=False),
    "math_sources": lambda: patched(best, MATH_SOURCES=False),
    "invisible_chars": lambda: patched(best, INVISIBLE_CHARS=False),
    "noscript_bodies": lambda: patched(best, NOSCRIPT_BODIES=False),
    "split_bodies": lambda: patched(best, SPLIT_BODIES=False),
    "lead_runs": lambda: patched(best, LEAD_RUNS=False),
    "first_post": lambda: patched(best, FIRST_POST=False),
    "comment_threads": lambda: patched(best, COMMENT_THREADS=False),
    "next_candidate": lambda: patched(best, NEXT_CANDIDATE=False),
    "leftover_lines": lambda: patched(best, LEFTOVER_LINES=False),
    "record_lines": lambda: patched(best, RECORD_LINES=False),
}
# Rules that change dates or titles only (no column of the F1 table; see docs/improvements.md).
DATE_ABLATIONS = {
    "date_forms": lambda: patched(best, DATE_FORMS=False),
    "page_zone": lambda: patched(best, PAGE_ZONE=False),
    "site_suffix_titles": lambda: patched(best, SITE_SUFFIX_TITLES=False),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets_dir", type=Path, help="folder holding the dataset folders")
    parser.add_argument("--datasets", default="cwced-zh,cx163-zh,scrapinghub-en")
    parser.add_argument(
        "--only", default=None, help="the improvements to switch off, comma-separated (default: all)"
    )
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    names = args.datasets.split(",")
    cases = {n: list(load_cases(args.datasets_dir / n)) for n in names}
    rows = []

    def run(label: str, mode: str = "best") -> None:
        cells = []
        for n in names:
            r = evaluate(cases[n], lambda raw, url: extract_article(raw, url, mode=mode))
            cells.append(f"{r.f1:.3f} / {100 * r.qualified:.1f}")
        rows.append(f"| {label} | " + " | ".join(cells) + " |")

    run("best (all improvements)")
    for name, ablate in ABLATIONS.items():
        if only is not None and name not in only:
            continue
        with ablate():
            run(f"best without `{name}`")
    run("paper", mode="paper")
    print("| variant | " + " | ".join(f"{n} F1 / qualified %" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
