"""Pinned quality floors on ../shared/datasets (skipped cleanly when absent).

The floors are a little under what `scrapy evaluate` measured when they were
set (README, "Extraction quality"); a change that drops below one fails here.
They were measured on whole datasets, never tuned to single pages.
"""

import json

import pytest

from newsspider.evaluation import evaluate, pooled_accuracy
from newsspider.extraction import ExtractionError, extract_article

# dataset, mode: (F1, qualified, title accuracy, date accuracy) floors
FLOORS = {
    ("cwced-zh", "paper"): (0.76, 0.30, None, None),
    ("cwced-zh", "best"): (0.96, 0.75, None, 0.91),
    ("cx163-zh", "paper"): (0.95, 0.80, 0.95, None),
    ("cx163-zh", "best"): (0.98, 0.92, 0.95, 0.98),
    ("scrapinghub-en", "best"): (0.96, 0.60, None, None),
    ("readability-all", "best"): (0.945, 0.65, None, None),
    ("readability-fixtures-zh", "best"): (0.98, 0.70, None, None),
    # measured 0.942 / 33.1 % / 115 of 139 titles / 134 of 139 dates (python -m pytest
    # tests/test_dataset_quality.py; README's evaluation table): titles of ~100 publishers
    # in 20+ languages, a set the title rules were never tuned on
    ("fundus-multi", "best"): (0.93, 0.30, 0.80, 0.95),
    # measured 0.896 / 69.0 %: Chinese portal pages of opendatalab's magic-html benchmark
    ("magic-zh", "best"): (0.88, 0.65, None, None),
}


@pytest.mark.parametrize(("name", "mode"), sorted(FLOORS))
def test_quality_floor(datasets, name, mode):
    report = evaluate(datasets / name, lambda raw, url: extract_article(raw, url, mode=mode))
    f1, qualified, title, date = FLOORS[name, mode]
    assert not report.errors
    assert report.f1 >= f1
    assert report.qualified >= qualified
    if title is not None:
        assert report.title_accuracy >= title
    if date is not None:
        assert report.date_accuracy >= date


def test_no_real_page_of_readability_all_is_missed(datasets):
    """Every page of mozilla/readability's set that is not one of its hand-made unit tests
    (``notes`` say "synthetic") scores F1 0.5 or more."""
    folder = datasets / "readability-all"
    if not folder.is_dir():
        pytest.skip("readability-all is absent")
    lines = (folder / "cases.jsonl").read_text("utf-8").splitlines()
    synthetic = {c["id"] for c in map(json.loads, lines) if "synthetic" in (c.get("notes") or "")}
    report = evaluate(folder, extract_article)
    low = [
        (c.id, c.f1)
        for c in report.cases
        if c.id not in synthetic and c.f1 is not None and c.f1 < 0.5
    ]
    assert len(report.cases) - len(synthetic) >= 90
    assert not low


def test_date_accuracy_pooled_over_every_page_with_date_gold(datasets):
    """A date right on 96% of the pages whose gold has one, all labelled datasets together
    (224 of 232 measured with fundus-multi in the pool). Titles are pooled over the Chinese
    sets only (56 of 56): fundus-multi's 139 titles in 20+ languages (115 right) have
    their own floor in FLOORS, where a drop on either side shows instead of averaging away."""
    names = [p.parent.name for p in sorted(datasets.glob("*/cases.jsonl"))]
    reports = [evaluate(datasets / n, extract_article, name="best") for n in names]
    _, _, dates_ok, dates = pooled_accuracy(reports)["best"]
    assert dates >= 90 and dates_ok / dates >= 0.96
    zh = [r for r, n in zip(reports, names, strict=True) if n.endswith("-zh")]
    titles_ok, titles, _, _ = pooled_accuracy(zh)["best"]
    assert titles >= 50 and titles_ok / titles >= 0.95


def test_no_exception_on_any_page(datasets):
    """Unlabelled and list pages included: empty text is fine, exceptions are not."""
    pages = 0
    for cases in sorted(datasets.glob("*/cases.jsonl")):
        for line in cases.read_text("utf-8").splitlines():
            case = json.loads(line)
            raw = (cases.parent / case["html_file"]).read_bytes()
            for mode in ("paper", "best"):
                try:
                    art = extract_article(raw, case["url"], mode=mode)
                except ExtractionError:
                    pytest.fail(f"{case['id']} is HTML but raised ExtractionError")
                assert isinstance(art.text, str)
                assert art.published is None or art.published.tzinfo is not None
            pages += 1
    assert pages > 300
