"""The record fields of an article beside its title and time: who wrote it, where it came
from, who edited it, its section, language, script and image.

Every field is read by pure functions over what a method already has: the page's
metadata, read before the method changes the tree (:func:`scan_page`), and the page's
lines around the body the method chose (:class:`Around`). Each field comes with its
provenance, as ``published_source`` does for the time; a field the page does not state
is None (no value is better than a wrong one):

``authors`` (``authors_source``)
    The people named as writers, without roles, agencies or dates. In order: JSON-LD
    ``author`` (people, not organisations; ``json-ld``); a byline in the lines around
    the body (``text``): ``作者：``, ``文/``, ``撰文``, ``执笔``, ``编译``, ``记者 X``,
    ``通讯员 X``, ``X/文``, ``（记者 X）`` in a dateline or at the end of the body,
    ``本帖由 X 于 … 发表``, ``X 发表于 DATE``, ``By X`` (a writer's label anywhere
    before a reporter's); a byline element (``itemprop=author``, ``rel=author``, a
    ``byline`` class: ``element``); ``<meta name=author>``, ``article:author``
    (``meta:author``). Then, only from Chinese names checked against
    the surnames (:mod:`.names`): a line of names alone under the headline
    (``text:name-line``), names alone in brackets closing the body (``（袁源）``:
    ``text:signature``), a ``来源：`` whose value is a person (``text:source``), a
    government document's ``发文机关：`` (``text:issuer``), the authors of a citation line
    (``文章引用：赵培. 题名[J]``: ``text:citation``), a blog's owner (``text:blog-owner``).
    Beyond the mainland's conventions (the rules registry's byline rules): every label in
    traditional characters (``記者``, ``責任編輯``, ``來源``); Taiwan's, Hong Kong's,
    Singapore's and Malaysia's bylines (``〔記者X/台北報導〕``, ``中央社記者X台北15日電``,
    ``X 报道``); Latin-script bylines of many languages (``Von X und Y, Nairobi``, ``Par
    X``, ``Por X``) and names beyond ASCII; a visible byline naming other people than JSON-LD
    wins, and the site's or publisher's own name is no author. An editor is never an
    author: a page naming only its editor has ``editor`` and no ``authors``.
``origin`` (``origin_source``)
    The stated source: ``来源/稿源/文章来源/来自/转载自/出处：`` lines (``text``),
    ``<meta name=source>`` (``meta:source``), JSON-LD ``sourceOrganization`` then
    ``publisher`` (``json-ld``), an agency's dateline (``新华社北京3月5日电``, ``据新华社电``:
    ``text:dateline``); normalised by :func:`normalise_origin` (a table of agencies and
    papers; ``本报讯`` is the site's own paper when the caller names it).
``editor``
    ``责任编辑/责编/编辑：`` lines around the body (or closing its last paragraph).
``section`` (``section_source``)
    ``article:section`` (``meta:article:section``), JSON-LD ``articleSection``
    (``json-ld``), a JSON-LD ``BreadcrumbList`` or a breadcrumb element or line
    (``breadcrumb``: its last item that is neither the home page, the article nor 正文).
    A site row's rule over URL paths is the caller's: :func:`section_from_url`.
``image`` and ``image_caption``
    ``og:image`` (``twitter:image``, JSON-LD ``image``), else the first large image inside
    the body region; as an absolute URL. The caption is the image's ``figcaption``, a
    caption element beside it, or a short centred line right under it.

:func:`is_record_line` says whether a body line is nothing but a byline, source or
editor line (the best mode drops such lines, ``record_lines``).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import opencc
from lxml import etree

from .blocks import TYPE_I, TYPE_II, mark_blocks, split_blocks
from .dates import DATE_PATTERN
from .metadata import MetaScan, scan_metadata
from .names import is_chinese_name, is_latin_name, normalise_name, split_names

__all__ = [
    "Around",
    "ImageCandidate",
    "PageScan",
    "Record",
    "around_body",
    "find_authors",
    "find_editor",
    "find_image",
    "find_origin",
    "find_section",
    "is_record_line",
    "normalise_origin",
    "page_lines",
    "page_record",
    "record_from_lines",
    "record_line_hint",
    "scan_page",
    "section_from_url",
]

#: Non-empty lines read before the body's first line (after the headline when it is
#: found), and after its last.
LINES_BEFORE = 10
LINES_AFTER = 8
#: Lines at each end of the body read as part of its edges.
EDGE_LINES = 3
#: Byline, source and editor lines are short; longer lines are prose.
RECORD_LINE_MAX = 80
#: Images smaller than this (either side, when the page says) are icons, not pictures.
IMAGE_MIN_SIDE = 200
#: How many images of a page are looked at, and how much text after one is read to see
#: whether the body follows it.
IMAGE_CANDIDATES = 4
IMAGE_FOLLOW_CHARS = 120
CAPTION_MAX_CHARS = 120

_SPACES = re.compile(r"\s+")
_HAN_CLASS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


@functools.lru_cache(maxsize=2048)
def _nfkc(text: str) -> str:
    """``text`` in NFKC (full-width letters, digits and colons as ASCII); the lines around a
    body are read by several rules, so each is normalised once."""
    return unicodedata.normalize("NFKC", text)


def _squash(text: str) -> str:
    return "".join(text.split())


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    text = _SPACES.sub(" ", _nfkc(text)).strip()
    return text or None


# --------------------------------------------------------------------------
# What the page says in its markup, read before a method changes the tree


@dataclass(slots=True)
class ImageCandidate:
    """An ``<img>`` of the page that may be its picture."""

    src: str
    caption: str | None
    #: the text that follows the image in the page (squashed, up to IMAGE_FOLLOW_CHARS)
    following: str


@dataclass(slots=True)
class PageScan:
    """What :func:`scan_page` read from a page's markup."""

    metas: dict[str, str] = field(default_factory=dict)
    json_ld: list[dict[str, Any]] = field(default_factory=list)
    #: the metadata walk itself, for the method's title and time (:func:`.metadata.page_metadata`)
    meta: MetaScan | None = None
    images: list[ImageCandidate] = field(default_factory=list)
    base: str | None = None
    #: the decoded markup (breadcrumb and byline elements are found in it when asked for)
    markup: str | None = None
    _crumbs: list[list[str]] | None = None
    _bylines: list[str] | None = None
    #: the tree, when there is no markup to search (read before a method changes it)
    _root: etree._Element | None = None

    @property
    def crumbs(self) -> list[list[str]]:
        """Breadcrumb elements' items, per element (looked for on first use)."""
        if self._crumbs is None:
            self._crumbs = []
            found = (
                _elements_at(self.markup, _CRUMB_HINTS, 2)
                if self.markup is not None
                else _XP_CRUMBS(self._root)[:2] if self._root is not None else []
            )
            for el in found:
                items = [_clean(t) for t in el.itertext()]
                words = [w for t in items if t for w in _CRUMB_SPLIT.split(t) if w.strip()]
                if words:
                    self._crumbs.append(words)
        return self._crumbs

    @property
    def bylines(self) -> list[str]:
        """Texts of byline elements (``itemprop``/``rel`` author, a ``byline`` class), looked
        for on first use."""
        if self._bylines is None:
            self._bylines = []
            found = (
                _elements_at(self.markup, _BYLINE_HINTS, 3)
                if self.markup is not None
                else _XP_BYLINES(self._root)[:3] if self._root is not None else []
            )
            for el in found:
                if el.tag in ("meta", "link", "script", "body", "html", "head"):
                    continue
                if len(_text_upto(el, RECORD_LINE_MAX + 1)) > RECORD_LINE_MAX:
                    continue
                if text := _clean("".join(el.itertext())):
                    self._bylines.append(text)
        return self._bylines


_XP_CRUMBS = etree.XPath(
    "//*[(@class and (contains(@class,'rumb') or contains(@class,'RUMB')))"
    " or (@id and (contains(@id,'rumb') or contains(@id,'RUMB')))"
    " or @itemtype='http://schema.org/BreadcrumbList' or @itemtype='https://schema.org/BreadcrumbList']"
)
_XP_BYLINES = etree.XPath(
    "//*[@itemprop='author' or @rel='author'"
    " or (@class and (contains(@class,'byline') or contains(@class,'Byline')))]"
)
#: What the markup must hold for the breadcrumb and byline elements to be looked for:
#: substrings (a search of the markup for them is far cheaper than one of the tree).
_CRUMB_HINTS = ("rumb",)
_BYLINE_HINTS = ("yline", '="author"', "='author'")
_CRUMB_SPLIT = re.compile(r"\s*(?:>|›|»|→|/|\\|>>|＞|》)\s*")
_IMAGE_ATTRS = ("src", "data-src", "data-original", "data-lazy-src", "data-url")
_ICON = re.compile(
    r"logo|icon|avatar|sprite|spacer|blank|button|btn|banner|advert|/ads?/|qrcode|erweima"
    r"|share|weixin|wechat|loading|pixel|1x1|\.svg(?:$|\?)|\.gif(?:$|\?)|^data:"
    r"|/skins?/|/templates?/|/css/|/themes?/",
    re.I,
)
#: A picture is at most this many times as wide as high (a wider one is a banner).
IMAGE_MAX_ASPECT = 3
_CAPTION_CLASS = re.compile(
    r"caption|pic_?desc|img_?desc|photo_?desc|pictext|imgtxt|img-txt|desc", re.I
)
_BLOCKISH = frozenset("p div center td li figure section dd span font".split())


def _text_upto(el: etree._Element, limit: int) -> str:
    """The squashed text of ``el`` (without its tail), up to about ``limit`` characters."""
    parts: list[str] = []
    size = 0
    for t in el.itertext():
        t = _squash(t)
        if t:
            parts.append(t)
            size += len(t)
            if size >= limit:
                break
    return "".join(parts)


def _following_text(el: etree._Element, limit: int) -> str:
    """The squashed text after ``el`` in document order, up to ``limit`` characters."""
    parts: list[str] = []
    size = 0
    node: etree._Element | None = el
    while node is not None and size < limit:
        if node.tail and node.tail.strip():
            t = _squash(node.tail)
            parts.append(t)
            size += len(t)
        for sibling in node.itersiblings():
            if size >= limit:
                break
            if not isinstance(sibling.tag, str) or sibling.tag in ("script", "style"):
                t = _squash(sibling.tail or "")
            else:
                t = _text_upto(sibling, limit - size) + _squash(sibling.tail or "")
            if t:
                parts.append(t)
                size += len(t)
        node = node.getparent()
        if node is not None and node.tag == "body":
            break
    return "".join(parts)[:limit]


def _centred(el: etree._Element) -> bool:
    style = (el.get("style") or "").replace(" ", "").lower()
    return (
        el.tag == "center"
        or (el.get("align") or "").lower() == "center"
        or "text-align:center" in style
    )


def _caption_of(img: etree._Element) -> str | None:
    """The caption of an image: its figure's figcaption, a caption element beside it, or a
    short centred line right under it."""
    for ancestor in img.iterancestors():
        if ancestor.tag == "figure":
            for cap in ancestor.iter("figcaption"):
                if _text_upto(cap, 1) and (text := _clean("".join(cap.itertext()))):
                    return text[: CAPTION_MAX_CHARS * 2]
            break
        if ancestor.tag in ("body", "article"):
            break
    # the image's holder: its parent (and grandparent) when they hold nothing else
    holder = img
    for _ in range(2):
        parent = holder.getparent()
        if parent is None or parent.tag not in _BLOCKISH or len(_text_upto(parent, 3)) > 2:
            break
        holder = parent
    for sibling in holder.itersiblings():
        if not isinstance(sibling.tag, str) or sibling.tag in ("br", "script", "style"):
            continue
        text = _text_upto(sibling, CAPTION_MAX_CHARS + 1)
        if not text:
            continue
        if len(text) > CAPTION_MAX_CHARS:
            break
        token = " ".join((sibling.get("class") or "", sibling.get("id") or ""))
        if (
            _CAPTION_CLASS.search(token)
            or _centred(sibling)
            or any(_centred(c) for c in sibling.iter() if isinstance(c.tag, str))
        ):
            return _clean("".join(sibling.itertext()))
        break
    return None


def _image_src(img: etree._Element) -> str | None:
    for attr in _IMAGE_ATTRS:
        value = (img.get(attr) or "").strip()
        if value and not value.startswith("data:"):
            return value
    srcset = (img.get("srcset") or img.get("data-srcset") or "").strip()
    if srcset:
        return srcset.split(",")[0].split()[0]
    return None


_NUMBER = re.compile(r"\s*(\d+)")


def _side(value: str | None) -> int | None:
    if not value:
        return None
    m = _NUMBER.match(value)
    return int(m.group(1)) if m else None


_PHOTO = re.compile(r"\.(?:jpe?g|png|webp)(?:$|[?#])", re.I)


def _large(img: etree._Element, src: str) -> bool:
    """A picture, not an icon: a side of :data:`IMAGE_MIN_SIDE` (and the other at least half
    that) when the page gives them, else a photo's file type; never a logo, an icon, a
    button, an avatar or a share badge by its address."""
    width, height = _side(img.get("width")), _side(img.get("height"))
    sides = [s for s in (width, height) if s is not None]
    if sides and (max(sides) < IMAGE_MIN_SIDE or min(sides) < IMAGE_MIN_SIDE // 2):
        return False
    if width and height and width > IMAGE_MAX_ASPECT * height:
        return False
    if not sides and not _PHOTO.search(src):
        return False
    return not _ICON.search(src)


def _file_name(src: str) -> str:
    return src.split("?")[0].split("#")[0].rstrip("/").rsplit("/", 1)[-1]


def meta_image(metas: Mapping[str, str], json_ld: list[dict[str, Any]]) -> str | None:
    """The image the page's metadata names: ``og:image``, ``twitter:image``, JSON-LD ``image``."""
    for key in (
        "og:image",
        "og:image:url",
        "og:image:secure_url",
        "twitter:image",
        "twitter:image:src",
    ):
        if value := (metas.get(key) or "").strip():
            return value
    for obj in json_ld:
        value = obj.get("image")
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, dict):
            value = value.get("url") or value.get("contentUrl")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


_SNIPPET_CHARS = 1500
#: Occurrences of a hint looked at (a script may repeat a class name many times).
_HINTS_TRIED = 20
_PARSER = etree.HTMLParser(encoding="utf-8", default_doctype=False)


_ATTRIBUTE = re.compile(r"([\w:-]+)\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)")
_HINT_ATTRIBUTES = frozenset(("class", "id", "itemtype", "itemprop", "rel"))


def _in_attribute(tag: str, at: int) -> bool:
    """Whether position ``at`` of a start tag's text lies in the value of a class, id,
    itemtype, itemprop or rel attribute."""
    for m in _ATTRIBUTE.finditer(tag):
        if m.start(2) <= at < m.end(2):
            return m.group(1).lower() in _HINT_ATTRIBUTES
    return False


def _elements_at(markup: str, hints: tuple[str, ...], limit: int) -> list[etree._Element]:
    """The elements whose class, id, itemtype, itemprop or rel holds one of ``hints``, each
    parsed from the markup that follows its start tag (at most ``_SNIPPET_CHARS``; the
    parser closes what the snippet leaves open): a search of the markup instead of one of
    the tree."""
    found: list[etree._Element] = []
    starts: set[int] = set()
    start = max(0, markup.find("<body"))
    for hint in hints:
        at = markup.find(hint, start)
        tried = 0
        while at >= 0 and len(found) < limit and tried < _HINTS_TRIED:
            tried += 1
            lt = markup.rfind("<", 0, at)
            gt = markup.find(">", at)
            tag = markup[lt:gt] if lt >= 0 and gt >= 0 else ""
            if (
                tag[1:2].isalpha()
                and lt not in starts
                and markup.rfind(">", lt, at) < 0
                and _in_attribute(tag, at - lt)
            ):
                starts.add(lt)
                snippet = markup[lt : lt + _SNIPPET_CHARS]
                try:
                    doc = etree.fromstring(snippet.encode("utf-8", "surrogatepass"), _PARSER)
                except (etree.ParserError, etree.XMLSyntaxError):
                    doc = None
                body = doc.find("body") if doc is not None else None
                holder = (
                    body if body is not None else (doc.find("head") if doc is not None else None)
                )
                if holder is not None and len(holder):
                    found.append(holder[0])
            at = markup.find(hint, at + len(hint))
    return found


def scan_page(root: etree._Element, markup: str | None = None) -> PageScan:
    """Read the metadata the record fields need, without changing the tree: ``<meta>``
    values, JSON-LD objects, breadcrumb and byline elements, candidate images (with
    their captions and the text after them) and ``<base href>``. ``markup``: the page's
    decoded text, when the caller has it: breadcrumb and byline elements are found in it
    (far cheaper than a search of the tree)."""
    meta = scan_metadata(root)
    metas = meta.metas
    scan = PageScan(metas=metas, json_ld=meta.objects, meta=meta)
    head = root.find("head")
    base = head.find("base") if head is not None else None
    scan.base = ((base.get("href") or "").strip() or None) if base is not None else None
    scan.markup = markup
    if markup is None:  # the tree is searched now, before a method changes it
        scan._root = root
        scan.crumbs  # noqa: B018
        scan.bylines  # noqa: B018
        scan._root = None
    body = root.find("body")
    if body is None:
        return scan
    named = meta_image(metas, scan.json_ld)
    wanted = _file_name(named) if named else None
    for img in body.iter("img"):
        src = _image_src(img)
        if not src:
            continue
        if wanted is not None:  # the metadata names the image: only its caption is wanted
            if _file_name(src) == wanted:
                scan.images.append(ImageCandidate(src, _caption_of(img), ""))
                break
            continue
        if not _large(img, src):
            continue
        scan.images.append(
            ImageCandidate(src, _caption_of(img), _following_text(img, IMAGE_FOLLOW_CHARS))
        )
        if len(scan.images) >= IMAGE_CANDIDATES:
            break
    return scan


# --------------------------------------------------------------------------
# The lines around the body


@dataclass(slots=True)
class Around:
    """The page's lines around the body a method chose, nearest the body first.

    ``before``: lines above the body's first line (up to the headline, at most
    :data:`LINES_BEFORE`), the nearest first; ``head`` and ``tail``: the body's first and
    last :data:`EDGE_LINES` lines; ``inside``: the body's lines that are nothing but a
    byline, source or editor line (:func:`is_record_line`), in order; ``after``: lines
    under its last line, the nearest first; ``under_headline``: the lines between the
    headline and the body, in order; ``above``: lines above the headline (a post's
    header: ``本帖由 X 于 … 发表``), or, when no headline was found, the lines above
    ``before`` (:data:`LINES_FAR`), the nearest first. A line holding a label alone
    (``作者：``, ``发文机关：``, a table's cell) is read with the line after it.
    """

    before: list[str] = field(default_factory=list)
    head: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    under_headline: list[str] = field(default_factory=list)
    inside: list[str] = field(default_factory=list)
    above: list[str] = field(default_factory=list)

    def near(self) -> list[str]:
        """Every line but ``above``: the body's top first, then its bottom."""
        return [*self.before, *self.head, *self.inside, *reversed(self.tail), *self.after]


#: A line longer than this is prose: only its first and last characters are read (a
#: dateline opening it, a signature closing it).
LONG_LINE = 240
LONG_LINE_HEAD = 120
LONG_LINE_TAIL = 60
#: Lines above the headline read for a post's header; lines read above ``before`` when
#: no headline was found.
LINES_ABOVE = 4
LINES_FAR = 20
_LABEL_ALONE = re.compile(
    r"^[\[(（【]?\s*(?:作\s*者|撰\s*文|执笔人?|记\s*者|来\s*源|稿\s*源|出\s*处|责任编辑|责\s*编|编\s*辑"
    r"|发文机关|发布机构|发文单位|文章来源|信息来源)\s*[:：]\s*$"
)


def around_body(
    lines: Sequence[str],
    first: int | None,
    last: int | None,
    headline: int | None = None,
    skip: Iterable[int] | Callable[[int], bool] = (),
    inside: Iterable[int] = (),
) -> Around:
    """:class:`Around` from the page's lines (one per block, empty ones allowed), the
    indices of the body's first and last lines (None: no body) and of the headline.
    ``skip``: lines that are navigation (all links), never read (indices, or a test of an
    index); ``inside``: the body's
    byline, source and editor lines (dropped from it, or not)."""
    if callable(skip):
        is_nav = skip
    else:
        navigation = set(skip)
        is_nav = navigation.__contains__
    if first is None or last is None:
        return Around()

    def line(i: int) -> str:
        text = lines[i]
        if len(text) > LONG_LINE:  # prose: only its ends can hold a dateline or a signature
            return f"{text[:LONG_LINE_HEAD]} … {text[-LONG_LINE_TAIL:]}"
        if _LABEL_ALONE.match(_fold(text)):  # a label in a cell of its own: its value follows
            j = next((j for j in range(i + 1, min(len(lines), i + 4)) if lines[j]), None)
            if j is not None and not _LABEL_ALONE.match(_fold(lines[j])):
                return text.strip() + lines[j]
        return text

    def take(indices: Iterable[int], limit: int) -> list[str]:
        out: list[str] = []
        for i in indices:
            if lines[i] and not is_nav(i):
                out.append(line(i))
                if len(out) >= limit:
                    break
        return out

    found = headline is not None and headline < first
    stop = headline if found and headline is not None else -1
    before = take(range(first - 1, stop, -1), LINES_BEFORE)
    body = [i for i in range(first, last + 1) if lines[i]]
    head = [line(i) for i in body[:EDGE_LINES]]
    tail = [line(i) for i in body[-EDGE_LINES:]]
    after = take(range(last + 1, len(lines)), LINES_AFTER)
    if found and headline is not None:
        under = [line(i) for i in range(headline + 1, first) if lines[i] and not is_nav(i)][
            :LINES_BEFORE
        ]
        above = take(range(headline - 1, -1, -1), LINES_ABOVE)
    else:
        under = []
        seen = 0
        start = first - 1
        while start >= 0 and seen < len(before):  # past the lines ``before`` took
            if lines[start] and not is_nav(start):
                seen += 1
            start -= 1
        above = take(range(start, -1, -1), LINES_FAR)
    return Around(before, head, tail, after, under, [lines[i] for i in inside if lines[i]], above)


# --------------------------------------------------------------------------
# Labelled lines: bylines, sources, editors

_OPEN = r"[\[(（【〔「『<《]?"
_COLON = r"\s*[:：]\s*"
# What ends a labelled value: another label, a date, a bracket, sentence punctuation.
_VALUE_END = re.compile(
    r"\s*(?:(?:来源|稿源|出处|作者|记者|通讯员|责任编辑|责编|编辑|发布|时间|日期|更新|阅读|点击|评论|字号|浏览"
    r"|发表|打印|分享|人气|回复|作者单位)\s*[:：]|发自|报道|摄影|/摄|／摄|摄$|\s摄\b|/文|／文|/图|／图|电$"
    r"|[(（\[【〔」』)）\]】〕>《》]|[。；;！!？?]|\s[-–—|｜]\s|\d{2,4}[-/.年]\d{1,2}|\d{1,2}:\d{2}|$)"
)
#: Where a label may begin: the line's start, or after a space, bracket or bullet.
_LABEL_START = r"(?:^|(?<=[\s\[(（【〔|｜□■●◆·]))"
_WRITER_LABEL = re.compile(
    _LABEL_START + r"(?:原文)?"
    r"(?:作者|撰文|执笔人?|撰稿人?|编译|译者|翻译|文|口述|整理|Author|Written by|Text)"
    + _COLON,
    re.I,
)
_WRITER_SLASH = re.compile(r"(?:^|(?<=[\s\[(（【□■]))(?:文|撰文)\s*[/／|｜]\s*")
_REPORTER = re.compile(
    _LABEL_START + r"(?:[^\s\[(（【〔|｜□■●◆·，。,]{0,8}?)"
    r"(?:(?:特约|首席|实习|驻\S{1,4})?记者|通讯员|实习生)\s*[:：]?\s*"
)
_NAME_THEN_WEN = re.compile(
    rf"([{_HAN_CLASS}]{{2,4}}(?:\s+[{_HAN_CLASS}]{{2,4}}){{0,3}})\s*[/／]\s*文(?![{_HAN_CLASS}]{{2}})"
)
_POSTED_BY = re.compile(
    rf"(?:(?:本[帖贴]|此[帖贴]|该[帖贴])?由|(?<![{_HAN_CLASS}])是)\s*(?P<a>[^\s于在]{{1,20}}?)\s*[于在]\s*\d{{4}}[^发]{{0,30}}发表"
    rf"|(?P<b>[A-Za-z][\w.\-]{{1,20}}|[{_HAN_CLASS}]{{2,4}})\s*(?:发表于|发表在|posted\s+on|Posted\s+on)\s*\d{{2,4}}"
)
_BY = re.compile(r"^(?:By|BY|by)\s+(?P<names>[A-Z][^|•·\n]{2,80})$")
_BRACKET_SIGNATURE = re.compile(
    rf"[(（]\s*(?:[^()（）\s]{{0,8}}?(?:记者|通讯员)\s*)?(?P<names>[{_HAN_CLASS}·]{{2,9}}(?:\s+[{_HAN_CLASS}·]{{2,9}}){{0,4}})\s*[)）]\s*$"
)
_DATELINE_REPORTER = re.compile(
    rf"^\S{{0,30}}?[(（]\s*(?:[^()（）\s]{{0,8}}?(?:记者|通讯员)\s*)"
    rf"(?P<names>[{_HAN_CLASS}·]{{2,9}}(?:\s*[ 、]\s*[{_HAN_CLASS}·]{{2,9}}){{0,4}})\s*[)）]"
)
_SOURCE_LABEL = re.compile(
    _LABEL_START
    + r"(?:文章|本文|信息|新闻|消息|稿件|内容)?(?:来源|稿源|出处|来自|转载自|转自|Source)"
    + r"\s*[:：]\s*",
    re.I,
)
_SOURCE_INLINE = re.compile(r"(?:^|(?<=\s))(?:转载自|转自|来自)\s*(?=\S)")
_EDITOR_LABEL = re.compile(
    _LABEL_START
    + r"(?P<label>责任编辑|责编|本文编辑|值班编辑|编辑|Editor|Edited by)"
    + _COLON,
    re.I,
)
_ISSUER_LABEL = re.compile(r"^(?:发文机关|发布机构|发文单位)\s*[:：]\s*")
_CITATION = re.compile(
    r"^(?:文章引用|引用本文|引用格式|引文格式|本文引用格式|参考引用|Cite this article)\s*[:：]\s*"
    rf"(?P<names>[{_HAN_CLASS}]{{2,4}}(?:\s*[,，、]\s*[{_HAN_CLASS}]{{2,4}}){{0,9}})\s*[.．。]\s*\S.{{0,120}}\[[JMCDNR]\]"
)


# --------------------------------------------------------------------------
# Bylines beyond the mainland's conventions (the rules registry's byline rules)

#: Traditional-character labels read as the mainland's (``記者``, ``責任編輯``, ``來源``,
#: ``報導``): lines are matched with their label characters folded to simplified ones,
#: character for character, and values cut from the line as written (rule
#: ``traditional_labels``).
TRADITIONAL_LABELS = True
#: Taiwan's, Hong Kong's, Singapore's and Malaysia's bylines: ``記者X／台北報導``,
#: ``〔記者X、Y/台北報導〕``, ``（X／台中報導）``, ``中央社記者X台北15日電``, ``X 报道``,
#: ``X／报道``, ``报导：X`` (rule ``regional_bylines``).
REGIONAL_BYLINES = True
#: Latin-script bylines of many languages: ``By X and Y``, ``Von X, Frankfurt``, ``Par X``,
#: ``Di X``, ``Por X``, ``Door X``, ``Av X``, ``X | 05.04.2025``; the names of a metadata
#: value joined by ``und``, ``og``, ``et`` ...; WordPress's ``twitter:label1`` "Written by";
#: an analytics tag's author key (``cXenseParse:author``) (rule ``latin_bylines``).
LATIN_BYLINES = True
#: The article's own JSON-LD ``author`` (not a reviewed claim's), any script for a
#: ``Person``; a visible byline (a writer's label around the body) that names other people
#: than JSON-LD wins; the site's or publisher's name in a byline is no author (rule
#: ``visible_byline_first``).
VISIBLE_BYLINE_FIRST = True
#: A blog's post is its owner's: on a blog page (``blog.`` or ``/blog/`` in the page's top
#: or title, 博客 or 部落格) naming no writer, the Chinese name its
#: ``<title>`` gives as a segment of its own (``海姑娘 | blog.wenxuecity.com``), else its
#: header's, the page's first line (rule ``blog_owner``).
BLOG_OWNER = True
_BLOG = re.compile(r"\bblogs?\.|/blogs?/|博客|部落格|weblog", re.I)
_BLOG_HINTS = ("blog.", "blogs.", "/blog/", "/blogs/", "weblog")
_TITLE_PARTS = re.compile(r"\s*(?:[|_｜—–]|\s-\s)\s*")
#: How much of the markup's start is read for a blog's links, and how many of the page's
#: first lines for its header.
BLOG_MARKUP_CHARS = 20_000
BLOG_HEADER_LINES = 2


def blog_owner(scan: PageScan, lines: Sequence[str]) -> list[str]:
    """The owner of a blog page (see :data:`BLOG_OWNER`), or []."""
    titles = [
        _clean("".join(el.itertext())) or "" for el in (scan.meta.scan.titles if scan.meta else [])
    ]
    top = (scan.markup or "")[:BLOG_MARKUP_CHARS]
    low = top.lower()  # substring tests: a pattern over 20,000 characters takes 1.5 ms
    if not (
        any(hint in low for hint in _BLOG_HINTS)
        or "博客" in top
        or "部落格" in top
        or any(_BLOG.search(t) for t in titles)
    ):
        return []
    for title in titles:
        parts = [p for p in _TITLE_PARTS.split(title) if p]
        if len(parts) >= 2:
            for part in parts:
                if names := name_line(part):
                    return names[:1]
    header = itertools.islice((line for line in lines if line and line.strip()), BLOG_HEADER_LINES)
    for line in header:
        if names := name_line(line):
            return names[:1]
    return []


_LABEL_WORDS_SIMPLIFIED = (
    "作者 撰文 执笔 执笔人 撰稿 撰稿人 编译 译者 翻译 口述 整理 记者 特约记者 首席记者 实习记者 "
    "通讯员 实习生 特派员 来源 稿源 出处 来自 转载自 转自 文章来源 本文来源 信息来源 新闻来源 "
    "消息来源 稿件来源 内容来源 责任编辑 责编 本文编辑 值班编辑 编辑 发文机关 发布机构 发文单位 "
    "发自 报道 报导 摄影 时间 日期 更新 阅读 点击 评论 字号 浏览 发表 发表于 发表在 打印 分享 "
    "人气 回复 作者单位 参与互动 网友评论 我要评论 收藏 发布时间 电 讯 专电 外电 综合报导 据 "
    "新华社 中新社 本报 本刊 本网 本台 当前位置 您的位置 现在位置 位置"
).split()


def _fold_table() -> dict[int, str]:
    """Traditional label characters -> simplified, from the mainland's labels converted by
    OpenCC (Taiwan's and Hong Kong's standards too); only characters that OpenCC's t2s
    turns back into the same simplified one."""
    table: dict[int, str] = {}
    back = opencc.OpenCC("t2s")
    for config in ("s2t", "s2tw", "s2twp", "s2hk"):
        converter = opencc.OpenCC(config)
        for word in _LABEL_WORDS_SIMPLIFIED:
            converted = converter.convert(word)
            if len(converted) == len(word):
                for t, simple in zip(converted, word, strict=True):
                    # a character's own form, not a phrase's (s2twp: 发布 -> 釋出)
                    if t != simple and back.convert(t) == simple:
                        table[ord(t)] = simple
    return table


_T2S_LABELS = _fold_table()
_T2S = opencc.OpenCC("t2s")


def _fold(text: str) -> str:
    """``text`` with its traditional label characters simplified, one character for one (so
    positions stay): what the label patterns read (:data:`TRADITIONAL_LABELS`)."""
    return _folded(text) if TRADITIONAL_LABELS else text


@functools.lru_cache(maxsize=4096)
def _folded(text: str) -> str:
    # the lines around a body are read by several rules: each is folded once
    return text.translate(_T2S_LABELS)


_HAN_NAMES = rf"[{_HAN_CLASS}·]{{2,9}}(?:\s*[、,，\s]\s*[{_HAN_CLASS}·]{{2,9}}){{0,5}}"
#: ``記者X／台北報導``, ``〔記者X、Y/台北報導〕``, ``【記者X／綜合報導】``, ``（X／台中報導）``
#: (folded, NFKC: ／ is /).
_PLACE_REPORTED = re.compile(
    rf"(?:^|(?<=[\s\[(（【〔「]))(?:(?P<label>(?:中央社|本报)?(?:特派|驻\S{{1,4}})?(?:记者|特派员)|"
    rf"综合外电)\s*)?(?P<names>{_HAN_NAMES})\s*/\s*(?P<place>[{_HAN_CLASS}]{{1,8}}?)\s*"
    r"(?:即时|连线)?(?:报导|报道)"
)
#: ``中央社記者X台北15日電``, ``（中央社記者X、Y華盛頓14日專電）``
_AGENCY_DATELINE = re.compile(
    rf"(?:中央社|中央通讯社)(?:特派)?记者\s*(?P<rest>[{_HAN_CLASS}、\s]{{3,40}}?)\s*"
    r"\d{1,2}日(?:专|综合外|综合)?电"
)
#: ``黄顺杰 报道``, ``X／报道`` (Singapore, Malaysia), alone or before an address.
_NAME_REPORTED = re.compile(
    rf"^(?:(?:本报)?记者\s*)?(?P<names>{_HAN_NAMES})\s*/?\s*(?:报道|报导)(?=$|\s|[(（])"
)
#: ``报导：X``, ``採訪：X`` (Malaysia)
_REPORTED_LABEL = re.compile(_LABEL_START + r"(?:报道|报导|采访|采写)" + _COLON)


def _all_names(value: str) -> list[str]:
    """The Chinese names ``value`` is made of (strict), or [] when anything else is in it."""
    names = split_names(value, strict=True)
    rest = re.sub(r"[\s、,，·]", "", value)
    return names if names and "".join(names).replace("·", "") == rest.replace("·", "") else []


#: Places an agency's dateline names most (Taiwan's cities and counties, the bureaus
#: abroad), simplified: a split before one of them is preferred.
_DATELINE_PLACES = frozenset(
    "台北 臺北 新北 桃园 台中 臺中 台南 臺南 高雄 基隆 新竹 苗栗 彰化 南投 云林 嘉义 屏东 "
    "宜兰 花莲 台东 臺东 澎湖 金门 马祖 连江 华盛顿 纽约 洛杉矶 旧金山 休士顿 芝加哥 东京 大阪 "
    "首尔 北京 上海 香港 澳门 新加坡 吉隆坡 曼谷 河内 胡志明市 马尼拉 雅加达 新德里 雪梨 墨尔本 "
    "伦敦 巴黎 柏林 布鲁塞尔 莫斯科 日内瓦 维也纳 罗马 多伦多 温哥华 圣保罗 约翰尼斯堡 开罗 "
    "耶路撒冷".split()
)


def _name_before_place(rest: str) -> list[str]:
    """The reporters of ``X台北`` (a dateline writes the place right after the last name):
    the split whose last name is a name, before a place of :data:`_DATELINE_PLACES`
    preferred, then a name of three characters (the commonest), then the shorter place."""
    parts = [p for p in re.split(r"[、\s]+", rest.strip()) if p]
    if not parts:
        return []
    *firsts, last = parts
    if firsts and not all(is_chinese_name(p) for p in firsts):
        return []
    best: tuple[tuple[bool, bool, int], str] | None = None
    for size in range(2, 6):
        name = last[:-size]
        if is_chinese_name(name):
            score = (_T2S.convert(last[-size:]) in _DATELINE_PLACES, len(name) == 3, -size)
            if best is None or score > best[0]:
                best = (score, name)
    return [*firsts, best[1]] if best else []


def regional_names(line: str) -> list[str]:
    """The reporters of a Taiwanese, Hong Kong, Singaporean or Malaysian byline (see
    :data:`REGIONAL_BYLINES`), or []. ``line``: NFKC text."""
    key = _fold(line)
    if "/" in key and ("报导" in key or "报道" in key):
        for m in _PLACE_REPORTED.finditer(key):
            if names := _all_names(line[m.start("names") : m.end("names")]):
                return names
    if "电" in key and (m := _AGENCY_DATELINE.search(key)) is not None:
        if names := _name_before_place(line[m.start("rest") : m.end("rest")]):
            return names
    if (m := _NAME_REPORTED.match(key)) is not None:
        if names := _all_names(line[m.start("names") : m.end("names")]):
            return names
    for m in _REPORTED_LABEL.finditer(key):
        if names := split_names(_value(key, m.end(), line), strict=True):
            return names
    return []


_LATIN_BY = re.compile(
    r"^(?:(?:[Bb]y|BY|[Vv]on|VON|[Pp]ar|PAR|[Dd]i|[Pp]or|POR|[Dd]oor|[Aa]v|[Aa]f|[Pp]rzez"
    r"|Autor(?:in)?|Author|Tekst|Text|Texto|Testo|Skrevet av|Written by"
    r"|Reported by|Words by|Story by)\s*:?\s+)"
    r"(?P<names>[^|•·\n]{2,160}?)\s*(?:$|[|•·]|\s[-–—]\s)"
)
_NAME_THEN_DATE = re.compile(
    r"^(?P<names>[^|•·\n\d]{4,80}?)\s*[|•·]\s*(?:\d{1,2}[./]\d{1,2}[./]\d{2,4}|\d{4}-\d{2}-\d{2})"
)
#: What joins the names of a Latin-script byline, in its languages.
_LATIN_JOIN = re.compile(
    r"\s*(?:,|;|&|\+|/|\b(?:and|und|et|e|y|og|och|en|i|ja|és|ve|și|oraz|a|und von)\b)\s*"
)


_FOLLOW = frozenset("follow folgen suivre seguir segui volgen följ følg obserwuj".split())


def latin_names(value: str) -> list[str]:
    """The people a Latin-script byline's value names: names joined by commas or the "and"
    of its language, a place or agency after them dropped (``Anna Sleegers, Frankfurt``,
    ``Jane Doe, AP``); [] when a part before them is no name."""
    groups = [g.strip(" .") for g in _LATIN_JOIN.split(value.strip()) if g.strip(" .")]
    names: list[str] = []
    for i, group in enumerate(groups):
        words = group.split()
        while len(words) > 2 and words[-1].lower() in _FOLLOW:  # a profile button after it
            words = words[:-1]
            group = " ".join(words)
        half = len(words) // 2
        if len(words) >= 4 and len(words) % 2 == 0 and words[:half] == words[half:]:
            words = words[:half]  # the byline's text twice (a link and its label)
            group = " ".join(words)
        if is_latin_name(words):
            names.append(group)
            continue
        # after the names: a place, an agency or a role (one to three words) ends them
        if names and all(len(g.split()) <= 3 for g in groups[i:]):
            break
        return []
    return names


def latin_byline_names(line: str) -> list[str]:
    """The writers of a Latin-script byline line (:data:`LATIN_BYLINES`), or []."""
    if not line or line[0] >= "\u2e80":  # a Latin byline does not open with a CJK character
        return []
    m = _LATIN_BY.match(line)
    if m is None and ("|" in line or "•" in line or "·" in line):
        m = _NAME_THEN_DATE.match(line)
    return latin_names(m["names"]) if m is not None else []


#: WordPress's (Yoast's) reading-time labels: ``twitter:label1`` "Written by", in the
#: languages it is translated into, with the writer in ``twitter:data1``.
_WRITTEN_BY = frozenset(
    "written by|verfasst von|geschrieben von|escrito por|écrit par|ecrit par|scritto da"
    "|geschreven door|skriven av|skrevet av|skrevet af|napisane przez|autor|author".split("|")
)


_AUTHOR_KEY = re.compile(r"[:_.\-]authors?$")


def _written_by(metas: Mapping[str, str]) -> str | None:
    if value := metas.get("twitter:misc:written by"):
        return value
    for k in range(1, 5):
        label = metas.get(f"twitter:label{k}")
        if label is None:
            break
        if label.strip().lower() in _WRITTEN_BY:
            return metas.get(f"twitter:data{k}")
    return None


_HANGUL_NAME = re.compile(r"[\uac00-\ud7a3]{2,5}")
_CJK_NAME = re.compile(rf"[{_HAN_CLASS}\u3040-\u30ff]{{2,5}}")


def _person_names(value: str) -> list[str]:
    """The names a JSON-LD ``Person``'s name gives: as any metadata value, else (the type
    says it is a person) a Korean or Japanese name, or a Chinese one of no known surname."""
    names = _meta_names(value)
    if names or not VISIBLE_BYLINE_FIRST:
        return names
    value = _clean(value) or ""
    if _HANGUL_NAME.fullmatch(value) or (
        _CJK_NAME.fullmatch(value) and not _NOT_ORGANISATION.search(value)
    ):
        return [value]
    return []


_NOT_ORGANISATION = re.compile(
    r"(?:社|報|报|網|网|台|局|部|端|組|组|队|隊|所|院|會|会|中心|公司|新聞|新闻|編集|编辑|記者|记者"
    r"|通信|放送|频道|頻道|团队|團隊|チーム)$"
)


def _value(line: str, start: int, original: str | None = None) -> str:
    """The labelled value from ``start``: up to the next label, date or bracket. ``line``
    is read with its labels folded (:func:`_fold`); the value is cut from ``original``."""
    m = _VALUE_END.search(line, start)
    src = line if original is None else original
    return src[start : m.start()].strip() if m else src[start:].strip()


def writer_names(line: str) -> list[str]:
    """The writers a line names by a writer's label: ``作者：``, ``撰文``, ``执笔``, ``编译``,
    ``文/``, ``文：``, ``By``; or []."""
    line = _nfkc(line).strip()
    if not line or len(line) > RECORD_LINE_MAX * 3:
        return []
    key = _fold(line)
    for m in _WRITER_LABEL.finditer(key):
        if names := split_names(_value(key, m.end(), line), strict=False, han_handles=True):
            return names
    for m in _WRITER_SLASH.finditer(key):
        if names := split_names(_value(key, m.end(), line), strict=False, han_handles=True):
            return names
    if LATIN_BYLINES and (names := latin_byline_names(line)):
        return names
    if (m := _BY.match(line)) is not None:
        groups = [
            g.split() for g in re.split(r"\s*(?:,|;|\band\b|&)\s*", m["names"].strip()) if g.strip()
        ]
        if groups and all(is_latin_name(words) for words in groups):
            return [" ".join(words) for words in groups]
    return []


def reporter_names(line: str) -> list[str]:
    """The reporters a line names: ``记者 X``, ``本报记者X发自北京``, ``通讯员 X``, ``X/文``;
    Chinese names only (the label is often part of prose: ``记者了解到``)."""
    line = _nfkc(line).strip()
    if not line or len(line) > RECORD_LINE_MAX * 3:
        return []
    key = _fold(line)
    if REGIONAL_BYLINES and (names := regional_names(line)):
        return names
    if m := _NAME_THEN_WEN.search(key):
        if names := split_names(line[m.start(1) : m.end(1)], strict=True):
            return names
    for m in _REPORTER.finditer(key):
        if names := split_names(_value(key, m.end(), line), strict=True):
            return names
    return []


def byline_names(line: str) -> list[str]:
    """The writers a byline line names (:func:`writer_names`, else :func:`reporter_names`)."""
    return writer_names(line) or reporter_names(line)


def posted_by(line: str) -> list[str]:
    """A forum or blog post's header naming its poster: ``本帖由 X 于 DATE 发表``,
    ``X 发表于 DATE``, ``是 X 在 DATE 发表``."""
    m = _POSTED_BY.search(_nfkc(line))
    if m is None:
        return []
    return split_names(m["a"] or m["b"], strict=False, han_handles=True)


def signature_names(line: str) -> list[str]:
    """Chinese names alone in brackets closing a paragraph: ``（袁源）``,
    ``（信报记者 蔡雪婧）``."""
    line = _nfkc(line)
    m = _BRACKET_SIGNATURE.search(_fold(line))
    if m is None:
        return []
    value = line[m.start("names") : m.end("names")]
    names = split_names(value, strict=True)
    return names if " ".join(names) == " ".join(value.split()) else []


def dateline_names(line: str) -> list[str]:
    """The reporters of a dateline opening the body: ``据新华社拉萨电（记者 格桑边觉）``."""
    line = _nfkc(line)
    m = _DATELINE_REPORTER.search(_fold(line))
    return split_names(line[m.start("names") : m.end("names")], strict=True) if m else []


def name_line(line: str) -> list[str]:
    """A line of Chinese names alone (a byline without label under a headline)."""
    line = _nfkc(line).strip()
    if not line or len(line) > 40:
        return []
    names = split_names(line, strict=True)
    rest = re.sub(r"[\s、，,;；/／·]", "", line)
    return names if names and "".join(names) == rest else []


def source_values(line: str) -> list[str]:
    """The sources a line states (``来源：新华网``, ``转载自人民网``), raw."""
    line = _nfkc(line)
    key = _fold(line)
    out: list[str] = []
    for m in _SOURCE_LABEL.finditer(key):
        value = _source_value(key, m.end(), line)
        if value:
            out.append(value)
    if not out:
        for m in _SOURCE_INLINE.finditer(key):
            value = _source_value(key, m.end(), line)
            if value:
                out.append(value)
    return out


_SOURCE_END = re.compile(
    r"\s*(?:参与互动|网友评论|我要评论|评论\s*\d|字号|打印|分享|收藏)"
    r"|\s+(?:作者|记者|通讯员|责任编辑|责编|编辑|发布|时间|日期|更新|阅读|点击|评论|字号|浏览|发表|打印|分享|人气)"
    r"|\s*(?:作者|记者|责任编辑|责编|编辑|时间|日期|发布时间)\s*[:：]"
    r"|[。；;！!？?|｜]|\s{2,}|\s[-–—]\s|\d{4}[-/.年]\d{1,2}|\d{1,2}:\d{2}|$"
)


_HAN_WORD_THEN_SPACE = re.compile(rf"^([{_HAN_CLASS}·]{{2,}})\s")


def _source_value(line: str, start: int, original: str | None = None) -> str:
    m = _SOURCE_END.search(line, start)
    src = line if original is None else original
    value = src[start : m.start()] if m else src[start:]
    value = value.strip(" \t:：,，、")
    if (first := _HAN_WORD_THEN_SPACE.match(value)) is not None:  # a Chinese name ends at a space
        value = first.group(1)
    return value


def editor_value(line: str) -> str | None:
    """The editor a line names (``责任编辑：魏喆``, ``（ 责任编辑：刘林源 ）``), or None."""
    line = _nfkc(line)
    key = _fold(line)
    best: tuple[int, str] | None = None
    rank = {"责任编辑": 0, "责编": 1, "本文编辑": 1, "值班编辑": 2, "编辑": 3}
    for m in _EDITOR_LABEL.finditer(key):
        names = split_names(_value(key, m.end(), line), strict=False, han_handles=True)
        if not names:
            continue
        r = rank.get(m["label"], 4)
        if best is None or r < best[0]:
            best = (r, names[0])
    if best is None:
        return None
    return _editor_name(best[1])


_EDITOR_CODE = re.compile(rf"^(?P<name>[{_HAN_CLASS}]{{2,4}})[_\-]?[A-Z]{{1,4}}\d{{2,}}$")


def _editor_name(value: str) -> str:
    """An editor's name without the CMS's code after it (``王晓易_NE0011``)."""
    m = _EDITOR_CODE.match(value)
    return m["name"] if m else value


def issuer_value(line: str) -> str | None:
    """A government document's issuing authority (``发文机关：吉林省人民政府``)."""
    line = _nfkc(line).strip()
    m = _ISSUER_LABEL.match(line)
    if m is None:
        return None
    value = line[m.end() :].strip()
    return value if 2 <= len(value) <= 30 and not re.search(r"\d|[:：]", value) else None


_RECORD_HINT = re.compile(r"[:：/／]|[记記]者|通[讯訊][员員]")


def record_line_hint(line: str) -> bool:
    """A cheap first test of :func:`is_record_line`: short, with a colon, a slash or a
    reporter's label."""
    return (
        bool(line) and len(line) <= RECORD_LINE_MAX and _RECORD_HINT.search(line) is not None
    )


_RECORD_DECORATION = re.compile(r"[\s\[\]()（）【】〔〕「」『』<>《》|｜□■●◆·,，、;；.。:：]+")


def is_record_line(line: str) -> bool:
    """Whether ``line`` is nothing but a byline, source or editor line (``（责任编辑：魏喆）``,
    ``来源：新华网``, ``本报记者 葛灵丹``, ``文/张三``): its labels and their values, with a date
    and the brackets around them, and nothing else."""
    text = _fold(_nfkc(line).strip())
    if not text or len(text) > RECORD_LINE_MAX:
        return False
    rest = text
    found = False
    for value_of, label in (
        (editor_value, _EDITOR_LABEL),
        (None, _SOURCE_LABEL),
        (None, _WRITER_LABEL),
        (None, _WRITER_SLASH),
        (None, _REPORTER),
    ):
        for m in list(label.finditer(rest)):
            if value_of is not None:
                value = value_of(rest[m.start() :])
                if value is None:
                    continue
                end = rest.find(value, m.end())
                stop = end + len(value) if end >= 0 else m.end()
            elif label is _SOURCE_LABEL:
                value = _source_value(rest, m.end())
                if not value:
                    continue
                stop = rest.find(value, m.end()) + len(value)
            else:
                value = _value(rest, m.end())
                names = split_names(value, strict=label is _REPORTER)
                if not names:
                    continue
                stop = rest.find(names[-1], m.end()) + len(names[-1])
                if label is _REPORTER:
                    tail = re.match(r"\s*(?:发自\S{1,8}|报道|/?摄影?|/文)", rest[stop:])
                    stop += tail.end() if tail else 0
            rest = rest[: m.start()] + " " + rest[stop:]
            found = True
            break
    if not found:
        return False
    rest = DATE_PATTERN.sub(" ", rest)
    return not _RECORD_DECORATION.sub("", rest)


# --------------------------------------------------------------------------
# Origins


#: Agencies and papers: every form a page writes (lower-cased for Latin script) and the
#: one name stored. 新华社 (the agency), 新华网 (its site) and 新华每日电讯 (its paper)
#: stay distinct, as do a paper and its site.
ORIGIN_ALIASES: dict[str, str] = {
    "新华社": "新华社",
    "新华通讯社": "新华社",
    "xinhua": "新华社",
    "xinhua news agency": "新华社",
    "新华网": "新华网",
    "xinhuanet": "新华网",
    "新华网客户端": "新华网",
    "新华每日电讯": "新华每日电讯",
    "中新社": "中新社",
    "中国新闻社": "中新社",
    "中央社": "中央社",
    "中央通讯社": "中央社",
    "中央通訊社": "中央社",
    "中新网": "中新网",
    "中国新闻网": "中新网",
    "人民日报": "人民日报",
    "人民日报海外版": "人民日报海外版",
    "人民网": "人民网",
    "人民日报客户端": "人民日报",
    "央视": "央视",
    "中央电视台": "央视",
    "cctv": "央视",
    "央视新闻": "央视新闻",
    "央视新闻客户端": "央视新闻",
    "央视网": "央视网",
    "央广网": "央广网",
    "中央人民广播电台": "中央人民广播电台",
    "中国之声": "中国之声",
    "光明日报": "光明日报",
    "光明网": "光明网",
    "经济日报": "经济日报",
    "中国经济网": "中国经济网",
    "中国日报": "中国日报",
    "中国日报网": "中国日报网",
    "china daily": "中国日报",
    "环球时报": "环球时报",
    "环球网": "环球网",
    "参考消息": "参考消息",
    "澎湃新闻": "澎湃新闻",
    "澎湃": "澎湃新闻",
    "the paper": "澎湃新闻",
    "界面新闻": "界面新闻",
    "界面": "界面新闻",
    "财新网": "财新网",
    "财新": "财新网",
    "第一财经日报": "第一财经日报",
    "第一财经": "第一财经",
    "21世纪经济报道": "21世纪经济报道",
    "每日经济新闻": "每日经济新闻",
    "每经网": "每日经济新闻",
    "证券时报": "证券时报",
    "中国证券报": "中国证券报",
    "上海证券报": "上海证券报",
    "证券日报": "证券日报",
    "北京青年报": "北京青年报",
    "北青网": "北京青年报",
    "新京报": "新京报",
    "南方都市报": "南方都市报",
    "南都": "南方都市报",
    "南方周末": "南方周末",
    "经济观察报": "经济观察报",
    "法制日报": "法治日报",
    "法治日报": "法治日报",
    "解放日报": "解放日报",
    "文汇报": "文汇报",
    "新民晚报": "新民晚报",
    "扬子晚报": "扬子晚报",
    "钱江晚报": "钱江晚报",
    "广州日报": "广州日报",
    "羊城晚报": "羊城晚报",
    "科技日报": "科技日报",
    "工人日报": "工人日报",
    "中国青年报": "中国青年报",
    "中青在线": "中国青年报",
    "中国青年网": "中国青年网",
    "求是": "求是",
    "国际在线": "国际在线",
    "网易": "网易",
    "网易财经": "网易财经",
    "新浪": "新浪",
    "新浪网": "新浪",
    "腾讯": "腾讯",
    "腾讯网": "腾讯",
    "腾讯新闻": "腾讯新闻",
    "搜狐": "搜狐",
    "凤凰网": "凤凰网",
    "路透社": "路透社",
    "路透": "路透社",
    "reuters": "路透社",
    "美联社": "美联社",
    "associated press": "美联社",
    "ap": "美联社",
    "法新社": "法新社",
    "afp": "法新社",
    "agence france-presse": "法新社",
    "彭博社": "彭博社",
    "彭博": "彭博社",
    "bloomberg": "彭博社",
    "共同社": "共同社",
    "塔斯社": "塔斯社",
    "韩联社": "韩联社",
}
#: Names that mean "this site's own paper or newsroom": the caller's ``site_name``.
OWN_ORIGINS = frozenset(
    "本报 本报讯 本刊 本刊讯 本网 本网讯 本站 本台 本台讯 原创 本网原创 本站原创".split()
)
#: Values a source line holds that name no source.
_NO_ORIGIN = re.compile(
    r"^(?:未知|不详|网络|互联网|网友|网友投稿|投稿|转载|转载文章|综合|综合报道|综合消息|其他|其它|none|null|unknown|-+)$",
    re.I,
)
_PAPER = re.compile(r"(?:报|报道|新闻|周刊|杂志|晚报|日报|时报|商报|电讯|週刊)$")
_SITE = re.compile(r"(?:网|在线|客户端|app|网站|\.com|\.cn|\.net)$", re.I)
_CHANNEL = re.compile(r"(?:频道|栏目|专栏|版)$")
_ORIGIN_PARTS = re.compile(r"\s*[-–—·・|｜_]\s*")
_ORIGIN_TRIM = re.compile(
    r"^(?:据|来自|转自|转载自|稿源|来源)\s*|(?<=[社报网台])讯$|\s*(?:供稿|独家|专稿|客户端|APP|App|app)$"
)
_DATELINE = re.compile(
    r"^[\[(（【]?\s*(?:据)?(?P<agency>新华社|中新社|中央社|中新网|人民网|央视网|央广网|国际在线|本报|本刊|本网|本台)"
    rf"(?:[{_HAN_CLASS}]{{0,10}}?\d{{0,2}}月?\d{{0,2}}日?)?(?:电|讯)"
)


def normalise_origin(value: str | None, site_name: str | None = None) -> str | None:
    """The origin as stored: the table's name for an agency or paper (:data:`ORIGIN_ALIASES`);
    of a paper and its site (``上海证券报·中国证券网``, ``大洋网-广州日报``) the paper;
    bracketed parts (``(广州)``, ``(www.wind.com.cn)``) dropped; ``本报讯`` and the like the
    site's own paper (``site_name``, else None); None for a value naming no source."""
    if value is None:
        return None
    text = _clean(value)
    if not text:
        return None
    text = re.sub(r"\s*[(（\[【][^)）\]】]*[)）\]】]", "", text).strip(" 。.,，:：")
    text = _ORIGIN_TRIM.sub("", text).strip()
    if not text or _NO_ORIGIN.match(text):
        return None
    if text in OWN_ORIGINS:
        return normalise_origin(site_name) if site_name and site_name not in OWN_ORIGINS else None
    known = ORIGIN_ALIASES.get(text.lower())
    if known:
        return known
    parts = [p for p in _ORIGIN_PARTS.split(text) if p]
    if len(parts) > 1 and all(_CHANNEL.search(p) for p in parts[1:]):  # 人民网-文化频道
        return ORIGIN_ALIASES.get(parts[0].lower(), parts[0])
    if len(parts) > 1:
        papers = [p for p in parts if _PAPER.search(p) and not _SITE.search(p)]
        sites = [p for p in parts if _SITE.search(p)]
        if len(papers) == 1 and len(papers) + len(sites) == len(parts):
            return ORIGIN_ALIASES.get(papers[0].lower(), papers[0])
    return text if len(text) <= 40 else None


# --------------------------------------------------------------------------
# The fields


@dataclass(slots=True)
class Record:
    """The record fields of one article (see the module doc)."""

    authors: tuple[str, ...] = ()
    authors_source: str | None = None
    origin: str | None = None
    origin_source: str | None = None
    editor: str | None = None
    section: str | None = None
    section_source: str | None = None
    image: str | None = None
    image_caption: str | None = None


def _is_article(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return any(isinstance(k, str) and _ARTICLE_TYPE.search(k) for k in kinds)


_ARTICLE_TYPE = re.compile(r"Article|Posting|Report", re.I)
_NOT_THE_PAGE = ("itemReviewed", "citation", "isBasedOn", "mentions", "about", "comment", "review")


def _json_ld_people(objects: list[dict[str, Any]], key: str) -> list[str]:
    """The people JSON-LD names as ``key``: of the article's own objects when one of them
    has ``key`` (a ClaimReview's ``itemReviewed`` has its own ``author``; with
    :data:`VISIBLE_BYLINE_FIRST`), else of any object; organisations left out."""
    names: list[str] = []
    if not any(key in obj for obj in objects):
        return names
    if VISIBLE_BYLINE_FIRST:
        others: set[int] = set()  # what the page reviews, cites or is about has its own author
        for obj in objects:
            for k in _NOT_THE_PAGE:
                if (value := obj.get(k)) is not None:
                    for item in value if isinstance(value, list) else [value]:
                        if isinstance(item, dict):
                            others.add(id(item))
        if others:
            objects = [obj for obj in objects if id(obj) not in others]
        if any(key in obj and _is_article(obj) for obj in objects):
            objects = [obj for obj in objects if _is_article(obj)]
    for obj in objects:
        value = obj.get(key)
        if value is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                name = item
            elif isinstance(item, dict):
                kind = item.get("@type")
                kinds = kind if isinstance(kind, list) else [kind]
                if any(isinstance(k, str) and k.lower() == "organization" for k in kinds):
                    continue
                name = item.get("name")
                if not isinstance(name, str):
                    continue
                if any(isinstance(k, str) and k.lower() == "person" for k in kinds):
                    names.extend(_person_names(name))
                    continue
            else:
                continue
            names.extend(_meta_names(name))
        if names:
            return names
    return names


def _meta_names(value: str) -> list[str]:
    """The people a metadata value (``<meta name=author>``, JSON-LD ``author``) names:
    Chinese names or Latin-script names, separated by commas, 、 or "and"; a value that
    holds anything else (a site, a team, an id, a URL) names none."""
    value = _clean(value) or ""
    if not value or re.search(r"https?:|www\.|@|\d", value):
        return []
    if LATIN_BYLINES and (names := latin_names(value)):
        return names
    parts = [
        p.strip() for p in re.split(r"\s*(?:,|，|、|;|；|/|\band\b|&|和)\s*", value) if p.strip()
    ]
    names: list[str] = []
    for part in parts:
        words = part.split()
        if is_chinese_name(part.replace(" ", "")) and len(words) <= 2:
            names.append(part.replace(" ", ""))
        elif is_latin_name(words):
            names.append(part)
        else:
            return []
    return names


def _issuer(lines: Sequence[str]) -> str | None:
    """The issuing authority a government document's metadata table names (``发文机关：``,
    a label of its own that nothing but such a table writes), anywhere on the page."""
    page = "\n".join(lines)  # the trigger: one search of the page for each label
    if not ("发文机关" in page or "发布机构" in page or "发文单位" in page):
        return None
    for i, line in enumerate(lines):
        if (
            line
            and len(line) <= 40
            and ("发文机关" in line or "发布机构" in line or "发文单位" in line)
        ):
            if _LABEL_ALONE.match(line):
                following = next((t for t in lines[i + 1 : i + 4] if t), "")
                line = line.strip() + following
            if (value := issuer_value(line)) is not None:
                return value
    return None


def _publishers(scan: PageScan, site_name: str | None) -> set[str]:
    """The names of the site and its publisher (``og:site_name``, ``application-name``,
    JSON-LD ``publisher``, the caller's site name), as compared (:func:`normalise_name`)."""
    names = [site_name, scan.metas.get("og:site_name"), scan.metas.get("application-name")]
    for obj in scan.json_ld:
        value = obj.get("publisher")
        for item in value if isinstance(value, list) else [value]:
            names.append(item.get("name") if isinstance(item, dict) else item)
    return {
        re.sub(r"\.(?:com|net|org|[a-z]{2})$", "", normalise_name(n))
        for n in names
        if isinstance(n, str) and n.strip()
    }


def find_authors(
    scan: PageScan,
    around: Around,
    editor: str | None = None,
    source_people: Sequence[str] = (),
    lines: Sequence[str] = (),
    site_name: str | None = None,
) -> tuple[tuple[str, ...], str | None]:
    """:func:`_find_authors`; with :data:`VISIBLE_BYLINE_FIRST`, the site's or publisher's
    own name in a byline is no author (``Le Monde | 27.01.2016``): a page naming only that
    has none (a personal site's metadata may name its owner as both)."""
    names, source = _find_authors(scan, around, editor, source_people, lines)
    if names and VISIBLE_BYLINE_FIRST and source in ("text", "element"):
        publishers = _publishers(scan, site_name)
        kept = tuple(n for n in names if normalise_name(n) not in publishers)
        if len(kept) < len(names):
            return (kept, source) if kept else ((), None)
    return names, source


def _find_authors(
    scan: PageScan,
    around: Around,
    editor: str | None = None,
    source_people: Sequence[str] = (),
    lines: Sequence[str] = (),
) -> tuple[tuple[str, ...], str | None]:
    """``(authors, authors_source)`` (see the module doc for the order).

    A writer's label (``作者：``) anywhere around the body comes before a reporter's
    (``记者 X``): a post or column that reprints a report names its own writer so, and the
    report's reporters in its dateline. Under the body only the nearest lines are read
    for writers (further down stand the comments, each with its own ``作者：``), and
    further lines only when they state the source too (``本文来源：X 作者：Y``).
    """
    top = [*around.before, *around.head, *around.inside]
    bottom = [*reversed(around.tail), *around.after[:EDGE_LINES]]
    names = _json_ld_people(scan.json_ld, "author")
    if names:
        if VISIBLE_BYLINE_FIRST and (visible := _visible_byline(scan, around, top)):
            if {normalise_name(n) for n in visible[0]} != {normalise_name(n) for n in names}:
                return visible
        return _unique(names), "json-ld"
    for line in [*top, *bottom, *around.above]:
        if names := writer_names(line):
            return _unique(names), "text"
    for line in around.after[EDGE_LINES:]:  # further down, a footer stating source and writer
        if _SOURCE_LABEL.search(line) and (names := writer_names(line)):
            return _unique(names), "text"
    for line in [*top, *bottom]:
        if names := reporter_names(line):
            return _unique(names), "text"
    for line in around.head[:1]:
        if names := dateline_names(line):
            return _unique(names), "text"
    for line in [*top, *around.above, *around.tail]:
        if names := posted_by(line):
            return _unique(names), "text"
    for text in scan.bylines:
        names = byline_names(text) or _meta_names(text) or split_names(text, strict=True)
        if names:
            return _unique(names), "element"
    for key in (
        "author",
        "article:author",
        "dc.creator",
        "byl",
        "sailthru.author",
        "parsely-author",
    ):
        if value := scan.metas.get(key):
            if names := _meta_names(re.sub(r"^(?:By|by)\s+", "", value)):
                return _unique(names), "meta:author"
    if LATIN_BYLINES and (value := _written_by(scan.metas)):
        if names := _meta_names(value):
            return _unique(names), "meta:author"
    if LATIN_BYLINES:  # an analytics tag's author (``cXenseParse:author``, ``x_authors``)
        for key, value in scan.metas.items():
            if _AUTHOR_KEY.search(key) and (names := _meta_names(value)):
                return _unique(names), "meta:author"
    header = around.under_headline[:2]
    for line in around.head:  # the body's first lines, while they are not prose
        if _PROSE.search(line):
            break
        header.append(line)
    for line in header:
        if names := name_line(line):
            return _unique(names), "text:name-line"
    for line in [*around.tail[-1:], *around.after[:1]]:
        if names := signature_names(line):
            return _unique(names), "text:signature"
    if source_people:
        return _unique(source_people), "text:source"
    issuer = _issuer(lines)
    if issuer is not None:
        return (issuer,), "text:issuer"
    for line in [*around.tail, *around.after, *around.head]:
        m = _CITATION.match(_nfkc(line).strip())
        if m and (names := split_names(m["names"], strict=True)):
            return _unique(names), "text:citation"
    if BLOG_OWNER and (names := blog_owner(scan, lines)):
        return _unique(names), "text:blog-owner"
    # An editor is not a writer: a page that names only its editor has no author here,
    # though some hand labels credit the editor then (docs/evaluation.md, record fields).
    return (), None


_PROSE = re.compile(r"[。！？!?；;]|[，,].*[，,]")


def _visible_byline(
    scan: PageScan, around: Around, top: Sequence[str]
) -> tuple[tuple[str, ...], str] | None:
    """The writers a visible byline names, with their provenance: a writer's label above or
    at the top of the body (where a byline element's text stands; see
    :data:`VISIBLE_BYLINE_FIRST`). The byline elements themselves are not searched here:
    on the labelled sets they added no page and cost 0.4 ms on each page with a JSON-LD
    author."""
    for line in [*top, *around.under_headline, *around.above]:
        if names := writer_names(line):
            return _unique(names), "text"
    return None


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    seen: list[str] = []
    for name in names:
        if name not in seen:
            seen.append(name)
    return tuple(seen)


def find_origin(
    scan: PageScan, around: Around, site_name: str | None = None
) -> tuple[str | None, str | None, list[str]]:
    """``(origin, origin_source, people)``: ``people`` are the persons a source line named
    instead of a source (``来源: 尹娟``), for :func:`find_authors`."""
    people: list[str] = []
    for line in around.near():
        for value in source_values(line):
            if len(value) <= 3 and is_chinese_name(value):  # 来源: 尹娟, a person
                people.append(value)
                continue
            if origin := normalise_origin(value, site_name):
                return origin, "text", people
    if value := scan.metas.get("source"):
        value = re.sub(r"^(?:来源|稿源|出处|source)\s*[:：]\s*", "", value.strip(), flags=re.I)
        if origin := normalise_origin(value, site_name):
            return origin, "meta:source", people
    for key in ("sourceOrganization", "publisher"):
        for obj in scan.json_ld:
            value = obj.get(key)
            if isinstance(value, list):
                value = value[0] if value else None
            if isinstance(value, dict):
                value = value.get("name")
            if isinstance(value, str) and (origin := normalise_origin(value, site_name)):
                return origin, "json-ld", people
    for line in around.head[:1]:
        text = _nfkc(line).strip()
        m = _DATELINE.match(_fold(text))
        if m and (origin := normalise_origin(text[m.start("agency") : m.end("agency")], site_name)):
            return origin, "text:dateline", people
    return None, None, people


def find_editor(around: Around) -> str | None:
    """The editor named around the body, the lines under it first."""
    for line in [
        *around.inside,
        *reversed(around.tail),
        *around.after,
        *around.before,
        *around.head,
    ]:
        if (value := editor_value(line)) is not None:
            return value
    return None


_HOME = re.compile(
    r"首页|主页|^home$|^首$|正文|^内容$|详情|^文章$|^当前位置|^您的位置|^位置$|^article$"
    r"|打印|分享|收藏|返回|登录|注册|申请|评论|关闭|字号|print|e-?mail|share|comment|login|sign in",
    re.I,
)
_CRUMB_LINE = re.compile(
    r"^(?:当前位置|您的位置|您现在的位置|现在位置|位置)\s*[:：]\s*(?P<rest>.+)$"
)


def _crumb_section(items: Sequence[str], title: str | None) -> str | None:
    t = _squash(title) if title else ""
    kept = []
    for item in items:
        item = (_clean(item) or "").strip(" :：>-–—|·")
        if not item or _HOME.search(item) or len(item) > 20:
            continue
        s = _squash(item)
        if t and (s in t or t in s) and len(s) > 4:
            continue
        kept.append(item)
    return kept[-1] if kept else None


def _section_value(value: str | None) -> str | None:
    """A stated section: the first of a comma-separated list, at most 40 characters, not a
    placeholder (``nil``, ``null``)."""
    value = _clean(value)
    if not value:
        return None
    value = value.split(", ")[0].strip()
    if (
        value.lower() in ("nil", "null", "none", "undefined", "post", "article", "articles")
        or len(value) > 40
    ):
        return None
    return value


def find_section(
    scan: PageScan, lines: Sequence[str], title: str | None
) -> tuple[str | None, str | None]:
    """``(section, section_source)`` (see the module doc)."""
    if value := _section_value(scan.metas.get("article:section")):
        return value, "meta:article:section"
    for obj in scan.json_ld:
        value = obj.get("articleSection")
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, str) and v.strip()), None)
        if isinstance(value, str) and (value := _section_value(value)):
            return value, "json-ld"
    for obj in scan.json_ld:
        if obj.get("@type") == "BreadcrumbList" and isinstance(obj.get("itemListElement"), list):
            items = []
            for item in obj["itemListElement"]:
                if isinstance(item, dict):
                    name = item.get("name")
                    if not isinstance(name, str) and isinstance(item.get("item"), dict):
                        name = item["item"].get("name")
                    if isinstance(name, str):
                        items.append(name)
            if section := _crumb_section(items, title):
                return section, "breadcrumb"
    for items in scan.crumbs:
        if section := _crumb_section(items, title):
            return section, "breadcrumb"
    if "位置" not in "\n".join(lines):  # the trigger: every label of a crumb line holds it
        return None, None
    for line in lines:
        if line and (m := _CRUMB_LINE.match(line.strip())):
            items = [w for w in _CRUMB_SPLIT.split(m["rest"]) if w.strip()]
            if len(items) >= 2 and (section := _crumb_section(items, title)):
                return section, "breadcrumb"
    return None, None


def section_from_url(
    url: str | None, rules: Mapping[str, str] | Iterable[tuple[str, str]]
) -> str | None:
    """A site row's section rule applied to ``url``: the first ``(pattern, section)`` whose
    regular expression is found in the URL's path gives ``section``, with ``\\1``-style
    groups expanded (``(r"^/(\\w+)/", r"\\1")``); None when none matches."""
    if not url:
        return None
    try:
        path = urlsplit(url).path or "/"
    except ValueError:
        return None
    pairs = rules.items() if isinstance(rules, Mapping) else rules
    for pattern, section in pairs:
        m = re.search(pattern, path)
        if m:
            value = m.expand(section) if "\\" in section else section
            return value.strip() or None
    return None


def _absolute(src: str, url: str | None, base: str | None) -> str | None:
    src = src.strip()
    if src.startswith("//"):
        scheme = urlsplit(url).scheme if url else "https"
        return f"{scheme or 'https'}:{src}"
    if re.match(r"^https?://", src, re.I):
        return src
    root = base or url
    if not root or not re.match(r"^https?://", root, re.I):
        return None
    try:
        return urljoin(root, src)
    except ValueError:
        return None


def find_image(
    scan: PageScan, body: str, title: str | None, url: str | None
) -> tuple[str | None, str | None]:
    """``(image, caption)``: ``og:image`` (``twitter:image``, JSON-LD ``image``), else the
    first large image the body text follows; as an absolute URL (None when it cannot be
    made absolute)."""
    named = meta_image(scan.metas, scan.json_ld)
    if named:
        image = _absolute(named, url, scan.base)
        if image:
            wanted = _file_name(image)
            caption = next((c.caption for c in scan.images if _file_name(c.src) == wanted), None)
            return image, caption
    if not scan.images:  # no candidate: the body's lines are not read
        return None, None
    starts = [_squash(line)[:10] for line in body.splitlines()]
    starts = [s for s in starts if len(s) >= 6]
    t = _squash(title)[:10] if title else ""
    for candidate in scan.images:
        following = candidate.following
        hits = [following.find(s) for s in starts if s in following]
        if not hits:
            continue
        if t and 0 <= following.find(t) < min(hits):
            continue  # the headline comes first: the image is above the article
        image = _absolute(candidate.src, url, scan.base)
        if image:
            return image, candidate.caption
    return None, None


def page_record(
    scan: PageScan,
    around: Around,
    lines: Sequence[str],
    body: str,
    title: str | None,
    url: str | None,
    site_name: str | None = None,
) -> Record:
    """Every record field of one page (see the module doc)."""
    origin, origin_source, people = find_origin(scan, around, site_name)
    editor = find_editor(around)
    authors, authors_source = find_authors(scan, around, editor, people, lines, site_name)
    section, section_source = find_section(scan, lines, title)
    image, caption = find_image(scan, body, title, url)
    return Record(
        authors=authors,
        authors_source=authors_source,
        origin=origin,
        origin_source=origin_source,
        editor=editor,
        section=section,
        section_source=section_source,
        image=image,
        image_caption=caption,
    )


# --------------------------------------------------------------------------
# Methods whose body is not a set of blocks


#: The page's lines for the methods whose body is not a set of blocks: §1.2.1's blocks,
#: with ``form`` as layout (a page wrapped in one form keeps its text).
_LINE_TYPE_I = tuple(t for t in TYPE_I if t != "form")
_LINE_TYPE_II = (*TYPE_II, "form")


def page_lines(root: etree._Element) -> tuple[list[str], list[int]]:
    """The page's lines (its blocks, links kept; empty ones included) and the indices of
    those that are all link text (navigation), without changing the tree; ``([], [])``
    for a tree too deep to mark without changing it."""
    try:
        marked = mark_blocks(root, _LINE_TYPE_I, _LINE_TYPE_II, walk=False)
    except etree.XSLTApplyError:
        return [], []
    blockset = split_blocks(marked, keep_links=True)
    nav = [
        i
        for i, (n, links) in enumerate(zip(blockset.blocknum, blockset.link_chars, strict=True))
        if n and links >= n
    ]
    return blockset.text, nav


def locate_body(
    lines: Sequence[str], body: str, title: str | None
) -> tuple[int | None, int | None, int | None]:
    """``(first, last, headline)``: the indices of the lines holding the body's first and
    last lines and the headline above them (None where not found)."""
    body_lines = [_squash(t) for t in body.splitlines()]
    body_lines = [t for t in body_lines if t]
    if not body_lines or not lines:
        return None, None, None
    squashed = [_squash(t) for t in lines]
    head, end = body_lines[0][:12], body_lines[-1][-12:]
    first = next((i for i, t in enumerate(squashed) if t and head in t), None)
    if first is None:
        return None, None, None
    last = next(
        (i for i in range(len(squashed) - 1, first - 1, -1) if squashed[i] and end in squashed[i]),
        first,
    )
    headline = None
    if title:
        t = _squash(title)
        for i in range(first - 1, max(-1, first - 30), -1):
            s = squashed[i]
            if s and (s == t or (t in s and len(s) <= 2 * len(t))):
                headline = i
                break
    return first, last, headline


def record_from_lines(
    scan: PageScan,
    lines: Sequence[str],
    nav: Sequence[int],
    body: str,
    title: str | None,
    url: str | None,
    site_name: str | None = None,
) -> Record:
    """:func:`page_record` for a method whose body is not a set of the page's blocks: the
    body is found among the page's lines (:func:`page_lines`) by its first and last lines."""
    first, last, headline = locate_body(lines, body, title)
    inside = (
        [
            i
            for i in range(first, last + 1)
            if record_line_hint(lines[i]) and is_record_line(lines[i])
        ]
        if first is not None and last is not None
        else []
    )
    around = around_body(lines, first, last, headline, nav, inside)
    return page_record(scan, around, lines, body, title, url, site_name)
