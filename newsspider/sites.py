"""The site table: every fact about a target site, as data, not code.

Each :class:`Site` row records what a survey of the site's public pages found:
its start pages, feeds and sitemaps, and the URL forms of its articles and list
pages. A spider is generated per row (``newsspider/spiders/sites.py``), so
adding a site means adding a row here, not writing a spider.

URL patterns are Python regexes anchored with ``^https?://`` and matched as a
prefix (``re.match``), so a query string or fragment after the matched part does
not matter.  They are compiled once per pattern tuple and cached.

Where saved pages of an evaluation dataset showed a URL form the survey did not
list, the form is added with a ``# seen:`` comment naming the dataset, so it can
be told apart from the surveyed forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal
from urllib.parse import urlsplit, urlunsplit
from zoneinfo import ZoneInfo

from w3lib.url import canonicalize_url

__all__ = [
    "PAPER_SITES",
    "ROWS",
    "SITES",
    "Feed",
    "FeedKind",
    "Site",
    "site_for_url",
]

#: How a feed's body is read: ``rss`` (RSS 2.0/1.0 or Atom) and ``sitemap``
#: (urlset or sitemap index) are XML; ``json`` is a JSON list API and ``jsonp``
#: the same wrapped in a callback.  URLs in JSON are found by walking the whole
#: document, so no per-API field names are needed.
FeedKind = Literal["rss", "sitemap", "json", "jsonp"]


@dataclass(frozen=True, slots=True)
class Feed:
    """One feed, sitemap or JSON list API of a site.

    ``body`` set means the API wants a POST with that JSON body (Tencent).
    """

    url: str
    kind: FeedKind
    body: str | None = None


@cache
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compile a pattern tuple once: rows are frozen, so the tuple is a stable key."""
    return tuple(re.compile(p) for p in patterns)


@dataclass(frozen=True, slots=True)
class Site:
    """One target site.

    ``article_patterns`` hold the current URL forms first, then the historic
    ones; ``list_patterns`` the section and list pages a crawl
    follows but never stores.  ``tz`` is the zone of times printed without an
    offset.  ``title_stop_words`` are the suffixes the site appends to
    ``<title>`` (Zou & Zhong §1.2.3's stop words), cut by the title filter.
    """

    key: str
    source: str
    allowed_domains: tuple[str, ...]
    start_urls: tuple[str, ...]
    article_patterns: tuple[str, ...]
    list_patterns: tuple[str, ...] = ()
    feeds: tuple[Feed, ...] = ()
    tz: str = "Asia/Shanghai"
    title_stop_words: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Fail at import, not mid-crawl, on a malformed row."""
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.key):
            raise ValueError(f"site key {self.key!r} is not a lowercase identifier")
        for pattern in self.article_patterns + self.list_patterns:
            if not pattern.startswith("^https?://"):
                raise ValueError(f"{self.key}: pattern {pattern!r} is not anchored")
        _compiled(self.article_patterns)
        _compiled(self.list_patterns)
        ZoneInfo(self.tz)

    @property
    def zone(self) -> ZoneInfo:
        """``tz`` as a tzinfo (ZoneInfo caches its instances)."""
        return ZoneInfo(self.tz)

    def match_article(self, url: str) -> re.Match[str] | None:
        """The first article pattern's match, so callers can read its groups (dates, ids)."""
        for regex in _compiled(self.article_patterns):
            if m := regex.match(url):
                return m
        return None

    def is_article(self, url: str) -> bool:
        """Is ``url`` an article page of this site (any current or historic form)?"""
        return self.match_article(url) is not None

    def is_list(self, url: str) -> bool:
        """Is ``url`` a section/list page to follow?  Article URLs never are."""
        return not self.is_article(url) and any(
            regex.match(url) for regex in _compiled(self.list_patterns)
        )

    def owns(self, url: str) -> bool:
        """Is the URL's host one of ``allowed_domains`` or below one (Scrapy's offsite rule)?"""
        host = (urlsplit(url).hostname or "").lower()
        return any(host == d or host.endswith("." + d) for d in self.allowed_domains)

    def canonical_url(self, url: str) -> str:
        """The form used for requests, so one article is fetched once per run.

        w3lib's canonical form (lower-case host, sorted query, no fragment);
        for article URLs the query is dropped too, since every article form
        carries its id in the path and the query only tracks the referrer
        (``?cre=tianyi&mod=…`` on Sina, ``#f=post1603_tab_news`` on NetEase).
        """
        canonical = canonicalize_url(url)
        parts = urlsplit(canonical)
        if parts.query:
            bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
            if self.is_article(bare):
                return bare
        return canonical


#: A NetEase document id: 16 characters, upper case in the survey; the 2017
#: ``play.163.com`` links in datasets/gne-unlabelled-zh use lower case.
_NETEASE_ID = r"[0-9A-Za-z]{16}"

NETEASE = Site(
    key="netease",
    source="网易新闻",
    allowed_domains=("163.com",),
    start_urls=("https://news.163.com/domestic/", "https://news.163.com/world/"),
    article_patterns=(
        # current: /news/article/…, /dy/article/…, any channel
        rf"^https?://www\.163\.com/[a-z]+/article/({_NETEASE_ID})\.html",
        # 2005-2020: YY/MMDD/HH/ID.html on any 163.com host (news., money., biz., …)
        rf"^https?://(?:[a-z0-9-]+\.)+163\.com/(\d{{2}})/(\d{{4}})/(\d{{2}})/({_NETEASE_ID})\.html",
        # 2019 self-media
        r"^https?://dy\.163\.com/v2/article/detail/([0-9A-Z]{16})\.html",
        # seen: links in datasets/gne-unlabelled-zh (2020), self-media without v2/detail
        r"^https?://dy\.163\.com/article/([0-9A-Z]{16})\.html",
    ),
    list_patterns=(r"^https?://(?:news|money|tech|ent|sports|war)\.163\.com/(?:[a-z]+/)?$",),
    feeds=(
        *(
            Feed(
                f"https://temp.163.com/special/00804KVA/cm_{name}.js?callback=data_callback",
                "jsonp",
            )
            for name in ("yaowen", "guonei", "guoji", "shehui", "war")
        ),
        Feed("http://news.163.com/special/00011K6L/rss_newstop.xml", "rss"),  # alive: unv.
    ),
    title_stop_words=("_网易新闻", "_网易财经", "_网易科技", "_网易体育", "_网易娱乐", "_网易"),
)

SINA = Site(
    key="sina",
    source="新浪新闻",
    allowed_domains=("sina.com.cn",),
    start_urls=("https://news.sina.com.cn/",),
    article_patterns=(
        r"^https?://[a-z0-9.]+\.sina\.com\.cn/(?:[\w-]+/)*(\d{4}-\d{2}-\d{2})/"
        r"(?:doc|detail)-i[a-z]{7}\d{7}\.shtml",
        r"^https?://[a-z.]+\.sina\.com\.cn/(?:[\w-]+/)*(\d{4}-\d{2}-\d{2})/\d{8,}\.shtml",  # 2004
    ),
    list_patterns=(r"^https?://news\.sina\.com\.cn/(?:[a-z]+/)?(?:index\.shtml)?$",),
    feeds=(
        Feed(
            "https://feed.mix.sina.com.cn/api/roll/get?pageid=153&lid=2516&k=&num=50&page=1",
            "json",
        ),
    ),
    title_stop_words=("_新浪新闻", "-新浪新闻", "_新浪财经_新浪网", "_新浪科技_新浪网", "_新浪网"),
)

TENCENT = Site(
    key="tencent",
    source="腾讯新闻",
    allowed_domains=("qq.com",),
    start_urls=("https://news.qq.com/",),
    article_patterns=(
        r"^https?://(?:news|new)\.qq\.com/rain/a/(\d{8})[A-Z][0-9A-Z]{7}",
        r"^https?://new\.qq\.com/omn/(\d{8})/\d{8}[A-Z][0-9A-Z]{5,7}\.html",  # 2019
        r"^https?://new\.qq\.com/omn/[A-Z]{3}\d{5}/[0-9A-Z]+\.html",  # 2019
        # seen: datasets/list-pages (2020), the id without its date folder
        r"^https?://new\.qq\.com/omn/(\d{8})[A-Z][0-9A-Z]{5,7}\.html",
        r"^https?://[a-z]+\.qq\.com/a/(\d{8})/(\d{6})\.htm",  # gb2312 era
    ),
    list_patterns=(r"^https?://(?:news|new)\.qq\.com/(?:ch/[A-Za-z0-9_]+/?)?$",),
    feeds=(
        # the body's further fields are unknown (the survey shows them elided): unv.
        Feed(
            "https://i.news.qq.com/web_feed/getPCList",
            "json",
            body='{"base_req":{"from":"pc"},"channel_id":"news_news_tech"}',
        ),
    ),
    title_stop_words=("_腾讯新闻", "_腾讯网"),
)

ZAOBAO = Site(
    key="zaobao",
    source="联合早报",
    allowed_domains=("zaobao.com", "zaobao.com.sg"),
    start_urls=tuple(
        f"https://www.zaobao.com.sg/{part}/{region}"
        for part in ("realtime", "news")
        for region in ("china", "world")
    ),
    article_patterns=(
        r"^https?://www\.zaobao\.com(?:\.sg)?/(?:realtime|news)/[a-z-]+/story(\d{8})-(\d+)",
    ),
    list_patterns=(
        r"^https?://www\.zaobao\.com(?:\.sg)?/(?:realtime|news)/[a-z-]+/?(?:\?page=\d+)?$",
    ),
    feeds=(
        Feed("https://www.zaobao.com.sg/sitemap.xml", "sitemap"),  # index → monthly sitemaps
        Feed("https://www.zaobao.com.sg/xml/rss_zh_cn_newsall.xml", "rss"),  # unv.
    ),
    tz="Asia/Singapore",
    title_stop_words=("|联合早报网", "_联合早报网", "-联合早报网"),
)

# The other four surveyed sites.  Their start pages are partly unverified
# (*unv.* there); the patterns are checked against the saved pages' links.

SOHU = Site(
    key="sohu",
    source="搜狐新闻",
    allowed_domains=("sohu.com",),
    start_urls=("https://news.sohu.com/",),  # channel pages: unv.
    article_patterns=(
        r"^https?://www\.sohu\.com/a/(\d+)_(\d+)",
        r"^https?://(?:[a-z0-9]+\.)+sohu\.com/(\d{8})/[nb](\d+)\.shtml",
        r"^https?://(?:[a-z0-9]+\.)+sohu\.com/\d{1,2}/\d{2}/(?:news|article)\d+\.shtml",
    ),
    list_patterns=(r"^https?://news\.sohu\.com/$",),
    title_stop_words=("_搜狐网", "_手机搜狐网"),
)

XINHUA = Site(
    key="xinhua",
    source="新华网",
    allowed_domains=("news.cn", "xinhuanet.com"),
    start_urls=("https://www.news.cn/",),
    article_patterns=(
        r"^https?://www\.news\.cn/(?:[a-z]+/)*(\d{8})/([0-9a-f]{32})/c\.html",
        # seen: datasets/newspaper4k-fixtures-zh, the section folder may be absent
        r"^https?://(?:www|news)\.(?:xinhuanet\.com|news\.cn)/(?:[a-z]+/)*(\d{4}-\d{2}/\d{2})/"
        r"c_(\d+)\.htm",
        # seen: datasets/cwced-zh (chinaneast.xinhuanet.com/2006-11/22/…), no folder either
        r"^https?://(?:[a-z]+\.)+xinhuanet\.com/(?:\w+/)*(\d{4}-\d{2}/\d{2})/"
        r"content_(\d+)(?:_\d+)?\.htm",
    ),
    list_patterns=(r"^https?://www\.news\.cn/(?:[a-z]+/)?(?:index\.html?)?$",),
    title_stop_words=("_新华网", "-新华网"),
)

CHINADAILY = Site(
    key="chinadaily",
    source="中国日报网",
    allowed_domains=("chinadaily.com.cn",),
    start_urls=("https://cn.chinadaily.com.cn/",),  # channels: unv.
    article_patterns=(
        # www. is the English edition: not part of a Chinese corpus
        r"^https?://(?!www\.)[a-z]+\.chinadaily\.com\.cn/a/(\d{6})/(\d{2})/WS([0-9a-f]{24})\.html",
        r"^https?://(?!www\.)[a-z]+\.chinadaily\.com\.cn/[\w/]+/(\d{4}-\d{2}/\d{2})/"
        r"content_(\d+)\.htm",
    ),
    list_patterns=(r"^https?://cn\.chinadaily\.com\.cn/(?:[a-z]+/)?$",),
    title_stop_words=("_中国日报网", "-中国日报网", " - 中国日报网"),
)

THEPAPER = Site(
    key="thepaper",
    source="澎湃新闻",
    allowed_domains=("thepaper.cn",),
    # Links live in __NEXT_DATA__ and the JSON APIs give ids, not URLs: a plain crawl
    # finds few articles; a subclass would read them.
    start_urls=("https://www.thepaper.cn/",),
    article_patterns=(
        r"^https?://(?:www|m)\.thepaper\.cn/newsDetail_forward_(\d+)",
        r"^https?://m\.thepaper\.cn/detail/(\d+)",
    ),
    list_patterns=(r"^https?://www\.thepaper\.cn/$",),
    title_stop_words=("_澎湃新闻-The Paper", "_澎湃新闻"),
)

#: Every row, in the order ``scrapy list`` and nightly runs see them.
ROWS: tuple[Site, ...] = (NETEASE, SINA, TENCENT, ZAOBAO, SOHU, XINHUA, CHINADAILY, THEPAPER)

SITES: dict[str, Site] = {site.key: site for site in ROWS}

#: The four sites the papers' corpora came from; the others are extra rows.
PAPER_SITES: tuple[str, ...] = ("netease", "sina", "tencent", "zaobao")


def site_for_url(url: str) -> Site | None:
    """The site whose ``allowed_domains`` hold the URL's host, or None."""
    for site in ROWS:
        if site.owns(url):
            return site
    return None
