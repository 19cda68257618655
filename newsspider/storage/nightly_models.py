"""Tables of ``scrapy nightly`` (issue 5 item 1): one row per nightly run, one per site crawl.

``crawl_runs`` (``models.py``, written by ``CorpusPipeline``) already holds what every
crawl has: start, end, pages, new, updated, dropped with reasons, errors, a report. A
nightly run needs a few figures more, kept here instead of as new ``crawl_runs`` columns
so ``models.py`` stays as it is:

- ``nightly_runs``: the run as a whole (host and PID, which sites, status, exit code,
  the printed report), so a morning reader finds last night's report in the database.
- ``nightly_site_runs``: per site, the link to its ``crawl_runs`` row and what only the
  nightly command sees: how the crawl ended (``finish_reason``, ``outcome``), whether
  it resumed a job directory, requests made and skipped as already stored, and the
  median body length of the articles it stored. The median is measured at run time
  from the items themselves, because recomputing it later from ``articles`` would drift
  as re-crawls and ``reclean`` rewrite rows; the health checks compare it across runs.

A site that failed before its ``crawl_runs`` row existed (a bad spider argument, an
unreachable database) still gets a ``nightly_site_runs`` row, with ``crawl_run_id``
NULL, so the failure is on record.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow

__all__ = ["NightlyRun", "NightlySiteRun"]


class NightlyRun(Base):
    """One ``scrapy nightly`` invocation that got past the lock.

    ``status``: ``running`` while it runs, then ``finished`` (exit status 0),
    ``failed`` (non-zero), or ``killed`` when a later run on the same host found it
    still ``running`` (the process died without finishing its row).
    """

    __tablename__ = "nightly_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    host: Mapped[str] = mapped_column(String(255), index=True)
    pid: Mapped[int] = mapped_column(Integer)
    sites: Mapped[str] = mapped_column(Text)  # comma-separated site keys
    status: Mapped[str] = mapped_column(String(32), default="running")
    exit_code: Mapped[int | None] = mapped_column(Integer)
    report: Mapped[str | None] = mapped_column(Text)


class NightlySiteRun(Base):
    """One site's crawl inside a nightly run: the figures ``crawl_runs`` lacks.

    ``outcome``: ``ok``, ``failed`` (the exit status is non-zero) or ``interrupted``
    (stopped by SIGTERM/SIGINT; its job directory is kept for the next start), NULL
    while running. ``pages_ok`` counts 2xx responses other than robots.txt;
    ``median_body_chars`` is over the ``raw_text`` of the items stored, NULL when none.
    """

    __tablename__ = "nightly_site_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    nightly_run_id: Mapped[int] = mapped_column(ForeignKey("nightly_runs.id"), index=True)
    crawl_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("crawl_runs.id"), unique=True, index=True
    )
    site: Mapped[str] = mapped_column(String(64), index=True)
    outcome: Mapped[str | None] = mapped_column(String(32))
    finish_reason: Mapped[str | None] = mapped_column(String(64))
    resumed: Mapped[bool] = mapped_column(Boolean, default=False)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    pages_ok: Mapped[int] = mapped_column(Integer, default=0)
    skipped_stored: Mapped[int] = mapped_column(Integer, default=0)
    bodies: Mapped[int] = mapped_column(Integer, default=0)
    median_body_chars: Mapped[int | None] = mapped_column(Integer)
    note: Mapped[str | None] = mapped_column(Text)
