"""Headline and publication time from a page's metadata.

Zou & Zhong 2011 §1.2.3 take the title from ``<h1>``-``<h6>`` near the body
and otherwise from ``<title>``, "filtered with a stop-word list";
:func:`html_title` is that filter.  The other sources here are our
additions: ``og:title`` and JSON-LD ``headline``
(:func:`meta_title`), JSON-LD ``datePublished``,
``article:published_time`` and friends, ``<time datetime>`` and NetEase's
``<html data-publishtime>`` (:func:`meta_published`).  Tencent's
``meta[name=apub:time]`` is not the publication time on its pages and is
never read.

All functions take the parsed document (the root element from
``lxml.html.document_fromstring``), do not modify it, and return ``None``
when they find nothing.  XPaths are compiled once, here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from lxml import etree

from .dates import parse_datetime

__all__ = [
    "DEFAULT_TITLE_STOP_WORDS",
    "META_PUBLISHED_KEYS",
    "META_TITLE_KEYS",
    "MetaScan",
    "html_title",
    "json_ld_article_body",
    "meta_published",
    "meta_title",
    "page_metadata",
    "scan_metadata",
]

#: Site and channel names that end a ``<title>`` (Zou & Zhong §1.2.3's
#: stop-word list).  A title ending in one loses it; a separator-delimited
#: segment equal to one (separators ignored) counts as a site name.
DEFAULT_TITLE_STOP_WORDS: tuple[str, ...] = (
    "_网易新闻",
    "_网易财经",
    "_网易科技",
    "_网易体育",
    "_网易娱乐",
    "_网易",
    "_新浪新闻",
    "-新浪新闻",
    "_新浪财经_新浪网",
    "_新浪科技_新浪网",
    "_新浪网",
    "_腾讯新闻",
    "_腾讯网",
    "|联合早报网",
    "_联合早报网",
    "-联合早报网",
    "_凤凰网",
    "_新华网",
    "-新华网",
    "_中国日报网",
    "-中国日报网",
    " - 中国日报网",
    "_搜狐网",
    "_手机搜狐网",
    "_澎湃新闻-The Paper",
    "_澎湃新闻",
    "_人民网",
    "--人民网",
    "_央视网(cctv.com)",
    "_中国政府网",
)

#: ``<meta>`` keys (name, property or itemprop, compared case-insensitively)
#: that carry the headline, best first; JSON-LD ``headline`` sits between.
META_TITLE_KEYS: tuple[str, ...] = ("og:title", "twitter:title")

#: ``<meta>`` keys that carry the publication time, best first.  The source
#: is reported as ``"meta:" + key``.  ``apub:time`` is deliberately absent.
META_PUBLISHED_KEYS: tuple[str, ...] = (
    "article:published_time",
    "pubdate",
    "publishdate",
    "datePublished",
    "og:release_date",
    "weibo: article:create_at",
    "publish_date",
    "pub_date",
    "article.published",
    "parsely-pub-date",
    "sailthru.date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
)

_ARTICLE_TYPES = re.compile(r"Article|Posting|Report|BlogPosting", re.I)
_MAX_JSON_DEPTH = 8

_XP_HTML_PUBLISHTIME = etree.XPath("/html/@data-publishtime")

# Title separators.  Strong ones split anywhere: "_", "|", "｜", "——" and
# "--".  A hyphen, en dash or em dash splits only with whitespace on both
# sides ("标题 - 网站"), so "COVID-19" and "1-10月" stay whole.
_TITLE_SEPARATORS = re.compile(r"\s*(?:_|\||｜|——|--)\s*|\s+[-–—]\s+")
# A bare hyphen before a trailing site name with a domain or 网 ("…-和讯网",
# "…-CSDN.NET"): split there too, but only when what follows is site-like.
_BARE_HYPHEN = re.compile(r"(?<=\S)[-–](?=\S)")
_SITE_MARKERS = re.compile(
    r"网|新闻|频道|传媒|[日晚早时商]报|在线|门户|\.(?:com|cn|net|org)\b", re.I
)
_SITE_MAX_CHARS = 16  # a site or channel name with a marker is at most this long
_SHORT_SEGMENT = 8  # a trailing segment this short may be a channel/keyword tag
_TRAILING_JUNK = re.compile(r"[\s_|｜\-–—]+$")
_SPACES = re.compile(r"\s+")
# Trailing commas in JSON ("a": 1,}) are the commonest breakage of JSON-LD.
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
# A block wrapped in an HTML comment or a CDATA section, bare or behind ``//`` (WordPress
# schema plugins print ``<![CDATA[ [{...}] ]]>``).
_HTML_COMMENT = re.compile(
    r"^\s*(?:<!--|(?://\s*)?<!\[CDATA\[)|(?:-->|(?://\s*)?\]\]>)\s*$"
)


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = _SPACES.sub(" ", text).strip()
    return text or None


@dataclass(slots=True)
class _Scan:
    """What the metadata functions read, collected in one walk of the tree.

    One C-level ``iter()`` over the four tags instead of one ``//tag`` XPath
    (a whole-tree scan each) per function: one walk of the tree instead of
    four, on the hot path of every method.
    """

    metas: dict[str, str]  # lower-cased name/property/itemprop -> first non-empty content
    json_ld: list[str]  # texts of <script type="application/ld+json">
    titles: list[etree._Element]
    times: list[etree._Element]  # <time datetime>


def _scan(tree: etree._Element) -> _Scan:
    metas: dict[str, str] = {}
    json_ld: list[str] = []
    titles: list[etree._Element] = []
    times: list[etree._Element] = []
    for el in tree.iter("meta", "script", "title", "time"):
        tag = el.tag
        if tag == "meta":
            content = (el.get("content") or "").strip()
            if not content:
                continue
            for attr in ("property", "name", "itemprop"):
                key = el.get(attr)
                if key:
                    metas.setdefault(key.strip().lower(), content)
        elif tag == "script":
            if (el.get("type") or "").lower() == "application/ld+json" and el.text:
                json_ld.append(el.text)
        elif tag == "title":
            titles.append(el)
        elif el.get("datetime") is not None or (el.text and el.text.strip()):
            times.append(el)  # <time datetime>, or a <time> that states its time as text
    return _Scan(metas, json_ld, titles, times)


def _load_json(text: str) -> Any:
    """Parse a JSON-LD block; try once more after light repair; else None."""
    try:
        return json.loads(text, strict=False)
    except ValueError:
        pass
    repaired = _TRAILING_COMMA.sub(r"\1", _HTML_COMMENT.sub("", text.strip()))
    try:
        return json.loads(repaired, strict=False)
    except ValueError:
        return None


def _walk(node: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every JSON object in ``node``: lists, ``@graph`` and nesting followed."""
    if depth > _MAX_JSON_DEPTH:
        return
    if isinstance(node, list):
        for item in node:
            yield from _walk(item, depth + 1)
    elif isinstance(node, dict):
        yield node
        for value in node.values():
            if isinstance(value, dict | list):
                yield from _walk(value, depth + 1)


def _json_ld_objects(texts: list[str]) -> list[dict[str, Any]]:
    """JSON-LD objects of the page, article types first, broken blocks skipped."""
    objects: list[dict[str, Any]] = []
    for text in texts:
        data = _load_json(text)
        if data is not None:
            objects.extend(_walk(data))

    def is_article(obj: dict[str, Any]) -> bool:
        kind = obj.get("@type")
        kinds = kind if isinstance(kind, list) else [kind]
        return any(isinstance(k, str) and _ARTICLE_TYPES.search(k) for k in kinds)

    return sorted(objects, key=lambda obj: not is_article(obj))


@dataclass(slots=True)
class MetaScan:
    """What one walk of a page's tree read: ``<meta>`` values (lower-cased name, property or
    itemprop -> the first non-empty content), ``<title>`` and ``<time>`` elements, and the
    JSON-LD objects (lists, ``@graph`` and nesting followed, article types first). Read once
    (:func:`scan_metadata`), before a method changes the tree, by every reader of metadata."""

    scan: _Scan
    objects: list[dict[str, Any]]

    @property
    def metas(self) -> dict[str, str]:
        return self.scan.metas


def scan_metadata(tree: etree._Element) -> MetaScan:
    """:class:`MetaScan` of a page: one walk of the tree, its JSON-LD parsed."""
    scan = _scan(tree)
    return MetaScan(scan, _json_ld_objects(scan.json_ld))


def _json_ld_value(objects: list[dict[str, Any]], key: str) -> Iterator[str]:
    for obj in objects:
        value = obj.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, str | int) and not isinstance(value, bool):
            yield str(value)


def meta_title(tree: etree._Element) -> tuple[str, str] | None:
    """(headline, source) from og:title, JSON-LD ``headline``, twitter:title.

    Sources are ``"og:title"``, ``"json-ld"`` and ``"twitter:title"``; the
    first non-empty one wins.  Whitespace runs are collapsed.
    """
    scan = _scan(tree)
    return _meta_title(scan, _json_ld_objects(scan.json_ld))


def _meta_title(scan: _Scan, objects: list[dict[str, Any]]) -> tuple[str, str] | None:
    metas = scan.metas
    if title := _clean(metas.get("og:title")):
        return title, "og:title"
    for value in _json_ld_value(objects, "headline"):
        if title := _clean(value):
            return title, "json-ld"
    if title := _clean(metas.get("twitter:title")):
        return title, "twitter:title"
    return None


def _site_like(segment: str, names: frozenset[str], tag_below: int = 0) -> bool:
    """Does this title segment look like a site or channel name?

    ``tag_below`` > 0 also accepts a short tag (at most ``_SHORT_SEGMENT``
    characters and under ``tag_below``), as trailing segments may be.
    """
    if not segment or segment in names:
        return True
    if len(segment) <= _SITE_MAX_CHARS and _SITE_MARKERS.search(segment):
        return True
    return len(segment) <= _SHORT_SEGMENT and len(segment) < tag_below


def strip_site_names(title: str, stop_words: Iterable[str] = DEFAULT_TITLE_STOP_WORDS) -> str:
    """Remove site and channel names from a ``<title>`` text (§1.2.3 filter).

    1. Known suffixes in ``stop_words`` are cut from the end, repeatedly.
    2. The rest is split on separators: ``_``, ``|``, ``｜``, ``——`` and ``--``
       anywhere; ``-``, ``–`` and ``—`` only with whitespace on both sides.
       Trailing segments that look like site names are dropped: equal to a
       stop word, or at most 16 characters holding a marker (网, 新闻, 频道,
       传媒, 日报/晚报/早报/时报/商报, 在线, 门户, .com/.cn/.net/.org), or a
       channel or keyword tag (at most 8 characters and under half the
       longest segment).  Then leading segments that look like site names
       are dropped (the tag rule does not apply there).
       The longest segment is never dropped, and what remains around it is
       kept as written, so a title holding a separator is not cut inside.
    3. A bare hyphen ("…-股票频道-和讯网") splits off trailing segments only
       while they look like site names (marker or stop word; no tag rule), so
       "COVID-19" and "1-10月" stay whole.
       The part before the hyphen must stay the longer one.
    The title is never emptied; one of nothing but separators is kept as is.
    """
    stop_words = tuple(stop_words)
    text = title.strip()
    cut = True
    while cut:
        cut = False
        for word in stop_words:
            if word and text.endswith(word) and len(text) > len(word):
                text = text[: -len(word)].rstrip()
                cut = True
    names = frozenset(
        name for name in (_TRAILING_JUNK.sub("", w).lstrip(" _|｜-–—") for w in stop_words) if name
    )

    spans: list[tuple[int, int]] = []
    start = 0
    for m in _TITLE_SEPARATORS.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    segments = [text[a:b].strip() for a, b in spans]

    longest = max(range(len(segments)), key=lambda i: len(segments[i]))
    if not segments[longest]:
        return text
    tag_below = len(segments[longest]) // 2
    first, last = 0, len(spans) - 1
    while last > longest and _site_like(segments[last], names, tag_below):
        last -= 1
    while first < longest and _site_like(segments[first], names):
        first += 1
    result = text[spans[first][0] : spans[last][1]].strip()

    while True:
        parts = _BARE_HYPHEN.split(result)
        tail = parts[-1]
        head = result[: len(result) - len(tail) - 1].strip()
        if len(parts) < 2 or len(tail) >= len(head) or not _site_like(tail, names):
            return result
        result = head


def html_title(
    tree: etree._Element, stop_words: Iterable[str] = DEFAULT_TITLE_STOP_WORDS
) -> str | None:
    """The ``<title>`` text without site names (Zou & Zhong §1.2.3 fallback).

    See :func:`strip_site_names` for the rule.
    """
    return _html_title(_scan(tree), stop_words)


def _html_title(scan: _Scan, stop_words: Iterable[str]) -> str | None:
    for element in scan.titles:
        text = _clean("".join(element.itertext()))
        if text:
            return _clean(strip_site_names(text, stop_words))
    return None


def meta_published(tree: etree._Element, tz: tzinfo) -> tuple[datetime, str] | None:
    """(publication time, source) from the page's metadata, best first.

    1. JSON-LD ``datePublished`` (``"json-ld"``), article types first,
       ``@graph`` and lists followed, blocks that are not JSON skipped;
    2. ``<meta>`` keys in :data:`META_PUBLISHED_KEYS` (``"meta:<key>"``);
    3. ``<time datetime>`` (``"time-element"``);
    4. NetEase's ``<html data-publishtime>`` (``"html:data-publishtime"``).
    A value that does not parse is passed over.  Values without an offset are
    local time in ``tz``.
    """
    scan = _scan(tree)
    return _meta_published(tree, scan, _json_ld_objects(scan.json_ld), tz)


def _meta_published(
    tree: etree._Element, scan: _Scan, objects: list[dict[str, Any]], tz: tzinfo
) -> tuple[datetime, str] | None:
    for value in _json_ld_value(objects, "datePublished"):
        if found := parse_datetime(value, tz):
            return found, "json-ld"
    metas = scan.metas
    for key in META_PUBLISHED_KEYS:
        value = metas.get(key.lower())
        if value and (found := parse_datetime(value, tz)):
            return found, f"meta:{key}"
    stated = [el for el in scan.times if el.get("datetime") is not None]
    for element in stated or scan.times:  # <time datetime> first, else the text of <time>
        if found := parse_datetime(element.get("datetime") or element.text or "", tz):
            return found, "time-element"
    for value in _XP_HTML_PUBLISHTIME(tree):
        if found := parse_datetime(str(value), tz):
            return found, "html:data-publishtime"
    return None


def page_metadata(
    tree: etree._Element,
    tz: tzinfo,
    stop_words: Iterable[str] = DEFAULT_TITLE_STOP_WORDS,
    scanned: MetaScan | None = None,
) -> tuple[tuple[str, str] | None, str | None, tuple[datetime, str] | None]:
    """``(meta_title, html_title, meta_published)`` from one walk of the tree.

    The same values as the three functions called one by one, read once (``scanned``:
    the walk a caller made already, :func:`scan_metadata`).
    """
    if scanned is None:
        scanned = scan_metadata(tree)
    scan, objects = scanned.scan, scanned.objects
    return (
        _meta_title(scan, objects),
        _html_title(scan, stop_words),
        _meta_published(tree, scan, objects, tz),
    )


def json_ld_article_body(tree: etree._Element, scanned: MetaScan | None = None) -> str | None:
    """JSON-LD ``articleBody`` (article types first), whitespace collapsed, or None.

    Read by the best mode's ``article_anchor`` to find where the article is on
    the page (the text itself may be cut or lack its paragraphs).
    """
    if scanned is not None:
        if not any("articleBody" in text for text in scanned.scan.json_ld):
            return None
        for value in _json_ld_value(scanned.objects, "articleBody"):
            if body := _clean(value):
                return body
        return None
    texts = [
        el.text
        for el in tree.iter("script")
        if el.text and (el.get("type") or "").lower() == "application/ld+json"
        and "articleBody" in el.text
    ]
    if not texts:
        return None
    for value in _json_ld_value(_json_ld_objects(texts), "articleBody"):
        if body := _clean(value):
            return body
    return None
