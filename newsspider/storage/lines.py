"""The line-hash table of Li & Jiang 2012 §2.2 kept in SQL.

Same semantics as the pure :class:`newsspider.extraction.linehash.LineTable`, but ``LC`` and
``RC`` live in ``line_counts`` and ``site_line_stats`` so they survive runs and are shared by
processes. :meth:`SqlLineTable.clean_batch` handles a batch of pages with a fixed handful of
statements, whatever their length: read ``RC``, a multi-row upsert ``LC = LC + n``, one
``SELECT ... IN`` for the resulting counts, one ``UPDATE`` of ``RC`` (plus a pruning when one
falls due): the crawl's path (``benchmarks/crawl_throughput.py`` measures it).
:meth:`~SqlLineTable.clean` and :meth:`~SqlLineTable.apply` are a batch of one page.
The keep-or-drop decision is made only
by the pure functions of ``linehash`` (:func:`decide_page`, :func:`keep_line`,
:func:`should_prune`'s threshold), never re-implemented here.

The caller owns the session and its transaction (commit once per page or per batch).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from newsspider import settings as defaults
from newsspider.extraction.linehash import (
    DEFAULT_L,
    CleanResult,
    LineTable,
    decide_page,
    line_md5,
    page_counts,
    prune_due,
    prune_threshold,
    split_lines,
)

from .db import MAX_PARAMS, chunked, dialect_insert, insert_values
from .models import LineCount, SiteLineStats

logger = logging.getLogger(__name__)

LINE_COUNTS = LineCount.__table__
SITE_LINE_STATS = SiteLineStats.__table__
#: :func:`.db.insert_values`'s upsert ``LC = LC + n`` (the batch's increments)
_LC_INSERT = f"INSERT INTO {LINE_COUNTS.name} (site, md5, {LINE_COUNTS.c.LC.name})"
_LC_ADD = (
    f"ON CONFLICT (site, md5) DO UPDATE SET {LINE_COUNTS.c.LC.name} = "
    f"{LINE_COUNTS.name}.{LINE_COUNTS.c.LC.name} + excluded.{LINE_COUNTS.c.LC.name}"
)
_LC_RETURNING = f"{_LC_ADD} RETURNING md5, {LINE_COUNTS.c.LC.name}"
_LC_SELECT = f"SELECT md5, {LINE_COUNTS.c.LC.name} FROM {LINE_COUNTS.name}"


class SqlLineTable:
    """Per-site line table in SQL; ``clean(text)`` behaves exactly like ``LineTable.clean``.

    ``L`` and ``once_per_page`` are as in ``linehash`` (``once_per_page=False`` is paper
    mode). ``prune_every`` pages after the last pruning, records with ``LC <= RC / 100`` are
    deleted (Li & Jiang 2012 §2.2 step 4); 0 turns automatic pruning off. Their defaults
    are the settings ``LINEHASH_ONCE_PER_PAGE`` and ``LINEHASH_PRUNE_EVERY``.
    """

    def __init__(
        self,
        session: Session,
        site: str,
        L: int = DEFAULT_L,
        once_per_page: bool = defaults.LINEHASH_ONCE_PER_PAGE,
        prune_every: int = defaults.LINEHASH_PRUNE_EVERY,
    ) -> None:
        self.session = session
        self.site = site
        self.L = L
        self.once_per_page = once_per_page
        self.prune_every = prune_every

    def _stats(self) -> tuple[int, int]:
        """``(RC, pruned_at_RC)`` of the site, creating its row at 0 when missing.

        The row is looked up every time rather than remembered as created, so a caller's
        rollback cannot leave this object believing in a row that is gone.
        """
        query = select(SITE_LINE_STATS.c.RC, SITE_LINE_STATS.c.pruned_at_RC).where(
            SITE_LINE_STATS.c.site == self.site
        )
        row = self.session.execute(query).first()
        if row is None:
            insert = dialect_insert(self.session, SITE_LINE_STATS).values(
                site=self.site, RC=0, pruned_at_RC=0
            )
            # Two processes may both find no row: the loser's insert does nothing.
            self.session.execute(
                insert.on_conflict_do_nothing(index_elements=[SITE_LINE_STATS.c.site])
            )
            row = self.session.execute(query).one()
        return int(row.RC), int(row.pruned_at_RC)

    @property
    def RC(self) -> int:
        """Pages of this site counted so far (§2.2 step 3)."""
        return self._stats()[0]

    def clean(self, text: str) -> CleanResult:
        """Denoise one page and learn from it (§2.2 steps 1-3, and 4 when due).

        As in ``LineTable.clean``, a page without any non-empty line is returned untouched
        and not counted. The statements are :meth:`clean_batch`'s for a batch of one.
        """
        if not split_lines(text):
            return CleanResult("", 0, 0, [])
        return self.clean_batch([(text, True)])[0]

    def clean_batch(self, pages: Sequence[tuple[str, bool]]) -> list[CleanResult]:
        """Each ``(text, learn)`` in order, exactly as ``clean(text)`` (``learn``) or
        ``apply(text)`` (not ``learn``) page by page would, in a few statements per batch.

        The batch is cut into segments that end where pruning falls due. Per segment: one
        upsert of the summed increments, one ``SELECT ... IN`` of the counts after it, one
        ``UPDATE`` of ``RC``, then :meth:`prune` when due. The counts each page saw one by
        one are rebuilt in memory: the counts before the segment are the selected ones
        minus the segment's increments, and each page adds its own in turn, so increments
        by another writer count as having come before the segment.
        """
        split = []
        for text, learn in pages:
            lines = split_lines(text)
            split.append((lines, [line_md5(s) for s in lines], learn))
        results: list[CleanResult] = []
        RC, pruned_at_RC = self._stats()
        start = 0
        while start < len(split):
            end, learned = start, 0
            while end < len(split):
                lines, _, learn = split[end]
                end += 1
                if lines and learn:
                    learned += 1
                    if prune_due(RC + learned, pruned_at_RC, self.prune_every):
                        break
            segment = split[start:end]
            start = end
            increments: Counter[str] = Counter()
            wanted: set[str] = set()
            for lines, md5s, learn in segment:
                wanted.update(md5s)
                if lines and learn:
                    increments.update(page_counts(md5s, once_per_page=self.once_per_page))
            LC = self._add(sorted(increments.items()))
            LC.update(self._counts(sorted(wanted.difference(LC))))
            for h, n in increments.items():
                LC[h] = LC.get(h, 0) - n
            for lines, md5s, learn in segment:
                if not lines:
                    results.append(CleanResult("", 0, 0, []))
                elif learn:
                    for h, n in page_counts(md5s, once_per_page=self.once_per_page).items():
                        LC[h] = LC.get(h, 0) + n
                    once = self.once_per_page
                    results.append(decide_page(lines, md5s, LC, RC, self.L, once_per_page=once))
                    RC += 1
                else:
                    now = {h: LC.get(h, 0) for h in md5s}
                    results.append(decide_page(lines, md5s, now, RC, self.L, once_per_page=True))
            if learned:
                self.session.execute(
                    update(SITE_LINE_STATS)
                    .where(SITE_LINE_STATS.c.site == self.site)
                    .values({SITE_LINE_STATS.c.RC: SITE_LINE_STATS.c.RC + learned})
                )
                if prune_due(RC, pruned_at_RC, self.prune_every):
                    self.prune()
                    pruned_at_RC = RC
        return results

    def _add(self, increments: list[tuple[str, int]]) -> dict[str, int]:
        """Upsert ``LC = LC + n`` of each ``(md5, n)``; return each one's ``LC`` after it.

        Multi-row statements at the driver level (``storage.db.insert_values`` says why),
        with ``RETURNING`` where the database has it (SQLite 3.35+, PostgreSQL): the counts
        come back from the upsert itself instead of a second ``SELECT ... IN`` over the same
        rows (``benchmarks/crawl_write.py``). Elsewhere :func:`insert_values`, then the
        ``SELECT``.
        """
        if not increments:
            return {}
        conn = self.session.connection()
        if not conn.dialect.insert_returning:
            insert_values(
                self.session, _LC_INSERT, [(self.site, h, n) for h, n in increments], _LC_ADD
            )
            return self._counts([h for h, _ in increments])
        mark = "%s" if conn.dialect.name == "postgresql" else "?"
        LC: dict[str, int] = {}
        per = MAX_PARAMS // 3
        for start in range(0, len(increments), per):
            chunk = increments[start : start + per]
            values = ", ".join([f"({mark}, {mark}, {mark})"] * len(chunk))
            params = tuple(v for h, n in chunk for v in (self.site, h, n))
            rows = conn.exec_driver_sql(f"{_LC_INSERT} VALUES {values} {_LC_RETURNING}", params)
            LC.update(rows.all())
        return LC

    def _counts(self, md5s: Sequence[str]) -> dict[str, int]:
        """``LC`` of each of ``md5s`` the table holds (one driver-level ``SELECT ... IN`` per
        chunk: SQLAlchemy's expanding ``IN`` compiles every value anew, ``storage.db``)."""
        if not md5s:
            return {}
        conn = self.session.connection()
        mark = "%s" if conn.dialect.name == "postgresql" else "?"
        LC: dict[str, int] = {}
        for chunk in chunked(md5s):
            marks = ", ".join([mark] * len(chunk))
            sql = f"{_LC_SELECT} WHERE site = {mark} AND md5 IN ({marks})"
            LC.update(conn.exec_driver_sql(sql, (self.site, *chunk)).all())
        return LC

    def apply(self, text: str) -> CleanResult:
        """Filter one page with the table as it stands, without learning from it.

        For pages that must not be counted (our addition to Li & Jiang 2012 §2.2: exact
        duplicate pages are skipped before counting): a page whose exact text is
        already stored would otherwise count its lines twice, and mirrors of
        one article would erase each other.
        """
        if not split_lines(text):
            return CleanResult("", 0, 0, [])
        return self.clean_batch([(text, False)])[0]

    def prune(self) -> int:
        """§2.2 step 4: delete this site's records with ``LC <= RC / 100``; return how many."""
        RC = self._stats()[0]
        deleted = self.session.execute(
            delete(LINE_COUNTS).where(
                LINE_COUNTS.c.site == self.site,
                LINE_COUNTS.c.LC <= prune_threshold(RC),
            )
        ).rowcount
        self.session.execute(
            update(SITE_LINE_STATS)
            .where(SITE_LINE_STATS.c.site == self.site)
            .values({SITE_LINE_STATS.c.pruned_at_RC: RC})
        )
        logger.info("line table %s: pruned %s records at RC=%s", self.site, deleted, RC)
        return int(deleted)

    def snapshot(self) -> LineTable:
        """The site's state as a pure ``LineTable`` (for inspection, tests and re-cleaning)."""
        RC, pruned_at_RC = self._stats()
        rows = self.session.execute(
            select(LINE_COUNTS.c.md5, LINE_COUNTS.c.LC).where(LINE_COUNTS.c.site == self.site)
        )
        return LineTable(
            LC={r.md5: int(r.LC) for r in rows},
            RC=RC,
            L=self.L,
            prune_every=self.prune_every,
            pruned_at_RC=pruned_at_RC,
        )
