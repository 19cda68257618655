"""Text-block statistics and thresholds: Zou & Zhong 2011 §1.2.2.

Every intermediate value of the paper is exposed under the paper's name so a
test (or ``scrapy extract --blocks``) can check it against a hand computation:

- ``blocknum[i]``: non-whitespace characters of block ``b_i``;
- ``sblocknum``: ``blocknum`` smoothed with the centre-weighted operator ¼[1 2 1]
  (a missing neighbour at either end counts 0);
- ``N_min`` (smallest non-zero ``sblocknum``), ``N_avg`` (mean of all),
  ``N'min = (2·N_min + N_avg)/3`` (``N_min_prime``),
  ``N_cal = (sum of the 9 largest + N_avg)/10`` (the paper's N_标定);
- rule ①: a *run* (maximal sequence of blocks with ``sblocknum >= N'min``) is
  accepted when one of its blocks reaches ``N_cal``;
- rule ②: a run that fails only the ``N_cal`` condition but lies between the
  first and the last rule-① run is accepted too (the paper's ``BSet``);
- ``mainblockset``: the blocks of accepted runs, in order; ``block_i`` and
  ``block_j`` its first and last block.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

#: The paper's "9 largest values" in N_cal.
N_CAL_TOP = 9


@dataclass(slots=True)
class Run:
    """A maximal sequence of consecutive blocks with ``sblocknum >= N'min``."""

    start: int  # first block index
    end: int  # last block index (inclusive)
    rule: int = 0  # 1 or 2 when accepted into mainblockset, 0 when rejected

    @property
    def indices(self) -> range:
        return range(self.start, self.end + 1)


@dataclass(slots=True)
class BlockStatistics:
    """All values of §1.2.2 for one page."""

    blocknum: list[int]
    sblocknum: list[float]
    N_min: float
    N_avg: float
    N_min_prime: float
    N_cal: float
    runs: list[Run] = field(default_factory=list)
    mainblockset: list[int] = field(default_factory=list)

    @property
    def block_i(self) -> int | None:
        """First block of the body (§1.2.3), or None when there is none."""
        return self.mainblockset[0] if self.mainblockset else None

    @property
    def block_j(self) -> int | None:
        """Last block of the body (§1.2.3), or None when there is none."""
        return self.mainblockset[-1] if self.mainblockset else None


def smooth(blocknum: Sequence[float]) -> list[float]:
    """¼[1 2 1] smoothing of §1.2.2 (1); the ends see a 0 outside the array."""
    n = len(blocknum)
    if n == 0:
        return []
    if n == 1:
        return [blocknum[0] / 2]
    b = list(blocknum)
    out = [(2 * b[0] + b[1]) / 4]
    # zip over shifted copies: faster than indexing in a generator (hot path)
    out += [(prev + 2 * cur + nxt) / 4 for prev, cur, nxt in zip(b, b[1:], b[2:], strict=False)]
    out.append((b[n - 2] + 2 * b[n - 1]) / 4)
    return out


def thresholds(sblocknum: Sequence[float]) -> tuple[float, float, float, float]:
    """``(N_min, N_avg, N'min, N_cal)`` of §1.2.2 (2).

    With no non-zero value there is no text at all: everything is 0.
    With fewer than 9 blocks N_cal sums all of them (our reading of §1.2.2).
    """
    nonzero = [v for v in sblocknum if v > 0]
    if not nonzero:
        return 0.0, 0.0, 0.0, 0.0
    N_min = min(nonzero)
    N_avg = sum(sblocknum) / len(sblocknum)
    N_min_prime = (2 * N_min + N_avg) / 3
    N_cal = (sum(heapq.nlargest(N_CAL_TOP, sblocknum)) + N_avg) / 10
    return N_min, N_avg, N_min_prime, N_cal


def find_runs(sblocknum: Sequence[float], N_min_prime: float) -> list[Run]:
    """Maximal runs of consecutive blocks with ``sblocknum >= N'min`` (rule ①, first condition).

    A zero block never belongs to a run, even when ``N'min`` is 0 (no text).
    """
    runs: list[Run] = []
    start = None
    for i, v in enumerate(sblocknum):
        if v >= N_min_prime and v > 0:
            if start is None:
                start = i
        elif start is not None:
            runs.append(Run(start, i - 1))
            start = None
    if start is not None:
        runs.append(Run(start, len(sblocknum) - 1))
    return runs


def accept_runs(runs: list[Run], sblocknum: Sequence[float], N_cal: float) -> list[int]:
    """Apply rules ① and ② to ``runs`` (sets ``run.rule``); return mainblockset."""
    rule1 = [k for k, r in enumerate(runs) if max(sblocknum[r.start : r.end + 1]) >= N_cal]
    if not rule1:
        return []
    for k in rule1:
        runs[k].rule = 1
    # Rule ②: BSet, the runs between two rule-① runs.
    for k in range(rule1[0] + 1, rule1[-1]):
        if runs[k].rule == 0:
            runs[k].rule = 2
    return [i for r in runs if r.rule for i in r.indices]


def block_statistics(blocknum: Sequence[int]) -> BlockStatistics:
    """Run §1.2.2 on a blockset's ``blocknum``: the paper's method, exactly."""
    sblocknum = smooth(blocknum)
    N_min, N_avg, N_min_prime, N_cal = thresholds(sblocknum)
    runs = find_runs(sblocknum, N_min_prime)
    mainblockset = accept_runs(runs, sblocknum, N_cal)
    return BlockStatistics(
        list(blocknum), sblocknum, N_min, N_avg, N_min_prime, N_cal, runs, mainblockset
    )
