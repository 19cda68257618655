"""``WarcBackfillSpider``: ``scrapy backfill --warc``, the article pages in whole WARC files.

No request is made: ``start()`` yields :class:`~newsspider.items.ArticleItem` s straight
from a scan of the files (:class:`~newsspider.backfill.warcscan.WarcScan`), which go
through the crawl's own pipelines (extraction, line table, reprints, storage) with the
file's name (``archive = "warc:<file name>"``) and the capture's ``WARC-Date``
(``captured_at``, and ``fetched_at``: when the page was fetched).

- The scan runs in a thread of its own, :data:`BATCH` kept pages at a time, one batch
  ahead of the items being yielded, so the reactor is never blocked by gunzip and
  parsing, and scanning goes on while the pipelines work.
- At most :data:`IN_FLIGHT` items are in the pipelines at once (``start()`` waits for
  room): a file of any size holds as much memory as a few batches.
- URLs already stored (a live crawl's, an earlier backfill's) are skipped, counted
  ``newsspider/warc/stored``; one query per batch.
- The latest capture of a URL wins within one scan: an earlier or equal capture met after
  a later one is skipped (``newsspider/warc/superseded``), a later one goes through once the
  earlier has left the pipelines, and the stored row is overwritten in place.
- A multi-page article's pages are joined (:mod:`newsspider.backfill.paged`): its item
  carries the further pages' captures (``ArticleItem.pages``, ``page_urls``), as a live
  crawl's does, up to ``MULTIPAGE_MAX_PAGES``; counted ``newsspider/warc/paged_joined``,
  ``paged_single`` (its one-page version), ``paged_incomplete`` (stored with the pages up
  to the first the files lack) and ``page_without_first`` (a page 2..n whose first page no
  record holds: dropped), and in ``newsspider/multipage_articles/<site>`` and
  ``newsspider/multipage_pages/<site>`` as in a crawl.
- Every record the scan passes over is counted by reason, ``newsspider/warc/<reason>``
  (:data:`~newsspider.backfill.warcscan.SCAN_REASONS`); the end of the scan logs one INFO
  line with the records read, kept and skipped by reason, records/s and MB/s.
- The crawl ends as every crawl does, with the summary line and exit status of
  :mod:`newsspider.outcome` (``crawl_summary``): no download is made, so the article
  records the scan kept stand for the pages fetched (``newsspider/pages_read``), and a scan
  that kept nothing exits 3, one whose every article was dropped 5, one that stored
  (or found everything stored already) 0.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import Any

from scrapy import Spider, signals

from newsspider.backfill.paged import Joined, PagedPages
from newsspider.backfill.warcscan import WarcScan
from newsspider.items import ArticleItem
from newsspider.outcome import PAGES_READ_STAT
from newsspider.sites import SITES
from newsspider.storage import engine_from_settings, session
from newsspider.storage.backfill import stored_urls_among
from newsspider.workers import await_future

__all__ = ["BATCH", "IN_FLIGHT", "WarcBackfillSpider"]

#: Kept pages handed over by the scan thread at a time (and per stored-URL query).
BATCH = 100
#: A batch is handed over after this many seconds of scanning even when not full.
BATCH_SECONDS = 2.0
#: Items in the pipelines at most.
IN_FLIGHT = 64
#: Archived response headers an item keeps (the crawl's ``ITEM_HEADERS``, lower case).
_KEPT_HEADERS = ("content-type", "content-language", "last-modified")
_STAT = "newsspider/warc/"


class WarcBackfillSpider(Spider):
    """The article pages of ``sites`` (keys; none: every site of the table) in ``warcs``
    (paths or URLs), captured from ``since`` to ``until`` (either open), at most ``limit``."""

    name = "backfill-warc"
    #: judged and summed up as a crawl (:class:`newsspider.extensions.CrawlSummary`)
    crawl_summary = True

    def __init__(
        self,
        warcs: Sequence[str] = (),
        sites: Sequence[str] = (),
        since: date | None = None,
        until: date | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.warcs = list(warcs)
        self.site_keys = list(sites)
        self.since = since
        self.until = until
        self.limit = limit
        self.allowed_domains: list[str] = []
        self.scan: WarcScan | None = None
        self.items_yielded = 0
        self.skipped: Counter[str] = Counter()  # stored, superseded
        self._yielded: dict[str, Any] = {}  # URL -> the capture time yielded in this scan
        self._in_flight: Counter[str] = Counter()  # URL -> items in the pipelines
        self._stop = False
        self._logged = False
        self._started = 0.0
        self.paged = PagedPages(1)  # from_crawler: MULTIPAGE_MAX_PAGES

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> WarcBackfillSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.engine_db = engine_from_settings(crawler.settings)
        spider.paged = PagedPages(crawler.settings.getint("MULTIPAGE_MAX_PAGES"))
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(spider._item_done, signal=signal)
        crawler.signals.connect(spider.spider_closed, signal=signals.spider_closed)
        return spider

    # -- the scan thread ----------------------------------------------------------------

    def _next_batch(self, pages: Iterator[Any]) -> tuple[list[Joined], set[str], dict]:
        """Up to :data:`BATCH` kept articles (the latest capture of a URL repeated within
        them; a multi-page article's pages joined, :class:`PagedPages`), the stored URLs
        among them, and the scan's counts so far."""
        latest: dict[str, Joined] = {}
        superseded = 0
        deadline = time.monotonic() + BATCH_SECONDS

        def keep(joined: Joined) -> None:
            nonlocal superseded
            prev = latest.get(joined.page.url)
            if prev is None or joined.page.captured_at > prev.page.captured_at:
                latest[joined.page.url] = joined
            superseded += prev is not None

        for page in pages:
            for joined in self.paged.feed(page):
                keep(joined)
            if len(latest) >= BATCH or self._stop or time.monotonic() > deadline:
                break
        else:  # the files are read: the articles still waiting for a page leave as they are
            for joined in self.paged.finish():
                keep(joined)
        stored: set[str] = set()
        if latest:
            with session(self.engine_db) as s:
                stored = stored_urls_among(s, latest)
        assert self.scan is not None
        counts = {**self.scan.counts, **self.paged.counts}
        counts["superseded"] = superseded  # within the batch; added to the spider's own
        return list(latest.values()), stored, counts

    # -- the reactor ----------------------------------------------------------------------

    async def start(self) -> AsyncIterator[ArticleItem]:
        s = self.crawler.settings
        self.scan = WarcScan(
            sites=self.site_keys,
            since=self.since,
            until=self.until,
            max_size=s.getint("DOWNLOAD_MAXSIZE"),
            timeout=s.getfloat("DOWNLOAD_TIMEOUT"),
            user_agent=s.get("USER_AGENT"),
        )
        self._started = time.perf_counter()
        pages = self.scan.scan(self.warcs)
        pool = ThreadPoolExecutor(1, thread_name_prefix="newsspider-warc")
        reported: dict[str, int] = {}
        try:
            ahead = pool.submit(self._next_batch, pages)
            while True:
                batch, stored, counts = await await_future(ahead)
                self._skip("superseded", counts.pop("superseded"))
                self._report(counts, reported)
                if not batch:
                    break
                ahead = pool.submit(self._next_batch, pages)  # scan on meanwhile
                for page in batch:
                    item = self._item(page, stored)
                    if item is None:
                        continue
                    while sum(self._in_flight.values()) >= IN_FLIGHT or item.url in self._in_flight:
                        await asyncio.sleep(0.01)
                    self._in_flight[item.url] += 1
                    self.items_yielded += 1
                    yield item
                    if self.limit is not None and self.items_yielded >= self.limit:
                        self.logger.info("limit of %s records reached", self.limit)
                        return
            self._log_summary()
        finally:
            self._stop = True
            pool.submit(pages.close)  # after the batch in hand, in the scan's own thread
            pool.shutdown(wait=False)

    def _item(self, joined: Joined, stored: set[str]) -> ArticleItem | None:
        """The article as an item, or None (counted) when it is stored already or an
        earlier capture than one this scan yielded."""
        page = joined.page
        earlier = self._yielded.get(page.url)
        if earlier is not None:
            if page.captured_at <= earlier:
                self._skip("superseded")
                return None
        elif page.url in stored:
            self._skip("stored")
            return None
        self._yielded[page.url] = page.captured_at
        site = SITES[page.site]
        headers = {k: v for k, v in page.headers.items() if k.lower() in _KEPT_HEADERS}
        if joined.page_urls:
            stats = self.crawler.stats
            stats.inc_value(f"newsspider/multipage_articles/{site.key}")
            stats.inc_value(f"newsspider/multipage_pages/{site.key}", len(joined.page_urls))
        return ArticleItem(
            url=page.url,
            site=site.key,
            source=site.source,
            html=page.body,
            headers=headers,
            fetched_at=page.captured_at,
            archive=f"warc:{page.warc}",
            captured_at=page.captured_at,
            pages=tuple((p.url, p.body) for p in joined.more),
            page_urls=joined.page_urls,
        )

    def _skip(self, reason: str, n: int = 1) -> None:
        if n:
            self.skipped[reason] += n
            self.crawler.stats.inc_value(_STAT + reason, n)

    def _report(self, counts: dict[str, int], reported: dict[str, int]) -> None:
        """The scan's counts into the stats, as ``newsspider/warc/<name>``."""
        stats = self.crawler.stats
        for name, value in counts.items():
            if value != reported.get(name, 0):
                stats.set_value(_STAT + name, value)
                reported[name] = value
        stats.set_value(_STAT + "bytes", self.scan.bytes if self.scan else 0)
        stats.set_value(PAGES_READ_STAT, counts.get("kept", 0))

    def _item_done(self, item: Any, *args: Any, **kwargs: Any) -> None:
        url = getattr(item, "url", None)
        if url in self._in_flight:
            self._in_flight[url] -= 1
            if self._in_flight[url] <= 0:
                del self._in_flight[url]

    def _log_summary(self) -> None:
        if self._logged or self.scan is None:
            return
        self._logged = True
        scan = self.scan
        self.crawler.stats.set_value(_STAT + "bytes", scan.bytes)
        self.crawler.stats.set_value(_STAT + "seconds", round(scan.seconds, 2))
        self.logger.info(
            "WARC scan: %s; of the kept, %s stored already, %s superseded by a later "
            "capture; %s items handed to the pipelines in %.1f s",
            scan.summary(), f"{self.skipped['stored']:,}", f"{self.skipped['superseded']:,}",
            f"{self.items_yielded:,}", time.perf_counter() - self._started,
        )  # fmt: skip

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self._stop = True
        self._log_summary()
