"""``scrapy backfill --warc``: whole WARC files scanned for the table's article pages
(``newsspider/backfill/warcscan.py``, ``warcspider.py``), local or over HTTP.

The archive is built here the way CC-NEWS files are: gzip per record, a ``warcinfo``
first, then ``request``/``response``/``metadata`` records of many sites in two languages.
The pages are real saved pages of ``../shared/datasets`` under their real URLs: NetEase
(money.163.com, cx163-zh), Sina, Guancha and iFeng (gne-unlabelled-zh), and English news
sites outside the table (scrapinghub-en); besides them a non-article page of a table
site, non-HTML answers, a 404, a ``revisit``, two URLs captured twice (the later capture
first in the file for one, last for the other), one record whose gzip member holds
garbage, and a tail cut inside the last record. What must be stored is known exactly.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from warcio.warcwriter import WARCWriter

from newsspider.backfill.warcscan import Tape, WarcScan, warc_responses
from newsspider.replay import write_response_record
from newsspider.sites import site_for_url

REPO = Path(__file__).resolve().parents[1]
FAST = ("-s", "AUTOTHROTTLE_ENABLED=False", "-s", "EXTRACTION_WORKERS=0", "-s", "LOG_LEVEL=INFO")
T0 = datetime(2019, 9, 1, 8, 0, tzinfo=UTC)
HTML = [("Content-Type", "text/html")]


def scrapy(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- the archive ------------------------------------------------------------------------


def _cases(datasets: Path, name: str) -> list[tuple[str, bytes]]:
    """(url, page bytes) of a dataset's cases that have a URL."""
    out = []
    folder = datasets / name
    for line in (folder / "cases.jsonl").read_text("utf-8").splitlines():
        case = json.loads(line)
        if case.get("url"):
            out.append((case["url"], (folder / case["html_file"]).read_bytes()))
    return out


def _member(write) -> bytes:
    """One record (or a request/response pair) gzipped as a member of its own."""
    buf = io.BytesIO()
    write(WARCWriter(buf, gzip=True, warc_version="1.1"))
    return buf.getvalue()


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class CcNews:
    """The archive's bytes and what a scan must make of them."""

    data: bytes = b""
    members: list[bytes] = field(default_factory=list)
    #: article URL -> WARC-Date of the capture to store (the latest)
    expected: dict[str, str] = field(default_factory=dict)
    #: article URLs of the table whose only capture is corrupt, truncated, 404 or not HTML
    lost: set[str] = field(default_factory=set)
    others: list[str] = field(default_factory=list)  # captures of no site of the table

    def response(self, url: str, body: bytes, when: datetime, headers=HTML, status=200) -> None:
        def write(w: WARCWriter) -> None:
            write_response_record(
                w, url, body, headers, status=status, warc_headers={"WARC-Date": _stamp(when)}
            )

        self.members.append(_member(write))

    def request(self, url: str, when: datetime) -> None:
        def write(w: WARCWriter) -> None:
            w.write_record(
                w.create_warc_record(
                    url,
                    "request",
                    payload=io.BytesIO(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                    warc_headers_dict={"WARC-Date": _stamp(when)},
                )
            )

        self.members.append(_member(write))

    def metadata(self, url: str, when: datetime) -> None:
        def write(w: WARCWriter) -> None:
            w.write_record(
                w.create_warc_record(
                    url,
                    "metadata",
                    payload=io.BytesIO(b"fetchTimeMs: 212\r\n"),
                    warc_content_type="application/warc-fields",
                    warc_headers_dict={"WARC-Date": _stamp(when)},
                )
            )

        self.members.append(_member(write))

    def capture(self, url: str, body: bytes, when: datetime, **kw) -> None:
        """A capture as CC-NEWS writes one: request, response, metadata."""
        self.request(url, when)
        self.response(url, body, when, **kw)
        self.metadata(url, when)


def cc_news_warc(datasets: Path) -> CcNews:
    netease = _cases(datasets, "cx163-zh")[:16]
    gne = _cases(datasets, "gne-unlabelled-zh")
    others = [
        (u, b) for u, b in gne if (s := site_for_url(u)) and s.key in ("sina", "guancha", "ifeng")
    ]
    english = _cases(datasets, "scrapinghub-en")[:12]
    arc = CcNews()
    arc.members.append(
        _member(lambda w: w.write_record(w.create_warcinfo_record("CC-NEWS-test.warc.gz", {})))
    )
    when = T0
    # The table's article pages, English pages of other sites between them.
    for k, (url, body) in enumerate(netease[:12] + others):
        when += timedelta(minutes=7)
        arc.capture(url, body, when)
        arc.expected[url] = _stamp(when)
        if k < len(english):
            eurl, ebody = english[k]
            arc.capture(eurl, ebody, when)
            arc.others.append(eurl)
    # A non-article page of a table site, non-HTML answers at article URLs, a 404.
    page = netease[0][1]
    arc.capture("https://news.163.com/domestic/", page, when)
    png = b"\x89PNG\r\n\x1a\n" + bytes(500)
    arc.capture(netease[12][0], png, when, headers=[("Content-Type", "image/png")])
    arc.capture(netease[13][0], b'{"a": 1}', when, headers=[("Content-Type", "application/json")])
    arc.capture(netease[14][0], b"<html><body>Not found</body></html>", when, status=404)
    arc.lost |= {netease[12][0], netease[13][0], netease[14][0]}
    # A revisit record.
    arc.members.append(
        _member(
            lambda w: w.write_record(
                w.create_revisit_record(netease[0][0], "sha1:AAAA", netease[0][0], _stamp(T0))
            )
        )
    )
    # Captured twice: the later capture first (url0), and last (url1).
    url0, body0 = netease[0]
    url1, body1 = netease[1]
    arc.capture(url0, body0, T0 - timedelta(days=30))
    later = when + timedelta(days=2)
    arc.capture(url1, body1, later)
    arc.expected[url1] = _stamp(later)
    # A record whose member holds garbage after its gzip header.
    url, body = netease[15]
    arc.capture(url, body, when)
    response = arc.members[-2]
    arc.members[-2] = response[:40] + os.urandom(200) + response[240:]
    arc.lost.add(url)
    # One more English page, then the tail: a record of the table cut in two.
    arc.capture(english[-1][0], english[-1][1], when)
    arc.others.append(english[-1][0])
    cut = "http://money.163.com/15/0702/05/ATGCAC2300253B99.html"
    arc.request(cut, when)
    arc.response(cut, netease[2][1], when)
    arc.members[-1] = arc.members[-1][: len(arc.members[-1]) // 2]
    arc.lost.add(cut)
    arc.data = b"".join(arc.members)
    return arc


@pytest.fixture(scope="module")
def archive(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CcNews]:
    arc = cc_news_warc(datasets)
    path = tmp_path_factory.mktemp("warc") / "CC-NEWS-20190901080000-00001.warc.gz"
    path.write_bytes(arc.data)
    return path, arc


def stored(db: Path) -> dict[str, tuple[str, str | None, str | None]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT url, site, archive, captured_at FROM articles").fetchall()
    return {url: (site, archive, captured) for url, site, archive, captured in rows}


def stat(out: str, name: str) -> int:
    m = re.search(rf"'newsspider/warc/{name}': (\d+)", out)
    return int(m.group(1)) if m else 0


def _day(captured: str | None) -> str:
    return (captured or "").replace(" ", "T")[:19]


# -- the scan ---------------------------------------------------------------------------


def test_scan_keeps_exactly_the_tables_article_records(archive) -> None:
    path, arc = archive
    scan = WarcScan()
    pages = list(scan.scan([str(path)]))
    latest: dict[str, str] = {}
    for page in pages:
        stamp = _stamp(page.captured_at)
        latest[page.url] = max(latest.get(page.url, ""), stamp)
        assert page.warc == path.name and page.status == 200 and page.body
    assert latest == arc.expected
    counts = scan.counts
    assert counts["corrupt"] == 1 and counts["truncated"] == 1
    assert counts["not_200"] == 1 and counts["not_html"] == 2 and counts["not_article"] == 1
    assert counts["other_site"] == len(arc.others)
    assert counts["kept"] == len(pages) == len(arc.expected) + 2  # two URLs captured twice
    assert scan.bytes == len(arc.data)
    line = scan.summary()
    assert "records/s" in line and "MB/s" in line and "corrupt 1" in line


def test_scan_restricted_to_named_sites_and_days(archive) -> None:
    path, arc = archive
    scan = WarcScan(sites=["sina", "ifeng"], until=(T0 - timedelta(days=1)).date())
    assert list(scan.scan([str(path)])) == []  # every capture of those sites is later
    assert scan.counts["out_of_range"] > 0
    scan = WarcScan(sites=["sina", "ifeng"])
    urls = {p.url for p in scan.scan([str(path)])}
    assert urls == {u for u in arc.expected if site_for_url(u).key in ("sina", "ifeng")}


def test_files_that_cannot_be_read_are_counted_and_the_next_is_read(archive, tmp_path) -> None:
    path, arc = archive
    junk = tmp_path / "page.warc.gz"
    junk.write_bytes(b"<html><body>not a WARC file</body></html>")
    scan = WarcScan(sites=["netease"])
    files = [str(junk), str(tmp_path / "missing.warc.gz"), str(path)]
    urls = {p.url for p in scan.scan(files)}
    assert urls == {u for u in arc.expected if site_for_url(u).key == "netease"}
    assert scan.files == 3 and scan.counts["unreadable"] == 1
    assert scan.counts["corrupt"] == 2 and scan.counts["truncated"] == 1  # junk, then path's


def _small_warc(n: int = 6, *, gz: bool = True) -> tuple[bytes, list[int]]:
    """``n`` small response records and the offset of each (and of the end)."""
    offsets, out = [], io.BytesIO()
    for i in range(n):
        offsets.append(out.tell())
        w = WARCWriter(out, gzip=gz, warc_version="1.1")
        body = b"<html><body>" + b"page %d " % i * 300 + b"</body></html>"
        url = f"http://money.163.com/15/0702/05/ATGCAC23002530{i:02d}.html"
        write_response_record(w, url, body)
    offsets.append(out.tell())
    return out.getvalue(), offsets


class Stream(io.RawIOBase):
    """``data`` as a network stream: no seeking, reads of at most 1,000 bytes."""

    def __init__(self, data: bytes) -> None:
        self.inner = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        return self.inner.read(min(n if n > 0 else 1000, 1000))


def _read(data: bytes, want=None, *, stream=False) -> tuple[list[tuple[str, bool]], Counter]:
    counts: Counter[str] = Counter()
    tape = Tape(Stream(data) if stream else io.BytesIO(data))
    responses = warc_responses(tape, counts, want)
    return [(r.url[-7:-5], r.truncated) for r in responses], counts


@pytest.mark.parametrize("stream", [False, True], ids=["file", "stream"])
@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_every_cut_of_the_tail_is_one_truncated_file(gz: bool, stream: bool) -> None:
    data, offsets = _small_warc(gz=gz)
    first = ["00", "01", "02", "03", "04"]
    for wanted in (None, lambda url, date: None):  # read, or passed over unread
        for cut in range(offsets[-2] + 1, offsets[-1], 3 if stream else 1):
            got, counts = _read(data[:cut], wanted, stream=stream)
            assert counts["corrupt"] == 0 and counts["records"] >= 5, (cut, counts)
            if wanted is None:
                assert [u for u, torn in got if not torn][:5] == first, cut
            # Only a cut in a plain record's trailing blank lines leaves it whole.
            whole = not gz and not data[cut : offsets[-1]].strip()
            assert counts["truncated"] == (0 if whole else 1), (cut, counts)


@pytest.mark.parametrize("stream", [False, True], ids=["file", "stream"])
@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_a_corrupt_stretch_is_counted_and_read_past(gz: bool, stream: bool) -> None:
    data, offsets = _small_warc(gz=gz)
    a = offsets[2]
    junk = gzip.compress(b"not a WARC record") + os.urandom(300) if gz else b"garbage\r\n" * 30
    got, counts = _read(data[:a] + junk + data[a:], stream=stream)
    assert counts["corrupt"] == 1 and counts["truncated"] == 0
    assert [u for u, _ in got] == ["00", "01", "02", "03", "04", "05"]
    if gz:  # garbage inside a record's member: that record is lost, the others are read
        spoiled = data[: a + 40] + os.urandom(200) + data[a + 240 :]
        got, counts = _read(spoiled, stream=stream)
        assert counts["corrupt"] == 1 and counts["truncated"] == 0
        assert [u for u, _ in got] == ["00", "01", "03", "04", "05"]


def test_a_stream_that_breaks_is_a_truncated_file() -> None:
    data, offsets = _small_warc()

    class Breaking(io.RawIOBase):
        def __init__(self) -> None:
            self.inner = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            left = offsets[3] + 50 - self.inner.tell()  # the connection breaks in record 3
            if left <= 0:
                raise TimeoutError("timed out")
            return self.inner.read(min(n if n > 0 else left, left, 1000))

    counts: Counter[str] = Counter()
    got = [r.url[-7:-5] for r in warc_responses(Tape(Breaking()), counts) if not r.truncated]
    assert got == ["00", "01", "02"] and counts["truncated"] == 1


# -- scrapy backfill --warc ---------------------------------------------------------------


def test_backfill_warc_stores_each_article_record_once(archive, tmp_path: Path) -> None:
    path, arc = archive
    db = tmp_path / "corpus.db"
    out = scrapy("backfill", "--warc", str(path), "-s", f"DATABASE_URL=sqlite:///{db}", *FAST)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = stored(db)
    assert set(rows) == set(arc.expected), out.stderr[-3000:]
    for url, (site, origin, captured) in rows.items():
        assert site == site_for_url(url).key
        assert origin == f"warc:{path.name}"
        assert _day(captured) == arc.expected[url][:19]
    assert stat(out.stderr, "corrupt") == 1 and stat(out.stderr, "truncated") == 1
    assert stat(out.stderr, "superseded") in (1, 2)  # 2 when both captures share a batch
    assert "WARC scan: 1 WARC file(s)" in out.stderr and "records/s" in out.stderr
    line = summary_line(out.stderr)
    assert line.startswith(f"backfill-warc: {len(arc.expected):,} articles stored"), line
    assert "exit status" not in line, line

    # Again: every URL is stored already, nothing is rewritten.
    again = scrapy("backfill", "--warc", str(path), "-s", f"DATABASE_URL=sqlite:///{db}", *FAST)
    assert again.returncode == 0, again.stderr[-3000:]
    assert stored(db) == rows
    assert stat(again.stderr, "stored") == len(arc.expected)
    assert summary_line(again.stderr).startswith("backfill-warc: 0 articles stored")


def summary_line(stderr: str) -> str:
    """The crawl's summary line (``newsspider.extensions.CrawlSummary``), exactly one."""
    found = re.findall(r"\[newsspider\.extensions\] \w+: (backfill-warc: .*)$", stderr, re.M)
    assert len(found) == 1, stderr[-3000:]
    return found[0]


def test_backfill_warc_that_stores_nothing_exits_non_zero_with_its_summary(
    tmp_path: Path,
) -> None:
    # no page of any site of the table: nothing read, exit 3
    other = tmp_path / "other.warc.gz"
    with other.open("wb") as f:
        writer = WARCWriter(f, gzip=True, warc_version="1.1")
        for i in range(3):
            write_response_record(writer, f"http://example.org/news/{i}.html", b"<p>x</p>")
    db = f"sqlite:///{tmp_path / 'corpus.db'}"
    out = scrapy("backfill", "--warc", str(other), "-s", f"DATABASE_URL={db}", *FAST)
    assert out.returncode == 3, out.stderr[-3000:]
    line = summary_line(out.stderr)
    assert line.endswith("exit status 3: nothing could be fetched"), line
    # article records of a table site, none of them with an article in it: exit 5
    empty = tmp_path / "empty.warc.gz"
    empty.write_bytes(_small_warc(3)[0])
    out = scrapy("backfill", "--warc", str(empty), "-s", f"DATABASE_URL={db}", *FAST)
    assert out.returncode == 5, out.stderr[-3000:]
    line = summary_line(out.stderr)
    assert line.startswith("backfill-warc: 0 articles stored (0 new, 0 updated), 3 dropped"), line
    assert line.endswith("exit status 5: every article was dropped"), line


def test_backfill_warc_of_one_site_over_http(archive, tmp_path: Path) -> None:
    path, arc = archive
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(path.parent))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        db = tmp_path / "corpus.db"
        out = scrapy(
            "backfill", "netease", "--warc", base + "gone.warc.gz", base + path.name,
            "-s", f"DATABASE_URL=sqlite:///{db}", *FAST,
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 0, out.stderr[-3000:]
    rows = stored(db)
    assert set(rows) == {u for u in arc.expected if site_for_url(u).key == "netease"}
    assert all(origin == f"warc:{path.name}" for _, origin, _ in rows.values())
    assert stat(out.stderr, "corrupt") == 1 and stat(out.stderr, "truncated") == 1
    assert stat(out.stderr, "unreadable") == 1  # the 404: counted, the next file read


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["backfill", "--warc", "no/such/file.warc.gz"], "no such file"),
        (["backfill", "--warc", "x.warc.gz", "--archive", "wayback"], "not both"),
        (["backfill", "--warc", "s3://bucket/x.warc.gz"], "http(s) URL"),
        (["backfill", "nosuchsite", "--warc", "x.warc.gz"], "unknown site"),
    ],
)
def test_bad_warc_input_is_one_line(argv: list[str], words: str, tmp_path: Path) -> None:
    out = scrapy(*argv, "-s", f"DATABASE_URL=sqlite:///{tmp_path / 'c.db'}")
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr
