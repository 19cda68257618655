"""``BackfillSpider``: a site's years before the first crawl, from a web archive's CDX index.

A backfill is a Scrapy crawl whose requests are CDX pages and record fetches, so
politeness, retries, stats, the summary line and exit status, the progress line, WARC
recording and cluster mode (``REDIS_URL``: the shared frontier) work as for ``scrapy
crawl``:

1. for each site, archive and allowed domain, a ``showNumPages`` query, then every page of
   the domain's captures (200, HTML, in range: :func:`~newsspider.backfill.cdx.query_url`);
2. each page's captures are chosen (:func:`~newsspider.backfill.cdx.choose`: the site's
   article URLs, in range, the latest capture per URL), minus the URLs already stored and
   the captures an earlier run fetched (``backfill_captures``), so a second run of a
   finished backfill fetches no record and a killed one resumes where it was;
3. each record is fetched (a ``Range`` request into a WARC file, or the Wayback Machine's
   ``id_`` response) and read (:func:`~newsspider.backfill.records.read_record`); an
   archived 200 HTML response becomes an :class:`~newsspider.items.ArticleItem` with the
   capture's time and the archive's name, and goes through the same extraction, line
   table, reprints and storage as a live crawl.

A multi-page article (docs/crawling.md, "Multi-page articles") is read capture by capture:
a record whose page has a next page (:func:`~newsspider.extraction.pager.next_page_url`,
the row's ``next_page``) starts a chain, each next page's capture taken from the CDX pages
already read or asked for by its URL (:func:`~newsspider.backfill.cdx.page_query_url`, the
capture nearest the first page's), up to ``MULTIPAGE_MAX_PAGES``, and the article leaves as
one item carrying the further pages (``ArticleItem.pages``, ``page_urls``). A page with no
capture ends it at the page before (logged, ``newsspider/backfill/page_missing``). Captures
of pages 2..n are never articles of their own.

Records that cannot be used are counted (``newsspider/backfill/<reason>``: ``bad_record``,
``other_url``, ``not_response``, ``http_<status>``, ``not_html``, ``no_range``) and
skipped, never fatal; every fetched capture is remembered with its outcome.

Archives ask for moderation: the spider runs at ``BACKFILL_DOWNLOAD_DELAY`` and
``BACKFILL_CONCURRENCY`` per host (a command line ``-s DOWNLOAD_DELAY`` still wins), and
429/503 answers wait for their ``Retry-After`` (:mod:`.backoff`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, date, datetime
from typing import Any

from lxml import etree, html
from scrapy import Request, Spider, signals
from scrapy.exceptions import CloseSpider
from scrapy.http import Response
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure
from w3lib.url import canonicalize_url

from newsspider.backfill.backoff import RetryAfterMiddleware
from newsspider.backfill.cdx import (
    Archive,
    Capture,
    choose,
    closest,
    page_query_url,
    parse_cdx,
    parse_num_pages,
    query_url,
)
from newsspider.backfill.records import RecordError, read_record
from newsspider.discovery.fetch import set_component
from newsspider.extraction.pager import (
    first_page_url,
    might_have_pager,
    next_page_url,
    single_page_url,
    single_version_of,
)
from newsspider.incremental import StoredUrlFilter
from newsspider.items import ArticleItem
from newsspider.sites import SITES, Site
from newsspider.spiders.news import failure_reason
from newsspider.storage import engine_from_settings, session, transaction
from newsspider.storage.backfill import fetched_captures, record_captures, stored_urls_among

__all__ = ["BackfillSpider"]

#: Captures remembered per transaction.
FLUSH_EVERY = 50
#: CDX answers are small JSON; a 404 from Common Crawl's server means "no captures".
CDX_META: dict[str, Any] = {"handle_httpstatus_list": [404], "download_maxsize": 0}
#: Record fetches come before further CDX pages, so a stopped run has records, not pages.
RECORD_PRIORITY = 1
_HTML = ("text/html", "application/xhtml+xml")
#: Archived response headers an item keeps (the crawl's ``ITEM_HEADERS``, lower case).
_KEPT_HEADERS = ("content-type", "content-language", "last-modified")


class BackfillSpider(Spider):
    """The backfill of ``sites`` from ``archives`` between ``since`` and ``until``."""

    name = "backfill"
    #: Judged and summarised as a crawl (newsspider/extensions.py), though it has no one row.
    crawl_summary = True

    def __init__(
        self,
        sites: Sequence[str] = (),
        archives: Sequence[Archive] = (),
        since: date | None = None,
        until: date | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.sites: list[Site] = [SITES[key] for key in sites]
        self.archives = list(archives)
        assert since is not None
        self.since = since
        self.until = until
        self.limit = limit
        self.records_yielded = 0
        self._remember: list[dict[str, Any]] = []
        self.allowed_domains: list[str] = []  # archives are other hosts; no offsite rule
        #: pages after the first of an article, by (archive, canonical URL): their latest
        #: capture in the CDX pages read so far (module docstring, multi-page articles)
        self.later_pages: dict[tuple[str, str], Capture] = {}
        self.multipage_max = 1  # from_crawler: MULTIPAGE_MAX_PAGES

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """The archive's moderation as this spider's defaults (module docstring)."""
        super().update_settings(settings)
        settings.set("DOWNLOAD_DELAY", settings.getfloat("BACKFILL_DOWNLOAD_DELAY"), "spider")
        settings.set(
            "CONCURRENT_REQUESTS_PER_DOMAIN", settings.getint("BACKFILL_CONCURRENCY"), "spider"
        )
        set_component(settings, "DOWNLOADER_MIDDLEWARES", RetryAfterMiddleware, 560)
        # Record fetches are not article pages: the stored-URL filter has nothing to do.
        set_component(settings, "DOWNLOADER_MIDDLEWARES", StoredUrlFilter, None)

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> BackfillSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.engine_db = engine_from_settings(crawler.settings)
        spider.multipage_max = crawler.settings.getint("MULTIPAGE_MAX_PAGES")
        crawler.signals.connect(spider.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(spider.item_dropped, signal=signals.item_dropped)
        return spider

    def _stat(self, name: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"newsspider/backfill/{name}", count)

    # -- CDX -----------------------------------------------------------------------

    async def start(self) -> AsyncIterator[Request]:
        for site in self.sites:
            for archive in self.archives:
                for domain in site.allowed_domains:
                    url = query_url(
                        archive, domain, since=self.since, until=self.until, num_pages=True
                    )
                    yield Request(
                        url,
                        callback=self.parse_num_pages,
                        errback=self.cdx_failed,
                        meta=dict(CDX_META),
                        cb_kwargs={"site": site.key, "archive": asdict(archive), "domain": domain},
                    )

    def parse_num_pages(
        self, response: Response, site: str, archive: dict[str, Any], domain: str
    ) -> Iterable[Request]:
        """``showNumPages``: one request per page; one unpaged query when the server does
        not page; nothing when it has no capture (404)."""
        if response.status == 404:
            self.logger.info("%s: no captures of %s", archive["name"], domain)
            return
        pages = parse_num_pages(response.body)
        arch = Archive(**archive)
        numbers: list[int | None] = [None] if pages is None else list(range(pages))
        self._stat("cdx_pages", len(numbers))
        self.logger.info(
            "%s: %s of %s captures to read for %s", arch.name,
            "one unpaged query" if pages is None else f"{pages} pages", domain, site,
        )  # fmt: skip
        for page in numbers:
            yield Request(
                query_url(arch, domain, since=self.since, until=self.until, page=page),
                callback=self.parse_cdx,
                errback=self.cdx_failed,
                meta=dict(CDX_META),
                cb_kwargs={"site": site, "archive": archive},
            )

    def parse_cdx(
        self, response: Response, site: str, archive: dict[str, Any]
    ) -> Iterable[Request]:
        """One CDX page: its captures chosen and fetched (module docstring, step 2)."""
        if response.status == 404:
            return
        row = SITES[site]
        arch = Archive(**archive)
        captures = list(parse_cdx(response.body))
        self._stat("captures", len(captures))
        if self.multipage_max > 1:
            # pages 2..n and one-page versions (全文) of the articles listed here are read
            # with their articles, never as articles of their own
            listed = {canonicalize_url(c.url) for c in captures}
            later = [c for c in captures if self._page_of_another(row, c.url, listed)]
            for c in later:
                key = (arch.name, canonicalize_url(c.url))
                if key not in self.later_pages or c.timestamp > self.later_pages[key].timestamp:
                    self.later_pages[key] = c
            captures = [c for c in captures if not self._page_of_another(row, c.url, listed)]
        urls = {row.canonical_url(c.url) for c in captures}
        with session(self.engine_db) as s:
            stored = stored_urls_among(s, urls)
            fetched = fetched_captures(s, arch.name, urls)
        chosen = choose(row, captures, self.since, self.until, skip=stored)
        todo = [c for c in chosen if (row.canonical_url(c.url), c.timestamp) not in fetched]
        self._stat("chosen", len(chosen))
        self._stat("already_stored", len({u for u in urls if u in stored}))
        self._stat("already_fetched", len(chosen) - len(todo))
        for capture in todo:
            yield Request(
                arch.record_url(capture),
                headers=arch.record_headers(capture),
                callback=self.parse_record,
                errback=self.record_failed,
                dont_filter=True,  # many records share one WARC file's URL
                priority=RECORD_PRIORITY,
                meta={"handle_httpstatus_all": True},
                cb_kwargs={"site": site, "archive": archive, "capture": asdict(capture)},
            )

    def cdx_failed(self, failure: Failure) -> None:
        reason = failure_reason(failure)
        if reason is None:
            return
        self.logger.warning("CDX query failed (%s): %s", reason, failure.request.url)  # type: ignore[attr-defined]
        self._stat("cdx_failed")

    # -- records -----------------------------------------------------------------------

    def parse_record(
        self,
        response: Response,
        site: str,
        archive: dict[str, Any],
        capture: dict[str, Any],
    ) -> Iterable[ArticleItem]:
        """One record: an item when it holds an archived 200 HTML page (module docstring)."""
        if self.limit is not None and self.records_yielded >= self.limit:
            return
        arch, cap, row = Archive(**archive), Capture(**capture), SITES[site]
        url = row.canonical_url(cap.url)
        outcome = self._read(response, arch, cap)
        if isinstance(outcome, str):
            self._stat(outcome)
            self.logger.info("record skipped (%s): %s %s", outcome, cap.timestamp, cap.url)
            self._remembered(arch.name, url, cap.timestamp, outcome)
            return
        _, headers, body = outcome
        self._stat("records")
        following, single = (None, None)
        if self.multipage_max > 1:
            following, single = self._next_page(row, cap.url, body, [cap.url])
        if following is not None:
            state = {
                "site": site, "archive": archive, "capture": capture, "url": url,
                "headers": headers, "pages": [(cap.url, body)], "seen": [cap.url, following],
            }  # fmt: skip
            version = single and self.later_pages.get((arch.name, canonicalize_url(single)))
            if version:  # its one-page version is archived: read instead of the pages
                state["fallback"] = following
                yield self._page_record_request(state, version)
                return
            yield self._page_request(state, following)
            return
        yield from self._article(url, row, arch, cap, headers, body)

    def _article(
        self,
        url: str,
        row: Site,
        arch: Archive,
        cap: Capture,
        headers: dict[str, str],
        body: bytes,
        pages: tuple[tuple[str, bytes], ...] = (),
        page_urls: tuple[str, ...] = (),
    ) -> Iterable[ArticleItem]:
        self.records_yielded += 1
        if page_urls:
            stats = self.crawler.stats
            stats.inc_value(f"newsspider/multipage_articles/{row.key}")
            stats.inc_value(f"newsspider/multipage_pages/{row.key}", len(page_urls))
        item = ArticleItem(
            url=url,
            site=row.key,
            source=row.source,
            html=body,
            headers=headers,
            fetched_at=cap.time,
            archive=arch.name,
            captured_at=cap.time,
            pages=pages,
            page_urls=page_urls,
        )
        yield item
        if self.limit is not None and self.records_yielded >= self.limit:
            self.logger.info("limit of %s records reached, closing", self.limit)
            raise CloseSpider("limit")

    # -- multi-page articles (module docstring) -------------------------------------------

    def _page_of_another(self, row: Site, url: str, listed: set[str]) -> bool:
        """Is ``url`` a page 2..n of an article of ``row`` by its form (``a_2.shtml``), or
        the one-page version of an article listed beside it (``a_all.shtml``)?"""
        first = first_page_url(url)
        if first is not None and row.is_article(row.canonical_url(first)):
            return True
        base = single_version_of(url)
        return base is not None and canonicalize_url(base) in listed

    def _next_page(
        self, row: Site, url: str, body: bytes, seen: list[str]
    ) -> tuple[str | None, str | None]:
        """The next page of the page ``url`` and its one-page version, when it names one."""
        if not (row.next_page or might_have_pager(body, url)):
            return None, None
        try:
            tree = html.fromstring(body)
        except (etree.ParserError, ValueError):
            return None, None
        following = next_page_url(tree, url, row.next_page, seen)
        return following, following and single_page_url(tree, url)

    def _page_request(self, state: dict[str, Any], url: str) -> Request:
        """The record of the next page when a CDX page read has its capture, else the
        CDX query for that URL's captures."""
        arch = Archive(**state["archive"])
        capture = self.later_pages.get((arch.name, canonicalize_url(url)))
        if capture is not None:
            return self._page_record_request(state, capture)
        return Request(
            page_query_url(arch, url),
            callback=self.parse_page_cdx,
            errback=self.page_failed,
            dont_filter=True,
            priority=RECORD_PRIORITY + 1,
            meta={**CDX_META, "multipage": state, "multipage_url": url},
        )

    def _page_record_request(self, state: dict[str, Any], capture: Capture) -> Request:
        arch = Archive(**state["archive"])
        return Request(
            arch.record_url(capture),
            headers=arch.record_headers(capture),
            callback=self.parse_page_record,
            errback=self.page_failed,
            dont_filter=True,
            priority=RECORD_PRIORITY + 1,
            meta={"handle_httpstatus_all": True, "multipage": state},
            cb_kwargs={"page": asdict(capture)},
        )

    def parse_page_cdx(self, response: Response) -> Iterable[Request | ArticleItem]:
        """The captures of a next page: the one nearest the first page's is fetched."""
        state = response.meta["multipage"]
        first = Capture(**state["capture"])
        found = [] if response.status == 404 else list(parse_cdx(response.body))
        capture = closest(found, first.time)
        if capture is None:
            yield from self._page_missing(state, response.meta["multipage_url"], "no capture")
            return
        yield self._page_record_request(state, capture)

    def parse_page_record(
        self, response: Response, page: dict[str, Any]
    ) -> Iterable[Request | ArticleItem]:
        """Page n's record: the next page asked for, or the article ends here."""
        state = response.meta["multipage"]
        cap = Capture(**page)
        outcome = self._read(response, Archive(**state["archive"]), cap)
        single = state.pop("fallback", None)
        if single is not None:  # the one-page version: the article, or its pages after all
            if isinstance(outcome, str):
                yield self._page_request(state, single)
                return
            row, arch = SITES[state["site"]], Archive(**state["archive"])
            first = Capture(**state["capture"])
            yield from self._article(
                state["url"], row, arch, first, outcome[1], outcome[2], (), (cap.url,)
            )
            return
        if isinstance(outcome, str):
            yield from self._page_missing(state, cap.url, outcome)
            return
        body = outcome[2]
        state["pages"].append((cap.url, body))
        row = SITES[state["site"]]
        following = None
        if len(state["pages"]) < self.multipage_max:
            following = self._next_page(row, cap.url, body, state["seen"])[0]
        if following is None:
            yield from self._finish(state)
            return
        state["seen"].append(following)
        yield self._page_request(state, following)

    def page_failed(self, failure: Failure) -> Iterable[Request | ArticleItem]:
        request = failure.request  # type: ignore[attr-defined]
        state = request.meta["multipage"]
        if (single := state.pop("fallback", None)) is not None:
            yield self._page_request(state, single)  # the pages, then
            return
        reason = failure_reason(failure) or "refused"
        yield from self._page_missing(state, request.url, reason)

    def _page_missing(self, state: dict[str, Any], url: str, why: str) -> Iterable[ArticleItem]:
        n = len(state["pages"])
        self.logger.warning(
            "page %s of %s not in the archive (%s: %s): storing pages 1-%s",
            n + 1, state["url"], why, url, n,
        )  # fmt: skip
        self._stat("page_missing")
        yield from self._finish(state)

    def _finish(self, state: dict[str, Any]) -> Iterable[ArticleItem]:
        if self.limit is not None and self.records_yielded >= self.limit:
            return
        row, arch, cap = (
            SITES[state["site"]],
            Archive(**state["archive"]),
            Capture(**state["capture"]),
        )
        (_, body), *rest = state["pages"]
        page_urls = tuple(u for u, _ in state["pages"]) if rest else ()
        yield from self._article(
            state["url"], row, arch, cap, state["headers"], body, tuple(rest), page_urls
        )

    def _read(
        self, response: Response, arch: Archive, cap: Capture
    ) -> str | tuple[int, dict[str, str], bytes]:
        """The archived status, headers and body, or the reason they cannot be used."""
        if arch.wayback:
            if response.status != 200:
                return f"http_{response.status}"
            headers = {
                k.decode("latin-1"): v[0].decode("latin-1")
                for k, v in response.headers.items()
                if v
            }
            status, body = 200, response.body
        else:
            if response.status == 200 and cap.length and len(response.body) > cap.length:
                return "no_range"  # the server sent the whole file
            if response.status not in (200, 206):
                return f"http_{response.status}"
            try:
                record = read_record(response.body, cap.url)
            except RecordError as exc:
                return exc.reason
            status, headers, body = record.status, record.headers, record.body
        if status != 200:
            return f"archived_http_{status}"
        ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
        if ctype and not ctype.lower().startswith(_HTML):
            return "not_html"
        kept = {k: v for k, v in headers.items() if k.lower() in _KEPT_HEADERS}
        return status, kept, body

    def record_failed(self, failure: Failure) -> None:
        reason = failure_reason(failure)
        if reason is None:
            return
        request = failure.request  # type: ignore[attr-defined]
        self.logger.warning("record fetch failed (%s): %s", reason, request.url)
        self._stat("fetch_failed")

    # -- what was fetched --------------------------------------------------------------
    #
    # A stored article needs no mark: its URL is in ``articles`` and is skipped. A record
    # that cannot be used, or whose article the pipelines dropped (no body), is marked in
    # ``backfill_captures``, in batches, so no later run fetches it again; a mark lost to a
    # SIGKILL costs one fetch of that record in the next run, never a lost article.

    def item_dropped(
        self, item: Any, response: Any, exception: BaseException, spider: Spider
    ) -> None:
        archive = getattr(item, "archive", None)
        captured = getattr(item, "captured_at", None)
        if archive and captured is not None:
            stamp = captured.astimezone(UTC).strftime("%Y%m%d%H%M%S")
            self._remembered(archive, item.url, stamp, "dropped")

    def _remembered(self, archive: str, url: str, timestamp: str, outcome: str) -> None:
        self._remember.append(
            {
                "archive": archive,
                "url": url,
                "timestamp": timestamp,
                "outcome": outcome,
                "fetched_at": datetime.now(UTC),
            }
        )
        if len(self._remember) >= FLUSH_EVERY:
            self._flush()

    def _flush(self) -> None:
        rows, self._remember = self._remember, []
        if rows:
            with transaction(self.engine_db) as s:
                record_captures(s, rows)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self._flush()
