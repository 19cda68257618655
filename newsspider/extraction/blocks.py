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
   tail (its end tag): step 3. The separator encodes which element and which
   tag it stands for, so a block knows the element it lies in (needed for
   the ``h1``-``h6`` title rule of §1.2.3 and by the best mode).
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

#: Separators are code points of the supplementary private-use planes:
#: ``BASE + 2k`` is the start tag of the k-th type II element (document order),
#: ``BASE + 2k + 1`` its end tag, so each block knows the element that opened it.
BASE = 0xF0000
#: Elements past this many share one code (no element identity, still a separator).
MAX_ELEMENTS = 65000
LINK_START = "\ue010"
LINK_END = "\ue011"
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}

_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")
_SPLIT = re.compile("([\U000f0000-\U0010ffff])")
_LINK_SPAN = re.compile(f"{LINK_START}[^{LINK_END}]*{LINK_END}")
_LINK_MARK = re.compile(f"[{LINK_START}{LINK_END}]")
_WS = re.compile(r"\s+")


@dataclass(slots=True)
class Block:
    """One basic text block ``b_i`` of the blockset.

    ``text`` is the output form (whitespace runs collapsed to one space);
    ``blocknum`` its count of non-whitespace characters (whitespace is removed
    *for counting* only, §1.2.1 step 3). ``element`` is the index (in
    :attr:`Blockset.elements`) of the type II element whose tag opened the
    block, ``opened_by_start`` whether that was its start tag.
    """

    index: int
    text: str
    blocknum: int
    heading: int = 0  # n when the block opens with <hn>, else 0
    link_chars: int = 0  # non-whitespace characters inside <a> (kept text)
    element: int = -1
    opened_by_start: bool = True


@dataclass(slots=True)
class Blockset:
    """The blockset plus the map from type II elements to block ranges."""

    blocks: list[Block]
    elements: list[etree._Element]
    #: element index -> index of the first block inside it (after its start tag)
    first_block: dict[int, int]
    #: element index -> index of the first block after its end tag
    end_block: dict[int, int]

    def container(self, block: Block) -> etree._Element | None:
        """The element a block's text lies in (directly or in inline children)."""
        if block.element < 0 or block.element >= len(self.elements):
            return None
        el = self.elements[block.element]
        if block.opened_by_start and el.tag not in VOID_TYPE_II:
            return el
        return el.getparent()

    def block_range(self, k: int) -> range | None:
        """Indices of the blocks inside the k-th type II element, or None."""
        if k not in self.first_block:
            return None
        return range(self.first_block[k], self.end_block.get(k, len(self.blocks)))


def strip_private_use(text: str) -> str:
    """Remove private-use characters so they cannot collide with the markers."""
    return _PRIVATE_USE.sub("", text) if _PRIVATE_USE.search(text) else text


def mark_blocks(
    root: etree._Element,
    type_i: tuple[str, ...] = TYPE_I,
    type_ii: tuple[str, ...] = TYPE_II,
) -> tuple[str, list[etree._Element]]:
    """Apply §1.2.1 steps 2-3 to ``root`` **in place**; return the marked text.

    Also returns the type II elements in document order (the separators
    refer to them by index). The caller must take any metadata (JSON-LD
    scripts, ``<meta>``) from the tree before calling this: type I elements
    are gone afterwards. ``type_i``/``type_ii`` default to the paper's table;
    the best mode passes its own (see :mod:`.best`).
    """
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, *type_i, with_tail=False)
    elements = list(root.iter(*type_ii))
    for k, el in enumerate(elements):
        code = BASE + 2 * min(k, MAX_ELEMENTS)
        sep = chr(code)
        el.text = sep + el.text if el.text else sep
        if el.tag not in VOID_TYPE_II:
            sep = chr(code + 1)
            el.tail = sep + el.tail if el.tail else sep
    for el in root.iter("a"):
        el.text = LINK_START + el.text if el.text else LINK_START
        el.tail = LINK_END + el.tail if el.tail else LINK_END
    marked = etree.tostring(root, method="text", encoding="unicode", with_tail=False)
    return marked, elements


def split_blocks(marked: str, elements: list[etree._Element], *, keep_links: bool) -> Blockset:
    """Cut marked text at the separators: §1.2.1 step 4.

    ``keep_links=False`` is the paper: link text is deleted with the ``a``
    element (type I), together with any separators inside it.
    ``keep_links=True`` keeps it and records ``link_chars`` per block.
    """
    if not keep_links:
        marked = _LINK_MARK.sub("", _LINK_SPAN.sub("", marked))
    # One pass over the whole text instead of one per block: whitespace runs
    # become one space (the separators are not whitespace, so blocks stay apart).
    parts = _SPLIT.split(_WS.sub(" ", marked))
    # parts = [before, sep, seg, sep, seg, ...]; blocks are the segments that
    # follow a separator and precede the next one.
    blocks: list[Block] = []
    first_block: dict[int, int] = {}
    end_block: dict[int, int] = {}
    in_link = False
    n_parts = len(parts)
    for k in range(1, n_parts, 2):
        code = ord(parts[k]) - BASE
        element, is_start = code >> 1, not code & 1
        if element >= MAX_ELEMENTS:
            element = -1
        elif is_start:
            first_block[element] = len(blocks)
        else:
            end_block[element] = len(blocks)
        if k + 2 >= n_parts:
            break  # text after the last separator is outside every block
        seg = parts[k + 1]
        link_chars = 0
        if keep_links and (in_link or LINK_START in seg or LINK_END in seg):
            link_chars, in_link = _count_link_chars(seg, in_link)
            seg = _LINK_MARK.sub("", seg)
        text = seg.strip()
        blocknum = len(text) - text.count(" ")
        heading = _HEADINGS.get(elements[element].tag, 0) if is_start and element >= 0 else 0
        blocks.append(Block(len(blocks), text, blocknum, heading, link_chars, element, is_start))
    return Blockset(blocks, elements, first_block, end_block)


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


def blockset_of(
    root: etree._Element,
    *,
    keep_links: bool = False,
    type_i: tuple[str, ...] = TYPE_I,
    type_ii: tuple[str, ...] = TYPE_II,
) -> Blockset:
    """The blockset of a parsed page (modifies ``root``): §1.2.1 steps 2-4."""
    marked, elements = mark_blocks(root, type_i, type_ii)
    return split_blocks(marked, elements, keep_links=keep_links)
