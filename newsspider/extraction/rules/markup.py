"""Rules of §1.2.1 table 1: which elements are noise (type I) and which are layout (type II)
in the best mode, and the page's ``noscript`` markup (``form_is_layout``,
``ruby_annotations``, ``math_sources``, ``noscript_bodies``, ``head_not_body``)."""

from __future__ import annotations

from lxml import etree

from ..blocks import TYPE_I, TYPE_II
from .common import may_hold_tag

#: ``head_not_body``: on (the ablation switches it off): ``<head>`` is read for metadata, then
#: taken out of the tree, so its text is never body.
HEAD_NOT_BODY = True
#: ``form_is_layout``: on (the ablation switches it off); form is layout (type II), not
#: noise (type I).
FORM_IS_LAYOUT = True
BEST_TYPE_I: tuple[str, ...] = tuple(t for t in TYPE_I if t != "form")
BEST_TYPE_II: tuple[str, ...] = (*TYPE_II, "form")
#: ``ruby_annotations``, ``math_sources``, ``noscript_bodies``: on (the ablation switches
#: each off); the text the page's noscript elements must hold to be read.
RUBY_ANNOTATIONS = True
MATH_SOURCES = True
NOSCRIPT_BODIES = True
NOSCRIPT_MIN_CHARS = 200


def best_type_ii() -> tuple[str, ...]:
    """The type II (layout) elements of the best mode: the paper's and, with
    ``form_is_layout``, ``form`` (§1.2.1 table 1)."""
    return BEST_TYPE_II if FORM_IS_LAYOUT else TYPE_II


def best_type_i() -> tuple[str, ...]:
    """The type I elements of the best mode for this page (§1.2.1 table 1).

    ``ruby_annotations``: ``rt`` and ``rp`` (the reading above a character and its
    parentheses) are not text of the sentence: 子(こ)ども is 子ども.
    ``math_sources``: a MathML formula's ``annotation`` (its TeX source) is not
    read beside the formula.
    """
    type_i = BEST_TYPE_I if FORM_IS_LAYOUT else TYPE_I
    if RUBY_ANNOTATIONS:
        type_i = (*type_i, "rt", "rp")
    if MATH_SOURCES:
        type_i = (*type_i, "annotation", "annotation-xml")
    return type_i


def noscript_markup(root: etree._Element, markup: str | None = None) -> list[bytes]:
    """``noscript_bodies``: the page's ``noscript`` elements that hold markup with text,
    serialised (read only when the body comes out short). The trigger: the markup
    (``markup``: the page's decoded text) holds a ``<noscript``."""
    if not may_hold_tag(markup, "noscript"):
        return []
    found = []
    for el in root.iter("noscript"):
        if len(el) and len(_XP_ELEMENT_TEXT(el).strip()) >= NOSCRIPT_MIN_CHARS // 4:
            found.append(etree.tostring(el, encoding="utf-8", with_tail=False))
    return found


_XP_ELEMENT_TEXT = etree.XPath("string(*)")
