"""Crawl to corpus, end to end: `scrapy crawl <site>` through a WARC replay archive.

Each of the four paper sites is crawled in a child process (the Twisted reactor
cannot restart in one process) from a start page that links its real saved
pages (the labelled datasets; Zaobao: pages written in its markup under
tests/fixtures/zaobao), plus an off-pattern page on the site and an off-site
page. The assertions are on the rows the pipeline stored, on SQLite and on a
real PostgreSQL server.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from newsspider.replay import build_warc
from newsspider.sites import SITES
from newsspider.storage import Article, CrawlRun, engine_for
from tests.conftest import DATASETS

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass(frozen=True)
class CrawlCase:
    site: str
    dataset: Path
    match: str
    start_url: str
    url_map: dict[str, str] | None = None


CASES = {
    "netease": CrawlCase("netease", DATASETS / "cx163-zh", r"163\.com/15/07", "http://money.163.com/replay/start.html"),
    "sina": CrawlCase("sina", DATASETS / "gne-unlabelled-zh", r"sina\.com\.cn", "https://news.sina.com.cn/replay/start.html"),
    # The one saved QQ article has no URL in the dataset: give it one of Tencent's form.
    "tencent": CrawlCase(
        "tencent",
        DATASETS / "gne-unlabelled-zh",
        r"gne-qq-qq\.html$",
        "https://news.qq.com/replay/start.html",
        {"http://replay.local/gne-unlabelled-zh/gne-qq-qq.html": "https://new.qq.com/omn/20190907/20190907A0MZ8500.html"},
    ),
    "zaobao": CrawlCase("zaobao", FIXTURES / "zaobao", r"zaobao", "https://www.zaobao.com.sg/replay/start.html"),
}  # fmt: skip

EXTRA_PAGE = (
    "<html><head><title>{t}</title></head><body>"
    "<p>{t}。这一页不应被抓取或存储，内容足够长以便被当作正文。</p></body></html>"
)


def _extra_dataset(tmp: Path, site_host: str) -> Path:
    """An off-pattern page on the site's own host and an off-site page."""
    d = tmp / "extra"
    (d / "html").mkdir(parents=True)
    rows = [
        ("off-pattern", f"https://{site_host}/special/about-us.html"),
        ("off-site", "https://www.example.org/news/2024/01/01/story.html"),
    ]
    with open(d / "cases.jsonl", "w", encoding="utf-8") as out:
        for name, url in rows:
            (d / "html" / f"{name}.html").write_text(EXTRA_PAGE.format(t=name), "utf-8")
            case = {"id": name, "url": url, "html_file": f"html/{name}.html", "body": None}
            out.write(json.dumps(case) + "\n")
    return d


def _archive(case: CrawlCase, tmp: Path) -> tuple[Path, list[str]]:
    if not case.dataset.is_dir():
        pytest.skip(f"{case.dataset} is not available")
    host = re.match(r"https?://([^/]+)/", case.start_url).group(1)
    extra = _extra_dataset(tmp, host)
    out = tmp / f"{case.site}.warc.gz"
    mapping = case.url_map or {}
    built = build_warc(
        [case.dataset, extra],
        out,
        start_page_url=case.start_url,
        per_page=1000,
        match=rf"{case.match}|about-us|example\.org",
        url_map=lambda url: mapping.get(url, url),
    )
    site = SITES[case.site]
    articles = [u for u in built.urls if site.is_article(u)]
    assert articles, "the archive holds no article of the site"
    return out, articles


def crawl(site: str, start_url: str, archive: Path, database_url: str, *extra: str) -> dict:
    """Run `scrapy crawl` in a child process; return its final stats."""
    cmd = [
        sys.executable, "-m", "scrapy.cmdline", "crawl", site,
        "-a", f"start_urls={start_url}",
        "-s", f"REPLAY_ARCHIVE={archive}",
        "-s", f"DATABASE_URL={database_url}",
        "-s", "LOG_LEVEL=INFO",
        *extra,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    m = re.search(r"Dumping Scrapy stats:\n(\{.*?\})\n", proc.stderr, re.S)
    assert m, proc.stderr[-3000:]
    return {k: v for k, v in re.findall(r"'([^']+)': (\d+),?\n", m.group(1))}


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'corpus.db'}"
    # A fresh schema per test: drop what an earlier test stored (every table, nightly's too).
    from tests.localserver import fresh_database

    return fresh_database(request.getfixturevalue("postgresql_url"))


@pytest.mark.parametrize("site", sorted(CASES))
def test_crawl_stores_each_article_once(site, tmp_path, database_url, datasets):
    case = CASES[site]
    archive, articles = _archive(case, tmp_path)

    stats = crawl(site, case.start_url, archive, database_url)
    assert int(stats.get("newsspider/articles_new", 0)) == len(articles)

    engine = engine_for(database_url)
    with Session(engine) as s:
        rows = s.scalars(select(Article)).all()
        assert sorted(r.url for r in rows) == sorted(articles)
        for r in rows:
            assert r.site == site and r.source == SITES[site].source
            assert r.title and r.title.strip()
            assert r.published is not None and r.published.tzinfo is not None, r.url
            assert r.content.strip() and r.raw_text.strip()
            assert "\ufffd" not in r.content
        # list pages, off-pattern and off-site pages are never stored
        assert not any("replay/start" in r.url or "about-us" in r.url for r in rows)
        assert not any("example.org" in r.url for r in rows)
    # the off-site page was never even requested: hits = start page + articles (+ robots misses)
    assert int(stats["replay/hit"]) == len(articles) + 1

    # A second run over the same archive adds and duplicates nothing.
    stats = crawl(site, case.start_url, archive, database_url)
    assert int(stats.get("newsspider/articles_new", 0)) == 0
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(Article)) == len(articles)
        runs = s.scalars(select(CrawlRun).order_by(CrawlRun.id)).all()
        assert [r.site for r in runs] == [site, site]
        assert all(r.status == "finished" and r.finished_at for r in runs)
        assert runs[0].items_new == len(articles) and runs[1].items_new == 0


def test_netease_times_are_the_pages_own(tmp_path, datasets):
    """Stored times match the cx163-zh gold (the header time, +08:00)."""
    case = CASES["netease"]
    archive, _ = _archive(case, tmp_path)
    url = f"sqlite:///{tmp_path / 'c.db'}"
    crawl("netease", case.start_url, archive, url)
    gold = {
        c["url"]: c["published"]
        for c in map(json.loads, (case.dataset / "cases.jsonl").read_text("utf-8").splitlines())
        if c["published"]
    }
    from datetime import datetime

    with Session(engine_for(url)) as s:
        rows = s.scalars(select(Article)).all()
        checked = 0
        for r in rows:
            if r.url in gold:
                assert r.published == datetime.fromisoformat(gold[r.url]), r.url
                checked += 1
    assert checked >= 50
