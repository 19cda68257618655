"""``scrapy addsite``: a site in no file, discovered from its home page and then crawled.

The acceptance of issue 25, through the commands, offline: replay archives of three
fictional outlets built from real saved pages (tests/sitegen.py: a date in the path
reached through links, a numeric id reached only through its sitemap, a hash id reached
only through its feed, each with tag, author, video and login pages). ``addsite --write``
must write a row whose article patterns match >= 95 % of the archive's article URLs and
none of its other pages; ``scrapy crawl KEY`` on the same archive must then store >= 90 %
of the articles with a title and a time, and no other page. Bad input is one line and
exit status 2 or 3, with nothing written.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.warcwriter import WARCWriter

from newsspider.replay import write_response_record
from newsspider.sites import read_sites_file
from tests.sitegen import FakeSite, build_site_archives

REPO = Path(__file__).resolve().parents[1]
FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "EXTRACTION_WORKERS=0")


def scrapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def archive(
    datasets: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[FakeSite]]:
    return build_site_archives(datasets, tmp_path_factory.mktemp("sites"))


@pytest.mark.parametrize("reach", ["links", "sitemap", "feed"])
def test_addsite_then_crawl(
    archive: tuple[Path, list[FakeSite]], tmp_path: Path, reach: str
) -> None:
    warc, sites = archive
    site = next(s for s in sites if s.reach == reach)
    sites_file = tmp_path / "sites.toml"
    db = tmp_path / "corpus.db"
    common = ("-s", f"REPLAY_ARCHIVE={warc}", "-s", f"SITES_FILE={sites_file}")
    out = scrapy("addsite", site.home, "--key", site.key, "--write", *common, *FAST)
    assert out.returncode == 0, out.stderr
    assert f"wrote [{site.key}]" in out.stdout
    row = read_sites_file(sites_file)[site.key]
    assert not row.checked and row.enabled

    matched = [u for u in site.article_urls if row.is_article(u)]
    assert len(matched) >= 0.95 * len(site.article_urls), (row.article_patterns, out.stdout)
    for url in (*site.list_urls, *site.other_urls):
        assert not row.is_article(url), (url, row.article_patterns)

    crawl = scrapy("crawl", site.key, *common, "-s", f"DATABASE_URL=sqlite:///{db}", *FAST)
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "SELECT url, title, published FROM articles WHERE site = ?", (site.key,)
        ).fetchall()
    good = [u for u, title, published in stored if title and published]
    assert len(good) >= 0.9 * len(site.article_urls), crawl.stderr[-3000:]
    assert {u for u, _, _ in stored} <= set(site.article_urls), "a page that is no article"


def test_report_says_why(archive: tuple[Path, list[FakeSite]]) -> None:
    warc, sites = archive
    site = next(s for s in sites if s.reach == "links")
    out = scrapy("addsite", site.home, "-s", f"REPLAY_ARCHIVE={warc}", *FAST)
    assert out.returncode == 0, out.stderr
    report = out.stdout
    for field in ("article_pattern", "list_pattern", "start_urls", "tz", "title_stop_words"):
        assert field in report
    assert re.search(r"\[article\] \d+ links", report)
    assert re.search(r"article https://\S+  '.+', \d{4}-\d{2}-\d{2}T", report), report
    assert "wrote" not in report  # no --write, nothing written


def test_bad_input_is_one_line_and_writes_nothing(
    archive: tuple[Path, list[FakeSite]], tmp_path: Path
) -> None:
    warc, sites = archive
    site = next(s for s in sites if s.reach == "links")
    sites_file = tmp_path / "sites.toml"
    common = ("-s", f"REPLAY_ARCHIVE={warc}", "-s", f"SITES_FILE={sites_file}", *FAST)
    host = re.match(r"https?://[^/]+", site.home).group()
    cases = {
        # not in the archive: 404
        "unreachable": ([f"{host}/no-such-home/"], 3, "could not be fetched"),
        "not html": (
            [site.feeds[0] if site.feeds else f"{host}/robots.txt"],
            2,
            "not an HTML page",
        ),
        "key exists": ([site.home, "--key", "netease"], 2, "exists"),
        "not a url": (["www.example.cn"], 2, "not an http"),
        "bad zone": ([site.home, "--tz", "Asia/Beijing"], 2, "unknown time zone"),
    }
    for name, (args, status, words) in cases.items():
        out = scrapy("addsite", *args, "--write", *common)
        assert out.returncode == status, (name, out.returncode, out.stderr[-2000:])
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (name, out.stderr[-2000:])
        assert not sites_file.exists(), name


def test_a_site_without_articles(tmp_path: Path) -> None:
    """A home page whose links are tags and an 'about' page: no article group, status 3."""
    warc = tmp_path / "tags.warc.gz"
    home = "https://www.tags-only.cn/"
    tags = [f"{home}tag/{name}/" for name in ("a", "b", "c", "d")]
    links = "".join(f'<li><a href="{u}">标签{i}</a></li>' for i, u in enumerate(tags))
    page = (
        f"<html><head><title>标签网</title></head><body><ul>{links}</ul>"
        f'<a href="{home}about.html">关于</a></body></html>'
    )
    with open(warc, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        ctype = (("Content-Type", "text/html; charset=utf-8"),)
        write_response_record(writer, home, page.encode(), ctype)
        for url in [*tags, f"{home}about.html"]:
            write_response_record(writer, url, page.encode(), ctype)
    sites_file = tmp_path / "sites.toml"
    out = scrapy(
        "addsite",
        home,
        "--write",
        "-s",
        f"REPLAY_ARCHIVE={warc}",
        "-s",
        f"SITES_FILE={sites_file}",
        *FAST,
    )
    assert out.returncode == 3, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no article links found" in lines[0], out.stderr
    assert not sites_file.exists()


def test_crawl_news_discovers_in_memory(
    archive: tuple[Path, list[FakeSite]], tmp_path: Path
) -> None:
    """``scrapy crawl news -a url=URL``: the same discovery, in memory, then the crawl;
    no sites file is written."""
    warc, sites = archive
    site = next(s for s in sites if s.reach == "sitemap")
    db = tmp_path / "corpus.db"
    sites_file = tmp_path / "sites.toml"
    out = scrapy(
        "crawl",
        "news",
        "-a",
        f"url={site.home}",
        "-a",
        "key=oneoff",
        "-s",
        f"REPLAY_ARCHIVE={warc}",
        "-s",
        f"SITES_FILE={sites_file}",
        "-s",
        f"DATABASE_URL=sqlite:///{db}",
        "-s",
        "LOG_LEVEL=INFO",
        *FAST,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "discovered " + site.home in out.stderr
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "SELECT url FROM articles WHERE site = 'oneoff' AND title != '' "
            "AND published IS NOT NULL"
        ).fetchall()
    assert len(stored) >= 0.9 * len(site.article_urls)
    assert {u for (u,) in stored} <= set(site.article_urls)
    assert not sites_file.exists()


def test_crawl_news_needs_a_url() -> None:
    out = scrapy("crawl", "news")
    assert out.returncode == 2
    message = "the news spider needs -a url=URL, the site's home page (http or https)"
    assert out.stderr.strip().splitlines() == [f"scrapy crawl: error: {message}"]


@pytest.fixture(scope="module")
def hard_archive(
    datasets: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[FakeSite]]:
    from tests.sitegen_hard import build_hard_archives

    return build_hard_archives(datasets, tmp_path_factory.mktemp("hard"))


@pytest.mark.parametrize("key", ["dongfang", "pearl", "xibei", "dawan", "taibei"])
def test_addsite_on_harder_url_forms(
    hard_archive: tuple[Path, list[FakeSite]], tmp_path: Path, key: str
) -> None:
    """Articles on several subdomains, slugs beside videos of the same form, a query-string
    id beside list scripts, opaque ids beside galleries, percent-escaped section words: the
    row matches >= 95 % of the article URLs (as printed or canonical) and no other page."""
    from w3lib.url import canonicalize_url

    warc, sites = hard_archive
    site = next(s for s in sites if s.key == key)
    sites_file = tmp_path / "sites.toml"
    out = scrapy(
        "addsite", site.home, "--key", key, "--write",
        "-s", f"REPLAY_ARCHIVE={warc}", "-s", f"SITES_FILE={sites_file}", *FAST,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    row = read_sites_file(sites_file)[key]
    matched = [u for u in site.article_urls if row.is_article(row.canonical_url(u))]
    assert len(matched) >= 0.95 * len(site.article_urls), out.stdout
    for url in (*site.list_urls, *site.other_urls):
        assert not row.is_article(canonicalize_url(url)), (url, row.article_patterns)
