"""Nightly keeps every fetched page in WARC (``newsspider/nightly/warc.py``), and
``scrapy reextract`` reads those archives back, compressed bodies included."""

from __future__ import annotations

import gzip
from datetime import UTC, date, datetime
from pathlib import Path

from scrapy import Request, Spider, signals
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from newsspider.nightly.warc import (
    NightlyWarcRecorder,
    archive_path,
    enable_recording,
    prune_archives,
)
from newsspider.reextract import archive_pages, default_archives
from newsspider.replay import WarcIndex

DEMO = Path(__file__).resolve().parents[1] / "newsspider" / "demo" / "pages" / "sina" / "html"


class SinaSpider(Spider):
    name = "sina"


def recorder(root: Path) -> tuple[NightlyWarcRecorder, object]:
    crawler = get_crawler(SinaSpider, {"NIGHTLY_WARC_DIR": str(root)})
    return NightlyWarcRecorder.from_crawler(crawler), crawler


def fetch(crawler, url: str, body: bytes, *, compress: bool = False) -> None:
    headers = {"Content-Type": "text/html; charset=utf-8"}
    if compress:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    request = Request(url)
    response = HtmlResponse(url, body=body, headers=headers, request=request)
    crawler.signals.send_catch_log(signals.response_downloaded, response=response, request=request)


def test_nightly_records_each_page_and_appends_the_same_day(tmp_path):
    pages = sorted(DEMO.glob("*.html"))
    ext, crawler = recorder(tmp_path)
    path = archive_path(tmp_path, "sina", datetime.now(UTC).date())
    assert not path.exists()  # nothing fetched, no file
    for k, page in enumerate(pages):
        fetch(crawler, f"https://news.sina.com.cn/c/{k}.shtml", page.read_bytes(), compress=k == 0)
    crawler.signals.send_catch_log(signals.spider_closed, spider=None, reason="finished")
    assert len(WarcIndex(path)) == len(pages)
    # a run killed mid-write leaves a torn tail; the next run that day cuts it and appends
    data = path.read_bytes()
    path.write_bytes(data + data[: len(data) // 3])
    ext2, crawler2 = recorder(tmp_path)
    fetch(crawler2, "https://news.sina.com.cn/c/later.shtml", pages[0].read_bytes())
    crawler2.signals.send_catch_log(signals.spider_closed, spider=None, reason="finished")
    read = list(archive_pages(path))
    assert len(read) == len(pages) + 1 and not any(p.skip for p in read)
    assert read[0].body == pages[0].read_bytes()  # the gzip Content-Encoding undone
    assert read[0].headers == {"Content-Type": "text/html; charset=utf-8"}
    assert default_archives(tmp_path) == [path]


def test_retention_deletes_only_old_day_archives(tmp_path):
    for site in ("sina", "netease"):
        (tmp_path / site).mkdir()
        for day in ("2024-03-01", "2024-03-09", "2024-03-10"):
            (tmp_path / site / f"{day}.warc.gz").write_bytes(b"x")
    (tmp_path / "sina" / "notes.txt").write_text("kept")
    today = date(2024, 3, 10)
    assert prune_archives(tmp_path, 0, today=today) == []
    deleted = prune_archives(tmp_path, 1, today=today)
    assert sorted(p.name for p in deleted) == ["2024-03-01.warc.gz"] * 2
    assert len(list(tmp_path.glob("*/*.warc.gz"))) == 4
    assert (tmp_path / "sina" / "notes.txt").exists()


def test_enable_recording_turns_the_extension_on_unless_off(tmp_path):
    settings = Settings({"NIGHTLY_WARC_KEEP_DAYS": 0, "EXTENSIONS": {}})
    enable_recording(settings, None, today=date(2024, 3, 10))
    assert NightlyWarcRecorder not in settings.getdict("EXTENSIONS")
    enable_recording(settings, tmp_path, today=date(2024, 3, 10))
    assert NightlyWarcRecorder in settings.getdict("EXTENSIONS")
    assert settings.get("NIGHTLY_WARC_DIR") == str(tmp_path)
