"""What the multi-page test costs a crawl's main process, and what it finds, on saved pages.

Not a test. Every saved page with a URL in the datasets goes through what
``NewsSpider.parse_article`` does before it yields an article: the byte test
(:func:`~newsspider.extraction.pager.might_have_pager`), and for the pages that pass it an
lxml parse and :func:`~newsspider.extraction.pager.next_page_url`. Prints how many pages pass
and how many have a next page (each named, with its 全文 link when it has one), and the CPU
time a page of each step (the best of ``--repeat`` passes, garbage collector off), beside a
full lxml parse of every page, which is what the byte test spares the pages it stops.
Then, for each outlet of ``tests/fixtures/multipage``, the token F1 of its pages' bodies
(the default method) joined, against the story's text.

    python benchmarks/pager_cost.py DATASETS_DIR [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lxml import html  # noqa: E402

from newsspider.evaluation import score_body  # noqa: E402
from newsspider.extraction.article import extract_article  # noqa: E402
from newsspider.extraction.pager import (  # noqa: E402
    join_pages,
    might_have_pager,
    next_page_url,
    single_page_url,
)


def _pages(datasets: Path) -> list[tuple[str, bytes]]:
    out = []
    for folder in sorted(p for p in datasets.iterdir() if (p / "cases.jsonl").is_file()):
        for case in map(json.loads, (folder / "cases.jsonl").open(encoding="utf-8")):
            if case.get("url"):
                out.append((case["url"], (folder / case["html_file"]).read_bytes()))
    return out


def _best(repeat: int, step) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        step()
        times.append(time.process_time() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    pages = _pages(args.datasets)
    passed = [(u, b) for u, b in pages if might_have_pager(b, u)]
    found = []
    for url, body in passed:
        tree = html.fromstring(body)
        if (following := next_page_url(tree, url, seen=[url])) is not None:
            found.append((url, following, single_page_url(tree, url)))
    gc.disable()
    byte_test = _best(args.repeat, lambda: [might_have_pager(b, u) for u, b in pages])
    search = _best(
        args.repeat,
        lambda: [next_page_url(html.fromstring(b), u, seen=[u]) for u, b in passed],
    )
    parse = _best(args.repeat, lambda: [html.fromstring(b) for _, b in pages])
    gc.enable()
    kib = sum(len(b) for _, b in pages) / len(pages) / 1024
    print(f"{len(pages)} pages with a URL ({kib:.0f} KiB on average)")
    print(f"passed the byte test: {len(passed)}; with a next page: {len(found)}")
    for url, following, single in found:
        print(f"  {url} -> {following}" + (f" (全文: {single})" if single else ""))
    print(f"byte test: {1000 * byte_test / len(pages):.2f} ms a page (every page)")
    print(f"parse and search: {1000 * search / max(len(passed), 1):.2f} ms a page (those passed)")
    print(f"lxml parse alone: {1000 * parse / len(pages):.2f} ms a page (every page)")
    fixtures = REPO / "tests" / "fixtures" / "multipage"
    for outlet in sorted(p for p in fixtures.iterdir() if (p / "pages.json").is_file()):
        meta = json.loads((outlet / "pages.json").read_text("utf-8"))
        texts = [
            extract_article((outlet / page["file"]).read_bytes(), page["url"]).text
            for page in meta["pages"]
        ]
        gold = "\n".join(page["text"] for page in meta["pages"])
        f1 = score_body(join_pages(texts), gold).f1
        print(f"fixture {outlet.name}: {len(texts)} pages joined, token F1 {f1:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
