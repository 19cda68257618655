"""The stored coverage figures as ``scrapy corpus stats`` and the dashboard show them.

Every site with articles is shown, and a site with no ``coverage_days`` row (it lists
nothing, or was never compared) says :data:`~.compare.UNKNOWN`, never 100 %.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from newsspider.storage import Engine
from newsspider.storage.coverage import CoverageRow, latest_coverage_of

from .compare import UNKNOWN, share_text

__all__ = ["coverage_table", "dashboard_coverage", "row_json", "site_coverage"]

HEADER = ("site", "day", "listed", "stored", "missing", "filled", "coverage")


def site_coverage(
    engine: Engine, days: int, sites: Iterable[str], only: str | None = None
) -> dict[str, list[CoverageRow]]:
    """Each site's ``days`` newest stored days (newest first); ``sites`` (those with
    articles) are listed even without a row; ``only``: that site alone."""
    stored = latest_coverage_of(engine, days)
    keys = [only] if only is not None else sorted(set(sites) | set(stored))
    return {k: stored.get(k, []) for k in keys}


def row_json(row: CoverageRow) -> dict[str, Any]:
    """A stored day as JSON: its figures and ``share`` (None: unknown)."""
    share = row.share
    return {
        "day": row.day,
        "listed": row.listed,
        "stored": row.stored,
        "missing": row.missing,
        "filled": row.filled,
        "share": None if share is None else round(share, 4),
    }


def coverage_table(coverage: Mapping[str, Sequence[CoverageRow]]) -> list[str]:
    """A title line and a table: a row per site and stored day, ``coverage unknown`` for a
    site without one."""
    rows: list[tuple[str, ...]] = []
    for site, found in coverage.items():
        if not found:
            rows.append((site, "-", "-", "-", "-", "-", UNKNOWN))
        for r in found:
            figures = (r.listed, r.stored, r.missing, r.filled)
            rows.append((site, r.day, *map(str, figures), share_text(r.share)))
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [HEADER, *rows]
    ]
    title = (
        "coverage (article URLs the site's news sitemaps and feeds list per local day, "
        "(stored + filled) / listed; newsspider/coverage):"
    )
    return [title, *lines]


def dashboard_coverage(
    rows: Iterable[CoverageRow], day_list: Sequence[str], sites: Iterable[str]
) -> dict[str, Any]:
    """The dashboard's coverage: per site a percentage per day of ``day_list`` (None where
    no row or nothing listed: the chart leaves a gap, never 100 %), and per site its newest
    day's figures, ``share`` None and ``text`` "coverage unknown" for a site without one."""
    by_site: dict[str, dict[str, CoverageRow]] = {}
    for r in rows:
        by_site.setdefault(r.site, {})[r.day] = r
    per_day: dict[str, list[float | None]] = {}
    for site, days in sorted(by_site.items()):
        series = [days[d].share if d in days else None for d in day_list]
        per_day[site] = [None if v is None else round(v * 100, 1) for v in series]
    latest: dict[str, dict[str, Any]] = {}
    for site in sorted(set(sites) | set(by_site)):
        days = by_site.get(site, {})
        if not days:
            latest[site] = {"day": None, "share": None, "text": UNKNOWN}
            continue
        newest = days[max(days)]
        latest[site] = row_json(newest) | {"text": share_text(newest.share)}
    return {"coverage_per_day": per_day, "coverage_latest": latest}
