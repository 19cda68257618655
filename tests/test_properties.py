"""Property tests (hypothesis).

1. ``extract_article`` on any input raises nothing but ``ExtractionError``: arbitrary
   bytes, HTML-ish token soup (as text and as bytes in several encodings), with random
   charset declarations, in both modes.
2. The line table's invariants (Li & Jiang §2.2) over arbitrary page
   sequences, for the pure ``LineTable`` and for ``SqlLineTable`` on SQLite, which must
   also agree with each other page by page:

   - ``RC`` equals the pages counted (pages with at least one non-empty line);
   - with "count a line once per page", no ``LC`` is ever above ``RC``;
   - every ``LC`` equals the pages since the line's last pruning that held it;
   - pruning removes exactly the records with ``LC <= RC/100``: never one above;
   - a page's kept and dropped lines are its own lines, in order.

Examples are kept few (``max_examples``) so the suite stays fast in CI; the table
properties start from a random state with ``RC`` in the hundreds so pruning thresholds
above 1 are reached without hundreds of pages per example.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, insert
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from newsspider.extraction import ExtractionError, extract_article
from newsspider.extraction.linehash import (
    LineTable,
    line_md5,
    prune_threshold,
    split_lines,
)
from newsspider.storage import Base, SqlLineTable
from newsspider.storage.models import LineCount, SiteLineStats

FAST = settings(
    database=None,  # no .hypothesis folder in the checkout; failures print their example
    max_examples=60,
    deadline=None,  # extraction of a big soup can take tens of ms on a loaded machine
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# -- 1. extraction never raises anything but ExtractionError ---------------------------------

TOKENS = [
    "<html>", "</html>", "<head>", "</head>", "<body>", "</body>", "<title>", "</title>",
    "<p>", "</p>", "<div class='content'>", "</div>", "<span>", "<br>", "<br/>", "<h1>",
    "</h1>", "<table><tr><td>", "</td></tr></table>", "<ul><li>", "</li></ul>",
    "<a href='/x.html'>", "<a href='javascript:void(0)'>", "</a>", "<script>", "</script>",
    "<style>", "</style>", "<!--", "-->", "<![CDATA[", "]]>", "<?xml version='1.0'?>",
    "<!DOCTYPE html>", "<meta charset='gbk'>", "<meta charset='utf-8'>",
    "<meta http-equiv='Content-Type' content='text/html; charset=big5'>",
    "<meta name='publishdate' content='2024-05-01 08:00'>", "<time datetime='2024-13-45'>",
    "<script type='application/ld+json'>{\"datePublished\": \"x\"}</script>",
    "<form>", "</form>", "<nav>", "</nav>", "<footer>", "<iframe>", "<img src=x>",
    "&nbsp;", "&amp;", "&#0;", "&#1;", "&#xD800;", "&#x110000;", "&bogus;", "\x00", "\ufeff",
    "\r\n", "\n", " ", "\t", "新华社北京5月1日电", "记者在现场进行了详细的采访和报道。",
    "专家认为，这一变化将产生深远影响！", "2024年5月1日 08:00", "来源：新华网", "责任编辑：张三",
    "分享到：", "版权所有", "Lorem ipsum dolor sit amet.", "<", ">", "</", "=", "'", '"',
]  # fmt: skip

html_soup = st.lists(st.sampled_from(TOKENS) | st.text(max_size=20), max_size=60).map("".join)
charsets = st.sampled_from(
    [None, "utf-8", "gbk", "gb2312", "gb18030", "big5", "utf-16", "latin-1", "bogus", ""]
)
modes = st.sampled_from(["best", "paper"])


def _headers(charset: str | None) -> dict[str, str] | None:
    if charset is None:
        return None
    return {"Content-Type": f"text/html; charset={charset}" if charset else "text/html"}


def _extract_quietly(data: bytes | str, charset: str | None, mode: str) -> None:
    try:
        art = extract_article(
            data, "https://news.example.com/a/1.html", headers=_headers(charset), mode=mode
        )
    except ExtractionError:
        return
    assert isinstance(art.text, str)
    assert art.title is None or isinstance(art.title, str)
    assert art.published is None or art.published.tzinfo is not None


@FAST
@given(data=st.binary(max_size=3000), charset=charsets, mode=modes)
def test_extract_article_on_arbitrary_bytes(data: bytes, charset: str | None, mode: str) -> None:
    _extract_quietly(data, charset, mode)


@FAST
@given(soup=html_soup, charset=charsets, mode=modes)
def test_extract_article_on_html_token_soup(soup: str, charset: str | None, mode: str) -> None:
    _extract_quietly(soup, charset, mode)


@FAST
@given(
    soup=html_soup,
    encoding=st.sampled_from(["utf-8", "gb18030", "big5", "utf-16", "utf-8-sig"]),
    charset=charsets,
    mode=modes,
)
def test_extract_article_on_encoded_soup(
    soup: str, encoding: str, charset: str | None, mode: str
) -> None:
    _extract_quietly(soup.encode(encoding, errors="replace"), charset, mode)


# -- 2. line table invariants ----------------------------------------------------------------

#: A small alphabet of lines, so pages share lines (boilerplate) often.
LINES = [f"第{i}行：一些文字。" for i in range(12)] + ["  ", ""]

pages = st.lists(
    st.lists(st.sampled_from(LINES), max_size=8).map("\n".join), min_size=1, max_size=25
)


@st.composite
def initial_states(draw: st.DrawFn) -> tuple[int, dict[str, int]]:
    """A table as an earlier crawl may have left it: RC, and LC <= RC for some lines."""
    rc = draw(st.integers(0, 600))
    lcs = {}
    for line in draw(st.lists(st.sampled_from(LINES[:12]), unique=True, max_size=12)):
        lcs[line_md5(line)] = draw(st.integers(1, max(1, rc)))
    return rc, lcs if rc else {}


def _check_page(table_rc: int, lcs: dict[str, int], result, text: str, rc_before: int) -> None:
    """One page's result against its text, and the table's counts after it."""
    lines = split_lines(text)
    kept = result.text.split("\n") if result.text else []
    assert Counter(kept) + Counter(result.dropped_lines) == Counter(lines)
    it = iter(lines)
    assert all(line in it for line in kept)  # kept lines keep their page order
    assert table_rc == rc_before + (1 if lines else 0)
    assert all(1 <= lc <= table_rc for lc in lcs.values()), (table_rc, lcs)


class Oracle:
    """Counts kept by hand: pages holding each line since its record was last pruned."""

    def __init__(self, rc: int, lcs: dict[str, int]) -> None:
        self.rc = rc
        self.lc = dict(lcs)

    def page(self, text: str) -> None:
        lines = split_lines(text)
        if not lines:
            return
        for h in {line_md5(x) for x in lines}:
            self.lc[h] = self.lc.get(h, 0) + 1
        self.rc += 1

    def prune(self) -> set[str]:
        doomed = {h for h, lc in self.lc.items() if lc <= prune_threshold(self.rc)}
        for h in doomed:
            del self.lc[h]
        return doomed


@settings(max_examples=80, deadline=None, database=None)
@given(
    state=initial_states(),
    texts=pages,
    L=st.integers(1, 60),
    prune_every=st.integers(0, 7),
)
def test_pure_line_table_invariants(
    state: tuple[int, dict[str, int]], texts: list[str], L: int, prune_every: int
) -> None:
    rc0, lcs0 = state
    table = LineTable(LC=dict(lcs0), RC=rc0, L=L, prune_every=prune_every, pruned_at_RC=rc0)
    oracle = Oracle(rc0, lcs0)
    for text in texts:
        rc_before, pruned_before = table.RC, table.pruned_at_RC
        result = table.clean(text)
        oracle.page(text)
        if table.pruned_at_RC != pruned_before:
            # the table pruned: it must have dropped exactly the records at or below
            # RC/100, never one above (the oracle keeps those, and the tables must agree)
            assert table.RC - pruned_before >= prune_every > 0
            oracle.prune()
        _check_page(table.RC, table.LC, result, text, rc_before)
        assert table.LC == oracle.lc and table.RC == oracle.rc
    # an explicit pruning at the end: everything kept is above RC/100
    table.prune()
    assert all(lc > prune_threshold(table.RC) for lc in table.LC.values())


@settings(max_examples=60, deadline=None, database=None)
@given(texts=pages, L=st.integers(1, 5))
def test_paper_mode_counts_occurrences_and_rc_counts_pages(texts: list[str], L: int) -> None:
    table = LineTable(L=L)
    for text in texts:
        table.clean(text, once_per_page=False)
    counted = [t for t in texts if split_lines(t)]
    assert table.RC == len(counted)
    occurrences: dict[str, int] = {}
    for t in counted:
        for line in split_lines(t):
            occurrences[line_md5(line)] = occurrences.get(line_md5(line), 0) + 1
    assert table.LC == occurrences


# -- the SQL table, on SQLite, page by page against the pure one -------------------------------


@pytest.fixture(scope="module")
def sqlite_engine() -> Iterator[Engine]:
    # one in-memory database for the whole module: every example uses a new site key
    engine = create_engine(
        "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
    )
    Base.metadata.create_all(engine, tables=[LineCount.__table__, SiteLineStats.__table__])
    yield engine
    engine.dispose()


_site_numbers = itertools.count()


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    state=initial_states(),
    texts=pages,
    L=st.integers(1, 60),
    prune_every=st.integers(0, 7),
    once=st.booleans(),
)
def test_sql_line_table_keeps_the_invariants_and_agrees_with_the_pure_one(
    sqlite_engine: Engine,
    state: tuple[int, dict[str, int]],
    texts: list[str],
    L: int,
    prune_every: int,
    once: bool,
) -> None:
    rc0, lcs0 = state
    site = f"site{next(_site_numbers)}"
    pure = LineTable(LC=dict(lcs0), RC=rc0, L=L, prune_every=prune_every, pruned_at_RC=rc0)
    with Session(sqlite_engine) as s, s.begin():
        s.execute(insert(SiteLineStats), [{"site": site, "RC": rc0, "pruned_at_RC": rc0}])
        if lcs0:
            s.execute(
                insert(LineCount), [{"site": site, "md5": h, "LC": n} for h, n in lcs0.items()]
            )
    for text in texts:
        # one transaction per page, as a batch of one
        with Session(sqlite_engine) as s, s.begin():
            sql = SqlLineTable(s, site, L=L, once_per_page=once, prune_every=prune_every)
            before = sql.RC
            got = sql.clean(text)
            snap = sql.snapshot()
        want = pure.clean(text, once_per_page=once)
        assert (got.text, got.kept, got.dropped) == (want.text, want.kept, want.dropped)
        assert snap.RC == pure.RC == before + (1 if split_lines(text) else 0)
        assert snap.LC == pure.LC and snap.pruned_at_RC == pure.pruned_at_RC
        if once:
            assert all(lc <= snap.RC for lc in snap.LC.values())
    with Session(sqlite_engine) as s, s.begin():
        sql = SqlLineTable(s, site, L=L, once_per_page=once, prune_every=prune_every)
        sql.prune()
        left = sql.snapshot()
    assert all(lc > prune_threshold(left.RC) for lc in left.LC.values())
