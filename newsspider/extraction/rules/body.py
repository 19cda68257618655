"""Rules that choose the body's blocks after §1.2.2: ``links_kept``, ``link_blocks``,
``container``, ``split_bodies``, ``lead_runs``, ``inner_lines``, ``structure_lines``,
``duplicate_blocks``, ``repeated_lines``."""

from __future__ import annotations

import re

from ..blocks import CELL_KINDS, Blockset
from ..blockstats import BlockStatistics
from .common import ANCHOR_MIN_CHARS, MAX_LINK_DENSITY, PROSE_SHARE, SENTENCE, ancestors

#: ``links_kept``, ``container``, ``duplicate_blocks``: on (the ablation switches each off).
LINKS_KEPT = True
CONTAINER = True
DUPLICATE_BLOCKS = True
#: ``link_blocks``: on (the ablation switches it off).
LINK_BLOCKS = True


#: ``structure_lines``: on (the ablation switches it off), and how far up a list item's
#: or cell's ancestors the body's elements are looked for (li, ul; td, tr, tbody, table).
STRUCTURE_LINES = True


STRUCTURE_DEPTH = 4


#: ``split_bodies``: on (the ablation switches it off).
SPLIT_BODIES = True


SPLIT_LEVELS = 3


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


#: ``inner_lines``: on (the ablation switches it off) and the longest line it adds.
INNER_LINES = True


INNER_MAX = 40


#: ``lead_runs``: on (the ablation switches it off), and the paragraphs (blocks ending a
#: sentence) the lead must hold.
LEAD_RUNS = True


LEAD_MIN_SENTENCES = 2


_SENTENCE_END = re.compile(r"[。！？.!?…][\"'”’)）」』]*$")


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
            if text[i] not in seen:
                seen[text[i]] = _holder_parent(blockset, i)
            total += n
            container = blockset.element_of(i)
            chain = chains.get(container)
            if chain is None:  # blocks share containers: walk each one up once
                chain = ancestors(blockset, container)[::-1]  # root first: position = depth
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
    region_text = sum(textnum[region.start : region.stop])  # a range: C-level sums
    if region_text <= CONTAINER_RATIO * sum(map(textnum.__getitem__, main)):
        return True
    region_links = sum(link_chars[region.start : region.stop])
    return (
        sum(map(textnum.__getitem__, candidate)) >= PROSE_SHARE * region_text
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
    region = container_region(blockset, stats, textnum, CONTAINER_SHARE) if CONTAINER else None
    if region is not None:
        keep = {i for r in stats.runs if r.rule in RULES_KEPT_AS_IS for i in r.indices}
        candidate = [i for i in region if text[i] and (i in keep or SENTENCE.search(text[i]))]
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
        if DUPLICATE_BLOCKS and len(text[i]) >= MIN_DUPLICATE_CHARS and text[i] in seen:
            # duplicate_blocks; repeated_lines: a line repeated among its own
            # siblings (a refrain, a repeated paragraph) is the author's
            if not REPEATED_LINES or seen[text[i]] != _holder_parent(blockset, i):
                continue
        if text[i] not in seen:  # the parent is looked up for a line's first copy only
            seen[text[i]] = _holder_parent(blockset, i)
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
        prose = sum(textnum[i] for i in blocks if SENTENCE.search(text[i]))
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
