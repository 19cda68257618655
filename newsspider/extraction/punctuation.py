"""DOM + punctuation ratio: Li & Jiang 2012 §1 and §2.1 (``punctuation``).

Paper mode, step by step:

1. §1 (1): decode to Unicode (:func:`.page.load_page`, :mod:`.encoding`).
2. §1 (2), (4), (5): repair the markup and parse it to a DOM. The paper runs
   HTML Tidy, adds an XML declaration and parses with TinyXML; lxml's HTML
   parser does the repair and the parse in one step.
3. §1 (6): delete the nodes unrelated to the body, with their content:
   :data:`DROP_TAGS` (``style, script, img, iframe, object, meta, applet,
   link``), comments and the doctype (lxml keeps no doctype node). The text
   after a deleted element (its tail) stays.
4. §1 (3): unwrap :data:`UNWRAP_TAGS` (``strong, font, p``: tag gone, text
   kept, so the text around them joins one text node) and replace ``&nbsp;``
   with nothing. The paper does both with regular expressions on the source;
   here they are done on the tree: ``etree.strip_tags`` for the tags, and
   U+00A0 (what ``&nbsp;``, ``&#160;`` and a literal no-break space become) is
   removed from every text node.
5. §2.1: for every text node, ``ratio = punctuation characters / all
   characters`` over :data:`PUNCTUATION`; the node is body when
   ``lower < ratio <= p`` with ``p = 0.3`` (:func:`keep_ratio`).
6. Output: the kept nodes' text in document order, one node per line.

Two settlements of what the paper leaves open:

* The paper keeps ratios in ``[0, p]``. Here 0 is excluded: nodes without
  punctuation are navigation by the paper's own §2.1 argument. The
  lower bound is the parameter ``lower`` (default 0.0, excluded);
  ``lower_inclusive=True`` with ``lower=0.0`` gives the paper's literal
  ``[0, p]``.
* "All characters" are the node's non-whitespace characters: §2.1 lists a
  node's characters as Chinese characters, Latin letters and punctuation, and
  the whitespace of the markup (indentation, newlines) is not text.

The line-hash step of §2.2 runs after *any* extractor (CorpusPipeline), so it
is not part of this method. Title and time come from :mod:`.textnodes`, shared
with the xpath method (the paper does not say how it finds them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from .method import Extractor
from .model import ExtractedArticle
from .page import Page
from .textnodes import TextNode, finish_article, read_metadata

__all__ = [
    "DROP_TAGS",
    "LOWER",
    "PUNCTUATION",
    "UNWRAP_TAGS",
    "NodeRatio",
    "P",
    "Punctuation",
    "extract_punctuation",
    "keep_ratio",
    "normalise",
    "punctuation_nodes",
    "punctuation_ratio",
    "text_nodes",
]

#: §2.1: the threshold ``p`` (the paper's sweep of 0.01 … 0.9 settles on 0.3).
P = 0.3
#: The lower bound of the ratio, excluded by default (module docstring).
LOWER = 0.0
#: §2.1: Chinese and Latin punctuation (the paper names 。，！ and brackets).
PUNCTUATION = "。，！？；：、（）【】《》“”‘’.,!?;:()[]\"'"
#: §1 (6): elements deleted with their content (comments too; lxml keeps no doctype).
DROP_TAGS: tuple[str, ...] = (
    "style",
    "script",
    "img",
    "iframe",
    "object",
    "meta",
    "applet",
    "link",
)
#: §1 (3): elements unwrapped (tag dropped, text kept).
UNWRAP_TAGS: tuple[str, ...] = ("strong", "font", "p")

_WS = re.compile(r"\s+")
_NBSP = "\xa0"


@dataclass(frozen=True, slots=True)
class NodeRatio:
    """One text node of §2.1 with its counts, ratio and verdict."""

    text: str
    punctuation: int
    characters: int
    ratio: float
    kept: bool


def normalise(
    root: etree._Element,
    drop: Sequence[str] = DROP_TAGS,
    unwrap: Sequence[str] = UNWRAP_TAGS,
) -> None:
    """§1 (3) and (6) on a parsed page, **in place**: delete ``drop`` elements and
    comments with their content (keeping their tails), unwrap ``unwrap`` elements."""
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, *drop, with_tail=False)
    if unwrap:
        etree.strip_tags(root, *unwrap)


def _clean(text: str) -> str:
    """Output form of a text node: ``&nbsp;`` removed (§1 (3)), whitespace runs one space."""
    if _NBSP in text:
        text = text.replace(_NBSP, "")
    return _WS.sub(" ", text).strip()


def text_nodes(root: etree._Element) -> list[TextNode]:
    """The non-empty text nodes of ``root`` in document order (``.text`` at an
    element's start, ``.tail`` after its end), in output form."""
    nodes: list[TextNode] = []
    for event, el in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            if el.text:
                text = _clean(el.text)
                if text:
                    nodes.append(TextNode(text, el))
        elif el.tail and el is not root:
            text = _clean(el.tail)
            if text:
                parent = el.getparent()
                nodes.append(TextNode(text, parent if parent is not None else el))
    return nodes


def _deleter(punctuation: str) -> dict[int, None]:
    return dict.fromkeys(map(ord, punctuation))


_DELETE_DEFAULT = _deleter(PUNCTUATION)


def punctuation_ratio(text: str, punctuation: str = PUNCTUATION) -> tuple[int, int, float]:
    """§2.1: (punctuation characters, all characters, ratio) of one text node.

    Whitespace is not a character (module docstring); an empty node has ratio 0.
    """
    chars = "".join(text.split())
    table = _DELETE_DEFAULT if punctuation == PUNCTUATION else _deleter(punctuation)
    n = len(chars)
    punct = n - len(chars.translate(table))
    return punct, n, (punct / n if n else 0.0)


def keep_ratio(
    ratio: float, p: float = P, lower: float = LOWER, *, lower_inclusive: bool = False
) -> bool:
    """§2.1: is a node with this ratio body? ``lower < ratio <= p`` (module docstring);
    ``lower_inclusive=True`` makes it ``lower <= ratio <= p`` (the paper's ``[0, p]``)."""
    above = ratio >= lower if lower_inclusive else ratio > lower
    return above and ratio <= p


def punctuation_nodes(
    nodes: Sequence[TextNode],
    *,
    p: float = P,
    lower: float = LOWER,
    lower_inclusive: bool = False,
    punctuation: str = PUNCTUATION,
) -> list[NodeRatio]:
    """§2.1 for every text node: counts, ratio and whether it is kept."""
    out = []
    for node in nodes:
        punct, n, ratio = punctuation_ratio(node.text, punctuation)
        kept = keep_ratio(ratio, p, lower, lower_inclusive=lower_inclusive)
        out.append(NodeRatio(node.text, punct, n, ratio, kept))
    return out


class Punctuation(Extractor):
    """Headline, time and body of one page by Li & Jiang 2012 §1-§2.1 (paper mode).

    ``p``, ``lower``/``lower_inclusive``, ``punctuation``, ``drop`` and
    ``unwrap`` are the method's parameters (module docstring). A page without
    body nodes gives empty ``text``.
    """

    def extract(
        self,
        page: Page,
        url: str | None,
        *,
        p: float = P,
        lower: float = LOWER,
        lower_inclusive: bool = False,
        punctuation: str = PUNCTUATION,
        drop: Sequence[str] = DROP_TAGS,
        unwrap: Sequence[str] = UNWRAP_TAGS,
    ) -> ExtractedArticle:
        assert page.root is not None
        meta = read_metadata(page.root, page.tz)  # before <meta> and <script> are deleted
        normalise(page.root, drop, unwrap)
        nodes = text_nodes(page.root)
        body = [
            i
            for i, node in enumerate(nodes)
            if keep_ratio(
                punctuation_ratio(node.text, punctuation)[2],
                p,
                lower,
                lower_inclusive=lower_inclusive,
            )
        ]
        return finish_article(page, meta, nodes, body, url, self.mode)


#: The method as a function, for library use (the registry's ``punctuation``).
extract_punctuation = Punctuation("punctuation")
