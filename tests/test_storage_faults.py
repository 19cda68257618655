"""Storage faults: a locked SQLite database, a crash in the middle of a
write batch, PostgreSQL restarted during a crawl, and values the database refuses.

The promise being tested (``newsspider/pipelines/corpus.py``): one batch is one
transaction holding its line counts and its articles, retried whole while the failure is
transient, so every stored article is whole and the line table counts exactly the
pages stored: ``RC`` per site equals the pages counted, and each line's ``LC`` equals the
number of stored pages holding it (:func:`assert_consistent`; the pages here are all
distinct and the table never reaches a pruning).

The in-process tests drive ``CorpusPipeline`` directly (no crawler: it then writes
synchronously); the end-to-end ones crawl a slow local site in a child process
(``tests/localserver.py``) and lock, kill or restart under it.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import event, select, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from newsspider.extraction.linehash import line_md5, page_md5, split_lines
from newsspider.items import ArticleItem
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.storage import (
    Article,
    CrawlRun,
    LineCount,
    SiteLineStats,
    create_schema,
    engine_for,
)
from newsspider.storage.db import Backoff, is_transient
from newsspider.storage.schema import add_missing_columns
from tests.localserver import (
    REPO,
    FakeStats,
    Page,
    article_html,
    crawl_command,
    fresh_database,
    links_page,
    project_settings,
    run_crawl,
    serve,
    slow,
    wait_for_line,
)

SITE = "local"
BOILERPLATE = ["本网站所有内容版权归本网所有，未经授权不得转载。", "本网所刊登的新闻与专栏资料均为本网站版权所有，转载请注明出处。"]


def body(n: int) -> list[str]:
    """Three lines of page ``n``: one of its own, then the site's two boilerplate lines."""
    return [
        f"第{n}篇新闻的正文，记者在现场进行了详细的采访和报道，内容是第{n}号事件。",
        *BOILERPLATE,
    ]


def item(n: int, **extra: object) -> ArticleItem:
    fields = {
        "url": f"https://local.example/article/{n}.html",
        "site": SITE,
        "source": "本地新闻",
        "html": b"",
        "headers": {},
        "fetched_at": datetime.now(UTC),
        "title": f"第{n}篇新闻",
        "published": None,
        "raw_text": "\n".join(body(n)),
        "encoding": "utf-8",
    }
    return ArticleItem(**{**fields, **extra})


def assert_consistent(engine: Engine, site: str = SITE) -> int:
    """Every stored article whole; RC and every LC equal to what the stored pages hold.

    Returns the number of stored articles of ``site``.
    """
    with Session(engine) as s:
        articles = s.scalars(select(Article).where(Article.site == site)).all()
        stats = s.get(SiteLineStats, site)
        lc = {r.md5: r.LC for r in s.scalars(select(LineCount).where(LineCount.site == site))}
    expected: Counter[str] = Counter()
    for a in articles:
        raw = split_lines(a.raw_text)
        assert raw and a.title, a.url
        assert a.content_md5 == page_md5(a.raw_text), a.url
        assert set(split_lines(a.content)) <= set(raw), a.url
        expected.update({line_md5(x) for x in raw})
    assert (stats.RC if stats else 0) == len(articles)
    assert lc == dict(expected)
    return len(articles)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'corpus.db'}"
    return fresh_database(request.getfixturevalue("postgresql_url"))


def pipeline(url: str, *, batch: int = 4, **settings: object) -> CorpusPipeline:
    """A pipeline on ``url`` built from the project's settings and ``settings`` overrides."""
    built = project_settings(DATABASE_URL=url, NEWS_DB_BATCH=batch, **settings)
    p = CorpusPipeline.from_settings(built, stats=FakeStats())
    p.open_spider(None)
    return p


class Locker:
    """Another writer: a plain sqlite3 connection holding ``BEGIN IMMEDIATE`` (the write
    lock) on the database file from ``lock()`` until ``release()``."""

    def __init__(self, path: Path) -> None:
        # autocommit mode (BEGIN by hand); released from another thread in some tests
        self.conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)

    def lock(self) -> Locker:
        self.conn.execute("BEGIN IMMEDIATE")
        return self

    def release(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    def release_after(self, seconds: float) -> threading.Thread:
        def run() -> None:
            time.sleep(seconds)
            self.release()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self.release()
        self.conn.close()


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


# -- (a) SQLite locked by another writer --------------------------------------------------------


def test_a_locked_database_makes_the_batch_wait_not_fail(tmp_path: Path, caplog) -> None:
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    p = pipeline(url, NEWS_DB_BUSY_TIMEOUT=0.1, NEWS_DB_RETRY_SECONDS=30)
    locker = Locker(sqlite_path(url)).lock()
    releaser = locker.release_after(1.5)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="newsspider.pipelines.corpus"):
        for n in range(4):  # the 4th fills the batch: written now, waiting for the lock
            p.process_item(item(n))
    waited = time.monotonic() - started
    releaser.join()
    locker.close()
    p.close_spider(None)
    assert waited >= 1.4
    assert p.stats["newsspider/db_retries"] >= 1
    assert p.stats["newsspider/articles_new"] == 4
    assert any(
        re.search(r"database unavailable while storing 4 articles \(OperationalError: "
                  r"database is locked\): retry 1 in", r.getMessage())
        for r in caplog.records
    ), caplog.text  # fmt: skip
    assert assert_consistent(engine_for(url)) == 4


def test_a_failure_mid_transaction_is_retried_whole_and_counted_once(database_url: str) -> None:
    """The batch fails after its line counts were written: they are rolled back with it,
    so the retry does not count the pages twice."""
    p = pipeline(database_url, NEWS_DB_RETRY_SECONDS=30)
    engine = p.engine
    failures: list[str] = []

    def fail_once(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO ARTICLES") and not failures:
            failures.append(statement)
            if engine.dialect.name == "sqlite":
                raise sqlite3.OperationalError("database is locked")
            import psycopg

            raise psycopg.OperationalError("server closed the connection unexpectedly")

    event.listen(engine, "before_cursor_execute", fail_once)
    try:
        for n in range(4):
            p.process_item(item(n))
    finally:
        event.remove(engine, "before_cursor_execute", fail_once)
    p.close_spider(None)
    assert failures and p.stats["newsspider/db_retries"] == 1
    assert p.stats["newsspider/articles_new"] == 4
    assert p.stats.get("item_dropped_count", 0) == 0
    assert assert_consistent(engine) == 4


def test_retrying_a_batch_that_was_in_fact_committed_counts_nothing_twice(
    database_url: str,
) -> None:
    """A COMMIT can succeed on the server while the client loses the connection: the retry
    then meets its own pages, stored with their content MD5, and counts them as
    duplicates (not again)."""
    p = pipeline(database_url)
    items = [item(n) for n in range(3)]
    first = p._write_batch(items)
    again = p._write_batch(items)
    assert (first.new, first.updated) == (3, 0)
    assert (again.new, again.updated) == (0, 3)
    assert again.duplicates == {SITE: 3}
    assert assert_consistent(engine_for(database_url)) == 3


def test_a_value_the_database_refuses_costs_only_its_own_article(database_url: str, caplog):
    p = pipeline(database_url, batch=4)
    bad = item(2, source=None)  # a NOT NULL column
    with caplog.at_level(logging.WARNING, logger="newsspider.pipelines.corpus"):
        for it in (item(0), item(1), bad, item(3)):
            p.process_item(it)
    p.close_spider(None)
    assert p.stats["newsspider/articles_new"] == 3
    assert p.stats["item_dropped_reasons_count/StoreError"] == 1
    assert "storing a batch of 4 articles failed" in caplog.text
    assert re.search(r"Dropped \(StoreError\): 1 article\(s\) not stored .*article/2\.html",
                     caplog.text)  # fmt: skip
    assert assert_consistent(engine_for(database_url)) == 3


def test_a_database_locked_past_the_retry_time_drops_the_batch_loudly(tmp_path: Path, caplog):
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    p = pipeline(url, batch=2, NEWS_DB_BUSY_TIMEOUT=0.1, NEWS_DB_RETRY_SECONDS=0.5)
    locker = Locker(sqlite_path(url)).lock()
    with caplog.at_level(logging.WARNING, logger="newsspider.pipelines.corpus"):
        p.process_item(item(0))
        p.process_item(item(1))  # gives up after 0.5 s
        locker.close()
        p.process_item(item(2))
        p.process_item(item(3))  # the database is back: stored
    p.close_spider(None)
    assert p.stats["item_dropped_reasons_count/DatabaseUnavailable"] == 2
    assert re.search(
        r"Dropped \(DatabaseUnavailable\): 2 article\(s\) not stored \(OperationalError: "
        r"database is locked\): https://local.example/article/0.html, .*/1.html",
        caplog.text,
    )
    assert p.stats["newsspider/articles_new"] == 2
    assert assert_consistent(engine_for(url)) == 2
    with Session(engine_for(url)) as s:
        assert s.scalars(select(CrawlRun.status)).one() == "failed"


def _slow_site(pages: int, delay: float) -> dict:
    routes: dict = {
        f"/article/{n}.html": slow(Page(article_html(n, [*body(n)]).encode()), delay)
        for n in range(pages)
    }
    routes["/"] = Page(links_page(*routes))
    return routes


def test_a_crawl_waits_for_a_locked_database_and_loses_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    log = tmp_path / "crawl.log"
    with serve(_slow_site(12, 0.1)) as server:
        cmd = crawl_command(server, tmp_path, url, "NEWS_DB_BATCH=2", "NEWS_DB_BUSY_TIMEOUT=0.1",
                            "CONCURRENT_REQUESTS_PER_DOMAIN=1", "DOWNLOAD_DELAY=0.15")  # fmt: skip
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            try:
                wait_for_line(log, r"stored 2 articles", proc)
                locker = Locker(sqlite_path(url)).lock()
                time.sleep(2.0)
                locker.close()
                assert proc.wait(timeout=60) == 0
            finally:
                proc.kill()
    text_ = log.read_text()
    assert "Traceback" not in text_
    assert re.search(r"database unavailable while storing 2 articles .*database is locked", text_)
    engine = engine_for(url)
    assert assert_consistent(engine) == 12
    with Session(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "finished" and run.db_retries >= 1 and run.items_new == 12


def test_a_crawl_closes_when_the_database_stays_locked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    log = tmp_path / "crawl.log"
    with serve(_slow_site(12, 0.1)) as server:
        cmd = crawl_command(server, tmp_path, url, "NEWS_DB_BATCH=2", "NEWS_DB_BUSY_TIMEOUT=0.1",
                            "NEWS_DB_RETRY_SECONDS=1", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
                            "DOWNLOAD_DELAY=0.15")  # fmt: skip
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            try:
                wait_for_line(log, r"stored 2 articles", proc)
                locker = Locker(sqlite_path(url)).lock()
                assert proc.wait(timeout=60) == 0
                locker.close()
            finally:
                proc.kill()
    text_ = log.read_text()
    assert re.search(r"the database was unavailable for 1 s .*closing the crawl", text_)
    assert "Closing spider (database_unavailable)" in text_
    assert re.search(r"Dropped \(DatabaseUnavailable\): 2 article\(s\) not stored", text_)
    assert assert_consistent(engine_for(url)) >= 2  # what was stored is whole


# -- (b) SIGKILL in the middle of a write batch ------------------------------------------------


def _crawled_state(engine: Engine) -> tuple[dict[str, str], dict[str, int], int]:
    with Session(engine) as s:
        raw = {a.url.rsplit("/", 1)[-1]: a.raw_text for a in s.scalars(select(Article))}
        lc = {r.md5: r.LC for r in s.scalars(select(LineCount))}
        rc = s.get(SiteLineStats, SITE).RC
    return raw, lc, rc


def test_sigkill_mid_batch_leaves_articles_whole_and_the_table_consistent(
    tmp_path: Path, database_url: str
) -> None:
    log = tmp_path / "crawl.log"
    with serve(_slow_site(9, 0)) as server:
        cmd = crawl_command(server, tmp_path, database_url, "NEWS_DB_BATCH=3",
                            "TEST_COMMIT_DELAY=1.5", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
                            extensions=["tests.localserver.SlowArticleCommits"])  # fmt: skip
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            try:
                # batch 1 committed; batch 2 fully written (line counts and articles) but
                # not committed: kill now
                wait_for_line(log, r"TEST-HOOK: committing article batch 2", proc)
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
            finally:
                proc.kill()
        assert "stored 3 articles" in log.read_text()
        engine = engine_for(database_url)
        assert assert_consistent(engine) == 3
        survived, _, _ = _crawled_state(engine)

        # the next crawl completes the corpus, as one clean crawl would have made it: every
        # page once, RC 9, each LC the pages holding the line (assert_consistent)
        run_crawl(server, tmp_path, database_url, "NEWS_DB_BATCH=3")
    assert assert_consistent(engine) == 9
    raw, lc, rc = _crawled_state(engine)
    assert sorted(raw) == sorted(f"{n}.html" for n in range(9)) and rc == 9
    assert all(raw[name] == text_ for name, text_ in survived.items())
    assert lc[line_md5(BOILERPLATE[0])] == lc[line_md5(BOILERPLATE[1])] == 9


# -- (c) PostgreSQL restarted during a crawl ---------------------------------------------------


def _pg_ctl(server, *args: str) -> None:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*prefix, str(server.bindir / "pg_ctl"), "-D", str(server.datadir), *args],
                   check=True, capture_output=True, timeout=60)  # fmt: skip


def test_postgres_restarted_mid_crawl_loses_nothing(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if os.environ.get("NEWSSPIDER_TEST_POSTGRES_URL"):
        pytest.skip("restarts the test's own server only")
    server = request.getfixturevalue("postgresql_server")
    url = fresh_database(server.url())
    base = server.datadir.parent
    options = f"-h {server.host} -p {server.port} -k {base} -c fsync=off -c full_page_writes=off"
    log = tmp_path / "crawl.log"
    with serve(_slow_site(16, 0.1)) as site:
        cmd = crawl_command(site, tmp_path, url, "NEWS_DB_BATCH=2", "NEWS_DB_RETRY_SECONDS=60",
                            "CONCURRENT_REQUESTS_PER_DOMAIN=1", "DOWNLOAD_DELAY=0.15")  # fmt: skip
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
            try:
                wait_for_line(log, r"stored 2 articles", proc)
                _pg_ctl(server, "-m", "fast", "-w", "stop")
                try:
                    time.sleep(2.0)  # the crawl goes on fetching; its writes fail meanwhile
                finally:
                    _pg_ctl(server, "-l", str(base / "server.log"), "-o", options, "-w", "start")
                assert proc.wait(timeout=90) == 0
            finally:
                proc.kill()
    text_ = log.read_text()
    assert re.search(r"database unavailable while storing 2 articles \(OperationalError", text_)
    assert "Traceback" not in text_
    engine = engine_for(url)
    assert assert_consistent(engine) == 16
    with Session(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert run.status == "finished" and run.db_retries >= 1 and run.items_new == 16


# -- pieces ---------------------------------------------------------------------------------------


def test_an_older_schema_gets_the_new_columns(database_url: str) -> None:
    engine = engine_for(database_url)
    with engine.begin() as conn:  # crawl_runs as the first version made it
        conn.execute(text(
            "CREATE TABLE crawl_runs (id INTEGER PRIMARY KEY, site VARCHAR(64) NOT NULL, "
            "started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP, status VARCHAR(32) NOT NULL, "
            "pages_fetched INTEGER NOT NULL, items_new INTEGER NOT NULL, "
            "items_updated INTEGER NOT NULL, items_dropped INTEGER NOT NULL, "
            "drop_reasons TEXT NOT NULL, errors INTEGER NOT NULL, report TEXT)"
        ))  # fmt: skip
        conn.execute(text(
            "INSERT INTO crawl_runs VALUES (1, 'netease', '2024-01-01 00:00:00', NULL, "
            "'finished', 5, 4, 0, 1, '{}', 0, NULL)"
        ))  # fmt: skip
    create_schema(engine)
    assert add_missing_columns(engine) == []  # idempotent
    with Session(engine) as s:
        run = s.get(CrawlRun, 1)
        assert (run.items_new, run.fetch_failures, run.retries, run.db_retries) == (4, 0, 0, 0)
        assert run.fetch_failure_reasons == "{}"


def test_transient_errors_are_told_from_permanent_ones() -> None:
    def wrapped(orig: Exception) -> OperationalError:
        return OperationalError("INSERT ...", {}, orig)

    assert is_transient(wrapped(sqlite3.OperationalError("database is locked")))
    assert is_transient(wrapped(sqlite3.OperationalError("database table is locked")))
    assert not is_transient(wrapped(sqlite3.OperationalError("no such table: articles")))
    assert not is_transient(wrapped(sqlite3.OperationalError("database or disk is full")))
    assert not is_transient(ValueError("article row lacks ['source']"))


def test_backoff_doubles_and_stops_at_the_deadline() -> None:
    now = [0.0]
    backoff = Backoff(10, first=0.5, longest=4, clock=lambda: now[0])
    waits = []
    while (wait := backoff.next_delay()) is not None:
        waits.append(wait)
        now[0] += wait
    assert waits == [0.5, 1, 2, 4, 2.5]
    assert Backoff(0).next_delay() is None


def test_one_engine_per_url_and_timeout_with_pre_ping_for_servers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    assert engine_for(url) is engine_for(url, busy_timeout=30) is engine_for(url, busy_timeout=30.0)
    assert engine_for(url, busy_timeout=1) is not engine_for(url)
    pg = engine_for("postgresql+psycopg://u@127.0.0.1:1/x")  # not connected: no I/O here
    assert pg.pool._pre_ping
