"""A site row: every fact about a target site, as data, not code.

Each :class:`Site` records what a survey of the site's public pages (or ``scrapy
addsite``'s discovery) found: its start pages, feeds and sitemaps, and the URL forms of
its articles and list pages. Rows are read from TOML files (:mod:`newsspider.sites.table`);
a spider is generated per row by the project's spider loader, so adding a site means
adding a row, not writing a spider.

URL patterns are Python regexes anchored with ``^https?://`` and matched as a
prefix (``re.match``), so a query string or fragment after the matched part does
not matter.  They are compiled once per pattern tuple and cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal
from urllib.parse import urlsplit, urlunsplit
from zoneinfo import ZoneInfo

from w3lib.url import canonicalize_url

__all__ = ["FEED_KINDS", "Feed", "FeedKind", "Site"]

#: How a feed's body is read: ``rss`` (RSS 2.0/1.0 or Atom) and ``sitemap``
#: (urlset or sitemap index) are XML; ``json`` is a JSON list API and ``jsonp``
#: the same wrapped in a callback.  URLs in JSON are found by walking the whole
#: document, so no per-API field names are needed.
FeedKind = Literal["rss", "sitemap", "json", "jsonp"]
FEED_KINDS: tuple[str, ...] = ("rss", "sitemap", "json", "jsonp")


@dataclass(frozen=True, slots=True)
class Feed:
    """One feed, sitemap or JSON list API of a site.

    ``body`` set means the API wants a POST with that JSON body (Tencent).
    """

    url: str
    kind: FeedKind
    body: str | None = None


#: A path segment that can name a section: a word, not a date or an id.
_SECTION = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


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

    The rest says how far the row can be trusted and how its pages are read:
    ``encoding`` is the charset its pages declare (None: they say so themselves or are
    UTF-8); ``render`` sends article pages through Chromium before extraction, for sites
    whose HTML is a script shell; ``json_path`` is the dotted path of the article's text
    in a JSON blob embedded in the page (``props.pageProps.article.content``);
    ``section_from_path`` says the first segment of its article URLs' paths names the
    section (``/finance/2024/...``), the section stored when a page states none
    (:meth:`path_section`);
    ``depth_limit`` is the crawl's ``DEPTH_LIMIT`` for the row (None: the spider's
    default, start page -> list page -> article), set by ``scrapy addsite`` when the
    site's lists are paginated deeper than that (docs/crawling.md#reach);
    ``next_page`` is the rule finding an article's next page where the general one misses
    (docs/crawling.md, "Multi-page articles"): an XPath (starting with ``/`` or ``(``)
    selecting the next page's link or its ``href``, or a regex over link URLs whose first
    group, when it has one, is the page number;
    ``checked`` is False until ``scrapy sites check`` has passed for the row;
    ``enabled`` (default: ``checked``) puts it in ``scrapy nightly``; ``facts`` says where
    its facts come from; ``examples`` are article URLs its patterns were written from;
    ``origin`` is the file the row was read from (``built-in`` for the shipped table).
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
    encoding: str | None = None
    render: bool = False
    json_path: str | None = None
    section_from_path: bool = False
    depth_limit: int | None = None
    next_page: str | None = None
    checked: bool = True
    enabled: bool = True
    facts: str = ""
    examples: tuple[str, ...] = ()
    origin: str = "built-in"

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
        if self.depth_limit is not None and self.depth_limit < 1:
            raise ValueError(f"{self.key}: depth_limit {self.depth_limit} is not positive")

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

    def path_section(self, url: str) -> str | None:
        """The section the URL's first path segment names, when ``section_from_path`` is set:
        ``https://news.example.cn/Finance/2024/a.html`` -> ``finance``. None otherwise, and
        when the path has no folder or its first segment is not a word (a date, an id)."""
        if not self.section_from_path:
            return None
        segments = [s for s in urlsplit(url).path.split("/") if s]
        if len(segments) < 2 or not _SECTION.fullmatch(segments[0]):
            return None
        return segments[0].lower()

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
