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
from collections.abc import Callable
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
_OPEN_LINK_SPAN = re.compile(f"{LINK_START}[^{LINK_END}]*(?:{LINK_END}|$)")
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
    """The blockset as columns (one list per value, index = block number).

    Columns rather than one object per block: a page has ~1000 blocks, most
    of them empty, and building them as lists is 2.5x faster (the hot path of
    extraction). :attr:`blocks` gives :class:`Block` objects for display,
    tests and paper mode.
    """

    text: list[str]
    blocknum: list[int]
    link_chars: list[int]
    element: list[int]  # index in `elements` of the type II element that opened the block
    opened_by_start: list[bool]
    elements: list[etree._Element]
    #: separator codes in order: 2k for the start tag of element k, 2k+1 for its
    #: end tag; separator i precedes block i.
    codes: list[int]

    def __len__(self) -> int:
        return len(self.text)

    def heading(self, i: int) -> int:
        """n when block i opens with ``<hn>`` (§1.2.3), else 0."""
        k = self.element[i]
        if k < 0 or not self.opened_by_start[i]:
            return 0
        return _HEADINGS.get(self.elements[k].tag, 0)

    @property
    def blocks(self) -> list[Block]:
        return [
            Block(i, t, n, self.heading(i), lc, k, st)
            for i, (t, n, lc, k, st) in enumerate(
                zip(
                    self.text,
                    self.blocknum,
                    self.link_chars,
                    self.element,
                    self.opened_by_start,
                    strict=True,
                )
            )
        ]

    def container(self, i: int) -> etree._Element | None:
        """The element block i's text lies in (directly or in inline children)."""
        k = self.element[i]
        if k < 0 or k >= len(self.elements):
            return None
        el = self.elements[k]
        if self.opened_by_start[i] and el.tag not in VOID_TYPE_II:
            return el
        return el.getparent()

    def block_range(self, k: int) -> range | None:
        """Indices of the blocks inside the k-th type II element, or None.

        A lookup in the separator codes (C-level ``list.index``), made only
        for the few elements the best mode asks about.
        """
        try:
            first = self.codes.index(2 * k)
        except ValueError:
            return None
        try:
            end = self.codes.index(2 * k + 1, first)
        except ValueError:
            end = len(self.text)  # void element or end tag lost: to the end
        if self.elements[k].tag in VOID_TYPE_II:
            end = first  # holds no block
        return range(first, min(end, len(self.text)))


def strip_private_use(text: str) -> str:
    """Remove private-use characters so they cannot collide with the markers."""
    return _PRIVATE_USE.sub("", text) if _PRIVATE_USE.search(text) else text


def mark_blocks(
    root: etree._Element,
    type_i: tuple[str, ...] = TYPE_I,
    type_ii: tuple[str, ...] = TYPE_II,
    flag: Callable[[etree._Element], bool] | None = None,
) -> tuple[str, list[etree._Element], list[int]]:
    """Apply §1.2.1 steps 2-3 to ``root`` **in place**; return the marked text.

    Also returns the type II elements in document order (the separators
    refer to them by index). The caller must take any metadata (JSON-LD
    scripts, ``<meta>``) from the tree before calling this: type I elements
    are gone afterwards. ``type_i``/``type_ii`` default to the paper's table;
    the best mode passes its own (see :mod:`.best`).

    ``flag``, when given, is asked about every type II element on the way
    (one walk instead of two); the indices it says yes to are returned.
    """
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, *type_i, with_tail=False)
    elements = list(root.iter(*type_ii))
    flagged: list[int] = []
    void = VOID_TYPE_II
    for k, el in enumerate(elements):  # the hot loop: one pass, locals only
        if flag is not None and flag(el):
            flagged.append(k)
        code = BASE + 2 * (k if k < MAX_ELEMENTS else MAX_ELEMENTS)
        text = el.text
        el.text = chr(code) + text if text else chr(code)
        if el.tag not in void:
            tail = el.tail
            el.tail = chr(code + 1) + tail if tail else chr(code + 1)
    for el in root.iter("a"):
        el.text = LINK_START + el.text if el.text else LINK_START
        el.tail = LINK_END + el.tail if el.tail else LINK_END
    marked = etree.tostring(root, method="text", encoding="unicode", with_tail=False)
    return marked, elements, flagged


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
    # parts = [before, sep, seg, sep, seg, ..., sep, after]: a block is a
    # segment between two separators (the text before the first and after the
    # last separator lies outside every block).
    codes = [ord(c) - BASE for c in parts[1::2]]
    segs = parts[2:-1:2]
    text = [seg.strip() for seg in segs]
    blocknum = [len(t) - t.count(" ") for t in text]
    link_chars = [0] * len(text)
    if keep_links:
        _link_columns(segs, text, blocknum, link_chars)
    n = len(text)
    element = [c >> 1 if c >> 1 < MAX_ELEMENTS else -1 for c in codes[:n]]
    is_start = [not c & 1 for c in codes[:n]]
    return Blockset(text, blocknum, link_chars, element, is_start, elements, codes)


def _link_columns(
    segs: list[str], text: list[str], blocknum: list[int], link_chars: list[int]
) -> None:
    """Fill ``link_chars`` and drop the link markers from ``text`` (in place).

    Only segments with a marker are looked at, plus the segments that lie
    wholly inside a link that crosses separators (``<a><div>..</div></a>``).
    Whitespace is already one space (``split_blocks``), so the count of
    non-whitespace characters is ``len - count(" ")``.
    """
    in_link = False
    previous = -1
    for i in [i for i, seg in enumerate(segs) if LINK_START in seg or LINK_END in seg]:
        if in_link:  # every block between the last marker and this one is link text
            for j in range(previous + 1, i):
                link_chars[j] = blocknum[j]
        seg = LINK_START + segs[i] if in_link else segs[i]
        in_link = seg.rfind(LINK_START) > seg.rfind(LINK_END)
        # str.replace, not re.sub, for single characters: ~5x faster here
        outside = _OPEN_LINK_SPAN.sub("", seg).replace(LINK_END, "")
        t = text[i].replace(LINK_START, "").replace(LINK_END, "")
        text[i] = t
        blocknum[i] = len(t) - t.count(" ")
        link_chars[i] = blocknum[i] - (len(outside) - outside.count(" "))
        previous = i
    if in_link:
        for j in range(previous + 1, len(segs)):
            link_chars[j] = blocknum[j]


def blockset_of(
    root: etree._Element,
    *,
    keep_links: bool = False,
    type_i: tuple[str, ...] = TYPE_I,
    type_ii: tuple[str, ...] = TYPE_II,
) -> Blockset:
    """The blockset of a parsed page (modifies ``root``): §1.2.1 steps 2-4."""
    marked, elements, _ = mark_blocks(root, type_i, type_ii)
    return split_blocks(marked, elements, keep_links=keep_links)
