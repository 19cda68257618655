"""Crawl extensions that make a crawl's log readable: its summary line, and network errors
in one line.

- :class:`CrawlSummary` judges the crawl as it closes (:func:`newsspider.outcome.crawl_outcome`)
  and logs one line, ``netease: 1,234 articles stored (56 new, 12 updated), 3 dropped
  (EmptyBody 2, NotHtml 1), 2 fetches failed (dns 2), 4m12s``: INFO when the crawl did its
  job, ERROR with the exit status and why when it did not. The status goes into the stats
  (``newsspider/exit_status``), where ``scrapy crawl`` takes its exit status from.
- :class:`NetworkErrorsOneLine` keeps Scrapy's robots.txt middleware from printing a
  traceback for a network failure (DNS, refused, timeout): the retry middleware has
  already logged the same failure in one line, and a site that cannot be reached is not a
  bug. Tracebacks of anything else stay.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Self

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CannotResolveHostError
from twisted.internet import error as net_errors
from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

from newsspider.outcome import EXIT_BUG, EXIT_OK, CrawlOutcome, crawl_outcome

__all__ = [
    "EXIT_STATUS_STAT", "CrawlSummary", "NetworkErrorsOneLine", "exit_status",
    "joined_empty_queue", "site_of",
]  # fmt: skip

logger = logging.getLogger(__name__)

#: Stats key of the crawl's exit status (:mod:`newsspider.outcome`).
EXIT_STATUS_STAT = "newsspider/exit_status"

#: Failures of the network, not of the code: logged without a traceback.
NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    CannotResolveHostError,
    net_errors.DNSLookupError,
    net_errors.ConnectError,
    net_errors.ConnectionLost,
    net_errors.TimeoutError,
    ResponseFailed,
    ResponseNeverReceived,
    TimeoutError,
    ConnectionError,
)

#: Loggers whose network-failure records lose their traceback.
QUIET_LOGGERS = ("scrapy.downloadermiddlewares.robotstxt",)


def exit_status(crawler: Crawler | None, bootstrap_failed: bool = False) -> int:
    """A finished crawl's exit status for its command: :class:`CrawlSummary`'s verdict in
    the stats, 1 when the crawl could not even start, 0 when nothing judged it."""
    if bootstrap_failed:
        return EXIT_BUG
    status = crawler.stats.get_value(EXIT_STATUS_STAT) if crawler and crawler.stats else None
    return int(status) if status is not None else EXIT_OK


def site_of(spider: Spider | None) -> str:
    """The site key of a news spider (its ``Site`` row), else the spider's name."""
    return getattr(getattr(spider, "site", None), "key", None) or getattr(spider, "name", "")


def corpus_is_on(crawler: Crawler) -> bool:
    """Does this crawl store articles (``CorpusPipeline`` enabled and ``CORPUS_ENABLED``)?"""
    pipelines = crawler.settings.getwithbase("ITEM_PIPELINES")
    listed = any(
        str(getattr(path, "__name__", path)).endswith("CorpusPipeline") and order is not None
        for path, order in pipelines.items()
    )
    return listed and crawler.settings.getbool("CORPUS_ENABLED")


def joined_empty_queue(stats: Mapping[str, Any]) -> bool:
    """Whether a crawl was a cluster worker that found the shared queue empty: it fetched
    nothing without failing, which is not "nothing could be fetched" (``scrapy crawl``'s
    summary and a nightly site's outcome alike). A worker that joined a run (another
    seeded it) may find nothing left; so may the seeder, when the others took every
    request it seeded, and then the run as a whole fetched something
    (``cluster/run_fetched``: every worker's fetches as the seeder left)."""
    if any(k.startswith("newsspider/fetch_failed_reason/") for k in stats):
        return False
    seeder = stats.get("cluster/seeder")
    return seeder == 0 or (seeder == 1 and (stats.get("cluster/run_fetched") or 0) > 0)


class CrawlSummary:
    """Log the crawl's summary line and record its exit status when it closes."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.outcome: CrawlOutcome | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        ext = cls(crawler)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if getattr(spider, "site", None) is None and not getattr(spider, "crawl_summary", False):
            return  # not a news crawl (``scrapy extract`` fetching one URL)
        assert self.crawler.stats is not None
        stats = self.crawler.stats.get_stats()
        self.outcome = crawl_outcome(
            site_of(spider),
            stats,
            finish_reason=reason,
            storing=corpus_is_on(self.crawler),
            resumed=joined_empty_queue(stats),
            now=datetime.now(UTC),
        )
        self.crawler.stats.set_value(EXIT_STATUS_STAT, self.outcome.status)
        if self.outcome.ok:
            logger.info("%s", self.outcome.line())
        else:
            logger.error("%s", self.outcome.line())


class NetworkErrorsOneLine(logging.Filter):
    """Drop the traceback of a log record whose exception is a network failure."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and isinstance(exc, NETWORK_ERRORS):
            record.exc_info = None
            record.exc_text = None
        return True

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Install the filter once per process on :data:`QUIET_LOGGERS` (an extension)."""
        for name in QUIET_LOGGERS:
            target = logging.getLogger(name)
            if not any(isinstance(f, cls) for f in target.filters):
                target.addFilter(cls())
        return cls()

