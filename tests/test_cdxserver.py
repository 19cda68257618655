"""The backfill's test harness (tests/cdxserver.py): pywb's CDX server, the byte-range
server and the Common Crawl front, over a collection of real saved pages whose every
capture is known. These tests pin what the harness promises the backfill's tests."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import urllib.error
import urllib.request
from datetime import date, datetime
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from newsspider.sites import BUILTIN_FILE, read_sites_file
from tests.cdxserver import (
    INSTALL_HINT,
    KINDS,
    SITE_DOMAINS,
    Capture,
    CdxCollection,
    build_collection,
    cdx_lines,
    pywb_bin,
    serve,
)

FIELDS = {"url", "timestamp", "status", "mime", "digest", "length", "offset", "filename"}
CC_FILTERS = ["status:200", "mime:text/html"]
#: the built-in rows, whatever a user's sites file says
ROWS = read_sites_file(BUILTIN_FILE)


@pytest.fixture(scope="module")
def built(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> CdxCollection:
    if pywb_bin() is None:
        pytest.skip(INSTALL_HINT)
    return build_collection(datasets, tmp_path_factory.mktemp("cdx"))


@pytest.fixture(scope="module")
def served(built: CdxCollection):
    with serve(built) as collection:
        yield collection


@pytest.fixture
def coll(served: CdxCollection) -> CdxCollection:
    assert served.data is not None and served.front is not None
    served.data.reset()
    served.front.fail_first = 0
    return served


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, dict(answer.headers.items()), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers.items()), error.read()


def domain_query(endpoint: str, site: str, **params) -> list[dict]:
    return cdx_lines(endpoint, url=SITE_DOMAINS[site], matchType="domain", output="json", **params)


def all_pages(endpoint: str, site: str, **params) -> list[dict]:
    (count,) = domain_query(endpoint, site, showNumPages="true", **params)
    lines = []
    for page in range(count["pages"]):
        lines += domain_query(endpoint, site, page=page, **params)
    return lines


def strip(line: dict) -> dict:
    """A line without pywb's own fields naming the collection (CC's lines have none)."""
    return {k: v for k, v in line.items() if k not in ("source", "source-coll")}


def keys(lines: list[dict]) -> set[tuple[str, str]]:
    return {(line["url"], line["timestamp"]) for line in lines}


def capture_keys(captures: list[Capture]) -> set[tuple[str, str]]:
    return {(c.url, c.timestamp) for c in captures}


def url_day(url: str) -> date | None:
    """The date a news URL carries: 163's /yy/mmdd/, Sina's yyyy-mm-dd, Tencent's yyyymmdd."""
    if m := re.search(r"/(\d{2})/(\d{2})(\d{2})/\d{2}/", url):
        return date(2000 + int(m[1]), int(m[2]), int(m[3]))
    if m := re.search(r"/(\d{4})-(\d{2})-(\d{2})/", url):
        return date(int(m[1]), int(m[2]), int(m[3]))
    if m := re.search(r"/(20\d{2})(\d{2})(\d{2})/", url):
        return date(int(m[1]), int(m[2]), int(m[3]))
    return None


def parse_records(data: bytes) -> list:
    records = []
    for record in ArchiveIterator(io.BytesIO(data)):
        records.append((record, record.content_stream().read()))
    return records


# -- the collection ------------------------------------------------------------------------------


def test_the_plan_covers_every_case_and_agrees_with_the_site_rows(built: CdxCollection) -> None:
    kinds = {c.kind for c in built.captures}
    assert kinds == set(KINDS)
    assert len({c.year for c in built.captures if c.kind == "article"}) >= 3
    for site in SITE_DOMAINS:
        row = ROWS[site]
        assert any(c.kind == "article" for c in built.of_site(site))
        for c in built.of_site(site):
            assert c.url.split("/")[2].endswith(SITE_DOMAINS[site])
            if c.kind in ("article", "bad_offset", "404", "redirect"):
                # URL-shaped as articles: only the CDX status or the record itself tells
                assert row.is_article(c.url), c
            else:
                assert not row.is_article(c.url), c
                assert row.is_list(c.url) == (c.kind == "list"), c
            published = url_day(c.url)
            if published is not None:
                assert c.day >= published, c
    twice = [u for u in {c.url for c in built.captures if c.kind == "article"}
             if sum(c.url == u for c in built.captures) > 1]  # fmt: skip
    assert len(twice) >= 2


def test_records_hold_the_real_pages_and_the_bad_offset_does_not(
    built: CdxCollection, datasets: Path
) -> None:
    cases = {}
    for name in {c.source.split("/")[0] for c in built.captures if c.source}:
        for line in (datasets / name / "cases.jsonl").read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            cases[f"{name}/{case['id']}"] = datasets / name / case["html_file"]
    for c in built.captures:
        data = (built.data_root / c.filename).read_bytes()
        ((record, payload),) = parse_records(data[c.offset : c.offset + c.length])
        assert record.rec_type == "response"
        assert record.rec_headers.get_header("WARC-Target-URI") == c.url
        assert record.http_headers.get_statuscode() == str(c.status)
        warc_date = datetime.strptime(record.rec_headers["WARC-Date"], "%Y-%m-%dT%H:%M:%SZ")
        assert f"{warc_date:%Y%m%d%H%M%S}" == c.timestamp
        if c.source:
            assert payload == cases[c.source].read_bytes()
        if c.kind == "bad_offset":
            assert c.cdx_offset != c.offset
            with pytest.raises(ArchiveLoadFailed):
                parse_records(data[c.cdx_offset : c.cdx_offset + c.length])
        else:
            assert c.cdx_offset == c.offset


# -- pywb ----------------------------------------------------------------------------------------


def test_servers_start_and_stop_cleanly(built: CdxCollection) -> None:
    with serve(built) as collection:
        process = collection.pywb
        assert process is not None and process.poll() is None
        ports = [
            int(re.search(r":(\d+)/", url)[1])
            for url in (collection.cdx_url, collection.cc_cdx_url, collection.data_url)
        ]
        assert domain_query(collection.cdx_url, "sina", limit=1)
    assert process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)
    # nothing is left in pywb's session (it was started as the leader of a new one)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        assert int(fields[3]) != process.pid, f"process {stat.parent.name} outlived pywb"
    for port in ports:
        with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
            sock.connect(("127.0.0.1", port))


@pytest.mark.parametrize("site", SITE_DOMAINS)
def test_a_domain_query_returns_every_capture_with_the_cc_fields(
    coll: CdxCollection, site: str
) -> None:
    lines = all_pages(coll.cdx_url, site)
    assert len(lines) == len(coll.of_site(site))
    truth = {(c.url, c.timestamp): c for c in coll.of_site(site)}
    assert keys(lines) == set(truth)
    for line in lines:
        assert line.keys() >= FIELDS
        c = truth[(line["url"], line["timestamp"])]
        assert (line["status"], line["filename"]) == (str(c.status), c.filename)
        assert (int(line["offset"]), int(line["length"])) == (c.cdx_offset, c.length)
        assert line["mime"] == c.mime
        assert line["digest"] == c.digest
        assert re.fullmatch(r"[A-Z2-7]{32}", line["digest"])  # sha1, base32, as CC's


def test_from_and_to_bound_the_capture_time(coll: CdxCollection) -> None:
    year = all_pages(coll.cdx_url, "netease", **{"from": "2019", "to": "2019"})
    assert keys(year) == capture_keys([c for c in coll.of_site("netease") if c.year == 2019])
    days = all_pages(coll.cdx_url, "netease", **{"from": "20190908000000", "to": "20190909235959"})
    since, until = date(2019, 9, 8), date(2019, 9, 9)
    assert keys(days) == capture_keys(coll.in_range("netease", since, until))
    assert len(days) == 5


def test_filters_drop_the_404_the_redirects_and_non_html(coll: CdxCollection) -> None:
    everything = all_pages(coll.cdx_url, "netease")
    assert {line["status"] for line in everything} == {"200", "301", "404"}
    ok = all_pages(coll.cdx_url, "netease", filter="status:200")
    assert {line["status"] for line in ok} == {"200"}
    assert len(ok) == len(everything) - 2
    html = all_pages(coll.cdx_url, "netease", filter=CC_FILTERS)
    assert {line["mime"] for line in html} == {"text/html"}
    assert "http://money.163.com/robots.txt" not in {line["url"] for line in html}
    assert len(html) == len(ok) - 1


@pytest.mark.parametrize(
    ("site", "since", "until"),
    [
        ("netease", date(2016, 1, 1), date(2019, 12, 31)),
        ("netease", date(2015, 1, 1), date(2021, 12, 31)),
        ("sina", date(2019, 1, 1), date(2019, 12, 31)),
        ("tencent", date(2016, 1, 1), date(2020, 12, 31)),
    ],
)
def test_expected_is_what_a_cc_query_keeps(
    coll: CdxCollection, site: str, since: date, until: date
) -> None:
    """The truth in the backfill's own terms: the CC query for the window, article URLs only
    (the site row), less the captures whose record cannot be read."""
    window = {"from": f"{since:%Y%m%d}000000", "to": f"{until:%Y%m%d}235959"}
    lines = all_pages(coll.cdx_url, site, filter=CC_FILTERS, **window)
    bad = {(c.url, c.timestamp) for c in coll.bad_offsets(site, since, until)}
    kept = {
        line["url"]
        for line in lines
        if ROWS[site].is_article(line["url"]) and (line["url"], line["timestamp"]) not in bad
    }
    assert kept == coll.expected(site, since, until)
    assert not kept & coll.unwanted(site, since, until)


# -- paging --------------------------------------------------------------------------------------


def test_paging_as_pywb_documents_it_for_a_zipnum_index(coll: CdxCollection) -> None:
    (count,) = domain_query(coll.cdx_url, "netease", showNumPages="true")
    assert count.keys() == {"pages", "pageSize", "blocks"}
    assert count["pageSize"] == coll.page_blocks
    assert count["pages"] == -(-count["blocks"] // count["pageSize"]) >= 3
    pages = [domain_query(coll.cdx_url, "netease", page=n) for n in range(count["pages"])]
    assert all(pages)
    assert domain_query(coll.cdx_url, "netease") == pages[0]  # no page= is page 0 alone
    flat = [line for page in pages for line in page]
    # in order, each capture once: the same lines as the unpaged plain index
    plain = domain_query(coll.plain_cdx_url, "netease")
    assert [strip(line) for line in flat] == [strip(line) for line in plain]
    status, _, body = get(
        f"{coll.cdx_url}?url=163.com&matchType=domain&output=json&page={count['pages']}"
    )
    assert status == 400
    assert "invalid" in json.loads(body)["message"]
    # pageSize overrides the blocks per page
    (single,) = domain_query(coll.cdx_url, "netease", showNumPages="true", pageSize=1)
    assert single["pages"] == single["blocks"] == count["blocks"]
    # pages are cut on the URL range only: from/to/filter do not change the count, and a
    # page can come back empty after them, so a client reads every page
    window = {"from": "2021", "to": "2021"}
    (same,) = domain_query(coll.cdx_url, "netease", showNumPages="true", **window)
    assert same == count
    filtered = [
        domain_query(coll.cdx_url, "netease", page=n, **window) for n in range(count["pages"])
    ]
    assert [] in filtered
    assert [line["url"] for page in filtered for line in page] == [
        "https://www.163.com/dy/article/G33O1QTA05372UZS.html"
    ]


def test_a_plain_cdxj_index_does_not_page(coll: CdxCollection) -> None:
    everything = domain_query(coll.plain_cdx_url, "netease")
    assert len(everything) == len(coll.of_site("netease"))
    assert domain_query(coll.plain_cdx_url, "netease", page=3) == everything
    # the page count query returns the captures themselves, not {"pages": ...}
    assert domain_query(coll.plain_cdx_url, "netease", showNumPages="true") == everything


# -- the data server -----------------------------------------------------------------------------


def article(coll: CdxCollection) -> Capture:
    return next(c for c in coll.captures if c.source == "cx163-zh/cx163-32")


def test_a_range_request_returns_one_gzipped_record(coll: CdxCollection, datasets: Path) -> None:
    c = article(coll)
    first, last = c.cdx_range
    status, headers, body = get(coll.record_url(c), {"Range": f"bytes={first}-{last}"})
    size = (coll.data_root / c.filename).stat().st_size
    assert status == 206
    assert headers["Content-Range"] == f"bytes {first}-{last}/{size}"
    assert len(body) == c.length
    assert body[:2] == b"\x1f\x8b"  # a gzip member of its own
    ((record, payload),) = parse_records(body)
    assert record.rec_type == "response"
    assert record.rec_headers.get_header("WARC-Target-URI") == c.url
    assert payload == (datasets / "cx163-zh" / "html" / "cx163-32.html").read_bytes()
    assert coll.fetches(c) == 1
    assert coll.requests[c.filename] == 1


def test_the_bad_offset_record_does_not_parse(coll: CdxCollection) -> None:
    (bad,) = coll.bad_offsets("netease", date(2019, 1, 1), date(2019, 12, 31))
    first, last = bad.cdx_range
    status, _, body = get(coll.record_url(bad), {"Range": f"bytes={first}-{last}"})
    assert status == 206 and len(body) == bad.length
    with pytest.raises(ArchiveLoadFailed):
        parse_records(body)


def test_ranges_past_the_end_whole_files_and_missing_files(coll: CdxCollection) -> None:
    path = coll.warcs[0]
    name = path.relative_to(coll.data_root).as_posix()
    size = path.stat().st_size
    status, headers, _ = get(coll.data_url + name, {"Range": f"bytes={size}-{size + 10}"})
    assert (status, headers["Content-Range"]) == (416, f"bytes */{size}")
    status, headers, body = get(coll.data_url + name, {"Range": f"bytes={size - 5}-{size + 10}"})
    assert (status, headers["Content-Range"], len(body)) == (
        206,
        f"bytes {size - 5}-{size - 1}/{size}",
        5,
    )
    status, _, body = get(coll.data_url + name)
    assert (status, body) == (200, path.read_bytes())
    assert get(coll.data_url + "crawl-data/nothing.warc.gz")[0] == 404
    assert get(coll.data_url + "../../etc/passwd")[0] == 404
    assert coll.requests[name] == 3


def test_429_with_retry_after_for_the_first_requests(coll: CdxCollection) -> None:
    c = article(coll)
    assert coll.data is not None
    coll.data.throttle(c.filename, 2, retry_after=0)
    answers = [
        get(coll.record_url(c), {"Range": "bytes={}-{}".format(*c.cdx_range)}) for _ in range(3)
    ]
    assert [status for status, _, _ in answers] == [429, 429, 206]
    assert answers[0][1]["Retry-After"] == "0"
    assert coll.requests[c.filename] == 3
    assert coll.fetches(c) == 3


# -- the Common Crawl front ----------------------------------------------------------------------


def test_the_cc_front_answers_no_captures_with_404_and_can_shed_load(coll: CdxCollection) -> None:
    assert domain_query(coll.cdx_url, "sina", **{"from": "2010", "to": "2010"}) == []
    status, _, body = get(f"{coll.cc_cdx_url}?url=sina.com.cn&matchType=domain&from=2010&to=2010")
    assert status == 404
    assert json.loads(body) == {"message": "No Captures found for: sina.com.cn"}
    assert coll.front is not None
    coll.front.fail_first = 1
    status, _, _ = get(f"{coll.cc_cdx_url}?url=sina.com.cn&matchType=domain&output=json")
    assert status == 503
    assert all_pages(coll.cc_cdx_url, "sina") == all_pages(coll.cdx_url, "sina")
