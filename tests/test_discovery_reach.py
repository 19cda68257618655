"""Reach: discovery learns how a crawl gets to the articles, and says what it does not reach.

Unit tests of the replay (:func:`newsspider.discovery.reach.replay_reach`, pure) and of the
pager rules (:mod:`newsspider.discovery.lists`); then, through the commands and offline, the
two fictional portals of tests/sitegen_portal_lists.py (WARC replay of real saved pages):
``scrapy addsite URL --write`` then ``scrapy crawl KEY`` stores >= 98 % of the articles of
a portal whose channels are paginated five pages deep behind four kinds of pager, and of a
site whose lists show only the newest articles and whose sitemap lists the rest; a row
that reaches under ``ADDSITE_MIN_REACH`` is written only with ``--force``; ``scrapy sites
check`` reports the reach and fails a row below it.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse
from w3lib.url import canonicalize_url

from newsspider.discovery.lists import is_page_of, list_patterns, next_page, page_number
from newsspider.discovery.reach import (
    BEYOND_DEPTH,
    FEED_NOT_READ,
    NOT_A_LIST,
    Page,
    needed_depth,
    replay_reach,
)
from newsspider.sites import Feed, Site, read_sites_file
from newsspider.sites.table import SitesFileError
from tests.sitegen import FakeSite
from tests.sitegen_portal_lists import build_portal_archive

REPO = Path(__file__).resolve().parents[1]
FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "EXTRACTION_WORKERS=0")
H = "https://www.example-portal.cn"


def scrapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


# -- the replay, pure ----------------------------------------------------------------------


def _site(**fields: object) -> Site:
    row = {
        "key": "portal",
        "source": "Portal",
        "allowed_domains": ("example-portal.cn",),
        "start_urls": (f"{H}/", f"{H}/guonei/"),
        "article_patterns": (r"^https?://www\.example-portal\.cn/a/\d+\.html",),
        "list_patterns": (
            r"^https?://www\.example-portal\.cn/guonei/(?:index_\d+\.html)?(?:[?#]|$)",
        ),
    }
    row.update(fields)
    return Site(**row)  # type: ignore[arg-type]


def _art(n: int) -> str:
    return f"{H}/a/{n}.html"


def _pages(*pages: Page) -> dict[str, Page]:
    return {canonicalize_url(p.url): p for p in pages}


def _chain() -> dict[str, Page]:
    """Home links 1; /guonei/ links 2-3 and page 2; page 2 links 4-5 and page 3; page 3
    links 6; a tag page (no list pattern) links 7; article 1's page links 8."""
    return _pages(
        Page(f"{H}/", (_art(1), f"{H}/guonei/", f"{H}/tag/x/")),
        Page(f"{H}/guonei/", (_art(2), _art(3), f"{H}/guonei/index_2.html")),
        Page(f"{H}/guonei/index_2.html", (_art(4), _art(5), f"{H}/guonei/index_3.html")),
        Page(f"{H}/guonei/index_3.html", (_art(6), f"{H}/guonei/index_4.html")),
        Page(f"{H}/tag/x/", (_art(7), _art(1))),
        Page(_art(1), (_art(8),)),
    )


def test_replay_follows_the_crawls_depth() -> None:
    reach = replay_reach(_site(), _chain(), depth_limit=2)
    # start pages at 0: 1, 2, 3 at depth 1; page 2 at 1 -> 4, 5 at depth 2; page 3 would
    # be at depth 2, where a list page is not requested (its articles would be at 3).
    assert (reach.seen, reach.reached) == (7, 5)
    assert reach.unreached[_art(6)][0] == BEYOND_DEPTH
    assert "/guonei/index_3.html" in reach.unreached[_art(6)][2]
    assert "depth 3" in reach.unreached[_art(6)][2]
    assert reach.unreached[_art(7)][0] == NOT_A_LIST
    assert "/tag/x/" in reach.unreached[_art(7)][2]
    assert reach.article_page_only == 1  # article 8: only on article 1's page, not counted
    assert reach.share == pytest.approx(5 / 7)


def test_a_deeper_row_reaches_the_deeper_pages() -> None:
    site = _site()
    # page 3 is known and page 4 is linked but was not fetched: its articles need depth 4.
    assert needed_depth(site, _chain(), floor=2) == 4
    reach = replay_reach(site, _chain(), depth_limit=3)
    assert _art(6) in reach.depths and reach.depths[_art(6)] == 3
    assert set(reach.unreached) == {_art(7)}


def test_feeds_reach_what_the_lists_do_not() -> None:
    sitemap = f"{H}/sitemap.xml"
    pages = {
        **_chain(),
        **_pages(Page(sitemap, tuple(_art(n) for n in range(1, 11)), kind="sitemap")),
    }
    without = replay_reach(_site(), pages, depth_limit=2)
    assert without.seen == 10
    assert without.unreached[_art(9)][0] == FEED_NOT_READ
    assert "/sitemap.xml" in without.unreached[_art(9)][2]
    with_feed = replay_reach(_site(feeds=(Feed(sitemap, "sitemap"),)), pages, depth_limit=2)
    assert (with_feed.reached, with_feed.seen, with_feed.by_pages) == (10, 10, 5)
    assert "5 through start and list pages alone" in with_feed.summary()


def test_a_sitemap_index_is_read_as_the_crawl_reads_it() -> None:
    index = f"{H}/sitemap_index.xml"
    months = [f"{H}/sitemap-2024{m:02d}.xml" for m in (1, 2, 3)]
    pages = _pages(
        Page(index, sitemaps=tuple(months), kind="sitemap"),
        *(Page(u, (_art(100 + i),), kind="sitemap") for i, u in enumerate(months)),
    )
    site = _site(start_urls=(), feeds=(Feed(index, "sitemap"),))
    reach = replay_reach(site, pages, depth_limit=2, sitemaps_per_index=2)
    assert (reach.reached, reach.seen) == (2, 3)  # the newest two of three
    (reason, page, detail) = reach.unreached[_art(100)]
    assert reason == FEED_NOT_READ and page == months[0] and "NEWS_SITEMAPS_PER_INDEX" in detail
    assert replay_reach(site, pages, depth_limit=2, sitemaps_per_index=0).reached == 3


def test_nothing_seen_is_reach_unknown() -> None:
    reach = replay_reach(_site(), _pages(Page(f"{H}/", (f"{H}/about/",))), depth_limit=2)
    assert reach.share is None
    assert reach.summary() == "reach unknown: no article URL seen"
    assert reach.as_json()["share"] is None


def test_reach_report_names_what_is_out_of_reach() -> None:
    reach = replay_reach(_site(), _chain(), depth_limit=2)
    lines = reach.lines()
    assert lines[0] == "reach 5 of 7 article URLs seen (71%) at depth 2"
    assert any(line.startswith("1 article URLs unreachable (beyond depth)") for line in lines)
    data = reach.as_json()
    assert data["seen"] == 7 and data["reached"] == 5
    assert {r["reason"] for r in data["unreachable"]} == {BEYOND_DEPTH, NOT_A_LIST}


# -- pagers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "section", "number"),
    [
        (f"{H}/guonei/index_2.html", f"{H}/guonei/", 2),
        (f"{H}/guonei/list_12.shtml", f"{H}/guonei/", 12),
        (f"{H}/guonei/index3.htm", f"{H}/guonei/", 3),
        (f"{H}/guoji/?page=4", f"{H}/guoji/", 4),
        (f"{H}/list.php?cid=3&p=2", f"{H}/list.php?cid=3", 2),
        (f"{H}/keji/page/5/", f"{H}/keji/", 5),
        (f"{H}/guonei/", f"{H}/guonei/", 1),
        (f"{H}/guonei/20240102/1234567.html", f"{H}/guonei/", None),
        (f"{H}/guoji/index_2.html", f"{H}/guonei/", None),
        (f"{H}/list.php?cid=4&p=2", f"{H}/list.php?cid=3", None),
    ],
)
def test_page_numbers(url: str, section: str, number: int | None) -> None:
    assert page_number(url, section) == number
    assert is_page_of(url, section) == (number is not None and number > 1)


def _response(url: str, body: str) -> HtmlResponse:
    return HtmlResponse(url, body=f"<html><body>{body}</body></html>".encode(), encoding="utf-8")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('<a href="/guonei/index_2.html">下一页</a>', "index_2.html"),
        (
            '<a href="/guonei/index_3.html">3</a><a href="/guonei/index_2.html">2</a>',
            "index_2.html",
        ),
        ('<a rel="next" href="/guonei/index_2.html">&gt;</a>', "index_2.html"),
        ('<a href="/guonei/index_2.html">后页 &gt;</a>', "index_2.html"),
        ('<a href="/guonei/index_2.html">Next</a>', "index_2.html"),
        ('<a href="/guonei/20240102/1234567.html">下一页</a>', None),  # not a page of it
        ('<a href="/about/">下一页</a>', None),
    ],
)
def test_next_page(body: str, expected: str | None) -> None:
    got = next_page(_response(f"{H}/guonei/", body), f"{H}/guonei/")
    assert got == (None if expected is None else f"{H}/guonei/{expected}")


def test_list_patterns_are_general_in_the_page_number() -> None:
    sections = [f"{H}/guonei/", f"{H}/guoji/", f"{H}/keji/"]
    pages = [f"{H}/guonei/index_2.html", f"{H}/guoji/?page=2", f"{H}/keji/page/2/"]
    patterns = list_patterns(sections, pages)
    lists = [
        f"{H}/guonei/",
        f"{H}/guonei/index_57.html",
        f"{H}/keji/index_3.html",  # a channel's pager form is every channel's
        f"{H}/guoji/?page=31",
        f"{H}/keji/page/12/",
    ]
    for url in lists:
        assert any(re.match(p, url) for p in patterns), (url, patterns)
    for url in (f"{H}/about/", f"{H}/guonei/20240102/1234567.html", f"{H}/tag/x/index_2.html"):
        assert not any(re.match(p, url) for p in patterns), (url, patterns)
    assert len(patterns) == 4  # the channels, and one per pager form, not one per page


def test_a_row_depth_limit_is_validated(tmp_path: Path) -> None:
    path = tmp_path / "sites.toml"
    row = (
        "[p]\nsource = 'P'\nallowed_domains = ['example-portal.cn']\n"
        f"start_urls = ['{H}/']\narticle_patterns = ['^https?://www\\.example-portal\\.cn/a/']\n"
    )
    path.write_text(row + "depth_limit = 5\n", encoding="utf-8")
    assert read_sites_file(path)["p"].depth_limit == 5
    path.write_text(row + "depth_limit = 0\n", encoding="utf-8")
    with pytest.raises(SitesFileError, match="depth_limit: 0 is not a positive integer"):
        read_sites_file(path)


# -- through the commands, on the fictional portals ------------------------------------------


@pytest.fixture(scope="module")
def portal(
    datasets: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, FakeSite]]:
    path, sites = build_portal_archive(datasets, tmp_path_factory.mktemp("portal"))
    return path, {s.key: s for s in sites}


def _stored(db: Path, key: str) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT url FROM articles WHERE site = ? AND title != '' AND published IS NOT NULL",
            (key,),
        ).fetchall()
    return {u for (u,) in rows}


@pytest.mark.parametrize("key", ["zhongzhou", "xiyu"])
def test_addsite_then_crawl_stores_the_articles(
    portal: tuple[Path, dict[str, FakeSite]], tmp_path: Path, key: str
) -> None:
    warc, sites = portal
    site = sites[key]
    sites_file = tmp_path / "sites.toml"
    common = ("-s", f"REPLAY_ARCHIVE={warc}", "-s", f"SITES_FILE={sites_file}", *FAST)
    out = scrapy("addsite", site.home, "--key", key, "--write", *common)
    assert out.returncode == 0, out.stderr[-3000:]
    row = read_sites_file(sites_file)[key]
    m = re.search(r"reach (\d+) of (\d+) article URLs seen \((\d+)%\)", out.stdout)
    assert m, out.stdout
    reached, seen = int(m.group(1)), int(m.group(2))
    assert reached == seen and seen >= 0.9 * len(site.article_urls), out.stdout
    for url in site.list_urls:
        assert row.is_list(canonicalize_url(url)) or url in row.start_urls, (url, row)
    if key == "zhongzhou":
        # the four channels are start pages, their pagers list patterns, the depth theirs
        assert {f"{site.home}{c}/" for c in ("guonei", "guoji", "keji", "shehui")} <= set(
            row.start_urls
        )
        assert row.depth_limit is not None and row.depth_limit >= 5, row
        assert len(row.list_patterns) <= 6, row.list_patterns  # forms, not pages
    else:  # the lists show 4 of each channel; the sitemap has them all
        assert [f.url for f in row.feeds] == list(site.sitemaps), row.feeds
        assert row.depth_limit is None
    db = tmp_path / "corpus.db"
    crawl = scrapy("crawl", key, *common, "-s", f"DATABASE_URL=sqlite:///{db}")
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    stored = _stored(db, key)
    articles = {canonicalize_url(u) for u in site.article_urls}
    assert {canonicalize_url(u) for u in stored} <= articles, "a page that is no article"
    assert len(stored) >= 0.98 * len(articles), (len(stored), len(articles))


def test_a_row_under_the_reach_floor_needs_force(
    portal: tuple[Path, dict[str, FakeSite]], tmp_path: Path
) -> None:
    """With the depth held at the crawl's default 2 (DISCOVERY_MAX_DEPTH=2), the row reaches
    the first pages of each channel only: refused, one line naming what is out of reach and
    why, nothing written; written with --force, the report saying the same."""
    warc, sites = portal
    site = sites["zhongzhou"]
    sites_file = tmp_path / "sites.toml"
    common = (
        "-s", f"REPLAY_ARCHIVE={warc}", "-s", f"SITES_FILE={sites_file}",
        "-s", "DISCOVERY_MAX_DEPTH=2", *FAST,
    )  # fmt: skip
    out = scrapy("addsite", site.home, "--key", "zhongzhou", "--write", *common)
    assert out.returncode == 3, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert re.search(
        r"the row reaches (\d+) of (\d+) article URLs seen \(\d+%\), under ADDSITE_MIN_REACH "
        r"90%: \d+ article URLs beyond depth, .*only linked from /\S+, .*beyond depth 2; "
        r"nothing written \(--force writes it\)",
        lines[0],
    ), lines[0]
    assert not sites_file.exists()
    assert re.search(r"\d+ article URLs unreachable \(beyond depth\)", out.stdout)

    forced = scrapy("addsite", site.home, "--key", "zhongzhou", "--write", "--force", *common)
    assert forced.returncode == 0, forced.stderr[-2000:]
    assert "wrote [zhongzhou]" in forced.stdout
    row = read_sites_file(sites_file)["zhongzhou"]
    assert row.depth_limit is None
    m = re.search(r"reach (\d+) of (\d+) article URLs seen", forced.stdout)
    assert m and int(m.group(1)) < 0.9 * int(m.group(2)), forced.stdout

    # A lower floor lets the same row through without --force.
    other = tmp_path / "other.toml"
    low = scrapy(
        "addsite", site.home, "--key", "zhongzhou", "--write",
        "-s", f"REPLAY_ARCHIVE={warc}", "-s", f"SITES_FILE={other}",
        "-s", "DISCOVERY_MAX_DEPTH=2", "-s", "ADDSITE_MIN_REACH=0.5", *FAST,
    )  # fmt: skip
    assert low.returncode == 0 and other.exists(), low.stderr[-2000:]


def test_sites_check_reports_reach(
    portal: tuple[Path, dict[str, FakeSite]], tmp_path: Path
) -> None:
    """The row addsite writes passes; the same row without its depth_limit reaches the
    first list pages only, and the check says so and exits 3."""
    warc, sites = portal
    site = sites["zhongzhou"]
    good = tmp_path / "good.toml"
    common = ("-s", f"REPLAY_ARCHIVE={warc}", "-s", f"DATABASE_URL=sqlite:///{tmp_path / 'c.db'}")
    out = scrapy("addsite", site.home, "--key", "zhongzhou", "--write", "-s",
                 f"SITES_FILE={good}", *common, *FAST)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    ok = scrapy("sites", "check", "zhongzhou", "-s", f"SITES_FILE={good}", *common, *FAST)
    assert ok.returncode == 0, ok.stdout + ok.stderr[-2000:]
    assert re.search(r"zhongzhou  ok  .*; reach (\d+) of \1 article URLs seen \(100%\)", ok.stdout)

    shallow = tmp_path / "shallow.toml"
    shallow.write_text(
        "".join(
            line
            for line in good.read_text(encoding="utf-8").splitlines(keepends=True)
            if not line.startswith("depth_limit")
        ),
        encoding="utf-8",
    )
    bad = scrapy(
        "sites", "check", "zhongzhou", "--json", "-s", f"SITES_FILE={shallow}", *common, *FAST
    )
    assert bad.returncode == 3, bad.stdout + bad.stderr[-2000:]
    (result,) = json.loads(bad.stdout)
    reach = result["reach"]
    assert result["status"] == "ok" and reach["ok"] is False and reach["min"] == 0.9
    assert reach["depth_limit"] == 2 and reach["reached"] < 0.9 * reach["seen"]
    (why,) = reach["unreachable"]
    assert why["reason"] == BEYOND_DEPTH and "beyond depth 2" in why["detail"]
    text = scrapy("sites", "check", "zhongzhou", "-s", f"SITES_FILE={shallow}", *common, *FAST)
    assert text.returncode == 3
    assert re.search(r"under 90%; \d+ beyond depth: ", text.stdout), text.stdout
