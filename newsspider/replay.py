"""Offline replay of WARC archives, and recording live crawls into them.

Three pieces, so an end-to-end crawl can be tested without a network and a
live crawl can be re-run later byte for byte:

* :class:`WarcReplayMiddleware` (setting ``REPLAY_ARCHIVE``) answers every
  request from a WARC file: recorded status, headers and body; 404 with an
  empty body for URLs the archive lacks. It is a downloader middleware rather
  than a download handler because a handler cannot step aside when the
  setting is unset (a handler raising ``NotConfigured`` disables its scheme),
  so it could not be enabled by default in ``settings.py``; and a middleware
  placed on the downloader side (priority 950, past ``HttpCacheMiddleware``)
  leaves everything before it as in a live crawl (robots.txt, user agent,
  redirects, decompression, ``DownloaderStats``) while skipping the download
  slots, so ``DOWNLOAD_DELAY`` does not slow a replay down.
* :class:`WarcRecorderExtension` (setting ``WARC_OUTPUT``) writes a request
  and a response record for every response the downloader fetched. It listens
  to ``response_downloaded``, which fires once per network download before
  any middleware changes the response, so the archive holds what the server
  sent (still compressed when the server compressed it) and replayed
  responses are never recorded again.
* :func:`build_warc` turns dataset folders (``cases.jsonl``, one JSON
  object per page with its ``url`` and ``html_file``, + ``html/``) into an archive with start/list pages linking
  every page, so a spider can crawl the saved pages as if they were live.

Archives are gzip-compressed per record when the path ends in ``.gz``, which
is what lets the replay seek to one record without reading the ones before.
"""

from __future__ import annotations

import html
import io
import json
import logging
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import IO, TYPE_CHECKING, Self
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers, Request, Response
from scrapy.responsetypes import responsetypes
from w3lib.url import canonicalize_url, safe_url_string
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import ChunkedDataReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

__all__ = [
    "SYNTHETIC_BASE_URL",
    "BuildResult",
    "ReplayRecord",
    "WarcIndex",
    "WarcRecorderExtension",
    "WarcReplayMiddleware",
    "build_warc",
    "repair_warc_tail",
    "replay_key",
    "write_response_record",
]

logger = logging.getLogger(__name__)

SYNTHETIC_BASE_URL = "http://replay.local/"
"""Cases without a ``url`` are stored at ``<base>/<dataset>/<id>.html``."""

# Schemes answered locally by their own handlers; everything else is replayed.
_LOCAL_SCHEMES = ("data:", "file:")
# Transfer framing is undone by the HTTP client before Scrapy sees a body.
_HOP_HEADERS = frozenset({"transfer-encoding", "connection", "keep-alive"})


def replay_key(url: str) -> str:
    """The lookup key of a URL: canonical form without the fragment.

    Both the archive's ``WARC-Target-URI`` and the request URL go through it,
    so ``?b=2&a=1`` finds ``?a=1&b=2`` and ``#top`` is ignored.
    """
    return canonicalize_url(safe_url_string(url.strip()), keep_fragments=False)


# --------------------------------------------------------------------------
# Reading


@dataclass(frozen=True, slots=True)
class ReplayRecord:
    """One archived HTTP response, read on demand."""

    url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes


class WarcIndex:
    """URL -> byte offset of the ``response`` records of one WARC file.

    Only offsets are kept (about 100 bytes per URL), so an archive of 100k
    pages costs some 10-20 MB; bodies are read by seeking when asked for.
    When a URL was recorded more than once, the last record wins, except that
    a server error (5xx, 429) never replaces a good answer: a recorded crawl
    that retried a 503 then got a 200 replays the 200. A truncated tail (a
    recorder killed mid-write) is logged and the records before it stay usable.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.offsets: dict[str, int] = {}
        self.records = 0
        self._fh: IO[bytes] | None = None
        self._load()

    def _load(self) -> None:
        failed: set[str] = set()  # keys whose indexed record is a server error
        with open(self.path, "rb") as fh:
            it = ArchiveIterator(fh)
            try:
                for record in it:
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    if record.rec_type != "response" or not uri:
                        continue
                    status = record.http_headers.get_statuscode() if record.http_headers else ""
                    offset = it.get_record_offset()  # reads the record to its end
                    if getattr(record.raw_stream, "limit", 0) > 0:
                        # Fewer bytes than its Content-Length: a torn last record.
                        logger.warning("%s: record of %s is truncated; skipped", self.path, uri)
                        continue
                    self.records += 1
                    key = replay_key(uri)
                    error = status.startswith("5") or status == "429"
                    if key in self.offsets and error and key not in failed:
                        continue
                    self.offsets[key] = offset
                    if error:
                        failed.add(key)
                    else:
                        failed.discard(key)
            except ArchiveLoadFailed as exc:
                if "non-chunked gzip" in str(exc):
                    raise ValueError(
                        f"{self.path}: gzip is not per record, so records cannot be "
                        "read by offset; fix with `warcio recompress IN OUT`"
                    ) from exc
                logger.warning("%s: unreadable after %s records: %s", self.path, self.records, exc)
            except (EOFError, zlib.error, OSError) as exc:
                logger.warning("%s: truncated after %s records: %s", self.path, self.records, exc)

    def __len__(self) -> int:
        return len(self.offsets)

    def __contains__(self, url: str) -> bool:
        return replay_key(url) in self.offsets

    def get(self, url: str) -> ReplayRecord | None:
        """The archived response for ``url``, or None when there is none."""
        offset = self.offsets.get(replay_key(url))
        if offset is None:
            return None
        if self._fh is None:
            self._fh = open(self.path, "rb")  # kept open until close()
        self._fh.seek(offset)
        it = ArchiveIterator(self._fh)
        try:
            record = next(iter(it))
            http = record.http_headers
            headers = list(http.headers) if http else []
            chunked = any(
                k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers
            )
            stream = ChunkedDataReader(record.raw_stream) if chunked else record.raw_stream
            body = stream.read()
            status = int(http.get_statuscode()) if http else 200
            target = record.rec_headers.get_header("WARC-Target-URI") or url
        finally:
            it.close()
        headers = [(k, v) for k, v in headers if k.lower() not in _HOP_HEADERS]
        return ReplayRecord(target, status, headers, body)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _header_bytes(value: str) -> bytes:
    """Undo warcio's header decoding (UTF-8 first, else ISO-8859-1) exactly."""
    try:
        raw = value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw  # warcio fell back to latin-1, so these were the bytes
    return value.encode("utf-8")


class WarcReplayMiddleware:
    """Answer every request from the WARC at ``REPLAY_ARCHIVE``; never download.

    Enable on the downloader side, after everything that shapes a request::

        DOWNLOADER_MIDDLEWARES = {"newsspider.replay.WarcReplayMiddleware": 950}

    Hits return the recorded status, headers (so the Content-Type charset, or
    its absence, reaches the extractor) and body; a recorded 3xx goes back as
    is for ``RedirectMiddleware`` to follow. A miss is a 404 with an empty
    body; for ``/robots.txt`` that means "allow all", as in Scrapy. Only
    ``data:`` and ``file:`` requests pass through, since their handlers do not
    use the network. Stats: ``replay/hit``, ``replay/miss``.
    """

    def __init__(self, archive: Path, stats: StatsCollector) -> None:
        if not archive.is_file():
            # Failing loudly beats NotConfigured here: that would crawl the live web.
            raise FileNotFoundError(f"REPLAY_ARCHIVE not found: {archive}")
        self.index = WarcIndex(archive)
        self.stats = stats
        logger.info(
            "REPLAY_ARCHIVE %s holds %s URLs (%s response records)",
            archive,
            len(self.index),
            self.index.records,
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        path = crawler.settings.get("REPLAY_ARCHIVE")
        if not path:
            raise NotConfigured  # off by default: no "Disabled" warning in every crawl log
        mw = cls(Path(path), crawler.stats)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def process_request(self, request: Request) -> Response | None:
        if request.url.startswith(_LOCAL_SCHEMES):
            return None
        record = self.index.get(request.url)
        if record is None:
            self.stats.inc_value("replay/miss")
            logger.debug("Replay miss (404): %s", request.url)
            return Response(request.url, status=404, body=b"", request=request, flags=["replay"])
        self.stats.inc_value("replay/hit")
        headers = Headers()
        for name, value in record.headers:
            headers.appendlist(name, _header_bytes(value))
        respcls = responsetypes.from_args(headers=headers, url=request.url, body=record.body)
        return respcls(
            url=request.url,
            status=record.status,
            headers=headers,
            body=record.body,
            flags=["replay"],
            request=request,
        )

    def spider_closed(self) -> None:
        self.index.close()


# --------------------------------------------------------------------------
# Writing


def _status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def _open_writer(fh: IO[bytes], path: Path) -> WARCWriter:
    """A writer gzipping each record as its own member when the name ends in .gz."""
    return WARCWriter(fh, gzip=path.name.endswith(".gz"), warc_version="1.1")


def write_response_record(
    writer: WARCWriter,
    url: str,
    body: bytes,
    headers: Sequence[tuple[str, str]] = (("Content-Type", "text/html"),),
    *,
    status: int = 200,
    warc_headers: dict[str, str] | None = None,
) -> None:
    """Append one ``response`` record; Content-Length is set from ``body``.

    Public so tests and tools can add robots.txt, redirects or odd headers to
    an archive built by :func:`build_warc`.
    """
    fields = [(k, v) for k, v in headers if k.lower() not in ("content-length", *_HOP_HEADERS)]
    fields.append(("Content-Length", str(len(body))))
    http = StatusAndHeaders(_status_line(status), fields, protocol="HTTP/1.1")
    record = writer.create_warc_record(
        safe_url_string(url),
        "response",
        payload=io.BytesIO(body),
        length=len(body),
        http_headers=http,
        warc_headers_dict=warc_headers or {},
    )
    writer.write_record(record)


def _warcinfo(writer: WARCWriter, path: Path, **info: str) -> None:
    writer.write_record(
        writer.create_warcinfo_record(path.name, {"software": "newsspider", **info})
    )


def repair_warc_tail(path: Path) -> int:
    """Cut ``path`` after its last whole record (a torn record or garbage at the end, as a
    recorder killed mid-write leaves); return the bytes removed."""
    size = path.stat().st_size
    good = 0
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        try:
            for record in it:
                start, length = it.get_record_offset(), it.get_record_length()
                if getattr(record.raw_stream, "limit", 0) > 0:
                    break
                good = start + length
        except Exception as exc:  # warcio fails on garbage in many ways; the cut is the same
            logger.debug("%s: unreadable after byte %s: %r", path, good, exc)
    if good < size:
        logger.warning("%s: torn tail of %s bytes cut before appending", path, size - good)
        with open(path, "r+b") as fh:
            fh.truncate(good)
    return size - good


class WarcRecorderExtension:
    """Record every downloaded response of a live crawl into ``WARC_OUTPUT``.

    Each response is written with its request (``WARC-Concurrent-To``) as
    gzip members (when the path ends in ``.gz``) and flushed at once, so the
    file is a valid archive at every moment, even if the crawl is killed; it
    is closed on ``spider_closed``. ``data:`` and ``file:`` responses are not
    recorded. An existing file is replaced, or with ``append`` (the nightly run's
    recorder, :mod:`newsspider.nightly.warc`) continued after its last whole record, a
    torn tail (a recorder killed mid-write) cut off first (:func:`repair_warc_tail`).
    Stat: ``warc_output/response_count``.
    """

    def __init__(self, path: Path, stats: StatsCollector, *, append: bool = False) -> None:
        self.path = path
        self.stats = stats
        self.count = 0
        self.append = append
        self.closed = False
        self._fh: IO[bytes] | None = None  # closed on spider_closed
        if not append:  # appending opens at the first response: no file for a crawl of none
            self._open()

    def _open(self) -> IO[bytes]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.append and self.path.is_file():
            repair_warc_tail(self.path)
        self._fh = open(self.path, "ab" if self.append else "wb")
        _warcinfo(_open_writer(self._fh, self.path), self.path, format="WARC File Format 1.1")
        self._fh.flush()
        return self._fh

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        path = crawler.settings.get("WARC_OUTPUT")
        if not path:
            raise NotConfigured  # off by default: no "Disabled" warning in every crawl log
        ext = cls(Path(path), crawler.stats)
        crawler.signals.connect(ext.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def response_downloaded(self, response: Response, request: Request) -> None:
        if self.closed or not response.url.startswith(("http://", "https://")):
            return
        fh = self._fh if self._fh is not None else self._open()
        buf = io.BytesIO()
        writer = _open_writer(buf, self.path)
        resp = self._response_record(writer, response)
        req = self._request_record(writer, request)
        writer.write_request_response_pair(req, resp)
        fh.write(buf.getvalue())  # one write per pair: no half pair on a clean stop
        fh.flush()
        self.count += 1
        self.stats.inc_value("warc_output/response_count")

    @staticmethod
    def _response_record(writer: WARCWriter, response: Response) -> ArcWarcRecord:
        fields = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, vs in response.headers.items()
            for v in vs
            if k.decode("latin-1").lower() not in _HOP_HEADERS
        ]
        http = StatusAndHeaders(_status_line(response.status), fields, protocol="HTTP/1.1")
        warc_headers = {}
        if response.ip_address is not None:
            warc_headers["WARC-IP-Address"] = str(response.ip_address)
        return writer.create_warc_record(
            safe_url_string(response.url),
            "response",
            payload=io.BytesIO(response.body),
            length=len(response.body),
            http_headers=http,
            warc_headers_dict=warc_headers,
        )

    @staticmethod
    def _request_record(writer: WARCWriter, request: Request) -> ArcWarcRecord:
        parts = urlsplit(safe_url_string(request.url))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        fields = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, vs in request.headers.items()
            for v in vs
        ]
        if not any(k.lower() == "host" for k, _ in fields):
            fields.insert(0, ("Host", parts.netloc))
        http = StatusAndHeaders(f"{request.method} {target} HTTP/1.1", fields, is_http_request=True)
        return writer.create_warc_record(
            safe_url_string(request.url),
            "request",
            payload=io.BytesIO(request.body),
            length=len(request.body),
            http_headers=http,
        )

    def spider_closed(self) -> None:
        self.closed = True
        if self._fh is None:
            return
        self._fh.close()
        self._fh = None
        logger.info("WARC_OUTPUT: recorded %s responses in %s", self.count, self.path)


# --------------------------------------------------------------------------
# Building an archive from dataset folders


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What :func:`build_warc` wrote: crawl from ``start_url``."""

    start_url: str
    list_urls: tuple[str, ...]  # start_url first, then ?page=2 ...
    urls: tuple[str, ...]  # article pages, in archive order
    count: int  # article pages written
    duplicates: int  # cases skipped because their URL was already written


def _cases(dataset_dir: Path) -> Iterator[dict]:
    with open(dataset_dir / "cases.jsonl", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _page_url(start_page_url: str, page: int) -> str:
    if page == 1:
        return start_page_url
    sep = "&" if "?" in start_page_url else "?"
    return f"{start_page_url}{sep}page={page}"


def _list_page(links: Sequence[tuple[str, str]], page: int, next_url: str | None) -> bytes:
    items = "\n".join(
        f'<li><a href="{html.escape(url)}">{html.escape(label)}</a></li>' for url, label in links
    )
    nxt = f'<p><a rel="next" href="{html.escape(next_url)}">next</a></p>\n' if next_url else ""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>replay list {page}</title></head>\n"
        f"<body>\n<ul>\n{items}\n</ul>\n{nxt}</body></html>\n"
    ).encode()


def build_warc(
    dataset_dirs: Iterable[Path],
    out: Path,
    *,
    base_url: str | None = None,
    start_page_url: str = "http://replay.local/start.html",
    per_page: int = 50,
    match: str | None = None,
    url_map: Callable[[str], str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> BuildResult:
    """Write every case of ``dataset_dirs`` into the WARC ``out``, plus list pages.

    Each case becomes a ``response`` record at its ``url``, or at
    ``<base_url>/<dataset>/<id>.html`` when the url is null (``base_url``
    defaults to :data:`SYNTHETIC_BASE_URL`). The body is the file's exact
    bytes with ``Content-Type: text/html`` and no charset, because detecting
    the charset is part of what the crawl under test must do. ``match`` keeps
    only cases whose URL (before ``url_map``) matches the regex (``re.search``);
    ``url_map`` rewrites each URL, e.g. onto one host. A URL seen twice is
    written once (counted in ``duplicates``).

    List pages are plain UTF-8 HTML with ``per_page`` links each, chained by
    ``rel="next"`` links: ``start_page_url``, then ``?page=2`` and so on. The
    archive is written to ``out + ".part"`` and renamed when complete. ``progress(1)`` is
    called for each case read, kept or not (a command's bar over
    :func:`newsspider.evaluation.count_cases`).
    """
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    base = (base_url or SYNTHETIC_BASE_URL).rstrip("/") + "/"
    pattern = re.compile(match) if match else None
    out = Path(out)
    part = out.with_name(out.name + ".part")
    seen: set[str] = set()
    links: list[tuple[str, str]] = []
    duplicates = 0
    with open(part, "wb") as fh:
        writer = _open_writer(fh, out)
        _warcinfo(writer, out, description="newsspider build_warc")
        for d in dataset_dirs:
            d = Path(d)
            for case in _cases(d):
                if progress is not None:
                    progress(1)
                url = case.get("url") or f"{base}{d.name}/{case['id']}.html"
                if pattern is not None and not pattern.search(url):
                    continue
                if url_map is not None:
                    url = url_map(url)
                url = safe_url_string(url)
                key = replay_key(url)
                if key in seen:
                    duplicates += 1
                    logger.warning("build_warc: %s/%s repeats %s; skipped", d.name, case["id"], url)
                    continue
                seen.add(key)
                body = (d / case["html_file"]).read_bytes()
                write_response_record(writer, url, body, (("Content-Type", "text/html"),))
                links.append((url, f"{d.name}/{case['id']}"))
        pages = max(1, -(-len(links) // per_page))
        list_urls = tuple(_page_url(start_page_url, n) for n in range(1, pages + 1))
        for n, page_url in enumerate(list_urls, start=1):
            chunk = links[(n - 1) * per_page : n * per_page]
            next_url = list_urls[n] if n < pages else None
            write_response_record(
                writer,
                page_url,
                _list_page(chunk, n, next_url),
                (("Content-Type", "text/html; charset=utf-8"),),
            )
    part.replace(out)
    logger.info("build_warc: %s pages, %s list pages -> %s", len(links), len(list_urls), out)
    return BuildResult(
        start_url=list_urls[0],
        list_urls=list_urls,
        urls=tuple(u for u, _ in links),
        count=len(links),
        duplicates=duplicates,
    )
