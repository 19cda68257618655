"""Extraction step of the crawl: headline, time and body of each page, off the reactor thread.

``EXTRACTOR`` names the method, one of the registry's names
(:mod:`newsspider.extraction.registry`: ``blockstats``, ``blockstats-paper``,
``punctuation``, ``xpath``, ``visual``, ``visual+blockstats``, ``visual+blockstats-best``).

Where a page is extracted, and why:

* ``blockstats``, ``blockstats-paper``, ``punctuation`` and ``xpath`` are pure CPU in Python.
  They run in the ``EXTRACTION_WORKERS`` worker processes of :mod:`newsspider.workers`
  (``0``: in the reactor thread). A page that kills its worker (a crash in C) is retried
  once in a fresh one, then dropped as ``ExtractionFailed``; the crawl goes on.
* The methods that render (``visual``, ``visual+blockstats``, ``visual+blockstats-best``)
  mostly wait for headless Chromium. They run in one thread of their own (one renderer, which
  serialises pages anyway), so the reactor keeps downloading while a page renders. A browser
  per worker process would cost hundreds of MB each.

``xpath`` uses each site's trained thresholds (``scrapy train``, table ``xpath_thresholds``),
read once when the spider opens; a site without a row uses each page's own thresholds, the
documented default of Hou & Yang's method (:class:`~newsspider.extraction.xpathseg.XpathClusters`).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from newsspider.extraction import ExtractionError
from newsspider.extraction.encoding import overruled_declaration
from newsspider.extraction.model import ExtractedArticle
from newsspider.extraction.page import content_type_of
from newsspider.extraction.registry import get_extractor, registered
from newsspider.sites import SITES
from newsspider.storage import load_all_thresholds, resolve_database_url
from newsspider.workers import (
    SHARED_POOL,
    WorkerDied,
    WorkerPool,
    await_future,
    extract_page,
    parse_workers,
)

logger = logging.getLogger(__name__)


class NotHtml(DropItem):
    """The response is not an HTML page (empty, binary): ExtractionError."""


class EmptyBody(DropItem):
    """The page is HTML but holds no article body (empty mainblockset)."""


class NoTitle(DropItem):
    """The page has a body but no headline could be found."""


class ExtractionFailed(DropItem):
    """The extraction worker died on this page twice (a crash in C, killed by the OS)."""


class ExtractionPipeline:
    """Fill ``title``, ``published``, ``raw_text`` and ``encoding`` of an ArticleItem.

    The site's time zone (``Site.tz``) is used for times the page gives without
    an offset. Pages without body or title are dropped with a reason that
    Scrapy's core stats count under ``item_dropped_reasons_count/<class>``.
    """

    def __init__(
        self,
        stats: Any,
        method: str,
        *,
        workers: int = 0,
        max_tasks: int = 0,
        database_url: str | None = None,
    ) -> None:
        self.stats = stats
        self.method = method
        # ValueError for an unknown EXTRACTOR, ImportError for a missing dependency: the
        # crawl fails at start, not per item
        get_extractor(method)
        self.visual = registered(method).renders
        self.workers = 0 if self.visual else workers
        self.max_tasks = max_tasks
        self.database_url = database_url
        #: Per-site keyword arguments: the trained xpath thresholds (loaded in open_spider).
        self.site_params: dict[str, dict[str, Any]] = {}
        self._thread: ThreadPoolExecutor | None = None
        self._pool: WorkerPool | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        s = crawler.settings
        return cls(
            crawler.stats,
            s.get("EXTRACTOR"),
            workers=parse_workers(s.get("EXTRACTION_WORKERS")),
            max_tasks=s.getint("EXTRACTION_WORKER_MAX_TASKS"),
            database_url=resolve_database_url(s.get("DATABASE_URL")),
        )

    # -- spider lifecycle ---------------------------------------------------

    def open_spider(self, spider: Any = None) -> None:
        if self.method == "xpath" and self.database_url:
            self.site_params = trained_xpath_params(self.database_url)
        if self.visual:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="newsspider-visual")
            where = "a render thread"
        elif self.workers > 0:
            self._pool = SHARED_POOL.acquire(self.workers, self.max_tasks)
            where = f"{self.workers} worker processes"
        else:
            where = "the reactor thread"
        if self.stats is not None:
            self.stats.set_value("newsspider/extraction_workers", self.workers)
        logger.info("extraction: %s in %s", self.method, where)

    def close_spider(self, spider: Any = None) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = None
        if self._pool is not None:
            self._pool = None
            SHARED_POOL.release()

    # -- items ----------------------------------------------------------------

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url = adapter["url"]
        site_key = adapter["site"]
        site = SITES.get(site_key)
        params = self.site_params.get(site_key, {})
        job = (self.method, adapter["html"], url, adapter.get("headers") or None, site and site.tz)
        try:
            article = await self._run(*job, params)
        except ExtractionError as exc:
            raise NotHtml(f"not an HTML page ({exc}): {url}") from exc
        return self._fill(adapter, item, article, url)

    async def _run(self, *job: Any) -> ExtractedArticle:
        """Extract where the method belongs (module docstring): pool, thread or inline."""
        if self._thread is not None:
            return await await_future(self._thread.submit(extract_page, *job))
        if self._pool is None:
            return extract_page(*job)
        try:
            return await await_future(self._pool.submit(*job))
        except WorkerDied:
            self.stats.inc_value("newsspider/extraction_worker_died")
            logger.warning("extraction worker died on %s; trying a fresh one", job[2])
        try:
            return await await_future(self._pool.submit(*job))
        except WorkerDied as exc:
            raise ExtractionFailed(f"extraction worker died twice: {job[2]}") from exc

    def _fill(self, adapter: ItemAdapter, item: Any, article: ExtractedArticle, url: str) -> Any:
        if not article.text:
            raise EmptyBody(f"no body: {url}", log_level="INFO")
        if not article.title:
            raise NoTitle(f"no title: {url}", log_level="INFO")
        if "\ufffd" in article.text:
            logger.warning("U+FFFD in the body after decoding as %s: %s", article.encoding, url)
        raw = adapter["html"]
        declared = isinstance(raw, bytes) and overruled_declaration(
            raw, content_type_of(adapter.get("headers")), article.encoding
        )
        if declared:
            logger.info(
                "declared charset %s overruled, decoded as %s: %s", declared, article.encoding, url
            )
            self.stats.inc_value("newsspider/charset_overruled")
        if article.published is None:
            logger.warning("no publication time found: %s", url)
            self.stats.inc_value("newsspider/no_time")
        adapter["title"] = article.title
        adapter["published"] = article.published
        adapter["published_source"] = article.published_source
        adapter["published_precision"] = article.published_precision
        adapter["raw_text"] = article.text
        adapter["encoding"] = article.encoding
        self.stats.inc_value(f"newsspider/extracted/{adapter['site']}")
        return item


def trained_xpath_params(database_url: str) -> dict[str, dict[str, float]]:
    """Every trained site's xpath thresholds as ``extract_xpath`` keyword arguments.

    Read once per crawl. No table, no row or no database: ``{}``, and every site uses its
    pages' own thresholds (the documented default), with a warning when the database
    could not be read.
    """
    found = load_all_thresholds(database_url)
    for site, t in found.items():
        logger.info(
            "xpath thresholds of %s: Length_Threshold=%.1f, B_n_Threshold=%.3f (M=%s)",
            site,
            t.Length_Threshold,
            t.B_n_Threshold,
            t.pages,
        )
    return {site: t.as_params() for site, t in found.items()}


__all__ = [
    "EmptyBody",
    "ExtractionFailed",
    "ExtractionPipeline",
    "NoTitle",
    "NotHtml",
    "trained_xpath_params",
]
