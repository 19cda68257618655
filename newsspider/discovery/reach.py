"""Reach: of the article URLs a site shows, how many the crawl a row describes gets to.

A row can match every article URL exactly and still reach few of them: its start pages may
be the home page alone, its list patterns may miss the pages ``index_2.html`` of a
channel, or the articles may sit on list pages deeper than the crawl's ``DEPTH_LIMIT``.
Matching says nothing about that; replaying the crawl does.

:func:`replay_reach` is that replay, a pure function over pages already fetched (by
``scrapy addsite`` or ``scrapy sites check``): it walks the pages the way
:class:`~newsspider.spiders.news.NewsSpider` would, breadth first (the shallowest way to each
page, as the crawl's dupefilter keeps the first request and the crawl requests a page's
links as it reads it):

- the row's start pages are at depth 0 (a start page that is an article is reached at 0),
  and so are its feeds (unless ``use_feeds`` is off, as with ``-a start_urls=``);
- a page or feed read at depth ``d`` requests its on-site links (``Site.owns``, after
  ``Site.canonical_url``): article links at ``d + 1``, list links at ``d + 1`` only while a
  list page there could still request articles (``d + 2 <= DEPTH_LIMIT``:
  ``NewsSpider._depth_allows_lists``); a sitemap index requests its newest
  ``NEWS_SITEMAPS_PER_INDEX`` sitemaps at ``d + 1``; Scrapy's ``DepthMiddleware`` drops
  every request deeper than ``DEPTH_LIMIT`` (0: no limit);
- article pages are never read for links (the crawl yields them as items).

*Seen* are the article URLs (by the row's own patterns) that any fetched page or feed links
to, the row's or not: the site's own sitemaps and feeds, section, tag and list pages.
Links that appear only on article pages are not counted (a crawl never follows an
article's "related" box, and on a real portal those are mostly old stories); the report
says how many there were. An article seen but not reached gets the reason why, the first
that applies:

- ``beyond depth``: the replay read a page linking it, or could with no depth limit, but
  only deeper than ``DEPTH_LIMIT`` allows (the page and the depth it needs are named);
- ``not a list``: it is linked only from pages no start page, list pattern or feed leads
  to (a tag page, an ``/about/`` page): the page is named;
- ``feed not read``: it is listed only in a sitemap or feed that is not among the row's
  feeds (nor below one), or only in a sitemap of an index beyond the newest
  ``NEWS_SITEMAPS_PER_INDEX``.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.sitemap import sitemap_urls_from_robots
from w3lib.url import canonicalize_url

from newsspider.discovery.fetch import Fetched, Fetcher
from newsspider.sites import Feed, Site
from newsspider.spiders.news import FEED_META, feed_links

__all__ = [
    "BEYOND_DEPTH",
    "FEED_NOT_READ",
    "NOT_A_LIST",
    "Page",
    "Reach",
    "explore_reach",
    "needed_depth",
    "page_of",
    "pages_of",
    "replay_reach",
]

BEYOND_DEPTH = "beyond depth"
NOT_A_LIST = "not a list"
FEED_NOT_READ = "feed not read"

#: Examples named per reason in the report.
EXAMPLES = 2

_LINKS = LinkExtractor(unique=True)
_SITEMAP = re.compile(rb"<(?:\w+:)?(?:urlset|sitemapindex)\b")
_XML_START = (b"<?xml", b"<rss", b"<feed", b"<urlset", b"<sitemapindex", b"\x1f\x8b")


@dataclass(frozen=True, slots=True)
class Page:
    """One fetched page or feed, as the replay reads it: what it links to.

    ``links`` are a page's links (absolute, as Scrapy's ``LinkExtractor`` gives them) or a
    feed's entries; ``sitemaps`` a sitemap index's sitemaps; ``url`` the address asked for
    and ``final`` the one answered (after redirects)."""

    url: str
    links: tuple[str, ...] = ()
    sitemaps: tuple[str, ...] = ()
    kind: str = "page"  # page | rss (RSS or Atom) | sitemap (urlset or index)
    final: str = ""

    @property
    def feed(self) -> bool:
        return self.kind != "page"


def _key(url: str) -> str:
    return canonicalize_url(url, keep_fragments=False)


def page_of(fetched: Fetched, *, kind: str | None = None) -> Page | None:
    """A fetched response as a :class:`Page` (None when it failed). ``kind``: the feed
    kind when the URL is known to be a feed (``rss``, ``sitemap``, ``json``, ``jsonp``);
    None: an XML body (RSS, Atom, a sitemap, gzipped or not) is a feed, anything else a
    page. Feeds are parsed with the crawl's own :func:`~newsspider.spiders.news.feed_links`."""
    response: Response | None = fetched.response
    if not fetched.ok or response is None:
        return None
    body = response.body
    if kind is None:
        head = body[:512].lstrip().lower()
        ctype = response.headers.get("Content-Type", b"").decode("latin-1").lower()
        if head.startswith(_XML_START) or ("xml" in ctype and "html" not in ctype):
            kind = "rss"
    if kind is not None:
        found = feed_links(body, kind)  # type: ignore[arg-type]
        if kind in ("rss", "sitemap"):
            kind = "sitemap" if found.sitemaps or _SITEMAP.search(body[:4096]) else "rss"
        return Page(fetched.url, found.pages, found.sitemaps, kind, response.url)
    if not isinstance(response, TextResponse):
        return Page(fetched.url, final=response.url)
    links = tuple(link.url for link in _LINKS.extract_links(response))
    return Page(fetched.url, links, (), "page", response.url)


def pages_of(fetches: Iterable[Fetched], feeds: Iterable[Feed] = ()) -> dict[str, Page]:
    """The pages of a fetch log (``Fetcher.log``) by canonical URL, asked-for and final;
    ``feeds``: the feeds known (the rest are told apart by their body)."""
    kinds = {_key(f.url): f.kind for f in feeds}
    out: dict[str, Page] = {}
    for fetched in fetches:
        page = page_of(fetched, kind=kinds.get(_key(fetched.url)))
        if page is None:
            continue
        out.setdefault(_key(fetched.url), page)
        if page.final:
            out.setdefault(_key(page.final), page)
    return out


@dataclass(slots=True)
class Reach:
    """What a row reaches of the article URLs seen (module docstring)."""

    key: str
    depth_limit: int
    seen: int = 0
    reached: int = 0
    #: Reached through start and list pages alone, without the row's feeds.
    by_pages: int = 0
    #: Seen article URL -> why it is not reached, e.g. ("beyond depth", page, detail).
    unreached: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    #: Article URLs linked only from article pages (not counted in ``seen``).
    article_page_only: int = 0
    #: Depth at which each reached article is first requested.
    depths: dict[str, int] = field(default_factory=dict)
    #: Fetches made for the reach alone (``scrapy sites check``), beyond the check's.
    fetches: int = 0

    @property
    def share(self) -> float | None:
        """reached / seen; None when nothing was seen (reach unknown, never 100 %)."""
        return self.reached / self.seen if self.seen else None

    def reasons(self) -> list[tuple[str, int, str, list[str]]]:
        """Unreached URLs by reason: (reason, count, what the pages behind them are, with
        the detail of the one behind most, example URLs), the largest first."""
        by: dict[str, list[str]] = {}
        for url, (reason, _, _) in self.unreached.items():
            by.setdefault(reason, []).append(url)
        out = []
        for reason, urls in by.items():
            pages = Counter(self.unreached[u][1] for u in urls)
            top = pages.most_common(1)[0][0]
            detail = next(self.unreached[u][2] for u in urls if self.unreached[u][1] == top)
            if len(pages) > 1:
                detail = f"{len(pages)} pages, e.g. {detail}"
            out.append((reason, len(urls), detail, urls[:EXAMPLES]))
        return sorted(out, key=lambda r: -r[1])

    def summary(self) -> str:
        """``reach 96 of 99 article URLs seen (97%) at depth 2; 24 by pages alone``."""
        if not self.seen:
            return "reach unknown: no article URL seen"
        share = self.reached / self.seen
        text = (
            f"reach {self.reached} of {self.seen} article URLs seen ({share:.0%})"
            f" at depth {self.depth_limit or 'unlimited'}"
        )
        if self.by_pages != self.reached:
            text += f"; {self.by_pages} through start and list pages alone"
        return text

    def lines(self) -> list[str]:
        """The summary, then one line per reason of what is not reached."""
        out = [self.summary()]
        for reason, n, detail, examples in self.reasons():
            out.append(
                f"{n} article URLs unreachable ({reason}): {detail}; e.g. {', '.join(examples)}"
            )
        if self.article_page_only:
            out.append(
                f"{self.article_page_only} more article URLs are linked only from article "
                "pages (not counted: a crawl does not follow an article's links)"
            )
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "seen": self.seen,
            "reached": self.reached,
            "share": None if self.share is None else round(self.share, 4),
            "by_pages": self.by_pages,
            "depth_limit": self.depth_limit,
            "unreachable": [
                {"reason": r, "count": n, "detail": d, "examples": ex}
                for r, n, d, ex in self.reasons()
            ],
            "article_page_only": self.article_page_only,
            "fetches": self.fetches,
        }


@dataclass(slots=True)
class _Walk:
    """One breadth-first replay: the depth of every page read and article requested."""

    read: dict[str, int] = field(default_factory=dict)  # page key -> depth read
    articles: dict[str, int] = field(default_factory=dict)  # article URL -> depth requested
    #: List pages (and sitemaps) requested but not fetched: key -> depth.
    unfetched: dict[str, int] = field(default_factory=dict)


def _walk(
    site: Site,
    pages: Mapping[str, Page],
    depth_limit: int,
    *,
    use_feeds: bool,
    sitemaps_per_index: int,
) -> _Walk:
    walk = _Walk()
    queue: deque[tuple[str, int, bool]] = deque()
    queued: set[str] = set()

    def push(url: str, depth: int, feed: bool) -> None:
        key = _key(url)
        if key in queued or (depth_limit > 0 and depth > depth_limit):
            return
        queued.add(key)
        queue.append((url, depth, feed))

    for url in site.start_urls:
        canonical = site.canonical_url(url)
        if site.is_article(canonical):
            walk.articles.setdefault(canonical, 0)
        else:
            push(url, 0, False)
    if use_feeds:
        for feed in site.feeds:
            push(feed.url, 0, True)
    while queue:
        url, depth, _ = queue.popleft()
        page = pages.get(_key(url))
        if page is None:
            walk.unfetched.setdefault(_key(url), depth)
            continue
        walk.read[_key(url)] = depth
        lists = depth_limit <= 0 or depth + 2 <= depth_limit
        nxt = depth + 1
        if depth_limit > 0 and nxt > depth_limit:
            continue
        for link in page.links:
            if not site.owns(link):
                continue
            canonical = site.canonical_url(link)
            if site.is_article(canonical):
                walk.articles.setdefault(canonical, nxt)
            elif lists and site.is_list(canonical):
                push(canonical, nxt, False)
        sitemaps = sorted((u for u in page.sitemaps if site.owns(u)), reverse=True)
        if sitemaps_per_index > 0:
            sitemaps = sitemaps[:sitemaps_per_index]
        for sitemap in sitemaps:
            push(sitemap, nxt, True)
    return walk


def _seen(site: Site, pages: Mapping[str, Page]) -> tuple[dict[str, list[str]], set[str]]:
    """Article URL -> the non-article pages and feeds linking it; and the article URLs
    linked only from article pages."""
    sources: dict[str, list[str]] = {}
    from_articles: set[str] = set()
    done: set[int] = set()
    for page in pages.values():
        if id(page) in done:
            continue
        done.add(id(page))
        on_article = not page.feed and site.is_article(site.canonical_url(page.final or page.url))
        for link in page.links:
            if not site.owns(link):
                continue
            canonical = site.canonical_url(link)
            if not site.is_article(canonical):
                continue
            if on_article:
                from_articles.add(canonical)
            else:
                sources.setdefault(canonical, []).append(page.url)
    return sources, from_articles - set(sources)


def _path(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def replay_reach(
    site: Site,
    pages: Mapping[str, Page],
    *,
    depth_limit: int,
    use_feeds: bool = True,
    sitemaps_per_index: int = 2,
) -> Reach:
    """Replay the crawl ``site`` describes over ``pages`` (keyed by canonical URL, as
    :func:`pages_of` gives them) with ``DEPTH_LIMIT`` = ``depth_limit`` (0: none), and say
    what it reaches of the article URLs the pages show (module docstring)."""
    sources, article_only = _seen(site, pages)
    walk = _walk(
        site, pages, depth_limit, use_feeds=use_feeds, sitemaps_per_index=sitemaps_per_index
    )
    by_pages = _walk(
        site, pages, depth_limit, use_feeds=False, sitemaps_per_index=sitemaps_per_index
    )
    free = _walk(site, pages, 0, use_feeds=use_feeds, sitemaps_per_index=0)
    reach = Reach(site.key, depth_limit, article_page_only=len(article_only))
    seen = list(sources)
    reach.seen = len(seen)
    for url in seen:
        if url in walk.articles:
            reach.reached += 1
            reach.depths[url] = walk.articles[url]
            reach.by_pages += url in by_pages.articles
            continue
        reach.unreached[url] = _why(url, sources[url], walk, free, pages, depth_limit)
    return reach


def _why(
    url: str,
    linking: list[str],
    walk: _Walk,
    free: _Walk,
    pages: Mapping[str, Page],
    depth_limit: int,
) -> tuple[str, str, str]:
    """The reason an article seen is not reached (module docstring), with the page."""
    keys = [_key(u) for u in linking]
    read = [(walk.read[k], u) for k, u in zip(keys, linking, strict=True) if k in walk.read]
    if read:  # a page the crawl reads links it, but too deep for the article
        depth, page = min(read)
        return (
            BEYOND_DEPTH,
            page,
            f"only linked from {_path(page)} (read at depth {depth}), beyond depth {depth_limit}",
        )
    deeper = [(free.read[k], u) for k, u in zip(keys, linking, strict=True) if k in free.read]
    if deeper:
        depth, page = min(deeper)
        feed = pages[_key(page)].feed
        if feed and free.read[_key(page)] <= depth_limit:
            return (
                FEED_NOT_READ,
                page,
                f"only listed in {_path(page)}, a sitemap beyond the newest of its index "
                "(NEWS_SITEMAPS_PER_INDEX)",
            )
        return (
            BEYOND_DEPTH,
            page,
            f"only linked from {_path(page)}, which the crawl reaches at depth {depth}: "
            f"articles there need depth {depth + 1}, beyond depth {depth_limit}",
        )
    feeds = [u for k, u in zip(keys, linking, strict=True) if pages[k].feed]
    if feeds:
        return (
            FEED_NOT_READ,
            feeds[0],
            f"only listed in {_path(feeds[0])}, which is not among the row's feeds",
        )
    page = linking[0]
    return (
        NOT_A_LIST,
        page,
        f"only linked from {_path(page)}, which no start page, list pattern or feed leads to",
    )


def needed_depth(
    site: Site, pages: Mapping[str, Page], *, floor: int, use_feeds: bool = True
) -> int:
    """The smallest ``DEPTH_LIMIT`` (at least ``floor``) at which the row reaches every
    article it could reach with no limit, counting a list page it links but discovery did
    not fetch as one whose articles need a level more (a pager that goes on)."""
    free = _walk(site, pages, 0, use_feeds=use_feeds, sitemaps_per_index=0)
    depth = max(free.articles.values(), default=0)
    if free.unfetched:
        lists = [d for k, d in free.unfetched.items() if site.is_list(k)]
        depth = max(depth, max(lists, default=0) + 1)
    return max(floor, depth)


# -- fetching for a reach (scrapy sites check) ------------------------------------------------


async def explore_reach(
    site: Site,
    fetcher: Fetcher,
    *,
    depth_limit: int,
    sitemaps_per_index: int,
    batch: int = 6,
) -> dict[str, Page]:
    """Fetch, within ``fetcher``'s budget, what a reach of ``site`` needs beyond what the
    fetcher already holds, and return every page it holds (:func:`pages_of`):

    - the sitemaps robots.txt names (the site's own list of its articles, the row's feeds
      or not), and the newest ``sitemaps_per_index`` of an index;
    - the row's start pages and feeds, then the list pages the crawl would request,
      shallowest first, and one level deeper than the crawl goes (list pages at depth
      ``depth_limit``), whose articles are the ones out of its reach.

    Responses already in the fetcher (the check's own fetches) are not fetched again."""
    parts = urlsplit(site.start_urls[0] if site.start_urls else site.feeds[0].url)
    origin = f"{parts.scheme}://{parts.netloc}"
    robots = await fetcher.get(origin + "/robots.txt")
    own: list[Feed] = []
    if robots.ok and robots.response is not None:
        own = [
            Feed(u, "sitemap")
            for u in sitemap_urls_from_robots(robots.response.body, base_url=origin)
            if site.owns(u)
        ]
    feeds = [*site.feeds, *(f for f in own if f.url not in {g.url for g in site.feeds})]
    for feed in own:
        fetched = await fetcher.get(feed.url, **FEED_META)
        page = page_of(fetched, kind="sitemap")
        if page is not None and page.sitemaps:
            newest = sorted((u for u in page.sitemaps if site.owns(u)), reverse=True)
            for url in newest[: max(sitemaps_per_index, 1)]:
                await fetcher.get(url, **FEED_META)
    deeper = depth_limit + 1 if depth_limit > 0 else 0
    tried: set[str] = set()
    while fetcher.left > 0:
        pages = pages_of(fetcher.log, feeds)
        walk = _walk(site, pages, deeper, use_feeds=True, sitemaps_per_index=sitemaps_per_index)
        todo = sorted((d, k) for k, d in walk.unfetched.items() if k not in tried)[
            : min(batch, fetcher.left)
        ]
        if not todo:
            break
        kinds = {_key(f.url): f for f in feeds}
        for _, key in todo:
            tried.add(key)
        await asyncio.gather(
            *(
                fetcher.get(key, body=kinds[key].body, **FEED_META)
                if key in kinds
                else fetcher.get(key)
                for _, key in todo
            )
        )
    return pages_of(fetcher.log, feeds)
