"""Fetching for discovery and site checks: Scrapy's downloader, one awaited request at a time.

Discovery (``scrapy addsite``) and the site check (``scrapy sites check``) decide what to
fetch next from what they have read, so they run as async code inside a spider's
``start()`` and await each download with ``engine.download_async``. The request goes
through every downloader middleware, as in a crawl: robots.txt, the user agent, redirects,
retries, decompression, ``REPLAY_ARCHIVE`` and ``WARC_OUTPUT``, and the download slots'
``DOWNLOAD_DELAY`` (a per-domain delay, so concurrent fetches of one site still queue).

:class:`Fetcher` counts fetches against a budget (``DISCOVERY_MAX_FETCHES``), keeps each
response by URL so nothing is fetched twice, and turns every failure into ``None`` plus a
reason, because a missing feed or a dead section page is a finding, not an error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.settings import BaseSettings

from newsspider.extensions import CrawlSummary
from newsspider.incremental import StoredUrlFilter
from newsspider.progress import CrawlProgress

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["Fetched", "Fetcher", "QuietSpider", "set_component"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Fetched:
    """One fetch: the response (None when it failed) and why it failed."""

    url: str
    response: Response | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        """A 2xx response."""
        return self.response is not None and 200 <= self.response.status < 300


@dataclass(slots=True)
class Fetcher:
    """Awaitable fetches through a running crawler's downloader, at most ``budget`` of them
    (0 = no limit); ``log`` holds every fetch in order, for the report."""

    crawler: Crawler
    budget: int = 0
    log: list[Fetched] = field(default_factory=list)
    _cache: dict[str, Fetched] = field(default_factory=dict)

    @property
    def spent(self) -> int:
        return len(self.log)

    @property
    def left(self) -> int:
        """Fetches left in the budget (a large number when there is none)."""
        return self.budget - self.spent if self.budget else 1 << 30

    async def get(self, url: str, *, body: str | None = None, **meta: Any) -> Fetched:
        """``url`` fetched once (later calls answer from the cache); over budget, a
        ``Fetched`` with reason ``budget`` and no request made. ``body``: a JSON API that
        wants a POST with that body (Tencent's feed)."""
        if url in self._cache and body is None:
            return self._cache[url]
        if self.budget and self.spent >= self.budget:
            return Fetched(url, None, "budget")
        meta = {"handle_httpstatus_all": True, **meta}
        if body is None:
            request = Request(url, dont_filter=True, meta=meta)
        else:
            request = Request(
                url, method="POST", body=body, headers={"Content-Type": "application/json"},
                dont_filter=True, meta=meta,
            )
        assert self.crawler.engine is not None
        try:
            response = await self.crawler.engine.download_async(request)
        except IgnoreRequest as exc:
            fetched = Fetched(url, None, _ignored(exc))
        except Exception as exc:
            fetched = Fetched(url, None, type(exc).__name__)
        else:
            reason = "" if 200 <= response.status < 300 else f"http_{response.status}"
            fetched = Fetched(url, response, reason)
        logger.debug("fetched %s: %s", url, fetched.reason or "ok")
        self.log.append(fetched)
        if body is not None:
            return fetched
        self._cache[url] = fetched
        if fetched.response is not None and fetched.response.url != url:
            self._cache.setdefault(fetched.response.url, fetched)
        return fetched


def _ignored(exc: IgnoreRequest) -> str:
    text = str(exc).lower()
    if "robots.txt" in text:
        return "robots.txt"
    return "ignored"


class QuietSpider(Spider):
    """A spider that only fetches (discovery, site checks): no item pipelines, and the
    crawl's summary, live status and stored-URL filter switched off, so it writes nothing
    to the corpus. Set component by component: an ``EXTENSIONS`` dict in
    ``custom_settings`` would replace the project's whole, replay and recording included."""

    custom_settings = {"ITEM_PIPELINES": {}}  # noqa: RUF012 (Scrapy's own type)

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        for extension in (CrawlSummary, CrawlProgress):
            set_component(settings, "EXTENSIONS", extension, None)
        set_component(settings, "DOWNLOADER_MIDDLEWARES", StoredUrlFilter, None)


def set_component(settings: BaseSettings, name: str, component: Any, order: int | None) -> None:
    """Set one entry of a component dict (``EXTENSIONS``, ``DOWNLOADER_MIDDLEWARES``) at the
    spider's priority, keeping the others. At the dict's own priority, as Scrapy's
    ``set_in_component_priority_dict`` sets it, the runner's project dict is merged over it
    again when the crawl starts (``CrawlerProcess.crawl`` of a created crawler)."""
    settings.set_in_component_priority_dict(name, component, order)
    settings.set(name, settings.getdict(name), "spider")
