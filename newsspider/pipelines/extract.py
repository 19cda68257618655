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

Per site (the row's fields, :mod:`newsspider.sites`):

* ``render = true``: the page is a script shell; its HTML is first rendered in the
  process's Chromium with JavaScript on (inline scripts run, the network stays closed) and
  the rendered DOM's HTML is what the method extracts. Rendering waits on Chromium, so it
  runs in the render thread (the visual methods' thread, started for the first such page
  when the method is not visual); the method then runs where it belongs. Without Chromium
  or Playwright the site's pages are dropped (``RenderUnavailable``): one warning per crawl
  and the count ``newsspider/render_unavailable``; a page that hangs or crashes the
  renderer is dropped as ``RenderFailed`` (``newsspider/render_failed``).
* ``json_path``: the body comes from the text at that path in the page's embedded JSON
  when the method's own body is empty or shorter (:func:`newsspider.workers.with_json_body`);
  title and time stay the method's.
* ``encoding``: the charset the site's pages are in, given to extraction as the
  Content-Type's charset when the response names none.

A multi-page article (``ArticleItem.pages``, fetched by the spider: docs/crawling.md,
"Multi-page articles") has each further page extracted by the same method, where the first
goes, and its body is the pages' bodies joined in order without the pager's lines
(:func:`newsspider.extraction.pager.join_pages`); title, time and the record come from the
first page. A further page that fails to extract adds nothing (logged); the article stays.

``xpath`` uses each site's trained thresholds (``scrapy train``, table ``xpath_thresholds``),
read once when the spider opens; a site without a row uses each page's own thresholds, the
documented default of Hou & Yang's method (:class:`~newsspider.extraction.xpathseg.XpathClusters`).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from newsspider.extraction import ExtractionError
from newsspider.extraction.encoding import overruled_declaration
from newsspider.extraction.kinds import FOLLOWED, NOT_STORED
from newsspider.extraction.model import RECORD_FIELDS, ExtractedArticle
from newsspider.extraction.page import content_type_of
from newsspider.extraction.pager import join_pages
from newsspider.extraction.registry import get_extractor, registered
from newsspider.extraction.render import BrowserUnavailable, VisualError, unavailable_reason
from newsspider.sites import SITES
from newsspider.storage import load_all_thresholds, resolve_database_url
from newsspider.workers import (
    SHARED_POOL,
    WorkerDied,
    WorkerPool,
    await_future,
    extract_page,
    parse_workers,
    render_page,
    site_headers,
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


class RenderUnavailable(DropItem):
    """The site's pages need rendering (``render = true``) and Chromium cannot run here."""


class RenderFailed(DropItem):
    """The page did not render: it hung or crashed the renderer."""


class NotStoredKind(DropItem):
    """The page is of a kind never stored (:data:`newsspider.extraction.kinds.NOT_STORED`)."""


class TopicPage(NotStoredKind):
    """A special topic (专题) under an article URL: its links are followed, it is not stored."""


class ListPage(NotStoredKind):
    """A list page under an article URL: its links are followed, it is not stored."""


class BlockedPage(NotStoredKind):
    """A challenge or verification page (the kind ``blocked``): never stored."""


#: The drop of each kind that is never stored.
NOT_STORED_DROPS: dict[str, type[NotStoredKind]] = {
    "topic": TopicPage,
    "list": ListPage,
    "blocked": BlockedPage,
}
assert set(NOT_STORED_DROPS) == set(NOT_STORED)


class ExtractionPipeline:
    """Fill ``title``, ``published``, ``raw_text``, ``encoding`` and what the page states
    about itself (:data:`RECORD_FIELDS`) of an ArticleItem.

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
        gc_threshold: int = 0,
    ) -> None:
        self.stats = stats
        #: the crawler, whose engine takes the links of topic and list pages (None: not
        #: followed, a pipeline used without a crawl)
        self.crawler: Crawler | None = None
        self.gc_threshold = gc_threshold
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
        #: Why pages cannot be rendered here: checked at the first page of a render site.
        self._render_unavailable: str | None = None
        self._render_checked = False
        self._render_warned = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        s = crawler.settings
        pipeline = cls(
            crawler.stats,
            s.get("EXTRACTOR"),
            workers=parse_workers(s.get("EXTRACTION_WORKERS")),
            max_tasks=s.getint("EXTRACTION_WORKER_MAX_TASKS"),
            database_url=resolve_database_url(s.get("DATABASE_URL")),
            gc_threshold=s.getint("CRAWL_GC_THRESHOLD"),
        )
        pipeline.crawler = crawler
        return pipeline

    # -- spider lifecycle ---------------------------------------------------

    def open_spider(self, spider: Any = None) -> None:
        raise_gc_threshold(self.gc_threshold)
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
        if adapter.get("kind") == "blocked":  # the challenge detector's verdict
            self._not_stored(adapter, "blocked", url)
        site_key = adapter["site"]
        site = SITES.get(site_key)
        # The site's own name: the paper a 本报讯 stands for (the record's origin).
        params = {**self.site_params.get(site_key, {}), "site_name": site and site.source}
        headers = site_headers(adapter.get("headers") or None, site and site.encoding)
        html, codec = adapter["html"], None
        if site is not None and site.render:
            html, codec = await self._render(html, headers, url, site_key)
        job = (self.method, html, url, headers, site and site.tz)
        try:
            article = await self._run(*job, params, site and site.json_path)
        except ExtractionError as exc:
            raise NotHtml(f"not an HTML page ({exc}): {url}") from exc
        if codec is not None:
            article.encoding = codec  # the rendered DOM came in as text: the bytes' codec
        if adapter.get("pages") and article.text:
            article.text = await self._joined(article.text, adapter["pages"], site, params, job)
        return self._fill(adapter, item, article, url, headers)

    async def _joined(
        self,
        first: str,
        pages: tuple[tuple[str, bytes], ...],
        site: Any,
        params: dict[str, Any],
        job: tuple[Any, ...],
    ) -> str:
        """The body of a multi-page article: page 1's and each further page's, joined."""
        method, _, _, headers, tz = job
        texts = [first]
        for page_url, body in pages:
            html = body
            try:
                if site is not None and site.render:
                    html, _ = await self._render(body, headers, page_url, site.key)
                page = await self._run(
                    method, html, page_url, headers, tz, params, site and site.json_path
                )
            except (ExtractionError, DropItem) as exc:
                logger.warning("page %s of a multi-page article not extracted: %s", page_url, exc)
                continue
            texts.append(page.text)
        return join_pages(texts)

    async def _render(
        self, html: Any, headers: Mapping[str, str] | None, url: str, site_key: str
    ) -> tuple[str, str]:
        """The page's DOM after its inline scripts ran, rendered in the render thread."""
        if not self._render_checked:
            self._render_checked = True
            self._render_unavailable = unavailable_reason()
        if self._render_unavailable is None:
            if self._thread is None:
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="newsspider-render")
            try:
                return await await_future(self._thread.submit(render_page, html, headers))
            except BrowserUnavailable as exc:
                self._render_unavailable = f"Chromium did not start ({exc})"
            except VisualError as exc:
                self.stats.inc_value("newsspider/render_failed")
                raise RenderFailed(f"not rendered ({exc}): {url}") from exc
            except ExtractionError as exc:
                raise NotHtml(f"not an HTML page ({exc}): {url}") from exc
        if not self._render_warned:
            self._render_warned = True
            logger.warning(
                "site %s needs rendering (render = true) but pages cannot be rendered here: "
                "%s; its article pages are dropped (counted in newsspider/render_unavailable)",
                site_key,
                self._render_unavailable,
            )
        self.stats.inc_value("newsspider/render_unavailable")
        raise RenderUnavailable(
            f"not rendered ({self._render_unavailable}): {url}", log_level="DEBUG"
        )

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

    def _fill(
        self,
        adapter: ItemAdapter,
        item: Any,
        article: ExtractedArticle,
        url: str,
        headers: Mapping[str, str] | None,
    ) -> Any:
        kind = article.kind or "article"
        if kind in NOT_STORED:
            self._not_stored(adapter, kind, url)
        if not article.text:
            raise EmptyBody(f"no body: {url}", log_level="INFO")
        if not article.title:
            raise NoTitle(f"no title: {url}", log_level="INFO")
        if "\ufffd" in article.text:
            logger.warning("U+FFFD in the body after decoding as %s: %s", article.encoding, url)
        raw = adapter["html"]
        declared = isinstance(raw, bytes) and overruled_declaration(
            raw, content_type_of(headers), article.encoding
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
        for name in RECORD_FIELDS:
            adapter[name] = getattr(article, name, None)
        adapter["authors"] = tuple(adapter["authors"] or ())
        if not article.section:  # the site row's URL rule, when it has one
            site = SITES.get(adapter["site"])
            section = site.path_section(url) if site is not None else None
            if section:
                adapter["section"], adapter["section_source"] = section, "url"
        self.stats.inc_value(f"newsspider/extracted/{adapter['site']}")
        self.stats.inc_value(f"newsspider/kind/{kind}")
        return item

    def _not_stored(self, adapter: ItemAdapter, kind: str, url: str) -> None:
        """Count a page of a kind never stored, follow a topic or list page's links, and drop
        it (:data:`NOT_STORED_DROPS`)."""
        self.stats.inc_value(f"newsspider/kind/{kind}")
        followed = ""
        if kind in FOLLOWED:
            n = self._follow(adapter, url)
            followed = f", {n} links followed"
        raise NOT_STORED_DROPS[kind](f"{kind} page, not stored{followed}: {url}", log_level="INFO")

    def _follow(self, adapter: ItemAdapter, url: str) -> int:
        """Hand a topic or list page's article and list links to the engine; how many."""
        crawler = self.crawler
        spider = getattr(crawler, "spider", None) if crawler is not None else None
        page_links = getattr(spider, "page_links", None)
        if crawler is None or crawler.engine is None or page_links is None:
            return 0
        html = adapter["html"]
        body = html if isinstance(html, bytes) else str(html).encode("utf-8")
        headers = dict(adapter.get("headers") or {})
        if not isinstance(html, bytes):  # a rendered DOM: text, now UTF-8
            headers["Content-Type"] = "text/html; charset=utf-8"
        requests = page_links(url, body, headers, adapter.get("depth") or 0)
        for request in requests:
            crawler.engine.crawl(request)
        return len(requests)


def raise_gc_threshold(threshold: int) -> None:
    """Let the cyclic garbage collector start a pass after ``threshold`` new objects, not 700.

    A crawl allocates containers by the million (Scrapy's requests and deferreds, SQL rows,
    the reprint check's shingles), nearly all freed by reference counting; at Python's 700
    the collector ran so often, each tenth of its passes over every live object of the
    process, that it took 3.7 CPU s of a 5,000-page crawl of the realistic mix, as much as
    its line table and upserts (``benchmarks/crawl_throughput.py``, which charges the
    passes to a stage of their own). Process-wide, and never lowered: every crawler of the
    process (``scrapy nightly``) asks for the same. ``CRAWL_GC_THRESHOLD``; 0 leaves
    Python's.
    """
    first, *rest = gc.get_threshold()
    if threshold > first:
        gc.set_threshold(threshold, *rest)


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
    "NOT_STORED_DROPS",
    "BlockedPage",
    "EmptyBody",
    "ExtractionFailed",
    "ExtractionPipeline",
    "ListPage",
    "NoTitle",
    "NotHtml",
    "NotStoredKind",
    "RenderFailed",
    "RenderUnavailable",
    "TopicPage",
    "raise_gc_threshold",
    "trained_xpath_params",
]
