"""The site table: walks ``SITES`` and checks every row's URL patterns on real URLs.

Real URLs come from two places: a table below (copied from the saved pages in
../shared/datasets and, for forms those lack, from the public code SITES.md
cites), which runs everywhere; and the datasets themselves (every case's
``url`` and every link in every saved page), which is skipped when
../shared is not beside the repository.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from newsspider.extraction.metadata import DEFAULT_TITLE_STOP_WORDS
from newsspider.sites import PAPER_SITES, SITES, Feed, Site, site_for_url

#: The eight surveyed rows this module checks on real URLs; the catalogue's rows are
#: checked on their own example URLs when the file loads (tests/test_sites_file.py).
SURVEYED: tuple[Site, ...] = tuple(s for s in SITES.values() if s.checked)

#: Real article URLs per site, current and historic forms.
ARTICLES: dict[str, tuple[str, ...]] = {
    "netease": (
        # datasets/gne-unlabelled-zh (gne-visible-163-1): current self-media form
        "https://www.163.com/dy/article/G33O1QTA05372UZS.html",
        # public code [SITES.md S2, S18]: current news form
        "https://www.163.com/news/article/KC12OUHK000189FH.html",
        "https://www.163.com/news/article/GVNDGPOB000189FH.html?clickfrom=w_yw",
        # datasets/cx163-zh: 2015 money pages
        "http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html",
        "http://money.163.com/15/0619/11/ASFHLQ5D002551G6.html",
        # datasets/gne-unlabelled-zh, gerapy-detail-unlabelled: 2019-2020, other channels
        "https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html",
        "https://tech.163.com/19/1125/11/EUQSGLA300097U7R.html",
        "https://news.163.com/20/0704/01/FGLHEVF80001899O.html",
        # links in the saved pages: 2006 biz., 2017 play. (lower-case id), fragments
        "http://biz.163.com/06/1224/09/333KOLEU00020QC1.html",
        "http://play.163.com/17/0719/09/cpmrno7700318qq3.html",
        "https://news.163.com/20/0704/03/FGLOFC3P0001875P.html#f=post1603_tab_news",
        # links in the saved pages: 2019-2020 self-media forms
        "http://dy.163.com/v2/article/detail/EOCAQMTN0511DTU9.html",
        "http://dy.163.com/article/FITJFGDC05188SSU.html",
    ),
    "sina": (
        # datasets/gne-unlabelled-zh
        "https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml",
        "https://finance.sina.com.cn/roll/2018-12-28/doc-ihqfskcn2160999.shtml",
        "https://finance.sina.com.cn/stock/usstock/c/2019-09-09/doc-iicezzrq4681677.shtml",
        "https://tech.sina.com.cn/t/2019-09-11/doc-iicezzrq4972166.shtml",
        # a link in a saved page, with tracking query
        "https://tech.sina.com.cn/t/2019-09-11/doc-iicezueu4938102.shtml?cre=tianyi&mod=pcpager_tech",
        # SITES.md §3, 2004 form (id illustrative)
        "http://news.sina.com.cn/c/2004-03-21/10082106789.shtml",
    ),
    "tencent": (
        # public code [SITES.md S2, S18]: current form, on both hosts
        "https://news.qq.com/rain/a/20240913A06AM400",
        "https://new.qq.com/rain/a/20220616A09TVG00",
        # links in datasets/list-pages and gne-unlabelled-zh: 2019-2020 forms
        "https://new.qq.com/omn/20200704/20200704A07ENE00.html",
        "https://new.qq.com/omn/VRB20190/VRB2019090600763800.html",
        "https://new.qq.com/omn/20200704A07Z3L00.html",
        # datasets/readability-fixtures-zh: gb2312 era
        "http://tech.qq.com/a/20161014/006270.htm",
    ),
    "zaobao": (
        # public code [SITES.md S10, S18]
        "https://www.zaobao.com/realtime/china/story20210627-1161676",
        "https://www.zaobao.com/realtime/world/story20211118-1214802",
        "http://www.zaobao.com/realtime/china/story20190105-921429",
        "https://www.zaobao.com.sg/realtime/china/story20221122-1335992",
        "https://www.zaobao.com.sg/realtime/singapore/story20250315-6021604?ref=today-news",
        "https://www.zaobao.com.sg/news/china/story20240101-1234567",
    ),
    "sohu": (
        "http://auto.sohu.com/20050610/n225888913.shtml",  # links in datasets/cwced-zh
        "http://digi.it.sohu.com/20051213/n240951255.shtml",
        "https://www.sohu.com/a/434511111_120099890",  # SITES.md §3 form (id illustrative)
    ),
    "xinhua": (
        # datasets/newspaper4k-fixtures-zh and links in it
        "http://www.news.cn/fortune/2023-11/17/c_1129981476.htm",
        "http://www.news.cn/2023-11/17/c_1212302829.htm",
        # links in datasets/cwced-zh
        "http://news.xinhuanet.com/video/2015-07/04/c_127984694.htm",
        "http://chinaneast.xinhuanet.com/2006-11/22/content_8591622.htm",
        "http://chinaneast.xinhuanet.com/jizhe/2005-08/16/content_4894059_3.htm",
        # SITES.md §3 current form (id illustrative)
        "https://www.news.cn/politics/20240101/0123456789abcdef0123456789abcdef/c.html",
    ),
    "chinadaily": (
        # datasets/newspaper4k-fixtures-zh and links in saved pages
        "https://china.chinadaily.com.cn/a/202311/17/WS65571297a310d5acd876f404.html",
        "https://cn.chinadaily.com.cn/a/201901/18/WS5bf61c2fa3101a87ca945931.html",
        "http://m.chinadaily.com.cn/cn/2014-06/17/content_17013298.htm",
    ),
    "thepaper": (
        "https://www.thepaper.cn/newsDetail_forward_4418534",  # SITES.md §3 forms
        "https://m.thepaper.cn/detail/4418534",
    ),
}

#: Real section/list pages: followed, never articles.
LISTS: dict[str, tuple[str, ...]] = {
    "netease": ("https://news.163.com/domestic/", "http://ent.163.com/movie/"),
    "sina": ("http://news.sina.com.cn/china/", "https://news.sina.com.cn/"),
    "tencent": ("https://new.qq.com/ch/photo", "http://news.qq.com/", "https://news.qq.com/ch/fx"),
    "zaobao": ("https://www.zaobao.com.sg/realtime/china", "https://www.zaobao.com/news/world/"),
    "sohu": ("http://news.sohu.com/",),
    "xinhua": ("http://www.news.cn/tw/index.html", "http://www.news.cn/"),
    "chinadaily": ("https://cn.chinadaily.com.cn/gtx/",),
    "thepaper": ("https://www.thepaper.cn/",),
}

#: On-site pages that are neither (links in the saved pages).
NEITHER: dict[str, tuple[str, ...]] = {
    "netease": (
        "http://comment.tie.163.com/FIRP0JH70001899O.html",  # comment thread
        "http://news.163.com/keywords/8/9/8f9e804c/1.html",  # keyword page
        "http://money.163.com/15/0704/10/ATM2AF3B00253B0H_2.html",  # page 2 of an article
        "http://auto.163.com/photoview/5BD20008/177475.html",  # photo set
        "https://reg1.vip.163.com/newReg1/reg?from=new_topnav",
    ),
    "sina": (
        "https://k.sina.com.cn/article_7059685747_1a4ca417300100lqqo.html",  # self-media
        "http://blog.sina.com.cn/s/blog_66dd17cd0102yhyk.html",
        "http://comment5.news.sina.com.cn/comment/skin/default.html?channel=sh",
        "http://wh.house.sina.com.cn/news/lszs/2005-03-24/10086698.html",  # .html, not .shtml
    ),
    "tencent": (
        "https://mp.weixin.qq.com/s?__biz=MzI2MzEwNTY3OQ==&mid=2648978231&idx=1",  # WeChat
        "http://coral.qq.com/5502403414",  # comments
        "https://new.qq.com/omn/author/5107513",
        "https://new.qq.com/zt/template/?id=FIN2020070400288400",  # topic page
    ),
    "zaobao": (
        "https://www.zaobao.com.sg/sitemap.xml",
        "https://www.zaobao.com.sg/realtime/china/rss.xml",
    ),
    "chinadaily": (
        # www. is the English edition
        "https://www.chinadaily.com.cn/a/202311/17/WS65571297a310d5acd876f404.html",
    ),
}

#: Hosts that belong to a site's domains but are not its news (ignored in the walks).
NOT_NEWS_HOSTS = frozenset({"mp.weixin.qq.com"})

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DATASETS = SHARED / "datasets"


def _cases() -> Iterator[tuple[str, dict]]:
    for jsonl in sorted(DATASETS.glob("*/cases.jsonl")):
        with jsonl.open(encoding="utf-8") as f:
            for line in f:
                yield jsonl.parent.name, json.loads(line)


def _page_links() -> set[str]:
    """Every absolute link in every saved Chinese page (bytes read as GB18030 ⊇ ASCII)."""
    links: set[str] = set()
    href = re.compile(r"""href=["']?(https?://[^"'\s>]+)""")
    for name, case in _cases():
        if case["lang"] != "zh":
            continue
        text = (DATASETS / name / case["html_file"]).read_bytes().decode("gb18030", "replace")
        links.update(html.unescape(u) for u in href.findall(text))
    return links


@pytest.fixture(scope="module")
def datasets_dir() -> Path:
    if not (DATASETS / "README.md").is_file():
        pytest.skip("../shared/datasets is not beside the repository")
    return DATASETS


@pytest.fixture(scope="module")
def page_links(datasets_dir: Path) -> set[str]:
    return _page_links()


# -- the table itself -------------------------------------------------------------


def test_table_keys() -> None:
    assert list(SITES)[:8] == [s.key for s in SURVEYED]
    assert len(SITES) == len(set(SITES)), "duplicate keys"
    assert set(PAPER_SITES) <= set(SITES)
    assert list(SITES)[:4] == ["netease", "sina", "tencent", "zaobao"]


@pytest.mark.parametrize("site", SURVEYED, ids=lambda s: s.key)
def test_every_site_has_a_name_and_start_pages(site: Site) -> None:
    assert site.source.strip()
    assert site.start_urls
    for url in site.start_urls:
        assert site.owns(url), url
        assert site.is_list(site.canonical_url(url)), url
        assert not site.is_article(url), url
    assert site.article_patterns


@pytest.mark.parametrize("site", SURVEYED, ids=lambda s: s.key)
def test_feeds_are_on_site_and_typed(site: Site) -> None:
    for feed in site.feeds:
        assert isinstance(feed, Feed)
        assert feed.kind in ("rss", "sitemap", "json", "jsonp")
        assert site.owns(feed.url), feed.url
        if feed.body is not None:
            json.loads(feed.body)


def test_paper_sites_have_feeds() -> None:
    for key in PAPER_SITES:
        assert SITES[key].feeds, key


def test_display_names() -> None:
    assert [SITES[k].source for k in PAPER_SITES] == [
        "网易新闻",
        "新浪新闻",
        "腾讯新闻",
        "联合早报",
    ]


def test_time_zones() -> None:
    """The eight surveyed rows; the catalogue's rows carry their own zones (Hong Kong,
    Taipei, UTC for broadcasters), checked when the file loads."""
    assert SITES["zaobao"].tz == "Asia/Singapore"
    for site in SURVEYED[:8]:
        if site.key != "zaobao":
            assert site.tz == "Asia/Shanghai", site.key
        # +08:00 everywhere, so a time without an offset means the same instant
        offset = datetime(2020, 1, 1, tzinfo=site.zone).utcoffset()
        assert offset is not None and offset.total_seconds() == 8 * 3600


@pytest.mark.parametrize("site", SURVEYED, ids=lambda s: s.key)
def test_title_stop_words(site: Site) -> None:
    assert site.title_stop_words
    for word in site.title_stop_words:
        assert word[0] in " _|-", f"{word!r} should start with its separator"


def test_title_stop_words_known_to_the_title_filter() -> None:
    """The extractor's default list covers every row, so titles lose the suffix either way."""
    for site in SURVEYED:
        assert set(site.title_stop_words) <= set(DEFAULT_TITLE_STOP_WORDS), site.key


def test_rows_are_validated() -> None:
    with pytest.raises(ValueError, match="anchored"):
        Site("x", "X", ("x.com",), ("https://x.com/",), (r"x\.com/a/\d+",))
    with pytest.raises(ValueError, match="identifier"):
        Site("X-1", "X", ("x.com",), ("https://x.com/",), (r"^https?://x\.com/",))
    with pytest.raises(Exception, match="Mars"):
        Site("x", "X", ("x.com",), ("https://x.com/",), (r"^https?://x\.com/",), tz="Mars/Base")


def test_rows_are_frozen() -> None:
    with pytest.raises(AttributeError):
        SITES["netease"].tz = "UTC"  # type: ignore[misc]


# -- URL patterns on real URLs ------------------------------------------------------


def test_every_site_has_example_articles() -> None:
    assert set(ARTICLES) == {s.key for s in SURVEYED}, "add real article URLs for new rows"


@pytest.mark.parametrize("key", list(ARTICLES))
def test_articles_match_their_site_only(key: str) -> None:
    for url in ARTICLES[key]:
        assert SITES[key].is_article(url), url
        assert not SITES[key].is_list(url), url
        assert site_for_url(url) is SITES[key], url
        for other in tuple(SITES.values()):  # the catalogue's patterns too
            if other.key != key:
                assert not other.is_article(url), (other.key, url)


@pytest.mark.parametrize("key", list(LISTS))
def test_list_pages_are_lists_not_articles(key: str) -> None:
    site = SITES[key]
    for url in LISTS[key]:
        canonical = site.canonical_url(url)
        assert site.is_list(canonical), url
        assert not site.is_article(canonical), url


@pytest.mark.parametrize("key", list(NEITHER))
def test_other_on_site_pages_are_ignored(key: str) -> None:
    site = SITES[key]
    for url in NEITHER[key]:
        canonical = site.canonical_url(url)
        assert site.owns(url), url
        assert not site.is_article(canonical), url
        assert not site.is_list(canonical), url


def test_netease_historic_groups() -> None:
    m = SITES["netease"].match_article("http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html")
    assert m is not None and m.groups() == ("15", "0703", "15", "ATJVVCJR00254TFQ")


def test_off_site_lookalikes_rejected() -> None:
    for url in (
        "https://www.163.com.example.org/news/article/KC12OUHK000189FH.html",
        "https://example.org/https://www.163.com/news/article/KC12OUHK000189FH.html",
        "https://evil-sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml",
        "https://www.zaobao.com.example/realtime/china/story20210627-1161676",
        "ftp://news.163.com/19/0907/09/EOFBHDHQ0001899N.html",
    ):
        assert site_for_url(url) is None or not site_for_url(url).is_article(url), url
        assert not any(site.is_article(url) for site in tuple(SITES.values())), url


def test_site_for_url() -> None:
    assert site_for_url("http://money.163.com/15/0703/15/x.html") is SITES["netease"]
    assert site_for_url("https://163.com/") is SITES["netease"]
    assert site_for_url("https://WWW.ZAOBAO.COM.SG/realtime/china") is SITES["zaobao"]
    assert site_for_url("https://www.zaobao.com/realtime/china") is SITES["zaobao"]
    assert site_for_url("https://i.news.qq.com/web_feed/getPCList") is SITES["tencent"]
    assert site_for_url("https://www.xinhuanet.com/") is SITES["xinhua"]
    assert site_for_url("https://notqq.com/") is None
    assert site_for_url("https://163.com.example.org/") is None
    assert site_for_url("not a url") is None


def test_canonical_url() -> None:
    netease, zaobao = SITES["netease"], SITES["zaobao"]
    assert (
        netease.canonical_url("HTTPS://News.163.COM/20/0704/03/FGLOFC3P0001875P.html?f=x#c")
        == "https://news.163.com/20/0704/03/FGLOFC3P0001875P.html"
    )
    # a list page keeps its query (paging), loses its fragment
    assert (
        zaobao.canonical_url("https://www.zaobao.com.sg/realtime/china?page=2#top")
        == "https://www.zaobao.com.sg/realtime/china?page=2"
    )
    assert zaobao.is_list("https://www.zaobao.com.sg/realtime/china?page=2")
    # a query that is part of no article form stays
    assert netease.canonical_url("https://news.163.com/?b=1&a=2") == "https://news.163.com/?a=2&b=1"


# -- the datasets ------------------------------------------------------------------


def test_dataset_case_urls(datasets_dir: Path) -> None:
    """Every saved page with a known URL on one of our sites is an article of that site."""
    seen: dict[str, int] = {}
    for name, case in _cases():
        url = case["url"]
        if not url or (site := site_for_url(url)) is None:
            continue
        if not site.checked:  # a catalogue row: bbc.com/news is BBC's English, not 中文
            continue
        if re.match(r"https?://([^/]+)", url).group(1) in NOT_NEWS_HOSTS:
            assert not site.is_article(url), url
            continue
        assert site.is_article(site.canonical_url(url)), f"{name}/{case['id']}: {url}"
        seen[site.key] = seen.get(site.key, 0) + 1
    # cx163-zh alone has 62 money.163.com pages
    assert seen.get("netease", 0) >= 60
    assert seen.get("sina", 0) >= 4
    assert seen.get("tencent", 0) >= 1


def test_dataset_links_match_only_their_own_site(page_links: set[str]) -> None:
    """Over every link in the saved pages: an article match is always on the matching site."""
    found: dict[str, int] = {}
    for url in page_links:
        for site in tuple(SITES.values()):
            canonical = site.canonical_url(url)
            if site.is_article(canonical):
                assert site.owns(url), (site.key, url)
                assert site_for_url(url) is site, url
                assert not site.is_list(canonical), url
                found[site.key] = found.get(site.key, 0) + 1
            elif site.is_list(canonical):
                assert site.owns(url), (site.key, url)
    # the saved pages link to many NetEase, Sina and Tencent articles
    assert found.get("netease", 0) > 1000
    assert found.get("sina", 0) > 50
    assert found.get("tencent", 0) > 20


def test_dataset_links_never_mistake_comment_or_photo_pages(page_links: set[str]) -> None:
    netease = SITES["netease"]
    checked = 0
    for url in page_links:
        if netease.owns(url) and re.search(r"//comment\.|/photoview/|/keywords/", url):
            assert not netease.is_article(netease.canonical_url(url)), url
            checked += 1
    assert checked > 50
