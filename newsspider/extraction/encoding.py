"""Decode a page's bytes to Unicode before anything else reads it.

Li & Jiang 2012 §1 starts by normalising every page to
Unicode: the HTTP header's charset, then ``<meta charset>``, then chardet, a
declared charset that fails to decode being overruled. Chinese news pages
arrive as GB2312/GBK/GB18030, Big5 or UTF-8, and their declarations are often
wrong (pages saved from a browser are UTF-8 whatever their ``<meta>`` says;
"gb2312" pages use GBK characters), so the order here is:

1. a byte-order mark (UTF-8, UTF-16 LE/BE) wins;
2. input that is not text at all (empty, a known binary signature, many
   control bytes) raises :class:`ExtractionError`;
3. bytes that decode strictly as UTF-8 and contain non-ASCII are UTF-8,
   whatever is declared: multi-byte UTF-8 is very unlikely to be accidental;
4. the declared charsets, HTTP ``Content-Type`` first, then ``<meta>`` in the
   first :data:`META_SCAN_BYTES` (a bytes regex, not a parse), decoded
   strictly. The GB family is always decoded as GB18030, its superset;
   "iso-8859-1", "latin-1" and "us-ascii" mean windows-1252 as in browsers,
   and such a Latin declaration is weak: Chinese bytes overrule it;
5. sniffing, cheapest first (chardet costs far more than a strict decode):
   strict GB18030, checked for plausibility because Big5 (and Latin) bytes
   also pass it, then Big5;
6. pages with a few broken sequences: UTF-8, the declared charset or GB18030
   when nearly everything decodes (``errors="replace"``);
7. chardet on a bounded prefix, and a last decode with ``errors="replace"``.
"""

from __future__ import annotations

import codecs
import logging
import re
from functools import lru_cache

import chardet

from .errors import ExtractionError

logger = logging.getLogger(__name__)

#: ``<meta>`` declarations are looked for in this many leading bytes.
META_SCAN_BYTES = 4096
#: chardet, the slow last resort, sees at most this many bytes.
CHARDET_MAX_BYTES = 64 * 1024
#: The control-byte test reads this many leading bytes.
BINARY_SAMPLE_BYTES = 8192
#: More control bytes than this share of the sample means binary, not text.
MAX_CONTROL_SHARE = 0.05
#: ... but never fewer than this many (a few stray NULs are tolerated).
MIN_CONTROL_BYTES = 8
#: A GB18030 decode is plausible Chinese when at least this share of its
#: non-ASCII characters is in GB2312 (Big5 or Latin bytes read as GB are not).
MIN_GB2312_SHARE = 0.8
#: A decode with errors is kept when it has this many good non-ASCII
#: characters per U+FFFD.
MIN_GOOD_PER_BAD = 20

UTF8 = "utf-8"
GB18030 = "gb18030"
BIG5 = "big5"
WINDOWS_1252 = "windows-1252"

_BOMS = (
    (codecs.BOM_UTF8, UTF8),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_MAGIC = (
    (b"%PDF", "PDF"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"PK\x03\x04", "ZIP"),
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!\x1a\x07", "RAR"),
    (b"\x7fELF", "ELF"),
    (b"OggS", "Ogg"),
    (b"ID3", "MP3"),
    (b"\x00asm", "WebAssembly"),
)
# Everything but these is a control byte: TAB, LF, FF, CR, ESC, 0x20-0x7E, >= 0x80.
_TEXT_BYTES = bytes([9, 10, 12, 13, 27, *range(0x20, 0x7F), *range(0x80, 0x100)])

_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^"';,\s]+)""", re.I)
_META_CHARSET = re.compile(rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([-\w.:]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']?\s*([-\w.:]+)""", re.I)

# WHATWG Encoding labels Python does not know, and families decoded as one.
_LABELS = {
    "x-gbk": GB18030,
    "csgb2312": GB18030,
    "gb_2312": GB18030,
    "gb_2312-80": GB18030,
    "iso-ir-58": GB18030,
    "csiso58gb231280": GB18030,
    "x-euc-cn": GB18030,
    "windows-936": GB18030,
    "cn-big5": BIG5,
    "csbig5": BIG5,
    "x-x-big5": BIG5,
    "x-cp1252": WINDOWS_1252,
    "iso_8859-1:1987": WINDOWS_1252,
    "csisolatin1": WINDOWS_1252,
    "iso-ir-100": WINDOWS_1252,
    "x-sjis": "shift_jis",
    "unicode-1-1-utf-8": UTF8,
}
_FAMILIES = {
    "gb2312": GB18030,
    "gbk": GB18030,
    "gb18030": GB18030,
    "big5": BIG5,
    "cp950": BIG5,
    "big5hkscs": BIG5,
    "ascii": WINDOWS_1252,
    "iso8859-1": WINDOWS_1252,
    "latin-1": WINDOWS_1252,
    "cp1252": WINDOWS_1252,
    "utf-8": UTF8,
}
# Codecs a page may not declare: not ASCII-based in a way HTML can be, or
# unsafe (WHATWG maps utf-7 and hz to "replacement").
_REFUSED = frozenset({"utf-7", "hz", "unicode-escape", "raw-unicode-escape", "idna", "punycode"})
# A label found in ASCII markup must name a codec that reads that markup as ASCII.
_ASCII_PROBE = bytes(range(0x20, 0x7F)).replace(b"+", b"").replace(b"~", b"").replace(b"\\", b"")
# Big5 as Python knows it, then Microsoft's and Hong Kong's supersets.
_BIG5_CODECS = ("big5", "cp950", "big5hkscs")


def _cp1252_table() -> str:
    """windows-1252 as browsers decode it: its 5 undefined bytes map to C1 controls."""
    chars = []
    for byte in range(256):
        try:
            chars.append(bytes([byte]).decode("cp1252"))
        except UnicodeDecodeError:
            chars.append(chr(byte))
    return "".join(chars)


_CP1252_TABLE = _cp1252_table()


def decode_html(data: bytes, content_type: str | None = None) -> tuple[str, str]:
    """Decode a page, Li & Jiang 2012 §1.

    ``content_type`` is the HTTP ``Content-Type`` header, if any. Returns the
    text and the codec used, lowercase (``"utf-8"``, ``"gb18030"``,
    ``"big5"``, ``"windows-1252"``, ...). Raises :class:`ExtractionError` when
    ``data`` is empty or binary. Pages with a few broken byte sequences are
    decoded with U+FFFD in their place.
    """
    if not data.strip():
        raise ExtractionError("empty document: no bytes to decode")
    for bom, codec in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(codec, errors="replace")
            if not text.strip():
                raise ExtractionError("empty document: nothing after the byte-order mark")
            return text, codec
    utf16 = _utf16_without_bom(data)
    if utf16 is not None:
        return utf16
    _reject_binary(data)
    declared = _declared(data, content_type)
    text, codec = _decide(data, declared)
    if _overruled(declared, codec):
        logger.debug("declared charset %s overruled: decoded as %s", declared[0], codec)
    return text, codec


def _overruled(declared: list[str], used: str) -> str | None:
    """The strongest declared codec when the decode (codec ``used``) went against it."""
    return declared[0] if declared and _FAMILIES.get(used, used) != declared[0] else None


def overruled_declaration(data: bytes, content_type: str | None, used: str) -> str | None:
    """The charset the page declares (header first, then ``<meta>``) when the decode
    that gave codec ``used`` overruled it; None when it declares none or ``used`` is it.

    For callers that know the page's URL and want to say so (the crawl logs it);
    ``used`` is :func:`decode_html`'s codec (``ExtractedArticle.encoding``).
    """
    if used.startswith("utf-16") or any(data.startswith(bom) for bom, _ in _BOMS):
        return None  # a byte-order mark (or UTF-16 found without one) outranks any declaration
    return _overruled(_declared(data, content_type), used)


def _decide(data: bytes, declared: list[str]) -> tuple[str, str]:
    """Steps 3-7 of the module docstring for text without a byte-order mark."""
    if data.isascii():
        return data.decode("ascii"), declared[0] if declared else UTF8
    text = _strict(data, UTF8)
    if text is not None:
        return text, UTF8
    strong = [codec for codec in declared if codec not in (UTF8, WINDOWS_1252)]
    for codec in strong:
        hit = _decode_strict(data, codec)
        if hit is not None:
            return hit
    gb = None if GB18030 in strong else _strict(data, GB18030)
    if gb is not None:
        if _gb_plausible(gb):
            return gb, GB18030
        big5 = None if BIG5 in strong else _decode_strict(data, BIG5)
        if big5 is not None and _odd_count(big5[0]) < _odd_count(gb):
            return big5
    # A declared GB18030 is trusted; a sniffed one must look like Chinese.
    for codec in dict.fromkeys((UTF8, *strong, GB18030)):
        text, used = _decode_lenient(data, codec)
        sniffed_gb = codec == GB18030 and codec not in strong
        if _mostly_valid(text) and not (sniffed_gb and not _gb_plausible(text)):
            return text, used
    if WINDOWS_1252 in declared:
        return _decode_cp1252(data), WINDOWS_1252
    guess = _chardet_guess(data)
    if guess is not None:
        hit = _decode_strict(data, guess)
        if hit is not None:
            return hit
    if gb is not None:
        return gb, GB18030
    candidates = dict.fromkeys([c for c in (guess, *declared) if c] + [UTF8, GB18030, BIG5])
    decodes = [_decode_lenient(data, codec) for codec in candidates]
    return min(decodes, key=lambda hit: hit[0].count("\ufffd"))


# --- declarations -------------------------------------------------------------


def _declared(data: bytes, content_type: str | None) -> list[str]:
    """Usable declared codecs, strongest first: header, ``<meta>``, XML declaration."""
    labels = []
    if content_type:
        m = _HEADER_CHARSET.search(content_type)
        if m:
            labels.append(m.group(1))
    head = data[:META_SCAN_BYTES]
    for pattern in (_META_CHARSET, _XML_ENCODING):
        m = pattern.search(head)
        if m:
            labels.append(m.group(1).decode("ascii"))
    codecs_ = (_codec_for_label(label) for label in labels)
    return list(dict.fromkeys(c for c in codecs_ if c is not None))


@lru_cache(maxsize=256)
def _codec_for_label(label: str) -> str | None:
    """The codec for a charset label, or None when unknown or unusable for HTML."""
    label = label.strip().strip("\"'").lower()
    if label in _LABELS:
        return _LABELS[label]
    try:
        name = codecs.lookup(label).name
        ascii_based = _ASCII_PROBE.decode(name) == _ASCII_PROBE.decode("ascii")
    except (LookupError, UnicodeError):  # unknown, or not a text encoding
        return None
    if name in _REFUSED or not ascii_based:
        return None
    return _FAMILIES.get(name, name)


# --- binary input -------------------------------------------------------------


def _reject_binary(data: bytes) -> None:
    """Raise ExtractionError for a known binary signature or many control bytes."""
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            raise ExtractionError(f"binary content ({kind} signature), not HTML")
    sample = data[:BINARY_SAMPLE_BYTES]
    controls = len(sample.translate(None, _TEXT_BYTES))
    if controls >= MIN_CONTROL_BYTES and controls > MAX_CONTROL_SHARE * len(sample):
        share = controls / len(sample)
        raise ExtractionError(f"binary content ({share:.0%} control bytes), not HTML")


def _utf16_without_bom(data: bytes) -> tuple[str, str] | None:
    """UTF-16 text saved without a BOM: ASCII markup leaves every other byte NUL."""
    sample = data[:1024]
    half = len(sample) // 2
    if half < 8:
        return None
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd > 0.4 * half and even < 0.05 * half:
        codec = "utf-16-le"
    elif even > 0.4 * half and odd < 0.05 * half:
        codec = "utf-16-be"
    else:
        return None
    text = _strict(data, codec)
    return None if text is None else (text, codec)


# --- decoding -----------------------------------------------------------------


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        return None


def _decode_strict(data: bytes, codec: str) -> tuple[str, str] | None:
    """Strict decode with one codec (Big5: with its supersets in turn)."""
    if codec == WINDOWS_1252:
        return _decode_cp1252(data), WINDOWS_1252
    for name in _BIG5_CODECS if codec == BIG5 else (codec,):
        text = _strict(data, name)
        if text is not None:
            return text, name
    return None


def _decode_lenient(data: bytes, codec: str) -> tuple[str, str]:
    if codec == WINDOWS_1252:
        return _decode_cp1252(data), WINDOWS_1252
    if codec == BIG5:
        codec = "big5hkscs"
    return data.decode(codec, errors="replace"), codec


def _decode_cp1252(data: bytes) -> str:
    return codecs.charmap_decode(data, "strict", _CP1252_TABLE)[0]


# --- plausibility -------------------------------------------------------------


def _non_ascii_count(text: str) -> int:
    return len(text) - len(text.encode("ascii", errors="ignore"))


def _gb_plausible(text: str) -> bool:
    """Most non-ASCII characters of a GB18030 decode are in GB2312.

    Real GB pages are nearly all GB2312 even when they use some GBK
    characters; Big5 bytes read as GB18030 give kana, private-use and rare
    GBK ideographs, and Latin bytes give rare GBK ideographs.
    """
    non_ascii = _non_ascii_count(text)
    if not non_ascii:
        return True
    n_ascii = len(text) - non_ascii
    in_gb2312 = (len(text.encode("gb2312", errors="ignore")) - n_ascii) // 2
    return in_gb2312 >= MIN_GB2312_SHARE * non_ascii


# Characters common in Chinese text of either script: Latin-1, punctuation,
# letterlike, arrows, maths, enclosed numbers, shapes, CJK punctuation and
# enclosed, unified ideographs, vertical forms, full-width forms.
_ODD = re.compile(
    "[^\x00-\xff\u2000-\u22ff\u2460-\u24ff\u25a0-\u26ff\u3000-\u303f"
    "\u3200-\u32ff\u4e00-\u9fff\ufe30-\ufe4f\uff00-\uffef]"
)


def _odd_count(text: str) -> int:
    """Characters unusual in Chinese text: private use, kana, Greek, box drawing ..."""
    return sum(1 for _ in _ODD.finditer(text))


def _mostly_valid(text: str) -> bool:
    """A decode with a few U+FFFD among many good non-ASCII characters."""
    bad = text.count("\ufffd")
    good = _non_ascii_count(text) - bad
    return good >= MIN_GOOD_PER_BAD * bad


def _chardet_guess(data: bytes) -> str | None:
    """chardet's codec for the first CHARDET_MAX_BYTES, or None (slow: the last resort)."""
    label = chardet.detect(data[:CHARDET_MAX_BYTES]).get("encoding")
    return _codec_for_label(label) if label else None
