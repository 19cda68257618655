"""``extract_article``: one saved page in, headline, time and body out.

Pipeline (Zou & Zhong 2011, ALGORITHMS.md §A and §B1):

1. decode the bytes (§B1, :mod:`.encoding`);
2. parse with lxml, which repairs the markup (§A1 step 1);
3. read the page metadata (``<title>``, ``og:title``, JSON-LD, ``<meta>``
   times) *before* the tree is cut into blocks, since type I elements
   (``script``, ``meta``) are deleted by that step;
4. cut into blocks (§A1, :mod:`.blocks`), compute the block statistics and
   the ``mainblockset`` (§A2, :mod:`.blockstats`);
5. title and report time near ``block_i`` / ``block_j`` (§A3).

``mode="paper"`` is the paper alone. ``mode="best"`` (the default) is the
paper plus the improvements of :mod:`.best`, each documented there beside the
paper step it changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from lxml import etree

from .blocks import Blockset, blockset_of, strip_private_use
from .blockstats import BlockStatistics, block_statistics
from .dates import find_date
from .errors import ExtractionError
from .metadata import html_title
from .model import ExtractedArticle

MODES = ("paper", "best")
DEFAULT_TZ = ZoneInfo("Asia/Shanghai")

#: §1.2.3: title and time are searched in blocks i-2 … i+2 (and j-2 … j+2).
NEAR = 2

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>")
# Lead bytes of the UTF-8 of the code points the block markers use (U+E000-U+EFFF,
# all private use; planes 15-16, see .blocks). Single bytes on purpose: a one-byte
# ``in`` is memchr (~0.01 ms a page), a two-byte needle such as b"\xee\x80" is
# ~0.15 ms, since its last byte is an ordinary UTF-8 continuation byte. A false
# hit (U+C0000-U+EFFFF, vanishingly rare) only costs the stripping pass.
_MARKER_BYTES = (b"\xee", b"\xf3", b"\xf4")
# A plain etree parser: lxml.html's adds a Python-level element class lookup
# per element (~0.3 ms a page) that nothing here needs. ``huge_tree``: libxml2
# otherwise stops at depth 255 and silently drops the text below (table-layout
# pages nest deep); with it the limit is 2,048. Input size is capped before
# extraction (DOWNLOAD_MAXSIZE), which is the other limit huge_tree lifts.
_PARSER = etree.HTMLParser(encoding="utf-8", default_doctype=False, huge_tree=True)


def parse_html(text: str, raw: bytes | None = None) -> etree._Element | None:
    """Parse (and repair, §A1 step 1) a decoded page; None when lxml finds no document.

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
    """A site's zone given as a tzinfo or an IANA name; Asia/Shanghai by default."""
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


def extract_article(
    html: bytes | str,
    url: str | None = None,
    *,
    headers: Mapping[Any, Any] | None = None,
    mode: str = "best",
    tz: tzinfo | str | None = None,
) -> ExtractedArticle:
    """Extract headline, publication time and body from one page.

    ``html`` is the raw bytes as served (any Chinese encoding) or an already
    decoded string. ``headers`` may carry the HTTP Content-Type (its charset
    is the first declaration tried). ``tz`` is the site's time zone, used for
    times the page gives without an offset.

    Raises :class:`ExtractionError` when the input is not an HTML page at all
    (empty, binary); a page without an article gives empty ``text``.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    from .page import empty_article, load_page  # page.py imports this module's helpers

    page = load_page(html, headers=headers, tz=tz)
    if page.root is None:
        return empty_article(page, url, mode)
    if mode == "paper":
        return _paper(page.root, url, page.encoding, page.tz)
    from .best import extract_best

    return extract_best(page.root, url, page.encoding, page.tz)


def paper_blocks(root: etree._Element) -> tuple[Blockset, BlockStatistics]:
    """§1.2.1-§1.2.2 on a parsed page (modifies ``root``)."""
    blockset = blockset_of(root, keep_links=False)
    return blockset, block_statistics(blockset.blocknum)


def near(blockset: Blockset, index: int, *, nonempty: bool = False) -> list[int]:
    """Blocks ``index-2 … index+2`` (§1.2.3).

    ``nonempty=True`` (best mode, ``nonempty_window``) counts only blocks with
    text: the paper's window of five blocks often holds nothing but the empty
    blocks between layout tags, so the headline and the time line sit just
    outside it.
    """
    if not nonempty:
        return list(range(max(0, index - NEAR), min(len(blockset), index + NEAR + 1)))
    text = blockset.text
    before = [i for i in range(index - 1, -1, -1) if text[i]][:NEAR]
    after = []
    for i in range(index + 1, len(text)):
        if text[i]:
            after.append(i)
            if len(after) == NEAR:
                break
    return [*reversed(before), index, *after]


def paper_title(
    blockset: Blockset, stats: BlockStatistics, *, nonempty: bool = False
) -> str | None:
    """§1.2.3 title: the highest-level ``h1``-``h6`` among blocks i-2 … i+2."""
    if stats.block_i is None:
        return None
    headings = [
        (blockset.heading(i), i)
        for i in near(blockset, stats.block_i, nonempty=nonempty)
        if blockset.text[i] and blockset.heading(i)
    ]
    return blockset.text[min(headings)[1]] if headings else None


def paper_time_blocks(
    blockset: Blockset, stats: BlockStatistics, *, nonempty: bool = False
) -> list[int]:
    """§1.2.3 candidate blocks for the report time: i-2 … i+2, then j-2 … j+2."""
    if stats.block_i is None or stats.block_j is None:
        return []
    first = near(blockset, stats.block_i, nonempty=nonempty)
    last = [i for i in near(blockset, stats.block_j, nonempty=nonempty) if i not in first]
    return first + last


def paper_time(blockset: Blockset, stats: BlockStatistics, tz: tzinfo) -> datetime | None:
    """§1.2.3 report time: the paper's date pattern, first match near the start, then the end."""
    for i in paper_time_blocks(blockset, stats):
        found = find_date(blockset.text[i], tz)
        if found is not None:
            return found
    return None


def body_text(blockset: Blockset, indices: list[int]) -> str:
    """The body: the text of the chosen blocks, one non-empty block per line."""
    return "\n".join(blockset.text[i] for i in indices if blockset.text[i])


def _paper(root: etree._Element, url: str | None, encoding: str, tz: tzinfo) -> ExtractedArticle:
    """Zou & Zhong 2011 alone (``mode="paper"``)."""
    fallback_title = html_title(root)  # <title> with stop words, §1.2.3
    blockset, stats = paper_blocks(root)
    title = paper_title(blockset, stats)
    title_source = "heading" if title else None
    if title is None and fallback_title:
        title, title_source = fallback_title, "title"
    published = paper_time(blockset, stats, tz)
    return ExtractedArticle(
        title=title,
        published=published,
        published_source="text" if published else None,
        text=body_text(blockset, stats.mainblockset),
        encoding=encoding,
        mode="paper",
        url=url,
        title_source=title_source,
    )


__all__ = ["MODES", "ExtractedArticle", "ExtractionError", "extract_article", "parse_html"]
