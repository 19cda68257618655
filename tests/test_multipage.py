"""Multi-page articles: pagers found, pages fetched in order and stored as one article.

Two halves. The pure half reads saved pages written in the markup of five outlets' paged
articles (``tests/fixtures/multipage``, README there: 人民网 ``.zdfy``, 新浪 ``#artibody``
``p.page``, 新华网 ``#div_currpage``, 中新网 ``#function_code_page``, 腾讯 ``#ArtPLink``
with its 全文 link): each page's next page is found, the last page has none, and the pages'
extracted bodies joined match the story's text in order with no pager line. The crawl half
runs ``scrapy runspider`` on a local site of 1-, 3- and 5-page articles (one reached through
its page 3 first, one with a 全文 link, one whose page 3 fails) and checks the rows; then
``scrapy reextract`` over the crawl's WARC gives the same rows again.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import pickle
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import pytest
from lxml import html as lxml_html
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.request import request_from_dict
from scrapy.utils.test import get_crawler
from sqlalchemy import select, update
from sqlalchemy.orm import Session
from twisted.python.failure import Failure

import newsspider.settings as project_settings
from newsspider.evaluation import score_body
from newsspider.extraction.article import extract_article
from newsspider.extraction.pager import (
    first_page_url,
    join_pages,
    might_have_pager,
    next_page_url,
    page_number,
    same_article,
    single_page_url,
    strip_pager_lines,
)
from newsspider.items import ArticleItem, _export_pages
from newsspider.pipelines.extract import ExtractionPipeline
from newsspider.sites import Site
from newsspider.sites.table import SitesFileError, site_from_table
from newsspider.spiders.news import NewsSpider, spider_class
from newsspider.storage import engine_for
from newsspider.storage.db import page_urls_json
from newsspider.storage.models import Article, SiteLineStats
from tests.cdxserver import (
    COLLECTION,
    NO_FUZZY_RULES,
    PLAIN_COLLECTION,
    CdxCollection,
    pywb_bin,
    write_zipnum,
)
from tests.cdxserver import _index as cdx_index
from tests.cdxserver import serve as serve_cdx
from tests.localserver import REPO, FakeStats, Page, article_html, links_page, run_crawl, serve

FIXTURES = Path(__file__).parent / "fixtures" / "multipage"
OUTLETS = ("people", "sina", "xinhua", "chinanews", "qq")
PAGER_WORDS = ("下一页", "上一页", "下页", "全文")


def _outlet(name: str) -> dict:
    return json.loads((FIXTURES / name / "pages.json").read_text("utf-8"))


# -- URL forms -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "first", "n"),
    [
        ("http://news.sina.com.cn/c/sd/2013-11-08/165728658916_2.shtml",
         "http://news.sina.com.cn/c/sd/2013-11-08/165728658916.shtml", 2),
        ("http://www.xinhuanet.com/politics/2019-03/05/c_1124194454_3.htm",
         "http://www.xinhuanet.com/politics/2019-03/05/c_1124194454.htm", 3),
        ("http://hm.people.com.cn/n1/2021/0823/c42272-32203857-2.html",
         "http://hm.people.com.cn/n1/2021/0823/c42272-32203857.html", 2),
        ("http://a.cn/2024/0501/index_2.htm", "http://a.cn/2024/0501/index.htm", 2),
        ("http://a.cn/show.php?id=7&page=3", "http://a.cn/show.php?id=7", 3),
        ("http://a.cn/show.php?p=2&id=7", "http://a.cn/show.php?id=7", 2),
        # first pages and ids are not continuations
        ("http://www.xinhuanet.com/politics/2019-03/05/c_1124194454.htm", None, 1),
        ("http://cd.qq.com/a/20131119/002713.htm", None, 1),
        ("http://a.cn/show.php?id=7&page=1", None, 1),
        ("http://cd.qq.com/a/20131119/002713_all.htm", None, 1),
    ],
)  # fmt: skip
def test_continuation_urls_map_to_their_first_page(url, first, n):
    assert first_page_url(url) == first
    assert page_number(url) == n
    if first:
        assert same_article(url, first)


def test_other_articles_are_not_pages_of_one():
    assert not same_article("http://a.cn/x/123.html", "http://a.cn/x/124_2.html")
    assert not same_article("http://a.cn/show.php?id=7", "http://a.cn/show.php?id=8&page=2")


# -- the outlets' pagers ----------------------------------------------------------------------


@pytest.mark.parametrize("outlet", OUTLETS)
def test_each_page_leads_to_the_next_and_the_last_to_none(outlet):
    meta = _outlet(outlet)
    pages = meta["pages"]
    for k, page in enumerate(pages):
        data = (FIXTURES / outlet / page["file"]).read_bytes()
        following = pages[k + 1]["url"] if k + 1 < len(pages) else None
        if following is not None:  # the crawl's byte test lets every paged page through
            assert might_have_pager(data, page["url"])
        seen = [p["url"] for p in pages[: k + 1]]
        assert next_page_url(lxml_html.fromstring(data), page["url"], seen=seen) == following


@pytest.mark.parametrize("outlet", OUTLETS)
def test_pages_joined_are_the_story_in_order_without_the_pager(outlet):
    meta = _outlet(outlet)
    texts, first = [], None
    for page in meta["pages"]:
        article = extract_article((FIXTURES / outlet / page["file"]).read_bytes(), page["url"])
        first = first or article
        texts.append(article.text)
    body = join_pages(texts)
    gold = "\n".join(p["text"] for p in meta["pages"])
    assert score_body(body, gold).f1 >= 0.98
    # in order: each page's first paragraph comes after the previous page's
    starts = [body.index(p["text"].split("\n", 1)[0]) for p in meta["pages"]]
    assert starts == sorted(starts)
    assert not any(word in body for word in PAGER_WORDS)
    assert first.title and first.published is not None


def test_tencent_offers_a_single_page_version():
    meta = _outlet("qq")
    for page in meta["pages"]:
        tree = lxml_html.fromstring((FIXTURES / "qq" / page["file"]).read_bytes())
        assert single_page_url(tree, page["url"]) == meta["single"]["url"]
    single = extract_article((FIXTURES / "qq" / "single.html").read_bytes(), meta["single"]["url"])
    assert score_body(single.text, meta["single"]["text"]).f1 >= 0.98
    # the other outlets offer none
    for outlet in ("people", "sina", "xinhua", "chinanews"):
        page = _outlet(outlet)["pages"][0]
        tree = lxml_html.fromstring((FIXTURES / outlet / page["file"]).read_bytes())
        assert single_page_url(tree, page["url"]) is None


def test_a_site_rule_finds_what_the_general_rule_misses():
    # a pager of images and opaque URLs: no 下一页 text, no numbered form
    page = (
        "<html><body><div id='text'><p>正文</p></div><div id='pg'>"
        "<a href='/story/8812.html'><img alt='prev'></a>"
        "<a class='go-on' href='/story/8814.html'><img alt='more'></a></div></body></html>"
    )
    url = "http://a.cn/story/8813.html"
    assert next_page_url(page, url) is None
    xpath = "//div[@id='pg']/a[@class='go-on']/@href"
    assert next_page_url(page, url, xpath) == "http://a.cn/story/8814.html"
    numbered = (
        "<html><body><a href='/s/88-p1.html'>a</a><a href='/s/88-p2.html'>b</a>"
        "<a href='/s/88-p3.html'>c</a></body></html>"
    )
    assert next_page_url(numbered, "http://a.cn/s/88-p1.html", r"/s/88-p(\d+)\.html") == (
        "http://a.cn/s/88-p2.html"
    )
    assert next_page_url(numbered, "http://a.cn/s/88-p3.html", r"/s/88-p(\d+)\.html") is None


def test_next_page_rule_is_validated_in_the_sites_file():
    row = {
        "source": "测试",
        "allowed_domains": ["a.cn"],
        "start_urls": ["http://a.cn/"],
        "article_patterns": [r"^https?://a\.cn/\d+\.html"],
    }
    assert site_from_table("f", "a", {**row, "next_page": "//a[@rel='next']"}, "f").next_page
    with pytest.raises(SitesFileError, match=r"next_page.*XPath lxml accepts"):
        site_from_table("f", "a", {**row, "next_page": "//a[@rel="}, "f")
    with pytest.raises(SitesFileError, match=r"next_page.*regex"):
        site_from_table("f", "a", {**row, "next_page": "_(\\d+.html"}, "f")


def test_pager_lines_are_stripped_and_story_lines_kept():
    text = "第一段正文。\n上一页 1 2 3 下一页\n第二段正文。\n共3页\n1\n2\n下一页>>\n3\n结尾。"
    assert strip_pager_lines(text) == "第一段正文。\n第二段正文。\n结尾。"
    # a lone number is a story's line (a list item, a score), not a pager
    assert strip_pager_lines("比分是\n3\n全场结束") == "比分是\n3\n全场结束"
    # a line every page prints (the template's editor line) is kept once
    assert join_pages(["甲。\n（责编：王）", "乙。\n（责编：王）", "丙。\n（责编：王）"]) == (
        "甲。\n（责编：王）\n乙。\n丙。"
    )
    assert page_urls_json(["http://a.cn/1.html", "http://a.cn/1_2.html"]) == (
        '["http://a.cn/1.html", "http://a.cn/1_2.html"]'
    )
    assert page_urls_json(()) is None


# -- a crawl of a local site ----------------------------------------------------------------


def _paras(key: str, k: int) -> list[str]:
    return [
        f"{key}文章第{k}页第{i}段，记者调查了当地{key}项目在第{k}阶段的推进情况，"
        f"相关部门介绍第{i}项措施已经落实，居民对{key}第{k}页所述变化普遍表示认可。"
        for i in range(1, 4)
    ]


def _pager(key: str, k: int, n: int, *, full: bool = False) -> str:
    def href(j: int) -> str:
        return f"/article/{key}.html" if j == 1 else f"/article/{key}_{j}.html"

    links = [f'<a href="{href(k - 1)}">上一页</a>'] if k > 1 else []
    links += [
        f"<span>{j}</span>" if j == k else f'<a href="{href(j)}">{j}</a>' for j in range(1, n + 1)
    ]
    if k < n:
        links.append(f'<a href="{href(k + 1)}">下一页</a>')
    if full:
        links.append(f'<a href="/article/{key}_all.html">阅读全文</a>')
    return '<div class="page">' + " ".join(links) + "</div>"


class _Site:
    """The local site: ``n`` pages per article key; what the crawl must store."""

    ARTICLES: ClassVar[dict[str, int]] = {
        "one": 1,
        "three": 3,
        "five": 5,
        "late": 4,
        "full": 3,
        "broken": 4,
    }

    def __init__(self) -> None:
        self.routes: dict[str, Page] = {}
        self.gold: dict[str, tuple[str, list[str]]] = {}
        for key, n in self.ARTICLES.items():
            pages = []
            for k in range(1, n + 1):
                extra = _pager(key, k, n, full=key == "full") if n > 1 else ""
                path = f"/article/{key}.html" if k == 1 else f"/article/{key}_{k}.html"
                html = article_html(key, _paras(key, k), extra=extra)
                self.routes[path] = Page(html.encode())
                pages.append(path)
            if key == "full":
                allp = [p for k in range(1, n + 1) for p in _paras(key, k)]
                self.routes[f"/article/{key}_all.html"] = Page(article_html(key, allp).encode())
                pages = [f"/article/{key}_all.html"]
            if key == "broken":  # page 3 answers 404: pages 1 and 2 are stored
                self.routes["/article/broken_3.html"] = Page(b"gone", status=404)
                pages = pages[:2]
            text = "\n".join(p for k in range(1, len(pages) + 1) for p in _paras(key, k))
            if key == "full":
                text = "\n".join(p for k in range(1, n + 1) for p in _paras(key, k))
            self.gold[key] = (text, pages)
        # the list links "late" only through its page 3
        links = [f"/article/{k}.html" for k in self.ARTICLES if k != "late"]
        self.routes["/"] = Page(links_page("/list/news.html"))
        self.routes["/list/news.html"] = Page(links_page(*links, "/article/late_3.html"))


def _rows(url: str) -> dict[str, tuple]:
    with Session(engine_for(url)) as s:
        got = s.execute(select(Article.url, Article.title, Article.content, Article.page_urls))
        return {r.url: (r.title, r.content, r.page_urls) for r in got}


@pytest.fixture
def crawled(tmp_path: Path):
    site = _Site()
    with serve(site.routes) as server:
        db = f"sqlite:///{tmp_path / 'corpus.db'}"
        warc = tmp_path / "crawl.warc.gz"
        result = run_crawl(server, tmp_path, db, f"WARC_OUTPUT={warc}")
        yield site, server, db, warc, result


def test_crawl_stores_each_paged_article_once_under_its_first_page(crawled):
    site, server, db, _, result = crawled
    rows = _rows(db)
    base = server.base
    assert set(rows) == {f"{base}/article/{k}.html" for k in site.ARTICLES}
    for key, (gold, pages) in site.gold.items():
        title, content, page_urls = rows[f"{base}/article/{key}.html"]
        assert score_body(content, gold).f1 >= 0.98, key
        assert not any(word in content for word in PAGER_WORDS), key
        assert title == f"第{key}篇新闻标题"
        if len(pages) > 1 or key == "full":
            assert json.loads(page_urls) == [base + p for p in pages], key
        else:
            assert page_urls is None, key
    # each page fetched once, in order, and page 2..n never requested as an article of its own
    # the list's link to page 3 was taken to page 1; page 3 came in the chain
    assert result.requested("/article/late.html") == 1
    assert result.requested("/article/late_3.html") == 1
    assert result.requested("/article/five_5.html") == 1
    assert result.requested("/article/full_2.html") == 0  # the 全文 page was read instead
    assert result.stat("newsspider/multipage_articles/local") == 5
    assert result.stat("newsspider/multipage_pages/local") == 3 + 5 + 4 + 1 + 2
    assert "page 3 of" in result.log and "storing pages 1-2" in result.log
    # the line table counted each article once, however many pages it has
    with Session(engine_for(db)) as s:
        assert s.scalar(select(SiteLineStats.RC).where(SiteLineStats.site == "local")) == 6


def test_reextract_over_the_crawl_warc_gives_the_same_rows(crawled):
    _, _, db, warc, _ = crawled
    before = _rows(db)
    with Session(engine_for(db)) as s, s.begin():
        s.execute(update(Article).values(content="旧正文", raw_text="旧正文", content_md5="0" * 32))
    out = subprocess.run(
        [sys.executable, "-m", "scrapy", "reextract", str(warc), "-s", f"DATABASE_URL={db}",
         "-s", "REEXTRACT_WORKERS=1"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert _rows(db) == before
    assert f"{len(before)} rewritten" in out.stdout


# -- the spider, response by response ---------------------------------------------------------

PAGED = Site(
    key="paged",
    source="分页新闻",
    allowed_domains=("a.cn",),
    start_urls=("http://a.cn/",),
    article_patterns=(r"^https?://a\.cn/n/\d+(?:_\d+)?\.shtml",),
)


def _paged_spider(**settings: Any) -> NewsSpider:
    cls = spider_class(PAGED, module=__name__)
    project = {k: getattr(project_settings, k) for k in dir(project_settings) if k.isupper()}
    return cls.from_crawler(get_crawler(cls, {**project, **settings}))


def _paged_page(n: int, k: int, *, full: bool = False) -> bytes:
    def href(j: int) -> str:
        return "/n/7.shtml" if j == 1 else f"/n/7_{j}.shtml"

    links = [f'<a href="{href(j)}">{j}</a>' for j in range(1, n + 1) if j != k]
    if k < n:
        links.append(f'<a href="{href(k + 1)}">下一页</a>')
    if full:
        links.append('<a href="/n/7_all.shtml">单页阅读</a>')
    paras = "".join(f"<p>{p}</p>" for p in _paras("seven", k))
    return (
        f"<html><head><title>七</title></head><body><div id='artibody'>{paras}"
        f"<p class='page'>{' '.join(links)}</p></div></body></html>"
    ).encode()


def _answer(request: Request, body: bytes, status: int = 200) -> HtmlResponse:
    return HtmlResponse(
        request.url, status=status, body=body, request=request,
        headers={"Content-Type": "text/html; charset=utf-8"},
    )  # fmt: skip


def test_spider_follows_the_pages_and_stops_at_multipage_max_pages(caplog):
    caplog.set_level(logging.INFO)
    spider = _paged_spider(MULTIPAGE_MAX_PAGES=3)
    first = "http://a.cn/n/7.shtml"
    out = list(spider.parse_article(_answer(Request(first), _paged_page(5, 1))))
    for k in (2, 3):
        (request,) = out
        assert isinstance(request, Request) and request.url == f"http://a.cn/n/7_{k}.shtml"
        assert request.dont_filter and request.meta["depth_reset"]
        out = list(request.callback(_answer(request, _paged_page(5, k))))
    (item,) = out
    assert isinstance(item, ArticleItem)
    assert item.url == first and item.html == _paged_page(5, 1)
    assert [u for u, _ in item.pages] == ["http://a.cn/n/7_2.shtml", "http://a.cn/n/7_3.shtml"]
    assert item.page_urls == (first, "http://a.cn/n/7_2.shtml", "http://a.cn/n/7_3.shtml")
    assert "more than 3 pages (MULTIPAGE_MAX_PAGES)" in caplog.text
    stats = spider.crawler.stats
    assert stats.get_value("newsspider/multipage_articles/paged") == 1
    assert stats.get_value("newsspider/multipage_pages/paged") == 3
    assert _export_pages(item.pages)[0] == {
        "url": "http://a.cn/n/7_2.shtml", "html": base64.b64encode(_paged_page(5, 2)).decode(),
    }  # fmt: skip


def test_spider_with_one_page_allowed_stores_first_pages_alone():
    spider = _paged_spider(MULTIPAGE_MAX_PAGES=1)
    (item,) = spider.parse_article(_answer(Request("http://a.cn/n/7.shtml"), _paged_page(3, 1)))
    assert isinstance(item, ArticleItem) and item.pages == () and item.page_urls == ()
    # and continuation links are not taken to their first page
    assert spider.request_for("http://a.cn/n/7_3.shtml").url == "http://a.cn/n/7_3.shtml"


def test_links_and_start_urls_to_page_n_ask_for_page_1():
    spider = _paged_spider()
    assert spider.request_for("http://a.cn/n/7_3.shtml").url == "http://a.cn/n/7.shtml"
    spider.start_urls = ["http://a.cn/n/7_3.shtml"]

    async def starts() -> list[str]:
        return [r.url async for r in spider.start()]

    assert asyncio.run(starts()) == ["http://a.cn/n/7.shtml"]


def test_a_failed_page_ends_the_article_at_the_page_before(caplog):
    spider = _paged_spider()
    (request,) = spider.parse_article(_answer(Request("http://a.cn/n/7.shtml"), _paged_page(4, 1)))
    (request,) = request.callback(_answer(request, _paged_page(4, 2)))
    failure = Failure(HttpError(_answer(request, b"gone", 404)))
    failure.request = request
    (item,) = request.errback(failure)
    assert item.page_urls == ("http://a.cn/n/7.shtml", "http://a.cn/n/7_2.shtml")
    assert "page 3 of http://a.cn/n/7.shtml failed: storing pages 1-2" in caplog.text


def test_a_single_page_version_is_preferred_and_the_pages_read_when_it_fails():
    spider = _paged_spider()
    first = "http://a.cn/n/7.shtml"
    (request,) = spider.parse_article(_answer(Request(first), _paged_page(3, 1, full=True)))
    assert request.url == "http://a.cn/n/7_all.shtml"
    (item,) = request.callback(_answer(request, b"<html><body><p>all</p></body></html>"))
    assert item.url == first and item.page_urls == ("http://a.cn/n/7_all.shtml",)
    failure = Failure(HttpError(_answer(request, b"", 500)))
    failure.request = request
    (fallback,) = request.errback(failure)
    assert fallback.url == "http://a.cn/n/7_2.shtml" and fallback.callback == spider.parse_next_page


# -- real saved pages ---------------------------------------------------------------------------


def test_real_paged_articles_in_the_datasets_are_found(datasets):
    """Every saved page with a URL (518 in the datasets folder): the byte test lets through
    the paged ones, and exactly the real multi-page articles get a next page: two NetEase
    money articles (``_2.html``, their 全文 ``_all.html``) and one Guancha article
    (``_2.shtml``); no other page, so no single-page article is glued to another."""
    found: dict[str, tuple[str | None, str | None]] = {}
    for folder in sorted(p for p in datasets.iterdir() if p.is_dir()):
        for case in map(json.loads, (folder / "cases.jsonl").open(encoding="utf-8")):
            url = case.get("url")
            if not url:
                continue
            raw = (folder / case["html_file"]).read_bytes()
            if not (might_have_pager(raw, url)):
                continue
            tree = lxml_html.fromstring(raw)
            if (following := next_page_url(tree, url, seen=[url])) is not None:
                found[url] = (following, single_page_url(tree, url))
    netease = "http://money.163.com/15/0704/"
    assert found == {
        f"{netease}09/ATLVN28E00254IU1.html": (
            f"{netease}09/ATLVN28E00254IU1_2.html", f"{netease}09/ATLVN28E00254IU1_all.html"
        ),
        f"{netease}10/ATM2AF3B00253B0H.html": (
            f"{netease}10/ATM2AF3B00253B0H_2.html", f"{netease}10/ATM2AF3B00253B0H_all.html"
        ),
        "https://m.guancha.cn/WangWen/2019_09_07_516891.shtml": (
            "https://m.guancha.cn/WangWen/2019_09_07_516891_2.shtml", None
        ),
    }  # fmt: skip


def _local_sites_file(tmp: Path, base: str) -> Path:
    sites = tmp / "sites.toml"
    sites.write_text(
        "[local]\n"
        'source = "本地新闻"\n'
        'allowed_domains = ["127.0.0.1"]\n'
        f'start_urls = ["{base}/"]\n'
        "article_patterns = ['^https?://[^/]+/article/[\\w.-]+\\.html']\n"
        "title_stop_words = ['_本地新闻']\n",
        "utf-8",
    )
    return sites


def test_backfill_warc_of_the_crawl_joins_each_articles_captures(crawled):
    """``scrapy backfill --warc`` over the crawl's WARC (every page a record of its own, the
    404 of page 3 among them) into a fresh corpus stores the same rows as the crawl."""
    _, server, db, warc, _ = crawled
    tmp = warc.parent
    sites = _local_sites_file(tmp, server.base)
    fresh = f"sqlite:///{tmp / 'backfill.db'}"
    out = subprocess.run(
        [sys.executable, "-m", "scrapy", "backfill", "local", "--warc", str(warc),
         "-s", f"DATABASE_URL={fresh}", "-s", f"SITES_FILE={sites}", "-s", "LOG_LEVEL=INFO"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert _rows(fresh) == _rows(db)
    assert "paged article" in out.stderr  # the broken one: its page 3 is a 404 record


def test_backfill_from_a_cdx_index_reads_each_page_capture(crawled):
    """``scrapy backfill --cdx --data`` over the crawl's WARC indexed by pywb (the CDX
    server Common Crawl's is built on): each paged article's next pages are read from their
    own captures, or its 全文 version's capture when the index lists one, and the corpus
    gets the crawl's rows (the article whose page 3 is a 404 has no capture of it)."""
    if pywb_bin() is None:
        pytest.skip("pywb is not installed (tests/cdxserver.py says how)")
    _, server, db, warc, _ = crawled
    tmp = warc.parent
    root = tmp / "cdx"
    data = root / "data"
    data.mkdir(parents=True)
    shutil.copy(warc, data / warc.name)
    index = root / "index"
    index.mkdir()
    cdxj = index / "captures.cdxj"
    cdx_index(pywb_bin(), data, cdxj)
    # SURT keys without the test server's port, so the row's domain (127.0.0.1) lists them
    lines = [re.sub(rb"^([^)]*):\d+\)", rb"\1)", line) for line in cdxj.read_bytes().splitlines()]
    cdxj.write_bytes(b"\n".join(sorted(lines)) + b"\n")
    idx = write_zipnum(cdxj, index, 3)
    (root / "rules.yaml").write_text(NO_FUZZY_RULES, "utf-8")
    (root / "config.yaml").write_text(
        f"rules_file: {root / 'rules.yaml'}\ncollections:\n  {COLLECTION}:\n    index:\n"
        f"      type: zipnum\n      path: {idx}\n      max_blocks: 2\n"
        f"  {PLAIN_COLLECTION}:\n    index: {cdxj}\n",
        "utf-8",
    )
    sites = _local_sites_file(tmp, server.base)
    fresh = f"sqlite:///{tmp / 'cdx.db'}"
    with serve_cdx(CdxCollection(root, [], [data / warc.name], cdxj, 3, 2)) as coll:
        today = datetime.now(UTC).date()
        out = subprocess.run(
            [sys.executable, "-m", "scrapy", "backfill", "local",
             "--since", (today - timedelta(days=2)).isoformat(),
             "--until", (today + timedelta(days=1)).isoformat(),
             "--cdx", coll.cdx_url, "--data", coll.data_url,
             "-s", f"DATABASE_URL={fresh}", "-s", f"SITES_FILE={sites}",
             "-s", "DOWNLOAD_DELAY=0", "-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=INFO"],
            cwd=REPO, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert set(_rows(fresh)) == set(_rows(db)), out.stderr[-5000:]
    assert _rows(fresh) == _rows(db)
    base = server.base
    assert "page 3 of " + base + "/article/broken.html not in the archive" in out.stderr


def test_a_continuation_request_survives_a_job_directory():
    """``scrapy nightly`` keeps its queue in a JOBDIR (pickled requests): a page request of
    an article in progress comes back with its pages and callbacks."""
    spider = _paged_spider()
    (request,) = spider.parse_article(_answer(Request("http://a.cn/n/7.shtml"), _paged_page(3, 1)))
    stored = pickle.dumps(request.to_dict(spider=spider))
    back = request_from_dict(pickle.loads(stored), spider=spider)
    assert (back.url, back.callback, back.errback) == (
        "http://a.cn/n/7_2.shtml",
        spider.parse_next_page,
        spider.next_page_failed,
    )
    assert back.meta["multipage"]["pages"] == [("http://a.cn/n/7.shtml", _paged_page(3, 1))]


class _Stats(FakeStats):
    def set_value(self, key: str, value: Any) -> None:
        self[key] = value


def test_the_extraction_pipeline_joins_the_pages_of_an_item():
    """Each further page extracted by the crawl's method, in the worker processes, the
    bodies joined in order; a page that is no HTML adds nothing; the record is page 1's."""
    meta = _outlet("sina")
    first, *rest = meta["pages"]
    pages = [(p["url"], (FIXTURES / "sina" / p["file"]).read_bytes()) for p in rest]
    pages.insert(2, ("http://news.sina.com.cn/c/sd/2013-11-08/x.jpg", b"\x89PNG\r\n\x1a\n"))
    item = ArticleItem(
        url=first["url"],
        site="sina",
        source="新浪新闻",
        html=(FIXTURES / "sina" / first["file"]).read_bytes(),
        headers={"Content-Type": "text/html; charset=utf-8"},
        fetched_at=datetime.now(UTC),
        pages=tuple(pages),
        page_urls=(first["url"], *(u for u, _ in pages)),
    )
    pipe = ExtractionPipeline(_Stats(), "blockstats", workers=1)
    pipe.open_spider()
    try:
        out = asyncio.run(pipe.process_item(item))
    finally:
        pipe.close_spider()
    gold = "\n".join(p["text"] for p in meta["pages"])
    assert score_body(out.raw_text, gold).f1 >= 0.98
    assert out.title == "深度：一座老工业城市的转身"
    assert out.published == datetime(2013, 11, 8, 8, 57, tzinfo=UTC)
