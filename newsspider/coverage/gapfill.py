"""Coverage in the nightly run: list, compare, fill the gap, record; per site, in the run.

When a site's nightly crawl ends, :class:`GapFill` starts, in the same
``CrawlerProcess`` (so before the process stops):

1. a :class:`ListingSpider` crawl that fetches the site's listing (:mod:`.read`);
2. the comparison with the corpus; the missing URLs are named in the log;
3. when some are missing, the gap fill: a crawl of the site's own spider with
   ``start_urls`` = the missing article URLs (``-a start_urls=`` of a plain crawl), so
   they go through the normal pipeline (extraction, line-hash cleaning, storage, its own
   ``crawl_runs`` row) with the run's settings (``INCREMENTAL``, WARC recording);
4. the missing URLs looked up again: those stored now are ``filled``; the site's days
   are written to ``coverage_days`` and a line (a WARNING below ``COVERAGE_WARN``) is
   logged and kept for the run's report.

Each step starts from the previous one's end (a Deferred's or Task's callback), and
Scrapy's ``CrawlerProcess.start`` waits while any crawl is active, so the run's report
has every site's coverage. A failure of any step is logged with its traceback and costs
only that site's coverage ("not compared"), never the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scrapy import Request
from twisted.internet.defer import Deferred

from newsspider.discovery.fetch import Fetcher, QuietSpider
from newsspider.sites import SITES
from newsspider.storage import Engine, transaction
from newsspider.storage import session as open_session
from newsspider.storage.coverage import save_coverage, stored_among

from .compare import SiteCoverage, share_text
from .read import CoveragePolicy, SiteListing, compare_listing, list_site

if TYPE_CHECKING:
    from scrapy.crawler import Crawler, CrawlerProcessBase

__all__ = ["GapFill", "ListingSpider", "when_done"]

logger = logging.getLogger(__name__)


def when_done(result: object, callback: Callable[[], None]) -> None:
    """Call ``callback`` once the crawl a ``process.crawl`` call returned has ended, however
    it ended (a Deferred of ``CrawlerProcess`` or a Task of ``AsyncCrawlerProcess``)."""

    def call(*_: Any) -> None:
        callback()

    if isinstance(result, Deferred):
        result.addBoth(lambda value: (call(), value)[1])
    elif isinstance(result, asyncio.Future):
        result.add_done_callback(call)
    else:
        call()


class ListingSpider(QuietSpider):
    """Fetches one site's listing in ``start()`` and yields nothing (no item, no corpus
    write); ``out`` (a list the caller passes) receives the :class:`SiteListing`."""

    name = "coverage-listing"

    def __init__(
        self,
        key: str = "",
        out: list[SiteListing] | None = None,
        now: datetime | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.key = key
        self.out = out if out is not None else []
        self.now = now or datetime.now(UTC)

    async def start(self) -> AsyncIterator[Request]:
        policy = CoveragePolicy.from_settings(self.settings)
        fetcher = Fetcher(self.crawler, policy.max_fetches)
        self.out.append(await list_site(SITES[self.key], fetcher, now=self.now, policy=policy))
        return
        yield  # an async generator that yields nothing


class GapFill:
    """The nightly run's coverage of its sites (module docstring); ``results`` holds each
    site's :class:`SiteCoverage` (after the fill) once its steps have ended, ``lines``
    the report's line for each site, in the order they ended."""

    def __init__(
        self,
        process: CrawlerProcessBase,
        engine: Engine,
        *,
        first_page: Callable[[str], str | None] | None = None,
    ) -> None:
        self.process = process
        self.engine = engine
        self.policy = CoveragePolicy.from_settings(process.settings)
        self.first_page = first_page
        self.now = datetime.now(UTC)
        self.results: dict[str, SiteCoverage] = {}
        self.lines: dict[str, str] = {}

    def after(self, site: str, crawler: Crawler, crawl: object) -> None:
        """Start the site's coverage once its ``crawler``'s crawl (``crawl``, what
        ``process.crawl`` returned) ends; not after a crawl stopped by a shutdown (a
        signal: the process is ending, no new crawl may start)."""
        when_done(crawl, self._guarded(site, lambda: self._list(site, crawler)))

    def _guarded(self, site: str, step: Callable[[], None]) -> Callable[[], None]:
        """``step``, with any failure (the database, a bug) logged with its traceback and
        turned into the site's "not compared" line: it must not cost the run."""

        def run() -> None:
            try:
                step()
            except Exception:
                logger.exception("coverage of %s failed", site)
                self._unknown(site, "not compared: it failed, see the log")

        return run

    def _list(self, site: str, crawler: Crawler) -> None:
        stats = getattr(crawler, "_stats", None)  # unset when the crawl failed to start
        if stats is not None and stats.get_value("finish_reason") == "shutdown":
            self.lines[site] = f"{site}: {share_text(None)} (not compared: the run was stopped)"
            return
        out: list[SiteListing] = []
        crawler = self.process.create_crawler(ListingSpider)
        started = self.process.crawl(crawler, key=site, out=out, now=self.now)
        when_done(started, self._guarded(site, lambda: self._compare(site, out)))

    def _compare(self, site: str, out: list[SiteListing]) -> None:
        if not out:
            self._unknown(site, "not compared: its listing was not read, see the log")
            return
        coverage = compare_listing(
            self.engine, out[0], now=self.now, policy=self.policy, first_page=self.first_page
        )
        missing = coverage.missing_urls
        if not missing:
            self._record(coverage)
            return
        logger.info(
            "coverage %s: %s of %s listed article URLs not stored, filling: %s",
            site, len(missing), coverage.listed, " ".join(missing),
        )  # fmt: skip
        crawler = self.process.create_crawler(site)
        filled = self.process.crawl(crawler, start_urls=",".join(missing))
        when_done(filled, self._guarded(site, lambda: self._filled(coverage)))

    def _filled(self, coverage: SiteCoverage) -> None:
        with open_session(self.engine) as session:
            now_stored = stored_among(session, coverage.missing_urls)
        self._record(coverage.with_filled(now_stored))

    def _record(self, coverage: SiteCoverage) -> None:
        with transaction(self.engine) as session:
            save_coverage(session, coverage.days)
        line = coverage.line(self.policy.warn)
        level = logging.WARNING if coverage.below(self.policy.warn) else logging.INFO
        logger.log(level, "%s", line.removeprefix("WARNING "))
        self.results[coverage.site] = coverage
        self.lines[coverage.site] = line

    def _unknown(self, site: str, why: str) -> None:
        self.results[site] = SiteCoverage(site)
        self.lines[site] = f"{site}: {share_text(None)} ({why})"
        logger.warning("%s", self.lines[site])

    def report_lines(self, sites: list[str]) -> list[str]:
        """One line per site of the run, in its order; a site whose steps never ended
        (the run was stopped) says so."""
        return [
            self.lines.get(site, f"{site}: {share_text(None)} (not compared: the run stopped)")
            for site in sites
        ]
