"""``published_precision``: what an extracted time states, from extraction to the stored row.

``dates.time_precision`` derives it from the time and where it was found; every method's
``ExtractedArticle`` carries it, the extraction pipeline copies it to the item and the
corpus pipeline stores it beside ``published_source``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from newsspider.extraction import extract_article
from newsspider.extraction.dates import PRECISIONS, time_precision
from newsspider.extraction.model import ExtractedArticle
from newsspider.extraction.registry import extract_with
from newsspider.pipelines.extract import ExtractionPipeline
from newsspider.storage import Corpus
from tests.test_extract_article import page
from tests.test_pipeline_extract import ARTICLE, Stats, item, run

REPO = Path(__file__).resolve().parents[1]
CST = timezone(timedelta(hours=8))
PAGES = REPO / "newsspider" / "demo" / "pages"


@pytest.mark.parametrize(
    ("published", "source", "expected"),
    [
        (None, None, None),
        (datetime(2015, 1, 2, 12, 34, 56, tzinfo=CST), "text", "second"),
        (datetime(2015, 1, 2, 12, 34, tzinfo=CST), "json-ld", "minute"),
        (datetime(2015, 1, 2, tzinfo=CST), "meta:article:published_time", "day"),
        (datetime(2015, 1, 2, tzinfo=CST), "text", "day"),
        (datetime(2015, 7, 3, 15, tzinfo=CST), "url", "hour"),
        (datetime(2015, 7, 3, tzinfo=CST), "url", "day"),
        (datetime(1998, 3, 1, tzinfo=CST), "text:issue", "month"),
    ],
)
def test_time_precision(published, source, expected):
    assert time_precision(published, source) == expected
    assert expected is None or expected in PRECISIONS


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("发布时间：2015/01/02 23:59:58", "second"),
        ("2015-01-02 12:34", "minute"),
        ("二〇一五年一月二日", "day"),
    ],
)
def test_text_times(line, expected):
    art = extract_article(page(before=f"<h1>标题</h1><div>{line}</div>"))
    assert (art.published_source, art.published_precision) == ("text", expected)


def test_url_issue_and_no_time():
    art = extract_article(page(), "https://news.163.com/15/0703/15/ATJVVCJR00254TFQ.html")
    assert (art.published_source, art.published_precision) == ("url", "hour")
    art = extract_article(page(), "https://www.zaobao.com.sg/realtime/china/story20240115-1")
    assert (art.published_source, art.published_precision) == ("url", "day")
    art = extract_article(page(after="<p>——《北京之春》1998年3月号</p>"))
    assert (art.published_source, art.published_precision) == ("text:issue", "month")
    art = extract_article(page())
    assert (art.published, art.published_precision) == (None, None)


@pytest.mark.parametrize("method", ["blockstats", "blockstats-paper", "punctuation", "xpath"])
def test_every_method_gives_it(method):
    html = (PAGES / "sina" / "html" / "gne-sina-sina.html").read_bytes()
    art = extract_with(method, html, None, tz="Asia/Shanghai")
    assert (art.published is None) == (art.published_precision is None)
    assert art.published_precision == time_precision(art.published, art.published_source)


def test_a_precision_given_is_kept():
    art = ExtractedArticle(
        "t", datetime(2015, 1, 2, tzinfo=CST), "json-ld", "x", "utf-8", "best",
        published_precision="second",
    )  # fmt: skip
    assert art.published_precision == "second"


def test_the_pipeline_copies_it_to_the_item():
    pipe = ExtractionPipeline(Stats(), "blockstats", workers=0)
    pipe.open_spider()
    try:
        (out,) = run(pipe, item(ARTICLE))
    finally:
        pipe.close_spider()
    assert (out.published_source, out.published_precision) == ("text", "minute")


def test_the_demo_stores_source_and_precision(tmp_path):
    """``scrapy demo`` end to end: every stored article has both, and its time an offset."""
    db = tmp_path / "demo.db"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", "demo"],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": f"sqlite:///{db}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT url, published, published_source, published_precision FROM articles"
        ).fetchall()
    conn.close()
    assert len(rows) >= 12
    corpus = Corpus(f"sqlite:///{db}")
    for url, published, source, precision in rows:
        assert published.endswith("+00:00"), url
        assert source and precision in PRECISIONS, url
        stored = corpus.get(url)  # the four sites' zones are all +08:00
        assert time_precision(stored.published.astimezone(CST), source) == precision, url
