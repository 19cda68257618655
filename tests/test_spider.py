"""NewsSpider: feed parsing and callbacks in-process, then real crawls of a local site.

The crawls serve a tiny site from a ``ThreadingHTTPServer`` on 127.0.0.1 (port 0,
bound on construction, so no sleep) and run ``scrapy runspider`` in a child
process (the reactor cannot restart in this one) on a spider module written to
``tmp_path``: a one-row ``NewsSpider`` subclass pointing at the server.  The
server's request log shows what was fetched; the items come from ``-O`` (the
item's ``html`` exports as base64) and the counts from the stats dump.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.exceptions import CloseSpider
from scrapy.http import HtmlResponse, XmlResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

import newsspider.settings as project_settings
from newsspider.errors import UserError
from newsspider.items import ArticleItem
from newsspider.sites import SITES, Feed
from newsspider.spiders.loader import SiteSpiderLoader
from newsspider.spiders.news import (
    DEFAULT_DEPTH_LIMIT,
    FeedLinks,
    NewsSpider,
    feed_links,
    spider_class,
)

REPO = Path(__file__).resolve().parents[1]

# -- feeds (pure) --------------------------------------------------------------------

RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>t</title>
<item><title>a</title><link>
 https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html </link></item>
<item><title>b</title><link>https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html</link></item>
<item><title>c</title><link>https://www.163.com/dy/article/G33O1QTA05372UZS.html</link></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">
<entry><link rel="alternate" href="https://a.example/1"/><link rel="edit" href="https://a.example/e"/></entry>
<entry><link href="https://a.example/2"/></entry></feed>"""

RDF = b"""<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="http://purl.org/rss/1.0/"><item rdf:about="x"><link>https://a.example/r</link></item></rdf:RDF>"""

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://www.zaobao.com.sg/realtime/china/story20221122-1335992</loc></url>
<url><loc>https://www.zaobao.com.sg/news/world/story20221122-1335900</loc></url></urlset>"""

INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://www.zaobao.com.sg/sitemaps/sitemap-202201.xml</loc></sitemap>
<sitemap><loc>https://www.zaobao.com.sg/sitemaps/sitemap-202202.xml</loc></sitemap></sitemapindex>"""


def test_rss_links_are_stripped_and_unique() -> None:
    assert feed_links(RSS, "rss") == FeedLinks(
        pages=(
            "https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html",
            "https://www.163.com/dy/article/G33O1QTA05372UZS.html",
        )
    )


def test_atom_and_rdf() -> None:
    assert feed_links(ATOM, "rss").pages == ("https://a.example/1", "https://a.example/2")
    assert feed_links(RDF, "rss").pages == ("https://a.example/r",)


def test_sitemaps_plain_index_and_gzipped() -> None:
    assert len(feed_links(URLSET, "sitemap").pages) == 2
    index = feed_links(INDEX, "sitemap")
    assert index.pages == () and len(index.sitemaps) == 2
    assert feed_links(gzip.compress(URLSET), "sitemap") == feed_links(URLSET, "sitemap")
    # the root decides, not the label
    assert feed_links(URLSET, "rss") == feed_links(URLSET, "sitemap")


def test_json_list_walks_every_field() -> None:
    body = json.dumps(
        {
            "result": {
                "data": [
                    {"url": "https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml"},
                    {"media": {"link": "//news.sina.com.cn/x.shtml"}, "intime": 1567846800},
                    {"title": "not a url", "img": ["http://n.sinaimg.cn/a.jpg"]},
                ]
            }
        }
    ).encode()
    assert feed_links(body, "json").pages == (
        "https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml",
        "https://news.sina.com.cn/x.shtml",
        "http://n.sinaimg.cn/a.jpg",
    )


def test_jsonp_in_gbk() -> None:
    """NetEase's temp.163.com lists: a callback around JSON, served as GBK."""
    text = 'data_callback([{"title":"中文标题","docurl":"https://www.163.com/news/article/KC12OUHK000189FH.html"}]);'
    links = feed_links(text.encode("gbk"), "jsonp")
    assert links.pages == ("https://www.163.com/news/article/KC12OUHK000189FH.html",)


@pytest.mark.parametrize("kind", ["rss", "sitemap", "json", "jsonp"])
@pytest.mark.parametrize("body", [b"", b"<html><body>404</body></html>", b"\x1f\x8bnot gzip", b"{"])
def test_bad_feeds_give_no_links(kind: Any, body: bytes) -> None:
    assert feed_links(body, kind) == FeedLinks()


# -- spider classes and callbacks (in-process, no reactor) --------------------------


def test_scrapy_list_shows_every_row() -> None:
    loader = SiteSpiderLoader.from_settings(Settings({"SPIDER_MODULES": ["newsspider.spiders"]}))
    assert sorted(loader.list()) == sorted([*SITES, "news"])  # news: a site in no file
    cls = loader.load("netease")
    assert cls.site is SITES["netease"]
    assert cls.allowed_domains == ["163.com"]
    assert cls.__name__ == "NeteaseSpider"
    assert cls.custom_settings == {"DEPTH_LIMIT": DEFAULT_DEPTH_LIMIT} == {"DEPTH_LIMIT": 2}


def test_spider_class_names_and_module() -> None:
    cls = spider_class(SITES["zaobao"], module="somewhere")
    assert (cls.name, cls.__module__, cls.__name__) == ("zaobao", "somewhere", "ZaobaoSpider")


def test_a_spider_needs_a_site() -> None:
    class NoRow(NewsSpider):
        name = "norow"

    with pytest.raises(TypeError, match="Site"):
        NoRow()


def test_arguments() -> None:
    cls = spider_class(SITES["sina"], module=__name__)
    default = cls()
    assert default.start_urls == list(SITES["sina"].start_urls)
    assert default.use_feeds and default.limit is None
    override = cls(
        start_urls=" https://news.sina.com.cn/china/ ,https://news.sina.com.cn/", limit="3"
    )
    assert override.start_urls == ["https://news.sina.com.cn/china/", "https://news.sina.com.cn/"]
    assert not override.use_feeds
    assert override.limit == 3
    for bad in ("0", "-1", "x"):
        with pytest.raises(UserError, match="positive integer"):
            cls(limit=bad)
    with pytest.raises(UserError, match="unknown spider argument -a limt"):
        cls(limt="5")  # a mistyped argument must not start an unbounded crawl
    assert cls(_job="abc").limit is None  # Scrapyd's job id is taken


def test_request_for() -> None:
    spider = spider_class(SITES["netease"], module=__name__)()
    req = spider.request_for("https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html?f=x#c")
    assert req is not None and req.callback == spider.parse_article
    assert req.url == "https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html"
    lst = spider.request_for("https://news.163.com/world/")
    assert lst is not None and lst.callback == spider.parse
    assert spider.request_for("https://news.163.com/world/", lists=False) is None
    assert spider.request_for("https://news.163.com/keywords/8/9/8f9e804c/1.html") is None
    assert (
        spider.request_for("https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml")
        is None
    )


def test_feed_request_posts_a_body() -> None:
    spider = spider_class(SITES["tencent"], module=__name__)()
    (feed,) = SITES["tencent"].feeds
    req = spider.feed_request(feed)
    assert req.method == "POST" and json.loads(req.body)["base_req"] == {"from": "pc"}
    get = spider.feed_request(Feed("https://news.qq.com/x.xml", "rss"))
    assert get.method == "GET" and get.cb_kwargs == {"kind": "rss"}


def _spider(key: str, settings: dict[str, Any] | None = None, **kwargs: Any) -> NewsSpider:
    """A spider of the site ``key`` on the project's settings, ``settings`` on top."""
    cls = spider_class(SITES[key], module=__name__)
    project = {k: getattr(project_settings, k) for k in dir(project_settings) if k.isupper()}
    return cls.from_crawler(get_crawler(cls, {**project, **(settings or {})}), **kwargs)


def _page(url: str, body: bytes, content_type: str = "text/html; charset=utf-8") -> HtmlResponse:
    return HtmlResponse(
        url, body=body, headers={"Content-Type": content_type}, request=Request(url)
    )


def test_parse_article_yields_the_raw_page_and_honours_limit() -> None:
    spider = _spider("netease", limit="1")
    body = "<html><title>标题_网易新闻</title><p>正文</p></html>".encode("gbk")
    url = "https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html"
    out = spider.parse_article(_page(url + "?from=x", body, "text/html; charset=GBK"))
    item = next(out)
    assert isinstance(item, ArticleItem)
    assert (item.url, item.site, item.source) == (url, "netease", "网易新闻")
    assert item.html == body
    assert item.headers == {"Content-Type": "text/html; charset=GBK"}
    assert item.fetched_at.tzinfo is not None and item.fetched_at.utcoffset().total_seconds() == 0
    assert item.title is item.published is None and item.content == ""
    with pytest.raises(CloseSpider):
        next(out)
    # responses still in flight after the limit yield nothing
    assert list(spider.parse_article(_page(url, body))) == []
    assert spider.crawler.stats.get_value("newsspider/articles_found/netease") == 1


def test_parse_article_skips_a_redirect_off_the_pattern() -> None:
    spider = _spider("netease")
    assert list(spider.parse_article(_page("https://news.163.com/", b"<html></html>"))) == []
    assert spider.crawler.stats.get_value("newsspider/redirected_off_pattern/netease") == 1


def test_parse_follows_articles_and_lists_on_site_only() -> None:
    spider = _spider("netease")
    links = [
        "https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html",
        "https://news.163.com/world/",
        "https://news.163.com/keywords/8/9/8f9e804c/1.html",
        "https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml",
        "https://news.163.com/photo.jpg",
    ]
    body = "".join(f'<a href="{u}">x</a>' for u in links).encode()
    response = _page("https://news.163.com/domestic/", body)
    response.meta["depth"] = 0
    requests = list(spider.parse(response))
    assert [(r.url, r.callback.__name__) for r in requests] == [
        (links[0], "parse_article"),
        (links[1], "parse"),
    ]
    assert spider.crawler.stats.get_value("newsspider/list_pages/netease") == 1
    # at depth 1 of 2, a list page's own list links would be dropped: not requested
    response.meta["depth"] = 1
    assert [r.url for r in spider.parse(response)] == [links[0]]


@pytest.mark.parametrize(("cap", "expected"), [(1, ["202202"]), (0, ["202202", "202201"])])
def test_sitemap_index_reads_the_newest_sitemaps(cap: int, expected: list[str]) -> None:
    spider = _spider("zaobao", settings={"NEWS_SITEMAPS_PER_INDEX": cap})
    url = "https://www.zaobao.com.sg/sitemap.xml"
    response = XmlResponse(url, body=INDEX, request=Request(url))
    requests = list(spider.parse_feed(response, "sitemap"))
    assert [r.url[-10:-4] for r in requests] == expected
    assert all(r.cb_kwargs == {"kind": "sitemap"} for r in requests)


# -- end to end: a local site ------------------------------------------------------------

SPIDER_MODULE = '''\
from newsspider.sites import Feed, Site
from newsspider.spiders.news import NewsSpider

BASE = {base!r}


class LocalSpider(NewsSpider):
    """A one-row NewsSpider for the test server (name and domains come from the row)."""

    site = Site(
        key="local",
        source="本地新闻",
        allowed_domains=("127.0.0.1",),
        start_urls=(BASE + "/",),
        # host-agnostic on purpose: only allowed_domains keeps localhost out
        article_patterns=(r"^https?://[^/]+/article/\\d+\\.html",),
        list_patterns=(r"^https?://[^/]+/list/\\d+\\.html$", r"^https?://[^/]+/$"),
        feeds=(Feed(BASE + "/rss.xml", "rss"), Feed(BASE + "/sitemap.xml", "sitemap")),
        title_stop_words=("_本地新闻",),
    )
'''

GBK_ARTICLE = "<html><head><title>第二篇_本地新闻</title></head><body><p>正文二</p></body></html>"


def _html(*hrefs: str) -> bytes:
    links = "".join(f'<li><a href="{h}">link</a></li>' for h in hrefs)
    return f"<!doctype html><html><body><ul>{links}</ul></body></html>".encode()


def _routes(base: str, offsite: str) -> dict[str, tuple[int, dict[str, str], bytes]]:
    """The local site: path → (status, headers, body)."""
    html = {"Content-Type": "text/html; charset=utf-8"}
    xml = {"Content-Type": "application/xml"}
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {
        "/": (
            200,
            html,
            _html(
                "/article/1.html",
                "/article/1.html?from=home",  # same article: canonicalised
                "/article/1.html#comments",
                f"{base}/article/2.html",
                "/list/1.html",
                "/about.html",  # off-pattern
                f"{offsite}/article/99.html",  # off-site, article-shaped
                "/article/7.html",  # redirects off the pattern
            ),
        ),
        "/list/1.html": (
            200,
            html,
            _html("/article/3.html", "/article/1.html", "/list/2.html"),
        ),
        "/list/2.html": (200, html, _html("/article/6.html")),  # too deep by default
        "/rss.xml": (
            200,
            xml,
            (
                f"<rss version='2.0'><channel><item><link>{base}/article/4.html</link></item>"
                f"<item><link>{offsite}/article/98.html</link></item></channel></rss>"
            ).encode(),
        ),
        "/sitemap.xml": (
            200,
            xml,
            (
                "<sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
                f"<sitemap><loc>{base}/sitemap-1.xml</loc></sitemap></sitemapindex>"
            ).encode(),
        ),
        "/sitemap-1.xml": (
            200,
            xml,
            (
                "<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
                f"<url><loc>{base}/article/5.html</loc></url></urlset>"
            ).encode(),
        ),
        "/article/2.html": (
            200,
            {"Content-Type": "text/html; charset=gbk"},
            GBK_ARTICLE.encode("gbk"),
        ),
        "/article/7.html": (302, {"Location": "/moved.html"}, b""),
        "/moved.html": (200, html, _html()),
        "/about.html": (200, html, _html()),
    }
    for n in (1, 3, 4, 5, 6, 8, 98, 99):
        body = f"<html><head><title>第{n}篇</title></head><body><p>正文{n}</p>"
        routes[f"/article/{n}.html"] = (
            200,
            html,
            (body + '<a href="/article/8.html">x</a>').encode(),
        )
    return routes


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        status, headers, body = self.server.routes.get(
            self.path.split("?")[0].split("#")[0], (404, {}, b"not found")
        )
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    routes: dict[str, tuple[int, dict[str, str], bytes]]
    requests: list[str]


@pytest.fixture
def site_server() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)  # bound now: no sleep needed
    port = server.server_address[1]
    server.routes = _routes(f"http://127.0.0.1:{port}", f"http://localhost:{port}")
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass
class Crawl:
    items: list[dict[str, Any]]
    stats: dict[str, str]
    log: str
    requests: list[str] = field(default_factory=list)

    @property
    def articles(self) -> set[str]:
        return {re.sub(r"^https?://[^/]+", "", i["url"]) for i in self.items}

    def stat(self, name: str) -> int:
        return int(self.stats.get(name, "0"))


def crawl(server: _Server, tmp_path: Path, *args: str) -> Crawl:
    base = f"http://127.0.0.1:{server.server_address[1]}"
    module = tmp_path / "localspider.py"
    module.write_text(SPIDER_MODULE.format(base=base), encoding="utf-8")
    out = tmp_path / "items.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "scrapy.cmdline",
        "runspider",
        str(module),
        "-O",
        f"{out}:jsonlines",
        "-s",
        "ROBOTSTXT_OBEY=False",
        "-s",
        "DOWNLOAD_DELAY=0",
        "-s",
        "AUTOTHROTTLE_ENABLED=False",
        "-s",
        "ITEM_PIPELINES={}",
        "-s",
        "TELNETCONSOLE_ENABLED=False",
        "-s",
        "REMOTE_CONTROL_ENABLED=False",
        "-s",
        "LOG_LEVEL=DEBUG",
        *args,
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines() if line.strip()]
    stats = dict(re.findall(r"'([\w/.-]+)': '?([\w.-]+)'?,?\n", proc.stderr))
    return Crawl(items, stats, proc.stderr, list(server.requests))


def test_crawl_follows_the_site_table(site_server: _Server, tmp_path: Path) -> None:
    result = crawl(site_server, tmp_path)
    port = site_server.server_address[1]
    # two linked from the start page, one via the list page, one from RSS, one
    # via the sitemap index; 7 redirected away, 6 too deep, 8 only linked from an article
    assert result.articles == {f"/article/{n}.html" for n in (1, 2, 3, 4, 5)}
    assert len(result.items) == 5
    for path in ("/", "/list/1.html", "/rss.xml", "/sitemap.xml", "/sitemap-1.xml"):
        assert result.requests.count(path) == 1, path
    # one fetch per article however it was linked
    assert result.requests.count("/article/1.html") == 1
    assert not [p for p in result.requests if "?" in p]
    # never fetched: off-pattern, beyond the depth limit, off-site, linked only from articles
    for path in ("/about.html", "/list/2.html", "/article/6.html", "/article/8.html"):
        assert path not in result.requests, path
    assert "/article/98.html" not in result.requests
    assert "/article/99.html" not in result.requests
    assert f"localhost:{port}" not in result.log
    # the list page was followed, not stored
    assert "/list/1.html" not in result.articles
    assert result.stat("newsspider/list_pages/local") == 2  # start page + list page
    assert result.stat("newsspider/articles_found/local") == 5
    assert result.stat("newsspider/redirected_off_pattern/local") == 1
    assert result.stat("newsspider/feed_links/local") == 3
    assert result.stats["finish_reason"] == "finished"
    assert re.search(r"list page http://127\.0\.0\.1:\d+/list/1\.html \(depth 1\)", result.log)

    item = next(i for i in result.items if i["url"].endswith("/article/2.html"))
    assert item["site"] == "local" and item["source"] == "本地新闻"
    assert base64.b64decode(item["html"]) == GBK_ARTICLE.encode("gbk")  # bytes as served
    assert item["headers"]["Content-Type"] == "text/html; charset=gbk"
    assert datetime.fromisoformat(item["fetched_at"]).utcoffset().total_seconds() == 0
    assert item["title"] is None and item["content"] == ""


def test_crawl_limit(site_server: _Server, tmp_path: Path) -> None:
    result = crawl(site_server, tmp_path, "-a", "limit=1")
    assert len(result.items) == 1
    assert result.stat("newsspider/articles_found/local") == 1
    assert result.stats["finish_reason"] == "limit"


def test_crawl_start_urls_override(site_server: _Server, tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{site_server.server_address[1]}"
    result = crawl(
        site_server,
        tmp_path,
        "-a",
        f"start_urls={base}/list/1.html,{base}/article/4.html",
    )
    # from list 1 (depth 0): 3, 1 and, via list 2, 6; plus 4 given as an article URL
    assert result.articles == {f"/article/{n}.html" for n in (1, 3, 4, 6)}
    for path in ("/", "/rss.xml", "/sitemap.xml"):  # neither the row's start pages nor feeds
        assert path not in result.requests, path
