"""Basic text blocks: Zou & Zhong 2011 §1.2.1 (ALGORITHMS.md §A1).

The paper repairs the markup, deletes the *type I* elements with their
content, replaces every *type II* (layout) tag by ``<textblock>`` and cuts the
result at those separators into ``blockset = b1, b2, ...``.

We do the same on an lxml tree without a Python walk over every node (the
expensive part of a naive implementation):

1. lxml's HTML parser repairs the markup (step 1).
2. ``etree.strip_elements(..., with_tail=False)`` deletes type I elements,
   comments and processing instructions, keeping the text that follows them
   (step 2; the ``drop_tree`` semantics ALGORITHMS.md asks for).
3. Each type II element gets a separator character prepended to its text
   (its start tag) and, unless it is void (``br``, ``hr``), prepended to its
   tail (its end tag): step 3. ``h1``-``h6`` start tags get their own
   separator so §1.2.3 can find the heading blocks.
   ``a`` is type I in the paper, but its text is kept between two link
   markers instead of being deleted, so that paper mode can delete it
   (identically) while the best mode can measure link density and keep
   links inside body paragraphs.
4. One C-level ``tostring(method="text")`` gives the marked-up text, which
   is split at the separators: every segment between two consecutive
   separators is a block, empty ones included (step 4).

The markers are Unicode private-use characters; any such characters in the
page are removed first so they cannot be confused with ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

#: Type I elements (Zou & Zhong table 1, ALGORITHMS.md §A1 step 2): deleted
#: with everything inside them. ``a`` is handled by link markers (see module doc).
TYPE_I: tuple[str, ...] = (
    "script",
    "noscript",
    "style",
    "meta",
    "param",
    "button",
    "select",
    "optgroup",
    "option",
    "label",
    "textarea",
    "fieldset",
    "legend",
    "input",
    "img",
    "image",
    "map",
    "area",
    "form",
    "iframe",
    "embed",
    "object",
    # Not in the paper's table; invisible or non-text content of modern pages.
    "svg",
    "template",
    "link",
    "canvas",
    "video",
    "audio",
)

#: Type II (layout) elements: each start and end tag is a block separator.
#: The HTML5 sectioning elements are ALGORITHMS.md's addition.
TYPE_II: tuple[str, ...] = (
    "div",
    "p",
    "dl",
    "dt",
    "dd",
    "hr",
    "br",
    "table",
    "tbody",
    "tr",
    "td",
    "th",
    "head",
    "body",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
)

#: Void type II elements: one separator, not two.
VOID_TYPE_II = frozenset({"br", "hr"})

SEP = "\ue000"  # any type II boundary
# "\ue001".."\ue006": start tag of h1..h6
LINK_START = "\ue010"
LINK_END = "\ue011"
_HEADING_SEP = {f"h{n}": chr(0xE000 + n) for n in range(1, 7)}

_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
_SPLIT = re.compile("([\ue000-\ue006])")
_LINK_SPAN = re.compile(f"{LINK_START}[^{LINK_END}]*{LINK_END}")
_LINK_MARK = re.compile(f"[{LINK_START}{LINK_END}]")
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class Block:
    """One basic text block ``b_i`` of the blockset.

    ``text`` is the output form (whitespace runs collapsed to one space);
    ``blocknum`` its count of non-whitespace characters (whitespace is removed
    *for counting* only, §1.2.1 step 3).
    """

    index: int
    text: str
    blocknum: int
    heading: int = 0  # n when the block opens with <hn>, else 0
    link_chars: int = 0  # non-whitespace characters inside <a> (kept text)


def strip_private_use(text: str) -> str:
    """Remove private-use characters so they cannot collide with the markers."""
    return _PRIVATE_USE.sub("", text)


def mark_blocks(root: etree._Element) -> str:
    """Apply §1.2.1 steps 2-3 to ``root`` **in place**; return the marked text.

    The caller must take any metadata (JSON-LD scripts, ``<meta>``) from the
    tree before calling this: type I elements are gone afterwards.
    """
    etree.strip_elements(
        root, etree.Comment, etree.ProcessingInstruction, *TYPE_I, with_tail=False
    )
    for el in root.iter(*TYPE_II):
        tag = el.tag
        el.text = _HEADING_SEP.get(tag, SEP) + el.text if el.text else _HEADING_SEP.get(tag, SEP)
        if tag not in VOID_TYPE_II:
            el.tail = SEP + el.tail if el.tail else SEP
    for el in root.iter("a"):
        el.text = LINK_START + el.text if el.text else LINK_START
        el.tail = LINK_END + el.tail if el.tail else LINK_END
    return etree.tostring(root, method="text", encoding="unicode", with_tail=False)


def split_blocks(marked: str, *, keep_links: bool) -> list[Block]:
    """Cut marked text at the separators: §1.2.1 step 4.

    ``keep_links=False`` is the paper: link text is deleted with the ``a``
    element (type I), together with any separators inside it.
    ``keep_links=True`` keeps it and records ``link_chars`` per block.
    """
    if not keep_links:
        marked = _LINK_MARK.sub("", _LINK_SPAN.sub("", marked))
    parts = _SPLIT.split(marked)
    # parts = [before, sep, seg, sep, seg, ...]; blocks are the segments that
    # follow a separator and precede the next one.
    blocks: list[Block] = []
    in_link = False
    n_parts = len(parts)
    for k in range(1, n_parts - 1, 2):
        sep, seg = parts[k], parts[k + 1]
        if k + 2 >= n_parts:
            break  # text after the last separator is outside every block
        heading = ord(sep) - 0xE000
        link_chars = 0
        if keep_links and (in_link or LINK_START in seg or LINK_END in seg):
            link_chars, in_link = _count_link_chars(seg, in_link)
            seg = _LINK_MARK.sub("", seg)
        text = _WS.sub(" ", seg).strip()
        blocknum = len(text) - text.count(" ")
        blocks.append(Block(len(blocks), text, blocknum, heading, link_chars))
    return blocks


def _count_link_chars(seg: str, in_link: bool) -> tuple[int, bool]:
    """Non-whitespace characters of ``seg`` that lie inside ``<a>``."""
    count = 0
    pos = 0
    for m in _LINK_MARK.finditer(seg):
        if in_link:
            count += _nonspace(seg[pos : m.start()])
        in_link = m.group() == LINK_START
        pos = m.end()
    if in_link:
        count += _nonspace(seg[pos:])
    return count, in_link


def _nonspace(s: str) -> int:
    return len(_WS.sub("", s))


def blockset_of(root: etree._Element, *, keep_links: bool = False) -> list[Block]:
    """The blockset of a parsed page (modifies ``root``): §1.2.1 steps 2-4."""
    return split_blocks(mark_blocks(root), keep_links=keep_links)
