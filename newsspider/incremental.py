"""Incremental crawling: an article already stored is not downloaded again.

:class:`StoredUrlFilter` is a downloader middleware. For every request of a
:class:`~newsspider.spiders.news.NewsSpider` whose canonical URL is an article of the
spider's site, it asks the database whether ``articles`` holds that URL, and raises
``IgnoreRequest`` before anything is downloaded when it does. Asking the database, not
a file, is what makes it hold across runs, across a wiped ``JOBDIR`` and across
machines sharing one PostgreSQL. List pages, feeds and robots.txt always pass: they
are how new articles are found.

One indexed ``SELECT`` per article request (``storage.runs.url_is_stored``), rather than
a per-site set of stored URLs loaded when the spider opens: a preload grows with the
corpus (eight sites of a million articles each would hold over a gigabyte), while the
lookup stays flat in memory and also sees rows other machines store during the run.

Enabled by the setting ``INCREMENTAL`` (``NotConfigured`` when off). It is off for
``scrapy crawl``, where a re-crawl refreshes stored rows with the page as it is now
(corrections, a better extractor: README "Re-crawling a URL updates its row"), and on
for ``scrapy nightly``, whose job is to fetch what is new; ``-s INCREMENTAL=True``
turns it on for a crawl. A request with ``meta["incremental"] = False`` is never
skipped.

Priority 60: after Scrapy's downloader ``OffsiteMiddleware`` (50), so off-site
requests cost no lookup, and before ``RobotsTxtMiddleware`` (100), so a skipped
article costs no robots.txt fetch; and before ``DownloaderStats`` (850), so
``downloader/request_count`` counts only requests really made. Stat:
``newsspider/skipped_stored``. Like the robots.txt refusals, the skipped requests also
show in ``downloader/exception_type_count/scrapy.exceptions.IgnoreRequest`` (Scrapy
counts every exception a downloader middleware raises there); they are not logged.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Self

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured

from newsspider.sites import Site
from newsspider.storage import Engine, create_schema, engine_from_settings, session
from newsspider.storage.runs import url_is_stored

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

__all__ = ["PRIORITY", "SKIPPED_STAT", "StoredUrlFilter"]

logger = logging.getLogger(__name__)

#: Place in ``DOWNLOADER_MIDDLEWARES`` (see the module docstring).
PRIORITY = 60
SKIPPED_STAT = "newsspider/skipped_stored"


class StoredUrlFilter:
    """Ignore article requests whose canonical URL is already in ``articles``."""

    def __init__(self, engine: Engine, stats: StatsCollector) -> None:
        #: The same engine as CorpusPipeline's (``engine_from_settings`` is cached).
        self.engine = engine
        self.stats = stats
        self.site: Site | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        s = crawler.settings
        if not s.getbool("INCREMENTAL"):
            # No message: Scrapy logs a NotConfigured with one as a WARNING, and off is
            # the normal state of every plain crawl.
            raise NotConfigured
        mw = cls(engine_from_settings(s), crawler.stats)
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        return mw

    def spider_opened(self, spider: Spider) -> None:
        """Bind to the spider's site and make sure ``articles`` exists (a fresh database)."""
        site = getattr(spider, "site", None)
        self.site = site if isinstance(site, Site) else None
        if self.site is None:
            logger.info("INCREMENTAL: %s has no Site row, nothing is skipped", spider.name)
            return
        create_schema(self.engine)
        logger.info("INCREMENTAL: stored %s articles are not downloaded again", self.site.key)

    def process_request(self, request: Request) -> None:
        """Raise ``IgnoreRequest`` for a stored article; pass everything else on."""
        site = self.site
        if site is None or request.method != "GET":
            return
        if request.meta.get("incremental") is False:
            return
        url = site.canonical_url(request.url)
        if not site.is_article(url):
            return
        with session(self.engine) as s:
            stored = url_is_stored(s, url)
        if stored:
            self.stats.inc_value(SKIPPED_STAT)
            logger.debug("already stored, not downloaded: %s", url)
            raise IgnoreRequest(f"already stored: {url}")
