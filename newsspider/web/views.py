"""What the pages show, as plain values: parameters checked, search pages ranked and cut,
an article's removed lines, the dashboard's series. No HTTP here (``app.py``) and no SQL
(``newsspider.storage``), so each piece is tested on its own.

Every parameter error is a :class:`BadParameter` whose message names the parameter and what
it accepts; the app answers it with a 400.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from newsspider.coverage.figures import dashboard_coverage
from newsspider.extraction.kinds import STORED
from newsspider.sites import SITES
from newsspider.storage import Article, Corpus, Engine
from newsspider.storage.corpus import DEFAULT_TZ, utc_day_bounds
from newsspider.storage.coverage import coverage_between
from newsspider.storage.db import split_authors
from newsspider.storage.fts import make_snippet, normalize_query
from newsspider.storage.web_queries import (
    CrawlRunRow,
    article_days,
    article_months,
    crawl_runs,
    newest_published,
    nightly_warnings,
    relevance,
    reprint_pairs,
    stories,
    story_ids,
    story_members,
    texts,
)

#: Hits per search page, and the deepest page served (pages are cut from one query).
PER_PAGE = 20
MAX_PAGE = 50
#: Longest query accepted, in characters.
MAX_QUERY = 200
#: The search filters by what a page states about itself (revision 0008), parameter ->
#: ``Corpus.search`` keyword; the longest value accepted, in characters.
RECORD_FILTERS = {
    "author": "author",
    "origin": "origin",
    "section": "section",
    "lang": "language",
    "kind": "kind",  # the page's kind (revision 0010): article, gallery, video, live
}
MAX_FILTER = 100
_LANG = re.compile(r"[A-Za-z]{2,3}")
#: ``sort=relevance`` ranks this many newest hits (title hits first, then matches in the body).
RELEVANCE_WINDOW = 100
SORTS = ("time", "relevance")
#: Dashboard windows, in days.
DASHBOARD_DAYS = (30, 90, 365)
#: Months of the dashboard's chart of articles by origin: at most this many, up to this one.
MONTHS_SHOWN = 360
#: Nightly runs whose health warnings the dashboard lists.
NIGHTLY_RUNS_SHOWN = 7
#: Newest crawl runs listed in the dashboard's table.
CRAWL_ROWS_SHOWN = 50
#: Articles of a story listed on an article page; stories and site pairs on /reprints.
STORY_SHOWN = 50
REPRINTS_SHOWN = 50
#: Markers of the match inside a snippet: private-use characters, removed from the text first.
MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"
SNIPPET_WIDTH = 80
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MAX_ID = 2**63 - 1


class BadParameter(ValueError):
    """A query parameter the page cannot take; the message says what it accepts."""


# -- parameters -----------------------------------------------------------------------------


def param_date(params: Mapping[str, str], name: str) -> date | None:
    """``YYYY-MM-DD`` as a date, None when absent; anything else a 400."""
    value = params.get(name, "").strip()
    if not value:
        return None
    if not _DAY.fullmatch(value):
        raise BadParameter(f"{name} must be a date YYYY-MM-DD, not {value[:40]!r}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BadParameter(f"{name} is not a calendar date: {value!r}") from None


def param_day(params: Mapping[str, str], name: str, *, until: bool = False) -> datetime | None:
    """``YYYY-MM-DD`` in Asia/Shanghai as an instant; ``until`` includes the day."""
    day = param_date(params, name)
    if day is None:
        return None
    start, end = utc_day_bounds(day, DEFAULT_TZ)
    return end if until else start


def param_int(params: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    value = params.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or not lo <= int(value) <= hi:
        raise BadParameter(f"{name} must be a whole number from {lo} to {hi}, not {value[:40]!r}")
    return int(value)


def param_choice(params: Mapping[str, str], name: str, choices: tuple[Any, ...]) -> str:
    value = params.get(name, "").strip()
    if not value:
        return str(choices[0])
    if value not in {str(c) for c in choices}:
        raise BadParameter(f"{name} must be one of {', '.join(map(str, choices))}, not {value[:40]!r}")
    return value


def param_site(params: Mapping[str, str]) -> str | None:
    value = params.get("site", "").strip()
    if not value:
        return None
    if value not in SITES:
        raise BadParameter(f"unknown site {value[:40]!r}; the sites are: {', '.join(SITES)}")
    return value


def article_id(value: str) -> int:
    if not value.isdigit() or int(value) > _MAX_ID:
        raise BadParameter(f"an article id is a whole number, not {value[:40]!r}")
    return int(value)


# -- search ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hit:
    id: int
    url: str
    site: str
    published: datetime | None
    title: str | None
    snippet: list[tuple[str, bool]]  # (text, is the match)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": self.url,
            "site": self.site,
            "published": self.published.isoformat() if self.published else None,
            "published_local": local_time(self.published, self.site),
            "title": self.title,
            "snippet": "".join(t for t, _ in self.snippet),
            "matches": [t for t, m in self.snippet if m],
        }


@dataclass(frozen=True, slots=True)
class SearchPage:
    query: str
    site: str | None
    since: str
    until: str
    sort: str
    page: int
    hits: list[Hit]
    has_more: bool
    collapse: bool = False
    #: The record filters given (``author``, ``origin``, ``section``, ``lang``), by name.
    filters: dict[str, str] | None = None

    @property
    def searched(self) -> bool:
        """A query or a filter was given: the page lists hits (else the form alone)."""
        return bool(self.query or self.filters)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "site": self.site,
            "since": self.since or None,
            "until": self.until or None,
            "sort": self.sort,
            "page": self.page,
            "per_page": PER_PAGE,
            "has_more": self.has_more,
            "collapse": self.collapse,
            "filters": dict(self.filters or {}),
            "hits": [h.as_dict() for h in self.hits],
        }


def search_params(params: Mapping[str, str]) -> dict[str, Any]:
    """The checked parameters of a search (``q`` may be empty: the form alone)."""
    q = params.get("q", "").replace("\x00", "").strip()
    if len(q) > MAX_QUERY:
        raise BadParameter(f"q is longer than {MAX_QUERY} characters")
    since = param_day(params, "since")
    until = param_day(params, "until", until=True)
    if since and until and since >= until:
        raise BadParameter("since must be on or before until")
    return {
        "q": q,
        "site": param_site(params),
        "since": since,
        "until": until,
        "sort": param_choice(params, "sort", SORTS),
        "page": param_int(params, "page", 1, 1, MAX_PAGE),
        "collapse": param_choice(params, "collapse", ("0", "1")) == "1",
        "filters": record_filters(params),
    }


def record_filters(params: Mapping[str, str]) -> dict[str, str]:
    """The record filters given (empty ones left out): ``author``, ``origin`` and
    ``section`` up to :data:`MAX_FILTER` characters, ``lang`` an ISO 639 code (lower case),
    ``kind`` a stored kind."""
    out: dict[str, str] = {}
    for name in RECORD_FILTERS:
        value = params.get(name, "").replace("\x00", "").strip()
        if not value:
            continue
        if len(value) > MAX_FILTER:
            raise BadParameter(f"{name} is longer than {MAX_FILTER} characters")
        if name == "lang":
            if not _LANG.fullmatch(value):
                raise BadParameter(f"lang must be a language code (zh, en), not {value[:40]!r}")
            value = value.lower()
        if name == "kind" and value not in STORED:
            raise BadParameter(f"kind must be one of {', '.join(STORED)}, not {value[:40]!r}")
        out[name] = value
    return out


def highlight(content: str, query: str) -> list[tuple[str, bool]]:
    """A snippet of ``content`` around the first match, as (text, is-match) pieces; the
    start of ``content`` when there is no query (a search by filters alone)."""
    clean = content.replace(MARK_OPEN, "").replace(MARK_CLOSE, "")
    if not query:
        head = re.sub(r"\s*\n\s*", " ", clean[:SNIPPET_WIDTH]).strip()
        return [(head + ("…" if len(clean) > SNIPPET_WIDTH else ""), False)] if head else []
    marked = make_snippet(clean, query, SNIPPET_WIDTH, (MARK_OPEN, MARK_CLOSE))
    out: list[tuple[str, bool]] = []
    for part in re.split(f"({MARK_OPEN}[^{MARK_CLOSE}]*{MARK_CLOSE})", marked):
        if part.startswith(MARK_OPEN):
            out.append((part[1:-1], True))
        elif part:
            out.append((part, False))
    return out


def search(corpus: Corpus, engine: Engine, p: dict[str, Any], *, stories_on: bool = False) -> SearchPage:
    """One page of hits: newest first, or ranked by relevance among the newest hits;
    ``collapse`` (with stories) keeps the first hit of each story among the newest 100."""
    collapse = bool(p.get("collapse")) and stories_on
    q, page = p["q"], p["page"]
    filters = dict(p.get("filters") or {})
    start = (page - 1) * PER_PAGE
    hits: list[Any] = []
    has_more = False
    if q or filters:
        q = normalize_query(q) if q else ""
        wide = p["sort"] == "relevance" or collapse
        window = RELEVANCE_WINDOW if wide else start + PER_PAGE + 1
        found = corpus.search(
            q,
            site=p["site"],
            since=p["since"],
            until=p["until"],
            limit=window,
            **{RECORD_FILTERS[k]: v for k, v in filters.items()},
        )
        if p["sort"] == "relevance" and q:
            scores = relevance(engine, [h.id for h in found], q)

            def score(h: Any) -> tuple[int, int]:
                return scores.get(h.id, (0, 0))

            found = sorted(found, key=score, reverse=True)  # stable: newest first on ties
        if collapse:
            story = story_ids(engine, [h.id for h in found])
            seen: set[int] = set()
            kept = []
            for h in found:
                key = story.get(h.id) or -h.id
                if key not in seen:
                    seen.add(key)
                    kept.append(h)
            found = kept
        has_more = len(found) > start + PER_PAGE
        hits = found[start : start + PER_PAGE]
    bodies = texts(engine, [h.id for h in hits]) if hits else {}
    return SearchPage(
        query=q,
        site=p["site"],
        since=p["since"].astimezone(ZoneInfo(DEFAULT_TZ)).date().isoformat() if p["since"] else "",
        until=((p["until"] - timedelta(days=1)).astimezone(ZoneInfo(DEFAULT_TZ)).date().isoformat()
               if p["until"] else ""),  # fmt: skip
        sort=p["sort"],
        page=page,
        hits=[
            Hit(h.id, h.url, h.site, h.published, h.title, highlight(bodies.get(h.id, ("", ""))[1], q))
            for h in hits
        ],
        has_more=has_more,
        collapse=collapse,
        filters=filters,
    )


# -- one article ----------------------------------------------------------------------------


def local_time(value: datetime | None, site: str) -> str | None:
    """A stored (UTC) time in the site's zone with its offset and zone name."""
    if value is None:
        return None
    zone = SITES[site].zone if site in SITES else ZoneInfo(DEFAULT_TZ)
    return f"{value.astimezone(zone).isoformat(sep=' ', timespec='seconds')} ({zone.key})"


def removed_lines(raw_text: str | None, content: str | None) -> list[str]:
    """The lines of ``raw_text`` the line table took out of ``content``, in page order."""
    kept = Counter(line.strip() for line in (content or "").splitlines() if line.strip())
    out = []
    for line in (raw_text or "").splitlines():
        line = line.strip()
        if not line:
            continue
        if kept[line] > 0:
            kept[line] -= 1
        else:
            out.append(line)
    return out


def safe_link(url: str) -> str | None:
    """``url`` when it is http(s), so a stored ``javascript:`` URL is never a link."""
    return url if re.match(r"https?://", url, re.IGNORECASE) else None


def article_record(article: Article, engine: Engine, *, stories_on: bool = False) -> dict[str, Any]:
    story: list[dict[str, Any]] | None = None
    if stories_on:
        story_id = story_ids(engine, [article.id]).get(article.id)
        members = story_members(engine, story_id, STORY_SHOWN + 1) if story_id else []
        story = [m.as_dict() for m in members if m.id != article.id][:STORY_SHOWN]
    return {
        "story": story,
        "id": article.id,
        "url": article.url,
        "link": safe_link(article.url),
        "site": article.site,
        "source": article.source,
        "title": article.title,
        "published": article.published.isoformat() if article.published else None,
        "published_local": local_time(article.published, article.site),
        "published_source": article.published_source,
        "published_precision": article.published_precision,
        "fetched_at": article.fetched_at.isoformat() if article.fetched_at else None,
        "updated_at": article.updated_at.isoformat() if article.updated_at else None,
        "encoding": article.encoding,
        "archive": article.archive,
        "captured_at": article.captured_at.isoformat() if article.captured_at else None,
        # What the page states about itself (revision 0008; None on an older database).
        "authors": split_authors(article.authors),
        "authors_source": article.authors_source,
        "origin": article.origin,
        "origin_source": article.origin_source,
        "editor": article.editor,
        "section": article.section,
        "section_source": article.section_source,
        "language": article.language,
        "script": article.script,
        "image": article.image,
        # A link only when http(s); never loaded by the page (docs/web.md says why).
        "image_link": safe_link(article.image) if article.image else None,
        "image_caption": article.image_caption,
        "content": article.content,
        "removed_lines": removed_lines(article.raw_text, article.content),
    }


def reprints(engine: Engine) -> dict[str, Any]:
    """The largest stories and the source -> reprinting site pairs."""
    return {
        "stories": stories(engine, REPRINTS_SHOWN),
        "pairs": reprint_pairs(engine, REPRINTS_SHOWN),
    }


# -- dashboard ------------------------------------------------------------------------------


def dashboard(
    engine: Engine,
    days: int,
    *,
    end: date | None = None,
    now: datetime | None = None,
    origins: bool = True,
) -> dict[str, Any]:
    """Everything the dashboard draws, JSON-ready: per-day counts, per-month counts by
    origin (every month, not only the window: the years a backfill filled in), crawl runs,
    warnings. ``origins``: the database has ``articles.archive`` (revision 0007).

    The window is the ``days`` days up to ``end``. Without ``end`` it is where the data is:
    up to today when the corpus has articles in the last ``days`` days, else up to the day
    of its newest article, so a corpus of earlier years (a demo, a backfill) does not open
    on an empty chart."""
    now = now or datetime.now(UTC)
    zone = ZoneInfo(DEFAULT_TZ)
    today = now.astimezone(zone).date()
    if end is None:
        newest = newest_published(engine, now)
        newest_day = newest.astimezone(zone).date() if newest is not None else today
        end = today if newest_day > today - timedelta(days=days) else newest_day
    end = min(end, today)
    first = end - timedelta(days=days - 1)
    later = end + timedelta(days=days)
    since, _ = utc_day_bounds(first, DEFAULT_TZ)
    _, until = utc_day_bounds(end, DEFAULT_TZ)
    # One day of margin each side: a site in another zone has its days shifted.
    per_site = article_days(engine, since - timedelta(days=1), until + timedelta(days=1))
    day_list = [first + timedelta(days=i) for i in range(days)]
    per_day = {
        site: [counts.get(d, 0) for d in day_list] for site, counts in per_site.items()
    }
    per_day = {site: series for site, series in per_day.items() if any(series)}
    runs = crawl_runs(engine, since)
    index = {d: i for i, d in enumerate(day_list)}
    drops: dict[str, list[int]] = {}
    failures = [0] * days
    pages: dict[str, list[int | None]] = {}
    failed: dict[str, list[int]] = {}
    for r in runs:
        i = index.get(r.started_at.astimezone(ZoneInfo(DEFAULT_TZ)).date())
        if i is None:
            continue
        for reason, n in r.drop_reasons.items():
            drops.setdefault(reason, [0] * days)[i] += n
        failures[i] += r.fetch_failures
        site_pages = pages.setdefault(r.site, [None] * days)
        site_pages[i] = (site_pages[i] or 0) + r.pages_fetched
        if r.status not in ("finished", "running"):
            failed.setdefault(r.site, [0] * days)[i] += 1
    month_list, per_month = month_series(article_months(engine, origins=origins), now)
    return {
        "days": days,
        "first": first.isoformat(),
        "last": end.isoformat(),
        # the windows before and after this one (``end``), None past today
        "earlier": (first - timedelta(days=1)).isoformat(),
        "later": min(later, today).isoformat() if end < today else None,
        "day_list": [d.isoformat() for d in day_list],
        "articles_per_day": per_day,
        "articles_total": {site: sum(series) for site, series in per_day.items()},
        "month_list": month_list,
        "articles_per_month_by_origin": per_month,
        # The newest runs one by one; the charts take per-day sums (a year of nightly runs
        # of every site would make a page of a megabyte).
        "crawl_runs": [r.as_dict() for r in runs[-CRAWL_ROWS_SHOWN:]][::-1],
        "pages_per_day": dict(sorted(pages.items())),
        "failed_runs_per_day": dict(sorted(failed.items())),
        "crawl_summary": crawl_summary(runs),
        "drops_per_day": dict(sorted(drops.items())),
        "fetch_failures_per_day": failures,
        "nightly": [n.as_dict() for n in nightly_warnings(engine, NIGHTLY_RUNS_SHOWN)],
        # newsspider/coverage: the share of each site's listed article URLs held, per day
        **dashboard_coverage(
            coverage_between(engine, first.isoformat(), end.isoformat()),
            [d.isoformat() for d in day_list],
            per_day,
        ),
    }


def month_series(
    counts: dict[str, dict[str, int]], now: datetime
) -> tuple[list[str], dict[str, list[int]]]:
    """The chart's months (``YYYY-MM``, every month from the first with articles to the
    current UTC month, at most :data:`MONTHS_SHOWN`) and each origin's counts over them.
    Months after the current one (a wrong published time) are left out."""
    present = {m for months in counts.values() for m in months}
    last = now.astimezone(UTC)
    end = last.year * 12 + last.month - 1
    start = end - MONTHS_SHOWN + 1
    dated = [int(m[:4]) * 12 + int(m[5:7]) - 1 for m in present if re.fullmatch(r"\d{4}-\d{2}", m)]
    dated = [i for i in dated if start <= i <= end]
    if not dated:
        return [], {}
    month_list = [f"{i // 12:04d}-{i % 12 + 1:02d}" for i in range(min(dated), end + 1)]
    series = {origin: [months.get(m, 0) for m in month_list] for origin, months in counts.items()}
    return month_list, {origin: s for origin, s in series.items() if any(s)}


def crawl_summary(runs: list[CrawlRunRow]) -> dict[str, dict[str, Any]]:
    """Per site: runs, runs by status, pages, drops by reason and failed fetches in the window."""
    out: dict[str, dict[str, Any]] = {}
    for r in runs:
        s = out.setdefault(
            r.site,
            {"runs": 0, "status": {}, "pages_fetched": 0, "items_new": 0, "items_dropped": 0,
             "drop_reasons": {}, "fetch_failures": 0},
        )  # fmt: skip
        s["runs"] += 1
        s["status"][r.status] = s["status"].get(r.status, 0) + 1
        s["pages_fetched"] += r.pages_fetched
        s["items_new"] += r.items_new
        s["items_dropped"] += r.items_dropped
        for reason, n in r.drop_reasons.items():
            s["drop_reasons"][reason] = s["drop_reasons"].get(reason, 0) + n
        s["fetch_failures"] += r.fetch_failures
    return dict(sorted(out.items()))
