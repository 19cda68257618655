"""Whole WARC files read as a stream: the archived pages of the table's sites in them.

``scrapy backfill --warc`` reads files nobody indexed for us: a month of CC-NEWS, an
institution's own crawls, local paths or ``http(s)`` URLs (read as a stream, never
downloaded whole). ``scrapy reextract`` reads the nightly run's archives with the same
reader. Both go through :func:`warc_responses`, built on FastWARC (Resiliparse's WARC
library: the gunzip and the WARC and HTTP header parsing in native code, several times
warcio's speed on gzip, ``benchmarks/warc_scan.py``), and made to survive what real
files hold:

- **a corrupt record** (garbage in a gzip member, a member that is not WARC, an HTTP
  block that cannot be parsed): counted ``corrupt`` once per bad stretch; reading goes
  on at the next gzip member (``.warc.gz``, the format's one record per member) or the
  next ``WARC/1.`` line (``.warc``) that reads as a record;
- **a truncated file** (a download cut short, a recorder killed mid-write): the records
  before the cut are read, the file ends with one ``truncated``, even when the cut falls
  inside a record nobody wanted or inside a gzip header (which FastWARC alone would pass
  over in silence: the tail is checked once the records run out);
- **a stream that breaks** (a timeout, a reset connection): a truncated file, logged.

A corrupt stretch is searched from the start of the last good record on, so the reader
keeps the bytes since that record (:class:`Tape`, at most :data:`WINDOW` of them): a
stream cannot seek, and FastWARC reads ahead.

:class:`WarcScan` is the backfill's filter on top: ``response`` records of the site table's
article URLs (:func:`~newsspider.sites.site_for_url`, :meth:`Site.canonical_url`,
:meth:`Site.is_article`; only the named sites when some are), captured between ``since``
and ``until`` (``WARC-Date``, UTC days), answered 200 with HTML, their body decoded as
Scrapy's middlewares would (``Transfer-Encoding: chunked``, ``Content-Encoding``). Every
other record is counted by reason (:data:`SCAN_REASONS`), never fatal.
"""

from __future__ import annotations

import bisect
import gzip
import logging
import os
import time
import urllib.request
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from fastwarc import ArchiveIterator, WarcRecordType

from newsspider.sites import Site, site_for_url

try:  # Scrapy decodes br only when brotli is installed; so do we
    import brotli
except ImportError:  # pragma: no cover - depends on the environment
    brotli = None

__all__ = [
    "SCAN_REASONS",
    "WINDOW",
    "Tape",
    "WarcPage",
    "WarcResponse",
    "WarcScan",
    "decode_body",
    "is_url",
    "local_missing",
    "open_warc",
    "warc_name",
    "warc_responses",
]

logger = logging.getLogger(__name__)

#: Bytes kept behind the read position at most, to search a corrupt stretch's end in.
WINDOW = 64 << 20
#: Bytes read from the source at a time.
CHUNK = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_MAGIC = b"WARC/1."
_HTML = ("text/html", "application/xhtml+xml")

#: Why a record is not kept, in the order a record meets the checks.
SCAN_REASONS = (
    "not_response",  # warcinfo, request, metadata, revisit... records
    "other_site",  # a response of no site of the table (or none of the named ones)
    "not_article",  # a site's page whose URL matches none of its article patterns
    "out_of_range",  # WARC-Date before --since or after --until
    "too_large",  # a body over DOWNLOAD_MAXSIZE
    "not_200",  # the archived answer was not 200
    "not_html",  # not an HTML page by its Content-Type (or first bytes, when it has none)
    "undecodable",  # a Transfer- or Content-Encoding that could not be undone
    "corrupt",  # a stretch of a file that is not WARC records (read on after it)
    "truncated",  # a file that ends inside a record, or whose stream broke
    "unreadable",  # a file that could not be opened
)


# --------------------------------------------------------------------------
# Sources


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def warc_name(location: str) -> str:
    """The file name of a path or URL, as stored rows say it (``warc:<name>``)."""
    if is_url(location):
        return unquote(urlsplit(location).path.rstrip("/").rsplit("/", 1)[-1]) or location
    return Path(location).name


def open_warc(location: str, *, timeout: float = 60.0, user_agent: str | None = None) -> IO[bytes]:
    """A local file, or an ``http(s)`` URL's body as a stream (``timeout`` per read)."""
    if not is_url(location):
        return open(location, "rb")
    headers = {"User-Agent": user_agent} if user_agent else {}
    request = urllib.request.Request(location, headers=headers)
    return urllib.request.urlopen(request, timeout=timeout)


class Tape:
    """A stream FastWARC reads, that can seek back over the bytes since :meth:`mark`;
    ``consumed`` is the bytes read from its source so far.

    A corrupt stretch is searched from the last good record on, whatever FastWARC read
    ahead. A local file seeks by itself; a network stream cannot, so the chunks read from
    it since the mark are kept (at most :data:`WINDOW` bytes behind the read position). A
    read error of the source ends the stream (``error`` keeps it): the file is then
    truncated.
    """

    def __init__(self, raw: IO[bytes], window: int = WINDOW) -> None:
        self.raw = raw
        self.window = window
        try:
            self.direct = bool(raw.seekable())
        except (AttributeError, OSError, ValueError):
            self.direct = False
        self.starts: list[int] = []  # offset of each kept chunk (network streams)
        self.chunks: list[bytes] = []
        self.end = 0  # offset after the last chunk read
        self.pos = 0
        self.keep = 0
        self.eof = False
        self.error: BaseException | None = None

    @property
    def consumed(self) -> int:
        """Bytes read from the source."""
        return self.end

    def _raw_read(self, n: int) -> bytes:
        if self.eof:
            return b""
        try:
            data = self.raw.read(n)
        except Exception as exc:  # a timeout, a reset: the stream ends here
            self.error = exc
            self.eof = True
            data = b""
        if not data and not self.direct:
            self.eof = True  # a stream read to its end, or broken: nothing more comes
        return data

    def _fill(self, n: int) -> bool:
        data = self._raw_read(max(n, CHUNK))
        if not data:
            return False
        self.starts.append(self.end)
        self.chunks.append(data)
        self.end += len(data)
        self._trim()
        return True

    def _trim(self) -> None:
        keep = max(min(self.keep, self.pos), self.end - self.window)
        drop = bisect.bisect_right(self.starts, keep) - 1
        if drop > 0:
            del self.starts[:drop], self.chunks[:drop]

    def mark(self, offset: int) -> None:
        """Nothing before ``offset`` will be sought again."""
        self.keep = offset

    def read(self, n: int = -1) -> bytes:
        if self.direct:
            data = self._raw_read(n if n is not None and n >= 0 else -1)
            self.pos += len(data)
            self.end = max(self.end, self.pos)
            return data
        if n is None or n < 0:
            while self._fill(CHUNK):
                pass
            n = self.end - self.pos
        while self.pos + n > self.end and self._fill(self.pos + n - self.end):
            pass
        n = min(n, self.end - self.pos)
        if n <= 0:
            return b""
        i = bisect.bisect_right(self.starts, self.pos) - 1
        parts = []
        at, left = self.pos - self.starts[i], n
        while left > 0:
            chunk = self.chunks[i]
            part = chunk if at == 0 and len(chunk) <= left else chunk[at : at + left]
            parts.append(part)
            left -= len(part)
            i, at = i + 1, 0
        self.pos += n
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def seek(self, offset: int, whence: int = 0) -> int:
        if self.direct:
            self.pos = self.raw.seek(offset, whence)
            return self.pos
        if whence == 1:
            offset += self.pos
        elif whence == 2:
            while self._fill(CHUNK):
                pass
            offset += self.end
        while offset > self.end and self._fill(offset - self.end):
            pass
        first = self.starts[0] if self.starts else self.end
        self.pos = max(first, min(offset, self.end))
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self.raw.close()


# --------------------------------------------------------------------------
# Records


@dataclass(slots=True)
class WarcResponse:
    """One ``response`` record as stored: body not decoded, headers as bytes.

    ``truncated``: the file ends inside it (shorter than its ``Content-Length``).
    ``tag``: what the ``want`` filter of :func:`warc_responses` returned for it.
    """

    url: str
    date: str  # WARC-Date as written
    status: int  # 0 when the HTTP block has no status line
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    truncated: bool = False
    tag: Any = None


#: ``want(url, warc_date)``: None to pass a response over unread; anything else is read.
Want = Callable[[str, str], Any]


def warc_responses(
    tape: Tape,
    counts: Counter[str],
    want: Want | None = None,
    *,
    name: str = "",
    max_size: int = 0,
) -> Iterator[WarcResponse]:
    """The ``response`` records of one WARC (gzipped per record or not), in file order.

    ``want(url, date)`` sees each response's WARC headers first; the HTTP block and body
    are read only when it returns something, which rides along as ``tag``. A body over
    ``max_size`` (0: no limit) is passed over, counted ``too_large``. ``counts`` gets
    ``records`` (every record read), ``not_response``, ``too_large``, ``corrupt``,
    ``truncated`` (module docstring); the last response of a truncated file comes with
    ``truncated=True`` when it was wanted.
    """
    gz = tape.read(2) == _GZIP_MAGIC[:2]
    start = 0
    bad = False  # in a corrupt stretch, not counted yet
    read = 0  # records read from this file
    while True:
        tape.seek(start)
        last: int | None = None  # start of the last record read from `start` on
        try:
            for record in ArchiveIterator(tape, parse_http=False):
                at = record.stream_pos
                tape.mark(at)
                last = at
                headers = record.headers
                if headers.get("Content-Length") is None:
                    # Headers cut short (a file's end) or garbled: read on after them.
                    bad = True
                    break
                if bad:
                    counts["corrupt"] += 1
                    bad = False
                counts["records"] += 1
                read += 1
                url = headers.get("WARC-Target-URI")
                if record.record_type != WarcRecordType.response or not url:
                    counts["not_response"] += 1
                    continue
                url = url.strip().strip("<>")
                date = headers.get("WARC-Date") or ""
                tag = True if want is None else want(url, date)
                if tag is None:
                    continue
                if max_size and record.content_length > max_size:
                    counts["too_large"] += 1
                    continue
                try:
                    # A response's block is read as HTTP whatever its Content-Type says
                    # (as warcio does); one that is not has no status.
                    record.is_http = True
                    record.parse_http()
                    body = record.reader.read()
                    http = record.http_headers
                    code = http.status_code if http is not None else None
                    status = code if isinstance(code, int) else 0
                    fields = http.items_bytes() if http is not None else ()
                except (OSError, ValueError, TypeError) as exc:  # gzip error mid-body, bad HTTP
                    logger.info("%s: record of %s unreadable (%s)", name, url, exc)
                    bad = True
                    break  # read on from the next member
                truncated = len(body) < record.content_length
                yield WarcResponse(url, date, status, fields, body, truncated, tag)
                if truncated:
                    _ended(tape, counts, name, f"the record of {url} is cut short")
                    return
            else:
                if not bad and _tail_is_whole(tape, last if last is not None else start, gz):
                    _ended(tape, counts, name, None)
                    return
                bad = True
        except (OSError, ValueError) as exc:
            logger.info("%s: unreadable after byte %s (%s)", name, last or start, exc)
            bad = True
        resume = _next_record(tape, (last if last is not None else start) + 1, gz)
        if resume is None:
            if read or tape.error is not None or _starts_record(tape, 0, gz):
                _ended(tape, counts, name, "an unreadable stretch runs to the end")
            else:
                counts["corrupt"] += 1
                logger.warning("%s: not a WARC file; skipped", name)
            return
        start = resume


def _ended(tape: Tape, counts: Counter[str], name: str, torn: str | None) -> None:
    """The end of a file: whole, or ``truncated`` (once, logged)."""
    if tape.error is not None:
        torn = f"the stream broke ({tape.error!r})"
    if torn is not None:
        counts["truncated"] += 1
        logger.warning("%s: truncated, %s; the records before are kept", name, torn)


def _tail_is_whole(tape: Tape, last: int, gz: bool) -> bool:
    """After the records ran out: does the file end where its last record ends?

    FastWARC stops without a word at a cut inside a gzip header, or inside the body of a
    record it was not asked to read. So the last record is read again from the kept
    bytes: it must be whole, and nothing may follow it.
    """
    tape.seek(last)
    tail = tape.read(-1)
    if tape.error is not None:
        return False
    if not tail.strip():
        return True
    if gz:
        member = zlib.decompressobj(31)
        try:
            data = member.decompress(tail)
        except zlib.error:
            return False
        if not member.eof or member.unused_data:
            return False
        return _record_is_whole(data)
    return _record_is_whole(tail)


def _record_is_whole(data: bytes) -> bool:
    """Is ``data`` one whole uncompressed WARC record (trailing CRLFs and blanks aside)?"""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False
    length = None
    for line in data[:end].split(b"\r\n"):
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value.strip() or b"-1")
    if length is None or length < 0:
        return False
    return len(data) >= end + 4 + length and not data[end + 4 + length :].strip()


def _next_record(tape: Tape, offset: int, gz: bool) -> int | None:
    """The first offset from ``offset`` on where a record starts, or None: a gzip member
    whose first bytes inflate to ``WARC/``, or a ``WARC/1.`` line."""
    magic = _GZIP_MAGIC if gz else _WARC_MAGIC
    at = offset
    while True:
        tape.seek(at)
        chunk = tape.read(CHUNK)
        if len(chunk) < len(magic):
            return None
        i = chunk.find(magic)
        if i < 0:
            at += len(chunk) - len(magic) + 1
            continue
        found = at + i
        if _starts_record(tape, found, gz):
            return found
        at = found + 1


def _starts_record(tape: Tape, offset: int, gz: bool) -> bool:
    if not gz:
        tape.seek(max(0, offset - 1))
        head = tape.read(6 if offset else 5)
        return head == (b"\nWARC/" if offset else b"WARC/")
    tape.seek(offset)
    try:
        head = zlib.decompressobj(31).decompress(tape.read(4096), 16)
    except zlib.error:
        return False
    return head.startswith(b"WARC/")


# --------------------------------------------------------------------------
# Bodies


def _dechunk(body: bytes) -> bytes:
    """Undo ``Transfer-Encoding: chunked``; ValueError when it is not."""
    out = bytearray()
    i = 0
    while True:
        eol = body.find(b"\r\n", i)
        if eol < 0:
            raise ValueError("chunked body without its last chunk")
        size = int(body[i:eol].split(b";", 1)[0].strip() or b"x", 16)
        if size == 0:
            return bytes(out)
        out += body[eol + 2 : eol + 2 + size]
        if eol + 2 + size > len(body):
            raise ValueError("chunked body cut short")
        i = eol + 4 + size


def decode_body(body: bytes, encodings: Sequence[str], *, chunked: bool = False) -> bytes:
    """Undo ``Transfer-Encoding: chunked`` and ``Content-Encoding`` (listed in the order
    applied) as Scrapy's middlewares would; ValueError (or OSError, zlib.error) for one it
    cannot."""
    if chunked:
        body = _dechunk(body)
    for enc in reversed([e.strip().lower() for e in encodings if e.strip()]):
        if enc in ("gzip", "x-gzip"):
            body = gzip.decompress(body)
        elif enc == "deflate":
            try:
                body = zlib.decompress(body)
            except zlib.error:
                body = zlib.decompress(body, -zlib.MAX_WBITS)
        elif enc == "br" and brotli is not None:
            body = brotli.decompress(body)
        elif enc != "identity":
            raise ValueError(f"Content-Encoding {enc}")
    return body


def _looks_html(body: bytes) -> bool:
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith(b"<")


# --------------------------------------------------------------------------
# The backfill's scan


@dataclass(slots=True)
class WarcPage:
    """An archived article page of a site of the table, ready to be an item."""

    url: str  # the site's canonical form
    site: str  # its row's key
    captured_at: datetime  # WARC-Date, aware UTC
    status: int
    headers: dict[str, str]  # the archived HTTP headers, ISO-8859-1 text (last value wins)
    body: bytes  # Transfer- and Content-Encoding undone
    warc: str  # the file's name


@dataclass(slots=True)
class WarcScan:
    """The article pages of ``sites`` (keys; empty: every site of the table) in WARC files.

    ``since``/``until`` keep captures of those UTC days (both included, either open);
    ``max_size`` (bytes, 0: none) passes larger bodies over. After (or during) a scan,
    ``counts`` holds ``records``, ``kept`` and every reason of :data:`SCAN_REASONS`,
    ``bytes`` the bytes read from the files, ``seconds`` the time spent reading.
    """

    sites: Sequence[str] = ()
    since: date | None = None
    until: date | None = None
    max_size: int = 0
    timeout: float = 60.0
    user_agent: str | None = None
    counts: Counter[str] = field(default_factory=Counter)
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    _hosts: dict[str, Site | None] = field(default_factory=dict)

    def scan(self, locations: Iterable[str]) -> Iterator[WarcPage]:
        """Every kept page of every file, file after file, in file order."""
        for location in locations:
            yield from self.scan_file(location)

    def scan_file(self, location: str) -> Iterator[WarcPage]:
        """The kept pages of one file (a path or an ``http(s)`` URL); a file that cannot be
        opened is counted ``unreadable`` and logged."""
        name = warc_name(location)
        self.files += 1
        started = time.perf_counter()
        try:
            raw = open_warc(location, timeout=self.timeout, user_agent=self.user_agent)
        except (OSError, ValueError) as exc:
            self.counts["unreadable"] += 1
            logger.warning("%s: cannot be read (%s); skipped", location, exc)
            return
        tape = Tape(raw)
        try:
            responses = warc_responses(
                tape, self.counts, self._want, name=name, max_size=self.max_size
            )
            for response in responses:
                self.seconds += time.perf_counter() - started
                page = self._page(response, name)
                if page is not None:
                    self.counts["kept"] += 1
                    yield page
                started = time.perf_counter()
        finally:
            self.seconds += time.perf_counter() - started
            self.bytes += tape.consumed
            tape.close()

    def _site(self, url: str) -> Site | None:
        host = urlsplit(url).hostname or ""
        try:
            return self._hosts[host]
        except KeyError:
            pass
        site = site_for_url(url)
        if site is not None and self.sites and site.key not in self.sites:
            site = None
        self._hosts[host] = site
        return site

    def _want(self, url: str, warc_date: str) -> tuple[Site, str, datetime] | None:
        try:
            site = self._site(url)
        except ValueError:  # a URL urlsplit refuses
            site = None
        if site is None:
            self.counts["other_site"] += 1
            return None
        canonical = site.canonical_url(url)
        if not site.is_article(canonical):
            self.counts["not_article"] += 1
            return None
        captured = _warc_date(warc_date)
        if captured is None:
            self.counts["corrupt"] += 1
            return None
        day = captured.date()
        if (self.since and day < self.since) or (self.until and day > self.until):
            self.counts["out_of_range"] += 1
            return None
        return site, canonical, captured

    def _page(self, response: WarcResponse, name: str) -> WarcPage | None:
        if response.truncated:
            return None  # counted with the file
        if response.status != 200:
            self.counts["not_200"] += 1
            return None
        headers: dict[str, str] = {}
        encodings: list[str] = []
        chunked = False
        for key, value in response.headers:
            k, v = key.decode("latin-1"), value.decode("latin-1")
            low = k.lower()
            if low == "content-encoding":
                encodings += v.split(",")
            elif low == "transfer-encoding":
                chunked = chunked or "chunked" in v.lower()
            else:
                headers[k] = v
        ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
        if ctype and not ctype.lower().lstrip().startswith(_HTML):
            self.counts["not_html"] += 1
            return None
        try:
            body = decode_body(response.body, encodings, chunked=chunked)
        except (ValueError, OSError, EOFError, zlib.error) as exc:
            logger.info("%s: undecodable body (%s): %s", name, exc, response.url)
            self.counts["undecodable"] += 1
            return None
        if not ctype and not _looks_html(body):
            self.counts["not_html"] += 1
            return None
        site, canonical, captured = response.tag
        return WarcPage(canonical, site.key, captured, response.status, headers, body, name)

    def skipped(self) -> dict[str, int]:
        """The records not kept, by reason (those that occurred)."""
        return {r: self.counts[r] for r in SCAN_REASONS if self.counts[r]}

    def summary(self) -> str:
        """One line: files, records, bytes, kept, skipped by reason, records/s and MB/s."""
        records = self.counts["records"]
        secs = max(self.seconds, 1e-9)
        skipped = ", ".join(f"{r} {n:,}" for r, n in self.skipped().items()) or "none"
        return (
            f"{self.files} WARC file(s), {records:,} records ({self.bytes / 1e6:,.1f} MB) "
            f"read in {self.seconds:.1f} s: {self.counts['kept']:,} kept; skipped: {skipped}; "
            f"{records / secs:,.0f} records/s, {self.bytes / 1e6 / secs:,.1f} MB/s"
        )


def _warc_date(value: str) -> datetime | None:
    """A WARC-Date as an aware UTC time; None when unreadable."""
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def local_missing(locations: Iterable[str]) -> list[str]:
    """The local paths among ``locations`` that are no file (URLs are not checked)."""
    return [loc for loc in locations if not is_url(loc) and not os.path.isfile(loc)]
