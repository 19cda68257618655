"""The paper's method: Zou & Zhong 2011 §1.2 alone (``blockstats-paper``).

On a decoded and parsed page (:mod:`.page`):

1. read the page's ``<title>`` *before* the tree is cut into blocks, since
   type I elements (``script``, ``meta``) are deleted by that step;
2. cut the tree into basic text blocks (§1.2.1, :mod:`.blocks`), compute the
   block statistics and the ``mainblockset`` (§1.2.2, :mod:`.blockstats`);
3. title and report time near ``block_i`` / ``block_j`` (§1.2.3).

The window and title helpers are shared with the best mode (:mod:`.best`),
which changes them only through their ``nonempty`` switch.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from lxml import etree

from .blocks import Blockset, blockset_of
from .blockstats import BlockStatistics, block_statistics
from .dates import find_date
from .metadata import html_title
from .model import ExtractedArticle

__all__ = [
    "NEAR",
    "body_text",
    "extract_paper",
    "near",
    "paper_blocks",
    "paper_time",
    "paper_time_blocks",
    "paper_title",
]

#: §1.2.3: title and time are searched in blocks i-2 … i+2 (and j-2 … j+2).
NEAR = 2


def paper_blocks(root: etree._Element) -> tuple[Blockset, BlockStatistics]:
    """§1.2.1-§1.2.2 on a parsed page (modifies ``root``)."""
    blockset = blockset_of(root, keep_links=False)
    return blockset, block_statistics(blockset.blocknum)


def near(blockset: Blockset, index: int, *, nonempty: bool = False) -> list[int]:
    """Blocks ``index-2 … index+2`` (§1.2.3).

    ``nonempty=True`` (best mode, ``nonempty_window``) counts only blocks with
    text: the paper's window of five blocks often holds nothing but the empty
    blocks between layout tags, so the headline and the time line sit just
    outside it.
    """
    if not nonempty:
        return list(range(max(0, index - NEAR), min(len(blockset), index + NEAR + 1)))
    text = blockset.text
    before = [i for i in range(index - 1, -1, -1) if text[i]][:NEAR]
    after = []
    for i in range(index + 1, len(text)):
        if text[i]:
            after.append(i)
            if len(after) == NEAR:
                break
    return [*reversed(before), index, *after]


def paper_title(
    blockset: Blockset, stats: BlockStatistics, *, nonempty: bool = False
) -> str | None:
    """§1.2.3 title: the highest-level ``h1``-``h6`` among blocks i-2 … i+2."""
    if stats.block_i is None:
        return None
    headings = [
        (blockset.heading(i), i)
        for i in near(blockset, stats.block_i, nonempty=nonempty)
        if blockset.text[i] and blockset.heading(i)
    ]
    return blockset.text[min(headings)[1]] if headings else None


def paper_time_blocks(
    blockset: Blockset, stats: BlockStatistics, *, nonempty: bool = False
) -> list[int]:
    """§1.2.3 candidate blocks for the report time: i-2 … i+2, then j-2 … j+2."""
    if stats.block_i is None or stats.block_j is None:
        return []
    first = near(blockset, stats.block_i, nonempty=nonempty)
    last = [i for i in near(blockset, stats.block_j, nonempty=nonempty) if i not in first]
    return first + last


def paper_time(blockset: Blockset, stats: BlockStatistics, tz: tzinfo) -> datetime | None:
    """§1.2.3 report time: the paper's date pattern, first match near the start, then the end."""
    for i in paper_time_blocks(blockset, stats):
        found = find_date(blockset.text[i], tz)
        if found is not None:
            return found
    return None


def body_text(blockset: Blockset, indices: list[int]) -> str:
    """The body: the text of the chosen blocks, one non-empty block per line."""
    return "\n".join(blockset.text[i] for i in indices if blockset.text[i])


def extract_paper(
    root: etree._Element, url: str | None, encoding: str, tz: tzinfo
) -> ExtractedArticle:
    """Zou & Zhong 2011 alone on a parsed page (modifies ``root``)."""
    fallback_title = html_title(root)  # <title> with stop words, §1.2.3
    blockset, stats = paper_blocks(root)
    title = paper_title(blockset, stats)
    title_source = "heading" if title else None
    if title is None and fallback_title:
        title, title_source = fallback_title, "title"
    published = paper_time(blockset, stats, tz)
    return ExtractedArticle(
        title=title,
        published=published,
        published_source="text" if published else None,
        text=body_text(blockset, stats.mainblockset),
        encoding=encoding,
        mode="paper",
        url=url,
        title_source=title_source,
    )
