"""Basic text blocks: Zou & Zhong 2011 §1.2.1.

The paper repairs the markup, deletes the *type I* elements with their
content, replaces every *type II* (layout) tag by ``<textblock>`` and cuts the
result at those separators into ``blockset = b1, b2, ...``.

We do the same on an lxml tree without a Python walk over every node (the
expensive part of a naive implementation):

1. lxml's HTML parser repairs the markup (step 1).
2. One XSLT pass (libxslt, C) writes the marked text (steps 2-3): type I
   elements, comments and processing instructions have empty templates, so
   they are skipped with their content while the text after them is kept
   (lxml's ``drop_tree`` semantics); every type II start
   tag, end tag and void element writes a separator (:data:`SEPARATOR` and a
   kind letter, see :class:`Marked`). The k-th separator that is not an end
   tag stands for the k-th type II element, so a block knows the element it
   lies in (needed for the ``h1``-``h6`` title rule of §1.2.3, whose level is
   in the kind letter, and by the best mode). ``a`` is type I in the paper,
   but its text is kept between two link markers instead of being deleted,
   so that paper mode can delete it (identically) while the best mode can
   measure link density and keep links inside body paragraphs.
3. The marked text is split at the separators (C-level ``str.split``):
   every segment between two consecutive separators is a block, empty ones
   included (step 4).

The markers are Unicode private-use characters; any such characters in the
page are removed first so they cannot be confused with ours.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from itertools import repeat
from operator import sub

from lxml import etree

#: Type I elements (Zou & Zhong §1.2.1 table 1, step 2): deleted
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
#: The HTML5 sectioning elements are our addition (the paper predates them).
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

#: Every separator of the marked text is this private-use character followed by
#: an ASCII letter for its kind (see :class:`Marked`): two characters, so that a
#: C-level ``str.split`` cuts the text, and BMP ones, so that the text stays a
#: two-byte string (any such characters in the page are removed before parsing).
SEPARATOR = "\ue000"
#: A separator inside a deleted link (paper mode): numbers an element, cuts no block.
DEAD_SEPARATOR = "\ue001"
LINK_START = "\ue010"
LINK_END = "\ue011"
_HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}

_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")
_LINK_SPAN = re.compile(f"{LINK_START}[^{LINK_END}]*{LINK_END}")
_LINK_SPAN_PLAIN = re.compile(f"{LINK_START}[^{LINK_END}{SEPARATOR}]*{LINK_END}")
_LINK_MARK = re.compile(f"[{LINK_START}{LINK_END}]")
_OPEN_LINK_SPAN = re.compile(f"{LINK_START}[^{LINK_END}]*(?:{LINK_END}|$)")


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
    of them empty, and building them as lists is much faster (the hot path of
    extraction). :attr:`blocks` gives :class:`Block` objects for display,
    tests and paper mode.

    Separator i precedes block i. The type II elements are numbered in
    document order; ``codes``, ``kinds`` and ``parent`` describe them without
    touching the tree, and :attr:`elements` gives the lxml elements (built on
    first use: the best mode needs only the numbers).
    """

    text: list[str]
    blocknum: list[int]
    link_chars: list[int]
    #: separator codes in order: 2k for the start tag of element k, 2k+1 for its
    #: end tag, -1 for an end tag without a start.
    codes: list[int]
    #: separator kinds in order (see :class:`Marked`): the heading level of a
    #: start tag of ``<hn>`` is in its kind.
    kinds: list[str]
    #: per element: the index of its nearest type II ancestor, or -1
    parent: list[int]
    #: per element: the kind of its start separator (see :class:`Marked`)
    element_kinds: list[str]
    #: indices of the elements the noise rule flagged (best mode)
    flagged: list[int] = field(default_factory=list)
    #: index of the element marked with :data:`ANCHOR_TOKEN` (best mode), or -1
    anchor: int = -1
    _source: Marked | None = None

    def __len__(self) -> int:
        return len(self.text)

    @property
    def elements(self) -> list[etree._Element]:
        """The type II elements in document order (index k = element k)."""
        return self._source.resolve_elements() if self._source else []

    @property
    def element(self) -> list[int]:
        """Per block: index of the type II element whose tag opened it."""
        return [c >> 1 if c >= 0 else -1 for c in self.codes[: len(self.text)]]

    @property
    def opened_by_start(self) -> list[bool]:
        """Per block: whether a start tag (not an end tag) opened it."""
        return [c >= 0 and not c & 1 for c in self.codes[: len(self.text)]]

    def heading(self, i: int) -> int:
        """n when block i opens with ``<hn>`` (§1.2.3), else 0."""
        return _KIND_LEVEL.get(self.kinds[i], 0)

    def element_of(self, i: int) -> int:
        """Index of the element block i's text lies in (directly or in inline children), or -1."""
        c = self.codes[i]
        if c < 0:
            return -1
        k = c >> 1
        if c & 1 or self.kinds[i] == VOID[1]:
            return self.parent[k]
        return k

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
        k = self.element_of(i)
        return self.elements[k] if 0 <= k < len(self.elements) else None

    def block_range(self, k: int) -> range | None:
        """Indices of the blocks inside the k-th type II element, or None.

        A lookup in the separator codes (C-level ``list.index``), made only
        for the few elements the best mode asks about.
        """
        try:
            first = self.codes.index(2 * k)
        except ValueError:
            return None
        if self.kinds[first] == VOID[1]:
            return range(first, first)  # holds no block
        try:
            end = self.codes.index(2 * k + 1, first)
        except ValueError:
            end = len(self.text)  # end tag lost: to the end
        return range(first, min(end, len(self.text)))


def strip_private_use(text: str) -> str:
    """Remove private-use characters so they cannot collide with the markers."""
    return _PRIVATE_USE.sub("", text) if _PRIVATE_USE.search(text) else text


@dataclass(frozen=True, slots=True)
class NoiseRule:
    """Type II elements that are navigation by their markup (best mode, ``noise_containers``).

    An element is noise when its tag is in ``tags`` or a whole token of its
    ``class`` or ``id`` (case-insensitive) is in ``tokens``; with
    ``substrings``, also when a token *contains* one of them (``cmplz-cookiebanner``
    for ``cookie``); with ``dialogs``, also when it is a dialog
    (``role=dialog``/``alertdialog``, ``aria-modal=true``).
    """

    tags: frozenset[str]
    tokens: frozenset[str]
    substrings: tuple[str, ...] = ()
    dialogs: bool = False
    hidden: bool = False

    def __call__(self, el: etree._Element) -> bool:
        if el.tag in self.tags:
            return True
        if self.dialogs and (
            (el.get("role") or "").lower() in DIALOG_ROLES
            or (el.get("aria-modal") or "").lower() == "true"
        ):
            return True
        if self.hidden and (
            el.get("hidden") is not None
            or any(h in "".join((el.get("style") or "").split()) for h in HIDDEN_STYLES)
        ):
            return True
        cls, ident = el.get("class"), el.get("id")
        if cls is None and ident is None:
            return False
        tokens = f"{ident or ''} {cls or ''}".lower().split()
        return not self.tokens.isdisjoint(tokens) or self.has_substring(tokens)

    def has_substring(self, tokens: list[str]) -> bool:
        """Whether a token contains one of ``substrings``."""
        return any(part in token for token in tokens for part in self.substrings)


#: ``role`` values of a dialog (a pop-up over the page: consent, sign-up, survey).
DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
#: Inline styles (whitespace removed) of an element no reader sees.
HIDDEN_STYLES = ("display:none", "visibility:hidden")


@dataclass(slots=True)
class Marked:
    """§1.2.1 step 3's marked text, before it is cut into blocks.

    ``text`` holds the page's text with a separator before every type II
    start tag, end tag and void element: :data:`SEPARATOR` and a kind letter,
    ``S`` (start), ``A`` (start, an attribute span follows), ``E`` (end),
    ``V`` (void), ``1``-``6`` / ``g``-``l`` (start of ``<h1>``-``<h6>``,
    without / with an attribute span), ``C`` / ``c`` (start of a table cell or
    list item, :data:`CELL_TAGS`). The k-th separator that is not an end
    stands for the k-th type II element outside type I elements in document
    order. ``noisy`` lists the ordinals of the attribute spans that make
    their element noise.
    """

    text: str
    root: etree._Element
    type_i: tuple[str, ...]
    type_ii: tuple[str, ...]
    noisy: list[int]
    elements: list[etree._Element] | None = None
    #: ordinal of the attribute span holding :data:`ANCHOR_TOKEN`, or -1
    anchor_span: int = -1

    def resolve_elements(self) -> list[etree._Element]:
        """The elements the separators stand for (deletes type I elements from the tree)."""
        if self.elements is None:
            etree.strip_elements(
                self.root, etree.Comment, etree.ProcessingInstruction, *self.type_i, with_tail=False
            )
            self.elements = list(self.root.iter(*self.type_ii))
        return self.elements


#: Separators of the marked text (see :class:`Marked`).
START, END, VOID, START_ATTRS = (SEPARATOR + kind for kind in "SEVA")
_HEADING_KINDS = "123456"
_HEADING_ATTR_KINDS = "ghijkl"
#: Table cells and list items: their own kind (``C``, ``c`` with an attribute span),
#: so the best mode can tell them without the lxml elements.
CELL_TAGS = frozenset({"td", "th", "li", "dd", "dt"})
_CELL_KIND, _CELL_ATTR_KIND = "C", "c"
CELL_KINDS = frozenset((_CELL_KIND, _CELL_ATTR_KIND))
_KIND_LEVEL = {
    kind: n + 1 for kinds in (_HEADING_KINDS, _HEADING_ATTR_KINDS) for n, kind in enumerate(kinds)
}
_ATTR_KINDS = frozenset(START_ATTRS[1] + _HEADING_ATTR_KINDS + _CELL_ATTR_KIND)
#: An attribute span (``id`` and ``class`` values) follows START_ATTRS in the marked text.
ATTRS_OPEN, ATTRS_CLOSE = "\ue012", "\ue013"
#: The token the attribute span of an element that is noise by its tag holds.
_TAG_NOISE = "\ue014"
#: A class token the caller may add to one element before :func:`mark_blocks` (with a
#: noise rule) to learn that element's index (``Blockset.anchor``; best mode, ``article_anchor``).
ANCHOR_TOKEN = "\ue015"
_ATTR_SPAN = re.compile(f"{ATTRS_OPEN}([^{ATTRS_CLOSE}]*){ATTRS_CLOSE}")


def _start_kinds(tag: str) -> tuple[str, str]:
    """The kind letters of a start tag of ``tag``: without and with an attribute span."""
    level = _HEADING_TAGS.get(tag)
    if level:
        return _HEADING_KINDS[level - 1], _HEADING_ATTR_KINDS[level - 1]
    if tag in CELL_TAGS:
        return _CELL_KIND, _CELL_ATTR_KIND
    return START[1], START_ATTRS[1]


@functools.lru_cache(maxsize=16)
def _stylesheet(
    type_i: tuple[str, ...],
    type_ii: tuple[str, ...],
    noise_tags: frozenset[str] | None,
    dialogs: bool = False,
    hidden: bool = False,
) -> etree.XSLT:
    """The XSLT that does §1.2.1 steps 2-3 in one C-level pass and writes the marked text.

    A Python walk that deletes type I elements and writes the separators into
    the tree (``.text`` and ``.tail`` of every element) costs as much as
    parsing the page; libxslt does the same in a fraction of that without
    changing the tree: type I elements (and comments, processing
    instructions) have empty templates, so they are skipped with their
    content, and the text that follows them (their tail) is kept. With a
    noise rule, each element with a ``class`` or ``id`` writes those values
    in an attribute span after its separator, so the noise test is one
    tokenisation of all spans instead of one regex per element.
    """

    def sep(kind: str) -> str:
        return f"&#x{ord(SEPARATOR):X};{kind}"

    span_open, span_close = (f"&#x{ord(c):X};" for c in (ATTRS_OPEN, ATTRS_CLOSE))
    has_attrs = "@class or @id"
    flagged = []
    if dialogs:  # a dialog writes the noise token in its span (NoiseRule.dialogs)
        flagged += [f"@role='{role}'" for role in sorted(DIALOG_ROLES)] + ["@aria-modal='true'"]
    if hidden:  # so does an element no reader sees (NoiseRule.hidden)
        style = "translate(@style, ' &#9;&#10;&#13;', '')"
        shown = " or ".join(f"contains({style}, '{h}')" for h in HIDDEN_STYLES)
        flagged += ["@hidden", f"(@style and ({shown}))"]  # most elements have no style
    dialog_token = ""
    if flagged:
        is_flagged = " or ".join(flagged)
        has_attrs += f" or {is_flagged}"
        dialog_token = (
            f'<xsl:if test="{is_flagged}"><xsl:text> </xsl:text>&#x{ord(_TAG_NOISE):X};</xsl:if>'
        )
    attr_span = (
        f'{span_open}<xsl:value-of select="@id"/><xsl:text> </xsl:text>'
        f'<xsl:value-of select="@class"/>{dialog_token}{span_close}'
    )

    def start(plain: str, with_attrs: str) -> str:
        if noise_tags is None:
            return sep(plain)
        return (
            f'<xsl:choose><xsl:when test="{has_attrs}">{sep(with_attrs)}{attr_span}</xsl:when>'
            f"<xsl:otherwise>{sep(plain)}</xsl:otherwise></xsl:choose>"
        )

    def template(tags: list[str], head: str, end: bool = True) -> str:
        body = f"<xsl:apply-templates/>{sep(END[1])}" if end else ""
        return f'<xsl:template match="{"|".join(tags)}">{head}{body}</xsl:template>'

    # Only the tree under the element transformed: a broken page can leave
    # more top-level nodes (a second <html>) in lxml's document, outside ``root``.
    rules = ['<xsl:template match="/"><xsl:apply-templates select="*[1]"/></xsl:template>']
    if type_i:
        rules.append(f'<xsl:template match="{"|".join(type_i)}"/>')
    tags = [t for t in type_ii if t not in VOID_TYPE_II]
    noisy = [t for t in tags if noise_tags is not None and t in noise_tags]
    by_kinds: dict[tuple[str, str], list[str]] = {}
    for tag in tags:
        if tag not in noisy:
            by_kinds.setdefault(_start_kinds(tag), []).append(tag)
    for (plain, with_attrs), group in by_kinds.items():
        rules.append(template(group, start(plain, with_attrs)))
    if noisy:
        tag_span = f"{span_open}&#x{ord(_TAG_NOISE):X};{span_close}"
        rules.append(template(noisy, sep(START_ATTRS[1]) + tag_span))
    void = [t for t in type_ii if t in VOID_TYPE_II]
    if void:
        rules.append(template(void, sep(VOID[1]), end=False))
    rules.append(
        f'<xsl:template match="a">&#x{ord(LINK_START):X};<xsl:apply-templates/>'
        f"&#x{ord(LINK_END):X};</xsl:template>"
    )
    return etree.XSLT(
        etree.XML(
            '<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">'
            '<xsl:output method="text" encoding="UTF-8"/>' + "".join(rules) + "</xsl:stylesheet>"
        )
    )


@functools.lru_cache(maxsize=8)
def _substring_pattern(substrings: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for :attr:`NoiseRule.substrings` (a C-level search per span)."""
    return re.compile("|".join(map(re.escape, substrings)))


def mark_blocks(
    root: etree._Element,
    type_i: tuple[str, ...] = TYPE_I,
    type_ii: tuple[str, ...] = TYPE_II,
    noise: NoiseRule | None = None,
    *,
    walk: bool = True,
) -> Marked:
    """Apply §1.2.1 steps 2-3 to ``root``; return the marked text.

    ``type_i``/``type_ii`` default to the paper's table; the best mode passes
    its own (see :mod:`.best`). ``noise``, when given, is asked about every
    type II element (``noise_containers``); :func:`split_blocks` returns the
    indices it says yes to as ``Blockset.flagged``. The tree may lose its
    type I elements (when the elements are asked for, or on the fallback
    path), so the caller must take any metadata from it first. ``walk=False``: no
    fallback (it writes markers into the tree); ``etree.XSLTApplyError`` is raised
    instead, and the tree is left as it was.
    """
    type_i, type_ii = tuple(type_i), tuple(type_ii)
    try:
        xslt = _stylesheet(
            type_i,
            type_ii,
            noise.tags if noise is not None else None,
            noise is not None and noise.dialogs,
            noise is not None and noise.hidden,
        )
        text = str(xslt(root))
    except etree.XSLTApplyError:  # template recursion limit: a tree deeper than lxml parses
        if not walk:  # the caller must keep the tree as it is: the walk marks it
            raise
        return _mark_by_walk(root, type_i, type_ii, noise)
    noisy: list[int] = []
    if noise is not None and ATTRS_OPEN in text:
        # One tokenisation of every attribute span; " \x00 " counts the spans.
        spans = _ATTR_SPAN.findall(text)
        joined = " \x00 ".join(spans).lower()
        tokens = joined.split()
        flags = noise.tokens | {_TAG_NOISE}
        if not flags.isdisjoint(tokens):
            span = 0
            for token in tokens:
                if token == "\x00":
                    span += 1
                elif token in flags and (not noisy or noisy[-1] != span):
                    noisy.append(span)
        if noise.substrings:
            hits = set(noisy)
            span, at = 0, 0
            for m in _substring_pattern(noise.substrings).finditer(joined):  # few on a page
                span += joined.count("\x00", at, m.start())
                at = m.start()
                hits.add(span)
            noisy = sorted(hits)
    anchor_span = -1
    if noise is not None and (at := text.find(ANCHOR_TOKEN)) >= 0:
        anchor_span = text.count(ATTRS_OPEN, 0, at) - 1
    return Marked(text, root, type_i, type_ii, noisy, anchor_span=anchor_span)


def _mark_by_walk(
    root: etree._Element,
    type_i: tuple[str, ...],
    type_ii: tuple[str, ...],
    noise: NoiseRule | None,
) -> Marked:
    """:func:`mark_blocks` as a Python walk, for trees deeper than libxslt recurses."""
    marked = Marked("", root, type_i, type_ii, [])
    noisy = marked.noisy
    for el in marked.resolve_elements():
        if el.tag in VOID_TYPE_II:
            el.text = VOID + (el.text or "")
            continue
        plain, with_attrs = _start_kinds(el.tag)
        head = SEPARATOR + plain
        if noise is not None and noise(el):
            head = f"{SEPARATOR}{with_attrs}{ATTRS_OPEN}{_TAG_NOISE}{ATTRS_CLOSE}"
            noisy.append(len(noisy))
        el.text = head + (el.text or "")
        el.tail = END + (el.tail or "")
    for el in root.iter("a"):
        el.text = LINK_START + (el.text or "")
        el.tail = LINK_END + (el.tail or "")
    marked.text = etree.tostring(root, method="text", encoding="unicode", with_tail=False)
    return marked


def split_blocks(marked: Marked, *, keep_links: bool) -> Blockset:
    """Cut marked text at the separators: §1.2.1 step 4.

    ``keep_links=False`` is the paper: link text is deleted with the ``a``
    element (type I), together with any separators inside it.
    ``keep_links=True`` keeps it and records ``link_chars`` per block.
    """
    text = marked.text
    if ATTRS_OPEN in text:
        text = _ATTR_SPAN.sub("", text)
    if not keep_links:
        text = _LINK_SPAN_PLAIN.sub("", text)
        if LINK_START in text:  # links around layout elements: their separators go dead
            text = _LINK_SPAN.sub(_dead_separators, text)
        text = _LINK_MARK.sub("", text)
    # parts = [before, kind+segment, kind+segment, ..., kind+after]: block i is
    # the segment after separator i (the text before the first and after the
    # last separator lies outside every block). Whitespace runs become one
    # space first, in one C-level pass over the whole text.
    parts = " ".join(text.split()).split(SEPARATOR)
    live: list[bool] | None = None
    if DEAD_SEPARATOR in text:
        parts, kinds, live = _without_dead(parts)
    else:
        kinds = [p[0] for p in parts[1:]]
    segs = parts[1:-1]  # each still led by its separator's kind letter
    blocks = [seg[1:].strip() for seg in segs]
    # len - count(" "), by C-level maps only (most blocks are empty)
    blocknum = list(map(sub, map(len, blocks), map(str.count, blocks, repeat(" "))))
    link_chars = [0] * len(blocks)
    if keep_links:
        _link_columns(segs, blocks, blocknum, link_chars)
    codes, parent = _codes(kinds)
    element_kinds = [kind for kind in kinds if kind != END[1]]
    if live is not None:
        codes = [c for c, alive in zip(codes, live, strict=True) if alive]
        kinds = [kind for kind, alive in zip(kinds, live, strict=True) if alive]
    flagged: list[int] = []
    anchor = -1
    if marked.noisy or marked.anchor_span >= 0:
        with_attrs = [k for k, kind in enumerate(element_kinds) if kind in _ATTR_KINDS]
        flagged = [with_attrs[j] for j in marked.noisy if j < len(with_attrs)]
        if 0 <= marked.anchor_span < len(with_attrs):
            anchor = with_attrs[marked.anchor_span]
    return Blockset(
        blocks,
        blocknum,
        link_chars,
        codes,
        kinds,
        parent,
        element_kinds,
        flagged,
        anchor,
        marked,
    )


def _dead_separators(link: re.Match[str]) -> str:
    """A link span holding separators (paper mode): its text goes, its separators go dead.

    The paper deletes ``<a>`` with all it holds, so its layout elements cut no
    blocks; their separators stay, dead, only so the elements keep their numbers.
    """
    return "".join(DEAD_SEPARATOR + piece[0] for piece in link[0].split(SEPARATOR)[1:])


def _without_dead(parts: list[str]) -> tuple[list[str], list[str], list[bool]]:
    """Parts with the dead separators taken out; every separator's kind, and whether it is live."""
    kinds: list[str] = []
    live: list[bool] = []
    out = parts[:1]
    for part in parts[1:]:
        kinds.append(part[0])
        live.append(True)
        if DEAD_SEPARATOR in part:
            pieces = part.split(DEAD_SEPARATOR)
            for piece in pieces[1:]:
                kinds.append(piece[0])
                live.append(False)
            part = pieces[0] + "".join(piece[1:] for piece in pieces[1:])
        out.append(part)
    return out, kinds, live


def _codes(kinds: list[str]) -> tuple[list[int], list[int]]:
    """Separator codes (2k: start of element k, 2k+1: its end; -1: an unmatched end)
    and each element's parent element (-1: none). The hot loop: locals only."""
    end, void = END[1], VOID[1]
    codes: list[int] = []
    parent: list[int] = []
    stack: list[int] = [-1]
    add, push, pop, add_parent = codes.append, stack.append, stack.pop, parent.append
    k = 0
    for kind in kinds:
        if kind == end:
            add(2 * pop() + 1 if len(stack) > 1 else -1)
        else:
            add_parent(stack[-1])
            add(2 * k)
            if kind != void:
                push(k)
            k += 1
    return codes, parent


def _link_columns(
    segs: list[str], text: list[str], blocknum: list[int], link_chars: list[int]
) -> None:
    """Fill ``link_chars`` and drop the link markers from ``text`` (in place).

    ``segs[i]`` is block i's raw segment led by its separator's kind letter.

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
        t = text[i]
        if not in_link and t[0] == LINK_START and t[-1] == LINK_END and t.count(LINK_START) == 1:
            # the common case, a block that is one whole link (a navigation item)
            t = t[1:-1].strip()
            text[i] = t
            blocknum[i] = link_chars[i] = len(t) - t.count(" ")
            previous = i
            continue
        seg = LINK_START + segs[i][1:] if in_link else segs[i][1:]
        in_link = seg.rfind(LINK_START) > seg.rfind(LINK_END)
        # str.replace, not re.sub, for single characters: much faster here
        outside = _OPEN_LINK_SPAN.sub("", seg).replace(LINK_END, "")
        t = t.replace(LINK_START, "").replace(LINK_END, "")
        if "  " in t or t[:1] == " " or t[-1:] == " ":  # a marker stood between spaces
            t = " ".join(t.split())
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
    return split_blocks(mark_blocks(root, type_i, type_ii), keep_links=keep_links)
