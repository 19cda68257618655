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
from datetime import UTC, tzinfo
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from lxml import etree

from .blocks import strip_private_use
from .encoding import decode_html
from .errors import ExtractionError
from .model import ExtractedArticle

__all__ = [
    "DEFAULT_TZ",
    "Page",
    "china_sign",
    "content_type_of",
    "empty_article",
    "load_page",
    "page_zone",
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
    #: whether the caller named the zone (False: a page of no known site, whose zone is
    #: :data:`DEFAULT_TZ` when it shows a sign of China, else UTC: :func:`page_zone`)
    tz_known: bool = True
    #: what :func:`.record.scan_page` read before the method changed the tree (set by
    #: :class:`.method.Extractor`), and the site's own name (``本报讯``), when given
    scan: Any = None
    site_name: str | None = None
    #: the decoded markup the tree was parsed from
    markup: str = ""


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


#: Hosts whose pages are Chinese by their domain (mainland, Hong Kong, Macau, Taiwan: all
#: +08:00).
CHINESE_TLDS = (".cn", ".hk", ".mo", ".tw")
#: A page is Chinese by its text when its ``<title>`` is at least this share Han characters,
#: or its markup holds at least :data:`CHINA_MIN_HAN` Han characters and they are more
#: than :data:`CHINA_HAN_OVER_KANA` times its kana and hangul (Japanese and Korean pages
#: write Han characters too).
CHINA_TITLE_SHARE = 0.3
CHINA_MIN_HAN = 100
#: Under this many Han characters a page shows no Chinese text; between this and
#: :data:`CHINA_MIN_HAN` it does when they outnumber its Latin words.
CHINA_FEW_HAN = 10
_SCRIPTS = re.compile(r"<(script|style)\b.*?</\1\s*>", re.I | re.S)
_TAGS = re.compile(r"<[^>]*>")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
CHINA_HAN_OVER_KANA = 20
#: How much of the markup is searched for the title and the declared language, and for
#: Han characters.
CHINA_HEAD_CHARS = 20_000
CHINA_TEXT_CHARS = 300_000
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_KANA_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7a3]")
_ZH_DECLARED = re.compile(
    r"^<html\b[^>]*\blang\s*=\s*[\"']?\s*zh(?![a-z])"
    r"|^<meta\b(?=[^>]*(?:og:locale|content-language))[^>]*\bcontent\s*=\s*[\"']?\s*zh(?![a-z])",
    re.I,
)
_TITLE = re.compile(r"<title[^>]*>([^<]{1,300})", re.I)


#: Every byte but the UTF-8 lead bytes of U+4000-U+9FFF (the CJK ideographs): what is
#: left of a page's UTF-8 once these are deleted counts its Han characters.
_NOT_HAN_LEADS = bytes(b for b in range(256) if not 0xE4 <= b <= 0xE9)


def _han_count(text: str) -> int:
    """How many Han characters ``text`` holds, roughly (the lead bytes of its UTF-8: two
    C-level passes, far faster than a regular expression over a whole page)."""
    if text.isascii():
        return 0
    return len(text.encode("utf-8", "surrogatepass").translate(None, _NOT_HAN_LEADS))


def _declares_zh(head: str) -> bool:
    """Whether the start of a page declares a ``zh`` language: ``<html lang>``, ``og:locale``
    or ``Content-Language`` (each ``zh`` found is read in its own tag)."""
    for variant in ("zh", "ZH", "Zh"):
        at = head.find(variant)
        while at >= 0:
            lt = head.rfind("<", 0, at)
            gt = head.find(">", at)
            if lt >= 0 and gt >= 0 and head.rfind(">", lt, at) < 0:
                tag = head[lt : gt + 1]
                if _ZH_DECLARED.search(tag):
                    return True
            at = head.find(variant, at + 2)
    return False


def china_sign(text: str, url: str | None = None) -> bool:
    """Whether a page (its decoded markup ``text`` and address) shows any sign of China:
    Chinese text (its title mostly Han characters, or many Han characters and few kana or
    hangul, or on a short page more Han characters than Latin words), a declared ``zh``
    language (``<html lang>``, ``og:locale``, ``Content-Language``), or a Chinese domain
    (:data:`CHINESE_TLDS`).

    ``page_zone``'s rule for a page of no known site: only such a page has its zone-less
    times read as Asia/Shanghai; any other page's are read as UTC, not as Beijing time.
    """
    if url:
        try:
            host = (urlsplit(url).hostname or "").rstrip(".").lower()
        except ValueError:
            host = ""
        if host.endswith(CHINESE_TLDS):
            return True
    head = text[:CHINA_HEAD_CHARS]
    if (m := _TITLE.search(head)) is not None:
        title = "".join(m.group(1).split())
        if title and len(_HAN.findall(title)) >= CHINA_TITLE_SHARE * len(title):
            return True
    if _declares_zh(head):
        return True
    sample = text[:CHINA_TEXT_CHARS]
    han = _han_count(sample)
    if han < CHINA_FEW_HAN or han <= CHINA_HAN_OVER_KANA * len(_KANA_HANGUL.findall(sample)):
        return False
    if han >= CHINA_MIN_HAN:
        return True
    # a short page: its text (markup, scripts and styles left out) must be more Han
    # characters than Latin words (an English page's language menu is not)
    words = _TAGS.sub(" ", _SCRIPTS.sub(" ", sample))
    return han >= len(_LATIN_WORD.findall(words))


def page_zone(text: str, url: str | None = None) -> tzinfo:
    """The zone of zone-less times on a page of no known site: :data:`DEFAULT_TZ` when the
    page shows a sign of China (:func:`china_sign`), else UTC."""
    return DEFAULT_TZ if china_sign(text, url) else UTC


def resolve_tz(tz: tzinfo | str | None) -> tzinfo:
    """A site's zone given as a tzinfo or an IANA name; :data:`DEFAULT_TZ` for None (a
    caller that knows the page passes :func:`page_zone` instead)."""
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
    url: str | None = None,
) -> Page:
    """Decode (Li & Jiang §1 (1)) and parse (Zou & Zhong §1.2.1 step 1) one page.

    ``html`` is the raw bytes as served or an already decoded string;
    ``headers`` may carry the HTTP Content-Type (its charset is tried first).
    ``tz`` is the site's zone; without one, the page's own (:func:`page_zone`, which
    reads ``url`` too). Raises :class:`ExtractionError` for input that is not HTML at
    all (empty, binary) and ``TypeError`` for anything but bytes or str.
    """
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
    zone = resolve_tz(tz) if tz is not None else page_zone(text, url)
    return Page(parse_html(text, raw), encoding, zone, tz is not None, markup=text)


def empty_article(page: Page, url: str | None, mode: str) -> ExtractedArticle:
    """The result for a page in which lxml found no document."""
    return ExtractedArticle(None, None, None, "", page.encoding, mode, url)
