"""Anti-bot challenge pages in a crawl: recognised, retried, counted, never stored.

The pure test of a page is :func:`newsspider.extraction.challenge.challenge_reason` (so
extraction-side code can call it too); :mod:`.middleware` is the downloader middleware
that applies it to every response of a crawl (``ChallengeMiddleware``), retries a
challenged request with backoff and the cookie its script sets, and drops it when the
challenge stays. How a crawl that was mostly challenged ends (exit status 6, ``blocked``)
is :mod:`newsspider.outcome`'s; docs/crawling.md, "Challenge pages", has the whole story.
"""

from newsspider.challenges.middleware import ChallengeIgnored, ChallengeMiddleware

__all__ = ["ChallengeIgnored", "ChallengeMiddleware"]
