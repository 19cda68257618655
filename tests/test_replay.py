"""WARC replay and recording (newsspider/replay.py) and ``scrapy makewarc``.

Crawls run ``python -m scrapy.cmdline runspider`` in a child process from the
repository root, so project settings load and the reactor is fresh. Replay
crawls also disable the http/https download handlers: a request that slipped
past the replay middleware would fail instead of reaching a network.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from newsspider.replay import (
    WarcIndex,
    WarcReplayMiddleware,
    build_warc,
    replay_key,
    write_response_record,
)

REPO = Path(__file__).resolve().parents[1]
REPLAY_MW = '{"newsspider.replay.WarcReplayMiddleware": 950}'
RECORDER_EXT = '{"newsspider.replay.WarcRecorderExtension": 500}'
NO_NETWORK = '{"http": null, "https": null}'

GBK_HTML = (
    '<html><head><meta charset="gbk"><title>国内新闻</title></head>'
    "<body><p>中华人民共和国国务院今天发布通知。</p></body></html>"
).encode("gbk")
UTF8_HTML = (
    '<html><head><meta charset="utf-8"><title>财经</title></head>'
    "<body><p>上证指数收盘上涨百分之一。</p></body></html>"
).encode()
NOURL_HTML = b"<html><body><p>no declared charset, no url</p></body></html>"

# A spider that walks the list pages, fetches every linked page and extra URLs,
# and reports what it got; it saves the crawl stats for the test to read.
PROBE_SPIDER = """
import hashlib
import json

import scrapy


class ReplayProbe(scrapy.Spider):
    name = "replay_probe"

    def __init__(self, start="", extra="", stats_out="", **kwargs):
        super().__init__(**kwargs)
        self.start_url = start
        self.extra = [u for u in extra.split(",") if u]
        self.stats_out = stats_out

    async def start(self):
        yield scrapy.Request(self.start_url, callback=self.parse_list)
        for url in self.extra:
            yield scrapy.Request(url, callback=self.parse_page, meta=self.meta())

    @staticmethod
    def meta():
        return {"handle_httpstatus_list": [404]}

    def parse_list(self, response):
        yield self.item(response, "list")
        for href in response.css("ul a::attr(href)").getall():
            yield response.follow(href, callback=self.parse_page, meta=self.meta())
        for href in response.css("a[rel=next]::attr(href)").getall():
            yield response.follow(href, callback=self.parse_list)

    def parse_page(self, response):
        yield self.item(response, "page")

    def item(self, response, kind):
        return {
            "kind": kind,
            "url": response.url,
            "status": response.status,
            "len": len(response.body),
            "md5": hashlib.md5(response.body).hexdigest(),
            "content_type": response.headers.get("Content-Type", b"").decode("latin-1"),
            "flags": response.flags,
        }

    def closed(self, reason):
        with open(self.stats_out, "w", encoding="utf-8") as f:
            json.dump(self.crawler.stats.get_stats(), f, default=str)
"""


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def write_dataset(root: Path, name: str, cases: list[tuple[str, str | None, bytes]]) -> Path:
    """A dataset folder in the ../shared/datasets layout: cases.jsonl + html/."""
    d = root / name
    (d / "html").mkdir(parents=True)
    with open(d / "cases.jsonl", "w", encoding="utf-8") as f:
        for case_id, url, body in cases:
            (d / "html" / f"{case_id}.html").write_bytes(body)
            row = {"id": case_id, "url": url, "html_file": f"html/{case_id}.html", "lang": "zh"}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return d


@pytest.fixture(scope="module")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(
        tmp_path_factory.mktemp("datasets"),
        "tiny",
        [
            ("gbk-1", "http://news.example.test/a/1.html", GBK_HTML),
            ("nourl-1", None, NOURL_HTML),
            ("query-1", "http://news.example.test/view?id=3&b=1", UTF8_HTML + b"<!-- q -->"),
            ("utf8-1", "http://news.example.test/a/2.html", UTF8_HTML),
        ],
    )


def read_records(path: Path) -> Iterator[tuple[str, str, StatusAndHeaders | None, bytes]]:
    """(type, target URI, HTTP headers, payload as stored) for every record."""
    with open(path, "rb") as fh:
        for record in ArchiveIterator(fh):
            uri = record.rec_headers.get_header("WARC-Target-URI") or ""
            yield record.rec_type, uri, record.http_headers, record.raw_stream.read()


def run_probe(
    tmp_path: Path, start: str, *settings: str, extra: tuple[str, ...] = ()
) -> tuple[list[dict], dict, str]:
    """Crawl with the probe spider in a child process: (items, stats, log)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    spider = tmp_path / "probe_spider.py"
    spider.write_text(PROBE_SPIDER, encoding="utf-8")
    out, stats = tmp_path / "out.jsonl", tmp_path / "stats.json"
    cmd = [sys.executable, "-m", "scrapy.cmdline", "runspider", str(spider), "-O", str(out)]
    cmd += ["-a", f"start={start}", "-a", f"extra={','.join(extra)}", "-a", f"stats_out={stats}"]
    # The project's item pipelines (a database) have no part in these crawls.
    cmd += ["-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO", "-s", "ITEM_PIPELINES={}"]
    for s in settings:
        cmd += ["-s", s]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines() if line]
    return items, json.loads(stats.read_text("utf-8")), proc.stderr


def replay_settings(archive: Path) -> tuple[str, ...]:
    return (
        f"REPLAY_ARCHIVE={archive}",
        f"DOWNLOADER_MIDDLEWARES={REPLAY_MW}",
        f"DOWNLOAD_HANDLERS={NO_NETWORK}",
        "ROBOTSTXT_OBEY=True",
    )


# --------------------------------------------------------------------------
# build_warc


def test_build_warc_keeps_bytes_and_omits_charset(tiny_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "tiny.warc.gz"
    result = build_warc([tiny_dataset], out, per_page=3)
    assert result.count == 4 and result.duplicates == 0
    assert result.start_url == "http://replay.local/start.html"
    assert result.list_urls == (result.start_url, result.start_url + "?page=2")
    assert "http://replay.local/tiny/nourl-1.html" in result.urls
    assert not out.with_name(out.name + ".part").exists()

    records = {
        uri: (http, body) for kind, uri, http, body in read_records(out) if kind == "response"
    }
    sources = {
        "http://news.example.test/a/1.html": GBK_HTML,
        "http://replay.local/tiny/nourl-1.html": NOURL_HTML,
        "http://news.example.test/a/2.html": UTF8_HTML,
    }
    for url, body in sources.items():
        http, stored = records[url]
        assert stored == body
        assert http.get_header("Content-Type") == "text/html"
        assert http.get_statuscode() == "200"

    first, _ = records[result.start_url]
    assert first.get_header("Content-Type") == "text/html; charset=utf-8"
    page1 = records[result.start_url][1].decode("utf-8")
    page2 = records[result.list_urls[1]][1].decode("utf-8")
    assert page1.count("<li>") == 3 and page2.count("<li>") == 1
    assert 'rel="next" href="http://replay.local/start.html?page=2"' in page1
    assert 'rel="next"' not in page2
    # &-separated query strings are escaped in the href, as HTML requires.
    assert "view?id=3&amp;b=1" in page1 + page2


def test_build_warc_match_and_url_map(tiny_dataset: Path, tmp_path: Path) -> None:
    def to_local(url: str) -> str:
        return url.replace("http://news.example.test/", "http://replay.local/news/")

    out = tmp_path / "some.warc"  # uncompressed works too
    result = build_warc(
        [tiny_dataset], out, match=r"/a/\d", url_map=to_local, start_page_url="http://l.test/"
    )
    assert result.urls == ("http://replay.local/news/a/1.html", "http://replay.local/news/a/2.html")
    assert result.list_urls == ("http://l.test/",)
    uris = [uri for kind, uri, _, _ in read_records(out) if kind == "response"]
    assert uris == [*result.urls, "http://l.test/"]


def test_build_warc_writes_a_repeated_url_once(tiny_dataset: Path, tmp_path: Path) -> None:
    result = build_warc([tiny_dataset, tiny_dataset], tmp_path / "twice.warc.gz")
    assert result.count == 4 and result.duplicates == 4


def test_makewarc_command(tiny_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmd.warc.gz"
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "scrapy.cmdline", "makewarc", str(tiny_dataset)),
            *("-o", str(out), "--per-page", "2", "--start-url", "http://replay.local/s.html"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 pages, 2 list pages" in proc.stdout
    assert "start URL: http://replay.local/s.html" in proc.stdout
    assert len(WarcIndex(out)) == 6


# --------------------------------------------------------------------------
# Index and middleware, in process


def test_replay_key_normalises() -> None:
    assert replay_key("http://a.test/v?b=1&id=3#top") == replay_key("http://a.test/v?id=3&b=1")
    assert replay_key("http://a.test/新闻 1.html") == "http://a.test/%E6%96%B0%E9%97%BB%201.html"


def test_middleware_hits_misses_and_counts(tiny_dataset: Path, tmp_path: Path) -> None:
    archive = tmp_path / "tiny.warc.gz"
    build_warc([tiny_dataset], archive)
    crawler = get_crawler(settings_dict={"REPLAY_ARCHIVE": str(archive)})
    mw = WarcReplayMiddleware.from_crawler(crawler)
    hit = mw.process_request(Request("http://news.example.test/a/1.html#comments"))
    assert hit is not None
    assert (hit.status, hit.body, hit.headers[b"Content-Type"]) == (200, GBK_HTML, b"text/html")
    assert "replay" in hit.flags
    assert mw.process_request(Request("http://news.example.test/view?b=1&id=3")).status == 200
    miss = mw.process_request(Request("http://news.example.test/robots.txt"))
    assert (miss.status, miss.body) == (404, b"")
    assert mw.process_request(Request("data:,hello")) is None  # its handler is offline
    assert crawler.stats.get_value("replay/hit") == 2
    assert crawler.stats.get_value("replay/miss") == 1
    mw.spider_closed()


def test_middleware_off_without_setting_and_loud_on_missing_file(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured):
        WarcReplayMiddleware.from_crawler(get_crawler())
    missing = get_crawler(settings_dict={"REPLAY_ARCHIVE": str(tmp_path / "nope.warc.gz")})
    with pytest.raises(FileNotFoundError):
        WarcReplayMiddleware.from_crawler(missing)


def test_index_reads_chunked_records_of_other_tools(tmp_path: Path) -> None:
    """wget and others store the wire bytes, chunked transfer encoding included."""
    archive = tmp_path / "chunked.warc.gz"
    body = b"<html><body>chunked body</body></html>"
    wire = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    with open(archive, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        http = StatusAndHeaders(
            "200 OK",
            [("Content-Type", "text/html; charset=gbk"), ("Transfer-Encoding", "chunked")],
            protocol="HTTP/1.1",
        )
        writer.write_record(
            writer.create_warc_record(
                "http://c.test/", "response", payload=io.BytesIO(wire), http_headers=http
            )
        )
    record = WarcIndex(archive).get("http://c.test/")
    assert record is not None and record.body == body
    assert record.headers == [("Content-Type", "text/html; charset=gbk")]


def test_index_prefers_the_last_good_record(tmp_path: Path) -> None:
    """A recorded crawl that retried a 503 must replay the answer it finally got."""
    archive = tmp_path / "retries.warc.gz"
    with open(archive, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for url, status, body in [
            ("http://r.test/retried", 503, b"busy"),
            ("http://r.test/retried", 200, b"ok"),
            ("http://r.test/retried", 503, b"busy again"),
            ("http://r.test/gone", 200, b"was here"),
            ("http://r.test/gone", 404, b"gone now"),
            ("http://r.test/down", 500, b"down"),
        ]:
            write_response_record(w, url, body, status=status)
    index = WarcIndex(archive)
    assert index.records == 6 and len(index) == 3
    retried = index.get("http://r.test/retried")
    assert (retried.status, retried.body) == (200, b"ok")
    assert index.get("http://r.test/gone").status == 404
    assert index.get("http://r.test/down").status == 500


def test_index_skips_a_truncated_tail(
    tiny_dataset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A recorder killed mid-write leaves a torn last record: skip it, keep the rest."""
    for name in ("torn.warc.gz", "torn.warc"):
        archive = tmp_path / name
        result = build_warc([tiny_dataset], archive)  # the list page is the last record
        archive.write_bytes(archive.read_bytes()[:-40])
        with caplog.at_level(logging.WARNING, logger="newsspider.replay"):
            index = WarcIndex(archive)
        assert all(url in index for url in result.urls)
        assert result.start_url not in index  # a partial body is never replayed
        assert "truncated" in caplog.text
        assert index.get(result.urls[0]).body == GBK_HTML


def test_single_gzip_stream_is_rejected(tiny_dataset: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.warc"
    build_warc([tiny_dataset], plain)
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(ValueError, match="recompress"):
        WarcIndex(whole)


# --------------------------------------------------------------------------
# Crawls in a child process


@pytest.fixture(scope="module")
def edge_archive(tiny_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny dataset plus robots.txt, a redirect, a gzip-encoded page."""
    archive = tmp_path_factory.mktemp("edge") / "edge.warc.gz"
    build_warc([tiny_dataset], archive)
    with open(archive, "ab") as fh:  # gzip members concatenate
        w = WARCWriter(fh, gzip=True)
        robots = b"User-agent: *\nDisallow: /private/\n"
        write_response_record(w, "http://news.example.test/robots.txt", robots, [])
        write_response_record(w, "http://news.example.test/private/p.html", UTF8_HTML)
        write_response_record(
            w, "http://news.example.test/old", b"", [("Location", "/moved.html")], status=301
        )
        write_response_record(w, "http://news.example.test/moved.html", GBK_HTML)
        write_response_record(
            w,
            "http://news.example.test/gz.html",
            gzip.compress(UTF8_HTML),
            [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "gzip")],
        )
    return archive


@pytest.fixture(scope="module")
def edge_crawl(
    edge_archive: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[dict], dict, str]:
    extra = tuple(
        f"http://news.example.test/{p}"
        for p in ("old", "private/p.html", "gz.html", "missing.html")
    )
    tmp = tmp_path_factory.mktemp("edge_crawl")
    return run_probe(
        tmp, "http://replay.local/start.html", *replay_settings(edge_archive), extra=extra
    )


def test_replay_serves_exact_bytes_and_headers(edge_crawl: tuple[list[dict], dict, str]) -> None:
    items, _, log = edge_crawl
    pages = {i["url"]: i for i in items if i["kind"] == "page"}
    expected = {
        "http://news.example.test/a/1.html": GBK_HTML,
        "http://news.example.test/a/2.html": UTF8_HTML,
        "http://replay.local/tiny/nourl-1.html": NOURL_HTML,
        "http://news.example.test/view?id=3&b=1": UTF8_HTML + b"<!-- q -->",
    }
    for url, body in expected.items():
        assert pages[url]["md5"] == md5(body), url
        assert pages[url]["content_type"] == "text/html"  # no charset invented
        assert "replay" in pages[url]["flags"]
    # Content-Encoding recorded: HttpCompressionMiddleware decodes it as live.
    assert pages["http://news.example.test/gz.html"]["md5"] == md5(UTF8_HTML)
    assert "holds 10 URLs" in log


def test_replay_follows_recorded_redirects(edge_crawl: tuple[list[dict], dict, str]) -> None:
    items, stats, _ = edge_crawl
    moved = [i for i in items if i["url"] == "http://news.example.test/moved.html"]
    assert [m["md5"] for m in moved] == [md5(GBK_HTML)]
    assert stats["downloader/response_status_count/301"] == 1


def test_replay_obeys_archived_robots_and_404s_misses(
    edge_crawl: tuple[list[dict], dict, str],
) -> None:
    items, stats, _ = edge_crawl
    urls = {i["url"]: i for i in items}
    assert "http://news.example.test/private/p.html" not in urls
    assert stats["robotstxt/forbidden"] == 1
    # replay.local has no robots.txt in the archive: 404, so everything is allowed.
    assert stats["robotstxt/response_status_count/404"] == 1
    assert stats["robotstxt/response_status_count/200"] == 1
    missing = urls["http://news.example.test/missing.html"]
    assert (missing["status"], missing["len"]) == (404, 0)
    # 4 pages + list page + robots + old + moved + gz; misses: missing + replay.local robots
    assert stats["replay/hit"] == 9
    assert stats["replay/miss"] == 2
    # The only download exception is robots.txt's IgnoreRequest (no NotSupported).
    errors = {k: v for k, v in stats.items() if k.startswith("downloader/exception_type_count/")}
    assert errors == {"downloader/exception_type_count/scrapy.exceptions.IgnoreRequest": 1}


def test_replay_crawl_of_cx163(datasets: Path, tmp_path: Path) -> None:
    dataset = datasets / "cx163-zh"
    cases = [json.loads(line) for line in (dataset / "cases.jsonl").read_text("utf-8").splitlines()]
    archive = tmp_path / "cx163.warc.gz"
    result = build_warc([dataset], archive)
    assert result.count == len(cases) == 62
    items, stats, _ = run_probe(tmp_path, result.start_url, *replay_settings(archive))
    pages = {i["url"]: i for i in items if i["kind"] == "page"}
    for case in cases:
        raw = (dataset / case["html_file"]).read_bytes()  # GB2312/GBK, as saved
        got = pages[case["url"]]
        assert (got["status"], got["md5"], got["len"]) == (200, md5(raw), len(raw)), case["id"]
        assert got["content_type"] == "text/html"
    assert stats["replay/hit"] == len(cases) + len(result.list_urls)
    assert stats["replay/miss"] == 2  # robots.txt of money.163.com and replay.local


# --------------------------------------------------------------------------
# Recording a live crawl (from a local server), then replaying it


SITE = {
    "/": (200, "text/html; charset=utf-8", b'<ul><li><a href="/a.html">a</a></li>'
          b'<li><a href="/b.html">b</a></li></ul>'),
    "/robots.txt": (200, "text/plain", b"User-agent: *\nAllow: /\n"),
    "/a.html": (200, "text/html; charset=gbk", GBK_HTML),
    "/b.html": (200, "text/html", UTF8_HTML * 20),  # sent gzip-encoded
    "/c.html": (200, "text/html", NOURL_HTML),
}  # fmt: skip


class SiteHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/old":
            self.send_response(302)
            self.send_header("Location", "/c.html")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, ctype, body = SITE.get(self.path, (404, "text/plain", b"not found"))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if self.path == "/b.html" and "gzip" in self.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_record_live_crawl_then_replay_it(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SiteHandler)  # bound here: no sleep
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    archive = tmp_path / "live.warc.gz"
    try:
        live, live_stats, _ = run_probe(
            tmp_path / "live",
            f"{base}/",
            f"WARC_OUTPUT={archive}",
            f"EXTENSIONS={RECORDER_EXT}",
            "DOWNLOAD_DELAY=0",
            "AUTOTHROTTLE_ENABLED=False",
            extra=(f"{base}/old",),
        )
    finally:
        server.shutdown()
        server.server_close()
    assert live_stats["warc_output/response_count"] == 6  # /, robots, a, b, old, c

    records = list(read_records(archive))
    kinds = [k for k, _, _, _ in records]
    assert kinds[0] == "warcinfo"
    assert kinds.count("response") == kinds.count("request") == 6
    responses = {uri: (http, body) for kind, uri, http, body in records if kind == "response"}
    b_http, b_body = responses[f"{base}/b.html"]
    assert b_http.get_header("Content-Encoding") == "gzip"  # stored as sent
    assert gzip.decompress(b_body) == UTF8_HTML * 20
    assert responses[f"{base}/old"][0].get_statuscode() == "302"
    requests = [(uri, http) for kind, uri, http, _ in records if kind == "request"]
    assert all(http.protocol == "GET" for _, http in requests)

    replayed, stats, _ = run_probe(
        tmp_path / "replay", f"{base}/", *replay_settings(archive), extra=(f"{base}/old",)
    )
    assert stats["replay/hit"] == 6 and "replay/miss" not in stats

    def bodies(items: list[dict]) -> dict[str, tuple[int, str, str]]:
        return {i["url"]: (i["status"], i["md5"], i["content_type"]) for i in items}

    assert bodies(replayed) == bodies(live)
    assert bodies(replayed)[f"{base}/a.html"] == (200, md5(GBK_HTML), "text/html; charset=gbk")
    assert bodies(replayed)[f"{base}/c.html"][1] == md5(NOURL_HTML)
