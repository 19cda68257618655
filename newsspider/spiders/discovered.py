"""``scrapy crawl news -a url=URL``: a one-off crawl of a site in no file.

The spider runs the same discovery as ``scrapy addsite`` in memory (its
:meth:`~NewsSpider.start` awaits :func:`~newsspider.discovery.discover.discover` first),
logs the proposed row, then crawls with it exactly as a spider generated from a file row
would: start pages, feeds, article and list patterns. The row is added to the process's
site table (:data:`~newsspider.sites.SITES`, not to any file), so extraction uses its time
zone. ``-a key=K`` names the site in the corpus (default: from its domain).

When discovery finds nothing to crawl, the crawl ends at once with an ERROR line saying
why, and exit status 3.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request

from newsspider.discovery.discover import DiscoveryError, discover
from newsspider.discovery.fetch import Fetcher
from newsspider.discovery.shapes import registered_domain
from newsspider.errors import UserError
from newsspider.outcome import DISCOVERY_FAILED_STAT
from newsspider.sites import SITES, Site
from newsspider.spiders.news import HTTP_URL, NewsSpider, parse_limit

__all__ = ["DiscoveredNewsSpider"]

#: The row of the class until discovery has run (NewsSpider needs one at construction).
_PENDING = Site(
    key="news",
    source="(discovered at start)",
    allowed_domains=("invalid",),
    start_urls=("https://invalid/",),
    article_patterns=(r"^https?://invalid/\d+",),
)


class DiscoveredNewsSpider(NewsSpider):
    """Any site, from its home page: ``-a url=URL [-a key=K] [-a limit=N]``."""

    name = "news"
    site = _PENDING

    def __init__(
        self,
        *args: Any,
        url: str | None = None,
        key: str | None = None,
        limit: str | int | None = None,
        **kwargs: Any,
    ) -> None:
        self.check_arguments({"url": url, "key": key, "limit": limit, **kwargs})
        super().__init__(*args, limit=limit, **kwargs)
        assert url is not None
        self.home = url.strip()
        self.key = key
        domain = registered_domain(urlsplit(self.home).hostname or "")
        self.allowed_domains = [domain]  # before OffsiteMiddleware reads it

    @classmethod
    def check_arguments(cls, arguments: dict[str, Any]) -> None:
        """``url`` is required and an http(s) URL; ``key`` a free identifier; ``limit`` a
        positive integer; nothing else."""
        unknown = sorted(set(arguments) - {"url", "key", "limit", "_job"})
        if unknown:
            named = ", ".join(f"-a {name}" for name in unknown)
            raise UserError(
                f"unknown spider argument {named}: the news spider takes -a url=URL, "
                "-a key=K and -a limit=N"
            )
        url = arguments.get("url")
        if not url or not HTTP_URL.match(str(url).strip()):
            raise UserError(
                "the news spider needs -a url=URL, the site's home page (http or https)"
            )
        key = arguments.get("key")
        if key is not None and key in SITES:
            raise UserError(f"-a key={key}: a site of the table has that key; choose another")
        parse_limit(arguments.get("limit"))

    async def start(self) -> AsyncIterator[Request]:
        settings = self.crawler.settings
        fetcher = Fetcher(self.crawler, budget=settings.getint("DISCOVERY_MAX_FETCHES"))
        try:
            found = await discover(
                self.home,
                fetcher,
                key=self.key,
                samples=settings.getint("DISCOVERY_SAMPLES"),
                sections=settings.getint("DISCOVERY_SECTIONS"),
                list_pages=settings.getint("DISCOVERY_LIST_PAGES"),
                max_depth=settings.getint("DISCOVERY_MAX_DEPTH"),
                sitemaps_per_index=settings.getint("NEWS_SITEMAPS_PER_INDEX"),
            )
        except DiscoveryError as exc:
            self.logger.error("discovery of %s: %s", self.home, exc)
            self.crawler.stats.set_value(DISCOVERY_FAILED_STAT, 1)
            return
        self.site = found.site
        SITES.setdefault(self.site.key, self.site)
        self.start_urls = list(self.site.start_urls)
        self.logger.info(
            "discovered %s in %s fetches: %s", self.home, found.fetches, _summary(self.site)
        )
        self.logger.debug("discovery report:\n%s", found.report())
        depth = self.settings.getint("DEPTH_LIMIT")
        if self.site.depth_limit and 0 < depth < self.site.depth_limit:
            # DepthMiddleware read DEPTH_LIMIT when the crawl started, before discovery
            self.logger.warning(
                "%s: its lists need depth %s, this crawl runs at DEPTH_LIMIT %s; give "
                "-s DEPTH_LIMIT=%s, or write the row (scrapy addsite %s --write)",
                self.home, self.site.depth_limit, depth, self.site.depth_limit, self.home,
            )
        async for request in super().start():
            yield request


def _summary(site: Site) -> str:
    parts: Iterable[str] = (
        f"key {site.key}",
        f"articles {' | '.join(site.article_patterns)}",
        f"{len(site.start_urls)} start pages",
        f"{len(site.feeds)} feeds",
        f"tz {site.tz}",
    )
    return "; ".join(parts)
