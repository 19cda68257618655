"""Line-hash denoising, Li & Jiang 2012 §2.2, as pure functions.

Boilerplate (navigation, copyright footers, "share to" bars) repeats across the pages of one
site, body text does not. Per site we keep a table ``line MD5 -> LC`` (how many pages a line
has been seen on) and ``RC`` (pages processed so far). For each page:

1. split the body text on ``\\n`` into stripped, non-empty lines;
2. for each line ``LC += 1`` and keep it iff ``LC <= int(1 + RC / L)`` (``L = 50``),
   otherwise it is boilerplate and is dropped;
3. after the page ``RC += 1``;
4. every so often delete records with ``LC <= RC / 100`` so the table stays small.

Everything that decides is here, free of I/O, so the in-memory :class:`LineTable` and the
SQL-backed ``newsspider.storage.lines.SqlLineTable`` share one implementation of the rule:
the SQL side only stores counts and asks :func:`decide_page` what to keep.

Paper mode counts every occurrence of a line (``once_per_page=False``). Our improvement
"count a line once per page" (``once_per_page=True``, the default) counts a line at most once
per page, so a line repeated inside one article (a refrain, a repeated caption) is neither
dropped from that page nor pushed towards the boilerplate threshold by it.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

#: ``L`` of Li & Jiang §2.2: the threshold grows by one every ``L`` pages.
DEFAULT_L = 50
#: Prune divisor of Li & Jiang §2.2: records with ``LC <= RC / 100`` are deleted.
PRUNE_DIVISOR = 100


def line_md5(line: str) -> str:
    """Hex MD5 of the stripped line in UTF-8: the table key of Li & Jiang §2.2.

    Stripping first makes indentation and ``\\r`` irrelevant, so the same boilerplate line
    hashes the same whatever whitespace the extractor left around it.
    """
    return hashlib.md5(line.strip().encode("utf-8")).hexdigest()


def split_lines(text: str) -> list[str]:
    """Step 1 of Li & Jiang §2.2: split on ``\\n``, strip each line, skip empty ones."""
    return [s for s in (raw.strip() for raw in text.split("\n")) if s]


def page_md5(text: str) -> str:
    """MD5 of a page's body as the line table sees it (its :func:`split_lines`, joined).

    Used by the improvement "skip exact duplicate pages before counting" (§B3): a mirror or a
    re-fetch of an already counted page would otherwise push all its own lines over the
    threshold. Normalising through :func:`split_lines` makes whitespace-only differences,
    which the table cannot see either, count as duplicates.
    """
    return hashlib.md5("\n".join(split_lines(text)).encode("utf-8")).hexdigest()


def keep_line(LC: int, RC: int, L: int = DEFAULT_L) -> bool:
    """Line-hash test, Li & Jiang 2012 §2.2: keep while ``LC <= int(1 + RC / L)``.

    ``LC`` is the line's count including the current page, ``RC`` the number of pages
    processed before it.
    """
    return LC <= int(1 + RC / L)


def prune_threshold(RC: int) -> float:
    """Step 4 of §B3: records with ``LC <= RC / 100`` are pruned (Li & Jiang §2.2)."""
    return RC / PRUNE_DIVISOR


def should_prune(LC: int, RC: int) -> bool:
    """True when a record with this ``LC`` is deleted by pruning at ``RC`` (§B3 step 4)."""
    return LC <= prune_threshold(RC)


def prune_due(RC: int, pruned_at_RC: int, prune_every: int) -> bool:
    """Whether to prune now: ``prune_every`` pages have passed since the last pruning.

    §B3 asks to prune "every so often, not per line"; remembering the ``RC`` of the last
    pruning (rather than testing ``RC % prune_every``) keeps the schedule right when several
    runs or processes share one table. ``prune_every <= 0`` turns pruning off.
    """
    return prune_every > 0 and RC - pruned_at_RC >= prune_every


def page_counts(md5s: Sequence[str], *, once_per_page: bool = True) -> dict[str, int]:
    """How much each line of one page adds to its ``LC`` (§B3 step 2).

    Paper mode (``once_per_page=False``) adds one per occurrence; the improvement "count a
    line once per page" adds one per distinct line. Returned in first-occurrence order so
    callers that write them get a stable order.
    """
    counts = Counter(md5s)
    if once_per_page:
        return dict.fromkeys(counts, 1)
    return dict(counts)


@dataclass(slots=True)
class CleanResult:
    """One page after line-hash denoising.

    ``text`` is the kept lines joined by ``\\n``; ``dropped_lines`` the boilerplate removed,
    in page order (kept for stats and for checking the table's decisions by eye).
    """

    text: str
    kept: int
    dropped: int
    dropped_lines: list[str] = field(default_factory=list)


def decide_page(
    lines: Sequence[str],
    md5s: Sequence[str],
    LC_after: Mapping[str, int],
    RC: int,
    L: int = DEFAULT_L,
    *,
    once_per_page: bool = True,
) -> CleanResult:
    """Keep or drop each line of one page (§B3 step 2), given the counts after the page.

    ``LC_after`` maps each of the page's MD5s to its ``LC`` once all of this page's
    increments (:func:`page_counts`) are applied; ``RC`` is the page count *before* this
    page. Taking the counts after the whole page lets a store apply all increments in one
    batch: in paper mode the k-th of n occurrences of a line saw ``LC_after - n + k`` when the
    paper processes lines one by one, which is what this reconstructs. With
    ``once_per_page`` all occurrences share one count, so they are kept or dropped together.
    """
    if len(lines) != len(md5s):
        raise ValueError("lines and md5s must be the same length")
    totals = Counter(md5s)
    seen: Counter[str] = Counter()
    kept: list[str] = []
    dropped: list[str] = []
    for line, h in zip(lines, md5s, strict=True):
        seen[h] += 1
        if once_per_page:
            LC = LC_after[h]
        else:
            LC = LC_after[h] - totals[h] + seen[h]
        (kept if keep_line(LC, RC, L) else dropped).append(line)
    return CleanResult("\n".join(kept), len(kept), len(dropped), dropped)


@dataclass(slots=True)
class LineTable:
    """In-memory reference implementation of the per-site line table (Li & Jiang §2.2).

    ``LC`` maps line MD5 to its count, ``RC`` counts the pages processed, ``L`` is the
    paper's growth constant. ``prune_every`` (0 = never, the paper leaves it open) prunes
    automatically after that many pages, mirroring ``SqlLineTable``; ``pruned_at_RC``
    remembers when it last happened. The SQL table must agree with this one exactly.
    """

    LC: dict[str, int] = field(default_factory=dict)
    RC: int = 0
    L: int = DEFAULT_L
    prune_every: int = 0
    pruned_at_RC: int = 0

    def clean(self, text: str, *, once_per_page: bool = True) -> CleanResult:
        """Denoise one page and learn from it: §B3 steps 1-3 (and 4 when due).

        ``once_per_page=False`` is paper mode. A page with no non-empty line is returned
        as is and not counted: it was not "successfully processed".
        """
        lines = split_lines(text)
        if not lines:
            return CleanResult("", 0, 0, [])
        md5s = [line_md5(s) for s in lines]
        for h, n in page_counts(md5s, once_per_page=once_per_page).items():
            self.LC[h] = self.LC.get(h, 0) + n
        result = decide_page(lines, md5s, self.LC, self.RC, self.L, once_per_page=once_per_page)
        self.RC += 1
        if prune_due(self.RC, self.pruned_at_RC, self.prune_every):
            self.prune()
        return result

    def prune(self) -> int:
        """§B3 step 4: delete records with ``LC <= RC / 100``; return how many went."""
        doomed = [h for h, LC in self.LC.items() if should_prune(LC, self.RC)]
        for h in doomed:
            del self.LC[h]
        self.pruned_at_RC = self.RC
        logger.debug("pruned %s line records at RC=%s", len(doomed), self.RC)
        return len(doomed)
