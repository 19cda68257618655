"""The best mode: Zou & Zhong 2011 plus the rules of :mod:`.rules`, in the order the
method applies them.

The rules are listed, each with its paper step, trigger, switch and measured gain and
cost, in one registry (:data:`.rules.RULES`; [improvements.md] is that list with the
ablation's figures); their code sits in the modules of :mod:`.rules`, one per family.
This module is the pipeline alone: metadata read before the tree changes (§1.2.3), the
type I / type II marking and the blocks (§1.2.1), the noise blanked, the statistics and
their runs (§1.2.2), the candidate regions tried in order, the body chosen and trimmed,
the time read in the chosen region's blocks (§1.2.3), and the record fields. Paper mode
(:func:`.paper.extract_paper`) stays untouched.
"""

from __future__ import annotations

from datetime import tzinfo

from lxml import etree

from .blocks import ANCHOR_TOKEN, Blockset, mark_blocks, split_blocks
from .blockstats import BlockStatistics, block_statistics
from .dates import day_first_for
from .metadata import json_ld_article_body, page_metadata
from .model import ExtractedArticle
from .page import parse_html
from .paper import paper_title
from .record import Around, PageScan, around_body, is_record_line, page_record, record_line_hint
from .rules import anchors, lines, markup, times
from .rules import body as body_rules
from .rules import noise as noise_rules
from .rules.anchors import anchored_textnum, find_anchor, find_headline, first_post
from .rules.body import select_body, textnums
from .rules.lines import drop_record_lines, drop_title_line, trim_edge_lines, visible_text
from .rules.markup import best_type_i, best_type_ii, noscript_markup
from .rules.noise import blank_noise_containers, noise_rule, slideshow_elements
from .rules.times import (
    best_published,
    headline_block,
    headline_for_title,
    language_fits_title,
    page_language,
    zone_for_language,
)
from .title_time import best_title

__all__ = ["extract_best", "record_around"]


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
    lang = page_language(root) if times.DATE_FORMS or times.PAGE_ZONE else None
    if times.PAGE_ZONE and not tz_known and lang and language_fits_title(lang, root):
        tz = zone_for_language(lang) or tz
    scanned = scan.meta if scan is not None else None
    page_markup = scan.markup if scan is not None else None  # the triggers search it
    meta, page_title, published_meta = page_metadata(root, tz, scanned=scanned)
    if meta is not None and times.SITE_SUFFIX_TITLES:
        meta = headline_for_title(root, meta, page_markup)
    ld_body = json_ld_article_body(root, scanned) if anchors.ARTICLE_ANCHOR else None
    day_first = day_first_for(lang) if times.DATE_FORMS else False
    if markup.HEAD_NOT_BODY:  # read above, never body
        for head in root.findall("head"):
            root.remove(head)
    noise = noise_rule(page_markup)
    type_i = best_type_i()
    noscripts = noscript_markup(root, page_markup) if markup.NOSCRIPT_BODIES else []
    anchor = (
        find_anchor(root, page_markup) if anchors.ARTICLE_ANCHOR and noise is not None else None
    )
    headline = anchor is None and anchors.HEADLINE_ANCHOR and noise is not None
    if headline:
        anchor = find_headline(root, (meta[0] if meta else None, page_title), page_markup)
    if anchor is not None:
        anchor.set("class", f"{anchor.get('class') or ''} {ANCHOR_TOKEN}")
    blockset = split_blocks(
        mark_blocks(root, type_i, best_type_ii(), noise), keep_links=body_rules.LINKS_KEPT
    )
    slideshows = (
        slideshow_elements(blockset) if noise_rules.SLIDESHOWS and noise is not None else []
    )
    flagged = blockset.flagged + slideshows
    unblanked = (
        (blockset.text[:], blockset.blocknum[:], blockset.link_chars[:])
        if anchors.NEXT_CANDIDATE and flagged
        else None
    )
    blanked = blank_noise_containers(blockset, flagged, frozenset(slideshows))
    textnum = textnums(blockset)
    stats = block_statistics(textnum)
    # next_candidate: the regions in order, the first with a body wins; None stands for
    # the page without the noise blanked (its textnum is computed only if it is reached).
    candidates: list[list[int] | None] = []
    if (anchors.ARTICLE_ANCHOR or headline) and (
        anchored := anchored_textnum(blockset, stats, textnum, ld_body, headline)
    ):
        candidates.append(anchored)
    elif (anchors.FIRST_POST or anchors.COMMENT_THREADS) and (
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
        heading = paper_title(blockset, stats, nonempty=times.NONEMPTY_WINDOW)
        if times.META_FIRST:
            title, title_source = best_title(heading, meta, page_title)
        else:  # the paper's heading alone
            title, title_source = best_title(heading, None, None)
        body = select_body(blockset, stats, textnum)
        body = trim_edge_lines(blockset, drop_title_line(blockset, body, title), tz)
        dropped: list[int] = []
        if lines.RECORD_LINES:
            body, dropped = drop_record_lines(blockset, body)
        text = visible_text("\n".join(blockset.text[i] for i in body))
        size = sum(map(textnum.__getitem__, body))
        if chosen is None or size > chosen[0]:
            chosen = (size, text, stats, title, title_source, blockset.text, body, dropped)
        if size >= anchors.NEXT_MIN_CHARS or not anchors.NEXT_CANDIDATE:
            break
    assert chosen is not None
    # the time is read in the chosen candidate's blocks
    _, text, stats, title, title_source, blockset.text, body, dropped = chosen
    if noscripts and len(text) < markup.NOSCRIPT_MIN_CHARS:
        text = noscript_body(noscripts, url, encoding, tz) or text
    if not times.META_FIRST:  # the time in the text alone
        published_meta, url_for_time = None, None
    else:
        url_for_time = url
    published, source = best_published(
        blockset, stats, published_meta, url_for_time, tz, title, day_first
    )

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
    blockset: Blockset,
    body: list[int],
    title: str | None,
    dropped: list[int] = (),  # type: ignore[assignment]
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
            if text[i] and i not in kept and record_line_hint(text[i]) and is_record_line(text[i])
        }
    )
    return around_body(text, first, last, headline, nav, inside)
