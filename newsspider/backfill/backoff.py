"""429 and 503 answered with a wait: ``Retry-After`` honoured, else an exponential backoff.

Web archives ask crawlers for moderation and say so with 429 (too many requests) or 503
(overloaded, Common Crawl's index server under load), often with ``Retry-After`` (seconds
or an HTTP date). Scrapy's ``RetryMiddleware`` retries those at once; this middleware,
placed nearer the downloader (560), answers first: it waits ``Retry-After`` seconds (at
most ``BACKFILL_MAX_BACKOFF``), or ``BACKFILL_BACKOFF`` doubled on each further try, and
sends the request again, up to ``BACKFILL_BACKOFF_TRIES`` times; then the response goes on
to the retry middleware and the errback as any error does. While it waits, the host's
download slot waits too (its delay is raised for the time), so the other requests to the
same archive do not hammer it meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request
from scrapy.http import Response

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["RetryAfterMiddleware", "retry_after_seconds"]

logger = logging.getLogger(__name__)

BACKOFF_STATUSES = (429, 503)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from now: a number, or an HTTP date; None when absent or
    unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class RetryAfterMiddleware:
    """Downloader middleware of :class:`~newsspider.backfill.spider.BackfillSpider`."""

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        self.crawler = crawler
        self.base = s.getfloat("BACKFILL_BACKOFF")
        self.cap = s.getfloat("BACKFILL_MAX_BACKOFF")
        self.tries = s.getint("BACKFILL_BACKOFF_TRIES")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if response.status not in BACKOFF_STATUSES:
            return response
        tries = request.meta.get("backoff_tries", 0)
        if tries >= self.tries:
            logger.warning(
                "%s answered %s %s times; giving up on %s",
                response.url.split("/")[2], response.status, tries, request.url,
            )  # fmt: skip
            return response
        header = response.headers.get("Retry-After")
        stated = retry_after_seconds(header.decode("latin-1") if header else None)
        wait = min(self.cap, stated if stated is not None else self.base * 2**tries)
        self.crawler.stats.inc_value("newsspider/backoff/waits")
        self.crawler.stats.inc_value("newsspider/backoff/seconds", round(wait, 1))
        logger.info(
            "%s %s: waiting %.1f s before try %s (%s)", response.status, request.url, wait,
            tries + 2, "Retry-After" if stated is not None else "backoff",
        )  # fmt: skip
        slot = self._slot(request)
        if slot is not None:
            slot.delay = max(slot.delay, wait)
        await asyncio.sleep(wait)
        if slot is not None:
            slot.delay = self._delay
        retry: Request = request.replace(dont_filter=True)
        retry.meta["backoff_tries"] = tries + 1
        return retry

    @property
    def _delay(self) -> float:
        return self.crawler.settings.getfloat("DOWNLOAD_DELAY")

    def _slot(self, request: Request) -> Any:
        engine = self.crawler.engine
        if engine is None:
            return None
        downloader = engine.downloader
        key = request.meta.get("download_slot") or downloader.get_slot_key(request)
        return downloader.slots.get(key)
