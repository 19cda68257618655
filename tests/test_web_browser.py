"""The web view in real Chromium (Playwright driving Debian's ``/usr/bin/chromium``).

The acceptance of ``scrapy corpus serve``: a two-character search leads to the article and
its body and time; the dashboard's charts are drawn with the right per-day counts; stored
``<script>`` and ``onerror`` strings show as text and run nothing. Skipped without Playwright
or Chromium (``newsspider.extraction.render.unavailable_reason``).

Screenshots go to a temporary folder, or to ``$NEWSSPIDER_SCREENSHOTS`` when set, for a
look at the fixtures' pages; the ones in ``docs/screenshots/`` are of a real corpus
(``benchmarks/screenshots.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from newsspider.extraction.render import CHROMIUM, unavailable_reason
from tests.test_web import WORD, XSS_BODY, XSS_TITLE, Corpus, database, run_server, today

__all__ = ["database"]  # the fixture, shared with test_web.py

NO_BROWSER = unavailable_reason()
pytestmark = pytest.mark.skipif(NO_BROWSER is not None, reason=str(NO_BROWSER))
SHOTS_ENV = "NEWSSPIDER_SCREENSHOTS"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def base(database: Corpus) -> Iterator[str]:
    yield from run_server(database.url)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright  # optional heavy dependency

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-quic"]
        )
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN")
    p = context.new_page()
    p.dialogs = []  # every alert() that ran, which must stay empty
    p.on("dialog", lambda d: (p.dialogs.append(d.message), d.dismiss()))
    p.errors = []
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    try:
        yield p
    finally:
        context.close()


def shot(page: Any, name: str, database: Corpus, tmp_path: Path) -> None:
    folder = os.environ.get(SHOTS_ENV)
    if folder and database.url.startswith("sqlite"):
        target = REPO / folder if not Path(folder).is_absolute() else Path(folder)
    else:
        target = tmp_path
    target.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target / f"{name}.png"), full_page=True)


def test_search_two_characters_then_open_the_article(
    page: Any, base: str, database: Corpus, tmp_path: Path
) -> None:
    page.goto(base + "/")
    page.fill("input[name=q]", WORD)
    page.click("button[type=submit]")
    page.wait_for_selector("ol.hits")
    hits = page.locator("li.hit")
    assert hits.count() == 1
    assert hits.first.get_attribute("data-id") == str(database.snow_id)
    assert page.locator("li.hit mark").first.inner_text() == WORD
    shot(page, "search", database, tmp_path)
    hits.first.locator("a.title").click()
    page.wait_for_url(f"**/article/{database.snow_id}")
    assert page.locator("#title").inner_text() == "北方多地迎来今冬首场降雪"
    body = page.locator("#body").inner_text()
    assert "受冷空气影响，北方多地迎来今冬首场降雪。" in body and "气象部门提醒注意交通安全。" in body
    day = (today() - timedelta(days=2)).isoformat()
    assert f"{day} 08:00:00+08:00 (Asia/Shanghai)" in page.locator("#published").inner_text()
    assert "责任编辑：张三" in page.locator("details.removed").inner_text()
    shot(page, "article", database, tmp_path)
    assert not page.errors and not page.dialogs


def test_dashboard_charts_are_drawn_with_the_day_counts(
    page: Any, base: str, database: Corpus, tmp_path: Path
) -> None:
    page.goto(base + "/dashboard?days=30")
    page.wait_for_selector("body[data-charts=ready]")
    for chart in ("chart-articles", "chart-runs", "chart-drops"):
        painted = page.evaluate(
            """id => {
                const c = document.querySelector('#' + id + ' canvas');
                if (!c || !c.width || !c.height) return 0;
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let n = 0;
                for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
                return n;
            }""",
            chart,
        )
        assert painted > 1000, f"{chart}: {painted} painted pixels"
    series = page.evaluate(
        """() => echarts.getInstanceByDom(document.getElementById('chart-articles'))
                 .getOption().series.map(s => [s.name, s.data])"""
    )
    days = page.evaluate(
        """() => echarts.getInstanceByDom(document.getElementById('chart-articles'))
                 .getOption().xAxis[0].data"""
    )
    assert days[-1] == today().isoformat() and len(days) == 30
    drawn = dict((name, data) for name, data in series)
    expected = {
        site: [counts.get(date.fromisoformat(d), 0) for d in days]
        for site, counts in database.per_day.items()
    }
    assert drawn == {site: v for site, v in expected.items() if any(v)}
    assert "sina: articles 0 outside its band 20-40" in page.locator("ul.nightly").inner_text()
    shot(page, "dashboard", database, tmp_path)
    assert not page.errors and not page.dialogs


def test_stored_markup_is_text_and_runs_nothing(page: Any, base: str, database: Corpus) -> None:
    page.goto(f"{base}/article/{database.xss_id}")
    assert page.locator("#title").inner_text() == XSS_TITLE
    body = page.locator("#body").inner_text()
    for line in XSS_BODY.splitlines():
        assert line in body
    assert page.locator("img[src=x]").count() == 0 and page.locator("main script").count() == 0
    assert '"><script>alert(3)</script>' in page.locator("#url").inner_text()
    page.goto(f"{base}/?q={quote('alert')}")
    assert XSS_TITLE in page.locator("ol.hits").inner_text()
    page.goto(f"{base}/dashboard")
    page.wait_for_selector("body[data-charts=ready]")
    assert "<script>alert(5)</script>" in page.locator("ul.nightly").inner_text()
    page.goto(f"{base}/article/{database.js_url_id}")
    assert page.locator("#url a").count() == 0
    page.wait_for_timeout(300)
    assert page.dialogs == [] and page.locator("img[src=x]").count() == 0


def test_reprints_page(page: Any, base: str, database: Corpus, tmp_path: Path) -> None:
    page.goto(f"{base}/reprints")
    if page.locator("#stories").count() == 0:
        pytest.skip("no articles.story_id in this schema: reprint detection is not there")
    assert "北方多地迎来今冬首场降雪" in page.locator("#stories").inner_text()
    assert "zaobao" in page.locator("#pairs").inner_text()
    shot(page, "reprints", database, tmp_path)
    page.goto(f"{base}/article/{database.snow_id}")
    assert page.locator("#story li").count() == 2
    assert not page.errors and not page.dialogs
