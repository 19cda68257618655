"""The comparison, as pure functions: what a site listed for each local day of the window,
what of it the corpus stores, what is missing; and how a result reads.

How an entry is counted (docs/crawling.md, "Coverage"):

- Only the site's own article URLs count: on a host of ``allowed_domains``
  (:meth:`Site.owns`) and matching an article pattern after
  :meth:`Site.canonical_url`, the form the corpus stores. Other listed URLs (section
  pages, pages of other sites) are counted apart as ``unmatched``: they say the patterns
  miss something, not that the corpus does.
- The day is the local day (the row's ``tz``) of the entry's date. A URL dated in
  several documents counts once, on its earliest date's day.
- The window is ``days`` local days ending today (``COVERAGE_DAYS``, 2: today and
  yesterday); entries dated outside it are not counted.
- An undated entry counts on the day it was seen (today) only when its whole document
  has no dates (a JSON list, an RSS feed without ``pubDate``): such a document lists what
  is current. In a document whose other entries are dated, an undated entry is skipped,
  since its day cannot be known.
- A listed URL counts as stored when the corpus holds it, or, for a continuation page of
  a multi-page article, its first page (``first_page`` gives that page's URL: the
  multi-page rules know the URL forms; page 2..n are never rows of their own).
- A site whose listing has no entry in the window has coverage *unknown*, never 100 %.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from newsspider.sites import Site

from .listing import Document

__all__ = [
    "UNKNOWN",
    "DayCoverage",
    "SiteCoverage",
    "compare",
    "coverage_lines",
    "listed_by_day",
    "lookups",
    "share_text",
    "window",
]

#: What a site that lists nothing has, everywhere it is shown.
UNKNOWN = "coverage unknown"
#: Missing URLs named in a report line (all are in ``--json`` and the log).
NAMED_MISSING = 5


@dataclass(frozen=True, slots=True)
class DayCoverage:
    """One site and local day: ``listed`` article URLs, ``stored`` of them when compared,
    ``missing`` the rest (``missing_urls``), ``filled`` of those stored by the gap fill."""

    site: str
    day: str
    listed: int
    stored: int
    missing: int
    filled: int = 0
    missing_urls: tuple[str, ...] = ()

    @property
    def share(self) -> float | None:
        """(stored + filled) / listed; None (unknown) when nothing was listed."""
        return (self.stored + self.filled) / self.listed if self.listed else None


@dataclass(frozen=True, slots=True)
class SiteCoverage:
    """A site's comparison over the window: its days (newest first), where the listing came
    from, the listed URLs no article pattern matched, and what failed to be read."""

    site: str
    days: tuple[DayCoverage, ...] = ()
    sources: tuple[str, ...] = ()
    unmatched: int = 0
    failures: Mapping[str, int] = field(default_factory=dict)

    @property
    def listed(self) -> int:
        return sum(d.listed for d in self.days)

    @property
    def stored(self) -> int:
        return sum(d.stored for d in self.days)

    @property
    def missing(self) -> int:
        return sum(d.missing for d in self.days)

    @property
    def filled(self) -> int:
        return sum(d.filled for d in self.days)

    @property
    def missing_urls(self) -> tuple[str, ...]:
        return tuple(u for d in self.days for u in d.missing_urls)

    @property
    def share(self) -> float | None:
        """(stored + filled) / listed over the window; None: unknown (nothing listed)."""
        return (self.stored + self.filled) / self.listed if self.listed else None

    def below(self, warn: float) -> bool:
        """Known and under ``warn`` (``COVERAGE_WARN``); unknown is never below."""
        share = self.share
        return share is not None and share < warn

    def with_filled(self, stored_now: Collection[str]) -> SiteCoverage:
        """The same comparison once the gap fill ran: ``stored_now`` are the missing URLs
        the corpus holds now; the rest stay missing."""
        days = tuple(
            replace(
                d,
                filled=sum(u in stored_now for u in d.missing_urls),
                missing_urls=tuple(u for u in d.missing_urls if u not in stored_now),
            )
            for d in self.days
        )
        return replace(self, days=days)

    def line(self, warn: float) -> str:
        """``netease: coverage 100% (10/10 listed for 2026-11-30..2026-12-01; 8 stored, 2
        missing, 2 filled)``, a ``WARNING`` line below ``warn`` naming what is still not
        stored; ``KEY: coverage unknown (...)`` for a site listing nothing."""
        if not self.listed:
            where = (
                f"{len(self.sources)} sitemaps and feeds read, no article URL dated in the window"
                if self.sources
                else "no news sitemap or feed found"
            )
            return f"{self.site}: {UNKNOWN} ({where})"
        span = (
            f"{self.days[-1].day}..{self.days[0].day}" if len(self.days) > 1 else self.days[0].day
        )
        below = self.below(warn)
        text = (
            f"{self.site}: coverage {share_text(self.share)}"
            + (f", below COVERAGE_WARN {share_text(warn)}" if below else "")
            + f" ({self.stored + self.filled}/{self.listed} listed for {span}; {self.stored} "
            f"stored, {self.missing} missing, {self.filled} filled)"
        )
        still = self.missing_urls
        if still:
            named = ", ".join(still[:NAMED_MISSING])
            more = f" and {len(still) - NAMED_MISSING} more" if len(still) > NAMED_MISSING else ""
            text += f"; not stored: {named}{more}"
        return f"WARNING {text}" if below else text

    def as_json(self) -> dict[str, Any]:
        """The object ``sites check --json`` carries as ``coverage``."""
        return {
            "known": bool(self.listed),
            "share": None if self.share is None else round(self.share, 4),
            "listed": self.listed,
            "stored": self.stored,
            "missing": self.missing,
            "filled": self.filled,
            "missing_urls": list(self.missing_urls),
            "unmatched": self.unmatched,
            "sources": list(self.sources),
            "failures": dict(self.failures),
            "days": [
                {
                    "day": d.day,
                    "listed": d.listed,
                    "stored": d.stored,
                    "missing": d.missing,
                    "filled": d.filled,
                    "share": None if d.share is None else round(d.share, 4),
                }
                for d in self.days
            ],
        }


def share_text(share: float | None) -> str:
    """``87.5%``, ``100%``; ``coverage unknown`` for None."""
    if share is None:
        return UNKNOWN
    return f"{share * 100:.1f}".rstrip("0").rstrip(".") + "%"


def window(now: datetime, site: Site, days: int) -> tuple[str, ...]:
    """The window's local days (``YYYY-MM-DD`` in the row's zone), newest first."""
    today = now.astimezone(site.zone).date()
    return tuple((today - timedelta(days=i)).isoformat() for i in range(max(1, days)))


def listed_by_day(
    documents: Iterable[Document], site: Site, *, now: datetime, days: int
) -> tuple[dict[str, set[str]], int]:
    """The site's canonical article URLs of each window day (module docstring), and how many
    on-window URLs no article pattern or allowed domain matched."""
    days_wanted = window(now, site, days)
    today = days_wanted[0]
    earliest: dict[str, datetime] = {}
    undated: set[str] = set()
    unmatched: set[str] = set()
    for doc in documents:
        for entry in doc.entries:
            url = site.canonical_url(entry.url) if site.owns(entry.url) else entry.url
            if entry.published is None:
                if doc.dated:
                    continue
            elif entry.published.astimezone(site.zone).date().isoformat() not in days_wanted:
                continue
            if not site.owns(url) or not site.is_article(url):
                unmatched.add(url)
            elif entry.published is None:
                undated.add(url)
            elif url not in earliest or entry.published < earliest[url]:
                earliest[url] = entry.published
    by_day: dict[str, set[str]] = {d: set() for d in days_wanted}
    for url, published in earliest.items():
        by_day[published.astimezone(site.zone).date().isoformat()].add(url)
    by_day[today].update(u for u in undated if u not in earliest)
    return by_day, len(unmatched)


def compare(
    site: str,
    listed: Mapping[str, Iterable[str]],
    stored: Collection[str],
    *,
    first_page: Callable[[str], str | None] | None = None,
) -> tuple[DayCoverage, ...]:
    """Each day's figures (newest first, as ``listed`` is ordered): a URL is stored when
    ``stored`` holds it or, for a continuation page, its ``first_page``."""
    out: list[DayCoverage] = []
    for day, urls in listed.items():
        ordered = sorted(set(urls))
        missing = tuple(u for u in ordered if not _held(u, stored, first_page))
        out.append(
            DayCoverage(site, day, len(ordered), len(ordered) - len(missing), len(missing),
                        0, missing)
        )  # fmt: skip
    return tuple(out)


def lookups(
    listed: Mapping[str, Iterable[str]], first_page: Callable[[str], str | None] | None = None
) -> set[str]:
    """Every URL whose storage :func:`compare` asks about: the listed ones and the first
    pages of continuation pages (the caller looks them up in one indexed query)."""
    urls = {u for day in listed.values() for u in day}
    if first_page is not None:
        urls |= {p for u in urls if (p := first_page(u)) is not None}
    return urls


def _held(
    url: str, stored: Collection[str], first_page: Callable[[str], str | None] | None
) -> bool:
    if url in stored:
        return True
    page_one = first_page(url) if first_page is not None else None
    return page_one is not None and page_one in stored


def coverage_lines(coverages: Sequence[SiteCoverage], warn: float) -> list[str]:
    """The report's coverage lines, one per site (a WARNING line when below ``warn``)."""
    return [c.line(warn) for c in coverages]
