"""Title and time for the methods whose body is a set of text nodes.

Punctuation (Li & Jiang 2012) and xpath clusters (Hou & Yang 2011) find the
body as text nodes of the parsed page and say nothing of its headline or
time. They take both from here:

* :func:`read_metadata`: the page's ``og:title``/JSON-LD headline, its
  ``<title>`` without site names and its metadata publication time, read
  *before* a method deletes ``<meta>`` and ``<script>``;
* :func:`finish_article`: title and time for the body the method found, with
  the ``meta_first`` rule of :mod:`.title_time`: the heading near the body when
  it agrees with the page's titles, else ``og:title``/JSON-LD, else
  ``<title>``; the metadata time (a date-only one gives way to a same-day time
  found in the text), else the paper pattern of Zou & Zhong §1.2.3 near the
  body's first and last nodes, else anywhere in the page, else a date in the
  URL.

"Near the body" is counted in the method's own text nodes (a text node here
plays the part of a block in §1.2.3): :data:`NEAR_NODES` nodes before the
first body node for the headline, ``NEAR_NODES`` on either side of the first
and the last body node for the time.

Pure: lxml and the standard library, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from lxml import etree

from .dates import find_date
from .metadata import page_metadata
from .model import ExtractedArticle
from .page import Page
from .title_time import best_title, combine_published

__all__ = [
    "NEAR_NODES",
    "PageMetadata",
    "TextNode",
    "finish_article",
    "near_heading",
    "published_of",
    "read_metadata",
    "text_time",
]

#: How many text nodes before (and, for the time, after) the body's ends are
#: "near" it. Our setting: a text node is smaller than a §1.2.1 block (a
#: headline, a date, a source line are one node each, with breadcrumbs and
#: share links between), so the window is wider than §1.2.3's two blocks.
NEAR_NODES = 8

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


@dataclass(frozen=True, slots=True)
class TextNode:
    """One text node of a method's tree: its text (output form) and the element holding it.

    ``element`` is the element whose ``.text`` it is, or the parent of the
    element whose ``.tail`` it is: the element it is displayed in.
    """

    text: str
    element: etree._Element


@dataclass(frozen=True, slots=True)
class PageMetadata:
    """What the page says about itself, read before any method changes the tree."""

    meta_title: tuple[str, str] | None  # (headline, source) from og:title / JSON-LD
    html_title: str | None  # <title> without site names (Zou & Zhong §1.2.3 filter)
    meta_published: tuple[datetime, str] | None  # (time, source) from JSON-LD / <meta>


def read_metadata(root: etree._Element, tz: tzinfo) -> PageMetadata:
    """The page's own title and time (:mod:`.metadata`); call before the tree is changed."""
    return PageMetadata(*page_metadata(root, tz))


def _heading_level(element: etree._Element) -> int:
    """n when the element is or lies inside ``<hn>``, else 0."""
    el: etree._Element | None = element
    while el is not None:
        level = _HEADINGS.get(el.tag) if isinstance(el.tag, str) else None
        if level:
            return level
        el = el.getparent()
    return 0


def near_heading(nodes: Sequence[TextNode], first: int) -> str | None:
    """The headline near the body: the highest-level ``h1``-``h6`` text among the
    :data:`NEAR_NODES` nodes before the first body node and that node itself
    (§1.2.3's rule, counted in text nodes); the nearest one on a tie."""
    best: tuple[int, int] | None = None
    for i in range(max(0, first - NEAR_NODES), min(len(nodes), first + 1)):
        level = _heading_level(nodes[i].element)
        if level and (best is None or (level, -i) <= (best[0], -best[1])):
            best = (level, i)
    return nodes[best[1]].text if best else None


def text_time(nodes: Sequence[TextNode], first: int, last: int, tz: tzinfo) -> datetime | None:
    """The paper's date pattern (Zou & Zhong §1.2.3, :func:`.dates.find_date`) near the body.

    Nodes ``first - NEAR_NODES … first + NEAR_NODES`` first, then the same
    window around ``last``, then the whole page in order.
    """
    windows = (
        range(max(0, first - NEAR_NODES), min(len(nodes), first + NEAR_NODES + 1)),
        range(max(0, last - NEAR_NODES), min(len(nodes), last + NEAR_NODES + 1)),
    )
    for window in windows:
        found = find_date("\n".join(nodes[i].text for i in window), tz)
        if found is not None:
            return found
    return find_date("\n".join(node.text for node in nodes), tz)


def published_of(
    meta: PageMetadata,
    nodes: Sequence[TextNode],
    body: Sequence[int],
    url: str | None,
    tz: tzinfo,
) -> tuple[datetime | None, str | None]:
    """(time, source): the ``meta_first`` rule (:func:`.title_time.combine_published`)
    on text nodes."""
    found = None
    if nodes:
        first, last = (body[0], body[-1]) if body else (0, len(nodes) - 1)
        found = text_time(nodes, first, last, tz)
    return combine_published(found, meta.meta_published, url, tz)


def finish_article(
    page: Page,
    meta: PageMetadata,
    nodes: Sequence[TextNode],
    body: Sequence[int],
    url: str | None,
    mode: str,
    lines: Sequence[str] | None = None,
) -> ExtractedArticle:
    """The :class:`ExtractedArticle` for a body given as indices into ``nodes`` (document order).

    The body text is the chosen nodes' text, one node per line, unless
    ``lines`` gives the output lines explicitly. Title and time as the module
    docstring says.
    """
    heading = near_heading(nodes, body[0]) if body else None
    title, title_source = best_title(heading, meta.meta_title, meta.html_title)
    published, published_source = published_of(meta, nodes, body, url, page.tz)
    if lines is None:
        lines = [nodes[i].text for i in body]
    return ExtractedArticle(
        title=title,
        published=published,
        published_source=published_source,
        text="\n".join(line for line in lines if line),
        encoding=page.encoding,
        mode=mode,
        url=url,
        title_source=title_source,
    )
