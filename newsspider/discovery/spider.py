"""The spider that runs discovery: Scrapy's engine and downloader, no pipelines.

``scrapy addsite`` crawls with :class:`DiscoverySpider`; its ``start()`` awaits
:func:`~newsspider.discovery.discover.discover` and keeps the result on the spider
(``result``, or ``error`` when discovery failed), yielding no request of its own. No item
pipeline runs and no crawl summary is written: discovery stores nothing in the corpus.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from newsspider.discovery.discover import Discovery, DiscoveryError, discover
from newsspider.discovery.fetch import Fetcher, QuietSpider

__all__ = ["DiscoverySpider"]


class DiscoverySpider(QuietSpider):
    """Discovers one site from ``home`` (spider arguments: home, key, name, tz)."""

    name = "addsite"

    def __init__(
        self,
        home: str,
        key: str | None = None,
        source: str | None = None,
        tz: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.home = home
        self.key = key
        self.source = source
        self.tz = tz
        self.result: Discovery | None = None
        self.error: DiscoveryError | None = None

    async def start(self) -> AsyncIterator[Any]:
        settings = self.crawler.settings
        fetcher = Fetcher(self.crawler, budget=settings.getint("DISCOVERY_MAX_FETCHES"))
        try:
            self.result = await discover(
                self.home,
                fetcher,
                key=self.key,
                name=self.source,
                tz=self.tz,
                samples=settings.getint("DISCOVERY_SAMPLES"),
                sections=settings.getint("DISCOVERY_SECTIONS"),
                list_pages=settings.getint("DISCOVERY_LIST_PAGES"),
                max_depth=settings.getint("DISCOVERY_MAX_DEPTH"),
                sitemaps_per_index=settings.getint("NEWS_SITEMAPS_PER_INDEX"),
            )
        except DiscoveryError as exc:
            self.error = exc
        return
        yield  # an async generator that yields nothing
