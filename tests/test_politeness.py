"""Politeness and safety defaults, tested rather than assumed.

- robots.txt is obeyed: a path it disallows is never requested, for ``*`` and for our
  own product token;
- AutoThrottle is on by default, on top of ``DOWNLOAD_DELAY``, with sane bounds, and the
  delay shows between requests to one site;
- the server sees a descriptive ``User-Agent`` (name, version, contact URL);
- off-site links and off-site redirects are never requested;
- search queries are text, never FTS5/SQL syntax, on SQLite and PostgreSQL: quotes,
  ``*``, ``NEAR``, ``OR``, ``-``, parentheses, unbalanced quotes and an SQL injection
  attempt find exactly what a substring test finds and leave the tables alone, through
  the API and through ``scrapy corpus search``.

One crawl of a local site with the project's default politeness settings (only the
database and stats file are given) serves the crawl tests.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scrapy.utils.project import get_project_settings
from sqlalchemy import Engine, func, inspect, select
from sqlalchemy.orm import Session

from newsspider.storage import Article, Corpus, create_schema, engine_for, upsert_articles
from tests.localserver import (
    REPO,
    CrawlResult,
    Page,
    article_html,
    crawl_command,
    fresh_database,
    links_page,
    redirect,
    serve,
)

ROBOTS = b"""User-agent: otherbot
Disallow: /

User-agent: *
Disallow: /article/secret
"""


@dataclass
class PoliteCrawl:
    result: CrawlResult
    port: int
    user_agent: str


@pytest.fixture(scope="module")
def polite_crawl(tmp_path_factory: pytest.TempPathFactory) -> PoliteCrawl:
    """Crawl with the project's own politeness settings (robots, delay, AutoThrottle, UA)."""
    tmp = tmp_path_factory.mktemp("polite")
    with serve() as server:
        off = f"http://localhost:{server.port}"  # the same server under another host name
        server.routes.update(
            {
                "/robots.txt": Page(ROBOTS, headers={"Content-Type": "text/plain"}),
                "/article/ok1.html": Page(article_html(1).encode()),
                "/article/ok2.html": Page(article_html(2).encode()),
                "/article/secret-1.html": Page(article_html("s").encode()),
                "/article/to-offsite.html": redirect(f"{off}/article/landing.html"),
                "/article/landing.html": Page(article_html("l").encode()),
            }
        )
        server.routes["/"] = Page(
            links_page(
                "/article/ok1.html",
                "/article/ok2.html",
                "/article/secret-1.html",
                "/article/to-offsite.html",
                f"{off}/article/offsite.html",
            )
        )
        cmd = crawl_command(server, tmp, f"sqlite:///{tmp / 'c.db'}")
        # only what the project's settings say about politeness: drop the fast overrides
        cmd = [
            a
            for a in cmd
            if not a.startswith(("DOWNLOAD_DELAY=", "AUTOTHROTTLE_ENABLED=", "ROBOTSTXT_OBEY="))
        ]
        cmd = [a for i, a in enumerate(cmd) if not (a == "-s" and cmd[i + 1] == "-s")]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-4000:]
        stats = json.loads((tmp / "stats.json").read_text("utf-8"))
        result = CrawlResult(proc.returncode, stats, proc.stderr, 0.0, list(server.seen))
        return PoliteCrawl(result, server.port, get_project_settings().get("USER_AGENT"))


def test_the_fast_overrides_were_really_removed(polite_crawl: PoliteCrawl) -> None:
    log = polite_crawl.result.log
    block = re.search(r"Overridden settings:\n(\{.*?\})\n", log, re.S)
    assert block, log[:3000]
    for setting in ("'DOWNLOAD_DELAY': 1.0", "'AUTOTHROTTLE_ENABLED': True",
                    "'ROBOTSTXT_OBEY': True"):  # fmt: skip
        assert setting in block.group(1), setting
    assert "scrapy.extensions.throttle.AutoThrottle" in log  # listed as enabled


def test_robots_txt_is_fetched_first_and_obeyed(polite_crawl: PoliteCrawl) -> None:
    r = polite_crawl.result
    paths = [s.path for s in r.seen]
    assert paths[0] == "/robots.txt"
    assert "/article/secret-1.html" not in paths  # User-agent: *
    assert r.stat("robotstxt/forbidden") == 1
    assert {"/article/ok1.html", "/article/ok2.html"} <= set(paths)
    assert r.stat("newsspider/articles_new") == 2


def test_a_site_can_address_us_by_name_in_robots_txt() -> None:
    """Scrapy matches robots.txt groups against our User-Agent (ROBOTSTXT_USER_AGENT is
    unset): a group for ``newsspider`` applies to us, and then, as RFC 9309 says, the ``*``
    group does not."""
    from protego import Protego

    ua = get_project_settings().get("USER_AGENT")
    assert get_project_settings().get("ROBOTSTXT_USER_AGENT") is None
    robots = Protego.parse(
        "User-agent: *\nDisallow: /a/\n\nUser-agent: newsspider\nDisallow: /private/\n"
    )
    assert not robots.can_fetch("http://127.0.0.1/private/1.html", ua)
    assert robots.can_fetch("http://127.0.0.1/a/1.html", ua)
    assert not robots.can_fetch("http://127.0.0.1/a/1.html", "SomeOtherBot/1.0")


def test_the_server_sees_a_descriptive_user_agent(polite_crawl: PoliteCrawl) -> None:
    ua = polite_crawl.user_agent
    # name/version and what it is; the operator's contact is theirs to add (settings.py)
    assert re.fullmatch(r"newsspider/\d+(\.\d+)+ \(.*crawler.*\)", ua), ua
    assert "Scrapy" not in ua
    assert {s.headers.get("User-Agent") for s in polite_crawl.result.seen} == {ua}


def test_offsite_links_and_redirects_are_never_requested(polite_crawl: PoliteCrawl) -> None:
    r = polite_crawl.result
    hosts = {s.headers.get("Host") for s in r.seen}
    assert hosts == {f"127.0.0.1:{polite_crawl.port}"}
    assert "/article/offsite.html" not in [s.path for s in r.seen]
    assert "/article/landing.html" not in [s.path for s in r.seen]  # reached only by redirect
    assert r.stat("offsite/filtered") >= 1


def test_requests_to_one_site_are_spaced(polite_crawl: PoliteCrawl) -> None:
    """DOWNLOAD_DELAY 1 s (randomised by Scrapy to 0.5-1.5 s), AutoThrottle on top."""
    times = [s.at for s in polite_crawl.result.seen]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) >= 4
    assert min(gaps) >= 0.45, gaps


def test_politeness_defaults() -> None:
    s = get_project_settings()
    assert s.getbool("ROBOTSTXT_OBEY") is True
    assert s.getbool("AUTOTHROTTLE_ENABLED") is True
    assert s.getfloat("DOWNLOAD_DELAY") >= 1.0
    assert s.getfloat("DOWNLOAD_DELAY") <= s.getfloat("AUTOTHROTTLE_START_DELAY") <= 5.0
    assert 10.0 <= s.getfloat("AUTOTHROTTLE_MAX_DELAY") <= 120.0
    assert s.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY") <= 2.0
    assert s.getint("CONCURRENT_REQUESTS_PER_DOMAIN") <= 4
    assert s.getint("DOWNLOAD_MAXSIZE") == 10 * 1024 * 1024
    assert 0 < s.getint("DOWNLOAD_WARNSIZE") < s.getint("DOWNLOAD_MAXSIZE")


# -- search: text, never syntax --------------------------------------------------------------

T0 = datetime(2024, 5, 1, tzinfo=UTC)
CONTENTS = [
    "经济改革继续推进，市场活力增强。",
    "NEAR(经济 改革) 是 FTS5 的语法，这里只是文字。还有 \"引号\" 与 '单引号'。",
    "'; drop table articles; -- 这是一次注入尝试的文字。",
    "经济 OR 改革 -x AND (括号) * 星号 ^ 插入符 : 冒号",
    "没有特殊字符的普通新闻，讲的是新能源汽车。",
    'unbalanced "quote and (paren',
]
HOSTILE = [
    '"', '"经济', '经济"', '"引号"', "'", "'单引号'", "*", "经济*", "*经济", "NEAR", "NEAR(",
    "NEAR(经济 改革)", "OR", "经济 OR 改革", "AND", "NOT", "-x", "-经济", "经济 -改革", "(",
    ")", "(括号)", "((", "^", ":", "title:经济", "content:经济", "{title}:经济",
    "'; drop table articles; --", "'; DROP TABLE articles; --", "1' OR '1'='1", "%", "_",
    "\\", '"quote and (paren', 'unbalanced "', "经济 改革", "经济改革", "a\"b", "\x00", "经\x00济",
]  # fmt: skip


def _expected(query: str) -> list[int]:
    q = query.replace("\x00", "").strip().lower()
    hits = [i for i, c in enumerate(CONTENTS) if q in c.lower() or q in f"标题{i}".lower()]
    return sorted(hits, reverse=True)  # newest first: row i is published at T0 + i hours


@pytest.fixture(params=["sqlite", "postgresql"])
def search_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'corpus.db'}"
    else:
        url = fresh_database(request.getfixturevalue("postgresql_url"))
    engine = engine_for(url)
    create_schema(engine)
    rows = [
        {"url": f"https://s.example/{i}", "site": "sina", "source": "新浪新闻",
         "title": f"标题{i}", "published": T0 + timedelta(hours=i), "content": c, "raw_text": c}
        for i, c in enumerate(CONTENTS)
    ]  # fmt: skip
    with Session(engine) as s, s.begin():
        upsert_articles(s, rows)
    return engine


def _found(corpus: Corpus, query: str) -> list[int] | None:
    """Row numbers found, or None when the query was refused as empty (ValueError)."""
    try:
        hits = corpus.search(query, limit=50)
    except ValueError:  # only an empty query may be refused (NUL counts as nothing)
        assert not query.replace("\x00", "").strip(), f"{query!r} refused"
        return None
    return [int(h.url.rsplit("/", 1)[1]) for h in hits]


def _tables_intact(engine: Engine) -> None:
    assert {"articles", "line_counts", "crawl_runs"} <= set(inspect(engine).get_table_names())
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(Article)) == len(CONTENTS)


def test_hostile_queries_are_plain_text(search_engine: Engine) -> None:
    corpus = Corpus(search_engine)
    for query in HOSTILE:
        found = _found(corpus, query)
        if found is not None:
            assert found == _expected(query), query
    _tables_intact(search_engine)
    # the injection text is found as text, in the one row that holds it
    assert _found(corpus, "'; drop table articles; --") == [2]
    assert _found(corpus, "NEAR(经济 改革)") == [1]
    assert _found(corpus, "经济 OR 改革") == [3]


SYNTAX = [*"\"'*()-^:{}%_\\ \x00", "OR", "AND", "NOT", "NEAR", "经济", "改革", "x", "引号"]


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(query=st.lists(st.sampled_from(SYNTAX), min_size=1, max_size=8).map("".join))
def test_any_mix_of_syntax_is_plain_text(search_engine: Engine, query: str) -> None:
    found = _found(Corpus(search_engine, setup=False), query)
    if found is not None:
        assert found == _expected(query), query


def test_corpus_search_command_treats_an_injection_as_text(search_engine: Engine) -> None:
    if search_engine.dialect.name != "sqlite":
        pytest.skip("the API test covers PostgreSQL; one command run is enough")
    url = search_engine.url.render_as_string(hide_password=False)
    for query in ("'; drop table articles; --", '"unbalanced', "NEAR(经济 改革)"):
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy.cmdline", "corpus", "search", query, "--json",
             "-s", f"DATABASE_URL={url}"],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        got = [int(h["url"].rsplit("/", 1)[1]) for h in json.loads(proc.stdout)]
        assert got == _expected(query), query
    _tables_intact(search_engine)
