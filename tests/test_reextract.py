"""``scrapy reextract``: stored articles re-extracted from WARC archives, in place.

The corpus is built the way a crawl builds it: the demo's real saved pages (NetEase, Sina,
Tencent, Zaobao) are written into a WARC, each page is extracted and goes through
``CorpusPipeline`` (line table, upsert), then re-cleaned with the matured table. An "old
extractor" is simulated by overwriting the extracted columns; re-extraction must bring every
row back to what the crawl stored, under the same id, and must leave a row alone whenever
its page cannot be re-extracted.
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from newsspider.extraction import ExtractionError
from newsspider.items import ArticleItem
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.reextract import archive_pages, default_archives, reextract
from newsspider.replay import _open_writer, build_warc, write_response_record
from newsspider.sites import site_for_url
from newsspider.storage import Article, Base, create_schema, engine_for, reclean
from newsspider.workers import extract_page
from tests.localserver import project_settings

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "newsspider" / "demo" / "pages"
SITES = ("netease", "sina", "tencent", "zaobao")
COLUMNS = ("id", "url", "site", "title", "published", "content", "raw_text", "encoding",
           "content_md5", "published_source", "published_precision", "fetched_at")  # fmt: skip
T0 = datetime(2024, 3, 1, tzinfo=UTC)


def make_archive(path: Path, copies: int = 1) -> list[str]:
    """The demo pages in one WARC (``copies`` times, each copy under its own URLs)."""
    urls: list[str] = []
    with open(path, "wb") as fh:
        for c in range(copies):
            part = path.with_name(f"part{c}.warc.gz")
            suffix = "" if c == 0 else f"?copy={c}"
            result = build_warc(
                [DEMO / s for s in SITES],
                part,
                start_page_url=f"http://replay.local/start{c}.html",
                url_map=lambda u, suffix=suffix: u + suffix,
            )
            urls += result.urls
            fh.write(part.read_bytes())
            part.unlink()
    return urls


def crawl_into(url: str, archive: Path) -> int:
    """Store the archive's pages as a crawl with the default extractor would."""
    pipeline = CorpusPipeline.from_settings(
        project_settings(DATABASE_URL=url, NEWS_DB_BATCH=20), stats=Stats()
    )
    pipeline.open_spider(None)
    stored = 0
    for k, page in enumerate(archive_pages(archive)):
        site = site_for_url(page.url)
        if site is None or page.skip:
            continue
        try:
            headers = page.headers or None
            art = extract_page("blockstats", page.body, page.url, headers, site.tz, {})
        except ExtractionError:
            continue
        if not art.text or not art.title:
            continue
        pipeline.process_item(
            ArticleItem(
                url=page.url,
                site=site.key,
                source=site.source,
                html=page.body,
                headers=page.headers,
                fetched_at=T0 + timedelta(seconds=k),
                title=art.title,
                published=art.published,
                published_source=art.published_source,
                published_precision=art.published_precision,
                raw_text=art.text,
                encoding=art.encoding,
            )
        )
        stored += 1
    pipeline.close_spider(None)
    with Session(engine_for(url)) as s:
        reclean(s)
    return stored


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, n: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + n

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value

    def get_stats(self) -> dict[str, int]:
        return dict(self.values)


def rows(engine: Engine) -> dict[str, tuple]:
    with Session(engine) as s:
        cols = [Article.__table__.c[c] for c in COLUMNS]
        return {r.url: tuple(r) for r in s.execute(select(*cols).order_by(Article.id))}


def spoil(engine: Engine, where: Any = None) -> None:
    """What an older extractor stored: other title, body and time."""
    stmt = update(Article).values(
        title="旧标题", content="旧正文", raw_text="旧正文", content_md5="0" * 32, published=None
    )
    if where is not None:
        stmt = stmt.where(where)
    with Session(engine) as s, s.begin():
        s.execute(stmt)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'corpus.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    create_schema(engine_for(url))
    return url


@pytest.fixture
def corpus(tmp_path: Path, database_url: str) -> tuple[str, Path, dict[str, tuple]]:
    archive = tmp_path / "crawl.warc.gz"
    make_archive(archive)
    assert crawl_into(database_url, archive) >= 10
    return database_url, archive, rows(engine_for(database_url))


def run(url: str, archives: list[Path], **kw: Any):
    kw.setdefault("workers", 2)
    return reextract(engine_for(url), archives, method="blockstats", **kw)


def test_reextract_restores_every_row_in_place(corpus):
    url, archive, fresh = corpus
    engine = engine_for(url)
    spoil(engine)
    ticks: list[int] = []
    report = run(url, [archive], progress=ticks.append)
    assert rows(engine) == fresh  # same ids, same URLs, what the crawl stored
    assert report.rewritten == report.bodies_changed == report.titles_changed == len(fresh)
    assert report.pages == len(fresh) and report.unchanged == 0
    assert not report.skipped
    assert report.not_stored == report.records - len(fresh)  # list pages, pages dropped
    assert sum(ticks) == archive.stat().st_size // 1024
    # a second run changes nothing and touches nothing
    with Session(engine) as s:
        before = dict(s.execute(select(Article.url, Article.updated_at)).all())
    again = run(url, [archive], workers=0)
    assert again.rewritten == 0 and again.unchanged == len(fresh)
    with Session(engine) as s:
        assert dict(s.execute(select(Article.url, Article.updated_at)).all()) == before


def test_site_and_since_filters(corpus):
    url, archive, fresh = corpus
    engine = engine_for(url)
    spoil(engine)
    report = run(url, [archive], site="sina")
    now = rows(engine)
    for u, row in fresh.items():
        assert (now[u] == row) == (row[2] == "sina"), u
    assert report.rewritten == sum(r[2] == "sina" for r in fresh.values())
    later = run(url, [archive], since=datetime.now(UTC) + timedelta(days=1))
    assert later.pages == 0 and later.older == len(fresh) and later.rewritten == 0


def test_corrupt_and_truncated_archives_leave_rows_alone(corpus, tmp_path):
    url, archive, fresh = corpus
    engine = engine_for(url)
    spoil(engine)
    spoiled = rows(engine)
    garbage = tmp_path / "garbage.warc.gz"
    garbage.write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(4000))
    data = archive.read_bytes()
    torn = tmp_path / "torn.warc.gz"
    torn.write_bytes(data[: len(data) // 2])
    report = run(url, [garbage, torn])
    assert report.skipped["archive_corrupt"] >= 1
    now = rows(engine)
    restored = [u for u in fresh if now[u] == fresh[u]]
    untouched = [u for u in fresh if now[u] == spoiled[u]]
    assert restored and untouched  # the first half came back, the rest is as it was
    assert len(restored) + len(untouched) == len(fresh)
    assert report.rewritten == len(restored)
    # a gzip stream cut inside a record's member
    cut = tmp_path / "cut.warc.gz"
    head = b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 9999\r\n\r\nxx"
    cut.write_bytes(gzip.compress(head))
    assert run(url, [cut]).rewritten == 0


def test_non_html_and_failing_pages_are_counted_and_left_alone(corpus, tmp_path):
    url, _, fresh = corpus
    engine = engine_for(url)
    spoil(engine)
    spoiled = rows(engine)
    targets = list(fresh)[:4]
    odd = tmp_path / "odd.warc.gz"
    with open(odd, "wb") as fh:
        writer = _open_writer(fh, odd)
        png = b"\x89PNG\r\n\x1a\n" + bytes(300)
        write_response_record(writer, targets[0], png, [("Content-Type", "image/png")])
        write_response_record(writer, targets[1], b"<html><body></body></html>")
        write_response_record(writer, targets[2], b"<html><body><p>x</p></body></html>", status=503)
        gzipped = [("Content-Type", "text/html"), ("Content-Encoding", "gzip")]
        write_response_record(writer, targets[3], b"garbage", gzipped)
        write_response_record(writer, "https://elsewhere.example/", b"<html></html>")
    report = run(url, [odd])
    assert dict(report.skipped) == {"not_html": 1, "empty_body": 1, "status": 1, "undecodable": 1}
    assert report.not_stored == 1 and report.rewritten == 0
    assert rows(engine) == spoiled


def test_default_archives_by_site_and_date(tmp_path):
    for site, day in [("sina", "2024-03-02"), ("sina", "2024-03-01"), ("netease", "2024-03-01")]:
        (tmp_path / site).mkdir(exist_ok=True)
        (tmp_path / site / f"{day}.warc.gz").write_bytes(b"")
    names = [f"{p.parent.name}/{p.name}" for p in default_archives(tmp_path)]
    assert names == [
        "netease/2024-03-01.warc.gz",
        "sina/2024-03-01.warc.gz",
        "sina/2024-03-02.warc.gz",
    ]
    assert len(default_archives(tmp_path, "sina")) == 2


def test_cli_survives_sigkill_and_a_rerun_completes(tmp_path):
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    create_schema(engine_for(url))
    archive = tmp_path / "big.warc.gz"
    make_archive(archive, copies=40)
    stored = crawl_into(url, archive)
    engine = engine_for(url)
    fresh = rows(engine)
    assert len(fresh) == stored >= 400
    spoil(engine)
    spoiled = rows(engine)
    argv = [sys.executable, "-m", "scrapy", "reextract", str(archive), "-s", f"DATABASE_URL={url}",
            "-s", "REEXTRACT_WORKERS=1"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        with Session(engine) as s:
            done = s.scalar(select(func.count()).where(Article.title != "旧标题"))
        if done:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    now = rows(engine)
    assert set(now) == set(fresh)  # no row lost
    half = [u for u in now if now[u] not in (fresh[u], spoiled[u])]
    assert not half  # every row is the old one or the new one, whole
    restored = sum(now[u] == fresh[u] for u in now)
    assert 0 < restored < len(fresh)
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"{len(fresh) - restored} rewritten" in out.stdout
    assert rows(engine) == fresh
