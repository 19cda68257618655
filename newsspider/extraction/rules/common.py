"""What the rules of the best mode share: sentence punctuation, the link and prose shares,
the size of an article, the ancestors of an element of the blockset."""

from __future__ import annotations

import re

from ..blocks import Blockset

#: ``links_kept``: a block with more than this share of link text is not output.
MAX_LINK_DENSITY = 0.5


ANCHOR_MIN_CHARS = 200


#: ``container``: share of a larger region's text that must be prose.
PROSE_SHARE = 0.9


HEADLINE_MIN_CHARS = 8


#: ``container``: punctuation that marks a sentence (Chinese and Latin).
SENTENCE = re.compile(r"[。，！？；、“”,.!?;]")


def may_hold_tag(markup: str | None, tag: str) -> bool:
    """A rule's trigger: whether the page's markup (the text its tree was parsed from; None:
    unknown) may hold a ``tag`` element. The parser lowercases tag names, so the start tag
    is looked for written in lower case, upper case or capitalised: substring searches,
    a few microseconds a page, in place of a walk of the tree."""
    if markup is None:
        return True
    return f"<{tag}" in markup or f"<{tag.upper()}" in markup or f"<{tag.capitalize()}" in markup


def ancestors(blockset: Blockset, k: int) -> list[int]:
    """Element ``k`` and its type II ancestors, nearest first."""
    chain = []
    while k >= 0:
        chain.append(k)
        k = blockset.parent[k]
    return chain
