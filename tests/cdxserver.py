"""A Common Crawl-style capture index and WARC store on loopback, built from real saved pages.

For testing ``scrapy backfill``: a CDX server answering the queries Common Crawl's index
server answers (``?url=<domain>&matchType=domain&output=json&from=&to=&filter=&page=``,
``showNumPages=true``) and a static server handing out WARC records by byte range, over a
collection whose every capture is known (:attr:`CdxCollection.captures`, :meth:`expected`).

* **The CDX server is pywb** (``wayback``, pywb 2.10.0), the reference implementation of
  the CDX server API that Common Crawl's index server is built on, serving ``/<coll>/cdx``.
  The index is built by pywb's own indexer (``cdx-indexer -j``, CDXJ) from the WARC files,
  then cut into a **ZipNum** index (gzipped blocks of ``block_lines`` lines + ``cluster.idx``
  + ``cluster.loc``), the format Common Crawl publishes (3000 lines a block, 5 blocks a page
  there; 3 lines and 2 blocks here, so paging shows on a small collection). Paging, as
  pywb's CDX API documentation has it and as served here:

  - ``showNumPages=true`` answers one JSON object ``{"pages": P, "pageSize": S, "blocks": B}``
    (whatever ``output``), ``P = ceil(B / S)``; ``pageSize=N`` changes ``S``.
  - ``page=0..P-1`` reads ``S`` blocks each; ``page=P`` and beyond is a 400
    ``{"message": "Page P invalid: First Page is 0, Last Page is P-1"}``.
  - A query without ``page`` is page 0 only: a client must page.
  - Pages are cut on the URL key range alone; ``from``, ``to`` and ``filter`` apply within a
    page afterwards. So ``showNumPages`` ignores them, and a page can come back with fewer
    lines than others, or none (200, empty body): read every page, do not stop at an
    empty one.
  - On a plain CDXJ index (collection ``plain``, :attr:`CdxCollection.plain_cdx_url`, the
    same captures) ``page`` and ``showNumPages`` are ignored: every page, and the page count
    query, return all matching lines. Hence the ZipNum index.
  - pywb 2.x retries a query that found nothing with a "fuzzy" one (``filter`` and
    ``matchType`` dropped) unless ``allowFuzzy=false``; on an empty page that retry has
    fewer pages and answers 400 "Page N invalid". Common Crawl's server is a pywb fork
    API-compatible with pywb 0.33.2, whose CDX API did not retry, so the config points
    ``rules_file`` at rules without fuzzy rules (:data:`NO_FUZZY_RULES`).

* pywb 2.x answers a query with no captures ``200`` and an empty body; Common Crawl's live
  server answers ``404 {"message": "No Captures found for: ..."}`` and ``503`` when it is
  overloaded. :attr:`CdxCollection.cc_cdx_url` is a thin front on pywb that answers both
  ways (``front.fail_first = n``: the next ``n`` queries get 503), for the client's error
  handling; :attr:`cdx_url` is pywb itself.
* **pywb lives in its own virtualenv**: it pins ``redis==2.10.6`` (and ``werkzeug``,
  ``pyOpenSSL<26.2``, ``fakeredis<1``), which cannot be installed beside the project's
  ``redis>=5`` (pip: ResolutionImpossible). :func:`pywb_bin` finds its ``wayback`` and
  ``cdx-indexer``: ``$PYWB_BIN``, else ``~/.cache/newsspider/pywb-venv/bin``, else the
  current interpreter's ``bin`` or ``PATH``. Install with::

      python3 -m venv ~/.cache/newsspider/pywb-venv
      ~/.cache/newsspider/pywb-venv/bin/pip install pywb==2.10.0

  (pywb's ``cdx-server`` script is broken in 2.10.0, it imports a name ``pywb.apps.cli``
  lacks; ``wayback`` serves the same API at ``/<coll>/cdx``.) The exact command run is
  ``wayback -b 127.0.0.1 -p PORT`` in the collection folder, whose ``config.yaml`` is::

      rules_file: .../rules.yaml            # NO_FUZZY_RULES
      collections:
        cc:     {index: {type: zipnum, path: .../index/cluster.idx, max_blocks: 2}}
        plain:  {index: .../index/captures.cdxj}

* **The data server** (:class:`RangeServer`, ``http.server``) answers ``Range: bytes=a-b``
  (also ``a-`` and ``-n``) with 206 and ``Content-Range``, 416 with ``bytes */size`` when
  ``a`` is past the end, 200 with the whole file without ``Range``; counts requests per
  path (:attr:`RangeServer.requests`, keys are the CDX ``filename``) and per byte range
  (:meth:`RangeServer.fetches`); :meth:`RangeServer.throttle` makes the next ``n`` requests
  of a path answer 429 with ``Retry-After``.

The collection (:data:`PLAN`): real pages of ``../shared/datasets`` as captures of three
sites of the table, netease (163.com), sina (sina.com.cn) and tencent (qq.com), one WARC
file per capture year (2015, 2016, 2018, 2019, 2020, 2021), each capture a ``request`` and a
``response`` record gzipped per record (warcio, the project's ``write_response_record``),
``WARC-Date`` = the capture time (UTC, at or after the date in the URL). Besides articles:
list pages, non-article pages on the same domains, a non-HTML capture, a 404, redirects
(301 from ``http://`` to ``https://``), articles captured twice, and ONE article whose CDX
``offset`` is wrong (it points inside its record; the range read is not a WARC record).
Sina has no list or non-article page: the datasets hold none with its address.

What a backfill must store: :meth:`CdxCollection.expected` (article URLs with a good 200
capture whose UTC day is within ``since..until``, both included), each once;
:meth:`CdxCollection.unwanted` is every other URL of the site, which it must not store;
:meth:`CdxCollection.bad_offsets` the captures it must count and skip.
"""

from __future__ import annotations

import gzip
import http.client
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import date, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from newsspider.replay import write_response_record

PYWB_VERSION = "2.10.0"
PYWB_VENV_BIN = Path.home() / ".cache" / "newsspider" / "pywb-venv" / "bin"
INSTALL_HINT = (
    "pywb is not installed: python3 -m venv ~/.cache/newsspider/pywb-venv && "
    f"~/.cache/newsspider/pywb-venv/bin/pip install pywb=={PYWB_VERSION} "
    "(its own venv: pywb pins redis==2.10.6, the project needs redis>=5)"
)
COLLECTION = "cc"
PLAIN_COLLECTION = "plain"
SITE_DOMAINS = {"netease": "163.com", "sina": "sina.com.cn", "tencent": "qq.com"}
KINDS = ("article", "list", "other", "404", "redirect", "bad_offset")


def pywb_bin() -> Path | None:
    """The folder holding pywb's ``wayback`` and ``cdx-indexer``, or None."""
    candidates = []
    if os.environ.get("PYWB_BIN"):
        candidates.append(Path(os.environ["PYWB_BIN"]))
    candidates += [PYWB_VENV_BIN, Path(sys.executable).parent]
    which = shutil.which("wayback")
    if which:
        candidates.append(Path(which).parent)
    for folder in candidates:
        if (folder / "wayback").is_file() and (folder / "cdx-indexer").is_file():
            return folder
    return None


# -- the plan: which saved page is captured where and when ---------------------------------------


@dataclass(frozen=True)
class Capture:
    """One capture: a ``response`` record in a WARC file and its line in the index."""

    site: str  #: key of the site row (netease, sina, tencent)
    url: str
    timestamp: str  #: 14 digits, UTC, as the CDX ``timestamp`` and the record's WARC-Date
    kind: str  #: one of :data:`KINDS`
    status: int = 200
    #: ``dataset/id`` of the saved page it holds; "" for the small bodies written here
    #: (404 page, redirect, robots.txt)
    source: str = ""
    mime: str = "text/html"
    location: str = ""  #: a redirect's target
    #: set when built: the CDX ``filename`` (relative to the data server), the record's true
    #: place, and the offset the index gives (differs only for kind ``bad_offset``)
    filename: str = ""
    offset: int = -1
    length: int = -1
    cdx_offset: int = -1
    digest: str = ""

    @property
    def day(self) -> date:
        return datetime.strptime(self.timestamp, "%Y%m%d%H%M%S").date()

    @property
    def year(self) -> int:
        return int(self.timestamp[:4])

    @property
    def cdx_range(self) -> tuple[int, int]:
        """The byte range a client computes from the index: offset .. offset+length-1."""
        return self.cdx_offset, self.cdx_offset + self.length - 1


def _c(site: str, kind: str, ts: str, source: str, url: str, **kw: Any) -> Capture:
    return Capture(site=site, url=url, timestamp=ts, kind=kind, source=source, **kw)


_404_BODY = (
    b"<html><head><title>404 Not Found</title></head>"
    b"<body><h1>404 Not Found</h1><p>The requested URL was not found.</p></body></html>"
)
_ROBOTS_BODY = b"User-agent: *\nDisallow: /special/\n"

# URLs are the datasets' own (checked when building), except where the dataset has none:
# list pages get the section address their page shows itself to be, gne-qq-qq the one
# newsspider/demo/pages/tencent rebuilt from its article id.
PLAN: tuple[Capture, ...] = (
    # netease, 2015 (cx163-zh: money.163.com, published 2015-06-19 .. 2015-07-03)
    _c("netease", "article", "20150702083000", "cx163-zh/cx163-10",
       "http://money.163.com/15/0702/05/ATGCAC2300253B0H.html"),
    _c("netease", "article", "20150703120000", "cx163-zh/cx163-13",
       "http://money.163.com/15/0703/00/ATIFDEES00253B0H.html"),
    _c("netease", "article", "20150705031500", "cx163-zh/cx163-32",
       "http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html"),
    _c("netease", "article", "20150620101010", "cx163-zh/cx163-2",
       "http://money.163.com/15/0619/11/ASFHLQ5D002551G6.html"),
    _c("netease", "other", "20150703000000", "", "http://money.163.com/robots.txt",
       mime="text/plain"),
    # 2016: the same article again (captured in 2015 and 2016), and an article gone (404)
    _c("netease", "article", "20160310120000", "cx163-zh/cx163-32",
       "http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html"),
    _c("netease", "404", "20160412080000", "",
       "http://money.163.com/15/0702/14/ATHCB6Q2002551G6.html", status=404),
    # 2019 (gne-unlabelled-zh)
    _c("netease", "article", "20190908021500", "gne-unlabelled-zh/gne-163-1",
       "https://money.163.com/19/0907/13/EOFOC8MJ00258105.html"),
    _c("netease", "redirect", "20190908030000", "",
       "http://news.163.com/19/0907/09/EOFBHDHQ0001899N.html", status=301,
       location="https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html"),
    _c("netease", "article", "20190908030001", "gne-unlabelled-zh/gne-163-2",
       "https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html"),
    _c("netease", "article", "20190908100000", "gne-unlabelled-zh/gne-163-5",
       "https://news.163.com/19/0907/16/EOG1Q3BU0001875P.html"),
    _c("netease", "bad_offset", "20190909060000", "gne-unlabelled-zh/gne-163-4",
       "https://news.163.com/19/0907/19/EOGDH75K0001899O.html"),
    _c("netease", "article", "20190910040000", "gne-unlabelled-zh/gne-163-6",
       "https://news.163.com/19/0909/16/EOL62R9L0001899N.html"),
    _c("netease", "article", "20191126050000", "gne-unlabelled-zh/gne-163-7",
       "https://tech.163.com/19/1125/11/EUQSGLA300097U7R.html"),
    # 2020: articles, section pages (the row's list_patterns) and the ranking page (neither)
    _c("netease", "article", "20200301070000", "gne-unlabelled-zh/gne-163-8",
       "http://news.163.com/20/0229/18/F6ISIFBD0001899O.html"),
    _c("netease", "list", "20200703150000", "list-pages/gerapy-list-netease_international_news",
       "https://news.163.com/world/"),
    _c("netease", "article", "20200704120000", "gerapy-detail-unlabelled/gerapy-netease_news1",
       "https://news.163.com/20/0704/01/FGLHEVF80001899O.html"),
    _c("netease", "other", "20200801000000", "list-pages/gerapy-list-netease_leaderboard_news",
       "http://news.163.com/special/0001386F/rank_whole.html"),
    _c("netease", "list", "20200802120000", "list-pages/gne-list-163-1",
       "https://news.163.com/"),
    _c("netease", "list", "20200816120000", "list-pages/gerapy-list-netease_rolling_news",
       "https://news.163.com/latest/"),
    # 2021
    _c("netease", "article", "20210219000000", "gne-unlabelled-zh/gne-visible-163-1",
       "https://www.163.com/dy/article/G33O1QTA05372UZS.html"),
    # sina, 2018 and 2019: one article captured twice within 2019, and its http:// redirect
    _c("sina", "article", "20181229031500", "gne-unlabelled-zh/gne-sina-2",
       "https://finance.sina.com.cn/roll/2018-12-28/doc-ihqfskcn2160999.shtml"),
    _c("sina", "redirect", "20190908011459", "",
       "http://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml", status=301,
       location="https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml"),
    _c("sina", "article", "20190908011500", "gne-unlabelled-zh/gne-sina-sina",
       "https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml"),
    _c("sina", "article", "20190910023000", "gne-unlabelled-zh/gne-sina-3",
       "https://finance.sina.com.cn/stock/usstock/c/2019-09-09/doc-iicezzrq4681677.shtml"),
    _c("sina", "article", "20190912044500", "gne-unlabelled-zh/gne-sina-4",
       "https://tech.sina.com.cn/t/2019-09-11/doc-iicezzrq4972166.shtml"),
    _c("sina", "article", "20191020093000", "gne-unlabelled-zh/gne-sina-sina",
       "https://news.sina.com.cn/c/2019-09-07/doc-iicezzrq4076655.shtml"),
    # tencent: 2016, 2019, and in 2020 a WeChat post (not an article) and the news centre
    _c("tencent", "article", "20161015020000", "readability-fixtures-zh/readability-qq",
       "http://tech.qq.com/a/20161014/006270.htm"),
    _c("tencent", "article", "20190908060000", "gne-unlabelled-zh/gne-qq-qq",
       "https://new.qq.com/omn/20190907/20190907A081B000.html"),
    _c("tencent", "other", "20200212000000", "gne-unlabelled-zh/gne-wechat-2",
       "http://mp.weixin.qq.com/s?__biz=MzI2MzEwNTY3OQ==&mid=2648978231&idx=1"
       "&sn=dd091611fcf1aa0c2aef9655f13e7731&chksm=f2506ed7c527e7c1f2430d5303a3e93d60d0bae889"
       "49b03457dbc3bb794f538bc54a91efd6de"),
    _c("tencent", "list", "20200704100000", "list-pages/gerapy-list-tencent_important_news",
       "https://news.qq.com/"),
)  # fmt: skip

#: how far into its record the bad capture's index offset points
BAD_OFFSET_SHIFT = 100
_CHARSETS = {"utf-8": "utf-8", "gb2312": "GB2312", "gbk": "GBK", "gb18030": "GB18030"}


def warc_name(year: int) -> str:
    """The CDX ``filename`` of a year's WARC file, in Common Crawl's folder shape."""
    return f"crawl-data/CC-TEST-{year}/warc/CC-TEST-{year}-00000.warc.gz"


# -- the collection -------------------------------------------------------------------------------


@dataclass
class CdxCollection:
    root: Path  #: the folder holding data/, index/, config.yaml
    captures: list[Capture]
    warcs: list[Path]
    index: Path  #: the plain CDXJ index (bad offset included) the ZipNum index is cut from
    block_lines: int
    page_blocks: int
    cdx_url: str = ""  #: pywb: http://127.0.0.1:PORT/cc/cdx (what --cdx takes)
    plain_cdx_url: str = ""  #: pywb over the plain CDXJ file: no paging
    cc_cdx_url: str = ""  #: the front answering as Common Crawl's server (404, 503)
    data_url: str = ""  #: http://127.0.0.1:PORT2/ (what --data takes; + filename)
    data: RangeServer | None = None
    front: CcFront | None = None
    pywb: subprocess.Popen[bytes] | None = None

    @property
    def data_root(self) -> Path:
        return self.root / "data"

    @property
    def requests(self) -> Counter[str]:
        """Requests per path (a CDX ``filename``) the data server saw, 429s included."""
        assert self.data is not None, "not serving"
        return self.data.requests

    def of_site(self, site: str) -> list[Capture]:
        return [c for c in self.captures if c.site == site]

    def in_range(self, site: str, since: date, until: date) -> list[Capture]:
        """The site's captures whose UTC day is within since..until (both included):
        what ``from=<since>000000&to=<until>235959`` returns before filters."""
        return [c for c in self.of_site(site) if since <= c.day <= until]

    def expected(self, site: str, since: date, until: date) -> set[str]:
        """Article URLs a backfill of ``site`` for since..until must store, each once: those
        with a readable 200 capture in range (status 200, an article URL, good offset)."""
        return {c.url for c in self.in_range(site, since, until) if c.kind == "article"}

    def unwanted(self, site: str, since: date, until: date) -> set[str]:
        """Every other URL of the site in the collection: none of them may be stored (list
        and other pages, the 404, the redirects' own URLs, the bad-offset article, and
        articles captured only outside the range)."""
        return {c.url for c in self.of_site(site)} - self.expected(site, since, until)

    def bad_offsets(self, site: str, since: date, until: date) -> list[Capture]:
        """Captures in range that pass the CC filters but whose record cannot be read:
        the backfill must count and skip them."""
        return [c for c in self.in_range(site, since, until) if c.kind == "bad_offset"]

    def fetches(self, capture: Capture) -> int:
        """How many times the data server was asked for this capture's byte range."""
        assert self.data is not None, "not serving"
        return self.data.fetches(capture.filename, *capture.cdx_range)

    def record_url(self, capture: Capture) -> str:
        return self.data_url + capture.filename


def _read_cases(datasets: Path) -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = {}
    for name in {c.source.split("/")[0] for c in PLAN if c.source}:
        with open(datasets / name / "cases.jsonl", encoding="utf-8") as fh:
            for line in fh:
                case = json.loads(line)
                case["_dir"] = datasets / name
                cases[f"{name}/{case['id']}"] = case
    return cases


def _body_and_headers(
    capture: Capture, cases: dict[str, dict[str, Any]]
) -> tuple[bytes, list[tuple[str, str]]]:
    if capture.kind == "redirect":
        body = b'<html><body>Moved <a href="%s">here</a></body></html>' % capture.location.encode()
        return body, [("Content-Type", "text/html"), ("Location", capture.location)]
    if capture.kind == "404":
        return _404_BODY, [("Content-Type", "text/html")]
    if not capture.source:
        return _ROBOTS_BODY, [("Content-Type", capture.mime)]
    case = cases[capture.source]
    if case["url"] is not None and case["url"] != capture.url:
        raise AssertionError(f"{capture.source}: dataset url {case['url']} != {capture.url}")
    body = (case["_dir"] / case["html_file"]).read_bytes()
    charset = _CHARSETS.get(case.get("encoding") or "utf-8", "utf-8")
    return body, [("Content-Type", f"text/html; charset={charset}")]


def _warc_date(timestamp: str) -> str:
    return datetime.strptime(timestamp, "%Y%m%d%H%M%S").strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_warcs(datasets: Path, data_root: Path) -> list[Capture]:
    """One WARC per capture year: warcinfo, then request + response per capture in time
    order. Returns the plan with each capture's filename, true offset and length."""
    cases = _read_cases(datasets)
    built: list[Capture] = []
    for year in sorted({c.year for c in PLAN}):
        name = warc_name(year)
        path = data_root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            writer = WARCWriter(fh, gzip=True, warc_version="1.1")
            info = {"software": "newsspider tests/cdxserver.py"}
            writer.write_record(writer.create_warcinfo_record(path.name, info))
            for capture in sorted((c for c in PLAN if c.year == year), key=lambda c: c.timestamp):
                body, headers = _body_and_headers(capture, cases)
                date_header = {"WARC-Date": _warc_date(capture.timestamp)}
                split = urllib.parse.urlsplit(capture.url)
                target = split.path + (f"?{split.query}" if split.query else "")
                request = writer.create_warc_record(
                    capture.url,
                    "request",
                    payload=io.BytesIO(b""),
                    length=0,
                    http_headers=StatusAndHeaders(
                        f"GET {target} HTTP/1.1",
                        [
                            ("Host", split.netloc),
                            ("User-Agent", "CCBot/2.0 (https://commoncrawl.org/faq/)"),
                        ],
                        protocol="HTTP/1.1",
                        is_http_request=True,
                    ),
                    warc_headers_dict=date_header,
                )
                writer.write_record(request)
                start = fh.tell()
                write_response_record(
                    writer,
                    capture.url,
                    body,
                    headers,
                    status=capture.status,
                    warc_headers={
                        **date_header,
                        "WARC-Concurrent-To": request.rec_headers.get_header("WARC-Record-ID"),
                    },
                )
                length = fh.tell() - start
                built.append(replace(capture, filename=name, offset=start, length=length))
    return built


def _index(bin_dir: Path, data_root: Path, out: Path) -> None:
    """pywb's indexer over every WARC file: CDXJ with SURT keys, filenames relative to data/."""
    subprocess.run(
        [str(bin_dir / "cdx-indexer"), "--cdxj", "--sort", "--recurse",
         "--dir-root", str(data_root), "--output", str(out), str(data_root)],
        check=True, capture_output=True, env=_pywb_env(), timeout=120,
    )  # fmt: skip


def _corrupt_and_check(index: Path, built: list[Capture]) -> list[Capture]:
    """Check the index against the truth, move the bad capture's offset into its record."""
    by_key = {(c.url, c.timestamp): c for c in built}
    lines = index.read_bytes().splitlines()
    out, final = [], {}
    for line in lines:
        key, ts, blob = line.split(b" ", 2)
        entry = json.loads(blob)
        capture = by_key[(entry["url"], ts.decode())]
        said = (int(entry["offset"]), int(entry["length"]), entry["filename"], entry["status"])
        if said != (capture.offset, capture.length, capture.filename, str(capture.status)):
            raise AssertionError(f"pywb's index disagrees with the WARC writer on {entry}")
        cdx_offset = capture.offset
        if capture.kind == "bad_offset":
            cdx_offset += BAD_OFFSET_SHIFT
            entry["offset"] = str(cdx_offset)
            line = b" ".join((key, ts, json.dumps(entry).encode()))
        final[(capture.url, capture.timestamp)] = replace(
            capture, cdx_offset=cdx_offset, digest=entry["digest"]
        )
        out.append(line)
    if len(final) != len(built):
        raise AssertionError(f"indexed {len(final)} captures of {len(built)}")
    index.write_bytes(b"\n".join(sorted(out)) + b"\n")
    return [final[(c.url, c.timestamp)] for c in built]


def write_zipnum(cdxj: Path, folder: Path, block_lines: int) -> Path:
    """Cut a sorted CDXJ file into a ZipNum index as Common Crawl publishes it: ``cluster.cdx.gz``
    (each block of ``block_lines`` lines its own gzip member), ``cluster.idx`` (one line a
    block: first key and timestamp, part, offset, length, block number from 1) and
    ``cluster.loc`` (part -> file). Returns the ``.idx`` path pywb is given."""
    lines = cdxj.read_bytes().splitlines(keepends=True)
    idx = []
    with open(folder / "cluster.cdx.gz", "wb") as fh:
        for number, first in enumerate(range(0, len(lines), block_lines), start=1):
            block = lines[first : first + block_lines]
            packed = gzip.compress(b"".join(block), mtime=0)
            key = b" ".join(block[0].split(b" ", 2)[:2])
            idx.append(b"%s\tcluster\t%d\t%d\t%d\n" % (key, fh.tell(), len(packed), number))
            fh.write(packed)
    (folder / "cluster.idx").write_bytes(b"".join(idx))
    (folder / "cluster.loc").write_text(f"cluster\t{folder / 'cluster.cdx.gz'}\n", encoding="utf-8")
    return folder / "cluster.idx"


#: pywb's rules file without its ``fuzzy_lookup`` rules: an empty answer stays empty (the
#: module's docstring says why).
NO_FUZZY_RULES = """\
default_filters:
    fuzzy_search_limit: '100'
    not_exts: []
    mimes: []
    url_normalize: []
rules: []
"""


def build_collection(
    datasets: Path, workdir: Path, *, block_lines: int = 3, page_blocks: int = 2
) -> CdxCollection:
    """Write the WARC files, index them with pywb, cut the ZipNum index and pywb's config
    under ``workdir``; nothing is started. Raises RuntimeError without pywb."""
    bin_dir = pywb_bin()
    if bin_dir is None:
        raise RuntimeError(INSTALL_HINT)
    data_root = workdir / "data"
    index_dir = workdir / "index"
    index_dir.mkdir(parents=True, exist_ok=True)
    built = _write_warcs(datasets, data_root)
    cdxj = index_dir / "captures.cdxj"
    _index(bin_dir, data_root, cdxj)
    captures = _corrupt_and_check(cdxj, built)
    idx = write_zipnum(cdxj, index_dir, block_lines)
    rules = workdir / "rules.yaml"
    rules.write_text(NO_FUZZY_RULES, encoding="utf-8")
    (workdir / "config.yaml").write_text(
        "# pywb config written by tests/cdxserver.py: a ZipNum collection (pages) and the same\n"
        "# index as one CDXJ file (no paging); no fuzzy matching (rules.yaml)\n"
        f"rules_file: {rules}\n"
        "collections:\n"
        f"  {COLLECTION}:\n"
        "    index:\n"
        "      type: zipnum\n"
        f"      path: {idx}\n"
        f"      max_blocks: {page_blocks}\n"
        f"  {PLAIN_COLLECTION}:\n"
        f"    index: {cdxj}\n",
        encoding="utf-8",
    )
    warcs = sorted(data_root / name for name in {c.filename for c in captures})
    return CdxCollection(workdir, captures, warcs, cdxj, block_lines, page_blocks)


# -- the data server: byte ranges, 429s, counts ---------------------------------------------------

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


class _RangeHandler(BaseHTTPRequestHandler):
    server: RangeServer
    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _answer(self, head: bool) -> None:
        name = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        range_header = self.headers.get("Range")
        throttled = self.server.count(name, range_header)
        if throttled is not None:
            self._send(429, b"slow down\n", {"Retry-After": str(throttled)}, head)
            return
        root = self.server.root
        path = (root / name).resolve()
        if not name or not path.is_relative_to(root) or not path.is_file():
            self._send(404, b"not found\n", {}, head)
            return
        size = path.stat().st_size
        if range_header is None:
            self._send(200, path.read_bytes(), {"Accept-Ranges": "bytes"}, head)
            return
        match = _RANGE.match(range_header.strip())
        if not match or match.groups() == ("", ""):
            self._send(416, b"bad range\n", {"Content-Range": f"bytes */{size}"}, head)
            return
        first_s, last_s = match.groups()
        if first_s == "":  # bytes=-n: the last n bytes
            first, last = max(0, size - int(last_s)), size - 1
        else:
            first = int(first_s)
            last = min(int(last_s), size - 1) if last_s else size - 1
        if first >= size or last < first:
            self._send(416, b"range not satisfiable\n", {"Content-Range": f"bytes */{size}"}, head)
            return
        with open(path, "rb") as fh:
            fh.seek(first)
            body = fh.read(last - first + 1)
        headers = {"Content-Range": f"bytes {first}-{last}/{size}", "Accept-Ranges": "bytes"}
        self._send(206, body, headers, head)

    def _send(self, status: int, body: bytes, headers: dict[str, str], head: bool) -> None:
        self.send_response(status)
        ctype = "application/octet-stream" if status < 300 else "text/plain"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            with suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class RangeServer(ThreadingHTTPServer):
    """Static files of ``root`` with byte ranges, on 127.0.0.1 (bound on construction)."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _RangeHandler)
        self.root = root.resolve()
        self.lock = threading.Lock()
        #: requests per path (leading "/" stripped: the CDX filename), 429s included
        self.requests: Counter[str] = Counter()
        #: requests per (path, Range header or None), 429s included
        self.ranges: Counter[tuple[str, str | None]] = Counter()
        self._throttle: dict[str, tuple[int, int]] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def throttle(self, path: str, times: int, retry_after: int = 1) -> None:
        """Answer the next ``times`` requests of ``path`` with 429 and ``Retry-After``."""
        with self.lock:
            self._throttle[path] = (times, retry_after)

    def count(self, path: str, range_header: str | None) -> int | None:
        """Count a request; the Retry-After value when it is to be throttled, else None."""
        with self.lock:
            self.requests[path] += 1
            self.ranges[(path, range_header)] += 1
            left, retry_after = self._throttle.get(path, (0, 0))
            if left <= 0:
                return None
            self._throttle[path] = (left - 1, retry_after)
            return retry_after

    def fetches(self, path: str, first: int, last: int) -> int:
        with self.lock:
            return self.ranges[(path, f"bytes={first}-{last}")]

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.ranges.clear()
            self._throttle.clear()


# -- the Common Crawl front: 404 for no captures, 503 when told ------------------------------------


class _FrontHandler(BaseHTTPRequestHandler):
    server: CcFront

    def do_GET(self) -> None:
        front = self.server
        with front.lock:
            front.queries.append(self.path)
            fail = front.fail_first > 0
            front.fail_first -= int(fail)
        if fail:
            self._send(503, b"<html><body>503 Service Unavailable</body></html>", "text/html")
            return
        try:
            with urllib.request.urlopen(front.upstream + self.path, timeout=30) as answer:
                status, body, ctype = answer.status, answer.read(), answer.headers["Content-Type"]
        except urllib.error.HTTPError as error:
            status, body, ctype = error.code, error.read(), error.headers["Content-Type"]
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if status == 200 and not body.strip() and "showNumPages" not in query:
            url = query.get("url", [""])[0]
            status, ctype = 404, "application/json"
            body = json.dumps({"message": f"No Captures found for: {url}"}).encode()
        self._send(status, body, ctype)

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype or "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class CcFront(ThreadingHTTPServer):
    """A pass-through to pywb at ``upstream`` (``http://127.0.0.1:PORT``) answering as Common
    Crawl's server does where pywb 2.x differs."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _FrontHandler)
        self.upstream = upstream
        self.lock = threading.Lock()
        self.queries: list[str] = []  #: every path+query asked, in order
        self.fail_first = 0  #: the next n queries get 503 (Common Crawl's "slow down")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def _thread(server: ThreadingHTTPServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# -- pywb -----------------------------------------------------------------------------------------


def _pywb_env() -> dict[str, str]:
    # pywb's venv must not see the project's site-packages through PYTHONPATH
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def start_pywb(root: Path, timeout: float = 90.0) -> tuple[subprocess.Popen[bytes], str]:
    """``wayback -b 127.0.0.1 -p PORT`` in ``root`` (its config.yaml); returns the process
    and ``http://127.0.0.1:PORT`` once a CDX query answers. Its log is ``root/pywb.log``."""
    bin_dir = pywb_bin()
    if bin_dir is None:
        raise RuntimeError(INSTALL_HINT)
    deadline = time.monotonic() + timeout
    for _attempt in range(3):  # a free port can be taken before pywb binds it
        port = _free_port()
        with open(root / "pywb.log", "ab") as log:
            process = subprocess.Popen(
                [str(bin_dir / "wayback"), "-b", "127.0.0.1", "-p", str(port)],
                cwd=root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=_pywb_env(), start_new_session=True,
            )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        probe = f"{base}/{COLLECTION}/cdx?url=example.com&showNumPages=true"
        while process.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(probe, timeout=5) as answer:
                    if answer.status == 200:
                        return process, base
            except (OSError, http.client.HTTPException):  # URLError, refused, reset, timeout
                time.sleep(0.1)
        _stop(process)
        if time.monotonic() >= deadline:
            break
    log_tail = (root / "pywb.log").read_text(errors="replace")[-2000:]
    raise RuntimeError(f"pywb did not start in {timeout:.0f} s:\n{log_tail}")


@contextmanager
def serve(collection: CdxCollection) -> Iterator[CdxCollection]:
    """Start pywb, the Common Crawl front and the data server for a built collection; yield
    a copy of it with their URLs (the built one is left as it was, so it can be served
    again); stop them, and wait for pywb's process, on exit."""
    process, base = start_pywb(collection.root)
    try:
        data = RangeServer(collection.data_root)
        front = CcFront(base)
        with _thread(data), _thread(front):
            yield replace(
                collection,
                cdx_url=f"{base}/{COLLECTION}/cdx",
                plain_cdx_url=f"{base}/{PLAIN_COLLECTION}/cdx",
                cc_cdx_url=f"{front.base}/{COLLECTION}/cdx",
                data_url=data.url,
                data=data,
                front=front,
                pywb=process,
            )
    finally:
        _stop(process)


@contextmanager
def cdx_collection(
    datasets: Path, workdir: Path, *, block_lines: int = 3, page_blocks: int = 2
) -> Iterator[CdxCollection]:
    """Build the collection under ``workdir`` and serve it for the ``with`` block."""
    collection = build_collection(
        datasets, workdir, block_lines=block_lines, page_blocks=page_blocks
    )
    with serve(collection) as served:
        yield served


def cdx_lines(endpoint: str, **params: Any) -> list[dict[str, Any]]:
    """GET a CDX query (``params`` may hold lists: ``filter=[...]``); the JSON lines."""
    query = urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(f"{endpoint}?{query}", timeout=30) as answer:
        return [json.loads(line) for line in answer.read().splitlines() if line.strip()]
