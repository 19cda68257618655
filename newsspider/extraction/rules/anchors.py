"""Rules that choose the region §1.2.2 is run on, after rule ②: the article the page names
(``article_anchor``, ``anchor_trim``, ``headline_anchor``), the first of several posts
(``first_post``, ``comment_threads``), and the order the candidate regions are tried in
(``next_candidate``)."""

from __future__ import annotations

import re

from lxml import etree

from ..blocks import Blockset
from ..blockstats import BlockStatistics
from ..dates import stamp_with_time
from ..title_time import strip_spaces
from .common import ANCHOR_MIN_CHARS, HEADLINE_MIN_CHARS, SENTENCE, may_hold_tag
from .markup import best_type_ii

#: ``next_candidate``: on (the ablation switches it off), and the body text under which the
#: next candidate region is tried.
NEXT_CANDIDATE = True
NEXT_MIN_CHARS = 50
#: ``article_anchor``: on (the ablation switches it off); the text an anchor must hold,
#: and the share of mainblockset's text inside it below which the statistics are
#: run again inside the anchor.
ARTICLE_ANCHOR = True


ANCHOR_INSIDE = 0.5


#: ``anchor_trim``: on (the ablation switches it off).
ANCHOR_TRIM = True


#: ``article_anchor``: how many characters of each end of JSON-LD ``articleBody`` are looked for.
LD_PROBE = 30


#: ``headline_anchor``: on (the ablation switches it off), and the shortest headline it
#: recognises (a shorter ``h1`` may match the title by chance: a site name, "News").
HEADLINE_ANCHOR = True


#: ``headline_anchor``: sentences (blocks with sentence punctuation) the element around the
#: headline must hold besides it (more than a header's deck, caption and byline).
HEADLINE_MIN_BLOCKS = 4


#: ``first_post``: where a clock time may be (a cheap scan before the date pattern).
_CLOCK_HINT = re.compile(r"\d[:：]\d\d")


#: ``first_post``: on (the ablation switches it off); how many dated post headers make a
#: page of posts, how long a header is at most, how many blocks above the first header
#: the first post may start (its title).
FIRST_POST = True


#: ``comment_threads``: on (the ablation switches it off).
COMMENT_THREADS = True


POST_MIN = 3


POST_HEADER_MAX = 80


POST_LEAD = 10


def ld_body_region(blockset: Blockset, ld_body: str) -> range | None:
    """``article_anchor``: the blocks from the one holding the first ``LD_PROBE`` characters
    of the JSON-LD ``articleBody`` to the one holding its last, or None."""
    head, tail = strip_spaces(ld_body[:LD_PROBE]), strip_spaces(ld_body[-LD_PROBE:])
    if len(head) < LD_PROBE // 2:
        return None
    text = blockset.text
    start = next((i for i, t in enumerate(text) if t and head in strip_spaces(t)), None)
    if start is None:
        return None
    end = next(
        (
            i
            for i in range(len(text) - 1, start - 1, -1)
            if text[i] and tail in strip_spaces(text[i])
        ),
        None,
    )
    return range(start, (end if end is not None else start) + 1)


def find_anchor(root: etree._Element, markup: str | None = None) -> etree._Element | None:
    """``article_anchor``: the element the page names as its article, or None.

    The element with ``itemprop=articleBody``; else the outermost ``<article>``
    holding the first ``<h1>``; else the only outermost ``<article>``. Only type II
    elements qualify (they are the ones blocks know).

    The trigger (``markup``: the page's decoded text): the tree is searched for an
    ``itemprop`` only when the markup holds ``articleBody`` (the value the test matches
    exactly), and for ``<article>`` elements only when it holds ``<article`` (the parser
    lowercases tag names: written in lower case, upper case or capitalised).
    """
    if markup is None or "articleBody" in markup:
        for el in _XP_ARTICLE_BODY(root):  # document order
            if el.tag in best_type_ii():
                return el
    if not may_hold_tag(markup, "article"):
        return None
    outer = [a for a in root.iter("article") if not _XP_IN_ARTICLE(a)]
    if not outer:
        return None
    h1 = next(root.iter("h1"), None)
    if h1 is not None and _XP_IN_ARTICLE(h1):
        for a in outer:
            if a in h1.iterancestors("article"):
                return a
    return outer[0] if len(outer) == 1 else None


def find_headline(
    root: etree._Element, titles: tuple[str | None, ...], markup: str | None = None
) -> etree._Element | None:
    """``headline_anchor``: the first ``h1`` whose text is in one of ``titles`` (the page's
    ``og:title`` or JSON-LD headline, its ``<title>``) or holds one of them, or None.
    The trigger: the markup holds an ``<h1`` (``markup``: the page's decoded text)."""
    if not may_hold_tag(markup, "h1"):
        return None
    wanted = [t for t in map(strip_spaces, filter(None, titles)) if len(t) >= HEADLINE_MIN_CHARS]
    if not wanted:
        return None
    for h1 in root.iter("h1"):
        text = strip_spaces("".join(h1.itertext()))
        if len(text) >= HEADLINE_MIN_CHARS and any(text in t or t in text for t in wanted):
            return h1
    return None


def headline_region(blockset: Blockset, textnum: list[int], k: int) -> range | None:
    """``headline_anchor``: the blocks of the nearest element around the headline (element
    ``k``) holding ``ANCHOR_MIN_CHARS`` of text in ``HEADLINE_MIN_BLOCKS`` sentences
    besides it, or None. A deck under the headline is one block: the element around the
    two goes on up to the body."""
    own = blockset.block_range(k)
    if own is None:
        return None
    while (k := blockset.parent[k]) >= 0:
        region = blockset.block_range(k)
        if region is None:
            return None
        prose = [
            textnum[i]
            for i in region
            if textnum[i] and i not in own and SENTENCE.search(blockset.text[i])
        ]
        if len(prose) >= HEADLINE_MIN_BLOCKS and sum(prose) >= ANCHOR_MIN_CHARS:
            return region
    return None


_XP_ARTICLE_BODY = etree.XPath("//*[@itemprop='articleBody']")


_XP_IN_ARTICLE = etree.XPath("boolean(ancestor::article)")


def anchored_textnum(
    blockset: Blockset,
    stats: BlockStatistics,
    textnum: list[int],
    ld_body: str | None = None,
    headline: bool = False,
) -> list[int] | None:
    """``article_anchor``: textnum with everything outside the anchor zeroed, when the
    §1.2.2 runs chose a region outside the article the page names; else None.

    The anchor is the element :func:`find_anchor` marked (``headline``: the headline
    :func:`find_headline` marked, and the anchor is :func:`headline_region` around it
    when block_i lies in that region: the runs start in the article under its headline
    and run on past it),
    else the blocks from the one holding the start of the JSON-LD ``articleBody`` to the
    one holding its end. Used when the anchor holds at least ``ANCHOR_MIN_CHARS`` and less
    than ``ANCHOR_INSIDE`` of mainblockset's text lies inside it.
    """
    if not stats.mainblockset:
        return None
    if blockset.anchor >= 0 and headline:
        region = headline_region(blockset, textnum, blockset.anchor)
        if region is not None and stats.mainblockset[0] not in region:
            return None  # the runs start elsewhere: the article is not under this headline
    elif blockset.anchor >= 0:
        region = blockset.block_range(blockset.anchor)
    elif ld_body:
        head = strip_spaces(ld_body[:LD_PROBE])
        if any(head in strip_spaces(blockset.text[i]) for i in stats.mainblockset):
            return None  # the runs hold the article's start already
        region = ld_body_region(blockset, ld_body)
    else:
        return None
    if not region or sum(textnum[region.start : region.stop]) < ANCHOR_MIN_CHARS:
        return None
    main_total = sum(map(textnum.__getitem__, stats.mainblockset))
    inside = sum(textnum[i] for i in stats.mainblockset if i in region)
    if inside >= ANCHOR_INSIDE * main_total and (
        headline or not ANCHOR_TRIM or inside == main_total
    ):
        return None  # anchor_trim: the runs are held to the named article
    return [n if i in region else 0 for i, n in enumerate(textnum)]


def first_post(blockset: Blockset, stats: BlockStatistics, textnum: list[int]) -> list[int] | None:
    """``first_post``: textnum restricted to the first post, on a page of several dated posts.

    Blog front pages and forum threads repeat a post header holding a date and
    time (``2005-03-21 01:20:44``, ``发表于 2005-5-7 21:23``) in elements of one
    tag and class; the article is the first post. When ``POST_MIN`` such
    headers exist, the §1.2.2 body starts after the first of them, and the
    posts between consecutive headers hold ``ANCHOR_MIN_CHARS`` on average,
    the statistics are run again on the first post alone (from
    ``POST_LEAD`` blocks above its header to the second header).

    ``comment_threads``: when the entries are shorter than that on average,
    they are comments, and textnum is restricted to the blocks above the first
    (when those hold ``ANCHOR_MIN_CHARS``).
    """
    text = blockset.text
    block_i = stats.block_i
    if block_i is None:
        return None
    page = "\n".join(text)  # one line per block, empty ones included
    if page.count(":") + page.count("：") < POST_MIN:  # the trigger: each clock holds a colon
        return None
    clocks = list(_CLOCK_HINT.finditer(page))
    if len(clocks) < POST_MIN:
        return None
    stamps = []
    line, at = 0, 0
    for m in clocks:  # the blocks holding a clock time (blocks hold no newline), in one pass
        line += page.count("\n", at, m.start())
        at = m.start()
        t = text[line]
        if (not stamps or stamps[-1] != line) and len(t) <= POST_HEADER_MAX and stamp_with_time(t):
            stamps.append(line)
    if len(stamps) < POST_MIN:
        return None
    elements = blockset.elements
    groups: dict[tuple[str, str], list[int]] = {}
    for i in stamps:
        k = blockset.element_of(i)
        if k >= 0:
            el = elements[k]
            if el.get("class"):
                groups.setdefault((el.tag, el.get("class")), []).append(i)
    posts = min(
        (g for g in groups.values() if len(g) >= POST_MIN and g[0] <= block_i),
        key=lambda g: g[0],
        default=None,
    )
    if posts is None:
        return None
    spread = sum(textnum[posts[0] : posts[-1]]) / (len(posts) - 1)
    if spread < ANCHOR_MIN_CHARS:
        # comment_threads: short dated entries around block_i are a thread of comments,
        # and the article is what stands above the first of them
        if not COMMENT_THREADS or sum(textnum[: posts[0]]) < ANCHOR_MIN_CHARS:
            return None
        return textnum[: posts[0]] + [0] * (len(textnum) - posts[0])
    if not FIRST_POST:
        return None
    window = range(max(0, posts[0] - POST_LEAD), posts[1])
    if sum(textnum[window.start : window.stop]) < ANCHOR_MIN_CHARS:
        return None
    return [n if i in window else 0 for i, n in enumerate(textnum)]
