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

from scrapy import Request, Spider, signals
from scrapy.exceptions import CloseSpider
from scrapy.http import Response
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure

from newsspider.backfill.backoff import RetryAfterMiddleware
from newsspider.backfill.cdx import Archive, Capture, choose, parse_cdx, parse_num_pages, query_url
from newsspider.backfill.records import RecordError, read_record
from newsspider.discovery.fetch import set_component
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
        self.records_yielded += 1
        item = ArticleItem(
            url=url,
            site=row.key,
            source=row.source,
            html=body,
            headers=headers,
            fetched_at=cap.time,
            archive=arch.name,
            captured_at=cap.time,
        )
        yield item
        if self.limit is not None and self.records_yielded >= self.limit:
            self.logger.info("limit of %s records reached, closing", self.limit)
            raise CloseSpider("limit")

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
