"""Failures a user can read: every case of a bad command line, setting, file, URL, time zone or
database ends with one line on stderr naming the problem, no traceback, a non-zero exit
status; and a crawl's exit status and summary line say how it went.

Real command lines in subprocesses, offline: crawls replay WARC archives built from the
demo's saved pages (shipped in the repository), a URL that cannot be fetched is a closed
port on 127.0.0.1, an unreachable database a refused loopback port.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from warcio.warcwriter import WARCWriter

from newsspider.demo import build_demo_archive
from newsspider.outcome import (
    EXIT_ALL_DROPPED,
    EXIT_NOTHING_FETCHED,
    EXIT_OK,
    EXIT_USAGE,
)
from newsspider.replay import write_response_record
from newsspider.sites import SITES

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "newsspider" / "demo" / "pages" / "sina" / "html" / "gne-sina-2.html"
#: The NetEase pages the demo ships, by URL.
DEMO_NETEASE_URLS = [
    json.loads(line)["url"]
    for line in (REPO / "newsspider/demo/pages/netease/cases.jsonl").read_text().splitlines()
]
#: Local crawls: no politeness delays, one extraction process.
FAST = ("DOWNLOAD_DELAY=0", "AUTOTHROTTLE_ENABLED=False", "EXTRACTION_WORKERS=0")


def scrapy(*args: str, db: str | None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if db is not None:
        env["DATABASE_URL"] = db
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit status 2, nothing but one ``scrapy CMD: error: ...`` line on stderr."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_USAGE, out
    assert "Traceback" not in out, out
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert re.match(r"scrapy \w+: error: ", lines[0]), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'corpus.db'}"


# -- 1. the database -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("postgresql+psycopg://news@127.0.0.1:{port}/news", "cannot connect to the database"),
        ("nonsense", "is not a usable database URL"),
    ],
    ids=["refused", "not-a-url"],
)
def test_an_unusable_database_stops_a_crawl_at_once_in_one_line(url, fragment):
    url = url.format(port=closed_port())
    started = time.monotonic()
    proc = scrapy("crawl", "netease", "-s", f"DATABASE_URL={url}", db=None, timeout=60)
    assert time.monotonic() - started < 10, "the first failed connection must end the crawl"
    assert_one_line_error(proc, fragment)


def test_an_unreachable_database_stops_nightly_and_corpus_in_one_line(tmp_path):
    url = f"postgresql+psycopg://news@127.0.0.1:{closed_port()}/news"
    assert_one_line_error(
        scrapy("nightly", "--sites", "sina", "-s", f"NIGHTLY_LOCK={tmp_path / 'lock'}", db=url),
        "cannot connect to the database",
    )
    assert_one_line_error(scrapy("corpus", "stats", db=url), "cannot connect to the database")


# -- 2. exit statuses and the summary line ----------------------------------------------------


def write_archive(path: Path, pages: dict[str, bytes]) -> Path:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, body in pages.items():
            write_response_record(writer, url, body)
    return path


def summary_line(stderr: str) -> str:
    found = re.findall(r"\[newsspider\.extensions\] \w+: (.*articles stored.*)$", stderr, re.M)
    assert len(found) == 1, stderr[-3000:]
    return found[0]


def test_a_crawl_whose_every_fetch_fails_exits_3_with_its_summary(tmp_path, db):
    archive = write_archive(tmp_path / "unrelated.warc.gz", {"http://example.org/": b"<p>x</p>"})
    proc = scrapy(
        "crawl", "netease", "-s", f"REPLAY_ARCHIVE={archive}", *sum((["-s", s] for s in FAST), []),
        db=db,
    )  # fmt: skip
    assert proc.returncode == EXIT_NOTHING_FETCHED, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    line = summary_line(proc.stderr)
    assert re.match(r"netease: 0 articles stored \(0 new, 0 updated\), 0 dropped, \d+ fetches "
                    r"failed \(http_404 \d+\), \dm\d\ds; exit status 3: nothing could be fetched$",
                    line), line  # fmt: skip
    with sqlite3.connect(db.removeprefix("sqlite:///")) as conn:
        status, pages, exit_status, summary = conn.execute(
            "SELECT status, pages_fetched, exit_status, summary FROM crawl_runs"
        ).fetchone()
    assert status == "nothing_fetched" and pages > 0  # 404s are responses, not pages of news
    assert exit_status == EXIT_NOTHING_FETCHED
    assert summary.split(", ")[:3] == line.split(", ")[:3]  # the time may differ by a second


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "demo.warc.gz"
    build_demo_archive(out)
    return out


def test_a_replayed_crawl_of_real_pages_exits_0_with_its_summary(demo_archive, db):
    start = "http://money.163.com/demo/start.html"
    proc = scrapy(
        "crawl", "netease", "-a", f"start_urls={start}", "-s", f"REPLAY_ARCHIVE={demo_archive}",
        *sum((["-s", s] for s in FAST), []), db=db,
    )  # fmt: skip
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    line = summary_line(proc.stderr)
    assert re.match(r"netease: 4 articles stored \(4 new, 0 updated\), 0 dropped, 0 fetches "
                    r"failed, \dm\d\ds$", line), line  # fmt: skip
    with sqlite3.connect(db.removeprefix("sqlite:///")) as conn:
        row = conn.execute("SELECT status, exit_status, summary FROM crawl_runs").fetchone()
    assert row[:2] == ("finished", EXIT_OK)
    assert row[2].startswith("netease: 4 articles stored (4 new, 0 updated), 0 dropped")


def test_a_crawl_that_drops_every_article_exits_5(tmp_path, db):
    """Article pages that come back with an empty body: each is dropped (EmptyBody)."""
    start = "http://money.163.com/demo/start.html"
    articles = [u for u in DEMO_NETEASE_URLS if SITES["netease"].is_article(u)][:2]
    links = "".join(f'<a href="{u}">{u}</a>' for u in articles).encode()
    pages = {start: b"<html><body>" + links + b"</body></html>"}
    pages.update(dict.fromkeys(articles, b"<html><body></body></html>"))
    archive = write_archive(tmp_path / "empty.warc.gz", pages)
    proc = scrapy(
        "crawl", "netease", "-a", f"start_urls={start}", "-s", f"REPLAY_ARCHIVE={archive}",
        *sum((["-s", s] for s in FAST), []), db=db,
    )  # fmt: skip
    assert proc.returncode == EXIT_ALL_DROPPED, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    line = summary_line(proc.stderr)
    assert line.startswith("netease: 0 articles stored (0 new, 0 updated), 2 dropped (Empty"), line
    assert line.endswith("exit status 5: every article was dropped"), line
    with sqlite3.connect(db.removeprefix("sqlite:///")) as conn:
        row = conn.execute("SELECT status, exit_status FROM crawl_runs").fetchone()
    assert row == ("all_dropped", EXIT_ALL_DROPPED)


# -- 3. arguments, settings, names, files, time zones -------------------------------------------


USER_ERRORS = [
    (["crawl", "nosuchsite"], ["unknown spider 'nosuchsite' (scrapy list shows all "]),
    (["crawl", "netese"], ["unknown spider 'netese': did you mean netease? (scrapy list shows"]),
    (["crawl", "netease", "-a", "limit=abc"], ["-a limit must be a positive integer", "abc"]),
    (["crawl", "netease", "-a", "limt=5"], ["unknown spider argument -a limt", "-a limit=N"]),
    (["crawl", "netease", "-a", "start_urls=news.163.com"], ["'news.163.com' is not an http"]),
    (["crawl", "netease", "-s", "EXTRACTOR=bogus"], ["EXTRACTOR='bogus'", "blockstats, "]),
    (["crawl", "netease", "-s", "REPLAY_ARCHIVE=/no/such.warc.gz"], ["REPLAY_ARCHIVE not found"]),
    (["crawl", "netease", "-s", "NEWS_DB_BATCH=many"], ["NEWS_DB_BATCH='many'", "whole number"]),
    (["extract", "--tz", "Mars/Base", str(PAGE)], ["unknown time zone 'Mars/Base'", "IANA"]),
    (["extract", "--method", "bogus", str(PAGE)], ["bogus", "blockstats"]),
    (["extract", "/no/such/page.html"], ["no such file: /no/such/page.html"]),
    (["evaluate", "--method", "bogus", str(PAGE.parent.parent)], ["bogus"]),
    (["nightly", "-a", "limt=5"], ["unknown spider argument -a limt"]),
    (["nightly", "--sites", "nosuch"], ["unknown site(s) nosuch", "known: netease"]),
]


@pytest.mark.parametrize(
    ("args", "fragments"), USER_ERRORS, ids=[" ".join(args) for args, _ in USER_ERRORS]
)
def test_a_user_error_is_one_line_and_exit_status_2(args, fragments, tmp_path, db):
    proc = scrapy(*args, "-s", f"NIGHTLY_LOCK={tmp_path / 'lock'}", db=db, timeout=60)
    assert_one_line_error(proc, *fragments)


def test_an_unknown_spider_is_one_short_line(tmp_path, db):
    proc = scrapy("crawl", "nosuchsite", db=db, timeout=60)
    line = assert_one_line_error(proc, "unknown spider 'nosuchsite'")
    assert len(line) < 100 and "netease, news" not in line, line
    assert re.search(r"scrapy list shows all \d+\)$", line), line


def test_traceback_on_request(db):
    proc = scrapy("extract", "--tz", "Mars/Base", "--traceback", str(PAGE), db=db)
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "UserError" in proc.stderr


# -- 4. a URL that cannot be fetched --------------------------------------------------------------


def test_extract_of_an_unreachable_url_names_the_reason(db):
    url = f"http://127.0.0.1:{closed_port()}/article.html"
    proc = scrapy("extract", url, "-s", "RETRY_ENABLED=False", db=db)
    assert_one_line_error(proc, f"could not fetch {url}: connection_refused")


# -- 5. the small ones ----------------------------------------------------------------------------


def test_makewarc_help_is_not_garbled():
    proc = scrapy("makewarc", "-h", db=None)
    assert proc.returncode == 0
    help_text = proc.stdout
    assert "--start-url" in help_text and "--base-url" in help_text
    lines = help_text.splitlines()
    underlined = [k for k, line in enumerate(lines) if re.fullmatch(r"\s*[=-]{4,}", line)]
    headings = {lines[k - 1].strip() for k in underlined}
    assert headings == {"Usage", "Options", "Global Options"}, help_text  # no help text


def test_the_default_crawl_logs_no_disabled_extension_warning(demo_archive, db):
    proc = scrapy(
        "crawl", "netease", "-a", "start_urls=http://money.163.com/demo/start.html", "-a",
        "limit=1", "-s", f"REPLAY_ARCHIVE={demo_archive}", *sum((["-s", s] for s in FAST), []),
        db=db,
    )  # fmt: skip
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    assert "Disabled newsspider" not in proc.stderr


def test_corpus_stats_of_an_unknown_site_is_refused(db):
    assert_one_line_error(scrapy("corpus", "stats", "--site", "nosuch", db=db),
                          "unknown site 'nosuch'", "netease")  # fmt: skip


def test_extract_blocks_prints_the_chosen_methods_own_table(db):
    xpath = scrapy("extract", "--method", "xpath", "--blocks", str(PAGE), db=db)
    assert xpath.returncode == 0, xpath.stderr
    assert "Length_Threshold" in xpath.stdout and "B_n" in xpath.stdout
    assert "N_cal" not in xpath.stdout
    blockstats = scrapy("extract", "--method", "blockstats", "--blocks", str(PAGE), db=db)
    assert "N_cal" in blockstats.stdout and "Length_Threshold" not in blockstats.stdout
    assert_one_line_error(
        scrapy("extract", "--method", "punctuation", "--blocks", str(PAGE), db=db),
        "--blocks shows the table of",
    )


def test_extract_of_a_folder_says_it_is_a_folder(db):
    assert_one_line_error(scrapy("extract", str(PAGE.parent), db=db), "is a folder")
