"""How a crawl ended, from its stats: the exit status a scheduler trusts and one summary line.

``scrapy crawl``, ``scrapy nightly`` and the ``crawl_runs`` row all judge a crawl here, so
a cron job, a systemd unit and a person reading the table see the same verdict. Pure:
a mapping of Scrapy stats in, values out (no Scrapy, no SQL).

Exit statuses (the README's failure table is :data:`EXIT_STATUSES`):

====  =====================================================================================
0     the run did its job (pages fetched; articles stored, or none new to store)
1     a bug: an unexpected exception (its traceback is in the log)
2     a user error: bad argument or setting, unknown spider or method, missing file, bad
      time zone, database URL that cannot be used or reached at the start (one line)
3     nothing could be fetched: no page came back 2xx (network down, DNS, site blocked)
4     the database failed during the crawl (unavailable for ``NEWS_DB_RETRY_SECONDS``)
5     every article was dropped (pages came back, none was stored: see the drop reasons)
6     blocked: the site's article fetches were mostly answered with anti-bot challenges
      (:mod:`newsspider.challenges`), and fewer articles were stored than lost to them
75    ``scrapy nightly`` only: another nightly run holds the lock (EX_TEMPFAIL)
====  =====================================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from newsspider.extraction.kinds import FOLLOWED, KINDS, NOT_STORED

__all__ = [
    "CHALLENGED_STAT",
    "CHALLENGE_GAVE_UP_ARTICLES_STAT",
    "CHALLENGE_GAVE_UP_REASON_STAT",
    "CHALLENGE_GAVE_UP_STAT",
    "CHALLENGE_REASON_STAT",
    "DATABASE_UNAVAILABLE",
    "DISCOVERY_FAILED_STAT",
    "EXIT_ALL_DROPPED",
    "EXIT_BLOCKED",
    "EXIT_BUG",
    "EXIT_DATABASE",
    "EXIT_LOCKED",
    "EXIT_NOTHING_FETCHED",
    "EXIT_OK",
    "EXIT_STATUSES",
    "EXIT_USAGE",
    "PAGES_READ_STAT",
    "CrawlOutcome",
    "blocked",
    "crawl_outcome",
    "format_duration",
    "kinds_part",
    "pages_ok_from_stats",
    "worst_status",
]

#: Stats key set by ``scrapy crawl news -a url=URL`` when discovery found nothing to crawl:
#: the crawl is judged as one that fetched nothing (status 3).
DISCOVERY_FAILED_STAT = "newsspider/discovery_failed"
#: Stats of anti-bot challenges (:mod:`newsspider.challenges.middleware`), a site key or a
#: reason after each prefix: requests challenged (once each), by the first challenge's
#: reason; requests given up once the retries were spent, by reason, and those of them
#: that were article URLs.
CHALLENGED_STAT = "newsspider/challenged/"
CHALLENGE_REASON_STAT = "newsspider/challenge_reason/"
CHALLENGE_GAVE_UP_STAT = "newsspider/challenge_gave_up/"
CHALLENGE_GAVE_UP_REASON_STAT = "newsspider/challenge_gave_up_reason/"
CHALLENGE_GAVE_UP_ARTICLES_STAT = "newsspider/challenge_gave_up_articles/"
#: Pages a crawl read without downloading them (``scrapy backfill --warc``: the article
#: records a WARC scan kept), counted with the 2xx responses by :func:`pages_ok_from_stats`.
PAGES_READ_STAT = "newsspider/pages_read"

EXIT_OK = 0
EXIT_BUG = 1
EXIT_USAGE = 2
EXIT_NOTHING_FETCHED = 3
EXIT_DATABASE = 4
EXIT_ALL_DROPPED = 5
EXIT_BLOCKED = 6
#: sysexits.h EX_TEMPFAIL: another nightly run holds the lock; not a failure, try later
#: (cron and systemd can tell it from a failed crawl).
EXIT_LOCKED = 75

#: (status, meaning) for the docs and ``--help``.
EXIT_STATUSES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "the run did its job: pages fetched, articles stored (or none new)"),
    (EXIT_BUG, "a bug: an unexpected exception, with its traceback in the log"),
    (EXIT_USAGE, "a user error: bad argument or setting, unknown name, missing file, "
     "database unreachable at the start (one line on stderr)"),
    (EXIT_NOTHING_FETCHED, "nothing could be fetched: no page came back 2xx"),
    (EXIT_DATABASE, "the database failed during the crawl"),
    (EXIT_ALL_DROPPED, "every article was dropped: pages came back, none was stored"),
    (EXIT_BLOCKED, "blocked: the article fetches were mostly answered with anti-bot challenges"),
    (EXIT_LOCKED, "nightly only: another nightly run holds the lock"),
)

#: Which failing status wins when several sites of one run fail differently.
SEVERITY = (EXIT_BUG, EXIT_DATABASE, EXIT_NOTHING_FETCHED, EXIT_BLOCKED, EXIT_ALL_DROPPED)

#: Finish reason of a crawl that ``CorpusPipeline`` closed because it could not write.
DATABASE_UNAVAILABLE = "database_unavailable"
#: Drop reason of articles a batch could not store because the database stayed away.
DROPPED_DATABASE = "DatabaseUnavailable"

_MEANING = {
    EXIT_NOTHING_FETCHED: "nothing could be fetched",
    EXIT_DATABASE: "the database failed",
    EXIT_ALL_DROPPED: "every article was dropped",
    EXIT_BLOCKED: "blocked by anti-bot challenges",
}


def pages_ok_from_stats(stats: Mapping[str, object]) -> int:
    """2xx responses other than robots.txt, from a crawler's stats, plus the pages read
    without a download (:data:`PAGES_READ_STAT`: a WARC scan's article records).

    ``downloader/response_count`` alone cannot tell a working site from a blocked one:
    robots.txt, 403s and 404s all count there.
    """

    def total(prefix: str) -> int:
        return sum(
            v
            for k, v in stats.items()
            if k.startswith(prefix) and k[len(prefix) :].startswith("2") and isinstance(v, int)
        )

    read = stats.get(PAGES_READ_STAT, 0)
    return max(
        0, total("downloader/response_status_count/") - total("robotstxt/response_status_count/")
    ) + (read if isinstance(read, int) else 0)


def by_suffix(stats: Mapping[str, object], prefix: str) -> dict[str, int]:
    """``{suffix: value}`` of the integer stats named ``prefix<suffix>``, sorted."""
    return {
        k[len(prefix) :]: int(v)
        for k, v in sorted(stats.items())
        if k.startswith(prefix) and isinstance(v, int)
    }


def format_duration(seconds: float | None) -> str:
    """``4m12s``, ``1h02m03s``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


@dataclass(frozen=True, slots=True)
class CrawlOutcome:
    """A crawl's verdict and the figures its summary line gives."""

    site: str
    status: int
    stored: int
    new: int
    updated: int
    dropped: int
    drop_reasons: dict[str, int] = field(default_factory=dict)
    fetch_failures: dict[str, int] = field(default_factory=dict)
    pages_ok: int = 0
    seconds: float | None = None
    storing: bool = True
    interrupted: bool = False
    #: requests answered with an anti-bot challenge, by the first challenge's reason
    challenged: dict[str, int] = field(default_factory=dict)
    #: challenged requests given up after their retries, by reason
    challenge_gave_up: dict[str, int] = field(default_factory=dict)
    #: article requests answered (pages yielded plus article requests given up)
    article_fetches: int = 0
    #: article requests given up as challenged
    challenged_articles: int = 0
    #: pages extracted per kind (``newsspider/kind/<kind>``, docs/crawling.md "Page kinds")
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == EXIT_OK

    @property
    def meaning(self) -> str:
        """Why the status is not 0 (empty when it is)."""
        if self.status == EXIT_BLOCKED:
            return self.blocked_detail()
        return _MEANING.get(self.status, "")

    def blocked_detail(self) -> str:
        """``blocked: 40 of 42 article fetches answered with anti-bot challenges
        (js_cookie_521 38, verify_page 2)``."""
        reasons = _reasons(self.challenge_gave_up)
        if self.challenged_articles:
            return (
                f"blocked: {self.challenged_articles:,} of {self.article_fetches:,} article "
                f"fetches answered with anti-bot challenges{reasons}"
            )
        gave_up = sum(self.challenge_gave_up.values())
        return (
            f"blocked: {gave_up:,} page fetch{'' if gave_up == 1 else 'es'} answered with "
            f"anti-bot challenges{reasons}, and no article reached"
        )

    def line(self) -> str:
        """``netease: 1,234 articles stored (56 new, 12 updated), 3 dropped (EmptyBody 2),
        2 fetches failed (dns 2), 4m12s`` and, when it failed, the status and why."""
        verb = "stored" if self.storing else "extracted"
        parts = [f"{self.site}: {self.stored:,} articles {verb}"]
        if self.storing:
            parts[0] += f" ({self.new:,} new, {self.updated:,} updated)"
        parts.append(f"{self.dropped:,} dropped{_reasons(self.drop_reasons)}")
        failed = sum(self.fetch_failures.values())
        parts.append(
            f"{failed:,} fetch{'' if failed == 1 else 'es'} failed{_reasons(self.fetch_failures)}"
        )
        if challenged := sum(self.challenged.values()):
            gave_up = sum(self.challenge_gave_up.values())
            parts.append(
                f"{challenged:,} challenged{_reasons(self.challenged)}, {gave_up:,} given up"
            )
        parts.append(format_duration(self.seconds))
        text = ", ".join(parts) + kinds_part(self.kinds)
        if self.interrupted:
            text += " (stopped by a signal)"
        if not self.ok:
            text += f"; exit status {self.status}: {self.meaning}"
        return text


def kinds_part(kinds: Mapping[str, int]) -> str:
    """``; kinds: article 120, gallery 6, video 4, live 1; not stored: topic 3, list 2`` for
    the summary line, empty when every page was an article (the line says so already)."""
    if not kinds or set(kinds) <= {"article"}:
        return ""
    order = {k: i for i, k in enumerate(KINDS)}
    ranked = sorted(kinds.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
    stored = [f"{k} {n:,}" for k, n in ranked if k not in NOT_STORED and n]
    unstored = [f"{k} {n:,}" for k, n in ranked if k in NOT_STORED and n]
    text = f"; kinds: {', '.join(stored)}" if stored else "; kinds: none stored"
    return text + (f"; not stored: {', '.join(unstored)}" if unstored else "")


def _reasons(counts: Mapping[str, int]) -> str:
    if not counts:
        return ""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return " (" + ", ".join(f"{k} {v:,}" for k, v in ranked) + ")"


def crawl_outcome(
    site: str,
    stats: Mapping[str, object],
    *,
    finish_reason: str | None = None,
    storing: bool = True,
    resumed: bool = False,
    now: datetime | None = None,
) -> CrawlOutcome:
    """Judge one crawl from its stats (see the module docstring for the statuses).

    ``storing``: the corpus pipeline was on (else "stored" counts the articles extracted).
    ``resumed``: a resumed job whose queue was already empty fetches nothing, and that is
    not a failure. A crawl stopped by a signal (``shutdown``) is judged on what it did.
    """
    finish_reason = finish_reason or _str(stats.get("finish_reason"))
    drop_reasons = by_suffix(stats, "item_dropped_reasons_count/")
    new = _int(stats, "newsspider/articles_new")
    updated = _int(stats, "newsspider/articles_updated")
    stored = new + updated if storing else _int(stats, "item_scraped_count")
    dropped = _int(stats, "item_dropped_count")
    pages_ok = pages_ok_from_stats(stats)
    interrupted = finish_reason == "shutdown"
    gave_up = by_suffix(stats, CHALLENGE_GAVE_UP_REASON_STAT)
    challenged_articles = sum(by_suffix(stats, CHALLENGE_GAVE_UP_ARTICLES_STAT).values())
    article_fetches = sum(by_suffix(stats, "newsspider/articles_found/").values())
    article_fetches += challenged_articles
    kinds = by_suffix(stats, "newsspider/kind/")
    if (
        finish_reason == DATABASE_UNAVAILABLE
        or drop_reasons.get(DROPPED_DATABASE)
        or stats.get("newsspider/database_failed")
    ):
        status = EXIT_DATABASE
    elif blocked(stored, gave_up, challenged_articles, article_fetches):
        status = EXIT_BLOCKED
    elif stored == 0 and (
        stats.get(DISCOVERY_FAILED_STAT) or (pages_ok == 0 and not resumed and not interrupted)
    ):
        status = EXIT_NOTHING_FETCHED
    elif stored == 0 and dropped - sum(kinds.get(k, 0) for k in FOLLOWED) > 0:
        # topic and list pages are dropped once their links are followed: not articles lost
        status = EXIT_ALL_DROPPED
    else:
        status = EXIT_OK
    return CrawlOutcome(
        site=site,
        status=status,
        stored=stored,
        new=new,
        updated=updated,
        dropped=dropped,
        drop_reasons=drop_reasons,
        fetch_failures=by_suffix(stats, "newsspider/fetch_failed_reason/"),
        pages_ok=pages_ok,
        seconds=_seconds(stats, now),
        storing=storing,
        interrupted=interrupted,
        challenged=by_suffix(stats, CHALLENGE_REASON_STAT),
        challenge_gave_up=gave_up,
        article_fetches=article_fetches,
        challenged_articles=challenged_articles,
        kinds=kinds,
    )


def blocked(
    stored: int, gave_up: Mapping[str, int], challenged_articles: int, article_fetches: int
) -> bool:
    """Was the crawl blocked? At least half its article fetches ended as challenges
    (``challenged_articles`` of ``article_fetches``), and fewer articles were stored than
    were lost to them; or, when no article was reached at all, pages were given up as
    challenged and nothing was stored (the start pages themselves were challenged)."""
    if challenged_articles:
        return 2 * challenged_articles >= article_fetches and stored < challenged_articles
    return stored == 0 and article_fetches == 0 and sum(gave_up.values()) > 0


def worst_status(statuses: list[int]) -> int:
    """The status of a run of several crawls: the most severe failing one, else 0."""
    for status in SEVERITY:
        if status in statuses:
            return status
    return next((s for s in statuses if s != EXIT_OK), EXIT_OK)


def _int(stats: Mapping[str, object], key: str) -> int:
    value = stats.get(key, 0)
    return int(value) if isinstance(value, int | float) else 0


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _seconds(stats: Mapping[str, object], now: datetime | None) -> float | None:
    elapsed = stats.get("elapsed_time_seconds")
    if isinstance(elapsed, int | float):
        return float(elapsed)
    start = stats.get("start_time")
    if isinstance(start, datetime) and now is not None:
        return max(0.0, (now - start).total_seconds())
    return None
