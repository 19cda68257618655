"""The web view (``scrapy corpus serve``) over HTTP, on SQLite and PostgreSQL.

The real app runs in uvicorn on 127.0.0.1 and a free port, in a thread, over a corpus filled
through the project's own storage functions (articles, crawl runs, a nightly run) and opened
read-only as ``serve`` opens it. Requests go through urllib, as any client's would.
The browser tests (Chromium, Playwright) are in ``test_web_browser.py`` and use the
helpers here.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode
from zoneinfo import ZoneInfo

import pytest
import uvicorn
from sqlalchemy import inspect, text

from newsspider.storage import Base, create_schema, engine_for, transaction, upsert_articles
from newsspider.storage.runs import (
    finish_crawl_run,
    finish_nightly_run,
    start_crawl_run,
    start_nightly_run,
)
from newsspider.storage.web_queries import ReadOnlyDatabaseError, has_column, readonly_engine
from newsspider.web import create_app
from newsspider.web.serve import bind_warning, is_loopback
from newsspider.web.views import highlight, removed_lines

REPO = Path(__file__).resolve().parents[1]
SHANGHAI = ZoneInfo("Asia/Shanghai")
XSS_TITLE = "<script>alert(1)</script>\"><img src=x onerror=alert(1)>"
XSS_BODY = "第一段<script>alert(1)</script>\n第二段\"><img src=x onerror=alert(1)>"
#: The two-character word of the search test: in exactly one article.
WORD = "降雪"


def today() -> date:
    return datetime.now(UTC).astimezone(SHANGHAI).date()


def at(day: date, hour: int = 10) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=SHANGHAI)


@dataclass
class Corpus:
    """What a filled test database holds, for the assertions."""

    url: str
    snow_id: int
    xss_id: int
    js_url_id: int
    #: site -> {day: articles}, Asia/Shanghai days (every site of the fixture is UTC+8).
    per_day: dict[str, dict[date, int]]


def fill(url: str) -> Corpus:
    """Articles over the last days, an XSS article, crawl runs and a nightly run."""
    engine = engine_for(url)
    create_schema(engine)
    t = today()
    per_day: dict[str, dict[date, int]] = {
        "netease": {t - timedelta(days=3): 25, t - timedelta(days=2): 3, t - timedelta(days=1): 1},
        "sina": {t - timedelta(days=5): 2, t: 1},
        "zaobao": {t - timedelta(days=40): 4},
    }
    rows: list[dict[str, Any]] = []
    for site, days in per_day.items():
        for day, n in days.items():
            for i in range(n):
                rows.append(
                    {
                        "url": f"https://{site}.example/{day.isoformat()}/{i}.html",
                        "site": site,
                        "source": site,
                        "title": f"{site} 新闻 {day.isoformat()} 第{i}条",
                        "published": at(day, 8) + timedelta(minutes=i),
                        "content": "经济运行总体平稳。\n市场信心持续恢复。",
                        "raw_text": "经济运行总体平稳。\n市场信心持续恢复。",
                    }
                )
    def first(site: str, day: date) -> int:
        return next(i for i, r in enumerate(rows) if r["url"].startswith(f"https://{site}.example/{day}/"))

    snow_day = t - timedelta(days=2)
    rows[first("netease", snow_day)] = {
        "url": "https://netease.example/snow.html",
        "site": "netease",
        "source": "网易新闻",
        "title": "北方多地迎来今冬首场降雪",
        "published": at(snow_day, 8),
        "published_source": "meta:article:published_time",
        "published_precision": "second",
        "content": "受冷空气影响，北方多地迎来今冬首场降雪。\n气象部门提醒注意交通安全。",
        "raw_text": "首页 新闻 体育\n受冷空气影响，北方多地迎来今冬首场降雪。\n"
        "气象部门提醒注意交通安全。\n责任编辑：张三",
    }
    xss_day = t - timedelta(days=5)
    xss, js = first("sina", xss_day), first("sina", xss_day) + 1
    rows[xss] = {
        "url": "https://sina.example/xss.html?a=\"><script>alert(3)</script>",
        "site": "sina",
        "source": "新浪新闻<b>bold</b>",
        "title": XSS_TITLE,
        "published": at(xss_day, 8),
        "content": XSS_BODY,
        "raw_text": XSS_BODY + "\n<iframe src=javascript:alert(2)>",
    }
    rows[js] = rows[js] | {"url": "javascript:alert(4)", "title": "不是链接的网址"}
    with transaction(engine) as s:
        upsert_articles(s, rows)
    with engine.connect() as conn:
        ids = dict(conn.execute(text("SELECT url, id FROM articles")).all())
    if has_column(engine, "articles", "story_id"):  # reprint detection is there: one story
        snow = ids["https://netease.example/snow.html"]
        with engine.begin() as conn:
            conn.execute(text("UPDATE articles SET story_id = id"))
            conn.execute(
                text("UPDATE articles SET story_id = :s WHERE site = 'zaobao' AND url LIKE :u"),
                {"s": snow, "u": "%/0.html"},
            )
            conn.execute(
                text("UPDATE articles SET story_id = :s WHERE site = 'zaobao' AND url LIKE :u"),
                {"s": snow, "u": "%/1.html"},
            )
    # Crawl runs: netease finished twice, sina once failed with drops and fetch failures.
    with transaction(engine) as s:
        for site, day, status, pages, dropped, reasons, failures in (
            ("netease", t - timedelta(days=2), "finished", 40, 2, {"EmptyMainblockset": 2}, 0),
            ("netease", t - timedelta(days=1), "finished", 35, 0, {}, 1),
            ("sina", t - timedelta(days=1), "nothing_fetched", 0, 3, {"NoTitle": 3}, 8),
        ):
            run = start_crawl_run(s, site)
            finish_crawl_run(
                s, run, started_at=at(day, 2), status=status, pages_fetched=pages,
                items_new=pages // 10, items_dropped=dropped, drop_reasons=json.dumps(reasons),
                fetch_failures=failures, fetch_failure_reasons=json.dumps({"dns": failures}),
            )  # fmt: skip
        nightly = start_nightly_run(s, host="test", pid=1, sites=["netease", "sina"])
        finish_nightly_run(
            s, nightly, exit_code=3,
            report="nightly run\nWARNING sina: articles 0 outside its band 20-40\n"
            "WARNING sina: <script>alert(5)</script>\n",
        )  # fmt: skip
    return Corpus(
        url=url,
        snow_id=ids["https://netease.example/snow.html"],
        xss_id=ids[rows[xss]["url"]],
        js_url_id=ids["javascript:alert(4)"],
        per_day=per_day,
    )


def fingerprint(url: str) -> str:
    """A hash of every row of every table: equal before and after means nothing was written."""
    engine = engine_for(url)
    digest = hashlib.sha256()
    with engine.connect() as conn:
        for name in sorted(inspect(engine).get_table_names()):
            if name.startswith("articles_fts") or name == "articles_search_tail":
                continue  # index tables: derived from articles, their content follows it
            for row in conn.execute(text(f'SELECT * FROM "{name}" ORDER BY 1')):
                digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    base: str
    corpus: Corpus

    def get(self, path: str, params: dict[str, str] | None = None, **kw: Any) -> tuple[int, str]:
        return request(self.base + path + ("?" + urlencode(params) if params else ""), **kw)

    def json(self, path: str, params: dict[str, str] | None = None) -> Any:
        status, body = self.get(path, params)
        assert status == 200, body
        return json.loads(body)


def request(
    url: str, method: str = "GET", data: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def run_server(url: str, token: str | None = None) -> Iterator[str]:
    """uvicorn serving the read-only app on ``url`` in a thread; yields its base URL."""
    engine = readonly_engine(url, busy_timeout=5.0)
    port = free_port()
    config = uvicorn.Config(
        create_app(engine, token=token), host="127.0.0.1", port=port, log_level="warning",
        server_header=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        engine.dispose()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('web') / 'corpus.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    return fill(url)


@pytest.fixture(scope="module")
def server(database: Corpus) -> Iterator[Server]:
    for base in run_server(database.url):
        yield Server(base, database)


# -- pages and API --------------------------------------------------------------------------


def test_search_two_characters_finds_the_one_article(server: Server) -> None:
    status, page = server.get("/", {"q": WORD})
    assert status == 200
    assert f'href="/article/{server.corpus.snow_id}"' in page
    assert "<mark>降雪</mark>" in page
    data = server.json("/api/search", {"q": WORD})
    assert [h["id"] for h in data["hits"]] == [server.corpus.snow_id]
    assert data["hits"][0]["matches"] == [WORD]


def test_search_one_character_filters_sort_and_pages(server: Server) -> None:
    every = server.json("/api/search", {"q": "经"})  # one character: in every body but two
    assert len(every["hits"]) == 20 and every["has_more"]
    second = server.json("/api/search", {"q": "经", "page": "2"})
    assert not {h["id"] for h in second["hits"]} & {h["id"] for h in every["hits"]}
    stamps = [h["published"] for h in every["hits"]]
    assert stamps == sorted(stamps, reverse=True)
    sina = server.json("/api/search", {"q": "新闻", "site": "sina"})
    assert sina["hits"] and {h["site"] for h in sina["hits"]} == {"sina"}
    day = (today() - timedelta(days=2)).isoformat()
    dated = server.json("/api/search", {"q": "新闻", "since": day, "until": day})
    assert {h["published_local"][:10] for h in dated["hits"]} == {day}
    ranked = server.json("/api/search", {"q": "降雪", "sort": "relevance"})
    assert ranked["hits"][0]["id"] == server.corpus.snow_id


def test_article_page_shows_body_time_and_removed_lines(server: Server) -> None:
    status, page = server.get(f"/article/{server.corpus.snow_id}")
    assert status == 200
    assert "北方多地迎来今冬首场降雪" in page and "气象部门提醒注意交通安全。" in page
    day = (today() - timedelta(days=2)).isoformat()
    assert f"{day} 08:00:00+08:00 (Asia/Shanghai)" in page
    assert "meta:article:published_time" in page
    data = server.json(f"/api/article/{server.corpus.snow_id}")
    assert data["removed_lines"] == ["首页 新闻 体育", "责任编辑：张三"]
    assert data["published"].startswith(f"{day}T00:00:00")  # stored in UTC


def test_dashboard_counts_per_day(server: Server) -> None:
    data = server.json("/api/dashboard", {"days": "30"})
    assert data["last"] == today().isoformat()
    for site, days in server.corpus.per_day.items():
        expected = [days.get(date.fromisoformat(d), 0) for d in data["day_list"]]
        if any(expected):
            assert data["articles_per_day"][site] == expected
        else:
            assert site not in data["articles_per_day"]  # zaobao: 40 days ago
    assert data["crawl_summary"]["sina"]["status"] == {"nothing_fetched": 1}
    assert data["crawl_summary"]["netease"]["drop_reasons"] == {"EmptyMainblockset": 2}
    assert data["nightly"][0]["warnings"][0] == "sina: articles 0 outside its band 20-40"
    longer = server.json("/api/dashboard", {"days": "90"})
    assert sum(longer["articles_per_day"]["zaobao"]) == 4
    status, page = server.get("/dashboard")
    assert status == 200 and 'id="chart-articles"' in page


def test_stored_strings_are_escaped(server: Server) -> None:
    for path in (f"/article/{server.corpus.xss_id}", "/dashboard", "/"):
        status, page = server.get(path, {"q": "alert"} if path == "/" else None)
        assert status == 200
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "<iframe" not in page and "<b>bold" not in page
    _, page = server.get(f"/article/{server.corpus.xss_id}")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    _, page = server.get(f"/article/{server.corpus.js_url_id}")
    assert 'href="javascript:' not in page  # a stored non-http URL is text, not a link


def test_security_headers(server: Server) -> None:
    req = urllib.request.Request(server.base + "/")
    with urllib.request.urlopen(req, timeout=20) as resp:
        csp = resp.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
        assert resp.headers["x-content-type-options"] == "nosniff"
        assert "uvicorn" not in (resp.headers.get("server") or "")


@pytest.mark.parametrize(
    ("path", "params", "message"),
    [
        ("/", {"q": "x", "site": "nosuch"}, "unknown site"),
        ("/", {"q": "x", "since": "2024-13-01"}, "not a calendar date"),
        ("/", {"q": "x", "since": "yesterday"}, "since must be a date"),
        ("/", {"q": "x", "since": "2024-05-02", "until": "2024-05-01"}, "before until"),
        ("/", {"q": "x", "page": "0"}, "page must be"),
        ("/", {"q": "x", "page": "1; DROP TABLE articles"}, "page must be"),
        ("/", {"q": "x", "sort": "random"}, "sort must be one of"),
        ("/", {"q": "长" * 201}, "longer than"),
        ("/api/search", {"q": "x", "page": "-1"}, "page must be"),
        ("/dashboard", {"days": "7"}, "days must be one of"),
        ("/api/dashboard", {"days": "x"}, "days must be one of"),
        ("/article/abc", None, "whole number"),
        ("/api/article/99999999999999999999999", None, "whole number"),
    ],
)
def test_bad_parameters_get_400_with_a_message(
    server: Server, path: str, params: dict[str, str] | None, message: str
) -> None:
    status, body = server.get(path, params)
    assert status == 400
    assert message in body and "Traceback" not in body
    if path.startswith("/api/"):
        assert message in json.loads(body)["error"]


def test_missing_article_is_404(server: Server) -> None:
    assert server.get("/article/999999")[0] == 404
    assert server.get("/api/article/999999")[0] == 404
    assert server.get("/nosuch")[0] == 404


ROUTES = ("/", "/article/{id}", "/dashboard", "/reprints", "/api/search", "/api/article/{id}",
          "/api/dashboard", "/api/reprints", "/static/style.css", "/static/echarts.min.js", "/nosuch")  # fmt: skip


def test_read_only_through_every_route(server: Server) -> None:
    """Every route and method, with SQL-looking parameters: the database is unchanged."""
    before = fingerprint(server.corpus.url)
    hostile = {"q": "'; DELETE FROM articles; --", "site": "", "sort": "time"}
    for route in ROUTES:
        path = route.format(id=server.corpus.snow_id)
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            status, _ = request(
                server.base + path + "?" + urlencode(hostile),
                method=method,
                data=b"title=x&content=y",
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
            assert status in (404, 405), (method, path, status)
        status, _ = server.get(path, hostile)
        assert status in (200, 404), (path, status)
    assert server.get("/", {"q": "x", "collapse": "1; DROP TABLE articles"})[0] == 400
    status, _ = server.get("/article/" + quote("1;DELETE FROM articles"))
    assert status in (400, 404)
    assert fingerprint(server.corpus.url) == before


def test_readonly_engine_refuses_writes(database: Corpus) -> None:
    engine = readonly_engine(database.url, busy_timeout=5.0)
    try:
        with pytest.raises(Exception, match="(?i)read.?only"), engine.begin() as conn:
            conn.execute(text("DELETE FROM articles"))
        with pytest.raises(Exception, match="(?i)read.?only"), engine.begin() as conn:
            conn.execute(text("CREATE TABLE evil (x int)"))
    finally:
        engine.dispose()
    assert engine_for(database.url).connect().execute(text("SELECT count(*) FROM articles")).scalar()


def test_reprints_when_stories_exist(server: Server) -> None:
    """Stories (articles.story_id, reprint detection): the article's story, the collapse
    switch, /reprints. Without the column the pages say there are no stories yet."""
    if not has_column(engine_for(server.corpus.url), "articles", "story_id"):
        assert server.get("/reprints")[0] == 404
        assert server.json(f"/api/article/{server.corpus.snow_id}")["story"] is None
        pytest.skip("no articles.story_id in this schema: reprint detection is not there")
    article = server.json(f"/api/article/{server.corpus.snow_id}")
    assert {m["site"] for m in article["story"]} == {"zaobao"} and len(article["story"]) == 2
    data = server.json("/api/reprints")
    assert data["stories"][0]["story_id"] == server.corpus.snow_id
    assert data["stories"][0]["articles"] == 3 and data["stories"][0]["sites"] == 2
    assert data["pairs"] == [{"source": "netease", "site": "zaobao", "articles": 2}]
    every = server.json("/api/search", {"q": "经济", "site": "zaobao"})
    collapsed = server.json("/api/search", {"q": "经济", "site": "zaobao", "collapse": "1"})
    assert len(every["hits"]) == 4 and len(collapsed["hits"]) == 3
    status, page = server.get("/reprints")
    assert status == 200 and "北方多地迎来今冬首场降雪" in page


# -- token, bind address, command -----------------------------------------------------------


def test_token(database: Corpus) -> None:
    if not database.url.startswith("sqlite"):
        pytest.skip("the token does not depend on the database")
    for base in run_server(database.url, token="s3cret"):
        assert request(base + "/")[0] == 401
        assert request(base + "/api/search?q=x")[0] == 401
        assert request(base + "/api/search?q=x&token=wrong")[0] == 401
        assert request(base + "/api/search?q=x&token=s3cret")[0] == 200
        assert request(base + "/api/dashboard", headers={"Authorization": "Bearer s3cret"})[0] == 200
        # A page opened with ?token= sets the cookie and drops the token from the address.
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(base + "/dashboard?days=90&token=s3cret", timeout=20) as resp:
            assert resp.status == 200 and resp.url == base + "/dashboard?days=90"
        with opener.open(base + "/article/1", timeout=20) as resp:
            assert resp.status == 200


def test_bind_address_warning() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert bind_warning("127.0.0.1", None) is None
    assert "reachable from other machines" in (bind_warning("0.0.0.0", "t") or "")
    assert "no access token" in (bind_warning("0.0.0.0", None) or "")


def test_readonly_engine_refuses_a_missing_database(tmp_path: Path) -> None:
    with pytest.raises(ReadOnlyDatabaseError, match="no database"):
        readonly_engine(f"sqlite:///{tmp_path / 'none.db'}", busy_timeout=1.0)
    assert not (tmp_path / "none.db").exists()


def test_serve_command_starts_and_warns(database: Corpus) -> None:
    """``scrapy corpus serve`` in a subprocess: answers, warns off loopback, never writes."""
    if not database.url.startswith("sqlite"):
        pytest.skip("one backend is enough for the command line")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "corpus", "serve", "--host", "0.0.0.0", "--port", str(port)],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": database.url},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        status = 0
        while time.monotonic() < deadline:
            try:
                status, body = request(f"http://127.0.0.1:{port}/api/search?q={quote(WORD)}")
                break
            except OSError:
                time.sleep(0.2)
        assert status == 200 and json.loads(body)["hits"][0]["id"] == database.snow_id
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "WARNING: serving on 0.0.0.0" in err and "no access token" in err


# -- pure pieces ----------------------------------------------------------------------------


def test_highlight_and_removed_lines() -> None:
    assert highlight("前文[不是标记]降雪后文", "降雪") == [("前文[不是标记]", False), ("降雪", True), ("后文", False)]
    assert highlight("ABC abc", "abc")[0] == ("ABC", True)
    assert removed_lines("a\nb\na\nc", "a\nc") == ["b", "a"]
