"""Every page a nightly run fetches, kept in WARC for a later ``scrapy reextract``.

:class:`NightlyWarcRecorder` is the project's WARC recorder
(:class:`newsspider.replay.WarcRecorderExtension`) writing each site's responses to
``NIGHTLY_WARC_DIR/<site>/<YYYY-MM-DD>.warc.gz`` (the UTC date the site's crawl opened).
A second run on the same day appends to that file, after cutting off a tail torn by a
killed run, so a day's archive is always readable whole. The run enables it
(:func:`enable_recording`) unless ``NIGHTLY_WARC_DIR`` is empty, and first deletes the
archives older than ``NIGHTLY_WARC_KEEP_DAYS`` days (:func:`prune_archives`; 0 keeps them
all). Archives are gzip per record, so ``scrapy reextract`` and ``REPLAY_ARCHIVE`` read
them as they are.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Self

from scrapy import signals
from scrapy.exceptions import NotConfigured

from newsspider.replay import WarcRecorderExtension

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import Settings

__all__ = ["NightlyWarcRecorder", "archive_path", "enable_recording", "prune_archives"]

logger = logging.getLogger(__name__)

#: Order among EXTENSIONS (any: it only listens to signals).
PRIORITY = 0
_DAY_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.warc\.gz$")


def archive_path(root: Path, site: str, day: date) -> Path:
    """Where the pages of ``site`` fetched on ``day`` are kept."""
    return Path(root) / site / f"{day.isoformat()}.warc.gz"


class NightlyWarcRecorder(WarcRecorderExtension):
    """The WARC recorder of a nightly site crawl, appending to the day's archive."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        root = crawler.settings.get("NIGHTLY_WARC_DIR")
        if not root:
            raise NotConfigured
        site = crawler.spidercls.name
        path = archive_path(Path(root), site, datetime.now(UTC).date())
        ext = cls(path, crawler.stats, append=True)
        crawler.signals.connect(ext.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext


def prune_archives(root: Path, keep_days: int, *, today: date) -> list[Path]:
    """Delete ``<root>/<site>/<date>.warc.gz`` older than ``keep_days`` days before ``today``
    (0: none); return what was deleted. Other files are never touched."""
    if keep_days <= 0 or not Path(root).is_dir():
        return []
    oldest = today - timedelta(days=keep_days)
    deleted = []
    for path in sorted(Path(root).glob("*/*.warc.gz")):
        m = _DAY_FILE.match(path.name)
        if m is None:
            continue
        try:
            day = date.fromisoformat(m.group(1))
        except ValueError:
            continue
        if day < oldest:
            path.unlink()
            deleted.append(path)
    if deleted:
        logger.info("NIGHTLY_WARC_KEEP_DAYS=%s: deleted %s archives", keep_days, len(deleted))
    return deleted


def enable_recording(settings: Settings, root: Path | None, *, today: date) -> None:
    """Record every site of the run under ``root`` (absolute; None: recording off), after
    pruning what ``NIGHTLY_WARC_KEEP_DAYS`` no longer keeps."""
    if root is None:
        return
    settings.set("NIGHTLY_WARC_DIR", str(root), priority="cmdline")
    settings.set_in_component_priority_dict("EXTENSIONS", NightlyWarcRecorder, PRIORITY)
    prune_archives(root, settings.getint("NIGHTLY_WARC_KEEP_DAYS"), today=today)
