"""Progress on long work: a tqdm bar on a terminal, clean logs everywhere else.

Two things live here, and nothing else in the package draws on the terminal:

- :func:`progress_bar`, the one helper every command uses around a long loop: a tqdm bar
  on stderr with the count, the rate and the ETA, shown only when stderr is a terminal
  (tqdm's ``disable=None``). Redirected to a file or a pipe it writes nothing at all, so a
  log holds no bar and no control characters. The loops themselves (in
  :mod:`newsspider.evaluation`, :mod:`newsspider.storage`, :mod:`newsspider.replay`,
  :mod:`newsspider.training`) print nothing: they take an optional ``progress`` callable,
  called with the number of units just done, and a command passes the bar's ``update``.
  So extraction and storage never depend on tqdm.
- :class:`CrawlProgress`, a Scrapy extension (``EXTENSIONS`` in ``settings.py``) giving a
  crawl's live status: pages fetched and pages/s, articles stored (new and updated),
  items dropped and fetch failures. On a terminal that is a status line per spider,
  redrawn every second (``PROGRESS_BAR``); otherwise (cron, systemd, Scrapyd, ``LOG_FILE``)
  the same figures are an INFO log line every ``PROGRESS_LOG_INTERVAL`` seconds (the
  crawl's closing summary and stats say the last word). It replaces Scrapy's own once-a-minute "Crawled N pages" line
  (``LOGSTATS_INTERVAL = 0`` in ``settings.py``), whose figures it carries.

While a bar is on the screen, the console log handlers write each record with
``tqdm.write`` (:func:`logs_above_bars`), so a log line lands above the bars instead of
through them; they get their stream back when the last bar closes.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Self, TextIO

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector
from tqdm import tqdm
from twisted.internet.task import LoopingCall

__all__ = [
    "CrawlFigures",
    "CrawlProgress",
    "crawl_figures",
    "logs_above_bars",
    "progress_bar",
    "stderr_is_terminal",
]

logger = logging.getLogger(__name__)

#: Seconds between redraws of a crawl's status line (the log line has its own setting).
REFRESH_SECONDS = 1.0
#: Stats counted as fetch failures: ``newsspider/fetch_failed/<site>`` (NewsSpider._failed).
FETCH_FAILED_PREFIX = "newsspider/fetch_failed/"


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (where bars go), as tqdm's ``disable=None`` decides."""
    return bool(getattr(sys.stderr, "isatty", None) and sys.stderr.isatty())


# -- log records above the bars ----------------------------------------------------------


class _AboveBars:
    """A stream for a logging handler: each record written with ``tqdm.write``, which
    clears the bars, writes the line and draws the bars again below it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> None:
        tqdm.write(text, file=self.stream, end="")

    def flush(self) -> None:
        self.stream.flush()


class _ConsoleLogs:
    """Swaps the stream of the root logger's stderr handlers while any bar is open.

    Counted, because several crawlers of one process (``scrapy demo``, ``scrapy nightly``)
    each open a status line and close it in any order. The handlers keep their level,
    filters and formatter (Scrapy's ``LOG_LEVEL`` and format); only their stream changes.
    """

    def __init__(self) -> None:
        self.holders = 0
        self.swapped: list[tuple[logging.StreamHandler, TextIO]] = []

    def hold(self) -> None:
        if self.holders == 0:
            for handler in logging.root.handlers:
                if (
                    isinstance(handler, logging.StreamHandler)
                    and not isinstance(handler, logging.FileHandler)
                    and handler.stream is sys.stderr
                ):
                    old = handler.setStream(_AboveBars(sys.stderr))  # type: ignore[arg-type]
                    self.swapped.append((handler, old or sys.stderr))
        self.holders += 1

    def release(self) -> None:
        self.holders = max(self.holders - 1, 0)
        if self.holders == 0:
            for handler, stream in self.swapped:
                handler.setStream(stream)
            self.swapped.clear()


_CONSOLE_LOGS = _ConsoleLogs()


@contextmanager
def logs_above_bars() -> Iterator[None]:
    """Within the block, console log records are written above the open bars."""
    _CONSOLE_LOGS.hold()
    try:
        yield
    finally:
        _CONSOLE_LOGS.release()


# -- the commands' bar -------------------------------------------------------------------


@contextmanager
def progress_bar(
    total: int | None = None,
    *,
    desc: str | None = None,
    unit: str = "it",
    enabled: bool = True,
) -> Iterator[tqdm]:
    """A tqdm bar on stderr for a command's long loop: count, rate and ETA (with ``total``).

    Shown only when stderr is a terminal; otherwise, or with ``enabled=False`` (e.g. when
    the command's own output goes to the same terminal), the bar is disabled and its
    ``update`` does nothing, so callers need no second code path. Pass ``bar.update`` as
    the ``progress`` callable of the library function doing the loop. The bar is closed
    (its last state left on the screen) when the block ends.
    """
    bar = tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=None if enabled else True,
        dynamic_ncols=True,
    )
    with bar:
        if bar.disable:
            yield bar
        else:
            with logs_above_bars():
                yield bar


# -- the crawl's live status -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CrawlFigures:
    """A crawl's figures at one moment, from its stats."""

    pages: int  # responses received (``response_received_count``)
    stored: int  # articles written: ``newsspider/articles_new`` + ``articles_updated``
    dropped: int  # items dropped, every reason (``item_dropped_count``)
    failed: int  # fetch failures: the sum of ``newsspider/fetch_failed/<site>``

    def summary(self) -> str:
        """The figures besides pages, as the status line and the log line show them."""
        return (
            f"{self.stored} articles stored, {self.dropped} dropped, "
            f"{self.failed} fetch failures"
        )


def crawl_figures(stats: StatsCollector) -> CrawlFigures:
    """The status figures of a crawl's stats collector."""
    values: dict[str, Any] = stats.get_stats()
    return CrawlFigures(
        pages=int(values.get("response_received_count") or 0),
        stored=int(values.get("newsspider/articles_new") or 0)
        + int(values.get("newsspider/articles_updated") or 0),
        dropped=int(values.get("item_dropped_count") or 0),
        failed=sum(int(v) for k, v in values.items() if k.startswith(FETCH_FAILED_PREFIX)),
    )


class CrawlProgress:
    """A crawl's live status: a tqdm status line on a terminal, else an INFO log line.

    The status line (``PROGRESS_BAR``, and stderr a terminal) is redrawn every
    :data:`REFRESH_SECONDS` and closed at ``spider_closed``, its last figures left on the
    screen as a plain line. The log line comes every ``PROGRESS_LOG_INTERVAL`` seconds (0: never)
    when there is no status line or the log goes to ``LOG_FILE``; its pages/s are those of
    the last interval.
    """

    def __init__(self, crawler: Crawler, *, bar: bool, log_interval: float) -> None:
        self.crawler = crawler
        self.show_bar = bar
        self.log_interval = log_interval
        self.bar: tqdm | None = None
        self.tasks: list[LoopingCall] = []
        self.last_time = time.monotonic()
        self.last_pages = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Read ``PROGRESS_BAR``, ``PROGRESS_LOG_INTERVAL`` and ``LOG_FILE`` once, here."""
        s = crawler.settings
        bar = s.getbool("PROGRESS_BAR") and stderr_is_terminal()
        interval = s.getfloat("PROGRESS_LOG_INTERVAL")
        log_interval = interval if interval > 0 and (not bar or s.get("LOG_FILE")) else 0.0
        ext = cls(crawler, bar=bar, log_interval=log_interval)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def figures(self) -> CrawlFigures:
        """The crawl's figures now."""
        assert self.crawler.stats is not None
        return crawl_figures(self.crawler.stats)

    def spider_opened(self, spider: Spider) -> None:
        """Open the status line and start the redraw and log timers."""
        self.last_time = time.monotonic()
        self.last_pages = 0
        if self.show_bar:
            _CONSOLE_LOGS.hold()
            self.bar = tqdm(
                desc=spider.name, unit=" pages", file=sys.stderr, dynamic_ncols=True, leave=True
            )
            self._every(REFRESH_SECONDS, self.refresh)
        if self.log_interval:
            self._every(self.log_interval, self.log, spider, now=False)

    def _every(self, seconds: float, call: Any, *args: Any, now: bool = True) -> None:
        task = LoopingCall(call, *args)
        task.start(seconds, now=now).addErrback(
            lambda failure: logger.error("progress: %s", failure.getErrorMessage())
        )
        self.tasks.append(task)

    def refresh(self) -> None:
        """Redraw the status line with the current figures (pages/s is tqdm's rate)."""
        if self.bar is None:
            return
        now = self.figures()
        self.bar.set_postfix_str(now.summary(), refresh=False)
        if now.pages > self.bar.n:
            self.bar.update(now.pages - self.bar.n)
        self.bar.refresh()

    def log(self, spider: Spider) -> None:
        """Log the figures in one INFO line, pages/s over the last interval."""
        now, clock = self.figures(), time.monotonic()
        seconds, pages = clock - self.last_time, now.pages - self.last_pages
        self.last_time, self.last_pages = clock, now.pages
        rate = pages / seconds if seconds > 0 else 0.0
        logger.info(
            "%s: %d pages fetched (%.2f pages/s), %s",
            spider.name,
            now.pages,
            rate,
            now.summary(),
            extra={"spider": spider},
        )

    def spider_closed(self, spider: Spider, reason: str) -> None:
        """Stop the timers, draw the last figures and close the status line."""
        for task in self.tasks:
            if task.running:
                task.stop()
        self.tasks.clear()
        if self.bar is not None:
            self.refresh()
            final = str(self.bar)
            # Cleared, then its last state written above the bars still open: several
            # crawlers of one process each leave their line, in the order they finish.
            self.bar.leave = False
            self.bar.close()
            self.bar = None
            tqdm.write("\r" + final, file=sys.stderr)  # from column 0 whatever the clearing left
            _CONSOLE_LOGS.release()
