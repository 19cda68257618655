"""``scrapy backfill``: a site's earlier years from a CDX index and WARC records, through the
commands, against real servers on loopback (pywb as the CDX server, a range-capable WARC
server: tests/cdxserver.py) over a collection of real saved pages of three sites spread
over six years, with list and non-article pages, a 404, redirects, repeated captures and
one record whose index offset is wrong.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from newsspider.backfill.backoff import retry_after_seconds
from newsspider.backfill.cdx import Archive, Capture, archive_from_options, choose, parse_cdx
from newsspider.sites import SITES, Site
from tests.cdxserver import CdxCollection, cdx_collection, pywb_bin
from tests.redisserver import redis_server, redis_url  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parents[1]
FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "EXTRACTION_WORKERS=0")


def scrapy(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def collection(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> CdxCollection:
    if pywb_bin() is None:
        pytest.skip("pywb is not installed (tests/cdxserver.py says how)")
    with cdx_collection(datasets, tmp_path_factory.mktemp("cdx")) as coll:
        yield coll


def stored(db: Path, site: str) -> list[tuple[str, str | None, str | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT url, archive, captured_at FROM articles WHERE site = ?", (site,)
        ).fetchall()


def backfill(coll: CdxCollection, db: Path, site: str, since: str, until: str, *extra: str):
    return scrapy(
        "backfill", site, "--since", since, "--until", until,
        "--cdx", coll.cdx_url, "--data", coll.data_url,
        "-s", f"DATABASE_URL=sqlite:///{db}", *FAST, *extra,
    )  # fmt: skip


def test_backfill_stores_exactly_the_in_range_articles_once(
    collection: CdxCollection, tmp_path: Path
) -> None:
    db = tmp_path / "corpus.db"
    since, until = date(2016, 1, 1), date(2019, 12, 31)
    collection.data.reset()
    out = backfill(collection, db, "netease", "2016-01-01", "2019-12-31")
    assert out.returncode == 0, out.stderr[-3000:]
    rows = stored(db, "netease")
    urls = [u for u, _, _ in rows]
    assert len(urls) == len(set(urls))
    assert set(urls) == collection.expected("netease", since, until)
    assert not set(urls) & collection.unwanted("netease", since, until)
    assert all(archive == collection.cdx_url and captured for _, archive, captured in rows)
    for capture in collection.bad_offsets("netease", since, until):
        assert collection.fetches(capture) == 1  # fetched, counted, skipped
    assert "newsspider/backfill/bad_record" in out.stderr or "other_url" in out.stderr
    assert "backfill: 6 articles stored (6 new, 0 updated)" in out.stderr

    # A second run of a finished backfill fetches no record.
    collection.data.reset()
    again = backfill(collection, db, "netease", "2016-01-01", "2019-12-31")
    assert again.returncode == 0, again.stderr[-3000:]
    records = {p: n for p, n in collection.data.requests.items() if p != "robots.txt"}
    assert not records, records
    assert sorted(u for u, _, _ in stored(db, "netease")) == sorted(urls)


def test_latest_capture_in_range_and_other_sites(collection: CdxCollection, tmp_path: Path) -> None:
    db = tmp_path / "corpus.db"
    out = backfill(collection, db, "sina", "2019-01-01", "2019-12-31")
    assert out.returncode == 0, out.stderr[-3000:]
    urls = [u for u, _, _ in stored(db, "sina")]
    assert sorted(urls) == sorted(collection.expected("sina", date(2019, 1, 1), date(2019, 12, 31)))


def test_429_retry_after_is_honoured(collection: CdxCollection, tmp_path: Path) -> None:
    db = tmp_path / "corpus.db"
    since, until = date(2016, 1, 1), date(2016, 12, 31)
    wanted = collection.expected("netease", since, until)
    files = {c.filename for c in collection.in_range("netease", since, until)}
    collection.data.reset()
    for name in files:
        collection.data.throttle(name, 1, retry_after=1)
    started = time.monotonic()
    out = backfill(collection, db, "netease", "2016-01-01", "2016-12-31")
    assert out.returncode == 0, out.stderr[-3000:]
    assert time.monotonic() - started >= 1.0
    assert "Retry-After" in out.stderr
    assert {u for u, _, _ in stored(db, "netease")} == wanted


def test_sigkill_mid_run_then_rerun_completes(collection: CdxCollection, tmp_path: Path) -> None:
    db = tmp_path / "corpus.db"
    since, until = date(2015, 1, 1), date(2021, 12, 31)
    args = [
        sys.executable, "-m", "scrapy.cmdline", "backfill", "netease",
        "--since", "2015-01-01", "--until", "2021-12-31",
        "--cdx", collection.cdx_url, "--data", collection.data_url,
        "-s", f"DATABASE_URL=sqlite:///{db}", "-s", "DOWNLOAD_DELAY=0.3",
        "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "EXTRACTION_WORKERS=0",
        "-s", "NEWS_DB_BATCH=1",
    ]  # fmt: skip
    proc = subprocess.Popen(args, cwd=REPO, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if db.exists() and _count(db) >= 3:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = _count(db)
    out = backfill(collection, db, "netease", "2015-01-01", "2021-12-31")
    assert out.returncode == 0, out.stderr[-3000:]
    urls = [u for u, _, _ in stored(db, "netease")]
    assert len(urls) == len(set(urls))
    assert set(urls) == collection.expected("netease", since, until)
    assert first <= len(urls)


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT count(*) FROM articles").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (
            ["backfill", "nosuchsite", "--since", "2020-01-01", "--archive", "wayback"],
            "unknown site",
        ),
        (["backfill", "netease", "--archive", "wayback"], "--since DAY is required"),
        (["backfill", "netease", "--since", "2020-13-01", "--archive", "wayback"], "YYYY-MM-DD"),
        (["backfill", "netease", "--since", "2020-01-01"], "--archive"),
        (["backfill", "netease", "--since", "2020-01-01", "--archive", "cc:2020"], "cc:CC-MAIN"),
        (["backfill", "netease", "--since", "2020-01-01", "--cdx", "http://x/cdx"], "--data"),
        (
            [
                "backfill",
                "netease",
                "--since",
                "2020-02-01",
                "--until",
                "2020-01-01",
                "--archive",
                "wayback",
            ],
            "before --since",
        ),
    ],
)
def test_bad_input_is_one_line(argv: list[str], words: str, tmp_path: Path) -> None:
    out = scrapy(*argv, "-s", f"DATABASE_URL=sqlite:///{tmp_path / 'c.db'}")
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr


# -- pure parts ------------------------------------------------------------------------


def test_archive_options() -> None:
    (cc,) = archive_from_options("cc:CC-MAIN-2024-10", None, None)
    assert cc.cdx == "https://index.commoncrawl.org/CC-MAIN-2024-10-index"
    assert cc.data == "https://data.commoncrawl.org/"
    assert len(archive_from_options("cc:CC-MAIN-2024-10,CC-MAIN-2023-50", None, None)) == 2
    (wb,) = archive_from_options("wayback", None, None)
    assert wb.wayback
    capture = Capture("https://news.163.com/a.html", "20200101120000")
    assert (
        wb.record_url(capture)
        == "https://web.archive.org/web/20200101120000id_/https://news.163.com/a.html"
    )
    own = Archive("x", "http://h/cdx", "http://d/")
    got = Capture("u", "20200101000000", length=100, offset=1000, filename="a/b.warc.gz")
    assert own.record_url(got) == "http://d/a/b.warc.gz"
    assert own.record_headers(got) == {"Range": "bytes=1000-1099"}


def test_parse_both_dialects_and_choose() -> None:
    cc = (
        b'{"url": "http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html", "timestamp": '
        b'"20150703120000", "status": "200", "mime": "text/html", "length": "10", '
        b'"offset": "5", "filename": "f.warc.gz"}\n'
        b'{"url": "http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html", "timestamp": '
        b'"20160101120000", "status": "200", "mime": "text/html", "length": "10", '
        b'"offset": "50", "filename": "g.warc.gz"}\n'
        b'{"url": "https://news.163.com/domestic/", "timestamp": "20160101120000", '
        b'"status": "200", "mime": "text/html"}\n'
    )
    captures = list(parse_cdx(cc))
    assert len(captures) == 3 and captures[0].offset == 5
    chosen = choose(SITES["netease"], captures, date(2015, 1, 1), date(2016, 12, 31))
    assert [(c.timestamp, c.filename) for c in chosen] == [("20160101120000", "g.warc.gz")]
    assert choose(SITES["netease"], captures, date(2015, 1, 1), date(2015, 12, 31))[0].offset == 5
    assert (
        choose(
            SITES["netease"],
            captures,
            date(2015, 1, 1),
            None,
            skip=["http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html"],
        )
        == []
    )
    wayback = (
        b'[["urlkey","timestamp","original","mimetype","statuscode","digest","length"],'
        b'["com,163)/x","20200101000000","https://www.163.com/news/article/KC12OUHK000189FH.html",'
        b'"text/html","200","D","1"]]'
    )
    (w,) = parse_cdx(wayback)
    assert w.url.endswith("KC12OUHK000189FH.html") and w.status == "200"
    assert list(parse_cdx(b"")) == []


def test_retry_after_values() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    from datetime import UTC, datetime

    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after_seconds("Thu, 01 Jan 2026 00:00:30 GMT", now) == 30.0


def test_two_cluster_workers_share_one_backfill(
    collection: CdxCollection, redis_url: str, postgresql_server, tmp_path: Path  # noqa: F811
) -> None:
    """Two workers with one REDIS_URL and one PostgreSQL: the CDX pages and records go on the
    shared frontier, every record is fetched once, and the rows are one process's."""
    from tests.test_cluster import new_database, query

    db = new_database(postgresql_server, "backfill_cluster")
    since, until = date(2015, 1, 1), date(2021, 12, 31)
    collection.data.reset()
    args = [
        sys.executable, "-m", "scrapy.cmdline", "backfill", "netease",
        "--since", "2015-01-01", "--until", "2021-12-31",
        "--cdx", collection.cdx_url, "--data", collection.data_url,
        "-s", f"DATABASE_URL={db}", "-s", f"REDIS_URL={redis_url}",
        "-s", "CLUSTER_IDLE_CLOSE=3", "-s", "DOWNLOAD_DELAY=0.05",
        "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "EXTRACTION_WORKERS=0",
    ]  # fmt: skip
    workers = [
        subprocess.Popen(args, cwd=REPO, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    logs = [w.communicate(timeout=300)[1] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [log[-2000:] for log in logs]
    rows = [u for (u,) in query(db, "SELECT url FROM articles")]
    assert len(rows) == len(set(rows))
    assert set(rows) == collection.expected("netease", since, until)
    chosen = {
        (c.filename, c.offset)
        for c in collection.in_range("netease", since, until)
        if c.url in set(rows)
    }
    for capture in collection.in_range("netease", since, until):
        if (capture.filename, capture.offset) in chosen:
            assert collection.fetches(capture) <= 1, capture
    records = sum(n for p, n in collection.data.requests.items() if p != "robots.txt")
    assert records <= len(collection.expected("netease", since, until)) + len(
        collection.bad_offsets("netease", since, until)
    )
    # both workers took part: each logged the crawl's summary
    assert all("articles stored" in log for log in logs), [log[-1500:] for log in logs]


def test_a_users_row_backfills_like_a_built_in_one(
    collection: CdxCollection, tmp_path: Path
) -> None:
    """A row of the user's sites file (as ``scrapy addsite --write`` leaves one) is walked
    the same way: its domains queried, its patterns kept."""
    from newsspider.sites.write import add_site

    row = SITES["netease"]
    sites_file = tmp_path / "sites.toml"
    add_site(sites_file, Site(
        key="mine", source="我的网易", allowed_domains=row.allowed_domains,
        start_urls=row.start_urls, article_patterns=row.article_patterns,
        list_patterns=row.list_patterns, checked=False,
    ))  # fmt: skip
    db = tmp_path / "corpus.db"
    out = backfill(
        collection, db, "mine", "2016-01-01", "2019-12-31", "-s", f"SITES_FILE={sites_file}"
    )
    assert out.returncode == 0, out.stderr[-3000:]
    urls = {u for u, _, _ in stored(db, "mine")}
    assert urls == collection.expected("netease", date(2016, 1, 1), date(2019, 12, 31))
