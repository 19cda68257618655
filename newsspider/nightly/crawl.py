"""One site's crawl in a nightly run: its crawler, what its signals report, its outcome.

All sites crawl concurrently, one ``Crawler`` per site in one ``CrawlerProcess``: each is
held to ``DOWNLOAD_DELAY`` per domain anyway, so a crawl mostly waits, and side by side a
night lasts as long as the slowest site instead of the sum of all of them, with no site
getting more load than in a crawl of its own. ``CorpusPipeline`` writes each site's
``crawl_runs`` row; :class:`SiteCrawl` links it to the nightly run as the spider opens and
adds the ``nightly_site_runs`` figures when the crawl has ended (:meth:`SiteCrawl.finish`).
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

import newsspider.nightly.report as report
from newsspider.extensions import EXIT_STATUS_STAT, joined_empty_queue
from newsspider.incremental import SKIPPED_STAT
from newsspider.outcome import EXIT_ALL_DROPPED, EXIT_BLOCKED, crawl_outcome
from newsspider.pipelines import CorpusPipeline
from newsspider.storage import Engine, transaction
from newsspider.storage import runs as runstore

from .jobdir import JobDir, finish_jobdir

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["SiteCrawl"]

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class SiteCrawl:
    """One site's crawler in a nightly run and what its signals reported.

    The signal receivers are bound methods of this object, which the run keeps alive:
    Scrapy's dispatcher holds receivers weakly, so a ``partial`` would vanish.
    """

    site: str
    crawler: Crawler
    job: JobDir | None
    engine: Engine
    nightly_run_id: int
    crawl_run_id: int | None = None
    site_run_id: int | None = None
    error: str | None = None
    body_lengths: list[int] = field(default_factory=list)

    def connect(self) -> None:
        self.crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        self.crawler.signals.connect(self.item_scraped, signal=signals.item_scraped)

    def spider_opened(self, spider: Spider) -> None:
        """Link the ``crawl_runs`` row the pipeline just opened to this nightly run.

        Done now, not at the end, so a run killed mid-crawl leaves its rows linked and
        the next run can mark them ``killed``.
        """
        pipeline = self.crawler.get_item_pipeline(CorpusPipeline)
        self.crawl_run_id = pipeline.run_id if pipeline is not None else None
        with transaction(self.engine) as session:
            self.site_run_id = runstore.link_site_run(
                session,
                nightly_run_id=self.nightly_run_id,
                site=self.site,
                crawl_run_id=self.crawl_run_id,
            )

    def item_scraped(self, item: Any) -> None:
        """Measure the body of every stored article, for the median body length."""
        raw = ItemAdapter(item).get("raw_text")
        if isinstance(raw, str):
            self.body_lengths.append(len(raw))

    def watch(self, result: object) -> None:
        """Record how the crawl's task (AsyncCrawlerProcess) or Deferred ended."""
        if isinstance(result, Deferred):
            result.addErrback(self._failed_deferred)
        elif isinstance(result, asyncio.Future):
            result.add_done_callback(self._task_done)

    def _failed_deferred(self, failure: Failure) -> None:
        self.error = f"{failure.type.__name__}: {failure.getErrorMessage()}"
        logger.error(
            "%s: crawl failed: %s",
            self.site,
            self.error,
            exc_info=(failure.type, failure.value, failure.getTracebackObject()),
        )

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            self.error = "cancelled"
            return
        exc = task.exception()  # retrieved here, so asyncio does not log it a second time
        if exc is not None:
            self.error = f"{type(exc).__name__}: {exc}"
            logger.error("%s: crawl failed: %s", self.site, self.error, exc_info=exc)

    def stats(self) -> dict[str, Any]:
        """The crawler's final stats; empty when the crawl failed before it had any."""
        collector = getattr(self.crawler, "_stats", None)  # unset before the crawl starts
        return dict(collector.get_stats()) if collector is not None else {}

    def finish(self, *, now: datetime) -> str:
        """Classify the finished crawl, store its figures, settle its job directory;
        return its outcome (``report.OK``, ``FAILED`` or ``INTERRUPTED``)."""
        stats = self.stats()
        pages_ok = report.pages_ok_from_stats(stats)
        resumed = bool(self.job and self.job.resumed)
        with transaction(self.engine) as session:
            status = None
            if self.crawl_run_id is not None:
                status = runstore.site_run_status(session, self.crawl_run_id)
            outcome, note = report.classify(
                error=self.error,
                finish_reason=stats.get("finish_reason"),
                crawl_status=status,
                pages_ok=pages_ok,
                resumed=resumed or joined_empty_queue(stats),
                all_dropped=stats.get(EXIT_STATUS_STAT) == EXIT_ALL_DROPPED,
                article_links=stats.get(f"newsspider/article_links/{self.site}"),
                blocked=crawl_outcome(self.site, stats).blocked_detail()
                if stats.get(EXIT_STATUS_STAT) == EXIT_BLOCKED
                else None,
            )
            notes = [n for n in (note, self.job.note if self.job else "") if n]
            lengths = self.body_lengths
            self.site_run_id = runstore.finish_site_run(
                session,
                self.site_run_id,
                nightly_run_id=self.nightly_run_id,
                site=self.site,
                crawl_run_id=self.crawl_run_id,
                outcome=outcome,
                finish_reason=stats.get("finish_reason"),
                resumed=resumed,
                requests=int(stats.get("downloader/request_count", 0)),
                pages_ok=pages_ok,
                skipped_stored=int(stats.get(SKIPPED_STAT, 0)),
                bodies=len(lengths),
                median_body_chars=round(statistics.median(lengths)) if lengths else None,
                note="; ".join(notes) or None,
            )
        if self.job is not None:
            finish_jobdir(self.job, outcome, now=now)
        return outcome
