"""The acceptance of issue 33 ("reach"), through the commands, offline.

A new user's path on a portal in no site file (tests/portalsite.py: 中州日报 behind a local
HTTP forward proxy that the child processes reach through ``http_proxy`` alone):

1. ``scrapy addsite http://news.zhongzhou-daily.cn/ --key zhongzhou --write`` into a
   temporary ``SITES_FILE``;
2. ``scrapy crawl zhongzhou`` (night one);
3. the site publishes night two's articles (:meth:`PortalServer.release`: six newer
   stories, two of them in the news sitemap only), ``scrapy sites check zhongzhou --json``
   names what the corpus is missing;
4. ``scrapy nightly --sites zhongzhou`` (the row addsite writes is enabled, so it is
   nightly's to crawl; ``--sites`` keeps the built-in rows out), with its gap fill;
5. ``scrapy sites check zhongzhou --json`` again.

Then: >= 98 % of the stories stored (after night one, of night one's; after night two,
of all); every multi-page article one row under its first URL, ``page_urls`` its pages in
order, its body all its pages in order (token F1 >= 0.98 against the joined gold,
``newsspider.evaluation.score_body``), and no row for a page 2..n; no challenge or
verification page, no topic or list page stored; kinds right on >= 95 % of the pages under
the article URL form (a topic is right when it is not stored); coverage 100 % after the gap
fill (``coverage_days``: every listed story stored or filled; and every sitemap URL a row),
with the missing ones named before it.

The expensive runs happen once, in the module-scoped ``runs`` fixture (about a minute).
To try it by hand, run the same commands against ``python -m tests.portalsite --serve``.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from newsspider.evaluation import score_body
from newsspider.sites import read_sites_file
from newsspider.storage import Article, engine_for
from newsspider.storage.models import CoverageDay
from tests.portalsite import (
    BLOCK_WORDS,
    HOME,
    KEY,
    Nights,
    Portal,
    PortalServer,
    serve_portal,
)


@dataclass(frozen=True)
class Row:
    url: str
    kind: str
    title: str
    text: str
    page_urls: list[str] | None


@dataclass
class Runs:
    portal: Portal
    server: PortalServer
    addsite: subprocess.CompletedProcess[str]
    crawl: subprocess.CompletedProcess[str]
    check_before: subprocess.CompletedProcess[str]
    nightly: subprocess.CompletedProcess[str]
    check_after: subprocess.CompletedProcess[str]
    after_crawl: dict[str, Row]
    after_nightly: dict[str, Row]
    coverage: list[CoverageDay]


def rows(database_url: str) -> dict[str, Row]:
    """The site's rows by URL (``raw_text``: the body before line-hash cleaning)."""
    with Session(engine_for(database_url)) as s:
        return {
            a.url: Row(
                a.url,
                a.kind or "article",
                a.title or "",
                a.raw_text or "",
                json.loads(a.page_urls) if a.page_urls else None,
            )
            for a in s.scalars(select(Article).where(Article.site == KEY))
        }


@pytest.fixture(scope="module")
def runs(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    with serve_portal(datasets) as server:
        nights = Nights(server, tmp_path_factory.mktemp("reach"))
        nights.night_one()
        assert nights.addsite.returncode == 0, _tail(nights.addsite)
        after_crawl = rows(nights.database_url)
        nights.night_two()
        after_nightly = rows(nights.database_url)
        with Session(engine_for(nights.database_url)) as s:
            coverage = list(s.scalars(select(CoverageDay).where(CoverageDay.site == KEY)))
            s.expunge_all()
        yield Runs(
            server.portal, server, nights.addsite, nights.crawl, nights.check_before,
            nights.nightly, nights.check_after, after_crawl, after_nightly, coverage,
        )  # fmt: skip


def _tail(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout[-2000:] + "\n" + proc.stderr[-4000:]


def test_the_commands_succeed(runs: Runs) -> None:
    assert f"wrote [{KEY}]" in runs.addsite.stdout, _tail(runs.addsite)
    assert runs.crawl.returncode == 0, _tail(runs.crawl)
    assert runs.nightly.returncode == 0, _tail(runs.nightly)
    # nothing left the machine: every request the children made was for the portal
    offsite = [h.url for h in runs.server.hits() if h.served in ("offsite",)]
    assert not offsite, offsite


def test_the_row_reaches_the_lists(runs: Runs) -> None:
    """addsite learnt the channels and their pages as lists, and the article URL form."""
    row = read_sites_file(Path(_sites_file(runs)))[KEY]
    portal = runs.portal
    assert all(row.is_article(u) for u in portal.kinds)
    for url in portal.list_urls(released=False):
        assert not row.is_article(url), url
    # every channel page is a list the crawl follows (or a start page)
    lists = [u for u in portal.list_urls(released=False) if u != HOME]
    unfollowed = [u for u in lists if not row.is_list(u) and u not in row.start_urls]
    assert not unfollowed, (unfollowed, row.list_patterns, row.start_urls)


def _sites_file(runs: Runs) -> str:
    m = re.search(r"wrote \[\w+\] to (\S+?);", runs.addsite.stdout)
    assert m, runs.addsite.stdout[-2000:]
    return m.group(1)


def test_articles_stored(runs: Runs) -> None:
    portal = runs.portal
    night_one = portal.stored_urls(released=False)
    got = [u for u in night_one if u in runs.after_crawl]
    assert len(got) >= 0.98 * len(night_one), sorted(set(night_one) - set(got))
    every = portal.stored_urls()
    got = [u for u in every if u in runs.after_nightly]
    assert len(got) >= 0.98 * len(every), sorted(set(every) - set(got))


def test_challenged_and_verified_pages_are_stored_as_their_article(runs: Runs) -> None:
    """Each challenged page was fetched again with the clearance cookie (or after the
    verification page) and stored with its own text."""
    portal = runs.portal
    firsts = {p: u for u, s in portal.stories.items() for p in s.page_urls}
    for url in sorted(portal.challenged | portal.verified):
        if url in portal.topics:
            continue
        first = firsts[url]
        assert first in runs.after_nightly, url
        served = [h.served for h in runs.server.hits() if h.url == url]
        assert "page" in served, (url, served)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_multipage_articles_are_one_row(runs: Runs) -> None:
    portal = runs.portal
    scores = {}
    for first, pages in portal.multipage.items():
        story = portal.stories[first]
        row = runs.after_nightly.get(first)
        assert row is not None, f"{story.source} not stored"
        assert row.page_urls == list(pages), (story.source, row.page_urls)
        scores[story.source] = score_body(row.text, story.text).f1
        # in order: each page's first gold line comes after the previous page's
        lines = [_squash(ln) for ln in story.text.splitlines() if ln.strip()]
        size = -(-len(lines) // len(pages))
        body = _squash(row.text)
        starts = [body.find(lines[j * size]) for j in range(len(pages))]
        assert -1 not in starts and starts == sorted(starts), (story.source, starts)
        assert "下一页" not in row.text, f"{story.source}: the pager is in the text"
    low = {k: round(v, 3) for k, v in scores.items() if v < 0.98}
    assert not low, low
    later = {p for pages in portal.multipage.values() for p in pages[1:]}
    assert not later & set(runs.after_nightly), sorted(later & set(runs.after_nightly))


def test_no_challenge_list_or_topic_stored(runs: Runs) -> None:
    portal = runs.portal
    stored = set(runs.after_nightly)
    assert not stored & portal.never_stored(), sorted(stored & portal.never_stored())
    assert stored <= set(portal.stored_urls()), sorted(stored - set(portal.stored_urls()))
    for row in runs.after_nightly.values():
        hits = [w for w in BLOCK_WORDS if w in row.text or w in row.title]
        assert not hits, (row.url, hits)


def test_kinds(runs: Runs) -> None:
    portal = runs.portal
    right, wrong = 0, []
    for url, kind in portal.kinds.items():
        row = runs.after_nightly.get(url)
        if kind == "topic":
            ok = row is None
        else:
            ok = row is not None and row.kind == kind
        right += ok
        if not ok:
            wrong.append((url, kind, row.kind if row else None))
    assert right >= 0.95 * len(portal.kinds), wrong


def test_coverage_after_the_gap_fill(runs: Runs) -> None:
    portal = runs.portal
    window = portal.window()
    # the missing ones named before the gap fill (by sites check or by the nightly run)
    missing = [u for u in window if u not in runs.after_crawl]
    assert missing, "night two publishes stories the corpus does not have yet"
    said = runs.check_before.stdout + runs.nightly.stdout + runs.nightly.stderr
    assert all(u in said for u in missing), [u for u in missing if u not in said]
    # after it: every story the sitemap lists is a row, and the figures say so
    assert set(window) <= set(runs.after_nightly), sorted(set(window) - set(runs.after_nightly))
    per_day = Counter(portal.stories[u].published.strftime("%Y-%m-%d") for u in window)
    days = {c.day: c for c in runs.coverage}
    newest = max(per_day)
    assert newest in days, (sorted(days), sorted(per_day))
    for day in days.values():
        assert day.listed == per_day[day.day], (day.day, day.listed, per_day[day.day])
        assert day.stored + day.filled == day.listed, (day.day, day.listed, day.stored)
    # and the check after the run reports the site's coverage, and passes
    assert runs.check_after.returncode == 0, _tail(runs.check_after)
    report = json.dumps(json.loads(runs.check_after.stdout), ensure_ascii=False)
    assert "coverage" in report, runs.check_after.stdout[-2000:]
