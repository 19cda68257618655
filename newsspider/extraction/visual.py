"""VL_PS, visual layout noise removal: Jing & Zuo (``visual``, ``visual+blockstats``).

The paper (§2.3, algorithm VL_PS) renders the page, reads its real size
``W`` × ``H`` and the absolute box ``(LEFT, TOP, WIDTH, HEIGHT)`` of every
element except BODY, and puts each element in one of five regions:

* ``TOP + HEIGHT <= H1`` → HEADER
* ``TOP >= H2`` → FOOTER
* ``LEFT + WIDTH <= W1`` → LM (left margin)
* ``LEFT >= W2`` → RM (right margin)
* every other element → CENTER

with ``H1 = 200`` px, ``H2 = H - 160`` px, ``W1 = 0.3·W``, ``W2 = 0.7·W``
(§3: "上边界H1为200, 下边界H2为160, W1和W2为页面实际宽度的30%"). The CENTER
content is the result; the other four regions are noise. The rules are
tried in the paper's order, so a box in a corner (HEADER and LM) is HEADER.

What "the CENTER content" is, precisely (the paper classifies elements but
returns content):

* **Text belongs to the element it sits in directly**: an element's own text
  and the text after each of its children (lxml's ``text`` and the
  children's ``tail``), not the text of its descendants, which have boxes of
  their own. The text of ``<p>a <b>b</b> c</p>`` is ``a`` and ``c`` for the
  ``p`` and ``b`` for the ``b``, each classified by its own element's box,
  inline elements included ("页面内所有元素", every element). Giving inline
  text the region of its nearest block-level ancestor instead was measured
  and is far worse (cx163-zh, first 8 pages, before a CJK font was
  installed: precision 0.34 against 0.83): navigation links sit in wide
  blocks that are CENTER.
* BODY is excluded from the classification, as in the paper. Text directly
  inside BODY (or HTML) is wrapped in an inline ``<span>`` before rendering,
  so it is classified by its own box.
* Text whose element has no visible box (``display: none`` or inside one,
  ``visibility: hidden``, ``<head>``, ``<script>``, ``<template>``) is not
  content: no one sees it. (The paper's rules would put such a zero box at
  the origin into HEADER; the outcome is the same.)
* The CENTER text is output one block per line, cut at the layout tags of
  Zou & Zhong §1.2.1 (:data:`.rules.markup.BEST_TYPE_II`, with whitespace runs
  collapsed and empty lines dropped), so every method's output has the same
  shape. Link text is kept: it is visible content.

How the boxes are read (:mod:`.render`): the page is decoded and parsed with
the project's own :func:`.encoding.decode_html` and lxml, every element is
numbered in an attribute (:data:`.render.ID_ATTRIBUTE`), and the
re-serialised page is rendered in headless Chromium (viewport 1280 px wide,
JavaScript off, a :data:`CSP` that allows inline styles only, and a route
that aborts every request); the boxes come back by number and are mapped to
the lxml elements, so the text is cut from the same tree the other methods
use. Before rendering, comments are dropped, frames lose their ``src``
(nothing would load anyway) and a ``<meta http-equiv=refresh>`` is removed.
``W`` and ``H`` are the page's real size (:class:`.render.Layout`): ``H`` is
the bottom of the lowest visible box, not the viewport's height.

Limits. The layout is what the page's own bytes define: inline styles,
``<style>`` elements, table and width attributes. External style sheets
are not in a saved page and are never fetched (no network), so a page laid
out by them renders as one unstyled column: HEADER and FOOTER still cut the
top 200 px and the bottom 160 px, but LM and RM catch only short inline
items at line starts and ends, and the sidebars stay CENTER. Chinese text
needs a CJK font (Debian's ``fonts-wqy-microhei``); without one every
character is a narrow placeholder box and the geometry is wrong.

``visual+blockstats`` (:class:`VisualBlockstats`) is the combination Jing &
Zuo propose, VL_PS as a pre-step: the text of every element in HEADER,
FOOTER, LM or RM, and of every hidden element of BODY, is removed, and Zou &
Zhong's block statistics (:func:`.article.extract_article`, in the
extractor's mode: ``visual+blockstats`` paper, ``visual+blockstats-best``
best) run on what is left.

Title and time for ``visual``: the page's metadata (``og:title``, JSON-LD,
``<meta>`` times) and Zou & Zhong §1.2.3 over the CENTER blocks, chosen as
the best mode does (:func:`.title_time.best_title`, :func:`.rules.times.best_published`).
"""

from __future__ import annotations

import dataclasses
import re
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo
from enum import StrEnum
from typing import Any, Self

from lxml import etree

from .article import extract_article
from .blocks import mark_blocks, split_blocks
from .blockstats import block_statistics
from .metadata import page_metadata
from .method import Extractor
from .model import ExtractedArticle
from .page import Page, load_page
from .paper import paper_title
from .render import ID_ATTRIBUTE, Layout, Renderer, shared_renderer
from .rules.body import textnums
from .rules.markup import BEST_TYPE_II
from .rules.times import best_published
from .title_time import best_title

#: Jing & Zuo §3 thresholds.
H1_DEFAULT = 200.0
H2_OFFSET_DEFAULT = 160.0
W1_DEFAULT = 0.3
W2_DEFAULT = 0.7

#: Elements of BODY that keep their content in the ``visual+blockstats``
#: pre-step although they have no box: the block statistics delete them
#: anyway (type I), and the metadata reads JSON-LD from scripts.
_KEEP_UNRENDERED = frozenset({"script", "style", "template", "noscript", "meta", "link"})
#: Elements whose direct text is wrapped in a span (the paper excludes BODY).
_UNCLASSIFIED = frozenset({"html", "body"})
_WS_ONLY = re.compile(r"^\s*$")


class Region(StrEnum):
    """The five regions of Jing & Zuo fig. 2, and NONE for text no one sees."""

    HEADER = "HEADER"
    FOOTER = "FOOTER"
    LM = "LM"
    RM = "RM"
    CENTER = "CENTER"
    NONE = "NONE"


NOISE = frozenset({Region.HEADER, Region.FOOTER, Region.LM, Region.RM})


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The absolute thresholds of one page (px): Jing & Zuo §2.3 b."""

    H1: float
    H2: float
    W1: float
    W2: float

    @classmethod
    def of_page(
        cls,
        W: float,
        H: float,
        *,
        H1: float = H1_DEFAULT,
        H2_offset: float = H2_OFFSET_DEFAULT,
        W1: float = W1_DEFAULT,
        W2: float = W2_DEFAULT,
    ) -> Self:
        """``H1`` px from the top, ``H2 = H - H2_offset``, ``W1·W`` and ``W2·W`` (§3)."""
        return cls(H1=H1, H2=H - H2_offset, W1=W1 * W, W2=W2 * W)


def classify(left: float, top: float, width: float, height: float, t: Thresholds) -> Region:
    """VL_PS step c (Jing & Zuo §2.3): the region of one box, rules in the paper's order."""
    if top + height <= t.H1:
        return Region.HEADER
    if top >= t.H2:
        return Region.FOOTER
    if left + width <= t.W1:
        return Region.LM
    if left >= t.W2:
        return Region.RM
    return Region.CENTER


@dataclass(slots=True)
class VisualPage:
    """One page after VL_PS: the parsed tree, its layout and every element's region.

    ``elements[k]`` is the element numbered ``k`` (its :data:`ID_ATTRIBUTE`)
    and ``regions[k]`` its region (NONE: no visible box), which its direct
    text takes.
    """

    root: etree._Element
    encoding: str
    elements: list[etree._Element]
    layout: Layout
    thresholds: Thresholds
    regions: list[Region]

    def region_of(self, el: etree._Element) -> Region:
        """The region of one element of :attr:`root`."""
        k = el.get(ID_ATTRIBUTE)
        return self.regions[int(k)] if k is not None else Region.NONE

    def texts(self) -> dict[Region, list[str]]:
        """The direct text of the elements, by the region it falls in (for display and tests)."""
        out: dict[Region, list[str]] = {r: [] for r in Region}
        for k, el in enumerate(self.elements):
            pieces = [el.text, *(child.tail for child in el)]
            text = " ".join(" ".join(p.split()) for p in pieces if p and p.strip())
            if text:
                out[self.regions[k]].append(text)
        return out


# --------------------------------------------------------------------------
# Preparing the tree


def decode_and_parse(
    html: bytes | str, headers: Mapping[Any, Any] | None = None
) -> tuple[etree._Element | None, str]:
    """Decode and parse a page as every method does (:func:`.page.load_page`)."""
    page = load_page(html, headers=headers)
    return page.root, page.encoding


def number_elements(root: etree._Element) -> list[etree._Element]:
    """Prepare a parsed page for rendering (in place) and number its elements.

    Comments and processing instructions are dropped (their text stays);
    text directly inside BODY or HTML is wrapped in a ``<span>`` (the paper
    excludes BODY, so such text needs a box of its own); every element gets
    its document-order number in :data:`ID_ATTRIBUTE`.
    """
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, with_tail=False)
    for el in [e for e in root.iter() if e.tag in _UNCLASSIFIED]:
        _wrap_direct_text(el)
    elements = list(root.iter())
    for k, el in enumerate(elements):
        el.set(ID_ATTRIBUTE, str(k))
    return elements


def _remove_keep_tail(el: etree._Element) -> None:
    """Remove an element, keeping the text that follows it."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        previous = el.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def _wrap_direct_text(el: etree._Element) -> None:
    if el.text and not _WS_ONLY.match(el.text):
        span = etree.Element("span")
        span.text, el.text = el.text, None
        el.insert(0, span)
    for child in list(el):
        if child.tail and not _WS_ONLY.match(child.tail):
            span = etree.Element("span")
            span.text, child.tail = child.tail, None
            child.addnext(span)


#: Content-Security-Policy of the rendered copy: inline styles only (and inline
#: scripts when JavaScript is on). The renderer never even asks for an image,
#: style sheet, font or frame, so the route that aborts every request (the
#: wall that does not depend on the page) has nothing to do.
CSP = "default-src 'none'; style-src 'unsafe-inline'"
CSP_JAVASCRIPT = CSP + "; script-src 'unsafe-inline' 'unsafe-eval'"


def render_source(root: etree._Element, *, javascript: bool = False) -> str:
    """The page as the browser gets it.

    The numbered tree with its doctype (quirks or standards mode changes the
    layout), a :data:`CSP` ``<meta>`` first in ``<head>``, frames without
    ``src``/``srcdoc`` and no ``<meta http-equiv=refresh>``. The tree keeps
    the last two changes (they do not touch any text); the CSP element is
    taken out again.
    """
    for el in root.iter("iframe", "frame"):
        for name in ("src", "srcdoc"):
            if name in el.attrib:
                del el.attrib[name]
    for el in list(root.iter("meta")):
        if (el.get("http-equiv") or "").strip().lower() == "refresh":
            _remove_keep_tail(el)
    head = root.find("head")
    added_head = head is None
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    csp = etree.Element("meta")
    csp.set("http-equiv", "Content-Security-Policy")
    csp.set("content", CSP_JAVASCRIPT if javascript else CSP)
    csp.tail, head.text = head.text, None
    head.insert(0, csp)
    try:
        source = etree.tostring(root, method="html", encoding="unicode")
    finally:
        head.text, csp.tail = csp.tail, None
        head.remove(csp)
        if added_head:
            root.remove(head)
    doctype = root.getroottree().docinfo.doctype
    return f"{doctype}\n{source}" if doctype else source


# --------------------------------------------------------------------------
# VL_PS


def vl_ps(
    html: bytes | str,
    *,
    headers: Mapping[Any, Any] | None = None,
    H1: float = H1_DEFAULT,
    H2_offset: float = H2_OFFSET_DEFAULT,
    W1: float = W1_DEFAULT,
    W2: float = W2_DEFAULT,
    renderer: Renderer | None = None,
    javascript: bool | None = None,
    timeout: float | None = None,
) -> VisualPage | None:
    """Jing & Zuo's VL_PS steps a-d on one page; None when lxml finds no document.

    Raises :class:`.errors.ExtractionError` for input that is not HTML, and
    its subclasses in :mod:`.render` when the page cannot be rendered.
    """
    page = load_page(html, headers=headers)
    if page.root is None:
        return None
    return _classify_tree(
        page.root,
        page.encoding,
        H1=H1,
        H2_offset=H2_offset,
        W1=W1,
        W2=W2,
        renderer=renderer,
        javascript=javascript,
        timeout=timeout,
    )


def _classify_tree(
    root: etree._Element,
    encoding: str,
    *,
    H1: float,
    H2_offset: float,
    W1: float,
    W2: float,
    renderer: Renderer | None,
    javascript: bool | None,
    timeout: float | None,
) -> VisualPage:
    """VL_PS steps a-d on a parsed page: render, read the boxes, classify them."""
    elements = number_elements(root)
    renderer = renderer or shared_renderer()
    js = renderer.javascript if javascript is None else javascript
    layout = renderer.layout(render_source(root, javascript=js), javascript=js, timeout=timeout)
    t = Thresholds.of_page(layout.width, layout.height, H1=H1, H2_offset=H2_offset, W1=W1, W2=W2)
    regions = [Region.NONE] * len(elements)
    for k, box in layout.boxes.items():
        if 0 <= k < len(elements) and elements[k].tag not in _UNCLASSIFIED:
            regions[k] = classify(box.left, box.top, box.width, box.height, t)
    return VisualPage(root, encoding, elements, layout, t, regions)


def _blank_text(page: VisualPage, drop: frozenset[Region] | set[Region]) -> None:
    """Remove (in place) the direct text of every element whose text region is in ``drop``."""
    for k, el in enumerate(page.elements):
        if page.regions[k] in drop:
            _blank_one(el)


def _blank_one(el: etree._Element) -> None:
    """Remove an element's direct text: its ``text`` and its children's ``tail``."""
    el.text = None
    for child in el:
        child.tail = None


class _VisualExtractor(Extractor):
    """VL_PS (Jing & Zuo §2.3 steps a-d) on the page, then what the method does with
    the regions (:meth:`after_vl_ps`).

    ``H1`` (px from the top), ``H2_offset`` (px from the bottom: ``H2 = H -
    H2_offset``), ``W1`` and ``W2`` (fractions of ``W``) are the paper's
    thresholds. ``renderer`` defaults to one shared headless Chromium
    (:func:`.render.shared_renderer`); ``javascript`` (None: the renderer's
    default, off) and ``timeout`` (seconds) go to it. Raises
    :class:`.render.VisualError` subclasses when the page cannot be rendered.
    """

    def extract(
        self,
        page: Page,
        url: str | None,
        *,
        H1: float = H1_DEFAULT,
        H2_offset: float = H2_OFFSET_DEFAULT,
        W1: float = W1_DEFAULT,
        W2: float = W2_DEFAULT,
        renderer: Renderer | None = None,
        javascript: bool | None = None,
        timeout: float | None = None,
    ) -> ExtractedArticle:
        assert page.root is not None
        visual = _classify_tree(
            page.root,
            page.encoding,
            H1=H1,
            H2_offset=H2_offset,
            W1=W1,
            W2=W2,
            renderer=renderer,
            javascript=javascript,
            timeout=timeout,
        )
        return self.after_vl_ps(visual, url, page.tz)

    @abstractmethod
    def after_vl_ps(self, visual: VisualPage, url: str | None, tz: tzinfo) -> ExtractedArticle:
        """The article from a classified page."""


class VisualCenter(_VisualExtractor):
    """``visual``: the CENTER content of VL_PS (Jing & Zuo §2.3) as the body.

    Parameters as for :class:`_VisualExtractor`.
    """

    def after_vl_ps(self, visual: VisualPage, url: str | None, tz: tzinfo) -> ExtractedArticle:
        root = visual.root
        meta, page_title, published_meta = page_metadata(root, tz)
        _blank_text(visual, set(Region) - {Region.CENTER})
        blockset = split_blocks(mark_blocks(root, (), BEST_TYPE_II), keep_links=True)
        stats = block_statistics(textnums(blockset))  # only to place §1.2.3's title/time window
        title, title_source = best_title(
            paper_title(blockset, stats, nonempty=True), meta, page_title
        )
        published, source = best_published(blockset, stats, published_meta, url, tz, title)
        return ExtractedArticle(
            title=title,
            published=published,
            published_source=source,
            text="\n".join(t for t in blockset.text if t),
            encoding=visual.encoding,
            mode=self.mode,
            url=url,
            title_source=title_source,
        )


class VisualBlockstats(_VisualExtractor):
    """``visual+blockstats``: VL_PS as a pre-step (Jing & Zuo §2.3), then Zou & Zhong.

    The text of the elements in HEADER, FOOTER, LM and RM, and of the hidden
    elements of BODY, is removed from the tree; :func:`.article.extract_article`
    in the extractor's mode (``"paper"`` or ``"best"``) runs on the rest.
    ``<head>`` is left as it is, so titles and times still come from the page's
    metadata. Parameters as for :class:`_VisualExtractor`.
    """

    def after_vl_ps(self, visual: VisualPage, url: str | None, tz: tzinfo) -> ExtractedArticle:
        _blank_text(visual, NOISE)
        for body in visual.root.iter("body"):
            for el in body.iter():
                k = el.get(ID_ATTRIBUTE)
                if k is not None and visual.regions[int(k)] is Region.NONE:
                    if el.tag not in _KEEP_UNRENDERED and el.tag not in _UNCLASSIFIED:
                        _blank_one(el)
        etree.strip_attributes(visual.root, ID_ATTRIBUTE)
        filtered = etree.tostring(visual.root, method="html", encoding="unicode")
        article = extract_article(filtered, url, mode=self.mode, tz=tz)
        return dataclasses.replace(article, encoding=visual.encoding)


#: ``visual`` as a function, for library use.
extract_visual = VisualCenter("visual")
#: ``visual+blockstats`` (block statistics in paper mode) as a function, for library use.
extract_visual_blockstats = VisualBlockstats("visual+blockstats")


__all__ = [
    "NOISE",
    "Region",
    "Thresholds",
    "VisualBlockstats",
    "VisualCenter",
    "VisualPage",
    "classify",
    "extract_visual",
    "extract_visual_blockstats",
    "vl_ps",
]
