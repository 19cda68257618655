"""One archived HTTP response out of the bytes a record fetch returned.

A Common Crawl-style record fetch returns one gzip member holding one WARC ``response``
record (``Range: bytes=offset-end`` of a ``.warc.gz``); the Wayback Machine's ``id_``
fetch returns the archived response itself. :func:`read_record` turns the first into
status, headers and body (warcio: a single small record, where a scanning library's
speed does not matter), and says why when it cannot: a wrong offset lands mid-record and
reads as garbage, a record may be a ``revisit`` or for another URL.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

__all__ = ["ArchivedResponse", "RecordError", "read_record"]


class RecordError(ValueError):
    """The bytes are not the response record asked for; ``reason`` names why."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ArchivedResponse:
    """What the site answered when the archive captured it."""

    url: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def read_record(data: bytes, url: str | None = None) -> ArchivedResponse:
    """The first ``response`` record of ``data`` (a WARC record, gzipped or not).

    ``url``: the capture's URL; a record for another URL (an offset pointing at the wrong
    record) is refused. :class:`RecordError` with reason ``bad_record`` (not a WARC
    record), ``not_response`` or ``other_url``.
    """
    try:
        for record in ArchiveIterator(io.BytesIO(data)):
            if record.rec_type != "response":
                raise RecordError("not_response", record.rec_type)
            target = record.rec_headers.get_header("WARC-Target-URI") or ""
            if url is not None and target and _bare(target) != _bare(url):
                raise RecordError("other_url", target)
            http = record.http_headers
            if http is None:
                raise RecordError("bad_record", "no HTTP headers")
            status = int((http.get_statuscode() or "0")[:3] or 0)
            headers = {name: value for name, value in http.headers}
            return ArchivedResponse(
                target or url or "", status, headers, record.content_stream().read()
            )
    except (ArchiveLoadFailed, ValueError, OSError, EOFError) as exc:
        if isinstance(exc, RecordError):
            raise
        raise RecordError("bad_record", str(exc)[:200]) from None
    raise RecordError("bad_record", "no record")


def _bare(url: str) -> str:
    """A URL without scheme, for comparing what the index and the record say."""
    return url.split("://", 1)[-1].rstrip("/")
