"""The base of every extraction method: one page decoded and parsed.

Every method starts the same way (Zou & Zhong 2011 §1.2.1 step 1; Li & Jiang
2012 §1 (1), (2)): decode the bytes to Unicode (:mod:`.encoding`), then parse
them with lxml, which repairs the markup on the way. :func:`load_page` does
both, with the site's time zone resolved once (:func:`resolve_tz`) and the
HTTP Content-Type read from Scrapy's or a plain mapping (:func:`content_type_of`).

Pure: lxml and the standard library, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from lxml import etree

from .blocks import strip_private_use
from .encoding import decode_html
from .errors import ExtractionError
from .model import ExtractedArticle

__all__ = [
    "DEFAULT_TZ",
    "Page",
    "content_type_of",
    "empty_article",
    "load_page",
    "parse_html",
    "resolve_tz",
]

#: The zone of times given without an offset when the caller names none (mainland sites).
DEFAULT_TZ = ZoneInfo("Asia/Shanghai")

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>")
# Lead bytes of the UTF-8 of the code points the block markers use (U+E000-U+EFFF,
# all private use; planes 15-16, see .blocks). Single bytes on purpose: a one-byte
# ``in`` is memchr, while a two-byte needle such as b"\xee\x80" is much slower,
# since its last byte is an ordinary UTF-8 continuation byte. A false hit
# (U+C0000-U+EFFFF, vanishingly rare) only costs the stripping pass.
_MARKER_BYTES = (b"\xee", b"\xf3", b"\xf4")
# A plain etree parser: lxml.html's adds a Python-level element class lookup per
# element that nothing here needs. ``huge_tree``: libxml2 otherwise stops at depth
# 255 and silently drops the text below (table-layout pages nest deep); with it the
# limit is 2,048. Input size is capped before extraction (DOWNLOAD_MAXSIZE), which
# is the other limit huge_tree lifts.
_PARSER = etree.HTMLParser(encoding="utf-8", default_doctype=False, huge_tree=True)


@dataclass(slots=True)
class Page:
    """A decoded and parsed page. ``root`` is None when lxml finds no document in it."""

    root: etree._Element | None
    encoding: str
    tz: tzinfo
    #: whether the caller named the zone (False: :data:`DEFAULT_TZ`, a page of no known site)
    tz_known: bool = True


def parse_html(text: str, raw: bytes | None = None) -> etree._Element | None:
    """Parse (and repair, Zou & Zhong §1.2.1 step 1) a decoded page; None when lxml
    finds no document.

    ``raw`` may carry the page's own bytes when they are exactly the UTF-8 of
    ``text`` (a strict UTF-8 decode without BOM): they are parsed as they are,
    which saves re-encoding the page.
    """
    if raw is not None and not text.lstrip().startswith("<?xml"):
        data = raw
    else:
        data = _XML_DECLARATION.sub("", text, count=1).encode("utf-8", "surrogatepass")
    if any(marker in data for marker in _MARKER_BYTES):  # rare: markers' code points in use
        data = strip_private_use(data.decode("utf-8", "surrogatepass")).encode(
            "utf-8", "surrogatepass"
        )
    try:
        return etree.fromstring(data, _PARSER)
    except (etree.ParserError, etree.XMLSyntaxError):
        return None


def resolve_tz(tz: tzinfo | str | None) -> tzinfo:
    """A site's zone given as a tzinfo or an IANA name; :data:`DEFAULT_TZ` for None."""
    if tz is None:
        return DEFAULT_TZ
    if isinstance(tz, str):
        return ZoneInfo(tz)
    return tz


def content_type_of(headers: Mapping[Any, Any] | None) -> str | None:
    """The Content-Type header from a str- or bytes-keyed mapping (Scrapy's Headers too)."""
    if not headers:
        return None
    for key, value in headers.items():
        name = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if name.lower() == "content-type":
            if isinstance(value, list | tuple):
                value = value[-1] if value else None
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            return value
    return None


def load_page(
    html: bytes | str,
    *,
    headers: Mapping[Any, Any] | None = None,
    tz: tzinfo | str | None = None,
) -> Page:
    """Decode (Li & Jiang §1 (1)) and parse (Zou & Zhong §1.2.1 step 1) one page.

    ``html`` is the raw bytes as served or an already decoded string;
    ``headers`` may carry the HTTP Content-Type (its charset is tried first).
    Raises :class:`ExtractionError` for input that is not HTML at all (empty,
    binary) and ``TypeError`` for anything but bytes or str.
    """
    zone = resolve_tz(tz)
    if isinstance(html, bytes | bytearray | memoryview):
        html = bytes(html)
        text, encoding = decode_html(html, content_type_of(headers))
    elif isinstance(html, str):
        if not html.strip():
            raise ExtractionError("empty document")
        text, encoding = html, "unicode"
    else:
        raise TypeError(f"html must be bytes or str, not {type(html).__name__}")
    same_bytes = (
        isinstance(html, bytes)
        and encoding == "utf-8"
        and "\ufffd" not in text  # no replacement: the decode was strict
        and not html.startswith(b"\xef\xbb\xbf")
    )
    raw = html if same_bytes and isinstance(html, bytes) else None
    return Page(parse_html(text, raw), encoding, zone, tz is not None)


def empty_article(page: Page, url: str | None, mode: str) -> ExtractedArticle:
    """The result for a page in which lxml found no document."""
    return ExtractedArticle(None, None, None, "", page.encoding, mode, url)
