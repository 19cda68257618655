"""Discovery: a site row learnt from a home page, proven by extracting samples.

``scrapy addsite URL`` and ``scrapy crawl news -a url=URL`` run :func:`discover` inside a
spider, fetching through Scrapy's downloader (:class:`~newsspider.discovery.fetch.Fetcher`:
robots.txt, delays, ``USER_AGENT``, ``REPLAY_ARCHIVE``) with a bounded number of fetches
(``DISCOVERY_MAX_FETCHES``). The steps, each in the report:

1. **Home page**: fetched; it must answer with HTML. Its on-site links are collected.
2. **Feeds and sitemaps**: ``<link rel="alternate">`` RSS/Atom feeds, else the usual feed
   paths; robots.txt ``Sitemap:`` lines, else the usual sitemap paths; a sitemap index's
   newest sitemaps (news sitemaps first). Feeds are read with feedparser, sitemaps with
   Scrapy's own ``Sitemap``; their links join the home page's.
3. **Sections**: the home page's links that look like section pages (a short path of
   words, no id) are fetched, up to ``DISCOVERY_SECTIONS``; their links join too. Each
   section's pager (a ``rel=next`` or 下一页/下页/后页/Next link, else the next number of
   ``index_2.html``, ``list_2.shtml``, ``?page=2``, ``&p=2``, ``/page/2/``:
   :mod:`.lists`) is followed ``DISCOVERY_LIST_PAGES`` pages on, while more than
   :data:`SAMPLE_RESERVE` fetches are left; those pages' links join too.
4. **Groups**: every link is grouped by URL shape (:mod:`.shapes`); groups whose URLs
   carry an id or a date are sampled first, larger groups before smaller ones, each up to
   ``DISCOVERY_SAMPLES`` pages spread over the group, and every sample is extracted and
   judged (:mod:`.classify`): article, list or other.
5. **Patterns**: the article groups of one URL form are merged into one anchored regex
   (:func:`.shapes.pattern`), general enough for the group and no more: when pages of
   another kind share the form, varying words become the alternation of those seen. A
   regex that would match any link judged otherwise is narrowed. Section pages judged
   lists, or with a pager, become start pages; they and their pager forms (the page
   number a ``\\d+``: :func:`.lists.list_patterns`) become ``list_patterns``.
6. **Facts**: the time zone (the country of the domain, the page's ``lang``, the offsets
   its times print), the ``<title>`` suffixes to cut (Zou & Zhong 2011 §1.2.3's stop
   words, learnt from the samples' ``<title>`` against their headlines), the charset the
   pages declare, and whether the text appears only after scripts run (``render``) or
   sits in an embedded JSON blob (``json_path``).
7. **Reach** (:mod:`.reach`): the crawl the row describes is replayed over every page
   fetched. A row whose lists go deeper than start page -> list page -> article gets the
   ``depth_limit`` they need (at most ``DISCOVERY_MAX_DEPTH``); a feed or sitemap that
   lists articles the row does not reach becomes one of its feeds; the reach (of the
   article URLs seen, how many the row gets to, and why not the others) is in the report.

Nothing here writes: the caller gets a :class:`Discovery` (the proposed :class:`Site`
and the report) and decides.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from urllib.parse import urljoin, urlsplit

import feedparser
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots
from w3lib.url import canonicalize_url

from newsspider.discovery.classify import PageVerdict, group_verdict, judge_page
from newsspider.discovery.fetch import Fetched, Fetcher
from newsspider.discovery.lists import is_page_of, list_patterns, next_page, page_links
from newsspider.discovery.reach import (
    FEED_NOT_READ,
    Reach,
    needed_depth,
    pages_of,
    replay_reach,
)
from newsspider.discovery.scripts import ScriptShells
from newsspider.discovery.shapes import (
    Group,
    families,
    group_urls,
    has_id,
    is_word_segment,
    pattern,
    registered_domain,
    shape_of,
    tokens,
)
from newsspider.errors import UserError
from newsspider.sites.model import Feed, Site
from newsspider.spiders.news import DEFAULT_DEPTH_LIMIT

__all__ = [
    "FEED_PATHS",
    "SITEMAP_PATHS",
    "Discovery",
    "DiscoveryError",
    "GroupReport",
    "discover",
    "guess_tz",
    "reach_refusal",
    "site_key",
    "title_suffixes",
]

#: Where feeds usually are, tried when the home page declares none.
FEED_PATHS = ("/rss.xml", "/feed", "/rss", "/atom.xml")
#: Where sitemaps usually are, tried when robots.txt names none.
SITEMAP_PATHS = ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-news.xml")
#: Sitemaps read from one sitemap index.
SITEMAPS_PER_INDEX = 3
#: Start pages proposed at most (the home page and the sections judged lists).
MAX_START_URLS = 8
#: Article links a section page holds at least to be a start page (a login or an
#: "about us" page is link-dense too, but links no article).
MIN_SECTION_ARTICLES = 2
#: Fetches a pager may not take from the budget: they are kept for the samples.
SAMPLE_RESERVE = 24

_FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/rdf+xml")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_SEPARATORS = "_|-–—·:：丨｜ "
_SCRIPT = re.compile(r"[A-Za-z_]+\.(?:php|asp|aspx|jsp|cgi|do)")
_PERCENT_WORD = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_ISO_OFFSET = re.compile(
    rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?\s?(Z|[+-]\d{2}:?\d{2})(?![\d:])"
)

#: Country-code domains and ``lang`` regions, by time zone.
ZONE_BY_TLD = {
    "cn": "Asia/Shanghai", "hk": "Asia/Hong_Kong", "mo": "Asia/Macau", "tw": "Asia/Taipei",
    "sg": "Asia/Singapore", "my": "Asia/Kuala_Lumpur", "jp": "Asia/Tokyo",
    "uk": "Europe/London", "de": "Europe/Berlin", "fr": "Europe/Paris",
    "au": "Australia/Sydney", "ca": "America/Toronto",
}
ZONE_BY_OFFSET = {"+0800": "Asia/Shanghai", "+0900": "Asia/Tokyo", "+0000": "UTC", "Z": "UTC"}

#: Exit statuses of discovery's failures (the project's table, newsspider/outcome.py).
EXIT_USAGE = 2
EXIT_NOTHING_FETCHED = 3


class DiscoveryError(UserError):
    """Discovery could not propose a row; ``exit_code`` 2 (bad input) or 3 (nothing found)."""

    def __init__(self, message: str, exit_code: int = EXIT_NOTHING_FETCHED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(slots=True)
class GroupReport:
    """One URL group: its regex, size, decision, why, and the samples behind it."""

    pattern: str
    size: int
    kind: str
    reason: str
    samples: list[PageVerdict] = field(default_factory=list)
    example: str = ""


@dataclass(slots=True)
class Discovery:
    """What discovery proposes (``site``) and the evidence (``groups``, ``notes``)."""

    site: Site
    home: str
    groups: list[GroupReport]
    notes: list[str]
    fetches: int
    budget: int
    article_links: int = 0
    reach: Reach | None = None

    def report(self) -> str:
        """Every proposed field, then per URL group the samples, the decision and why."""
        s = self.site
        lines = [
            f"site {s.key} ({s.source}) from {self.home}: {self.fetches} fetches of {self.budget}",
            f"  allowed_domains  {', '.join(s.allowed_domains)}",
            f"  start_urls       {', '.join(s.start_urls)}",
            *(f"  article_pattern  {p}" for p in s.article_patterns),
            *(f"  list_pattern     {p}" for p in s.list_patterns),
            *(f"  feed             {f.url} ({f.kind})" for f in s.feeds),
            f"  tz               {s.tz}",
            f"  title_stop_words {', '.join(repr(w) for w in s.title_stop_words) or '(none)'}",
            f"  encoding         {s.encoding or '(declared per page / UTF-8)'}",
        ]
        if s.render:
            lines.append("  render           true (the pages show their text only after scripts)")
        if s.json_path:
            lines.append(f"  json_path        {s.json_path}")
        if s.depth_limit is not None:
            lines.append(f"  depth_limit      {s.depth_limit}")
        if self.reach is not None:
            lines += [f"  {line}" for line in self.reach.lines()]
        lines += [f"  note: {note}" for note in self.notes]
        lines.append("URL groups (largest first):")
        for g in self.groups:
            lines.append(f"  [{g.kind}] {g.size} links  {g.pattern}")
            lines.append(f"      {g.reason}; e.g. {g.example}")
            for v in g.samples:
                when = v.published.isoformat(timespec="minutes") if v.published else "no time"
                title = (v.title or "no title")[:40]
                lines.append(
                    f"      {v.kind:<7} {v.url}  {title!r}, {when}, body {v.body_chars} chars,"
                    f" {v.links} links"
                )
        return "\n".join(lines)


def site_key(host: str) -> str:
    """A site key from a host: the registered domain's first label as an identifier."""
    label = registered_domain(host).split(".")[0]
    key = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
    return key if key and key[0].isalpha() else f"site_{key}"


def guess_tz(host: str, langs: Iterable[str | None], offsets: Iterable[str]) -> tuple[str, str]:
    """The zone of times printed without an offset, and the evidence: the domain's country,
    else the pages' ``lang`` region, else the offset most of their times print."""
    tld = host.rsplit(".", 1)[-1].lower()
    if tld in ZONE_BY_TLD:
        return ZONE_BY_TLD[tld], f"the domain's country (.{tld})"
    regions = Counter(
        lang.replace("_", "-").split("-")[-1].lower()
        for lang in langs
        if lang and "-" in lang.replace("_", "-")
    )
    for region, _ in regions.most_common():
        if region in ZONE_BY_TLD:
            return ZONE_BY_TLD[region], f"the pages' lang (…-{region.upper()})"
    counted = Counter(o.replace(":", "") for o in offsets)
    for offset, _ in counted.most_common():
        if offset in ZONE_BY_OFFSET:
            return ZONE_BY_OFFSET[offset], f"the offset the pages' times print ({offset})"
    return "Asia/Shanghai", "no evidence: the default"


def title_suffixes(
    pairs: Iterable[tuple[str | None, str | None]], min_pages: int = 2
) -> tuple[str, ...]:
    """The ``<title>`` suffixes a site appends to headlines: for each (``<title>``,
    extracted headline) pair whose ``<title>`` starts with the headline, what follows it,
    when it starts with a separator and recurs on ``min_pages`` pages."""
    counts: Counter[str] = Counter()
    for html_title, headline in pairs:
        if not html_title or not headline:
            continue
        html_title, headline = html_title.strip(), headline.strip()
        if html_title != headline and html_title.startswith(headline):
            rest = html_title[len(headline):]
            if rest[:1] in _SEPARATORS and rest.strip(_SEPARATORS):
                counts[rest] += 1
    return tuple(s for s, n in counts.most_common() if n >= min_pages)


def _is_html(response: Response) -> bool:
    ctype = response.headers.get("Content-Type", b"").decode("latin-1").lower()
    if ctype:
        return any(t in ctype for t in _HTML_TYPES)
    return isinstance(response, TextResponse) and b"<html" in response.body[:2048].lower()


@dataclass(slots=True)
class _Links:
    """Links found, with where each came from."""

    owns: Callable[[str], bool]
    found: dict[str, str] = field(default_factory=dict)  # url -> where

    def add(self, urls: Iterable[str], where: str) -> int:
        n = 0
        for url in urls:
            if not url.startswith(("http://", "https://")) or not self.owns(url):
                continue
            url = canonicalize_url(url, keep_fragments=False)
            if url not in self.found:
                self.found[url] = where
                n += 1
        return n


_LINKS = LinkExtractor(unique=True)


def _page_links(response: Response) -> list[str]:
    if not isinstance(response, TextResponse):
        return []
    return [link.url for link in _LINKS.extract_links(response)]


def _feed_links(body: bytes) -> list[str]:
    parsed = feedparser.parse(body)
    return [e.get("link") for e in parsed.entries if e.get("link")]


def _sitemap(body: bytes) -> tuple[str, list[dict]]:
    try:
        sitemap = Sitemap(body)
    except (StopIteration, ValueError, SyntaxError):
        return "", []
    return sitemap.type, list(sitemap)


async def discover(
    home: str,
    fetcher: Fetcher,
    *,
    key: str | None = None,
    name: str | None = None,
    tz: str | None = None,
    samples: int = 3,
    sections: int = 4,
    list_pages: int = 3,
    max_depth: int = DEFAULT_DEPTH_LIMIT + 3,
    sitemaps_per_index: int = 2,
) -> Discovery:
    """Learn a site row from ``home`` (module docstring). :class:`DiscoveryError` when the
    home page cannot be fetched or is not HTML, or when no group of links is articles.

    ``list_pages``: further pages of each section followed through its pager;
    ``max_depth``: the deepest ``depth_limit`` the row may get; ``sitemaps_per_index``: the
    crawl's ``NEWS_SITEMAPS_PER_INDEX``, for the replay of the row's reach."""
    notes: list[str] = []
    first = await fetcher.get(home)
    if first.response is None or not first.ok:
        raise DiscoveryError(f"home page {home} could not be fetched ({first.reason})")
    response = first.response
    if not _is_html(response):
        ctype = response.headers.get("Content-Type", b"").decode("latin-1") or "no Content-Type"
        raise DiscoveryError(f"home page {home} is not an HTML page ({ctype})", EXIT_USAGE)
    base = response.url
    host = (urlsplit(base).hostname or "").lower()
    domain = registered_domain(host)

    def owns(url: str) -> bool:
        h = (urlsplit(url).hostname or "").lower()
        return h == domain or h.endswith("." + domain)

    links = _Links(owns)
    links.add(_page_links(response), "home page")
    origin = f"{urlsplit(base).scheme}://{urlsplit(base).netloc}"

    # -- feeds and sitemaps ------------------------------------------------------
    feed_types = " or ".join(f"@type='{t}'" for t in _FEED_TYPES)
    declared = (
        [
            urljoin(base, href)
            for href in response.xpath(f"//link[@rel='alternate'][{feed_types}]/@href").getall()
        ]
        if isinstance(response, TextResponse)
        else []
    )
    feed_candidates = declared or [origin + p for p in FEED_PATHS]
    robots = await fetcher.get(origin + "/robots.txt")
    from_robots = (
        list(sitemap_urls_from_robots(robots.response.body, base_url=origin))
        if robots.ok and robots.response is not None
        else []
    )
    sitemap_candidates = from_robots or [origin + p for p in SITEMAP_PATHS]
    feeds: list[Feed] = []
    fetched = await asyncio.gather(*(fetcher.get(u) for u in feed_candidates))
    for f in fetched:
        if f.ok and f.response is not None:
            urls = _feed_links(f.response.body)
            if urls:
                feeds.append(Feed(f.url, "rss"))
                n = links.add(urls, "feed")
                notes.append(f"feed {f.url}: {len(urls)} entries, {n} new links")
                if not declared:
                    break
    sitemap_queue = list(dict.fromkeys(sitemap_candidates))
    seen_sitemaps: set[str] = set()
    while sitemap_queue and fetcher.left > 0:
        url = sitemap_queue.pop(0)
        if url in seen_sitemaps:
            continue
        seen_sitemaps.add(url)
        f = await fetcher.get(url)
        if not f.ok or f.response is None:
            continue
        kind, entries = _sitemap(f.response.body)
        locs = [e["loc"] for e in entries if e.get("loc")]
        if kind == "sitemapindex":
            news_first = [u for u in locs if "news" in u.lower()]
            rest = sorted((u for u in locs if "news" not in u.lower()), reverse=True)
            chosen = (news_first + rest)[:SITEMAPS_PER_INDEX]
            notes.append(f"sitemap index {url}: {len(locs)} sitemaps, reading {len(chosen)}")
            sitemap_queue[:0] = chosen
            if url in from_robots or url == sitemap_candidates[0] or not feeds:
                feeds.append(Feed(url, "sitemap"))
        elif kind == "urlset" and locs:
            n = links.add(locs, "sitemap")
            notes.append(f"sitemap {url}: {len(locs)} URLs, {n} new links")
            if not any(feed.url == url for feed in feeds) and (
                url in from_robots or url in sitemap_candidates
            ):
                feeds.append(Feed(url, "sitemap"))
    # Feeds probed and found absent are not findings worth a line each.
    feed_urls = {f.url for f in feeds} | seen_sitemaps | set(feed_candidates) | {robots.url}

    # -- sections ----------------------------------------------------------------
    verdicts: dict[str, PageVerdict] = {}

    def judge(f: Fetched) -> PageVerdict | None:
        if not f.ok or f.response is None:
            return None
        if not _is_html(f.response):  # a feed linked as a page, an image, a PDF
            verdicts[f.url] = PageVerdict(f.url, "other", reason="not an HTML page")
            return verdicts[f.url]
        verdict = judge_page(
            f.response.body,
            f.url,
            headers={"Content-Type": f.response.headers.get("Content-Type", b"").decode("latin-1")},
            tz=tz,
            same_site=owns,
        )
        verdicts[f.url] = verdict
        return verdict

    home_url = canonicalize_url(base)
    verdicts[home_url] = judge(first) or PageVerdict(home_url, "list")
    section_candidates = [
        url
        for url, where in links.found.items()
        if where == "home page"
        and url != home_url
        and url not in feed_urls
        and _looks_like_section(url, host)
    ]
    # The folders the home page's article-like links live in first (/news/hong-kong/
    # holds /news/hong-kong/2021/03/05/...), then host roots and one-word paths before
    # two-word ones (/columnist/name/), each in page order.
    id_links = [u for u, where in links.found.items() if where == "home page" and has_id(u)]
    section_candidates.sort(
        key=lambda u: (
            -sum(1 for link in id_links if link.startswith(u.rstrip("/") + "/")),
            len([p for p in urlsplit(u).path.split("/") if p]) > 1,
        )
    )
    section_candidates = section_candidates[:sections]
    section_links: dict[str, list[str]] = {}
    for f in await asyncio.gather(*(fetcher.get(u) for u in section_candidates)):
        if f.ok and f.response is not None and _is_html(f.response):
            judge(f)
            section_links[f.url] = [canonicalize_url(u) for u in _page_links(f.response)]
            links.add(section_links[f.url], "section page")

    # -- pagination: each section's pager followed a few pages deep ------------------------
    pagers = await _follow_pagers(
        fetcher, list(section_links), list_pages, reserve=SAMPLE_RESERVE, judge=judge
    )
    for section, (fetched_pages, linked) in pagers.items():
        for f in fetched_pages:
            found = [canonicalize_url(u) for u in _page_links(f.response)]
            section_links[section] = section_links[section] + found
            links.add(found, "list page")
        if fetched_pages or linked:
            notes.append(
                f"pager of {section}: {len(fetched_pages)} further pages read"
                f" ({', '.join(f.url for f in fetched_pages) or 'none'}), "
                f"{len(linked)} linked"
            )

    # -- groups and samples ------------------------------------------------------------
    pager_urls = {u for got, linked in pagers.values() for u in [*(f.url for f in got), *linked]}
    candidates = [u for u in links.found if u not in feed_urls and u != home_url]
    groups = group_urls(candidates)
    for urls in _sampling_order(groups):
        if fetcher.left <= 0:
            notes.append("fetch budget spent: the remaining groups were not sampled")
            break
        if all(u in pager_urls for u in urls):
            continue  # a pager's pages: read (some of them) already
        todo = [u for u in _spread(urls, samples) if u not in verdicts][: max(fetcher.left, 0)]
        for f in await asyncio.gather(*(fetcher.get(u) for u in todo)):
            judge(f)
    found = _propose(
        home=base,
        host=host,
        domain=domain,
        groups=groups,
        verdicts=verdicts,
        links=links,
        feeds=feeds,
        notes=notes,
        fetcher=fetcher,
        key=key,
        name=name,
        tz=tz,
        home_verdict=verdicts[home_url],
        section_links=section_links,
        pagers={s: [f.url for f in got] + linked for s, (got, linked) in pagers.items()},
    )
    return _with_reach(
        found, fetcher, max_depth=max_depth, sitemaps_per_index=sitemaps_per_index
    )


async def _follow_pagers(
    fetcher: Fetcher,
    sections: list[str],
    depth: int,
    *,
    reserve: int,
    judge: Callable[[Fetched], PageVerdict | None],
) -> dict[str, tuple[list[Fetched], list[str]]]:
    """Each section's pager followed ``depth`` pages on (next link, else the next number:
    :func:`~newsspider.discovery.lists.next_page`), the sections concurrently, while more
    than ``reserve`` fetches are left. Per section: the further pages read, and every
    further page their pagers link (read or not)."""

    async def follow(section: str) -> tuple[list[Fetched], list[str]]:
        got: list[Fetched] = []
        linked: dict[str, None] = {}
        current = await fetcher.get(section)
        for _ in range(depth):
            response = current.response
            if not current.ok or not isinstance(response, TextResponse) or not _is_html(response):
                break
            linked.update(dict.fromkeys(page_links(response, section)))
            nxt = next_page(response, section)
            if nxt is None or fetcher.left <= reserve or any(f.url == nxt for f in got):
                break
            current = await fetcher.get(nxt)
            if current.ok and current.response is not None:
                judge(current)
                got.append(current)
                linked[nxt] = None
        if current.ok and isinstance(current.response, TextResponse):
            linked.update(dict.fromkeys(page_links(current.response, section)))
        return got, [u for u in linked if u != canonicalize_url(section)]

    results = await asyncio.gather(*(follow(s) for s in sections))
    return dict(zip(sections, results, strict=True))


def _with_reach(
    found: Discovery, fetcher: Fetcher, *, max_depth: int, sitemaps_per_index: int
) -> Discovery:
    """The proposal with its reach (:mod:`.reach`): the crawl the row describes replayed
    over every page discovery fetched. A row whose lists go deeper than the crawl's default
    depth gets the depth they need (at most ``max_depth``); a feed or sitemap that lists
    articles the row does not reach becomes one of its feeds."""
    site = found.site
    feed_urls = [f.url for f in site.feeds]
    pages = pages_of(fetcher.log, feeds=site.feeds)
    need = needed_depth(site, pages, floor=DEFAULT_DEPTH_LIMIT)
    if need > DEFAULT_DEPTH_LIMIT:
        depth = min(need, max_depth)
        if depth > DEFAULT_DEPTH_LIMIT:
            site = replace(site, depth_limit=depth)
        found.notes.append(
            f"depth: the lists are paginated deeper than start page -> list page -> article "
            f"(depth {DEFAULT_DEPTH_LIMIT}): "
            + (f"depth_limit {depth}; " if depth > DEFAULT_DEPTH_LIMIT else "")
            + (f"they need {need}" if need > max_depth else "every list page seen is reached")
            + (f", capped by DISCOVERY_MAX_DEPTH {max_depth}" if need > max_depth else "")
        )
    depth = site.depth_limit or DEFAULT_DEPTH_LIMIT
    reach = replay_reach(site, pages, depth_limit=depth, sitemaps_per_index=sitemaps_per_index)
    missing = [
        page for reason, page, _ in reach.unreached.values() if reason == FEED_NOT_READ
    ]
    added = [u for u in dict.fromkeys(missing) if u not in feed_urls and pages[_canon(u)].feed]
    if added:
        kinds = {u: "sitemap" if pages[_canon(u)].kind == "sitemap" else "rss" for u in added}
        site = replace(site, feeds=(*site.feeds, *(Feed(u, kinds[u]) for u in added)))
        found.notes.append(
            f"{', '.join(added)}: lists articles the pages do not reach, so a feed of the row"
        )
        reach = replay_reach(site, pages, depth_limit=depth, sitemaps_per_index=sitemaps_per_index)
    found.site = site
    found.reach = reach
    found.fetches = fetcher.spent
    return found


def reach_refusal(found: Discovery, min_reach: float) -> str | None:
    """Why the proposed row is not written (its reach is under ``min_reach``, the
    ``ADDSITE_MIN_REACH`` setting), as one line; None when it may be written. A reach
    that is unknown (no article URL seen) does not refuse."""
    reach = found.reach
    if reach is None or reach.share is None or reach.share >= min_reach:
        return None
    why = reach.reasons()
    first = f": {why[0][1]} article URLs {why[0][0]}, {why[0][2]}" if why else ""
    return (
        f"the row reaches {reach.reached} of {reach.seen} article URLs seen "
        f"({reach.share:.0%}), under ADDSITE_MIN_REACH {min_reach:.0%}{first}; "
        "nothing written (--force writes it)"
    )


def _canon(url: str) -> str:
    return canonicalize_url(url, keep_fragments=False)


def _is_page_of(url: str, section: str) -> bool:
    """Is ``url`` a further page of ``section``: below it, at most two segments deeper,
    no slug (``/news/index_2.html``, ``/news/page/2/``, ``/a/20150704/``, ``?page=2``;
    not ``/video/2021/03/05/some-clip-99123/``)."""
    if not url.startswith(section.split("?")[0].rstrip("/")):
        return False
    rest = url[len(section.split("?")[0].rstrip("/")) :].split("?")[0]
    segments = [s for s in rest.split("/") if s]
    return len(segments) <= 2 and not any(
        t.kind == "W" and ("-" in t.text or "_" in t.text)
        for seg in segments
        for t in tokens(seg)
    )


def _sampling_order(groups: list[Group]) -> list[list[str]]:
    """What to sample, most promising first: URL forms with an id or a date before those
    without, larger before smaller. A group of three or more links is sampled on its own
    (a section of videos apart from a section of articles of the same form); smaller
    groups of one form are sampled together, and single links without an id not at all
    (an 'about us' page)."""
    units: list[tuple[bool, int, list[str]]] = []
    for family in families(groups).values():
        small = [u for g in family if len(g.shapes) < 3 for u in g.urls]
        for g in family:
            if len(g.shapes) >= 3:
                units.append((has_id(g.urls[0]), len(g.shapes), g.urls))
        if len(small) > 1 or (small and has_id(small[0])):
            units.append((has_id(small[0]), len(small), small))
    units.sort(key=lambda unit: (not unit[0], -unit[1]))
    return [urls for _, _, urls in units]


def _looks_like_section(url: str, home_host: str = "") -> bool:
    """A path of one or two words (``/news/``, ``/list/politics``, a percent-escaped
    word), no id, no file name other than an index page; a list script with its query
    (``list.php?cid=3``); or the root of another host of the site
    (``https://finance.example.cn/``)."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if not segments:
        return (parts.hostname or "") != home_host and not parts.query
    if len(segments) > 2 or has_id(url):
        return False
    last = segments[-1]
    if parts.query:  # an old portal's list script: list.php?cid=3
        return len(segments) == 1 and bool(_SCRIPT.fullmatch(last))
    if "." in last and not last.startswith("index"):
        return False
    return all(
        is_word_segment(s) or s.startswith("index") or _PERCENT_WORD.fullmatch(s)
        for s in segments
    )


def _spread(urls: list[str], n: int) -> list[str]:
    """``n`` URLs spread over the list (first, last, middle...), so a sample is not the
    first few of one section."""
    if len(urls) <= n:
        return list(urls)
    step = (len(urls) - 1) / (n - 1) if n > 1 else 0
    return list(dict.fromkeys(urls[round(i * step)] for i in range(n)))


def _propose(
    *,
    home: str,
    host: str,
    domain: str,
    groups: list[Group],
    verdicts: dict[str, PageVerdict],
    links: _Links,
    feeds: list[Feed],
    notes: list[str],
    fetcher: Fetcher,
    key: str | None,
    name: str | None,
    tz: str | None,
    home_verdict: PageVerdict,
    section_links: dict[str, list[str]],
    pagers: dict[str, list[str]],
) -> Discovery:
    """The proposed row from the judged samples (module docstring, steps 5 and 6)."""
    paged_urls = {u for pages in pagers.values() for u in pages}
    decided: dict[tuple, tuple[str, str, list[PageVerdict]]] = {}
    shells = ScriptShells.of(fetcher.log, verdicts, tz=tz, domain=domain)
    for g in groups:
        samples = [verdicts[u] for u in g.urls if u in verdicts]
        kind, reason = group_verdict(samples)
        if kind == "other" and _shells(samples):
            found = shells.judge(samples, reason)
            kind, reason = found.kind, found.reason
        pager_pages = [u for u in g.urls if u in paged_urls]
        if pager_pages and len(pager_pages) == len(g.urls) and kind != "list":
            # a section's further pages, whatever their text looks like (headlines with
            # their lead paragraphs pass for an article's body)
            kind, reason = "list", f"pages of a section's pager ({reason})"
        decided[g.key] = (kind, reason, samples)
    # An unsampled group takes the verdict its URL form's sampled groups agree on.
    for family in families(groups).values():
        kinds = {decided[g.key][0] for g in family if decided[g.key][0] != "unsampled"}
        if len(kinds) == 1:
            (kind,) = kinds
            for g in family:
                if decided[g.key][0] == "unsampled":
                    decided[g.key] = (kind, f"the sampled groups of its URL form are {kind}", [])
    article_patterns: list[str] = []
    not_articles = [u for g in groups if decided[g.key][0] != "article" for u in g.urls]
    reports: list[GroupReport] = []
    for family in families(groups).values():
        members = [g for g in family if decided[g.key][0] == "article"]
        if not members:
            continue
        exclusive = len(members) < len(family)
        shapes = [s for g in members for s in g.shapes]
        regex = pattern(shapes, exclusive=exclusive)
        if any(re.match(regex, u) for u in not_articles):
            regex = pattern(shapes, exclusive=True)
        if any(re.match(regex, u) for u in not_articles):
            for g in members:  # one regex per section, as the last resort
                article_patterns.append(pattern(g.shapes, exclusive=True))
        else:
            article_patterns.append(regex)
    # Most links first: the row's current form leads.
    article_patterns.sort(
        key=lambda p: -sum(1 for u in links.found if re.match(p, u))
    )
    article_links = sum(1 for u in links.found if any(re.match(p, u) for p in article_patterns))
    for g in groups:
        kind, reason, samples = decided[g.key]
        reports.append(
            GroupReport(pattern(g.shapes), len(g.shapes), kind, reason, samples, g.urls[0])
        )
    if not article_patterns:
        raise DiscoveryError(
            f"no article links found from {home}: {len(links.found)} links in "
            f"{len(groups)} URL groups, none whose sampled pages give a title, a time and a "
            f"body (run with -s LOG_LEVEL=DEBUG, or give a section page as the URL)"
        )
    # Sections judged lists are the start pages; they and their further pages (list
    # groups below a section's URL: /news/index_2.html, /news/?page=2) are the list patterns.
    # A section with a pager is a list whatever its verdict (its headlines may carry
    # summaries long enough to pass for a body).
    held = {
        u: sum(1 for link in found if any(re.match(p, link) for p in article_patterns))
        for u, found in section_links.items()
        if (verdicts.get(u) is not None and verdicts[u].kind == "list") or pagers.get(u)
    }
    # A section lists articles: as many as a third of the richest section at least (the
    # chrome of a login page links a few, from its 'most read' box).
    floor = max(MIN_SECTION_ARTICLES, max(held.values(), default=0) / 3)
    sections = [u for u, n in held.items() if n >= floor]
    start_urls = [home, *sections][:MAX_START_URLS]
    pages = [
        u
        for g in groups
        if decided[g.key][0] == "list"
        for u in g.urls
        if u not in sections and any(_is_page_of(u, s) for s in sections)
    ]
    # Pagers: the pages of the sections' own pager forms (index_2.html, ?page=2, /page/2/)
    # get a regex per form; other further pages (/a/20150704/) one per URL form.
    paged = [u for s in sections for u in pagers.get(s, ())]
    paged += [u for u in pages if any(is_page_of(u, s) for s in sections)]
    by_family: dict[tuple, list] = {}
    for u in pages:
        if u not in paged:
            by_family.setdefault(shape_of(u).coarse, []).append(shape_of(u))
    row_lists = list_patterns(sections, paged) + [
        pattern(shapes, exclusive=True) for shapes in by_family.values()
    ]
    article_samples = [v for v in verdicts.values() if v.kind == "article"]
    offsets = [
        m.group(1).decode()
        for f in fetcher.log
        if f.response is not None and f.url in verdicts and verdicts[f.url].kind == "article"
        for m in _ISO_OFFSET.finditer(f.response.body[:200_000])
    ]
    if tz is None:
        tz, why = guess_tz(host, [v.lang for v in [home_verdict, *article_samples]], offsets)
        notes.append(f"time zone {tz}: {why}")
    stop_words = title_suffixes((v.html_title, v.title) for v in article_samples)
    charsets = Counter(v.declared_charset for v in article_samples if v.declared_charset)
    encoding = None
    if charsets:
        declared, n = charsets.most_common(1)[0]
        if n == len(article_samples) and declared.replace("-", "").replace("_", "") not in (
            "utf8",
        ):
            encoding = declared
    render, json_path = shells.row_fields(notes)
    source = name or _site_name(home_verdict, stop_words) or domain
    site = Site(
        key=key or site_key(host),
        source=source,
        allowed_domains=(domain,),
        start_urls=tuple(start_urls),
        article_patterns=tuple(dict.fromkeys(article_patterns)),
        list_patterns=tuple(dict.fromkeys(row_lists)),
        feeds=tuple(feeds),
        tz=tz,
        title_stop_words=stop_words,
        encoding=encoding,
        render=render,
        json_path=json_path,
        checked=False,
        enabled=True,
        facts=f"scrapy addsite {home}: learnt from {fetcher.spent} fetches",
        examples=tuple(
            v.url
            for v in article_samples
            if any(re.match(p, v.url) for p in article_patterns)
        )[:3],
    )
    return Discovery(
        site=site,
        home=home,
        groups=reports,
        notes=notes,
        fetches=fetcher.spent,
        budget=fetcher.budget,
        article_links=article_links,
    )


def _shells(samples: list[PageVerdict]) -> bool:
    return bool(samples) and sum(v.needs_scripts for v in samples) / len(samples) >= 0.6


def _site_name(home: PageVerdict, stop_words: tuple[str, ...]) -> str | None:
    """The outlet's name: the home page's ``<title>`` up to its first separator, else a
    learnt title suffix without its separator."""
    if home.html_title:
        name = re.split(r"\s*[_|\-–—·丨｜]\s*", home.html_title)[0].strip()
        if name:
            return name
    for word in stop_words:
        name = word.strip(_SEPARATORS)
        if name:
            return name
    return None
