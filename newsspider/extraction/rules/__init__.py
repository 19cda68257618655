"""The rules of the best mode, in one registry: the method read as a list.

The best mode (``blockstats``) is Zou & Zhong 2011's block statistics (§1.2) with the
rules below. Each is a :class:`Rule`: its name, the paper step it changes, its trigger
(the cheap test that says its case can occur on a page; the rule's work is done only
there), its switch (the module flag the ablation turns off, ``benchmarks/ablation.py``),
and its doc: what it does and why, with the F1 it gains (the ablation, F1 with the rule
minus F1 without it, on cwced-zh / cx163-zh / scrapinghub-en / readability-all) and the
time it costs. The code of each family of rules sits in a module of this package
(:mod:`.markup`, :mod:`.noise`, :mod:`.anchors`, :mod:`.body`, :mod:`.lines`,
:mod:`.times`); :mod:`..best` is the pipeline that applies them in this order.

The figures are those of ``docs/improvements.md``, where each is given with its command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

import newsspider.extraction.names as names
import newsspider.extraction.record as record

from . import anchors, body, lines, markup, noise, times

__all__ = ["RULES", "Rule", "rule", "switches_off"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the best mode.

    ``module`` holds its code and ``switch`` is the name of its flag there (``True``: on);
    ``code`` names its functions there; ``changes`` is what it changes (``body``,
    ``title`` or ``time``: the ablation reads F1 for the first, the date columns for the
    others); ``open_web``: added for sites the method was never tuned on.
    """

    name: str
    step: str
    module: ModuleType
    switch: str
    trigger: str
    doc: str
    #: ``body``, ``title``, ``time`` or ``authors`` (the record fields' byline rules, whose
    #: code is in :mod:`..record` and :mod:`..names`, shared by every method)
    changes: str = "body"
    open_web: bool = False
    #: the functions of ``module`` that do the rule's work (timed by
    #: ``benchmarks/extraction_steps.py``); empty for a rule that is a test inside another's
    code: tuple[str, ...] = ()

    @property
    def on(self) -> bool:
        """Whether the rule is switched on."""
        return bool(getattr(self.module, self.switch))

    @contextlib.contextmanager
    def off(self) -> Iterator[None]:
        """The best mode without this rule, for the duration of the block."""
        old = getattr(self.module, self.switch)
        setattr(self.module, self.switch, False)
        try:
            yield
        finally:
            setattr(self.module, self.switch, old)


#: Every rule once, in the order the method applies it.
RULES: tuple[Rule, ...] = (
    Rule(
        "page_zone",
        "§1.2.3",
        times,
        "PAGE_ZONE",
        "the caller gave no zone (a page of no known site) and the page names a language",
        """A time without an offset takes the site's zone; for a page of no known site the
        zone its language points to (``<html lang>``, ``og:locale``: ``de``
        Europe/Berlin, ``zh-TW`` Asia/Taipei; a bare ``en`` gives way to an ``og:locale``
        of English with a country), else Asia/Shanghai only for a page with a sign of
        China, UTC for the others. Gain: dates only (``tests/test_open_web.py``; the
        labelled sets give their site's zone). Cost: -0.096 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        changes="time",
        open_web=True,
        code=("page_language", "zone_for_language", "language_fits_title"),
    ),
    Rule(
        "site_suffix_titles",
        "§1.2.3, with meta_first",
        times,
        "SITE_SUFFIX_TITLES",
        "a metadata title (og:title, JSON-LD headline) and an ``<h1`` in the markup",
        """``og:title`` and the JSON-LD headline often carry the site's name after a
        separator (``Headline | Aktuálně.cz``, ``标题_网易新闻``); when an ``h1`` of the page
        is that title without it, the ``h1`` is the title. Gain: titles only (titles stay
        100 % on cx163-zh; the site's name leaves titles of scrapinghub-en). Cost: +0.494 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        changes="title",
        open_web=True,
        code=("headline_for_title",),
    ),
    Rule(
        "head_not_body",
        "§1.2.1",
        markup,
        "HEAD_NOT_BODY",
        "every page",
        """``<head>`` is read for metadata (§1.2.3), then taken out of the tree, so its
        text (a ``<title>``, a ``<noscript>`` there) is never a block of the body. Gain:
        pages without a body come out empty, not as their ``<title>``; +0.005 F1
        readability-all, -0.003 cx163-zh. Cost: +0.172 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=(),
    ),
    Rule(
        "form_is_layout",
        "§1.2.1 table 1",
        markup,
        "FORM_IS_LAYOUT",
        "every page",
        """The paper deletes ``<form>`` with its content (type I). ASP.NET and many portal
        templates wrap the whole page in one form, so the paper deletes the article too;
        here ``form`` is type II (layout) and its controls stay type I. Gain: +0.089 F1
        cwced-zh (3 of its 48 pages came out empty), +0.011 scrapinghub-en, -0.003
        cx163-zh. Cost: -0.197 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("best_type_ii",),
    ),
    Rule(
        "ruby_annotations",
        "§1.2.1 table 1",
        markup,
        "RUBY_ANNOTATIONS",
        "every page (two more names in the stylesheet's type I list)",
        """``rt`` and ``rp`` are type I: the reading printed above a character and its
        fallback parentheses are not part of the sentence (子(こ)ども is 子ども). Gain: no
        labelled page has ruby; its test is in ``tests/test_open_web.py``. Cost: +0.019 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("best_type_i",),
    ),
    Rule(
        "math_sources",
        "§1.2.1 table 1",
        markup,
        "MATH_SOURCES",
        "every page (two more names in the stylesheet's type I list)",
        """MathML ``annotation`` and ``annotation-xml`` are type I: a formula's TeX source
        is not text beside the formula. Gain: +0.001 F1 readability-all. Cost: -0.098 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("best_type_i",),
    ),
    Rule(
        "noscript_bodies",
        "§1.2.1 table 1",
        markup,
        "NOSCRIPT_BODIES",
        "a ``<noscript`` in the markup, then a ``noscript`` element holding markup with "
        "text; read only when the body comes out short",
        """``noscript`` stays type I, but a page that builds its article with JavaScript may
        give it only there: when the body comes out shorter than ``NOSCRIPT_MIN_CHARS``,
        the page's ``noscript`` markup is extracted as a page of its own. Gain: no
        labelled page needs it; its test is in ``tests/test_open_web.py``. Cost: +0.254 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("noscript_markup",),
    ),
    Rule(
        "noise_containers",
        "before §1.2.1 step 2",
        noise,
        "NOISE_CONTAINERS",
        "every page (the noise test rides the block-marking stylesheet's one walk)",
        """Elements that are navigation by their markup (``nav``, ``aside``, ``footer``) or
        by a whole ``class``/``id`` token (``footer``, ``sidebar``, ``comments``,
        ``share``, ``breadcrumb`` ...) are blanked first, unless one holds more than
        half of the page's text (a page wrapper). Gain: +0.018 F1 cwced-zh, +0.075
        scrapinghub-en, +0.048 readability-all. Cost: +1.213 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("noise_rule", "blank_noise_containers"),
    ),
    Rule(
        "consent_dialogs",
        "noise_containers",
        noise,
        "CONSENT_DIALOGS",
        "consent words: a class/id token, in the stylesheet's walk; dialogs: ``dialog`` or "
        "``-modal`` in the markup, else the dialog tests leave the stylesheet",
        """Cookie and consent notices are long punctuated prose and win §1.2.2 where they
        sit before the article; their tokens are compound (``cmplz-cookiebanner``,
        ``onetrust-consent-sdk``). A token containing one of ``CONSENT_SUBSTRINGS``, and a
        dialog (``role=dialog``, ``aria-modal=true``), is noise (share rule kept). Gain:
        no labelled F1 moves; its test is in ``tests/test_open_web.py``. Cost: +0.465 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("noise_rule",),
    ),
    Rule(
        "player_controls",
        "noise_containers",
        noise,
        "PLAYER_CONTROLS",
        "a class/id token containing a player's prefix, in the stylesheet's walk",
        """A video player's control bar and menus are many short lines between body
        paragraphs: a token containing one of ``PLAYER_SUBSTRINGS`` (``vjs-``, ``jw-``,
        ``ytp-`` ...) is noise (share rule kept). Gain: no labelled F1 moves; its test is
        in ``tests/test_open_web.py``. Cost: +0.230 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("noise_rule",),
    ),
    Rule(
        "related_sections",
        "noise_containers",
        noise,
        "RELATED_SECTIONS",
        "a class/id token containing ``related``, in the stylesheet's walk",
        """A list of related stories under the article reads as more body; plugins give
        it compound tokens (``jp-relatedposts``, ``related-articles``): a token containing
        ``related`` is noise (share rule kept). Gain: +0.001 F1 readability-all. Cost: +0.364 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("noise_rule",),
    ),
    Rule(
        "hidden_elements",
        "noise_containers",
        noise,
        "HIDDEN_ELEMENTS",
        "an element with a ``hidden`` or ``style`` attribute, in the stylesheet's walk",
        """An element no reader sees (the ``hidden`` attribute, an inline
        ``display:none`` or ``visibility:hidden``) is noise, under the share rule. Gain:
        +0.004 F1 readability-all, -0.001 scrapinghub-en. Cost: -0.218 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("noise_rule",),
    ),
    Rule(
        "slideshows",
        "noise_containers",
        noise,
        "SLIDESHOWS",
        "``SLIDES_MIN`` lines of the page open with a slide counter (one regex pass over "
        "the page's text)",
        """A gallery embedded in an article (fifty slides, each a counter ``1/50``, a
        caption, a credit) can hold most of the page's text. The nearest element around
        ``SLIDES_MIN`` or more blocks opening with counters of one count is noise, even
        above the share rule, when the page holds ``SLIDESHOW_MIN_REST`` characters of
        sentences besides it. Gain: +0.005 F1 readability-all, +0.5 points qualified
        scrapinghub-en. Cost: +0.158 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("slideshow_elements",),
    ),
    Rule(
        "comment_sections",
        "noise_containers",
        noise,
        "COMMENT_SECTIONS",
        "a flagged element holding over half the page's text is named a comment section",
        """An element named ``comment``/``comments``/``comment-list`` holding
        ``COMMENT_MIN_TIMES`` date-and-time stamps is a reader-comment thread: blanked even
        when it holds most of the page's text. Without stamps it may be an opinion column
        (评论) and the share rule stands. Gain: +0.018 F1 cwced-zh. Cost: -0.035 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("is_comment_thread",),
    ),
    Rule(
        "links_kept",
        "§1.2.1 step 2, §1.2.2 (1)",
        body,
        "LINKS_KEPT",
        "every page",
        """The paper deletes ``<a>`` with its text, cutting linked words out of sentences.
        Link text is kept in the output but not counted in ``blocknum``, and a block more
        than half links is not output. Gain: +0.017 F1 cx163-zh, +0.010 scrapinghub-en,
        +0.017 readability-all. Cost: +0.360 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("textnums",),
    ),
    Rule(
        "link_blocks",
        "§1.2.2 (1), with links_kept",
        body,
        "LINK_BLOCKS",
        "a block with link text",
        """A block that is more than ``MAX_LINK_DENSITY`` links is never output, so it
        counts 0: a list of linked names keeps its commas otherwise and becomes the
        densest block. Gain: +0.006 F1 cx163-zh, +0.008 readability-all, +0.001
        cwced-zh. Cost: -0.041 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("textnums",),
    ),
    Rule(
        "article_anchor",
        "after §1.2.2 rule ②",
        anchors,
        "ARTICLE_ANCHOR",
        "the markup holds ``articleBody`` or an ``<article>`` element (a C-level search of "
        "the tree), or JSON-LD gives an ``articleBody``",
        """The densest run is not always the article (a comment thread, a second article,
        teasers). When the page names its article (``itemprop=articleBody``; the outermost
        ``<article>`` holding the first ``h1``, or the only one; the blocks of its JSON-LD
        ``articleBody``) and it holds ``ANCHOR_MIN_CHARS`` but less than ``ANCHOR_INSIDE``
        of mainblockset's text, §1.2.2 is run again inside it. Gain: +0.012 F1
        scrapinghub-en, +0.010 readability-all. Cost: +0.149 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("find_anchor", "anchored_textnum", "ld_body_region"),
    ),
    Rule(
        "anchor_trim",
        "after §1.2.2 rule ②, with article_anchor",
        anchors,
        "ANCHOR_TRIM",
        "an anchor from ``article_anchor`` and runs going on past it",
        """When most of mainblockset's text lies in the named article but the runs go on
        past it (a list of dated teasers, a quote table), §1.2.2 is run again inside it
        too. Gain: +0.003 F1 scrapinghub-en. Cost: +0.089 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("anchored_textnum",),
    ),
    Rule(
        "headline_anchor",
        "after §1.2.2 rule ②, with article_anchor",
        anchors,
        "HEADLINE_ANCHOR",
        "no named article, an ``<h1`` in the markup, and an ``h1`` whose text is the title",
        """A page naming no article element names its headline: the ``h1`` whose text is
        the page's title. The nearest element around it holding ``HEADLINE_MIN_BLOCKS``
        sentences besides it anchors the article when the runs start there and run on
        past it with less than ``ANCHOR_INSIDE`` of their text inside: §1.2.2 is run
        again there. Gain: +0.004 F1 readability-all. Cost: +0.459 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("find_headline", "headline_region"),
    ),
    Rule(
        "first_post",
        "after §1.2.2 rule ②, §1.2.3",
        anchors,
        "FIRST_POST",
        "``POST_MIN`` colons in the page's text (two counts), then ``POST_MIN`` clock times "
        "(one regex pass)",
        """A blog's front page or a forum thread repeats a dated post header in elements
        of one tag and class; the article is the first post, but the densest run may be
        a later one. With ``POST_MIN`` such headers, the first before block_i, and posts
        of ``ANCHOR_MIN_CHARS`` on average, §1.2.2 is run again on the first post. Gain:
        +0.020 F1 and 4.2 points qualified cwced-zh. Cost: +0.049 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("first_post",),
    ),
    Rule(
        "comment_threads",
        "after §1.2.2 rule ②, with first_post",
        anchors,
        "COMMENT_THREADS",
        "as ``first_post``: dated entries of one tag and class",
        """When the dated entries are short (under ``ANCHOR_MIN_CHARS`` apart on average)
        and block_i falls among them, they are reader comments that outweighed the
        article: §1.2.2 is run again on the blocks above the first entry. Gain: +0.004
        F1 readability-all. Cost: -0.337 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("first_post",),
    ),
    Rule(
        "next_candidate",
        "after §1.2.2 rule ②",
        anchors,
        "NEXT_CANDIDATE",
        "the body of the first candidate region is under ``NEXT_MIN_CHARS``",
        """The candidate regions are tried in order: the named article or first post,
        the whole page, the page without the noise blanked; the first whose body holds
        ``NEXT_MIN_CHARS`` wins, else the one with most text. Gain: no labelled F1
        moves; its test is in ``tests/test_open_web.py``. Cost: +0.165 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=(),
    ),
    Rule(
        "container",
        "after §1.2.2 rule ②",
        body,
        "CONTAINER",
        "every page",
        """``mainblockset`` misses body paragraphs cut off from the runs by empty layout
        blocks and short paragraphs at the ends. The element holding ``CONTAINER_SHARE``
        of the rule-① text is the article: its blocks with sentence punctuation are body,
        unless it holds over ``CONTAINER_RATIO`` times mainblockset's text (the page).
        Gain: +0.070 F1 cwced-zh, +0.004 cx163-zh, +0.054 scrapinghub-en, +0.070
        readability-all. Cost: +0.063 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("select_body", "container_region"),
    ),
    Rule(
        "split_bodies",
        "after container",
        body,
        "SPLIT_BODIES",
        "mainblockset blocks outside the container",
        """Templates cut one article into containers of one class around an ad slot
        (``story-body-1``, ``story-body-2``): a same-tag element sharing a class token with
        the container, at its depth under one of its ``SPLIT_LEVELS`` nearest ancestors,
        gives its mainblockset blocks to the body. Gain: +0.001 F1 readability-all.
        Cost: +0.095 ms a page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("split_body_blocks",),
    ),
    Rule(
        "inner_lines",
        "after container",
        body,
        "INNER_LINES",
        "a body of blocks from the container",
        """Between the first and last body block, a short (``INNER_MAX``) link-free block
        is body when it is a sibling of body paragraphs or a table cell / list item:
        subheadings, agendas, ingredient lists. Gain: +0.007 F1 cwced-zh, +0.002
        scrapinghub-en and readability-all. Cost: +0.381 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("inner_lines",),
    ),
    Rule(
        "structure_lines",
        "inner_lines",
        body,
        "STRUCTURE_LINES",
        "as ``inner_lines``: a non-body block between body blocks",
        """List items, cells, ``dt``/``dd`` of any length and ``h2``-``h4`` subheadings
        whose list, table or section sits among the body's elements are body. Gain: no
        labelled F1 moves; its test is in ``tests/test_open_web.py``. Cost: -0.176 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("is_structure",),
    ),
    Rule(
        "lead_runs",
        "after container",
        body,
        "LEAD_RUNS",
        "a run §1.2.2 rejected ends right before the body with only empty blocks between",
        """A lead can stand outside the container (a "read more" box holding the rest):
        runs right before the body, inside the container's parent, of prose with
        ``LEAD_MIN_SENTENCES`` paragraphs ending a sentence and ``ANCHOR_MIN_CHARS``, are
        body. Gain: +0.001 F1 readability-all. Cost: +0.253 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("lead_blocks",),
    ),
    Rule(
        "duplicate_blocks",
        "output",
        body,
        "DUPLICATE_BLOCKS",
        "every page",
        """A line of ``MIN_DUPLICATE_CHARS`` or more is never output twice (pages carrying
        the article twice, for print or mobile). Gain: +0.002 F1 scrapinghub-en, -0.005
        readability-all (its hand-made pages repeat a paragraph). Cost: -0.182 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("select_body",),
    ),
    Rule(
        "repeated_lines",
        "duplicate_blocks, container",
        body,
        "REPEATED_LINES",
        "a repeated line",
        """A copy whose element shares the first copy's parent is a line the author
        repeated among sibling paragraphs: kept, and counted when the container is
        located. Gain: +0.038 F1 readability-all, +0.001 scrapinghub-en. Cost: -0.447 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("select_body",),
    ),
    Rule(
        "title_line",
        "output",
        lines,
        "TITLE_LINE",
        "every page with a title",
        """A first body line that is the title (or the title without the site's name
        after it) is dropped: the title is returned on its own. Gain: +0.001 F1
        cwced-zh, +0.002 cx163-zh, +0.001 scrapinghub-en, -0.002 readability-all. Cost: -0.387 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("drop_title_line",),
    ),
    Rule(
        "edge_lines",
        "output",
        lines,
        "EDGE_LINES",
        "every page",
        """Short byline, breadcrumb, editor and share lines among the ``EDGE_WINDOW``
        outermost lines at either end are not body (also after a deck line that is not
        one). Gain: +0.001 F1 cwced-zh (4.2 points qualified), +0.005 cx163-zh. Cost: -0.268 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("trim_edge_lines",),
    ),
    Rule(
        "leftover_lines",
        "output, with edge_lines",
        lines,
        "LEFTOVER_LINES",
        "every page",
        """Counters, comment counters and forms, related/loading headings, promotions, a
        clock time alone, and a tail of scraps at the ends are not body; the ends are
        trimmed again after each pass. Gain: -0.001 F1 cwced-zh (its gold keeps a
        ``来源：`` line and a forum's login lines). Cost: +0.950 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("trim_edge_lines",),
    ),
    Rule(
        "record_lines",
        "output",
        lines,
        "RECORD_LINES",
        "a body line holding a byline, source or editor label (``record_line_hint``)",
        """A body line that is nothing but a byline, source or editor line
        (``（责任编辑：魏喆）``, ``来源：新华网``), anywhere in the body, is not body; the
        record fields read it. Gain: +0.0007 F1 cx163-zh, +0.0001 cwced-zh. Cost: -0.116 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        code=("drop_record_lines",),
    ),
    Rule(
        "invisible_chars",
        "output",
        lines,
        "INVISIBLE_CHARS",
        "the body holds a soft hyphen or zero-width space (one regex search)",
        """Soft hyphens and zero-width spaces (U+00AD, U+200B, U+2060, U+FEFF) are taken
        out of the body. Gain: no labelled F1 moves; its test is in
        ``tests/test_open_web.py``. Cost: -0.561 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        open_web=True,
        code=("visible_text",),
    ),
    Rule(
        "nonempty_window",
        "§1.2.3",
        times,
        "NONEMPTY_WINDOW",
        "every page",
        """The paper's ``i-2 … i+2`` windows for the title and time count only non-empty
        blocks: on today's pages the plain window is all empty layout blocks. Gain:
        dates (``blockstats-paper`` finds 0 % of cwced-zh's dates). Cost: +0.237 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        changes="time",
        code=(),
    ),
    Rule(
        "time_after_headline",
        "§1.2.3",
        times,
        "TIME_AFTER_HEADLINE",
        "the headline is a block above block_i",
        """When promotion or comment-prompt lines stand between the dateline and the body,
        the paper's window holds the body's sentences and a date in the story wins: the
        ``HEADLINE_WINDOW`` text blocks under the headline are read first. Gain: dates.
        Cost: +0.141 ms a page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        changes="time",
        code=("headline_block",),
    ),
    Rule(
        "date_forms",
        "§1.2.3",
        times,
        "DATE_FORMS",
        "every page (the forms are tried after the year-first pattern)",
        """Sites abroad write ``2. August 2019``, ``02.08.2019``, ``August 2, 2019``,
        ``06/02/2022``: in the time windows any of these forms counts, ambiguous numbers
        ordered by the page's language. Gain: dates (``tests/test_dates.py``; the labelled
        sets' dates are year first). Cost: -0.000 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        changes="time",
        open_web=True,
        code=("text_time",),
    ),
    Rule(
        "issue_dates",
        "§1.2.3",
        times,
        "ISSUE_DATES",
        "no date from metadata, text or URL",
        """A source line citing a monthly issue (``《刊名》1998年3月号``) gives the month
        when nothing else gives a date. Gain: dates. Cost: -0.020 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        changes="time",
        code=("best_published",),
    ),
    Rule(
        "meta_first",
        "§1.2.3",
        times,
        "META_FIRST",
        "every page",
        """Title: the paper's heading near ``block_i`` when it agrees with ``<title>`` /
        ``og:title``, else ``og:title``/JSON-LD, the heading, ``<title>`` without site
        names. Time: JSON-LD or ``<meta>``, then the paper's pattern near the body, the
        whole body region, the URL. Off: the paper's heading and the text's time alone.
        Gain: titles and dates. Cost: -0.146 ms a
        page in the ablation (on minus off; the run's spread is 1.9 ms).""",
        changes="time",
        code=("best_published",),
    ),
    Rule(
        "latin_names",
        "record fields (authors)",
        names,
        "LATIN_NAMES",
        "a Latin-script word the ASCII name pattern rejects",
        """A Latin-script name may have letters beyond ASCII (``Holger Zschäpitz``, ``Lê Phương``),
        double names (``Anne-Kathrin Neuberg-Vural``, ``Victoria O’Regan``), a surname in
        capitals (``Bill MCCARTHY``), the particles of other languages and an academic title
        (``Dr. Max Kolter``); never all capitals, nor two words run together
        (``ExnerKorrespondent``). Gain: authors 22.5 points exact on fundus-multi (73.0 % to
        95.5 %), 0 on cwced-zh and cx163-zh. Cost: +2.832 ms a page in the ablation (on minus
        off; the run's spread is 4.2 ms).""",
        changes="authors",
        open_web=True,
        code=("is_latin_name",),
    ),
    Rule(
        "latin_bylines",
        "record fields (authors)",
        record,
        "LATIN_BYLINES",
        "a line around the body opening with a byline word, or a metadata author value",
        """Bylines of many languages: ``By X and Y``, ``Von X und Y, Nairobi``, ``Par X``, ``Di
        X``, ``Por X``, ``Door X en Y``, ``Av X``, ``X | 05.04.2025``; the place, agency or role
        after the names dropped; the same joins in ``<meta name=author>`` and JSON-LD names (``X
        og Y``); WordPress's ``twitter:label1`` "Written by" and its translations. Gain: authors
        9.0 points on fundus-multi (86.5 % to 95.5 %), 0 on cwced-zh and cx163-zh. Cost: +1.757
        ms a page in the ablation (on minus off; the run's spread is 4.2 ms).""",
        changes="authors",
        open_web=True,
        code=("latin_byline_names", "latin_names"),
    ),
    Rule(
        "visible_byline_first",
        "record fields (authors), with latin_bylines",
        record,
        "VISIBLE_BYLINE_FIRST",
        "JSON-LD names an author",
        """The JSON-LD ``author`` is the article's own (a ClaimReview's ``itemReviewed`` has its
        own); a ``Person``'s name is one in any script (``배윤경``, ``新間``); a visible byline
        (a writer's label in the lines around the body, where a byline element's text stands)
        that names other people than JSON-LD (an editor, a desk, the publisher) wins; the site's
        or publisher's own name in a byline is no author. Gain: authors 2.7 points on
        fundus-multi (92.8 % to 95.5 %), 0 on cwced-zh and cx163-zh. Cost: +1.468 ms a page in
        the ablation (on minus off; the run's spread is 4.2 ms).""",
        changes="authors",
        open_web=True,
        code=("find_authors",),
    ),
    Rule(
        "regional_bylines",
        "record fields (authors)",
        record,
        "REGIONAL_BYLINES",
        "a line around the body with 报导/报道 and a slash, 日电 or 报道",
        """Taiwan's, Hong Kong's, Singapore's and Malaysia's bylines: ``〔記者X、Y/台北報導〕``,
        ``【記者X／綜合報導】``, ``（X／台中報導）``, ``中央社記者X台北15日電`` (the last name
        before the place: three characters preferred), ``X 报道``, ``X／报道``, ``报导：X``.
        Gain: authors 0 on fundus-multi, cwced-zh and cx163-zh (no labelled page has these
        forms; their tests are in ``tests/test_record_fields.py``). Cost: +1.573 ms a page in
        the ablation (on minus off; the run's spread is 4.2 ms).""",
        changes="authors",
        open_web=True,
        code=("regional_names",),
    ),
    Rule(
        "traditional_labels",
        "record fields (authors, origin, editor)",
        record,
        "TRADITIONAL_LABELS",
        "every line a label pattern reads (one ``str.translate``)",
        """Every mainland label in its traditional forms (``記者``, ``編輯``, ``責任編輯``,
        ``來源``, ``報導``, ``通訊員``): label characters are folded to simplified ones,
        character for character, from the mainland's label words converted by OpenCC; the values
        are cut from the line as written. Gain: authors 0 on fundus-multi, cwced-zh and cx163-zh
        (no labelled page is traditional; tests on OpenCC-converted pages). Cost: +0.032 ms a
        page in the ablation (on minus off; the run's spread is 4.2 ms).""",
        changes="authors",
        open_web=True,
        code=("regional_names", "writer_names", "reporter_names", "editor_value"),
    ),
    Rule(
        "blog_owner",
        "record fields (authors)",
        record,
        "BLOG_OWNER",
        "no writer found, and a blog link in the markup's first 20,000 characters or a"
        " blog word in the title",
        """A blog's post is its owner's: the Chinese name its ``<title>`` gives as a segment of its
        own (``海姑娘 | blog.wenxuecity.com``), else its header, the page's first line. Gain:
        authors 4.2 points on cwced-zh (89.4 % to 93.6 %: two blog pages), 0 on fundus-multi and
        cx163-zh. Cost: +1.406 ms a page in the ablation (on minus off; the run's spread is 4.2
        ms).""",
        changes="authors",
        code=("blog_owner",),
    ),
)

_BY_NAME = {r.name: r for r in RULES}


def rule(name: str) -> Rule:
    """The rule called ``name``; ``KeyError`` names the valid ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no rule {name!r}; the rules are {', '.join(_BY_NAME)}") from None


@contextlib.contextmanager
def switches_off(*names: str) -> Iterator[None]:
    """The best mode without the named rules, for the duration of the block."""
    with contextlib.ExitStack() as stack:
        for name in names:
            stack.enter_context(rule(name).off())
        yield
