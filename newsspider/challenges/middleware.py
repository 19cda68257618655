"""``ChallengeMiddleware``: anti-bot challenges answered with a wait and a retry, never stored.

Every response of a crawl is tested with
:func:`~newsspider.extraction.challenge.challenge_reason` (a size gate and a few literal
searches; a page is parsed only when a marker is there). A challenge is:

- counted, once per request: ``newsspider/challenged/<site>`` and
  ``newsspider/challenge_reason/<reason>`` (the reason of its first challenge);
- retried up to ``CHALLENGE_RETRIES`` times (default 2), after ``CHALLENGE_BACKOFF``
  seconds (default 5) doubled on each further try, waited without blocking the reactor
  (``scrapy.utils.asyncio.sleep``, as :mod:`newsspider.backfill.backoff` waits out a
  ``Retry-After``); each retry counts ``newsspider/challenge_retries/<site>``. A cookie the
  challenge sets with a ``Set-Cookie`` header is in Scrapy's cookie jar already; one its
  script sets by a plain assignment of string literals
  (:func:`~newsspider.extraction.challenge.script_cookies`; JavaScript is never run) is
  sent with the retry, and stays in the jar for the site's later requests
  (``newsspider/challenge_cookies/<site>``);
- when a retry brings the page, counted ``newsspider/challenge_cleared/<site>``;
- when the retries are spent, dropped: one WARNING line naming the reason and the URL,
  :class:`ChallengeIgnored` (an ``IgnoreRequest``, so the spider does not count it as a
  failed fetch), ``newsspider/challenge_gave_up/<site>``,
  ``newsspider/challenge_gave_up_reason/<reason>`` and, for an article URL of the site's
  row, ``newsspider/challenge_gave_up_articles/<site>``. A crawl whose article fetches
  were mostly given up so ends ``blocked`` (:mod:`newsspider.outcome`, exit status 6).

Placed at 555, between the compression middleware (590, so bodies are decoded), the
cookie middleware (700, so a ``Set-Cookie`` is kept) and the redirect middleware (600) on
one side and Scrapy's ``RetryMiddleware`` (550) on the other, so a 503 or 429 challenge
is answered with a wait here instead of an immediate retry there; the backfill's
``RetryAfterMiddleware`` (560) still sees 429 and 503 first. robots.txt is left alone.
A site row with ``render`` or ``json_path`` (its articles are script shells by design)
has no ``script_shell`` verdicts. A replayed crawl (``REPLAY_ARCHIVE``) retries without
waiting: there is no site to be gentle with.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Self

from scrapy import Request
from scrapy.downloadermiddlewares import cookies as scrapy_cookies
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.asyncio import sleep
from tldextract import TLDExtract

from newsspider.extensions import site_of
from newsspider.extraction.challenge import challenge_reason, script_cookies
from newsspider.outcome import (
    CHALLENGE_GAVE_UP_ARTICLES_STAT,
    CHALLENGE_GAVE_UP_REASON_STAT,
    CHALLENGE_GAVE_UP_STAT,
    CHALLENGE_REASON_STAT,
    CHALLENGED_STAT,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["TRIES_META", "ChallengeIgnored", "ChallengeMiddleware"]

# Scrapy's cookie middleware splits a cookie's domain with a default ``TLDExtract``, which
# downloads the Public Suffix List the first time a response sets a cookie (a challenge's
# clearance cookie, most often): a DNS failure and a traceback on a machine without the
# network, a request to a third party on one with it. The list bundled with tldextract is
# used instead, as discovery does (``discovery/shapes.py``); this middleware is in every
# crawl's DOWNLOADER_MIDDLEWARES, so every crawl process gets it.
scrapy_cookies._split_domain = TLDExtract(
    suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
)

logger = logging.getLogger(__name__)

#: Request meta: the challenge retries made so far.
TRIES_META = "challenge_tries"
#: Request meta: the reason of the request's first challenge.
REASON_META = "challenge_reason"


class ChallengeIgnored(IgnoreRequest):
    """A request dropped because every answer was an anti-bot challenge."""


class ChallengeMiddleware:
    """Downloader middleware of every crawl (settings.py ``DOWNLOADER_MIDDLEWARES``)."""

    def __init__(self, crawler: Crawler) -> None:
        s = crawler.settings
        self.crawler = crawler
        self.retries = s.getint("CHALLENGE_RETRIES")
        # a replayed crawl (REPLAY_ARCHIVE) has no site to be gentle with: no wait
        self.backoff = 0.0 if s.get("REPLAY_ARCHIVE") else s.getfloat("CHALLENGE_BACKOFF")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _inc(self, key: str) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(key)

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if request.url.endswith("/robots.txt"):
            return response
        site = getattr(self.crawler.spider, "site", None)
        content_type = response.headers.get("Content-Type") or b""
        reason = challenge_reason(
            response.status,
            {"Content-Type": content_type.decode("latin-1")},
            response.body,
            shells_expected=bool(site is not None and (site.render or site.json_path)),
        )
        tries = int(request.meta.get(TRIES_META, 0))
        key = site_of(self.crawler.spider)
        if reason is None:
            if tries:
                self._inc(f"newsspider/challenge_cleared/{key}")
                logger.info(
                    "anti-bot challenge (%s) cleared on try %s: %s",
                    request.meta.get(REASON_META), tries + 1, request.url,
                )  # fmt: skip
            return response
        if not tries:
            self._inc(CHALLENGED_STAT + key)
            self._inc(CHALLENGE_REASON_STAT + reason)
        if tries >= self.retries:
            self._give_up(request, reason, tries, key, site)
        wait = self.backoff * 2**tries
        cookies = script_cookies(response.body) if response.body else {}
        logger.info(
            "anti-bot challenge (%s, HTTP %s) at %s: try %s in %.1f s%s",
            reason, response.status, request.url, tries + 2, wait,
            f" with the cookie{'s' if len(cookies) > 1 else ''} its script sets "
            f"({', '.join(cookies)})" if cookies else "",
        )  # fmt: skip
        if wait > 0:
            await sleep(wait)
        self._inc(f"newsspider/challenge_retries/{key}")
        retry = request.replace(dont_filter=True, cookies=self._with(request, cookies))
        if cookies:
            self._inc(f"newsspider/challenge_cookies/{key}")
        retry.meta[TRIES_META] = tries + 1
        retry.meta.setdefault(REASON_META, reason)
        return retry

    @staticmethod
    def _with(request: Request, cookies: dict[str, str]) -> Any:
        """The request's own cookies with ``cookies`` added (a dict or a list of dicts)."""
        if not cookies:
            return request.cookies
        own = request.cookies
        if isinstance(own, dict):
            return {**own, **cookies}
        return [*own, *({"name": k, "value": v} for k, v in cookies.items())]

    def _give_up(self, request: Request, reason: str, tries: int, key: str, site: Any) -> None:
        self._inc(CHALLENGE_GAVE_UP_STAT + key)
        self._inc(CHALLENGE_GAVE_UP_REASON_STAT + reason)
        if site is not None and site.is_article(site.canonical_url(request.url)):
            self._inc(CHALLENGE_GAVE_UP_ARTICLES_STAT + key)
        logger.warning(
            "anti-bot challenge (%s) still there after %s %s, not stored: %s",
            reason, tries, "retry" if tries == 1 else "retries", request.url,
        )  # fmt: skip
        raise ChallengeIgnored(f"anti-bot challenge ({reason}): {request.url}")
