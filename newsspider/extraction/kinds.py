"""Page kinds: what a page under an article URL is (``article``, ``gallery``, ``video``, ``live``,
``topic``, ``list``, ``blocked``), read from the page itself.

A portal's article URL form covers more than articles: a picture gallery (图集) under the same
``/2024-05-01/doc-xxx.shtml``, a video page, a live blog (直播), a special topic (专题) that is a
page of links, a channel list. Extracted as articles, a gallery gives a body of nothing or of
its navigation, a topic page the blurb of its first link. The kind is decided here, in two
steps around the extraction method:

1. :func:`page_signals` reads the page before the method changes the tree: the kind its
   metadata states (``og:type``; JSON-LD ``@type`` ``VideoObject``, ``ImageGallery``,
   ``LiveBlogPosting``, ``CollectionPage``), the gallery data portals embed
   (Sina's ``#eData``, NetEase's ``gallery-data`` textarea), large images with their captions,
   players (``<video>``, player iframes and embeds), time-stamped entries (on a page that
   says it is live), headline links and their share of the text, and what the title and
   URL say (专题 or ``/zt/``; 视频 or ``/video/``; 图集 or ``/photo/``; 直播 or ``/live/``).
2. :func:`decide_kind` takes those with the body the method extracted: stated kinds first
   (a page that also says it is an article stays one unless its body is short), then
   embedded gallery data, a player above a short text, time-stamped entries of a page that
   calls itself live, many large images each with little text on a page that says
   pictures, and last a page of headline links whose body holds no prose
   (:func:`prose_chars`): a topic when it says so, else a list.

:func:`kind_text` then gives a kind its text: a gallery's captions in order, a video page's
description, a live page's entries in time order.

``blocked`` (a challenge or verification page) is reserved here and decided by the
challenge detector; ``topic``, ``list`` and ``blocked`` are never stored
(:data:`NOT_STORED`), the first two are followed for their links (:data:`FOLLOWED`).

The thresholds are module constants measured on the saved pages of the evaluation datasets
(docs/crawling.md "Page kinds" gives the confusion and its command,
``benchmarks/page_kinds.py``). Pure: lxml and the standard library.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import etree

from .record import PageScan, _caption_of, _image_src, _large, scan_page

__all__ = [
    "FOLLOWED",
    "KINDS",
    "NOT_STORED",
    "STORED",
    "PageSignals",
    "decide_kind",
    "gallery_lead",
    "kind_text",
    "page_kind",
    "page_signals",
    "prose_chars",
    "signals_summary",
]

#: Every kind, in the order the summaries list them.
KINDS = ("article", "gallery", "video", "live", "topic", "list", "blocked")
#: Kinds stored as articles (``articles.kind``; NULL in rows older than the column is read
#: as ``article``).
STORED = ("article", "gallery", "video", "live")
#: Kinds never stored: pages of links (followed for them) and challenge pages.
NOT_STORED = ("topic", "list", "blocked")
#: Kinds whose links the crawl follows instead of storing the page.
FOLLOWED = ("topic", "list")

# -- thresholds (measured: docs/crawling.md "Page kinds") ------------------------------------

#: A gallery: at least this many large images in the body ...
GALLERY_MIN_IMAGES = 4
#: ... with at most this many characters of body text per image.
GALLERY_CHARS_PER_IMAGE = 60
#: A video page: a player and a body of at most this many characters when the title or URL
#: says video (视频, ``/video/``, a ``v.`` host) ...
VIDEO_MAX_BODY = 300
#: ... or of at most this many without (a short news item beside a sidebar player stays an
#: article).
VIDEO_BARE_BODY = 40
#: A live page: at least this many time-stamped entries.
LIVE_MIN_ENTRIES = 5
#: A page of links: at least this share of its text inside links ...
LINKS_MIN_SHARE = 0.4
#: ... at least this many links with a headline's length (or this many on a page that
#: calls itself a topic: a small 专题 of one intro and a block or two of six headlines is
#: still a page of links; not when the page declares itself an article, og:type or
#: JSON-LD, as a story about a 专题 does) ...
LINKS_MIN_HEADLINES = 10
LINKS_MIN_HEADLINES_TOPIC = 5
#: ... and fewer than this many characters of prose in the body the method found
#: (:func:`prose_chars`; measured: at most 35 on the list pages, at least 93 on the articles
#: of pages as link-heavy).
LINKS_MAX_PROSE = 60
#: ... or than this many on a page that calls itself a topic (专题 in its title, a ``/zt/``
#: folder): a topic page opens with a lead of its own (导语).
LINKS_MAX_PROSE_TOPIC = 300
#: A line without a sentence's end is prose from this many characters with a comma.
PROSE_LINE_CHARS = 40
#: A link holding at least this many characters of text reads as a headline.
HEADLINE_LINK_CHARS = 8
#: The longest caption or entry kept, in characters.
ENTRY_MAX_CHARS = 2000

_PLAYER_SRC = re.compile(
    r"player|/txp/|\.swf\b|\.mp4\b|\.m3u8\b|video|v\.qq\.com|youku|bilibili|iqiyi|ixigua"
    r"|tudou|ku6|/vod/|vid=",
    re.I,
)
_TIME_MARK = re.compile(
    r"^(?:\d{4}[-/.年])?(?:\d{1,2}[-/.月]\d{1,2}日?\s*)?\d{1,2}[:：]\d{2}(?:[:：]\d{2})?$"
)
_TIME_LEAD = re.compile(
    r"^\s*(?:\d{4}[-/.年])?(?:\d{1,2}[-/.月]\d{1,2}日?\s*)?(\d{1,2}[:：]\d{2}(?:[:：]\d{2})?)"
)
_LIVE_TITLE = re.compile(r"直播|实录|滚动播报|最新进展|live\b", re.I)
_LIVE_URL = re.compile(r"^(?:live|zhibo)\.|/(?:live|zhibo|liveblog)/", re.I)
_VIDEO_TITLE = re.compile(r"视频|video", re.I)
_VIDEO_URL = re.compile(r"^(?:v|video|tv)\.|/(?:video|videos|v|shipin|vod)/", re.I)
_GALLERY_TITLE = re.compile(r"图集|组图|图片|高清|图说|摄影|photos?\b|gallery|slideshow", re.I)
_GALLERY_URL = re.compile(
    r"^(?:slide|photo|pic|tu|image)s?\.|/(?:photo|photos|photoview|slide|pic|pics|tuku|tupian"
    r"|gallery|album|picture)s?/",
    re.I,
)
_TOPIC_TITLE = re.compile(r"专题")
_TOPIC_URL = re.compile(r"/(?:zt|zhuanti|special|specials|topic|topics|subject)/", re.I)
_URL = re.compile(r"(?:https?:)?//")
_TOKEN = re.compile(r"^[\w.:/-]+$", re.ASCII)
_SENTENCE = re.compile(r"[。！？!?]|\.(?:\s|$)")
_COMMA = re.compile(r"，|, ")
_FOOTER = re.compile(
    r"copyright|©|版权所有|备案|icp|客服|热线|电话|邮箱|传真|免责|投资需谨慎|仅供参考", re.I
)

_NOT_SKIPPED = " and ".join(f"not(ancestor::{t})" for t in ("script", "style", "noscript"))
_SKIPPED = ("script", "style", "noscript", "textarea", "template")
_XP_LINKS = etree.XPath(".//a[@href]")
#: player containers (``<div class="player">``, Tencent's ``txp_player``)
_XP_PLAYER_BOXES = etree.XPath(".//div[contains(@class, 'player') or contains(@id, 'player')]")
#: characters of an element's text, runs of white space counted as one
_XP_TEXT_LEN = etree.XPath("string-length(normalize-space(.))")
_XP_IMAGES = etree.XPath(".//img[not(ancestor::a)]")
#: text nodes short enough to be a time mark, outside links and scripts
_XP_SHORT_TEXTS = etree.XPath(
    f".//text()[string-length(normalize-space(.)) <= 24 and string-length(normalize-space(.))"
    f" >= 4 and not(ancestor::a) and {_NOT_SKIPPED}]",
    smart_strings=True,
)

_JSONLD_KINDS = (
    (re.compile(r"^LiveBlogPosting$", re.I), "live"),
    (re.compile(r"^(?:VideoObject|VideoGallery)$", re.I), "video"),
    (re.compile(r"^(?:ImageGallery|MediaGallery)$", re.I), "gallery"),
    (re.compile(r"^(?:CollectionPage|ItemList|SearchResultsPage)$", re.I), "list"),
)
_JSONLD_ARTICLE = re.compile(r"Article|BlogPosting|Report", re.I)


@dataclass(slots=True)
class PageSignals:
    """What :func:`page_signals` read from a page for :func:`decide_kind` and :func:`kind_text`."""

    #: the kind the page's metadata states (og:type, JSON-LD), None when it states none
    declared: str | None = None
    #: whether the metadata calls it an article (og:type ``article``, JSON-LD NewsArticle)
    declared_article: bool = False
    title: str = ""
    #: characters of text in the body (scripts and styles left out), and inside links
    text_chars: int = 0
    link_chars: int = 0
    #: links whose text is a headline's length (:data:`HEADLINE_LINK_CHARS`)
    headline_links: int = 0
    #: large images of the body in order, with their captions
    images: list[tuple[str, str | None]] = field(default_factory=list)
    #: ``<video>`` elements, player iframes, embeds and objects, player containers
    players: int = 0
    #: a gallery's (image, caption) pairs from the data the page embeds for its viewer
    gallery: list[tuple[str, str]] = field(default_factory=list)
    #: time-stamped entries (``10:32 text``) in page order
    entries: list[str] = field(default_factory=list)
    #: whether the page names itself live (直播 or live in the title, a ``/live/`` URL)
    live_hint: bool = False
    #: 专题 in the title or a topic folder in the URL
    topic_hint: bool = False
    #: 视频 in the title, a video folder or host in the URL
    video_hint: bool = False
    #: 图集 in the title, a photo folder or host in the URL
    gallery_hint: bool = False
    #: og:description, the meta description, or the stating JSON-LD object's
    description: str | None = None

    @property
    def link_share(self) -> float:
        return self.link_chars / self.text_chars if self.text_chars else 0.0


def _chars(text: str) -> int:
    return len("".join(text.split()))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _declared(scan: PageScan) -> tuple[str | None, bool, str | None]:
    """The kind the metadata states, whether it calls the page an article, and the
    description of the JSON-LD object that states the kind."""
    og = (scan.metas.get("og:type") or "").strip().lower()
    article = og in ("article", "news", "newsarticle")
    found: str | None = None
    description: str | None = None
    if og.startswith("video"):
        found = "video"
    for obj in scan.json_ld:
        types = obj.get("@type")
        for t in types if isinstance(types, list) else [types]:
            if not isinstance(t, str):
                continue
            for pattern, kind in _JSONLD_KINDS:
                if pattern.match(t):
                    # the first stated wins; a live blog is an article type too
                    found = found or kind
                    if description is None and isinstance(obj.get("description"), str):
                        description = obj["description"]
            if _JSONLD_ARTICLE.search(t) and not t.lower().startswith("liveblog"):
                article = True
    return found, article, description


def _gallery_data(root: etree._Element) -> list[tuple[str, str]]:
    """The (image, caption) pairs a gallery page embeds for its viewer: Sina's ``#eData``
    (``<dl><dt>title</dt><dd>image</dd><dd>thumb</dd><dd>caption</dd><dd>id</dd>``: the
    longest of the ``dd`` that are neither addresses nor ids is the caption), NetEase's
    ``<textarea name="gallery-data">`` JSON (``list[].img``, ``list[].note``)."""
    out: list[tuple[str, str]] = []
    for holder in root.iterfind(".//*[@id='eData']"):
        for dl in holder.iter("dl"):
            dt = dl.find("dt")
            dds = [_flat("".join(dd.itertext())) for dd in dl.iter("dd")]
            image = next((d for d in dds if _URL.match(d)), "")
            words = [d for d in dds if d and not _URL.match(d) and not _TOKEN.match(d)]
            caption = max(words, key=len) if words else ""  # beside ids and times, the longest
            title = _flat("".join(dt.itertext())) if dt is not None else ""
            text = caption or title
            if image or text:
                out.append((image, text[:ENTRY_MAX_CHARS]))
    for area in root.iterfind(".//textarea[@name='gallery-data']"):
        try:
            data = json.loads(area.text or "")
        except ValueError:
            continue
        items = data.get("list") if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                image = str(item.get("img") or item.get("oimg") or "")
                note = _flat(str(item.get("note") or item.get("title") or ""))
                if image or note:
                    out.append((image, note[:ENTRY_MAX_CHARS]))
    return out


def _is_player(el: etree._Element) -> bool:
    tag = el.tag
    if tag == "video":
        return True
    if tag in ("iframe", "embed", "object"):
        src = el.get("src") or el.get("data") or el.get("data-src") or ""
        return bool(_PLAYER_SRC.search(src))
    return False


def _picture_caption(img: etree._Element) -> str | None:
    """A picture's caption as the page writes it: its figure's ``figcaption``, else the
    record's reading (:func:`.record._caption_of`: a caption element or a short line under
    it), else an ``alt`` text of a few words."""
    for ancestor in img.iterancestors("figure"):
        for cap in ancestor.iter("figcaption"):
            if text := _flat("".join(cap.itertext())):
                return text[:ENTRY_MAX_CHARS]
        break
    if caption := _caption_of(img):
        return caption
    alt = _flat(img.get("alt") or "")
    return alt if len(alt) >= 4 else None


def page_signals(
    root: etree._Element, url: str | None = None, scan: PageScan | None = None
) -> PageSignals:
    """Read the page's kind signals (module docstring, step 1) without changing the tree.

    ``scan`` is the page's :func:`.record.scan_page` (its ``<meta>`` values and JSON-LD),
    read here when not given.
    """
    if scan is None:
        scan = scan_page(root)
    signals = PageSignals()
    signals.declared, signals.declared_article, described = _declared(scan)
    title_el = root.find("head/title")
    if title_el is None:
        title_el = root.find(".//title")
    signals.title = _flat("".join(title_el.itertext())) if title_el is not None else ""
    metas = scan.metas
    signals.description = (
        _flat(metas.get("og:description") or metas.get("description") or described or "") or None
    )
    parts = urlsplit(url) if url else None
    path = parts.path if parts else ""
    where = f"{parts.hostname or ''}{path}" if parts else ""
    title = signals.title
    signals.topic_hint = bool(_TOPIC_TITLE.search(title) or _TOPIC_URL.search(path))
    signals.live_hint = bool(_LIVE_TITLE.search(title) or _LIVE_URL.search(where))
    signals.video_hint = bool(_VIDEO_TITLE.search(title) or _VIDEO_URL.search(where))
    signals.gallery_hint = bool(_GALLERY_TITLE.search(title) or _GALLERY_URL.search(where))
    markup = scan.markup  # searched first where given: far cheaper than the tree
    if markup is None or "eData" in markup or "gallery-data" in markup:
        signals.gallery = _gallery_data(root)
    body = root.find("body")
    if body is None:
        return signals
    skipped = sum(len(" ".join((el.text or "").split())) for el in body.iter(*_SKIPPED))
    signals.text_chars = max(0, int(_XP_TEXT_LEN(body)) - skipped)
    links = 0
    for a in _XP_LINKS(body):
        label = (a.text or "") if len(a) == 0 else "".join(a.itertext())
        size = len(label.strip())
        links += size
        if size >= HEADLINE_LINK_CHARS:
            signals.headline_links += 1
    signals.link_chars = min(links, signals.text_chars)
    players = body.iter("video", "iframe", "embed", "object")
    signals.players = sum(1 for el in players if _is_player(el))
    if markup is None or "player" in markup:
        signals.players += len(_XP_PLAYER_BOXES(body))
    for img in _XP_IMAGES(body):
        if (src := _image_src(img)) and _large(img, src):
            signals.images.append((src, _picture_caption(img)))
    if not (signals.live_hint or signals.declared == "live"):
        return signals  # entries are read for a page that says it is live
    for node in _XP_SHORT_TEXTS(body):
        if _TIME_MARK.match(node.strip()):
            mark = node.getparent()
            if mark is not None and (entry := _entry_after(mark)):
                signals.entries.append(entry)
    return signals


def _entry_after(mark: etree._Element) -> str | None:
    """A live entry: a time mark's element and the text that follows it in its entry (the
    mark's parent, or grandparent when the parent holds the mark alone), ``10:32 text``;
    None when no text (only links) follows."""
    holder = mark.getparent()
    for _ in range(2):
        if holder is None:
            return None
        whole = _flat("".join(t for t in holder.itertext()))
        time_text = _flat(mark.text or "")
        rest = whole.replace(time_text, "", 1).strip()
        if rest:
            if holder.find(".//a") is not None and _chars(rest) <= _chars(
                "".join(t for a in holder.iter("a") for t in a.itertext())
            ):
                return None  # a list item: a time and a headline link
            return f"{time_text} {rest}"[:ENTRY_MAX_CHARS]
        holder = holder.getparent()
    return None


def prose_chars(body: str) -> int:
    """Characters of ``body`` in lines that read as sentences: a sentence's end (。！？, a
    full stop before a space) or at least :data:`PROSE_LINE_CHARS` characters with a comma;
    footer lines (copyright, 备案, 热线, 投资需谨慎 ...) are not counted. An article's body is
    prose even when it is two lines long; what a method finds on a page of links is not
    (counters, dates, 分享至好友和朋友圈, the footer)."""
    n = 0
    for line in body.split("\n"):
        if _FOOTER.search(line):
            continue
        if _SENTENCE.search(line) or (len(line) >= PROSE_LINE_CHARS and _COMMA.search(line)):
            n += _chars(line)
    return n


def decide_kind(signals: PageSignals, body: str) -> str:
    """The page's kind from its signals and the body the method extracted (module
    docstring, step 2). Never ``blocked``: that is the challenge detector's verdict."""
    body_chars = _chars(body)
    declared = signals.declared
    if declared == "live":
        return "live"
    if declared in ("video", "gallery") and (
        not signals.declared_article or body_chars <= VIDEO_MAX_BODY
    ):
        return declared
    if len(signals.gallery) >= 2:
        return "gallery"
    if signals.players and (
        body_chars <= VIDEO_BARE_BODY or (signals.video_hint and body_chars <= VIDEO_MAX_BODY)
    ):
        return "video"
    if signals.live_hint and len(signals.entries) >= LIVE_MIN_ENTRIES:
        return "live"
    images = len(signals.images)
    if (
        signals.gallery_hint
        and images >= GALLERY_MIN_IMAGES
        and body_chars <= GALLERY_CHARS_PER_IMAGE * images
    ):
        return "gallery"
    small_topic = signals.topic_hint and not signals.declared_article
    min_headlines = LINKS_MIN_HEADLINES_TOPIC if small_topic else LINKS_MIN_HEADLINES
    links_page = (
        signals.headline_links >= min_headlines
        and signals.link_share >= LINKS_MIN_SHARE
        and prose_chars(body) < (LINKS_MAX_PROSE_TOPIC if signals.topic_hint else LINKS_MAX_PROSE)
    )
    if (declared == "list" and not signals.declared_article) or links_page:
        return "topic" if signals.topic_hint else "list"
    return "article"


def kind_text(kind: str, signals: PageSignals, body: str) -> str:
    """The text a page of ``kind`` keeps (module docstring); ``body`` for an article.

    - gallery: the captions of the gallery data the page embeds, in order (the data is what
      its viewer shows; the body a method finds in it is addresses and ids); without such
      data the images' captions, when they say at least as much as ``body``;
    - video: the description (``og:description``, the meta description, JSON-LD's), when the
      body's prose (:func:`prose_chars`) is shorter: a player's page has little else;
    - live: the time-stamped entries in time order (a page listing the newest first is read
      backwards), when they say more than ``body``.
    """
    if kind == "gallery":
        embedded = [c for _, c in signals.gallery if c]
        if embedded:
            return "\n".join(dict.fromkeys(embedded))
        captions = "\n".join(dict.fromkeys(c for _, c in signals.images if c))
        return captions if _chars(captions) >= _chars(body) else body
    if kind == "video":
        description = signals.description or ""
        return description if prose_chars(body) < _chars(description) else body
    if kind == "live":
        entries = signals.entries
        if len(entries) > 1 and _entry_time(entries[0]) > _entry_time(entries[-1]):
            entries = entries[::-1]
        text = "\n".join(entries)
        return text if _chars(text) > _chars(body) else body
    return body


def _entry_time(entry: str) -> tuple[int, ...]:
    m = _TIME_LEAD.match(entry)
    return tuple(int(x) for x in re.findall(r"\d+", m.group(1))) if m else ()


def gallery_lead(signals: PageSignals, url: str | None) -> tuple[str | None, str | None]:
    """A gallery's first picture and its caption (the record's ``image`` and
    ``image_caption`` when the page names no lead image): from the embedded data, else the
    body's first large image; the address made absolute against ``url``."""
    pictures = [(src, c) for src, c in signals.gallery if src] or signals.images
    if not pictures:
        return None, None
    src, caption = pictures[0]
    src = urljoin(url, src) if url else src
    return (src if src.startswith(("http://", "https://")) else None), caption or None


def page_kind(root: etree._Element, url: str | None, body: str) -> str:
    """The kind of a parsed page whose extracted body is ``body`` (signals and decision in
    one call, for measurement and tests; the extraction itself reads the signals before the
    method changes the tree)."""
    return decide_kind(page_signals(root, url), body)


def signals_summary(signals: PageSignals) -> dict[str, Any]:
    """The signals as a dict (the measurement script prints them)."""
    return {
        "declared": signals.declared,
        "article": signals.declared_article,
        "text": signals.text_chars,
        "link_share": round(signals.link_share, 2),
        "headlines": signals.headline_links,
        "images": len(signals.images),
        "players": signals.players,
        "gallery": len(signals.gallery),
        "entries": len(signals.entries),
        "live": signals.live_hint,
        "topic": signals.topic_hint,
    }
