"""Network faults from a local server: retried or dropped as the settings
say, logged with the URL, counted, and shown in ``crawl_runs`` and the nightly report.

The faults: 5xx (a 500 that stays, a 503 that goes away), a response that never comes
(``DOWNLOAD_TIMEOUT`` set short), a connection reset (TCP RST), a refused connection, a
redirect loop, too many redirects, and a 404. Scrapy's ``RetryMiddleware`` retries 5xx,
timeouts and lost connections ``RETRY_TIMES`` times; 404 is not retried; the spider's
errback (``NewsSpider.fetch_failed``) logs and counts every request that still failed.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session
from warcio.warcwriter import WARCWriter

from newsspider.nightly.report import (
    DATABASE_UNAVAILABLE,
    FAILED,
    OK,
    SiteRun,
    classify,
    nightly_report,
    site_report,
)
from newsspider.replay import write_response_record
from newsspider.sites import SITES
from newsspider.storage import Article, CrawlRun, engine_for
from tests.localserver import (
    REPO,
    Page,
    article_html,
    hang,
    links_page,
    redirect,
    reset_connection,
    run_crawl,
    sequence,
    serve,
)

GOOD = [f"/article/good{n}.html" for n in range(1, 4)]


def _closed_port() -> int:
    """A port nothing listens on (bound, read and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fault_routes() -> dict:
    routes: dict = {p: Page(article_html(n).encode()) for n, p in enumerate(GOOD, 1)}
    routes.update(
        {
            "/article/e500.html": Page(b"server error", 500),
            "/article/e503-once.html": sequence(
                Page(b"busy", 503), Page(article_html("503").encode())
            ),
            "/article/e404.html": Page(b"gone", 404),
            "/article/hang.html": hang(30),
            "/article/reset.html": reset_connection,
            # only loop-a is linked: a -> b -> a
            "/article/loop-a.html": redirect("/article/loop-b.html"),
            "/article/loop-b.html": redirect("/article/loop-a.html"),
        }
    )
    for n in range(1, 6):  # hop1 -> hop2 -> ... -> hop5 -> page: 5 redirects
        routes[f"/article/hop{n}.html"] = redirect(f"/article/hop{n + 1}.html")
    routes["/article/hop6.html"] = Page(article_html("hops").encode())
    linked = [p for p in routes if p not in ("/article/loop-b.html",) and "hop" not in p]
    routes["/"] = Page(links_page(*linked, "/article/hop1.html"))
    return routes


@pytest.fixture(scope="module")
def faulty_crawl(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("faults")
    url = f"sqlite:///{tmp / 'corpus.db'}"
    refused = f"http://127.0.0.1:{_closed_port()}/article/refused.html"
    routes = _fault_routes()
    routes["/"] = Page(
        routes["/"].body.replace(b"</ul>", f'<a href="{refused}">x</a></ul>'.encode())
    )
    with serve(routes) as server:
        result = run_crawl(
            server, tmp, url, "RETRY_TIMES=1", "DOWNLOAD_TIMEOUT=2", "REDIRECT_MAX_TIMES=3"
        )
        base = server.base
    with Session(engine_for(url)) as s:
        stored = {u.removeprefix(base) for u in s.scalars(select(Article.url))}
        run = s.scalars(select(CrawlRun)).one()
        s.expunge_all()
    return result, stored, run, base, refused


EXPECTED_FAILURES = {
    "http_500": 1,
    "http_404": 1,
    "timeout": 1,
    "connection_lost": 1,
    "connection_refused": 1,
    "redirect_loop": 1,
    "too_many_redirects": 1,
}


def test_faults_are_retried_then_dropped_and_the_crawl_goes_on(faulty_crawl) -> None:
    result, stored, *_ = faulty_crawl
    assert result.stats["finish_reason"] == "finished"
    # the good pages and the 503 that went away are stored, nothing else
    assert stored == {*GOOD, "/article/e503-once.html"}
    # RETRY_TIMES=1: retried once (5xx, timeout, reset); a 404 is not retried
    assert result.requested("/article/e503-once.html") == 2
    assert result.requested("/article/e500.html") == 2
    assert result.requested("/article/hang.html") == 2
    assert result.requested("/article/reset.html") == 2
    assert result.requested("/article/e404.html") == 1
    # the loop is followed once round, then stopped; the hop chain stops at the limit
    assert result.requested("/article/loop-a.html") == 1
    assert result.requested("/article/loop-b.html") == 1
    assert result.requested("/article/hop5.html") == 0
    for reason, n in EXPECTED_FAILURES.items():
        assert result.stat(f"newsspider/fetch_failed_reason/{reason}") == n, reason
    assert result.stat("newsspider/fetch_failed/local") == sum(EXPECTED_FAILURES.values())
    assert result.stat("retry/reason_count/503 Service Unavailable") == 1
    assert result.stat("retry/max_reached") >= 4  # 500, timeout, reset, refused


@pytest.mark.parametrize(
    ("path", "reason", "retries"),
    [
        ("/article/e500.html", "http_500", 1),
        ("/article/e404.html", "http_404", 0),
        ("/article/hang.html", "timeout", 1),
        ("/article/reset.html", "connection_lost", 1),
        ("/article/loop-a.html", "redirect_loop", 0),
        ("/article/hop1.html", "too_many_redirects", 0),
    ],
)
def test_each_failure_is_logged_with_its_reason_and_url(faulty_crawl, path, reason, retries):
    result, _, _, base, _ = faulty_crawl
    after = f", after {retries} retries" if retries else ""
    assert re.search(
        rf"WARNING: fetch failed \({reason}{after}\): {re.escape(base + path)}", result.log
    ), reason


def test_refused_connection_is_logged(faulty_crawl) -> None:
    result, _, _, _, refused = faulty_crawl
    assert re.search(
        rf"fetch failed \(connection_refused, after 1 retries\): {re.escape(refused)}", result.log
    )


def test_crawl_run_row_records_the_failures(faulty_crawl) -> None:
    result, _, run, _, _ = faulty_crawl
    assert run.status == "finished"
    assert run.fetch_failures == sum(EXPECTED_FAILURES.values())
    assert json.loads(run.fetch_failure_reasons) == EXPECTED_FAILURES
    assert run.retries == result.stat("retry/count") >= 5
    assert run.errors == result.stat("log_count/ERROR") >= 4  # "Gave up retrying" lines
    assert run.items_new == 4 and run.db_retries == 0


@pytest.mark.parametrize("retry_times", [0, 2])
def test_retry_times_is_obeyed(tmp_path: Path, retry_times: int) -> None:
    routes: dict = {
        "/article/e500.html": Page(b"server error", 500),
        "/article/e503-once.html": sequence(Page(b"busy", 503), Page(article_html(1).encode())),
    }
    routes["/"] = Page(links_page(*routes))
    with serve(routes) as server:
        result = run_crawl(
            server, tmp_path, f"sqlite:///{tmp_path / 'c.db'}", f"RETRY_TIMES={retry_times}"
        )
    assert result.requested("/article/e500.html") == 1 + retry_times
    assert result.requested("/article/e503-once.html") == (1 if retry_times == 0 else 2)
    if retry_times == 0:  # the 503 is final: a failure, not a page
        assert result.stat("newsspider/fetch_failed_reason/http_503") == 1
        assert result.stat("newsspider/articles_new") == 0
    else:
        assert result.stat("newsspider/articles_new") == 1


# -- the nightly report ------------------------------------------------------------------------


def test_nightly_report_shows_fetch_failures(tmp_path: Path) -> None:
    """``scrapy nightly`` over a replay archive whose articles answer 200, 500 and 404."""
    site = SITES["netease"]
    start = site.start_urls[0]
    ok = [f"https://news.163.com/24/0501/08/J1A2B3C4000189F{c}.html" for c in "AB"]
    err500 = "https://news.163.com/24/0501/08/J1A2B3C4000189FC.html"
    missing = "https://news.163.com/24/0501/08/J1A2B3C4000189FD.html"  # not archived: 404
    assert all(site.is_article(u) for u in [*ok, err500, missing])
    archive = tmp_path / "faults.warc.gz"
    html = (("Content-Type", "text/html; charset=utf-8"),)
    with open(archive, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.1")
        write_response_record(writer, start, links_page(*ok, err500, missing), html)
        for n, u in enumerate(ok):
            write_response_record(writer, u, article_html(n).encode(), html)
        write_response_record(writer, err500, b"error", html, status=500)
    db = f"sqlite:///{tmp_path / 'corpus.db'}"
    cmd = [
        sys.executable, "-m", "scrapy.cmdline", "nightly", "--sites", "netease",
        "-a", f"start_urls={start}",
        "-s", f"REPLAY_ARCHIVE={archive}", "-s", f"DATABASE_URL={db}",
        "-s", f"NIGHTLY_LOCK={tmp_path / 'nightly.lock'}",
        "-s", f"NIGHTLY_JOBDIR={tmp_path / 'jobs'}", "-s", "RETRY_TIMES=2",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    line = "  netease failures: 2 fetches failed (http_404 1, http_500 1), 2 downloads retried"
    assert line in proc.stdout.splitlines(), proc.stdout
    assert re.search(
        rf"fetch failed \(http_500, after 2 retries\): {re.escape(err500)}", proc.stderr
    )
    assert re.search(rf"fetch failed \(http_404\): {re.escape(missing)}", proc.stderr)
    with Session(engine_for(db)) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert (run.fetch_failures, run.retries, run.items_new) == (2, 2, 2)
        assert "2 fetches failed (http_404 1, http_500 1), 2 downloads retried" in run.report


# -- the report, pure ---------------------------------------------------------------------------


def test_report_lines_for_failures_and_database_retries() -> None:
    run = SiteRun(
        "sina",
        OK,
        requests=20,
        pages_ok=14,
        items_new=12,
        fetch_failures=6,
        fetch_failure_reasons={"timeout": 4, "http_404": 2},
        retries=9,
        db_retries=3,
    )
    text = nightly_report(
        [run, SiteRun("zaobao", OK, requests=3, pages_ok=3, items_new=3)],
        {},
        nightly_run_id=1,
        host="h",
        started_at=None,
        finished_at=None,
        exit_code=0,
    )
    assert (
        "  sina failures: 6 fetches failed (http_404 2, timeout 4), 9 downloads retried, "
        "3 database writes retried"
    ) in text.splitlines()
    assert "zaobao failures" not in text  # nothing failed: no line
    assert "  6 fetches failed (http_404 2, timeout 4)" in site_report(run)


def test_a_crawl_closed_for_the_database_is_a_failed_site() -> None:
    outcome, note = classify(
        error=None,
        finish_reason=DATABASE_UNAVAILABLE,
        crawl_status="running",
        pages_ok=10,
        resumed=False,
    )
    assert outcome == FAILED and "database" in note
