"""``scrapy sites check``: does a site row still find and read the site's articles?

A row's patterns were written from the site's URLs of one day; a redesign moves the
articles to a new URL form and a crawl then finds nothing, without any error. The check
reads what a crawl would read first, with a few fetches per site
(``SITES_CHECK_MAX_FETCHES``, 12), and says in one line whether the row still works:

1. the start pages and feeds (interleaved, so a row with many start pages still has its
   feeds read), and for a sitemap index at most :data:`SITEMAPS_PER_INDEX` of its
   sitemaps, newest first, as a crawl reads them (``NEWS_SITEMAPS_PER_INDEX``);
2. their on-site links (Scrapy's ``LinkExtractor``, ``Site.owns``, as
   ``NewsSpider.parse`` does), sorted by the row's patterns after ``Site.canonical_url``:
   article links and list links;
3. when they give no article link but list links, up to :data:`LIST_PAGES` of those;
4. up to :data:`SAMPLES` article links spread over what was found, fetched and extracted
   (``extract_article`` with the site's time zone, as the crawl's extraction step does).

Each site gets exactly one status (:data:`STATUSES`):

- ``ok``: article links found, and at least one sample gave a title and a body;
- ``no start page``: no start page or feed answered with a 2xx page;
- ``no article links``: pages came back, but no on-site link looks like an article at
  all (a site whose lists are built by JavaScript: look for its feeds and sitemaps);
- ``patterns match nothing``: there are on-site links that look like articles (a digit
  run of 4 or more, or a hash-like id, in the path) but the row's article patterns match
  none of them: the usual sign of a redesign (``scrapy addsite`` learns the new forms);
- ``extraction empty``: article links matched, but no sampled page gave a title and a
  body (the article template changed, or the links lead elsewhere).

The checks run concurrently, one task per site (``asyncio.gather``) inside the ``start()``
of :class:`SiteCheckSpider`, fetching with :class:`~newsspider.discovery.fetch.Fetcher`,
so every downloader middleware applies as in a crawl: robots.txt, ``DOWNLOAD_DELAY`` per
domain, ``REPLAY_ARCHIVE`` (offline checks), ``WARC_OUTPUT``. That spider runs no item
pipeline and neither the crawl summary (``CrawlSummary``) nor the live status
(``CrawlProgress``), nor the stored-URL filter of incremental crawls: a check writes
nothing into the corpus and no ``crawl_runs`` row. Its results are kept, one row per site,
in ``site_checks`` (:mod:`newsspider.storage.sitechecks`), which ``scrapy sites list``
reads.

Each site's coverage is compared too (:func:`newsspider.coverage.read.check_coverage`: its
news sitemaps and feeds against the corpus, with ``COVERAGE_MAX_FETCHES`` fetches of its
own) and shown on an indented line under the site's; a coverage below ``COVERAGE_WARN``
makes the exit status :data:`EXIT_FAILED` like a failed check (unknown does not).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import unicodedata
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.settings import BaseSettings

from newsspider.coverage.compare import UNKNOWN, SiteCoverage
from newsspider.coverage.read import check_coverage
from newsspider.discovery.fetch import Fetched, Fetcher, QuietSpider
from newsspider.discovery.reach import Reach, explore_reach, replay_reach
from newsspider.discovery.shapes import has_id
from newsspider.extraction import ExtractionError, extract_article
from newsspider.sites import BUILTIN, SITES, Feed, Site, nightly_sites
from newsspider.spiders.news import DEFAULT_DEPTH_LIMIT, FEED_META, ITEM_HEADERS, feed_links
from newsspider.storage.sitechecks import LastCheck, read_last_checks, record_checks

if TYPE_CHECKING:
    from scrapy.crawler import CrawlerProcessBase

__all__ = [
    "EXIT_FAILED",
    "STATUSES",
    "CheckRun",
    "Listing",
    "Sample",
    "SiteCheck",
    "SiteCheckSpider",
    "SiteListing",
    "check_site",
    "check_sites",
    "list_sites",
    "looks_like_article",
]

logger = logging.getLogger(__name__)

OK = "ok"
NO_START_PAGE = "no start page"
NO_ARTICLE_LINKS = "no article links"
PATTERNS_MATCH_NOTHING = "patterns match nothing"
EXTRACTION_EMPTY = "extraction empty"
#: Every status a site check ends with, the good one first.
STATUSES = (OK, NO_START_PAGE, NO_ARTICLE_LINKS, PATTERNS_MATCH_NOTHING, EXTRACTION_EMPTY)

#: Exit status of ``scrapy sites check`` when a checked site is not ``ok``.
EXIT_FAILED = 3

#: Article pages fetched and extracted per site.
SAMPLES = 3
#: List pages fetched when the start pages and feeds give no article link.
LIST_PAGES = 2
#: Sitemaps of a sitemap index read, newest first.
SITEMAPS_PER_INDEX = 2
#: Example URLs named in a failing check's line.
EXAMPLES = 1

def looks_like_article(url: str) -> bool:
    """Does the URL's path carry what article addresses carry: a digit run of 4 or more,
    or a hash-like id (``/story/9f2c3a0b.html``, ``/article/JH3K1L2M0001899O.html``)?
    Discovery's own test (:func:`~newsspider.discovery.shapes.has_id`)."""
    return has_id(url, query=False)


# -- one site ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Sample:
    """One sampled article page: what extraction found on it, or why it was not read."""

    url: str
    problem: str = ""  # http_404, robots.txt, not HTML, redirected off the article pattern
    title: bool = False
    time: bool = False
    body: bool = False
    body_chars: int = 0

    @property
    def complete(self) -> bool:
        """A title and a body: the page can be stored (a time is good but not required)."""
        return self.title and self.body


@dataclass(slots=True)
class SiteCheck:
    """The check of one site row."""

    key: str
    status: str
    article_links: int = 0
    list_links: int = 0
    onsite_links: int = 0
    samples: list[Sample] = field(default_factory=list)
    detail: str = ""
    fetches: int = 0
    checked_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: The listing compared with the corpus (newsspider.coverage); None: not compared.
    coverage: SiteCoverage | None = None
    coverage_warn: float = 0.0
    #: The row's reach over the pages the check fetched, and the share it must reach.
    reach: Reach | None = None
    min_reach: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def coverage_low(self) -> bool:
        """Coverage known and below ``COVERAGE_WARN`` (unknown is not low)."""
        return self.coverage is not None and self.coverage.below(self.coverage_warn)

    @property
    def reach_ok(self) -> bool:
        """The reach is at least ``min_reach``, or unknown (no article URL seen)."""
        share = None if self.reach is None else self.reach.share
        return share is None or share >= self.min_reach

    def as_json(self) -> dict[str, Any]:
        """The object ``--json`` prints for the site."""
        return {
            "key": self.key,
            "status": self.status,
            "article_links": self.article_links,
            "list_links": self.list_links,
            "onsite_links": self.onsite_links,
            "samples": {
                "tried": len(self.samples),
                "with_title": sum(s.title for s in self.samples),
                "with_time": sum(s.time for s in self.samples),
                "with_body": sum(s.body for s in self.samples),
                "median_body_chars": _median([s.body_chars for s in self.samples if s.body]),
            },
            "sample_urls": [s.url for s in self.samples],
            "detail": self.detail,
            "fetches": self.fetches,
            "checked_at": self.checked_at.isoformat(timespec="seconds"),
            "coverage": None if self.coverage is None else self.coverage.as_json(),
            "reach": None
            if self.reach is None
            else {**self.reach.as_json(), "min": self.min_reach, "ok": self.reach_ok},
        }

    def line(self, key_width: int = 0) -> str:
        """``netease  ok  42 article links, ...``; a failure as ``KEY  STATUS: DETAIL``; then
        an indented line with the site's coverage."""
        key = self.key.ljust(key_width)
        if self.ok:
            text = f"{key}  {self.status}  {self.detail}"
        else:
            text = f"{key}  {self.status}: {self.detail}"
        text += self._reach_text()
        coverage = (
            self.coverage.line(self.coverage_warn)
            if self.coverage is not None
            else f"{self.key}: {UNKNOWN} (not compared: the database could not be used)"
        )
        return f"{text}\n  {coverage}"

    def _reach_text(self) -> str:
        """``; reach 96 of 99 article URLs seen (97%) at depth 5``, with what is out of
        reach when under ``min_reach``."""
        if self.reach is None:
            return ""
        text = f"; {self.reach.summary()}"
        if not self.reach_ok:
            text += f", under {self.min_reach:.0%}"
            for reason, n, detail, _ in self.reach.reasons()[:2]:
                text += f"; {n} {reason}: {detail}"
        return text

    def stored(self) -> LastCheck:
        """The row ``site_checks`` keeps."""
        return LastCheck(self.key, self.checked_at, self.status, self.article_links, self.detail)


@dataclass(slots=True)
class _Found:
    """Links found so far on a site's pages, each once, in the order found."""

    site: Site
    articles: dict[str, None] = field(default_factory=dict)
    lists: dict[str, None] = field(default_factory=dict)
    onsite: dict[str, None] = field(default_factory=dict)
    answered: int = 0  # start pages and feeds that came back 2xx
    pages: int = 0  # pages and feeds read
    failures: Counter[str] = field(default_factory=Counter)

    def add(self, urls: Iterable[str]) -> None:
        for url in urls:
            if not self.site.owns(url):
                continue
            canonical = self.site.canonical_url(url)
            self.onsite[canonical] = None
            if self.site.is_article(canonical):
                self.articles[canonical] = None
            elif self.site.is_list(canonical):
                self.lists[canonical] = None

    def lookalikes(self) -> list[str]:
        """On-site links that look like articles but are neither articles nor lists."""
        return [
            u for u in self.onsite
            if u not in self.articles and u not in self.lists and looks_like_article(u)
        ]  # fmt: skip


_LINKS = LinkExtractor(unique=True)


def _page_links(response: Response) -> list[str]:
    """Links of an HTML page, as ``NewsSpider.parse`` extracts them."""
    if not isinstance(response, TextResponse):
        return []
    return [link.url for link in _LINKS.extract_links(response)]


def _entries(site: Site) -> list[tuple[str, Feed | None]]:
    """Start pages and feeds, interleaved: a row with many start pages still has its feeds
    read within the budget."""
    pages: list[tuple[str, Feed | None]] = [(url, None) for url in site.start_urls]
    feeds: list[tuple[str, Feed | None]] = [(feed.url, feed) for feed in site.feeds]
    out: list[tuple[str, Feed | None]] = []
    for i in range(max(len(pages), len(feeds))):
        out.extend(pages[i : i + 1])
        out.extend(feeds[i : i + 1])
    return out


async def _fetch(fetcher: Fetcher, url: str, feed: Feed | None) -> Fetched:
    """A page, or a feed (with the feed size limits; a POST when it has a body)."""
    if feed is None:
        return await fetcher.get(url)
    return await fetcher.get(url, body=feed.body, **FEED_META)



async def _fetch_all(
    fetcher: Fetcher, entries: Sequence[tuple[str, Feed | None]], limit: int
) -> list[tuple[str, Feed | None, Fetched]]:
    """Fetch the first ``limit`` entries concurrently (the download slot still spaces
    them by ``DOWNLOAD_DELAY``)."""
    chosen = list(entries)[: max(0, limit)]
    fetched = await asyncio.gather(*(_fetch(fetcher, url, feed) for url, feed in chosen))
    return [(url, feed, f) for (url, feed), f in zip(chosen, fetched, strict=True)]


def _read(found: _Found, url: str, feed: Feed | None, fetched: Fetched) -> list[str]:
    """Add what one page or feed links to; return the sitemaps a sitemap index names."""
    if not fetched.ok or fetched.response is None:
        found.failures[fetched.reason or "failed"] += 1
        return []
    found.pages += 1
    if feed is None:
        found.add(_page_links(fetched.response))
        return []
    links = feed_links(fetched.response.body, feed.kind)
    found.add(links.pages)
    return sorted((u for u in links.sitemaps if found.site.owns(u)), reverse=True)


def _spread(urls: Sequence[str], k: int) -> list[str]:
    """``k`` URLs spread evenly over ``urls`` (first, middle, last...), in order."""
    if len(urls) <= k:
        return list(urls)
    return [urls[i * len(urls) // k] for i in range(k)]


async def _sample(fetcher: Fetcher, site: Site, url: str) -> Sample:
    """Fetch one article link and extract it as the crawl would."""
    fetched = await fetcher.get(url)
    response = fetched.response
    if not fetched.ok or response is None:
        return Sample(url, fetched.reason or "failed")
    if not site.is_article(site.canonical_url(response.url)):
        return Sample(url, f"redirected off the article pattern to {response.url}")
    headers = {
        name: value.decode("latin-1")
        for name in ITEM_HEADERS
        if (value := response.headers.get(name)) is not None
    }
    try:
        article = extract_article(response.body, response.url, headers=headers, tz=site.tz)
    except ExtractionError:
        return Sample(url, "not HTML")
    text = article.text or ""
    return Sample(
        url, "", bool(article.title), article.published is not None, bool(text), len(text)
    )


def _home(site: Site) -> str:
    """The address to give ``scrapy addsite``: the root of the first start page (or feed)."""
    first = site.start_urls[0] if site.start_urls else site.feeds[0].url
    parts = urlsplit(first)
    return f"{parts.scheme}://{parts.netloc}/"


def _median(values: Sequence[int]) -> int | None:
    return round(statistics.median(values)) if values else None


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _samples_text(samples: Sequence[Sample]) -> str:
    if not samples:
        return "no sample"
    n = len(samples)
    if all(s.title and s.time and s.body for s in samples):
        return f"{n}/{n} samples with title, time and body"
    text = (
        f"{_plural(n, 'sample')}: {sum(s.title for s in samples)} with title, "
        f"{sum(s.time for s in samples)} with time, {sum(s.body for s in samples)} with body"
    )
    problems = Counter(s.problem.split(" to ")[0] for s in samples if s.problem)
    return text + (f" ({_counts(problems)})" if problems else "")


async def check_site(
    site: Site, fetcher: Fetcher, *, reach_fetches: int = 0, min_reach: float = 0.0,
    sitemaps_per_index: int = SITEMAPS_PER_INDEX,
) -> SiteCheck:
    """Check one row (module docstring) with at most ``fetcher.budget`` fetches, then,
    with ``reach_fetches`` more, its reach (:func:`_reach`)."""
    found = _Found(site)
    entries = _entries(site)
    # The start pages and feeds, keeping SAMPLES fetches for the articles.
    first = await _fetch_all(fetcher, entries, max(1, fetcher.left - SAMPLES))
    sitemaps: list[str] = []
    for url, feed, fetched in first:
        sitemaps.extend(_read(found, url, feed, fetched))
    found.answered = found.pages
    unread = len(entries) - len(first)
    if sitemaps:  # a sitemap index: its newest sitemaps (an index below it is not read)
        children = [(u, Feed(u, "sitemap")) for u in dict.fromkeys(sitemaps)]
        limit = min(SITEMAPS_PER_INDEX, fetcher.left - SAMPLES)
        for url, feed, fetched in await _fetch_all(fetcher, children, limit):
            _read(found, url, feed, fetched)
    if not found.articles and found.lists:
        done = {site.canonical_url(u) for u, _, _ in first}
        lists = [(u, None) for u in found.lists if u not in done]
        limit = min(LIST_PAGES, fetcher.left - SAMPLES)
        for url, feed, fetched in await _fetch_all(fetcher, lists, limit):
            _read(found, url, feed, fetched)
    samples: list[Sample] = []
    if found.articles:
        chosen = _spread(list(found.articles), min(SAMPLES, max(fetcher.left, 0)))
        samples = list(await asyncio.gather(*(_sample(fetcher, site, u) for u in chosen)))
    check = SiteCheck(
        key=site.key,
        status=OK,
        article_links=len(found.articles),
        list_links=len(found.lists),
        onsite_links=len(found.onsite),
        samples=samples,
        fetches=fetcher.spent,
    )
    tried = [(url, feed) for url, feed, _ in first]
    check.status, check.detail = _verdict(site, found, samples, tried, unread)
    if reach_fetches > 0:
        check.reach = await _reach(site, fetcher, reach_fetches, sitemaps_per_index)
        check.min_reach = min_reach
    check.checked_at = datetime.now(UTC)
    logger.info("sites check %s: %s (%s fetches)", site.key, check.status, fetcher.spent)
    return check


async def _reach(site: Site, fetcher: Fetcher, extra: int, sitemaps_per_index: int) -> Reach:
    """The row's reach (:mod:`newsspider.discovery.reach`) over what the check fetched and
    up to ``extra`` more fetches: the site's own sitemaps, the list pages the crawl
    requests and one level beyond its depth."""
    depth = site.depth_limit or DEFAULT_DEPTH_LIMIT
    spent = fetcher.spent
    if fetcher.budget:
        fetcher.budget = spent + extra
    pages = await explore_reach(
        site, fetcher, depth_limit=depth, sitemaps_per_index=sitemaps_per_index
    )
    reach = replay_reach(site, pages, depth_limit=depth, sitemaps_per_index=sitemaps_per_index)
    reach.fetches = fetcher.spent - spent
    return reach


def _verdict(
    site: Site,
    found: _Found,
    samples: Sequence[Sample],
    tried: Sequence[tuple[str, Feed | None]],
    unread: int,
) -> tuple[str, str]:
    """The status and the line's detail (with what to do about a failure)."""
    articles, lists = len(found.articles), len(found.lists)
    links = f"{_plural(articles, 'article link')}, {_plural(lists, 'list link')}"
    if not found.answered:
        feeds = sum(1 for _, feed in tried if feed is not None)
        what = _plural(len(tried) - feeds, "start page") + (
            f" and {_plural(feeds, 'feed')}" if feeds else ""
        )
        reasons = _counts(found.failures)
        where = "newsspider/sites.toml" if site.origin == BUILTIN else site.origin
        return NO_START_PAGE, (
            f"no 2xx answer from {what}"
            + (f" ({reasons})" if reasons else "")
            + (f", {unread} more not fetched (SITES_CHECK_MAX_FETCHES)" if unread else "")
            + f"; check the row's start_urls and feeds in {where}"
        )
    if found.articles:
        samples_text = _samples_text(samples)
        if any(s.complete for s in samples):
            return OK, f"{links}, {samples_text}"
        return EXTRACTION_EMPTY, (
            f"{links}, {samples_text}; the article pages may have changed: "
            f"try scrapy extract {samples[0].url if samples else _home(site)}"
        )
    pages = _plural(found.pages, "page")
    lookalikes = found.lookalikes()
    if lookalikes:
        examples = ", ".join(lookalikes[:EXAMPLES])
        return PATTERNS_MATCH_NOTHING, (
            f"0 of {len(found.onsite)} on-site links match "
            f"({len(lookalikes)} look like articles, e.g. {examples}); "
            f"run scrapy addsite {_home(site)} to learn the new URL forms"
        )
    return NO_ARTICLE_LINKS, (
        f"{pages} read, {_plural(len(found.onsite), 'on-site link')}, none looks like an "
        f"article (lists built by JavaScript?); run scrapy addsite {_home(site)} "
        "to look for its feeds and sitemaps"
    )


# -- the spider and the run -------------------------------------------------------------------


class SiteCheckSpider(QuietSpider):
    """Runs :func:`check_site` for every key, concurrently, inside ``start()``.

    It yields no request and no item; ``results`` (a list the caller passes) receives
    the checks in the order of ``keys``.
    """

    name = "sites-check"

    def __init__(
        self, keys: Sequence[str] = (), results: list[SiteCheck] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.keys = list(keys)
        self.results = results if results is not None else []
        self.error: BaseException | None = None

    async def start(self) -> AsyncIterator[Request]:
        budget = self.settings.getint("SITES_CHECK_MAX_FETCHES")
        now = datetime.now(UTC)
        reach = {
            "reach_fetches": self.settings.getint("SITES_CHECK_REACH_FETCHES"),
            "min_reach": self.settings.getfloat("ADDSITE_MIN_REACH"),
            "sitemaps_per_index": self.settings.getint("NEWS_SITEMAPS_PER_INDEX"),
        }
        try:
            checks = await asyncio.gather(
                *(
                    check_site(SITES[key], Fetcher(self.crawler, budget), **reach)
                    for key in self.keys
                )
            )
            coverages = await asyncio.gather(
                *(check_coverage(self.crawler, SITES[key], now=now) for key in self.keys)
            )
        except Exception as exc:
            self.error = exc  # raised again by check_sites, with its traceback
            raise
        warn = self.settings.getfloat("COVERAGE_WARN")
        for check, coverage in zip(checks, coverages, strict=True):
            check.coverage, check.coverage_warn = coverage, warn
        self.results.extend(checks)
        return
        yield  # an async generator that yields nothing


@dataclass(frozen=True, slots=True)
class CheckRun:
    """What ``scrapy sites check`` prints: the checks, and why they were not recorded."""

    checks: list[SiteCheck]
    not_recorded: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when every checked site is ``ok``, reaches ``ADDSITE_MIN_REACH`` and has its
        coverage not below ``COVERAGE_WARN``, else :data:`EXIT_FAILED`."""
        return (
            0
            if all(c.ok and c.reach_ok and not c.coverage_low for c in self.checks)
            else EXIT_FAILED
        )

    def lines(self) -> list[str]:
        width = max((len(c.key) for c in self.checks), default=0)
        return [c.line(width) for c in self.checks]

    def as_json(self) -> list[dict[str, Any]]:
        return [c.as_json() for c in self.checks]


def check_sites(process: CrawlerProcessBase, keys: Sequence[str]) -> CheckRun:
    """Check the rows ``keys`` of :data:`SITES` in ``process`` (one crawl of
    :class:`SiteCheckSpider`), then record each result in ``site_checks``."""
    results: list[SiteCheck] = []
    crawler = process.create_crawler(SiteCheckSpider)
    process.crawl(crawler, keys=list(keys), results=results)
    process.start()
    spider = crawler.spider
    if isinstance(spider, SiteCheckSpider) and spider.error is not None:
        raise spider.error
    if len(results) != len(keys):
        raise RuntimeError(f"the site check ended with {len(results)} of {len(keys)} results")
    return CheckRun(results, record_checks(process.settings, [c.stored() for c in results]))


# -- the listing ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SiteListing:
    """One row of ``scrapy sites list``."""

    site: Site
    last: LastCheck | None
    nightly: bool

    @property
    def checked(self) -> str:
        """``yes``, ``yes, ok on 2026-11-28``, ``no, patterns match nothing on ...``."""
        if self.last is not None and self.last.ok:
            return f"yes, ok on {self.last.checked_at:%Y-%m-%d}"
        said = "yes" if self.site.checked else "no"
        if self.last is None:
            return said
        return f"{said}, {self.last.status} on {self.last.checked_at:%Y-%m-%d}"

    def as_json(self) -> dict[str, Any]:
        last = self.last
        return {
            "key": self.site.key,
            "source": self.site.source,
            "origin": self.site.origin,
            "checked": self.site.checked,
            "last_check": None if last is None else {
                "checked_at": last.checked_at.isoformat(timespec="seconds"),
                "status": last.status,
                "article_links": last.article_links,
                "detail": last.detail,
            },
            "nightly": self.nightly,
            "article_patterns": len(self.site.article_patterns),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Listing:
    """Every row of the table, and why the stored checks could not be read."""

    rows: list[SiteListing]
    not_read: str | None = None

    def lines(self) -> list[str]:
        columns = [
            (
                r.site.key,
                r.site.source,
                r.site.origin,
                r.checked,
                "nightly" if r.nightly else "-",
                _plural(len(r.site.article_patterns), "article pattern"),
            )
            for r in self.rows
        ]
        widths = [max((_width(row[i]) for row in columns), default=0) for i in range(5)]
        return [
            "  ".join(_pad(v, w) for v, w in zip(row[:5], widths, strict=True)) + "  " + row[5]
            for row in columns
        ]

    def as_json(self) -> list[dict[str, Any]]:
        return [r.as_json() for r in self.rows]


def list_sites(settings: BaseSettings) -> Listing:
    """Every row of :data:`SITES` in order, with its last stored check and whether
    ``scrapy nightly`` crawls it."""
    last, not_read = read_last_checks(settings)
    nightly = set(nightly_sites(settings))
    rows = [SiteListing(site, last.get(key), key in nightly) for key, site in SITES.items()]
    return Listing(rows, not_read)


def _width(text: str) -> int:
    """Terminal columns of ``text``: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))
