"""CDX indexes: where a web archive says it holds a site's pages, and which captures to fetch.

A CDX server answers per-site queries over an archive's captures. Two dialects:

- **Common Crawl's index API** (pywb's, and any CC-compatible server):
  ``<endpoint>?url=<domain>&matchType=domain&output=json&from=<ts>&to=<ts>
  &filter=status:200&filter=mime:text/html&page=<n>``, answered with one JSON object per
  line (``url``, ``timestamp``, ``status``, ``mime``, ``digest``, ``length``, ``offset``,
  ``filename``); ``showNumPages=true`` answers ``{"pages": P, ...}`` and every page up to
  ``P - 1`` must be read (``from``/``to``/``filter`` apply after paging, so a page can be
  empty). A record is fetched from ``<data prefix><filename>`` with
  ``Range: bytes=<offset>-<offset + length - 1>``.
- **The Wayback Machine's CDX API** (``https://web.archive.org/cdx/search/cdx``): the same
  query with ``filter=statuscode:200`` and ``filter=mimetype:text/html``, answered with a
  JSON array whose first row names the fields; a record is the archived response itself,
  fetched as ``https://web.archive.org/web/<timestamp>id_/<url>``.

:func:`choose` keeps the captures a backfill fetches (module ``newsspider.backfill``'s
rules): the site's article URLs, in the date range, one per canonical URL (the latest in
range). Pure: strings in, captures out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from urllib.parse import urlencode

from newsspider.extraction.dates import date_from_url
from newsspider.sites.model import Site

__all__ = [
    "CC_DATA",
    "CC_INDEX",
    "WAYBACK_CDX",
    "WAYBACK_DATA",
    "Archive",
    "Capture",
    "archive_from_options",
    "choose",
    "closest",
    "in_range",
    "page_query_url",
    "parse_cdx",
    "parse_num_pages",
    "query_url",
]

CC_INDEX = "https://index.commoncrawl.org/{crawl}-index"
CC_DATA = "https://data.commoncrawl.org/"
WAYBACK_CDX = "https://web.archive.org/cdx/search/cdx"
WAYBACK_DATA = "https://web.archive.org/web/"

_HTML_MIMES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True, slots=True)
class Archive:
    """One CDX endpoint and where its records are: ``name`` is what stored rows say
    (``cc:CC-MAIN-2024-10``, ``wayback``, or the CDX URL)."""

    name: str
    cdx: str
    data: str | None
    wayback: bool = False

    def record_url(self, capture: Capture) -> str:
        """Where ``capture``'s bytes are fetched."""
        if self.wayback:
            return f"{self.data or WAYBACK_DATA}{capture.timestamp}id_/{capture.url}"
        return f"{self.data or ''}{capture.filename}"

    def record_headers(self, capture: Capture) -> dict[str, str]:
        """The ``Range`` of a WARC record in its file (none for the Wayback Machine)."""
        if self.wayback:
            return {}
        end = capture.offset + capture.length - 1
        return {"Range": f"bytes={capture.offset}-{end}"}


def archive_from_options(archive: str | None, cdx: str | None, data: str | None) -> list[Archive]:
    """The archives of ``--archive cc:CRAWL[,CRAWL...]``, ``--archive wayback`` or
    ``--cdx URL [--data URL]``; ``ValueError`` with a readable message otherwise."""
    if archive and cdx:
        raise ValueError("give --archive or --cdx, not both")
    if cdx:
        if not cdx.startswith(("http://", "https://")):
            raise ValueError(f"--cdx {cdx!r} is not an http(s) URL")
        if data is not None and not data.startswith(("http://", "https://")):
            raise ValueError(f"--data {data!r} is not an http(s) URL")
        wayback = "/cdx/search/cdx" in cdx
        if data is None and not wayback:
            raise ValueError("--cdx needs --data URL, the prefix of the archive's WARC files")
        return [Archive(cdx, cdx, data, wayback)]
    if archive == "wayback":
        return [Archive("wayback", WAYBACK_CDX, WAYBACK_DATA, True)]
    if archive and archive.startswith("cc:"):
        crawls = [c.strip() for c in archive[3:].split(",") if c.strip()]
        if not crawls or not all(c.startswith(("CC-MAIN-", "CC-NEWS")) for c in crawls):
            raise ValueError(f"--archive {archive!r}: give cc:CC-MAIN-YYYY-WW[,CC-MAIN-...]")
        return [Archive(f"cc:{c}", CC_INDEX.format(crawl=c), CC_DATA) for c in crawls]
    raise ValueError(
        "give --archive cc:CC-MAIN-YYYY-WW, --archive wayback, or --cdx URL --data URL"
    )


@dataclass(frozen=True, slots=True)
class Capture:
    """One line of a CDX answer."""

    url: str
    timestamp: str  # YYYYMMDDhhmmss, UTC
    status: str = ""
    mime: str = ""
    digest: str = ""
    length: int = 0
    offset: int = 0
    filename: str = ""

    @property
    def time(self) -> datetime:
        """The capture's time, aware UTC."""
        ts = (self.timestamp + "00000000000000")[:14]
        return datetime.strptime(ts, "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def query_url(
    archive: Archive,
    domain: str,
    *,
    since: date,
    until: date | None,
    page: int | None = None,
    num_pages: bool = False,
) -> str:
    """The CDX query for every capture on ``domain`` and below, 200 and HTML, in range."""
    params: list[tuple[str, str]] = [
        ("url", domain),
        ("matchType", "domain"),
        ("output", "json"),
        ("from", since.strftime("%Y%m%d")),
    ]
    if until is not None:
        params.append(("to", until.strftime("%Y%m%d") + "235959"))
    if archive.wayback:
        params += [("filter", "statuscode:200"), ("filter", "mimetype:text/html")]
    else:
        params += [("filter", "status:200"), ("filter", "mime:text/html")]
    if num_pages:
        params.append(("showNumPages", "true"))
    elif page is not None:
        params.append(("page", str(page)))
    sep = "&" if "?" in archive.cdx else "?"
    return archive.cdx + sep + urlencode(params)


def page_query_url(archive: Archive, url: str) -> str:
    """The CDX query for the captures of one URL (a multi-page article's next page), 200
    and HTML, any time: the capture wanted is the one nearest its first page's
    (:func:`closest`), which may fall outside the backfill's range by a day."""
    params: list[tuple[str, str]] = [("url", url), ("matchType", "exact"), ("output", "json")]
    if archive.wayback:
        params += [("filter", "statuscode:200"), ("filter", "mimetype:text/html")]
    else:
        params += [("filter", "status:200"), ("filter", "mime:text/html")]
    sep = "&" if "?" in archive.cdx else "?"
    return archive.cdx + sep + urlencode(params)


def closest(captures: Iterable[Capture], when: datetime) -> Capture | None:
    """The capture nearest in time to ``when`` (the later of two as near), or None."""
    best: Capture | None = None
    for capture in captures:
        gap = abs((capture.time - when).total_seconds())
        if (
            best is None
            or gap < abs((best.time - when).total_seconds())
            or (
                gap == abs((best.time - when).total_seconds())
                and capture.timestamp > best.timestamp
            )
        ):
            best = capture
    return best


def parse_num_pages(body: bytes) -> int | None:
    """``showNumPages``: CC answers ``{"pages": P}``, the Wayback Machine a bare number;
    None when the server does not page (then one unpaged query reads everything)."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        value = json.loads(text.splitlines()[0]) if text else None
    except (ValueError, IndexError):
        return None
    if isinstance(value, dict) and isinstance(value.get("pages"), int):
        return value["pages"]
    if isinstance(value, int):
        return value
    return None


def _int(value: object) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def parse_cdx(body: bytes) -> Iterator[Capture]:
    """Captures of a CDX answer in either dialect; lines that are not captures are
    skipped (an empty page, a 'no captures' message)."""
    text = body.decode("utf-8", errors="replace").strip()
    if not text:
        return
    if text.startswith("["):  # the Wayback Machine: a header row, then rows
        try:
            rows = json.loads(text)
        except ValueError:
            return
        if not rows or not isinstance(rows[0], list):
            return
        header = [str(h) for h in rows[0]]
        for row in rows[1:]:
            record = dict(zip(header, row, strict=False))
            if record.get("original") and record.get("timestamp"):
                yield Capture(
                    url=str(record["original"]),
                    timestamp=str(record["timestamp"]),
                    status=str(record.get("statuscode", "")),
                    mime=str(record.get("mimetype", "")),
                    digest=str(record.get("digest", "")),
                    length=_int(record.get("length")),
                )
        return
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or not record.get("url") or not record.get("timestamp"):
            continue
        yield Capture(
            url=str(record["url"]),
            timestamp=str(record["timestamp"]),
            status=str(record.get("status", "")),
            mime=str(record.get("mime", "")),
            digest=str(record.get("digest", "")),
            length=_int(record.get("length")),
            offset=_int(record.get("offset")),
            filename=str(record.get("filename", "")),
        )


def in_range(site: Site, capture: Capture, since: date, until: date | None) -> bool:
    """Is the capture in the range: by its time (UTC day), as the CDX server's own
    ``from``/``to`` count; by the date its URL carries when the index gives no usable
    time."""
    try:
        day = capture.time.date()
    except ValueError:
        when = date_from_url(capture.url, site.zone)
        if when is None:
            return False
        day = when.date()
    return since <= day and (until is None or day <= until)


def choose(
    site: Site,
    captures: Iterable[Capture],
    since: date,
    until: date | None,
    *,
    skip: Iterable[str] = (),
) -> list[Capture]:
    """The captures to fetch: 200 HTML captures of the site's article URLs, in range
    (:func:`in_range`), the latest one per canonical URL, none of those in ``skip`` (URLs
    stored already), in canonical URL order; ``url`` stays as the archive has it (the
    Wayback Machine fetches by it)."""
    skipped = set(skip)
    best: dict[str, Capture] = {}
    for c in captures:
        if c.status and c.status != "200":
            continue
        if c.mime and not c.mime.lower().startswith(_HTML_MIMES) and c.mime != "unk":
            continue
        url = site.canonical_url(c.url)
        if not site.owns(url) or not site.is_article(url) or url in skipped:
            continue
        if not in_range(site, c, since, until):
            continue
        if url not in best or c.timestamp > best[url].timestamp:
            best[url] = c
    return [best[u] for u in sorted(best)]


def day_start(day: date) -> datetime:
    """Midnight UTC of ``day``."""
    return datetime.combine(day, time(0), tzinfo=UTC)
