"""Each site's resumable ``JOBDIR`` in a nightly run: kept, resumed or discarded.

Each site crawls with ``JOBDIR = NIGHTLY_JOBDIR/<site>`` (``data/jobs/<site>``). Scrapy
writes a job's queue state (``requests.queue``, the pickled disk queues' sizes,
``active.json``) only when the spider closes, and the dupefilter's ``requests.seen``
through a write buffer. So after a clean stop (SIGTERM/SIGINT, ``finish_reason =
shutdown``) the job directory is exact and the next start within ``NIGHTLY_RESUME_HOURS``
resumes it; after SIGKILL or a power loss it is not (the queue is lost while
``requests.seen`` may already list the start pages, so a resume would find nothing), and
it is discarded: the site restarts from its start pages and feeds, and the database check
skips every article already stored. Pages stored in a batch that was not committed are
fetched again; nothing is stored twice (the upsert is by URL). A marker file
(:data:`MARKER`) in the job directory tells the cases apart. After a complete crawl the
job directory is removed, so the next night starts afresh.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .report import INTERRUPTED

__all__ = ["MARKER", "JobDir", "finish_jobdir", "prepare_jobdir"]

logger = logging.getLogger(__name__)

#: The job directory's marker: what state the nightly left it in.
MARKER = "nightly.json"


@dataclass(frozen=True, slots=True)
class JobDir:
    """A site's ``JOBDIR`` as prepared for a run; ``note`` says what happened to old state."""

    path: Path
    resumed: bool
    note: str = ""


def _read_marker(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / MARKER).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_marker(path: Path, data: dict[str, Any]) -> None:
    """Replace the marker atomically, so a kill mid-write leaves the old one, not half."""
    tmp = path / (MARKER + ".tmp")
    tmp.write_text(json.dumps(data), "utf-8")
    os.replace(tmp, path / MARKER)


def prepare_jobdir(path: Path, *, now: datetime, max_age: timedelta) -> JobDir:
    """Keep ``path`` for a resume or empty it, then mark it ``running``.

    Resumed only when the marker says the last run stopped cleanly (``interrupted``)
    no longer than ``max_age`` ago. A ``running`` marker means that process died (the
    caller holds the lock, so no live process owns it), and Scrapy's state after a kill
    is not trustworthy (module docstring); no marker means the directory is not ours.
    Either way, and when it is too old, the state is discarded.
    """
    note = ""
    resumed = False
    if path.exists():
        marker = _read_marker(path)
        status = (marker or {}).get("status")
        stopped = _parse_time((marker or {}).get("stopped_at"))
        if status == "interrupted" and stopped and now - stopped <= max_age:
            resumed = True
            note = f"resumed the crawl stopped at {stopped:%Y-%m-%d %H:%M:%S %Z}"
        elif status == "interrupted":
            note = f"job state from {stopped or '(unknown)'} is older than {max_age}: discarded"
        elif status == "running":
            note = (
                f"the previous run (pid {(marker or {}).get('pid', '?')}) was killed "
                "mid-crawl: its job state was discarded, stored articles are skipped"
            )
        else:
            note = f"{path} was not left by a nightly run: discarded"
        if not resumed:
            shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    _write_marker(path, {"status": "running", "pid": os.getpid(), "started_at": now.isoformat()})
    return JobDir(path, resumed, note)


def finish_jobdir(job: JobDir, outcome: str, *, now: datetime) -> None:
    """Keep an interrupted crawl's job directory for the next start; remove any other."""
    if outcome == INTERRUPTED:
        _write_marker(job.path, {"status": "interrupted", "stopped_at": now.isoformat()})
        return
    try:
        shutil.rmtree(job.path)
    except OSError as exc:
        # The marker still says "running", so the next start discards it anyway.
        logger.warning("could not remove the job directory %s: %s", job.path, exc)


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)
