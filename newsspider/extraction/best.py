"""The best mode: Zou & Zhong 2011 plus measured improvements.

Each improvement is named and sits beside the paper step it changes; each
was kept because ``scrapy evaluate`` showed it helps on the labelled datasets
(the ablation, ``benchmarks/ablation.py``, switches each off alone). Paper mode
(:func:`.paper.extract_paper`) stays untouched.

``form_is_layout`` (§1.2.1 step 2, table 1)
    The paper deletes ``<form>`` with its content (type I). ASP.NET and many
    portal templates wrap the *whole page* in one form, so the paper deletes
    the article too (3 of cwced-zh's 48 pages come out empty). Here ``form``
    is a type II layout element; its controls (``input``, ``select``,
    ``textarea``, ``button``, ``label`` ...) stay type I.

``noise_containers`` (before §1.2.1 step 2)
    Elements that are navigation by their markup (``nav``, ``aside``,
    ``footer``) or by a whole ``class``/``id`` token (``footer``, ``sidebar``,
    ``comments``, ``share``, ``breadcrumb`` ...) are deleted first, unless one
    holds more than half of the page's text (then it is a page wrapper, not
    noise). Whole tokens only: ``content-with-sidebar-wrp`` is not deleted.

``consent_dialogs`` (``noise_containers``)
    Cookie and consent notices are long punctuated prose, so they win the
    §1.2.2 statistics on pages where they sit before the article; their
    class/id tokens are compound (``cmplz-cookiebanner``, ``cookie-notice``,
    ``onetrust-consent-sdk``), so the whole-token rule misses them. A token
    *containing* one of ``CONSENT_SUBSTRINGS``, and a dialog (``role=dialog``,
    ``role=alertdialog``, ``aria-modal=true``), is noise too (the share rule
    of ``noise_containers`` still keeps a page wrapper).

``ruby_annotations`` (§1.2.1 table 1)
    ``rt`` and ``rp`` are type I: the reading printed above a character and
    its fallback parentheses are not part of the sentence (子(こ)ども is 子ども).

``math_sources`` (§1.2.1 table 1)
    MathML ``annotation`` and ``annotation-xml`` are type I: a formula's TeX
    source is not text beside the formula.

``noscript_bodies`` (§1.2.1 table 1)
    ``noscript`` stays type I, but a page that builds its article with
    JavaScript may give it only there: when the body comes out shorter than
    ``NOSCRIPT_MIN_CHARS``, the page's ``noscript`` markup is extracted as a
    page of its own.

``invisible_chars`` (output)
    Soft hyphens and zero-width spaces (U+00AD, U+200B, U+2060, U+FEFF) are
    taken out of the body.

``player_controls`` (``noise_containers``)
    A video player's control bar and menus (play, mute, playback rate, caption
    fonts) are many short lines between body paragraphs; a class/id token
    containing one of ``PLAYER_SUBSTRINGS`` (``vjs-``, ``jw-``, ``ytp-``,
    ``yvp-``, ``control-bar`` ...) is noise (share rule kept).

``slideshows`` (``noise_containers``)
    A gallery embedded in an article ("Business news in pictures": fifty
    slides, each a counter ``1/50``, a title, a caption and a credit) can
    hold most of the page's text, so the runs take it for the article. The
    nearest element around ``SLIDES_MIN`` or more blocks opening with
    counters of one count (``3/50``, ``Image 3 of 50``) is noise, even above
    the share rule, when the page holds ``SLIDESHOW_MIN_REST`` characters of
    sentences besides it; a page that is the gallery (a photo set) keeps it.

``related_sections`` (``noise_containers``)
    A list of related stories under the article (a teaser's summary, its date,
    its section) reads as more body; the whole-token rule knows ``related``
    but not the compound tokens plugins give it (``jp-relatedposts``,
    ``related-articles``, ``post-related``): a token containing ``related`` is
    noise (share rule kept).

``hidden_elements`` (``noise_containers``)
    An element no reader sees (the ``hidden`` attribute, an inline
    ``display:none`` or ``visibility:hidden``) is noise, under the same share
    rule (a hidden page wrapper holding most of the text stays).

``links_kept`` (§1.2.1 step 2 and §1.2.2 (1))
    The paper deletes ``<a>`` with its text, which cuts linked words out of
    body sentences. Here link text is kept in the output but *not counted*
    in ``blocknum`` (so navigation blocks still count ~0), and a block whose
    text is more than half links is not output.

``link_blocks`` (§1.2.2 (1), with ``links_kept``)
    A block that is more than ``MAX_LINK_DENSITY`` links is never output, so
    it counts 0: a list of linked names ("liked by a, b, c ...") otherwise
    keeps its commas and words between links and becomes the densest block.

``article_anchor`` (after §1.2.2 rule ②)
    The densest run is not always the article: a comment thread, a second
    article, a list of teasers. When the page names its article (an element
    with ``itemprop=articleBody``; else the outermost ``<article>`` holding the
    first ``h1``, or the only one; else the blocks from the start to the end of
    its JSON-LD ``articleBody``) and it holds ``ANCHOR_MIN_CHARS``, but less
    than ``ANCHOR_INSIDE`` of mainblockset's text lies in it, §1.2.2 is run
    again on the blocks inside it alone.

``anchor_trim`` (with ``article_anchor``)
    When most of mainblockset's text lies in the article the page names but
    the runs go on past it (a "More in Sports" list of dated teasers, a quote
    table, a newsletter box after the ``<article>``), §1.2.2 is run again
    inside the named article too, so the blocks outside it go. (Not for
    ``headline_anchor``, whose element is a guess.)

``headline_anchor`` (with ``article_anchor``)
    A page that names no article element still names its headline: the ``h1``
    whose text is the page's title (``og:title``, JSON-LD, ``<title>``). The
    nearest element around it holding four sentences besides it (a deck, a
    caption and a byline under the headline do not stop the climb) anchors the
    article when the runs start inside it (block_i) and run on past it into a
    denser stream of teasers or comments, so that less than ``ANCHOR_INSIDE``
    of mainblockset's text lies inside: §1.2.2 is run again there. Runs that
    start elsewhere leave the page as it is.

``first_post`` (after §1.2.2 rule ②, §1.2.3)
    A blog's front page or a forum thread repeats a post header with a date
    and time in elements of one tag and class; the article is the first
    post, but the densest run may be a later, longer one. With ``POST_MIN``
    such headers, the first before block_i and posts of ``ANCHOR_MIN_CHARS``
    on average, §1.2.2 is run again on the first post alone (its body and,
    through the time windows, its time).

``comment_threads`` (after §1.2.2 rule ②, with ``first_post``)
    When the dated entries of such a group are short (under
    ``ANCHOR_MIN_CHARS`` apart on average) and block_i falls among them, they
    are reader comments that outweighed the article (a post of short lines
    under a long thread whose class names no comment section): §1.2.2 is run
    again on the blocks above the first entry.

``next_candidate`` (after §1.2.2 rule ②)
    The candidate regions are tried in order: the article the page names or
    its first post (``article_anchor``, ``first_post``, ``comment_threads``),
    then the whole page, then the page without the noise blanked (an article
    inside a section whose name says comments); the first whose body holds
    ``NEXT_MIN_CHARS`` wins, else the one with the most text, so a rejected or
    blanked region gives the next candidate instead of an empty body.

``container`` (after §1.2.2 rule ②)
    The paper's ``mainblockset`` misses body paragraphs that are separated
    from the runs by several empty layout blocks (a ``<div>&nbsp;</div>``
    between paragraphs breaks the ¼[1 2 1] bridge) and short paragraphs
    before the first / after the last rule-① run. The rule-① runs locate the
    article; their lowest common ancestor element is the article container.
    Every block of that container that has sentence punctuation (or is in
    ``mainblockset``) is body, unless the container holds more than
    ``CONTAINER_RATIO`` times the ``mainblockset``'s text (then it is the page
    itself and ``mainblockset`` is kept as is).

``split_bodies`` (after ``container``)
    Templates cut one article into containers of one class around an ad slot
    (``story-body-1``, ``story-body-2``, each maybe in a wrapper); the
    container rule keeps the one with most of the rule-① text and loses the
    lead. A same-tag element sharing a class token with the container, at its
    depth under one of its ``SPLIT_LEVELS`` nearest ancestors, gives its
    mainblockset blocks to the body.

``lead_runs`` (after ``container``)
    A lead can stand outside the container: the first paragraphs in the
    parent, the rest in a child (a "read more" box, a wrapper after an ad
    slot) that holds most of the rule-① text. §1.2.2 rejects the lead's runs
    (their peaks fall under N_cal, and rule ② needs a rule-① run before them).
    Runs right before the body, with only empty blocks between, inside the
    container's parent and of prose, holding ``LEAD_MIN_SENTENCES`` paragraphs
    that end a sentence and ``ANCHOR_MIN_CHARS`` (not a byline, a dateline or
    a caption), are body.

``inner_lines`` (after ``container``)
    ``container`` keeps only blocks with sentence punctuation, which drops the
    subheadings, table cells and list items *inside* an article (an agenda,
    a syllabus, a recipe's ingredients). Between the first and the last body
    block, a short (at most ``INNER_MAX`` characters) link-free block is body
    too when it is a sibling of body paragraphs (its element, or its
    element's parent, holds body text) or a table cell / list item. Widgets
    nested deeper (a gallery's "Image 1 of 9", a share box) stay out.

``repeated_lines`` (``duplicate_blocks`` and ``container``)
    ``duplicate_blocks`` drops a second copy of a line (pages that carry the
    article twice, for print or mobile). A copy whose element has the same
    parent as the first one's is a line the author repeated among sibling
    paragraphs (a refrain, a repeated sentence), not a second copy of the
    article: it is kept, and it counts when the container is located.

``structure_lines`` (``inner_lines``)
    ``inner_lines`` takes short lines only (``INNER_MAX``); list items, table
    cells, ``dt``/``dd`` and ``h2``-``h4`` subheadings are often longer without
    sentence punctuation (a step of a recipe, a feature's name and summary).
    Between the first and last body block, a link-free one of any length is
    body when its list or table (up to ``STRUCTURE_DEPTH`` levels up) or its
    heading sits among the body's own elements.

``title_line`` and ``edge_lines`` (output)
    The smoothing pulls the short lines next to the first and last paragraphs
    into the runs: the headline (returned as ``ExtractedArticle.title`` already), the
    date-and-source line, the editor line, a share prompt. A first line that
    is the title, and short byline/breadcrumb/editor/share lines among the
    outermost three at either end, are not body (also after a deck line that
    is not one: 本报记者 X 发自北京 under a subtitle).

``leftover_lines`` (output, with ``edge_lines``)
    More that is not body at the ends: a bare counter (``20,566``), a comment
    counter or form (``0人跟贴 | 0人参与``, ``账号``, ``密码``, ``Leave a Reply``),
    a "related" or "loading" heading (``相关新闻：``, ``Related articles``),
    a promotion (扫描二维码, 点击投票), a clock time alone; and at the very end
    a tail of scraps (lines of at most ``TAIL_SCRAP_CHARS`` without sentence
    punctuation: an editor's name, ``APP专享``). The ends are trimmed again
    after each pass (``EDGE_PASSES``), so a scrap does not shield the ones
    behind it.

``time_after_headline`` (§1.2.3)
    The paper looks for the time in blocks i-2 … i+2; when promotion or
    comment-prompt lines stand between the dateline and the body, that
    window holds the body's first sentences instead, and a date *in* the
    story wins. When the headline is found as a block above ``block_i``, the
    ``HEADLINE_WINDOW`` text blocks under it are read first.

``date_forms`` (§1.2.3)
    The paper's pattern reads year-first dates only; sites abroad write
    ``2. August 2019``, ``02.08.2019``, ``August 2, 2019``, ``2 Aug 2019``,
    ``06/02/2022``. In the time windows (under the headline, near block_i and
    block_j) any of these forms counts, with a clock time after it
    (``3:45 pm``, ``14h30``); ambiguous numeric dates follow the page's
    language (``<html lang>``, ``og:locale``: US English and Chinese month
    first, the others day first). Over the whole page the year-first pattern
    is tried first.

``page_zone`` (§1.2.3)
    A time without an offset takes the site's zone (the caller's ``tz``);
    for a page of no known site (no ``tz`` given) the zone its language
    points to (``<html lang>``, ``og:locale``: ``de`` Europe/Berlin, ``zh-TW``
    Asia/Taipei, ``en-GB`` Europe/London; bare ``en`` names none, and gives way
    to an ``og:locale`` of English with a country) comes first; else
    Asia/Shanghai only for a page that shows a sign of China (Chinese text, a
    ``zh`` language, a Chinese domain: :func:`.page.china_sign`), UTC for any
    other (an English page was read as Beijing time and came out a day off).

``site_suffix_titles`` (§1.2.3, with ``meta_first``)
    ``og:title`` and the JSON-LD headline often carry the site's name after a
    separator (``Headline | Aktuálně.cz``, ``标题_网易新闻``); when an ``h1`` of
    the page is that title without it, the ``h1`` is the title.

``meta_first`` (§1.2.3)
    Title: the paper's heading near ``block_i`` when it agrees with the
    page's ``<title>``/``og:title``; otherwise ``og:title``/JSON-LD, then the
    heading, then ``<title>`` without site names. Time: JSON-LD or a
    ``<meta>`` publication time, then the paper's pattern near ``block_i`` /
    ``block_j``, then anywhere in the body region, then a date in the URL.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

from lxml import etree

from .blocks import (
    ANCHOR_TOKEN,
    CELL_KINDS,
    TYPE_I,
    TYPE_II,
    Blockset,
    NoiseRule,
    mark_blocks,
    split_blocks,
)
from .blockstats import BlockStatistics, block_statistics
from .dates import (
    DATE_PATTERN,
    day_first_for,
    find_date,
    find_date_forms,
    issue_date,
    stamp_with_time,
)
from .metadata import json_ld_article_body, page_metadata
from .model import ExtractedArticle
from .page import parse_html
from .paper import paper_time_blocks, paper_title
from .record import (
    Around,
    PageScan,
    around_body,
    is_record_line,
    page_record,
    record_line_hint,
)
from .title_time import best_title, combine_published, strip_spaces

#: ``form_is_layout``: form is layout (type II), not noise (type I).
BEST_TYPE_I: tuple[str, ...] = tuple(t for t in TYPE_I if t != "form")
BEST_TYPE_II: tuple[str, ...] = (*TYPE_II, "form")

#: ``links_kept``: a block with more than this share of link text is not output.
MAX_LINK_DENSITY = 0.5
#: ``structure_lines``: on (the ablation switches it off), and how far up a list item's
#: or cell's ancestors the body's elements are looked for (li, ul; td, tr, tbody, table).
STRUCTURE_LINES = True
STRUCTURE_DEPTH = 4
#: ``split_bodies``: on (the ablation switches it off).
SPLIT_BODIES = True
SPLIT_LEVELS = 3
#: ``link_blocks``: on (the ablation switches it off).
LINK_BLOCKS = True
#: ``container``: give up the container when it has this many times the text
#: of mainblockset (it is then the page, not the article).
CONTAINER_RATIO = 10.0
#: ``container``: share of the rule-① text the container must hold.
CONTAINER_SHARE = 0.8
#: ``container``: blocks of these runs are body without sentence punctuation.
RULES_KEPT_AS_IS = (1, 2)
#: ``duplicate_blocks``: a line this long is never output twice.
MIN_DUPLICATE_CHARS = 20
#: ``repeated_lines``: a duplicate line whose element shares the first copy's parent stays.
REPEATED_LINES = True
#: ``time_after_headline``: on, and how many text blocks under the headline are read first.
TIME_AFTER_HEADLINE = True
HEADLINE_WINDOW = 3
#: ``inner_lines``: on (the ablation switches it off) and the longest line it adds.
INNER_LINES = True
INNER_MAX = 40
#: ``container``: share of a larger region's text that must be prose.
PROSE_SHARE = 0.9
#: ``lead_runs``: on (the ablation switches it off), and the paragraphs (blocks ending a
#: sentence) the lead must hold.
LEAD_RUNS = True
LEAD_MIN_SENTENCES = 2
_SENTENCE_END = re.compile(r"[。！？.!?…][\"'”’)）」』]*$")
#: ``issue_dates``: on (the ablation switches it off).
ISSUE_DATES = True
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


def noise_rule() -> NoiseRule | None:
    """The noise rule in force: ``NOISE``, with ``consent_dialogs``, ``player_controls``,
    ``related_sections`` and ``hidden_elements`` when they are on."""
    if NOISE is None or not (
        CONSENT_DIALOGS or HIDDEN_ELEMENTS or PLAYER_CONTROLS or RELATED_SECTIONS
    ):
        return NOISE
    substrings = (
        (CONSENT_SUBSTRINGS if CONSENT_DIALOGS else ())
        + (PLAYER_SUBSTRINGS if PLAYER_CONTROLS else ())
        + (RELATED_SUBSTRINGS if RELATED_SECTIONS else ())
    )
    return _extended(NOISE, substrings, CONSENT_DIALOGS, HIDDEN_ELEMENTS)


@functools.lru_cache(maxsize=8)
def _extended(rule: NoiseRule, substrings: tuple[str, ...], dialogs: bool, hidden: bool) -> NoiseRule:
    """``rule`` plus consent tokens inside class/id and dialog roles (``consent_dialogs``)
    and elements no reader sees (``hidden_elements``)."""
    return dataclasses.replace(rule, substrings=substrings, dialogs=dialogs, hidden=hidden)


#: ``ruby_annotations``, ``invisible_chars``, ``noscript_bodies``: on (the ablation switches
#: each off); the text the page's noscript elements must hold to be read.
RUBY_ANNOTATIONS = True
MATH_SOURCES = True
INVISIBLE_CHARS = True
NOSCRIPT_BODIES = True
NOSCRIPT_MIN_CHARS = 200
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
#: ``leftover_lines``: on (the ablation switches it off).
LEFTOVER_LINES = True
#: ``next_candidate``: on (the ablation switches it off), and the body text under which the
#: next candidate region is tried.
NEXT_CANDIDATE = True
NEXT_MIN_CHARS = 50
#: ``page_zone``: on (the ablation switches it off), and the zone of each language or
#: locale whose speakers mostly live in one (English without a country names none).
PAGE_ZONE = True
LANGUAGE_ZONES: dict[str, str] = {
    "zh": "Asia/Shanghai",
    "zh-cn": "Asia/Shanghai",
    "zh-tw": "Asia/Taipei",
    "zh-hk": "Asia/Hong_Kong",
    "zh-sg": "Asia/Singapore",
    "zh-hant-tw": "Asia/Taipei",
    "zh-hant-hk": "Asia/Hong_Kong",
    "ja": "Asia/Tokyo",
    "ko": "Asia/Seoul",
    "de": "Europe/Berlin",
    "de-at": "Europe/Vienna",
    "de-ch": "Europe/Zurich",
    "fr": "Europe/Paris",
    "fr-ca": "America/Toronto",
    "it": "Europe/Rome",
    "es": "Europe/Madrid",
    "es-mx": "America/Mexico_City",
    "es-ar": "America/Argentina/Buenos_Aires",
    "pt": "Europe/Lisbon",
    "pt-br": "America/Sao_Paulo",
    "nl": "Europe/Amsterdam",
    "pl": "Europe/Warsaw",
    "cs": "Europe/Prague",
    "ru": "Europe/Moscow",
    "tr": "Europe/Istanbul",
    "en-gb": "Europe/London",
    "en-us": "America/New_York",
    "en-in": "Asia/Kolkata",
    "en-sg": "Asia/Singapore",
    "en-au": "Australia/Sydney",
    "vi": "Asia/Ho_Chi_Minh",
    "th": "Asia/Bangkok",
    "id": "Asia/Jakarta",
}
#: ``date_forms``: on (the ablation switches it off).
DATE_FORMS = True
#: ``article_anchor``: on (the ablation switches it off); the text an anchor must hold,
#: and the share of mainblockset's text inside it below which the statistics are
#: run again inside the anchor.
ARTICLE_ANCHOR = True
ANCHOR_MIN_CHARS = 200
ANCHOR_INSIDE = 0.5
#: ``anchor_trim``: on (the ablation switches it off).
ANCHOR_TRIM = True
#: ``article_anchor``: how many characters of each end of JSON-LD ``articleBody`` are looked for.
LD_PROBE = 30
#: ``headline_anchor``: on (the ablation switches it off), and the shortest headline it
#: recognises (a shorter ``h1`` may match the title by chance: a site name, "News").
HEADLINE_ANCHOR = True
HEADLINE_MIN_CHARS = 8
#: ``site_suffix_titles``: on (the ablation switches it off).
SITE_SUFFIX_TITLES = True
#: ``headline_anchor``: sentences (blocks with sentence punctuation) the element around the
#: headline must hold besides it (more than a header's deck, caption and byline).
HEADLINE_MIN_BLOCKS = 4

#: ``container``: punctuation that marks a sentence (Chinese and Latin).
_SENTENCE = re.compile(r"[。，！？；、“”,.!?;]")


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
        chains = [_ancestors(blockset, blockset.element_of(i)) for i in slides.values()]
        common = [k for k in chains[0] if all(k in c for c in chains[1:])]
        if not common:
            continue
        region = blockset.block_range(common[0])
        if region is None:
            continue
        rest = sum(
            blockset.blocknum[i]
            for i, t in enumerate(text)
            if t and i not in region and _SENTENCE.search(t)
        )
        if rest >= SLIDESHOW_MIN_REST:
            found.append(common[0])
    return found


def _ancestors(blockset: Blockset, k: int) -> list[int]:
    """Element ``k`` and its type II ancestors, nearest first."""
    chain = []
    while k >= 0:
        chain.append(k)
        k = blockset.parent[k]
    return chain


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


def textnums(blockset: Blockset) -> list[int]:
    """``links_kept``: the blocknum the statistics see, link text not counted.

    ``link_blocks``: a block that is mostly links (more than ``MAX_LINK_DENSITY``,
    so never output) counts 0: the commas of a list of names do not steer §1.2.2.
    """
    if LINK_BLOCKS:
        return [
            0 if lc > MAX_LINK_DENSITY * n else n - lc
            for n, lc in zip(blockset.blocknum, blockset.link_chars, strict=True)
        ]
    return [n - lc for n, lc in zip(blockset.blocknum, blockset.link_chars, strict=True)]


def container_region(
    blockset: Blockset, stats: BlockStatistics, textnum: list[int], share: float = 1.0
) -> range | None:
    """``container``: the block range of the element holding the rule-① runs.

    The element is the deepest type II element that holds at least ``share``
    of the rule-① text (``share=1``: their lowest common ancestor). Blocks
    that repeat an earlier block's text are not counted (``duplicate_blocks``:
    pages that carry the article twice, for print or mobile).
    """
    text = blockset.text
    weight: dict[int, int] = {}
    depth: dict[int, int] = {}
    total = 0
    seen: dict[str, int] = {}
    chains: dict[int, list[int]] = {}
    for run in stats.runs:
        if run.rule != 1:
            continue
        for i in run.indices:
            n = textnum[i]
            if not n:
                continue
            if text[i] in seen and (
                not REPEATED_LINES or seen[text[i]] != _holder_parent(blockset, i)
            ):
                continue
            seen.setdefault(text[i], _holder_parent(blockset, i))
            total += n
            container = blockset.element_of(i)
            chain = chains.get(container)
            if chain is None:  # blocks share containers: walk each one up once
                chain = _ancestors(blockset, container)[::-1]  # root first: position = depth
                chains[container] = chain
            for d, k in enumerate(chain):
                weight[k] = weight.get(k, 0) + n
                depth[k] = d
    if not total:
        return None
    holding = [k for k, w in weight.items() if w >= share * total]
    if not holding:
        return None
    return blockset.block_range(max(holding, key=lambda k: depth[k]))


def _plausible_region(
    region: range,
    candidate: list[int],
    main: list[int],
    textnum: list[int],
    link_chars: list[int],
) -> bool:
    """``container``: is the region the article, not the whole page?

    Yes when it holds at most ``CONTAINER_RATIO`` times the text of
    mainblockset, or when it is prose through and through (the candidate body
    blocks hold ``PROSE_SHARE`` of its text and links are rare), as in a long
    article whose lines the smoothing cuts into many short runs.
    """
    region_text = sum(textnum[i] for i in region)
    if region_text <= CONTAINER_RATIO * sum(textnum[i] for i in main):
        return True
    region_links = sum(link_chars[i] for i in region)
    return (
        sum(textnum[i] for i in candidate) >= PROSE_SHARE * region_text
        and region_links <= (1 - PROSE_SHARE) * region_text
    )


def split_body_blocks(blockset: Blockset, region: range, main: list[int]) -> list[int]:
    """``split_bodies``: blocks of the container's twins that hold mainblockset blocks.

    Templates cut one article into containers of the same tag and class
    (``story-body-1``, ``story-body-2`` around an ad slot, each maybe in a
    wrapper of its own); ``container`` keeps the one with most of the text.
    An element at the container's depth below one of its nearest
    ``SPLIT_LEVELS`` ancestors, with its tag and a class token in common,
    gives its blocks of mainblockset to the body.
    """
    code = blockset.codes[region.start] if region else -1
    if code < 0 or code & 1:
        return []
    k = code >> 1
    parent = blockset.parent
    outside = [i for i in main if i not in region]
    if not outside:
        return []
    above = []  # the container's ancestors, nearest first
    a = parent[k]
    while a >= 0 and len(above) < SPLIT_LEVELS:
        above.append(a)
        a = parent[a]
    twins: set[int] = set()
    for i in outside:
        chain = []  # the block's ancestors, nearest first
        e = blockset.element_of(i)
        while e >= 0:
            chain.append(e)
            e = parent[e]
        for depth, a in enumerate(above, start=1):
            if a in chain:
                at = chain.index(a) - depth
                if at >= 0 and chain[at] != k:
                    twins.add(chain[at])
                break
    if not twins:
        return []
    elements = blockset.elements
    mine = elements[k]
    tokens = set((mine.get("class") or "").split())
    in_main = set(main)
    extra: list[int] = []
    for t in sorted(twins):
        other = elements[t]
        theirs = set((other.get("class") or "").split())
        if other.tag == mine.tag and tokens & theirs:
            extra.extend(i for i in blockset.block_range(t) or () if i in in_main)
    return extra


def inner_lines(blockset: Blockset, candidate: list[int]) -> list[int]:
    """``inner_lines``: short lines between body paragraphs that are their siblings."""
    text, link_chars, parent = blockset.text, blockset.link_chars, blockset.parent
    inside = set(candidate)
    holders = {blockset.element_of(i) for i in candidate}
    levels = holders | {parent[k] for k in holders if k >= 0}
    out = []
    for i in range(candidate[0], candidate[-1] + 1):
        if i in inside:
            out.append(i)
        elif (
            STRUCTURE_LINES
            and text[i]
            and (not link_chars[i] or blockset.heading(i))  # "Heading[edit]": a link in it
            and is_structure(blockset, i, levels)
        ):
            out.append(i)
        elif text[i] and not link_chars[i] and len(text[i]) <= INNER_MAX:
            k = blockset.element_of(i)
            if k in holders or (k >= 0 and parent[k] in levels):
                out.append(i)
            elif k >= 0 and blockset.element_kinds[k] in CELL_KINDS:  # tables and lists
                out.append(i)
    return out


def is_structure(blockset: Blockset, i: int, levels: set[int]) -> bool:
    """``structure_lines``: block i is a list item, table cell, definition or h2-h4
    subheading whose list, table or section is among the body's own elements."""
    k = blockset.element_of(i)
    if k < 0:
        return False
    if blockset.element_kinds[k] in CELL_KINDS:
        # the item's list (or the cell's row, table) sits where body paragraphs sit
        p = blockset.parent[k]
        for _ in range(STRUCTURE_DEPTH):
            if p < 0:
                return False
            if p in levels:
                return True
            p = blockset.parent[p]
        return False
    return 2 <= blockset.heading(i) <= 4 and (k in levels or blockset.parent[k] in levels)


def select_body(blockset: Blockset, stats: BlockStatistics, textnum: list[int]) -> list[int]:
    """Blocks of the body: ``container`` and ``links_kept`` applied to mainblockset."""
    text, blocknum, link_chars = blockset.text, blockset.blocknum, blockset.link_chars
    main = stats.mainblockset
    if not main:
        return []
    chosen: list[int] | range = main
    region = container_region(blockset, stats, textnum, CONTAINER_SHARE)
    if region is not None:
        keep = {i for r in stats.runs if r.rule in RULES_KEPT_AS_IS for i in r.indices}
        candidate = [i for i in region if text[i] and (i in keep or _SENTENCE.search(text[i]))]
        if _plausible_region(region, candidate, main, textnum, link_chars):
            if SPLIT_BODIES:
                extra = split_body_blocks(blockset, region, main)
                if extra:
                    candidate = sorted(set(candidate) | {i for i in extra if text[i]})
            if INNER_LINES and candidate:
                candidate = inner_lines(blockset, candidate)
            if LEAD_RUNS and candidate:
                candidate = lead_blocks(blockset, stats, textnum, region, candidate[0]) + candidate
            chosen = candidate
    body = []
    seen: dict[str, int] = {}
    for i in chosen:
        if not text[i] or link_chars[i] > MAX_LINK_DENSITY * blocknum[i]:
            continue
        if len(text[i]) >= MIN_DUPLICATE_CHARS and text[i] in seen:
            # duplicate_blocks; repeated_lines: a line repeated among its own
            # siblings (a refrain, a repeated paragraph) is the author's
            if not REPEATED_LINES or seen[text[i]] != _holder_parent(blockset, i):
                continue
        seen.setdefault(text[i], _holder_parent(blockset, i))
        body.append(i)
    return body


def lead_blocks(
    blockset: Blockset, stats: BlockStatistics, textnum: list[int], region: range, first: int
) -> list[int]:
    """``lead_runs``: the text blocks of the runs §1.2.2 rejected right before the body's
    first block ``first``, when only empty blocks (an ad slot, a script container) stand
    between, they lie inside the container's parent and their text is prose; nearest run
    last, so the lead is in page order."""
    k = blockset.element_of(region.start)
    outer = blockset.block_range(blockset.parent[k]) if k >= 0 and blockset.parent[k] >= 0 else None
    if outer is None:
        return []
    text = blockset.text
    lead: list[int] = []
    for run in reversed(stats.runs):
        if run.end >= first:
            continue
        if run.rule or run.end < outer.start or any(textnum[run.end + 1 : first]):
            break
        blocks = [i for i in run.indices if textnum[i] and i >= outer.start]
        prose = sum(textnum[i] for i in blocks if _SENTENCE.search(text[i]))
        if not blocks or prose < PROSE_SHARE * sum(textnum[i] for i in blocks):
            break
        lead = blocks + lead
        if run.start < outer.start:  # the run goes on above the parent: not lead
            break
        first = run.start
    # paragraphs, not a byline, a dateline, a caption or a deck: two sentences that end
    ended = [i for i in lead if _SENTENCE_END.search(text[i])]
    if len(ended) < LEAD_MIN_SENTENCES or sum(textnum[i] for i in ended) < ANCHOR_MIN_CHARS:
        return []
    return lead


def _holder_parent(blockset: Blockset, i: int) -> int:
    """``repeated_lines``: the parent of the element block i lies in (-1: none)."""
    k = blockset.element_of(i)
    return blockset.parent[k] if k >= 0 else -1


#: ``edge_lines``: what a byline, breadcrumb, editor or share line looks like.
_EDGE_LINE = re.compile(
    r"^(?:当前位置|您的位置|您现在的位置|现在位置|位置)[:：]"
    r"|(?:首页|主页)\s*(?:[>›»/]|&gt;)"
    r"|^[(（【\[]?\s*(?:责任编辑|责编|编辑|作者|记者|来源|稿源|文章来源|本文来源)[:：]"
    r"|^(?:分享到|转发到|收藏|打印|关闭窗口|返回顶部)"
    r"|(?:来源|作者|编辑|点击|浏览|阅读|发布)(?:次数|量)?[:：]"
    # a byline without a colon: 本报记者 某某 发自北京 / 新华社记者 某某 报道
    r"|^[(（【\[]?\s*(?:本报|本刊|本台|本网|新华社|中新社|中新网)?(?:特约)?(?:记者|通讯员)"
    r"[^，。,.]{0,16}(?:发自|报道)"
)
#: ``leftover_lines``: what else a line at the body's ends is when it is not body: a bare
#: counter (``20,566``, ``1.2万``), a comment counter or form (``0人跟贴 | 0人参与``,
#: ``账号``, ``密码``), a "related" or "loading" heading, a promotion (扫描二维码, 点击投票).
_LEFTOVER_LINE = re.compile(
    r"^[\d,.\s]+(?:万|次|人|views?|reads?|comments?)?$"
    r"|\d+\s*人(?:跟贴|参与|评论|阅读|收藏|点赞)"
    r"|^(?:账号|帐号|密码|用户名|验证码|登录|注册|匿名发表|发表评论|发表跟贴|我要评论|网友评论"
    r"|Name|Email|Website|Password|Log ?in|Sign ?up|Leave a (?:Reply|comment))[:：*]?$"
    r"|^(?:相关新闻|相关阅读|相关文章|相关报道|相关视频|延伸阅读|推荐阅读|精彩推荐|精彩视频推荐|热门推荐"
    r"|Related (?:articles?|stories|posts?|videos?|coverage)|Read more|More from)\b"
    r"|^(?:正在加载|加载中|Loading)\s*(?:\.\.\.|…)?$|^\d{1,2}:\d{2}$"
    r"|扫描?二维码|扫码关注|关注微信|微信公众号|下载.{0,6}客户端|点击投票|【点击",
    re.IGNORECASE,
)
#: ``leftover_lines``: lines this long are never leftovers; passes over the ends.
LEFTOVER_MAX_CHARS = 80
EDGE_PASSES = 3
#: ``leftover_lines``: a line this short without sentence punctuation at the very end is a
#: scrap (an editor's name, "APP专享", "组图"); at most this many are peeled off per pass.
TAIL_SCRAP_CHARS = 6
TAIL_MAX_LINES = 6
#: ``edge_lines``: lines this long are prose, never trimmed.
EDGE_MAX_CHARS = 60
#: ``edge_lines``: how many lines at each end are looked at.
EDGE_LINES = 3


def drop_title_line(blockset: Blockset, body: list[int], title: str | None) -> list[int]:
    """``title_line``: the headline is the article's title, not its first paragraph.

    The smoothing of §1.2.2 often pulls the ``h1`` into the first run; the
    title is returned on its own (``ExtractedArticle.title``), so a first body line that
    is the title is dropped.
    """
    if not body or not title:
        return body
    first, t = strip_spaces(blockset.text[body[0]]), strip_spaces(title)
    if first and (
        first == t
        or (len(first) <= 2 * len(t) and t in first)
        # the title with the site's name after it (og:title "Headline | Site")
        or (len(t) <= 2 * len(first) and t.startswith(first))
    ):
        return body[1:]
    return body


def trim_edge_lines(blockset: Blockset, body: list[int], tz: tzinfo) -> list[int]:
    """``edge_lines``: drop byline, breadcrumb, editor and share lines at the body's ends.

    The smoothing of §1.2.2 pulls the short lines next to the first and last
    paragraphs into the runs: the date-and-source line under the headline, the
    editor line after the last paragraph. A short line at either end that
    looks like one of these (a date with 来源/作者, 责任编辑:, 当前位置:, 分享到)
    is not body, even after a first line that is not one (a deck or subtitle
    above the byline). Only the outermost ``EDGE_LINES`` lines at each end are
    looked at, and never a line longer than ``EDGE_MAX_CHARS``.
    """
    text = blockset.text

    def is_edge(i: int) -> bool:
        t = text[i]
        if LEFTOVER_LINES and len(t) <= LEFTOVER_MAX_CHARS and _LEFTOVER_LINE.search(t):
            return True
        if len(t) > EDGE_MAX_CHARS:
            return False
        if _EDGE_LINE.search(t):
            return True
        found = find_date(t, tz)
        return found is not None and len(t) <= 30

    for _ in range(EDGE_PASSES if LEFTOVER_LINES else 1):
        n = len(body)
        edges = set(range(min(EDGE_LINES, n))) | set(range(max(0, n - EDGE_LINES), n))
        kept = [i for pos, i in enumerate(body) if pos not in edges or not is_edge(i)]
        if LEFTOVER_LINES:  # a tail of scraps: short lines without a sentence, or edge lines
            while len(kept) > 1 and len(body) - len(kept) < TAIL_MAX_LINES:
                t = text[kept[-1]]
                if not ((len(t) <= TAIL_SCRAP_CHARS and not _SENTENCE.search(t)) or is_edge(kept[-1])):
                    break
                kept.pop()
        if len(kept) == n:
            break
        body = kept
    return body


def headline_block(blockset: Blockset, title: str | None, before: int | None) -> int | None:
    """``time_after_headline``: the block holding the headline, when it comes before ``before``."""
    if not title or before is None:
        return None
    t = strip_spaces(title)
    text = blockset.text
    for i in range(before - 1, -1, -1):
        block = text[i]
        if block and len(block) <= 2 * len(title) + 10:
            b = strip_spaces(block)
            if b == t or (t in b and len(b) <= 2 * len(t)):
                return i
    return None


def text_time(
    blockset: Blockset,
    stats: BlockStatistics,
    tz: tzinfo,
    headline: int | None = None,
    day_first: bool = False,
) -> datetime | None:
    """The time in the text: under the headline (``time_after_headline``), then the paper's
    pattern near block_i/block_j (``nonempty_window``), then page order.

    ``date_forms``: near the headline and body, dates in any common form count
    (:func:`.dates.find_date_forms`, ``day_first`` for ambiguous numbers); over
    the whole page the paper's year-first pattern is tried before them.
    """
    text = blockset.text
    under_headline = []
    if headline is not None:
        under_headline = [i for i in range(headline + 1, len(text)) if text[i]][:HEADLINE_WINDOW]
    for i in under_headline + paper_time_blocks(blockset, stats, nonempty=True):
        found = find_date_forms(text[i], tz, day_first) if DATE_FORMS else find_date(text[i], tz)
        if found is not None:
            return found
    # One regex pass over the page (blocks one per line) instead of one per block.
    page = "\n".join(t for t in text if t)
    found = find_date(page, tz)
    if found is None and DATE_FORMS:
        found = find_date_forms(page, tz, day_first)
    return found


def best_published(
    blockset: Blockset,
    stats: BlockStatistics,
    meta: tuple[datetime, str] | None,
    url: str | None,
    tz: tzinfo,
    title: str | None = None,
    day_first: bool = False,
) -> tuple[datetime | None, str | None]:
    """``meta_first`` time choice; returns (time, source).

    Metadata wins, except that a date-only metadata value (midnight) gives way
    to a time found in the text on the same day.
    """
    headline = headline_block(blockset, title, stats.block_i) if TIME_AFTER_HEADLINE else None
    found = text_time(blockset, stats, tz, headline, day_first)
    published, source = combine_published(found, meta, url, tz)
    if published is None and ISSUE_DATES:
        published = issue_date("\n".join(t for t in blockset.text if t), tz)
        source = "text:issue" if published is not None else None
    return published, source


def best_type_i() -> tuple[str, ...]:
    """The type I elements of the best mode for this page (§1.2.1 table 1).

    ``ruby_annotations``: ``rt`` and ``rp`` (the reading above a character and its
    parentheses) are not text of the sentence: 子(こ)ども is 子ども.
    ``math_sources``: a MathML formula's ``annotation`` (its TeX source) is not
    read beside the formula.
    """
    type_i = BEST_TYPE_I
    if RUBY_ANNOTATIONS:
        type_i = (*type_i, "rt", "rp")
    if MATH_SOURCES:
        type_i = (*type_i, "annotation", "annotation-xml")
    return type_i


def noscript_markup(root: etree._Element) -> list[bytes]:
    """``noscript_bodies``: the page's ``noscript`` elements that hold markup with text,
    serialised (read only when the body comes out short)."""
    found = []
    for el in root.iter("noscript"):
        if len(el) and len(_XP_ELEMENT_TEXT(el).strip()) >= NOSCRIPT_MIN_CHARS // 4:
            found.append(etree.tostring(el, encoding="utf-8", with_tail=False))
    return found


_XP_ELEMENT_TEXT = etree.XPath("string(*)")


def noscript_body(noscripts: list[bytes], url: str | None, encoding: str, tz: tzinfo) -> str:
    """``noscript_bodies``: the body of the page's ``noscript`` markup read as a page of its own.

    Pages that build the article with JavaScript may give it only inside
    ``<noscript>``, which §1.2.1 deletes (type I): when the body comes out
    shorter than ``NOSCRIPT_MIN_CHARS``, the noscript markup is extracted instead
    (when it gives more).
    """
    html = b"<html><body>" + b"".join(noscripts) + b"</body></html>"
    root = parse_html(html.decode("utf-8"), html)
    if root is None:
        return ""
    for el in root.iter("noscript"):
        el.tag = "div"
    return extract_best(root, url, encoding, tz).text


def visible_text(text: str) -> str:
    """``invisible_chars``: soft hyphens and zero-width spaces taken out of the body."""
    if INVISIBLE_CHARS and _INVISIBLE.search(text):
        text = _INVISIBLE.sub("", text)
    return text


#: ``invisible_chars``: soft hyphen, zero-width space, word joiner, zero-width no-break space.
#: (Zero-width joiners and non-joiners stay: they change how Persian and Indic scripts read.)
_INVISIBLE = re.compile("[\u00ad\u200b\u2060\ufeff]")


def zone_for_language(lang: str | None) -> tzinfo | None:
    """``page_zone``: the zone a page's language (``<html lang>``, ``og:locale``) points to,
    for a page of no known site; None when the language names no one zone."""
    if not lang:
        return None
    lang = lang.strip().lower().replace("_", "-")
    name = LANGUAGE_ZONES.get(lang) or LANGUAGE_ZONES.get(lang.split("-")[0])
    return ZoneInfo(name) if name else None


#: ``page_zone``: languages written in Han script, and the share of Han characters in the
#: title above which a page is taken to be written in one of them.
HAN_LANGUAGES = ("zh", "ja", "ko")
HAN_TITLE_SHARE = 0.3
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_XP_TITLE = etree.XPath("string(/html/head/title)")


def language_fits_title(lang: str, root: etree._Element) -> bool:
    """``page_zone``: whether a language claim agrees with the page's own script.

    Templates carry a CMS's default (``lang="en-US"`` on Chinese portals is common); a
    claim of a language not written in Han script on a page whose title is mostly Han
    characters is not evidence of the page's zone, and is ignored.
    """
    if lang.strip().lower()[:2] in HAN_LANGUAGES:
        return True
    title = "".join(_XP_TITLE(root).split())
    return not title or len(_HAN.findall(title)) <= HAN_TITLE_SHARE * len(title)


def page_language(root: etree._Element) -> str | None:
    """``date_forms``: the page's language, ``<html lang>`` else ``og:locale``; a bare
    ``<html lang>`` (``en``) gives way to an ``og:locale`` of that language with a country
    (``en_GB``): ``page_zone`` and the order of numeric dates need the country."""
    lang = root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang")
    locale = _XP_OG_LOCALE(root).strip()
    if lang:
        bare = lang.strip().lower()
        if (
            locale
            and "-" not in bare
            and "_" not in bare
            and locale.lower().replace("_", "-").startswith(bare + "-")
        ):
            return locale
        return lang
    return locale or None


_XP_OG_LOCALE = etree.XPath("string(/html/head/meta[@property='og:locale']/@content)")


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
        (i for i in range(len(text) - 1, start - 1, -1) if text[i] and tail in strip_spaces(text[i])),
        None,
    )
    return range(start, (end if end is not None else start) + 1)


def find_anchor(root: etree._Element) -> etree._Element | None:
    """``article_anchor``: the element the page names as its article, or None.

    The element with ``itemprop=articleBody``; else the outermost ``<article>``
    holding the first ``<h1>``; else the only outermost ``<article>``. Only type II
    elements qualify (they are the ones blocks know).
    """
    found = _XP_ANCHORS(root)  # one scan of the tree, document order
    for el in found:
        if el.get("itemprop") == "articleBody" and el.tag in BEST_TYPE_II:
            return el
    outer = [a for a in found if a.tag == "article" and not _XP_IN_ARTICLE(a)]
    if not outer:
        return None
    h1 = next((el for el in found if el.tag == "h1"), None)
    if h1 is not None and _XP_IN_ARTICLE(h1):
        for a in outer:
            if a in h1.iterancestors("article"):
                return a
    return outer[0] if len(outer) == 1 else None


#: ``site_suffix_titles``: a title separator, then the site's name (`` | Aktuálně.cz``).
_SITE_SUFFIX = re.compile(r"\s*(?:\||｜|_|--|——|\s[-–—:·]\s)\s*\S")


def headline_for_title(root: etree._Element, meta: tuple[str, str]) -> tuple[str, str]:
    """``site_suffix_titles``: the page's ``h1`` in place of an ``og:title`` (or JSON-LD
    headline) that is that ``h1`` followed by a separator and the site's name; else
    ``meta`` as it is."""
    title = meta[0]
    for h1 in root.iter("h1"):
        text = " ".join("".join(h1.itertext()).split())
        if (
            len(text) >= HEADLINE_MIN_CHARS
            and title.startswith(text)
            and _SITE_SUFFIX.match(title, len(text))
        ):
            return text, meta[1]
    return meta


def find_headline(root: etree._Element, titles: tuple[str | None, ...]) -> etree._Element | None:
    """``headline_anchor``: the first ``h1`` whose text is in one of ``titles`` (the page's
    ``og:title`` or JSON-LD headline, its ``<title>``) or holds one of them, or None."""
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
            if textnum[i] and i not in own and _SENTENCE.search(blockset.text[i])
        ]
        if len(prose) >= HEADLINE_MIN_BLOCKS and sum(prose) >= ANCHOR_MIN_CHARS:
            return region
    return None


_XP_ANCHORS = etree.XPath("//*[@itemprop='articleBody'] | //article | //h1")
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
    if not region or sum(textnum[i] for i in region) < ANCHOR_MIN_CHARS:
        return None
    main_total = sum(textnum[i] for i in stats.mainblockset)
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
    if sum(textnum[i] for i in window) < ANCHOR_MIN_CHARS:
        return None
    return [n if i in window else 0 for i, n in enumerate(textnum)]


def extract_best(
    root: etree._Element,
    url: str | None,
    encoding: str,
    tz: tzinfo,
    *,
    tz_known: bool = True,
    scan: PageScan | None = None,
    site_name: str | None = None,
) -> ExtractedArticle:
    """The best mode on a parsed page (modifies ``root``).

    ``tz_known=False``: ``tz`` is the default, not the site's; ``page_zone`` may
    take the page's own zone instead. ``scan``: the page's metadata read before
    (:func:`.record.scan_page`); with it the record fields are read from the lines
    around the body (:func:`.record.page_record`; ``site_name`` for ``本报讯``).
    """
    lang = page_language(root) if DATE_FORMS or PAGE_ZONE else None
    if PAGE_ZONE and not tz_known and lang and language_fits_title(lang, root):
        tz = zone_for_language(lang) or tz
    scanned = scan.meta if scan is not None else None
    meta, page_title, published_meta = page_metadata(root, tz, scanned=scanned)
    if meta is not None and SITE_SUFFIX_TITLES:
        meta = headline_for_title(root, meta)
    ld_body = json_ld_article_body(root, scanned) if ARTICLE_ANCHOR else None
    day_first = day_first_for(lang) if DATE_FORMS else False
    for head in root.findall("head"):  # head_not_body: read above, never body
        root.remove(head)
    noise = noise_rule()
    type_i = best_type_i()
    noscripts = noscript_markup(root) if NOSCRIPT_BODIES else []
    anchor = find_anchor(root) if ARTICLE_ANCHOR and noise is not None else None
    headline = anchor is None and HEADLINE_ANCHOR and noise is not None
    if headline:
        anchor = find_headline(root, (meta[0] if meta else None, page_title))
    if anchor is not None:
        anchor.set("class", f"{anchor.get('class') or ''} {ANCHOR_TOKEN}")
    blockset = split_blocks(mark_blocks(root, type_i, BEST_TYPE_II, noise), keep_links=True)
    slideshows = slideshow_elements(blockset) if SLIDESHOWS and noise is not None else []
    flagged = blockset.flagged + slideshows
    unblanked = (
        (blockset.text[:], blockset.blocknum[:], blockset.link_chars[:])
        if NEXT_CANDIDATE and flagged
        else None
    )
    blanked = blank_noise_containers(blockset, flagged, frozenset(slideshows))
    textnum = textnums(blockset)
    stats = block_statistics(textnum)
    # next_candidate: the regions in order, the first with a body wins; None stands for
    # the page without the noise blanked (its textnum is computed only if it is reached).
    candidates: list[list[int] | None] = []
    if (ARTICLE_ANCHOR or headline) and (
        anchored := anchored_textnum(blockset, stats, textnum, ld_body, headline)
    ):
        candidates.append(anchored)
    elif (FIRST_POST or COMMENT_THREADS) and (
        anchored := first_post(blockset, stats, textnum)
    ) is not None:
        candidates.append(anchored)
    candidates.append(textnum)
    if unblanked is not None and blanked:
        candidates.append(None)  # the page without the noise blanked, last
    page_textnum, page_stats = textnum, stats
    chosen: (
        tuple[int, str, BlockStatistics, str | None, str | None, list[str], list[int], list[int]]
        | None
    ) = None
    for candidate in candidates:
        if candidate is None:  # next_candidate: a body blanked whole (in a comment-named section)
            blockset.text, blockset.blocknum, blockset.link_chars = unblanked  # type: ignore[misc]
            candidate = textnums(blockset)
        textnum = candidate
        stats = page_stats if textnum is page_textnum else block_statistics(textnum)
        title, title_source = best_title(paper_title(blockset, stats, nonempty=True), meta, page_title)
        body = select_body(blockset, stats, textnum)
        body = trim_edge_lines(blockset, drop_title_line(blockset, body, title), tz)
        dropped: list[int] = []
        if RECORD_LINES:
            body, dropped = drop_record_lines(blockset, body)
        text = visible_text("\n".join(blockset.text[i] for i in body))
        size = sum(textnum[i] for i in body)
        if chosen is None or size > chosen[0]:
            chosen = (size, text, stats, title, title_source, blockset.text, body, dropped)
        if size >= NEXT_MIN_CHARS or not NEXT_CANDIDATE:
            break
    assert chosen is not None
    # the time is read in the chosen candidate's blocks
    _, text, stats, title, title_source, blockset.text, body, dropped = chosen
    if noscripts and len(text) < NOSCRIPT_MIN_CHARS:
        text = noscript_body(noscripts, url, encoding, tz) or text
    published, source = best_published(blockset, stats, published_meta, url, tz, title, day_first)

    article = ExtractedArticle(
        title=title,
        published=published,
        published_source=source,
        text=text,
        encoding=encoding,
        mode="best",
        url=url,
        title_source=title_source,
    )
    if scan is not None:
        record = page_record(
            scan,
            record_around(blockset, body, title, dropped),
            blockset.text,
            text,
            title,
            url,
            site_name,
        )
        for name in record.__slots__:
            setattr(article, name, getattr(record, name))
    return article


def record_around(
    blockset: Blockset, body: list[int], title: str | None, dropped: list[int] = ()  # type: ignore[assignment]
) -> Around:
    """The lines around the body (:class:`.record.Around`): the page's blocks above the
    body up to its headline and under it, and the byline, source and editor lines
    ``record_lines`` dropped from it; blocks that are all link text (navigation) are not
    read. The lines between the body's first and last that are not body but are such a
    line are read too."""
    if not body:
        return Around()
    headline = headline_block(blockset, title, body[0])
    blocknum, link_chars = blockset.blocknum, blockset.link_chars

    def nav(i: int) -> bool:  # all link text
        return 0 < blocknum[i] <= link_chars[i]

    first = min(body[0], dropped[0]) if dropped else body[0]
    last = max(body[-1], dropped[-1]) if dropped else body[-1]
    text = blockset.text
    kept = set(body)
    inside = sorted(
        {*dropped}
        | {
            i
            for i in range(first, last + 1)
            if i not in kept and record_line_hint(text[i]) and is_record_line(text[i])
        }
    )
    return around_body(text, first, last, headline, nav, inside)


#: ``record_lines``: on (the ablation switches it off). What a line must hold to be tried as
#: a byline, source or editor line (a cheap test before :func:`.record.is_record_line`).
RECORD_LINES = True


def drop_record_lines(blockset: Blockset, body: list[int]) -> tuple[list[int], list[int]]:
    """``record_lines``: a body line that is nothing but a byline, source or editor line
    (``（责任编辑：魏喆）``, ``来源：新华网``, ``本报记者 葛灵丹``) is not body, wherever it
    stands; the record fields read it (:mod:`.record`). Returns (kept, dropped)."""
    text = blockset.text
    dropped = [i for i in body if record_line_hint(text[i]) and is_record_line(text[i])]
    if not dropped:
        return body, dropped
    gone = set(dropped)
    return [i for i in body if i not in gone], dropped
