"""Rules that blank noise before §1.2.2: ``noise_containers`` and the rules that widen it
(``consent_dialogs``, ``player_controls``, ``related_sections``, ``hidden_elements``,
``slideshows``, ``comment_sections``)."""

from __future__ import annotations

import dataclasses
import functools
import re

from ..blocks import Blockset, NoiseRule
from ..dates import DATE_PATTERN
from .common import SENTENCE, ancestors

#: ``noise_containers``: on (the ablation switches it off).
NOISE_CONTAINERS = True
#: ``comment_sections``: on (the ablation switches it off).
COMMENT_SECTIONS = True


#: ``noise_containers``: never delete an element holding this share of the text.
NOISE_MAX_SHARE = 0.5


#: ``comment_sections``: class/id tokens of a reader-comment section. Such a
#: section is noise even when it holds most of the page's text (a short post
#: under a long thread), when its entries carry their own times: at least
#: ``COMMENT_MIN_TIMES`` date-and-time stamps. Without them it may be an
#: opinion column (评论) marked up as "comment", and the share rule applies.
COMMENT_TOKENS = frozenset("comment comments comment-list commentlist".split())


COMMENT_SECTION = NoiseRule(tags=frozenset(), tokens=COMMENT_TOKENS)


COMMENT_MIN_TIMES = 3


#: ``noise_containers``: navigation by tag, or by a whole class/id token.
NOISE = NoiseRule(
    tags=frozenset({"nav", "footer", "aside"}),
    tokens=frozenset(
        "footer foot copyright sidebar nav navbar menu "
        "breadcrumb breadcrumbs related recommend share sharing social advert ad ads banner "
        "login subscribe newsletter popup cookie".split()
    )
    | COMMENT_TOKENS,
)


#: ``consent_dialogs``: on (the ablation switches it off), and the parts of a class/id
#: token that name a consent or cookie notice (``cmplz-cookiebanner``, ``cookie-notice``,
#: ``onetrust-consent-sdk``, ``privacy-overview``): matched inside tokens, not as whole ones.
CONSENT_DIALOGS = True


#: ``player_controls``: on (the ablation switches it off), and the parts of a class/id token
#: that name a video player's controls and menus (video.js, JW Player, YouTube's, Yahoo's,
#: MediaElement, Plyr, and the generic control bar).
PLAYER_CONTROLS = True


PLAYER_SUBSTRINGS: tuple[str, ...] = (
    "vjs-",
    "video-js",
    "jw-",
    "jwplayer",
    "ytp-",
    "yvp-",
    "mejs-",
    "plyr",
    "control-bar",
    "controlbar",
    "player-controls",
)


#: ``hidden_elements``: on (the ablation switches it off).
HIDDEN_ELEMENTS = True


#: ``slideshows``: on (the ablation switches it off); the slide counters (``1/50``,
#: ``2 of 8``) that make a slideshow, and the text of sentences the page must hold besides
#: it for the slideshow to go (a page that is the gallery keeps it).
SLIDESHOWS = True


SLIDES_MIN = 3


SLIDESHOW_MIN_REST = 500


_SLIDE_COUNTER = re.compile(
    r"^(?:(?:image|photo|slide|picture)\s+)?(\d{1,3})\s*(?:/|／|of)\s*(\d{1,3})(?!\d)", re.I
)


#: ``related_sections``: on (the ablation switches it off), and the part of a class/id token
#: that names a list of related stories (``jp-relatedposts``, ``related-articles``).
RELATED_SECTIONS = True


RELATED_SUBSTRINGS: tuple[str, ...] = ("related",)


CONSENT_SUBSTRINGS: tuple[str, ...] = (
    "cookie",
    "consent",
    "cmplz",
    "gdpr",
    "privacy-overview",
    "onetrust",
    "didomi",
    "qc-cmp",
)


def noise_rule(markup: str | None = None) -> NoiseRule | None:
    """The noise rule in force: ``NOISE``, with ``consent_dialogs``, ``player_controls``,
    ``related_sections`` and ``hidden_elements`` when they are on.

    ``markup``: the page's decoded text, for ``consent_dialogs``' trigger
    (:func:`may_hold_dialog`): the dialog tests leave the block-marking stylesheet of a page
    that names no dialog (they cost a third of its time)."""
    if not NOISE_CONTAINERS:
        return None
    if NOISE is None or not (
        CONSENT_DIALOGS or HIDDEN_ELEMENTS or PLAYER_CONTROLS or RELATED_SECTIONS
    ):
        return NOISE
    substrings = (
        (CONSENT_SUBSTRINGS if CONSENT_DIALOGS else ())
        + (PLAYER_SUBSTRINGS if PLAYER_CONTROLS else ())
        + (RELATED_SUBSTRINGS if RELATED_SECTIONS else ())
    )
    dialogs = CONSENT_DIALOGS and (markup is None or may_hold_dialog(markup))
    return _extended(NOISE, substrings, dialogs, HIDDEN_ELEMENTS)


def may_hold_dialog(markup: str) -> bool:
    """``consent_dialogs``' trigger: whether the page's markup may hold a dialog
    (``role=dialog``/``alertdialog``, whose values the test matches exactly, or an
    ``aria-modal`` attribute, whose name the parser lowercases: written in lower case,
    upper case or capitalised). Substring searches of the text the tree was parsed from,
    a few microseconds a page."""
    return "dialog" in markup or "-modal" in markup or "-MODAL" in markup or "-Modal" in markup


@functools.lru_cache(maxsize=8)
def _extended(
    rule: NoiseRule, substrings: tuple[str, ...], dialogs: bool, hidden: bool
) -> NoiseRule:
    """``rule`` plus consent tokens inside class/id and dialog roles (``consent_dialogs``)
    and elements no reader sees (``hidden_elements``)."""
    return dataclasses.replace(rule, substrings=substrings, dialogs=dialogs, hidden=hidden)


def blank_noise_containers(
    blockset: Blockset, flagged: list[int], slideshows: frozenset[int] = frozenset()
) -> int:
    """``noise_containers``: empty the blocks of flagged elements; return how many were blanked.

    An element holding more than ``NOISE_MAX_SHARE`` of the page's text is a
    page wrapper, not noise, and is left alone, unless it is a reader-comment
    section (``comment_sections``) or one of ``slideshows`` (:func:`slideshow_elements`).
    Blanked blocks stay in the blockset as empty blocks (the separators remain, as layout).
    """
    if not flagged:
        return 0
    text, blocknum, link_chars = blockset.text, blockset.blocknum, blockset.link_chars
    total = sum(blocknum)
    blanked = 0
    for k in flagged:
        region = blockset.block_range(k)
        if region is None or not region or not text[region.start : region.stop]:
            continue
        if (
            sum(blocknum[region.start : region.stop]) > NOISE_MAX_SHARE * total
            and k not in slideshows
            and not (COMMENT_SECTIONS and is_comment_thread(blockset, k, region))
        ):
            continue
        for i in region:
            if text[i]:
                text[i], blocknum[i], link_chars[i] = "", 0, 0
                blanked += 1
    return blanked


def slideshow_elements(blockset: Blockset) -> list[int]:
    """``slideshows``: the elements holding a gallery's slides, each the nearest element
    around ``SLIDES_MIN`` or more blocks that open with counters of one count (``1/50``,
    ``2/50``, ``Image 3 of 50``), when the page holds ``SLIDESHOW_MIN_REST`` characters of
    sentences outside it (else the page is the gallery, and its captions are its text)."""
    text = blockset.text
    by_count: dict[str, dict[str, int]] = {}
    for i, t in enumerate(text):
        head = t[:16]
        if ("/" in head or "／" in head or "of" in head) and (m := _SLIDE_COUNTER.match(t)):
            if int(m[1]) <= int(m[2]):
                by_count.setdefault(m[2], {}).setdefault(m[1], i)
    found = []
    for slides in by_count.values():
        if len(slides) < SLIDES_MIN:
            continue
        chains = [ancestors(blockset, blockset.element_of(i)) for i in slides.values()]
        common = [k for k in chains[0] if all(k in c for c in chains[1:])]
        if not common:
            continue
        region = blockset.block_range(common[0])
        if region is None:
            continue
        rest = sum(
            blockset.blocknum[i]
            for i, t in enumerate(text)
            if t and i not in region and SENTENCE.search(t)
        )
        if rest >= SLIDESHOW_MIN_REST:
            found.append(common[0])
    return found


def is_comment_thread(blockset: Blockset, k: int, region: range) -> bool:
    """``comment_sections``: whether element k is named a comment section (a whole
    class/id token) and holds ``COMMENT_MIN_TIMES`` stamps with a time of day."""
    if not COMMENT_SECTION(blockset.elements[k]):
        return False
    stamps = 0
    for m in DATE_PATTERN.finditer("\n".join(blockset.text[region.start : region.stop])):
        stamps += m["hour"] is not None
        if stamps >= COMMENT_MIN_TIMES:
            return True
    return False
