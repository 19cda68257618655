"""``NewsSpider``: the one crawl strategy, driven by a :class:`~newsspider.sites.Site` row.

A crawl starts from the row's section pages and feeds, follows links that stay
inside ``allowed_domains``, and sorts each by the row's URL patterns:

- article URLs go to :meth:`NewsSpider.parse_article`, which yields one
  :class:`~newsspider.items.ArticleItem` with the raw response (extraction is
  the pipeline's job, so a crawl can be re-extracted without refetching);
- list URLs are followed with :meth:`NewsSpider.parse` and never stored;
- anything else is ignored, which keeps a crawl on news and off the portals'
  mail, shop and login pages.

Article URLs are canonicalised (:meth:`Site.canonical_url`) before the request
is made, so Scrapy's default dupefilter fetches each article once per run
however its links are decorated.

Spider arguments (``-a``):

- ``start_urls=URL,URL``: crawl from these instead of the row's start pages,
  and skip its feeds; an article URL among them is fetched as an article;
- ``limit=N``: stop after N articles (a positive integer).  It counts the items this spider yields
  (before pipelines, unlike ``CLOSESPIDER_ITEMCOUNT``, which counts items that
  passed them); the Nth raises ``CloseSpider("limit")``, and responses still in
  flight then yield nothing, so exactly N items leave the spider;
- ``_job``: Scrapyd's job id, which Scrapyd passes to every crawl.

Any other argument is refused by name (:meth:`NewsSpider.check_arguments`): a mistyped
``-a limt=5`` must not start an unbounded crawl.

Setting ``NEWS_SITEMAPS_PER_INDEX`` (default 2, 0 = all): how many sitemaps of
a sitemap index are read, newest first, so a nightly run does not queue a
site's whole archive.

Stats: ``newsspider/articles_found/<site>`` (article pages fetched and
yielded), ``newsspider/list_pages/<site>`` (start and list pages parsed),
``newsspider/feed_links/<site>`` (links read from feeds),
``newsspider/article_links/<site>`` (article requests made from start and list pages and
feeds; 0 once one was read, so a nightly report can name a site whose pages no longer
link any article) and ``newsspider/redirected_off_pattern/<site>`` (article requests
that redirected to a non-article URL, e.g. a deleted story sent to the home page).

Failed fetches: every request has :meth:`NewsSpider.fetch_failed` as its
errback, which logs a WARNING naming the reason and the URL and counts
``newsspider/fetch_failed/<site>`` and ``newsspider/fetch_failed_reason/<reason>``
(see :func:`failure_reason`: ``http_404``, ``http_500``, ``timeout``,
``connection_lost``, ``connection_refused``, ``dns``, ``too_large``,
``too_many_redirects``...), after Scrapy's ``RetryMiddleware`` has had its retries. A
redirect back to a URL of its own chain is counted as ``redirect_loop`` (the
dupefilter drops it silently otherwise). Requests refused on purpose (robots.txt, an
article already stored) are not failures and are not counted here.

Multi-page articles (``newsspider/extraction/pager.py``, docs/crawling.md): an article
page whose bytes hold a pager marker (or any page of a site with a ``next_page`` rule) is
parsed for its next page; the pages are fetched one after the other (``dont_filter``, depth
reset: they are one article), up to ``MULTIPAGE_MAX_PAGES``, and leave as one item under the
first page's URL carrying the further pages (``ArticleItem.pages``, ``page_urls``); a
全文 / 单页阅读 link is fetched instead when the page offers one. A link or start URL to
page n of an article (``a_3.shtml``) is taken to its first page (:func:`first_page_url`),
so no page after the first is ever an article of its own. A page n that fails ends the
article at page n-1 (logged). Stats: ``newsspider/multipage_articles/<site>`` (articles of
two pages or more, or read through their one-page version) and
``newsspider/multipage_pages/<site>`` (the pages they were read from).

Size: pages are held to ``DOWNLOAD_MAXSIZE`` (10 MiB in settings.py: a bigger page is
not a news article), feeds to :data:`MAX_FEED_BYTES` (sitemaps may be 50 MB).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Self

from lxml import etree
from scrapy import Request, Spider, signals
from scrapy.exceptions import CloseSpider, IgnoreRequest
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.gz import gunzip
from twisted.python.failure import Failure
from w3lib.url import canonicalize_url

from newsspider import settings as project_defaults
from newsspider.errors import UserError
from newsspider.extraction.pager import (
    first_page_url,
    might_have_pager,
    next_page_url,
    single_page_url,
)
from newsspider.items import ArticleItem
from newsspider.sites import Feed, FeedKind, Site

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "DEFAULT_DEPTH_LIMIT",
    "HTTP_URL",
    "ITEM_HEADERS",
    "FeedLinks",
    "NewsSpider",
    "failure_reason",
    "feed_links",
    "json_urls",
    "parse_limit",
    "spider_class",
]

#: Start page (0) → list page (1) → article (2): enough for section pages and
#: sitemap indexes without wandering the portal.  Override with -s DEPTH_LIMIT=N, or per
#: site with the row's ``depth_limit`` (deeper paginated lists).
#: The spider arguments (``-a NAME=VALUE``) a news spider takes (module docstring).
SPIDER_ARGUMENTS = ("start_urls", "limit", "_job")

DEFAULT_DEPTH_LIMIT = 2

#: Response headers copied into the item: the charset, and date hints.
ITEM_HEADERS: tuple[str, ...] = ("Content-Type", "Content-Language", "Last-Modified")

#: Article requests go before list requests, so a ``limit`` run or a stopped
#: crawl has articles, not a queue of section pages.
ARTICLE_PRIORITY = 1

#: Feeds larger than this (after gunzip) are not read: a sitemap is at most 50 MB.
MAX_FEED_BYTES = 64 * 1024 * 1024
#: Download limits of feed requests (``download_maxsize``/``download_warnsize`` meta),
#: above the project's page limits (DOWNLOAD_MAXSIZE, DOWNLOAD_WARNSIZE).
FEED_META: dict[str, Any] = {
    "download_maxsize": MAX_FEED_BYTES,
    "download_warnsize": MAX_FEED_BYTES // 2,
}

#: Download exceptions by reason name (class names, so no import of each module).
_FAILURE_REASONS: dict[str, str] = {
    "DownloadTimeoutError": "timeout",
    "TimeoutError": "timeout",
    "UserTimeoutError": "timeout",
    "TCPTimedOutError": "timeout",
    "ConnectionRefusedError": "connection_refused",
    "DownloadConnectionRefusedError": "connection_refused",
    "CannotResolveHostError": "dns",
    "DNSLookupError": "dns",
    "ConnectionLost": "connection_lost",
    "ConnectionDone": "connection_lost",
    "ConnectionAborted": "connection_lost",
    "ResponseNeverReceived": "connection_lost",
    "ResponseFailed": "connection_lost",
    "DownloadFailedError": "connection_lost",
    "ResponseDataLossError": "data_loss",
    "_DataLoss": "data_loss",
    # Scrapy's download handlers cancel a download only for DOWNLOAD_MAXSIZE (with or
    # without a Content-Length announcing it).
    "DownloadCancelledError": "too_large",
}

_GZIP_MAGIC = b"\x1f\x8b"
HTTP_URL = re.compile(r"https?://[^\s/]+", re.I)
_JSONP = re.compile(r"^\s*[\w$.]+\s*\((.*)\)\s*;?\s*$", re.S)
_XML_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, recover=True, remove_comments=True
)
_XP_SITEMAP_LOCS = etree.XPath("/*/*[local-name()='sitemap']/*[local-name()='loc']/text()")
_XP_URL_LOCS = etree.XPath("/*/*[local-name()='url']/*[local-name()='loc']/text()")
_XP_RSS_LINKS = etree.XPath("//*[local-name()='item']/*[local-name()='link']/text()")
_XP_ATOM_LINKS = etree.XPath(
    "//*[local-name()='entry']/*[local-name()='link'][not(@rel) or @rel='alternate']/@href"
)


@dataclass(frozen=True, slots=True)
class FeedLinks:
    """What a feed points to: pages, and (for a sitemap index) further sitemaps."""

    pages: tuple[str, ...] = ()
    sitemaps: tuple[str, ...] = ()


def _unique(urls: Iterable[str]) -> tuple[str, ...]:
    """Stripped, non-empty, first occurrence kept (feeds repeat links)."""
    return tuple(dict.fromkeys(u.strip() for u in urls if u and u.strip()))


def _decode_json_bytes(body: bytes) -> str:
    """JSON bytes as text: UTF-8, else GB18030 (NetEase's JSONP lists are GBK)."""
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError:
        return body.decode("gb18030", errors="replace")


def json_urls(value: Any) -> Iterator[str]:
    """Every http(s) or protocol-relative URL string anywhere in a JSON value.

    Walking the whole document instead of naming fields (Sina's ``url``,
    NetEase's ``docurl``, Xinhua's ``publishUrl``) lets one function read
    every list API; the site's patterns then pick the articles.
    """
    if isinstance(value, str):
        text = value.strip()
        if text.startswith(("http://", "https://")):
            yield text
        elif text.startswith("//"):
            yield "https:" + text
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_urls(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_urls(item)


def _xml_feed_links(body: bytes) -> FeedLinks:
    """Links of an RSS 2.0/1.0, Atom, sitemap or sitemap-index document (the root decides)."""
    try:
        root = etree.fromstring(body, _XML_PARSER)
    except etree.XMLSyntaxError:
        return FeedLinks()
    if root is None or not isinstance(root.tag, str):
        return FeedLinks()
    kind = etree.QName(root).localname.lower()
    if kind == "sitemapindex":
        return FeedLinks(sitemaps=_unique(_XP_SITEMAP_LOCS(root)))
    if kind == "urlset":
        return FeedLinks(pages=_unique(_XP_URL_LOCS(root)))
    if kind == "feed":
        return FeedLinks(pages=_unique(_XP_ATOM_LINKS(root)))
    return FeedLinks(pages=_unique(_XP_RSS_LINKS(root)))  # rss, rdf:RDF


def feed_links(body: bytes, kind: FeedKind) -> FeedLinks:
    """Parse one feed body into links; empty when it is not what ``kind`` says.

    ``rss`` and ``sitemap`` are read by the XML root, so a mislabelled feed
    still works; gzipped bodies (``sitemap.xml.gz``) are unpacked first.
    Never raises on bad input: a dead feed is a log line, not a failed crawl.
    """
    if body.startswith(_GZIP_MAGIC):
        try:
            body = gunzip(body, max_size=MAX_FEED_BYTES)
        except (OSError, ValueError, EOFError):
            return FeedLinks()
    if kind in ("rss", "sitemap"):
        return _xml_feed_links(body)
    text = _decode_json_bytes(body)
    if kind == "jsonp" and (m := _JSONP.match(text)):
        text = m.group(1)
    try:
        data = json.loads(text)
    except ValueError:
        return FeedLinks()
    return FeedLinks(pages=_unique(json_urls(data)))


def failure_reason(failure: Failure) -> str | None:
    """A short name for why a request failed; None when it was refused on purpose.

    ``http_<status>`` for an error response that reached the spider (after retries),
    ``too_many_redirects`` past ``REDIRECT_MAX_TIMES``, a name from
    :data:`_FAILURE_REASONS` for download errors, else the exception's class name.
    Other ``IgnoreRequest`` exceptions (robots.txt, ``StoredUrlFilter``, offsite) are decisions,
    not failures: None.
    """
    exc = failure.value
    if isinstance(exc, HttpError):
        return f"http_{exc.response.status}"
    if isinstance(exc, IgnoreRequest):
        return "too_many_redirects" if "max redirections" in str(exc) else None
    name = type(exc).__name__
    return _FAILURE_REASONS.get(name, name)


class NewsSpider(Spider):
    """The crawl of one site, configured entirely by its :class:`Site` row.

    A subclass only sets ``site``; ``name`` and ``allowed_domains`` follow
    from it (``__init_subclass__``), so a row is all a new site needs.
    """

    site: Site
    allowed_domains: list[str]
    custom_settings = {"DEPTH_LIMIT": DEFAULT_DEPTH_LIMIT}  # noqa: RUF012 (Scrapy's own type)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Derive ``name`` and ``allowed_domains`` from a ``site`` set on the class."""
        super().__init_subclass__(**kwargs)
        site = cls.__dict__.get("site")
        if isinstance(site, Site):
            if "name" not in cls.__dict__:
                cls.name = site.key
            cls.allowed_domains = list(site.allowed_domains)
            if site.depth_limit is not None:  # lists paginated deeper (Site.depth_limit)
                cls.custom_settings = {
                    **NewsSpider.custom_settings,
                    "DEPTH_LIMIT": site.depth_limit,
                }

    def __init__(
        self,
        *args: Any,
        start_urls: str | Iterable[str] | None = None,
        limit: str | int | None = None,
        **kwargs: Any,
    ) -> None:
        NewsSpider.check_arguments({"start_urls": start_urls, "limit": limit, **kwargs})
        super().__init__(*args, **kwargs)
        if not isinstance(getattr(type(self), "site", None), Site):
            raise TypeError(f"{type(self).__name__} has no Site row (set `site`)")
        if isinstance(start_urls, str):
            start_urls = start_urls.split(",")
        override = [u.strip() for u in start_urls or () if u.strip()]
        #: The row's feeds are read only without a start_urls override.
        self.use_feeds = not override
        self.start_urls = override or list(self.site.start_urls)
        self.limit = parse_limit(limit)
        self.articles_yielded = 0
        # Sitemaps read from one sitemap index, newest first (by URL, descending:
        # Zaobao's are sitemap-YYYYMM.xml back to 2016, half a million articles);
        # from_crawler sets it from NEWS_SITEMAPS_PER_INDEX, 0 reads them all (a backfill).
        self.sitemaps_per_index = project_defaults.NEWS_SITEMAPS_PER_INDEX
        # Pages of one multi-page article fetched and joined (from_crawler reads
        # MULTIPAGE_MAX_PAGES); 1 stores first pages alone.
        self.multipage_max = project_defaults.MULTIPAGE_MAX_PAGES
        # Domains are checked by request_for (Site.owns, on the host name like
        # OffsiteMiddleware; LinkExtractor's allow_domains compares host:port).
        # The default deny_extensions keep images, archives and media out.
        self._links = LinkExtractor(unique=True)

    @classmethod
    def check_arguments(cls, arguments: dict[str, Any]) -> None:
        """Refuse spider arguments this spider does not take, and a ``limit`` that is not a
        positive integer, with a :class:`~newsspider.errors.UserError` naming what is
        accepted (``scrapy crawl`` checks before the crawl starts)."""
        unknown = sorted(set(arguments) - set(SPIDER_ARGUMENTS))
        if unknown:
            named = ", ".join(f"-a {name}" for name in unknown)
            raise UserError(
                f"unknown spider argument {named}: a news spider takes "
                "-a limit=N and -a start_urls=URL[,URL...]"
            )
        parse_limit(arguments.get("limit"))
        start_urls = arguments.get("start_urls")
        if isinstance(start_urls, str):
            start_urls = start_urls.split(",")
        for url in start_urls or ():
            if url.strip() and not HTTP_URL.match(url.strip()):
                raise UserError(
                    f"-a start_urls: {url.strip()!r} is not an http:// or https:// URL"
                )

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        """Read the spider's settings once, here (in from_crawler, never later)."""
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.sitemaps_per_index = crawler.settings.getint("NEWS_SITEMAPS_PER_INDEX")
        spider.multipage_max = crawler.settings.getint("MULTIPAGE_MAX_PAGES")
        crawler.signals.connect(spider.request_dropped, signal=signals.request_dropped)
        return spider

    # -- helpers ---------------------------------------------------------------

    @property
    def limit_reached(self) -> bool:
        """True once ``limit`` articles have been yielded."""
        return self.limit is not None and self.articles_yielded >= self.limit

    def _stat(self, name: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"newsspider/{name}/{self.site.key}", count)

    def _depth_allows_lists(self, response: Response) -> bool:
        """Would a list page linked from here still get its links followed?

        A list page at the depth limit is pure cost: every link it holds is
        dropped by DepthMiddleware, so it is not requested at all.
        """
        max_depth = self.settings.getint("DEPTH_LIMIT")
        return max_depth <= 0 or response.meta.get("depth", 0) + 2 <= max_depth

    def _failed(self, reason: str, url: str, detail: str = "", retries: int = 0) -> None:
        """Log and count one failed fetch (module docstring, "Failed fetches")."""
        self.logger.warning(
            "fetch failed (%s%s): %s%s",
            reason,
            f", after {retries} retries" if retries else "",
            url,
            f" ({detail})" if detail else "",
        )
        self._stat("fetch_failed")
        self.crawler.stats.inc_value(f"newsspider/fetch_failed_reason/{reason}")

    def fetch_failed(self, failure: Failure) -> None:
        """Errback of every request: a failed fetch is logged and counted, never raised."""
        request = failure.request  # type: ignore[attr-defined]  (set by Scrapy)
        reason = failure_reason(failure)
        if reason is None:
            return
        detail = "" if isinstance(failure.value, HttpError) else failure.getErrorMessage()[:200]
        chain = request.meta.get("redirect_urls") or ()
        if chain:  # name the URL that was asked for, and where it ended
            detail = f"redirected to {request.url}" + (f"; {detail}" if detail else "")
        url = chain[0] if chain else request.url
        self._failed(reason, url, detail, request.meta.get("retry_times", 0))

    def request_dropped(self, request: Request, spider: Spider | None = None) -> None:
        """Signal handler: a redirect back into its own chain is a loop, not a duplicate."""
        chain = request.meta.get("redirect_urls") or ()
        target = canonicalize_url(request.url)
        if chain and any(canonicalize_url(u) == target for u in chain):
            self._failed("redirect_loop", chain[0], " -> ".join([*chain, request.url]))

    def request_for(self, url: str, *, lists: bool = True) -> Request | None:
        """The request for a discovered link, or None when it is not followed.

        Off-site links are dropped here even when a pattern would match, so a
        loose pattern cannot take the crawl elsewhere.
        """
        if not self.site.owns(url):
            return None
        canonical = self.first_page(self.site.canonical_url(url))
        if self.site.is_article(canonical):
            return Request(
                canonical,
                callback=self.parse_article,
                errback=self.fetch_failed,
                priority=ARTICLE_PRIORITY,
            )
        if lists and self.site.is_list(canonical):
            return Request(canonical, callback=self.parse, errback=self.fetch_failed)
        return None

    def first_page(self, url: str) -> str:
        """A link to page n of an article (``a_3.shtml``, ``?page=3``) as its first page's
        URL, when that is an article URL of the row; any other URL as it is. Off with
        ``MULTIPAGE_MAX_PAGES = 1``."""
        if self.multipage_max > 1 and (first := first_page_url(url)) is not None:
            first = self.site.canonical_url(first)
            if self.site.is_article(first):
                return first
        return url

    def feed_request(self, feed: Feed) -> Request:
        """GET a feed, or POST its JSON ``body`` when it has one."""
        if feed.body is None:
            return Request(
                feed.url,
                callback=self.parse_feed,
                errback=self.fetch_failed,
                cb_kwargs={"kind": feed.kind},
                meta=dict(FEED_META),
            )
        return Request(
            feed.url,
            method="POST",
            body=feed.body,
            headers={"Content-Type": "application/json"},
            callback=self.parse_feed,
            errback=self.fetch_failed,
            cb_kwargs={"kind": feed.kind},
            meta=dict(FEED_META),
        )

    # -- callbacks -------------------------------------------------------------

    async def start(self) -> AsyncIterator[Request]:
        """The start pages (or the ``start_urls`` override), then the row's feeds."""
        for url in self.start_urls:
            if not self.site.owns(url):
                self.logger.warning("start URL %s is outside %s", url, self.site.allowed_domains)
            canonical = self.first_page(self.site.canonical_url(url))
            # Chosen by hand, so allowed even off-site; but not dont_filter,
            # so a list page linking back to a start page is not fetched twice.
            meta = {"allow_offsite": True}
            if self.site.is_article(canonical):
                yield Request(
                    canonical, callback=self.parse_article, errback=self.fetch_failed, meta=meta
                )
            else:
                yield Request(url, callback=self.parse, errback=self.fetch_failed, meta=meta)
        if self.use_feeds:
            for feed in self.site.feeds:
                yield self.feed_request(feed)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        """A start or list page: request its article and list links, store nothing."""
        if self.limit_reached:
            return
        if not isinstance(response, TextResponse):
            self.logger.debug("not a text page, skipped: %s", response.url)
            return
        self._stat("list_pages")
        lists = self._depth_allows_lists(response)
        n_articles = n_lists = 0
        for link in self._links.extract_links(response):
            request = self.request_for(link.url, lists=lists)
            if request is None:
                continue
            if request.callback == self.parse_article:
                n_articles += 1
            else:
                n_lists += 1
            yield request
        self._stat("article_links", n_articles)
        self.logger.debug(
            "list page %s (depth %s): %s article links, %s list links",
            response.url,
            response.meta.get("depth", 0),
            n_articles,
            n_lists,
        )

    def page_links(
        self, url: str, body: bytes, headers: dict[str, str], depth: int
    ) -> list[Request]:
        """The requests :meth:`parse` makes from a page fetched as an article that turned out
        to be a page of links (a topic or list page, docs/crawling.md "Page kinds"): its
        article and list links, each at ``depth + 1`` as DepthMiddleware would set it, none
        past ``DEPTH_LIMIT``. The extraction pipeline hands them to the engine."""
        request = Request(url, meta={"depth": depth})
        response = HtmlResponse(url, body=body, headers=headers, request=request)
        max_depth = self.settings.getint("DEPTH_LIMIT")
        if max_depth > 0 and depth + 1 > max_depth:
            return []
        out = []
        for link in self.parse(response):
            link.meta["depth"] = depth + 1
            out.append(link)
        return out

    def parse_feed(self, response: Response, kind: FeedKind) -> Iterator[Request]:
        """A feed: request its article links; a sitemap index's sitemaps are feeds too."""
        if self.limit_reached:
            return
        links = feed_links(response.body, kind)
        if not links.pages and not links.sitemaps:
            self.logger.warning("feed %s (%s) gave no links", response.url, kind)
            self._stat("article_links", 0)
            return
        self._stat("feed_links", len(links.pages))
        sitemaps = sorted((u for u in links.sitemaps if self.site.owns(u)), reverse=True)
        if self.sitemaps_per_index > 0 and len(sitemaps) > self.sitemaps_per_index:
            self.logger.info(
                "sitemap index %s: reading the newest %s of %s sitemaps (NEWS_SITEMAPS_PER_INDEX)",
                response.url,
                self.sitemaps_per_index,
                len(sitemaps),
            )
            sitemaps = sitemaps[: self.sitemaps_per_index]
        for url in sitemaps:
            yield Request(
                url,
                callback=self.parse_feed,
                errback=self.fetch_failed,
                cb_kwargs={"kind": "sitemap"},
                meta=dict(FEED_META),
            )
        lists = self._depth_allows_lists(response)
        n_articles = 0
        for url in links.pages:
            if request := self.request_for(url, lists=lists):
                n_articles += request.callback == self.parse_article
                yield request
        self._stat("article_links", n_articles)

    def parse_article(self, response: Response) -> Iterator[ArticleItem]:
        """An article page: yield it raw, for the pipeline to extract."""
        if self.limit_reached:
            return
        url = self.site.canonical_url(response.url)
        if not self.site.is_article(url):
            self.logger.debug(
                "article request %s ended off the article pattern at %s",
                (response.meta.get("redirect_urls") or [response.url])[0],
                response.url,
            )
            self._stat("redirected_off_pattern")
            return
        if not isinstance(response, TextResponse):
            self.logger.debug("not a text page, skipped: %s", response.url)
            return
        if self.multipage_max > 1 and (request := self._pager_request(response, url)):
            yield request
            return
        yield from self._article(
            url, response.body, _item_headers(response), depth=response.meta.get("depth", 0)
        )

    def _article(
        self,
        url: str,
        html: bytes,
        headers: dict[str, str],
        pages: tuple[tuple[str, bytes], ...] = (),
        page_urls: tuple[str, ...] = (),
        depth: int = 0,
    ) -> Iterator[ArticleItem]:
        """The one item of an article (of one page, or its pages joined by the pipeline);
        ``depth`` is its first page's, where a topic or list page's links go on from."""
        self.articles_yielded += 1
        self._stat("articles_found")
        if page_urls:
            self._stat("multipage_articles")
            self._stat("multipage_pages", len(page_urls))
        yield ArticleItem(
            url=url,
            site=self.site.key,
            source=self.site.source,
            html=html,
            headers=headers,
            fetched_at=datetime.now(UTC),
            pages=pages,
            page_urls=page_urls,
            depth=depth,
        )
        if self.limit_reached:
            self.logger.info("limit of %s articles reached, closing", self.limit)
            raise CloseSpider("limit")

    # -- multi-page articles (module docstring) ----------------------------------

    def _next_page(self, response: TextResponse, seen: list[str]) -> str | None:
        """The next page of the article ``response`` is a page of, or None; the bytes are
        tested before anything is parsed (most articles have one page)."""
        body = response.body
        rule = self.site.next_page
        if not (rule or might_have_pager(body, response.url)):
            return None
        try:
            root = response.selector.root
        except (ValueError, TypeError):
            return None
        if root is None or not hasattr(root, "iter"):
            return None
        return next_page_url(root, response.url, rule, seen)

    def _pager_request(self, response: TextResponse, url: str) -> Request | None:
        """The request for page 2 (or for the one-page version) of a paged article."""
        seen = [response.url]
        following = self._next_page(response, seen)
        if following is None:
            return None
        state = {
            "url": url,
            "headers": _item_headers(response),
            "pages": [(response.url, response.body)],
            "seen": [*seen, following],
            "depth": response.meta.get("depth", 0),
        }
        single = single_page_url(response.selector.root, response.url)
        if single is not None:
            self.logger.debug("paged article %s: reading its one-page version %s", url, single)
            return self._continuation(
                single, state, self.parse_single_page, self.single_page_failed, following
            )
        return self._continuation(following, state, self.parse_next_page, self.next_page_failed)

    def _continuation(
        self,
        url: str,
        state: dict[str, Any],
        callback: Any,
        errback: Any,
        following: str | None = None,
    ) -> Request:
        # dont_filter: a page of an article is fetched for that article even if a link
        # brought it already; depth_reset: the pages are one article, not links deeper in.
        return Request(
            url,
            callback=callback,
            errback=errback,
            dont_filter=True,
            priority=ARTICLE_PRIORITY + 1,
            meta={
                "multipage": state,
                "multipage_next": following,
                "depth_reset": True,
                "incremental": False,  # the row is written once all its pages are in
            },
        )

    def parse_next_page(self, response: Response) -> Iterator[Request | ArticleItem]:
        """Page n of a paged article: the next one is requested, or the article ends here."""
        state = response.meta["multipage"]
        if not isinstance(response, TextResponse):
            self.logger.warning(
                "page %s of %s is not a text page; storing pages 1-%s: %s",
                len(state["pages"]) + 1, state["url"], len(state["pages"]), response.url,
            )  # fmt: skip
            yield from self._finish(state)
            return
        state["pages"].append((response.url, response.body))
        state["seen"].append(response.url)
        if len(state["pages"]) >= self.multipage_max:
            if self._next_page(response, state["seen"]) is not None:
                self.logger.info(
                    "article %s has more than %s pages (MULTIPAGE_MAX_PAGES): storing %s",
                    state["url"], self.multipage_max, self.multipage_max,
                )  # fmt: skip
            yield from self._finish(state)
            return
        following = self._next_page(response, state["seen"])
        if following is None:
            yield from self._finish(state)
            return
        state["seen"].append(following)
        yield self._continuation(following, state, self.parse_next_page, self.next_page_failed)

    def next_page_failed(self, failure: Failure) -> Iterator[ArticleItem]:
        """Page n could not be fetched: the article is stored with pages 1 to n-1."""
        self.fetch_failed(failure)
        request = failure.request  # type: ignore[attr-defined]  (set by Scrapy)
        state = request.meta["multipage"]
        self.logger.warning(
            "page %s of %s failed: storing pages 1-%s (%s)",
            len(state["pages"]) + 1, state["url"], len(state["pages"]), request.url,
        )  # fmt: skip
        yield from self._finish(state)

    def parse_single_page(self, response: Response) -> Iterator[Request | ArticleItem]:
        """The one-page version (全文) of a paged article: the article, under page 1's URL."""
        state = response.meta["multipage"]
        if not isinstance(response, TextResponse):
            yield from self._single_fallback(state, response.meta["multipage_next"])
            return
        yield from self._article(
            state["url"], response.body, _item_headers(response), (), (response.url,),
            depth=state.get("depth", 0),
        )

    def single_page_failed(self, failure: Failure) -> Iterator[Request | ArticleItem]:
        """The one-page version could not be fetched: the pages are read instead."""
        request = failure.request  # type: ignore[attr-defined]  (set by Scrapy)
        reason = failure_reason(failure)
        self.logger.info(
            "one-page version %s of %s not fetched (%s): reading its pages",
            request.url, request.meta["multipage"]["url"], reason,
        )  # fmt: skip
        yield from self._single_fallback(request.meta["multipage"], request.meta["multipage_next"])

    def _single_fallback(self, state: dict[str, Any], following: str) -> Iterator[Request]:
        yield self._continuation(following, state, self.parse_next_page, self.next_page_failed)

    def _finish(self, state: dict[str, Any]) -> Iterator[ArticleItem]:
        """The item of a paged article from the pages fetched (one page: an ordinary one)."""
        if self.limit_reached:
            return
        (_, html), *rest = state["pages"]
        page_urls = tuple(u for u, _ in state["pages"]) if rest else ()
        yield from self._article(
            state["url"], html, state["headers"], tuple(rest), page_urls,
            depth=state.get("depth", 0),
        )


def _item_headers(response: Response) -> dict[str, str]:
    """The response headers an item carries (:data:`ITEM_HEADERS`), as ``str``."""
    return {
        name: value.decode("latin-1")
        for name in ITEM_HEADERS
        if (value := response.headers.get(name)) is not None
    }


def parse_limit(value: str | int | None) -> int | None:
    """The ``limit`` argument as a positive integer (None: no limit)."""
    if value is None or value == "":
        return None
    try:
        limit = int(value)
    except (TypeError, ValueError):
        limit = 0
    if limit < 1:
        raise UserError(f"-a limit must be a positive integer (articles), not {value!r}")
    return limit


def spider_class(site: Site, module: str) -> type[NewsSpider]:
    """A ``NewsSpider`` subclass for one row, defined as if written in ``module``.

    Scrapy's spider loader only lists classes whose ``__module__`` is the
    module it imported, hence the argument.
    """
    name = "".join(part.title() for part in site.key.split("_")) + "Spider"
    namespace = {
        "site": site,
        "__module__": module,
        "__qualname__": name,
        "__doc__": f"{site.source}: the NewsSpider of the {site.key!r} row.",
    }
    return type(name, (NewsSpider,), namespace)
