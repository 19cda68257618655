"""A site's listing fetched, and compared with the corpus.

What is read, through Scrapy's downloader (:class:`~newsspider.discovery.fetch.Fetcher`:
robots.txt, ``USER_AGENT``, ``DOWNLOAD_DELAY`` per domain, ``REPLAY_ARCHIVE``), within
``COVERAGE_MAX_FETCHES`` fetches per site:

1. the row's ``feeds`` (sitemaps, RSS/Atom feeds, JSON lists);
2. the ``Sitemap:`` lines of the robots.txt of each host of its start pages and feeds
   (Scrapy's ``sitemap_urls_from_robots``), the way discovery finds sitemaps;
3. the ``<link rel="alternate">`` RSS/Atom feeds its start pages declare;
4. of a sitemap index, the sitemaps whose ``lastmod`` is not older than the window
   (undated ones too), news sitemaps first, then newest by URL, at most
   ``NEWS_SITEMAPS_PER_INDEX`` of them (0: all), as a crawl reads them.

:func:`compare_listing` then sorts the entries into the window's days and asks the corpus
which are stored (:func:`newsspider.storage.coverage.stored_among`, an indexed query).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urljoin, urlsplit

from scrapy.crawler import Crawler
from scrapy.http import TextResponse
from scrapy.settings import BaseSettings
from scrapy.utils.sitemap import sitemap_urls_from_robots

from newsspider.discovery.fetch import Fetched, Fetcher
from newsspider.extraction.pager import first_page_url
from newsspider.sites import Feed, Site
from newsspider.spiders.news import FEED_META
from newsspider.storage import Engine
from newsspider.storage import session as open_session
from newsspider.storage.coverage import open_corpus, record_coverage, stored_among

from .compare import SiteCoverage, compare, listed_by_day, lookups, window
from .listing import SITEMAP_INDEX, Document, Entry, read_document

__all__ = ["CoveragePolicy", "SiteListing", "check_coverage", "compare_listing", "list_site"]

logger = logging.getLogger(__name__)

#: ``<link rel="alternate">`` types read as feeds (RSS and Atom).
FEED_TYPES = ("application/rss+xml", "application/atom+xml")


@dataclass(frozen=True, slots=True)
class CoveragePolicy:
    """The settings a comparison reads (``COVERAGE_*``, ``NEWS_SITEMAPS_PER_INDEX``)."""

    days: int
    warn: float
    max_fetches: int
    sitemaps_per_index: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> CoveragePolicy:
        return cls(
            days=settings.getint("COVERAGE_DAYS"),
            warn=settings.getfloat("COVERAGE_WARN"),
            max_fetches=settings.getint("COVERAGE_MAX_FETCHES"),
            sitemaps_per_index=settings.getint("NEWS_SITEMAPS_PER_INDEX"),
        )


@dataclass(slots=True)
class SiteListing:
    """What a site listed: the documents that gave entries, their URLs, what failed."""

    site: Site
    documents: list[Document] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _declared_feeds(fetched: Fetched) -> list[str]:
    response = fetched.response
    if not fetched.ok or not isinstance(response, TextResponse):
        return []
    types = " or ".join(f"@type='{t}'" for t in FEED_TYPES)
    hrefs = response.xpath(f"//link[@rel='alternate'][{types}]/@href").getall()
    return [urljoin(response.url, h.strip()) for h in hrefs if h.strip()]


def _children(sitemaps: Sequence[Entry], site: Site, since: str, limit: int) -> list[str]:
    """The sitemaps of an index worth reading (module docstring, step 4)."""
    fresh = [
        s.url
        for s in sitemaps
        if site.owns(s.url)
        and (s.published is None or s.published.astimezone(site.zone).date().isoformat() >= since)
    ]
    news = [u for u in fresh if "news" in u.lower()]
    rest = sorted((u for u in fresh if "news" not in u.lower()), reverse=True)
    chosen = list(dict.fromkeys(news + rest))
    return chosen[:limit] if limit > 0 else chosen


async def list_site(
    site: Site, fetcher: Fetcher, *, now: datetime, policy: CoveragePolicy
) -> SiteListing:
    """Fetch what the site lists (module docstring) with at most ``fetcher.budget`` fetches."""
    listing = SiteListing(site)
    queue: list[Feed] = list(site.feeds)
    hosts = [u for u in (*site.start_urls, *(f.url for f in site.feeds)) if site.owns(u)]
    robots = await asyncio.gather(
        *(fetcher.get(o + "/robots.txt") for o in dict.fromkeys(map(_origin, hosts)))
    )
    for r in robots:
        if r.ok and r.response is not None:
            for url in sitemap_urls_from_robots(r.response.body, base_url=r.url):
                if site.owns(url):
                    queue.append(Feed(url, "sitemap"))
    for page in await asyncio.gather(*(fetcher.get(u) for u in site.start_urls)):
        queue.extend(Feed(u, "rss") for u in _declared_feeds(page) if site.owns(u))
    since = window(now, site, policy.days)[-1]
    seen: set[str] = set()
    while queue and fetcher.left > 0:
        batch = [f for f in dict((f.url, f) for f in queue).values() if f.url not in seen]
        queue = []
        seen.update(f.url for f in batch)
        fetched = await asyncio.gather(
            *(fetcher.get(f.url, body=f.body, **FEED_META) for f in batch)
        )
        for feed, got in zip(batch, fetched, strict=True):
            if not got.ok or got.response is None:
                listing.failures[got.reason or "failed"] += 1
                continue
            doc = read_document(got.response.body, feed.kind, site.zone)
            if doc.kind == SITEMAP_INDEX:
                children = _children(doc.sitemaps, site, since, policy.sitemaps_per_index)
                queue.extend(Feed(u, "sitemap") for u in children)
            elif doc.entries:
                listing.documents.append(doc)
                listing.sources.append(feed.url)
            else:
                listing.failures["nothing listed"] += 1
    unread = len(queue)
    if unread:
        listing.failures["COVERAGE_MAX_FETCHES"] += unread
    logger.info(
        "coverage %s: %s documents listed %s entries (%s fetches)",
        site.key, len(listing.documents), sum(len(d.entries) for d in listing.documents),
        fetcher.spent,
    )  # fmt: skip
    return listing


def first_page_of(site: Site) -> Callable[[str], str | None]:
    """The first page of a listed URL that is page n of a multi-page article of ``site``
    (``a_3.shtml`` -> ``a.shtml``, canonical, an article URL of the row), else None: page 2..n
    are never rows of their own (docs/crawling.md, "Multi-page articles"), so a listed page 3
    whose page 1 is stored is not missing."""

    def first_page(url: str) -> str | None:
        first = first_page_url(url)
        if first is None:
            return None
        first = site.canonical_url(first)
        return first if site.is_article(first) else None

    return first_page


def compare_listing(
    engine: Engine,
    listing: SiteListing,
    *,
    now: datetime,
    policy: CoveragePolicy,
    first_page: Callable[[str], str | None] | None = None,
) -> SiteCoverage:
    """The listing's window days compared with the corpus of ``engine`` (a continuation
    page counts as its first page: :func:`first_page_of` unless ``first_page`` is given)."""
    site = listing.site
    if first_page is None:
        first_page = first_page_of(site)
    by_day, unmatched = listed_by_day(listing.documents, site, now=now, days=policy.days)
    with open_session(engine) as session:
        stored = stored_among(session, lookups(by_day, first_page))
    days = compare(site.key, by_day, stored, first_page=first_page)
    return SiteCoverage(
        site.key,
        days if any(d.listed for d in days) else (),
        tuple(listing.sources),
        unmatched,
        dict(listing.failures),
    )


async def check_coverage(crawler: Crawler, site: Site, *, now: datetime) -> SiteCoverage | None:
    """``scrapy sites check``'s comparison: list the site with a budget of its own
    (``COVERAGE_MAX_FETCHES``), compare with the corpus of the crawler's settings and record
    the days (``filled`` 0: a check fetches no article). None when the database cannot be
    used: the check's other findings still print, and the command warns once that its
    results were not recorded, with why (so this is only an INFO line)."""
    policy = CoveragePolicy.from_settings(crawler.settings)
    listing = await list_site(site, Fetcher(crawler, policy.max_fetches), now=now, policy=policy)
    engine, problem = open_corpus(crawler.settings)
    if engine is None:
        logger.info("coverage of %s not compared: %s", site.key, problem)
        return None
    coverage = compare_listing(engine, listing, now=now, policy=policy)
    record_coverage(engine, coverage)
    return coverage
