"""``scrapy nightly``: every site, incrementally, one run at a time, with a report (issue 5).

::

    scrapy nightly                                 # every site of the table
    scrapy nightly --sites netease,sina            # some of them
    scrapy nightly -a limit=200 -s DATABASE_URL=postgresql+psycopg://news@db/news

What one run does, in this order:

1. **Lock.** ``flock`` on ``NIGHTLY_LOCK`` (``data/nightly.lock``), which then holds the
   PID. The kernel drops a ``flock`` when its process dies, however it dies, so a stale
   lock cannot exist; the file stays behind (deleting it would race with a starter
   that has it open) and only says who held it last. A second start exits at once
   with a message naming the holder and status 75 (``EX_TEMPFAIL``: "try again
   later", so cron and systemd can tell it from a failed crawl).
2. **Crawl every site concurrently**, one ``Crawler`` per site in one
   ``CrawlerProcess``. Each site is held to ``DOWNLOAD_DELAY`` per domain anyway, so a
   crawl mostly waits; run side by side, a night lasts as long as the slowest site
   instead of the sum of all of them, and no site gets more load than in a crawl of its
   own. The sites share one engine (one SQLite writer at a time, ``NEWS_DB_BUSY_TIMEOUT``
   for the others; short transactions of ``NEWS_DB_BATCH`` articles). One site that
   fails does not stop the others.
3. **Incremental**: ``INCREMENTAL`` is on (``newsspider.incremental.StoredUrlFilter``),
   so an article URL already in ``articles`` is never downloaded again; ``-s
   INCREMENTAL=False`` refreshes everything instead.
4. **Resumable**: each site crawls with ``JOBDIR = NIGHTLY_JOBDIR/<site>``
   (``data/jobs/<site>``). Scrapy writes a job's queue state (``requests.queue``, the
   pickled disk queues' sizes, ``active.json``) only when the spider closes, and the
   dupefilter's ``requests.seen`` through a write buffer. So after a clean stop
   (SIGTERM/SIGINT, ``finish_reason = shutdown``) the job directory is exact and the
   next start within ``NIGHTLY_RESUME_HOURS`` (12) resumes it; after SIGKILL or a
   power loss it is not (the queue is lost while ``requests.seen`` may already list
   the start pages, so a resume would find nothing), and it is discarded: the site
   restarts from its start pages and feeds, and the database check skips every
   article already stored. Pages stored in a batch that was not committed are fetched
   again; nothing is stored twice (the upsert is by URL). A marker file
   (``nightly.json``) in the job directory tells the cases apart. After a complete
   crawl the job directory is removed, so the next night starts afresh.
5. **Record**: ``CorpusPipeline`` writes each site's ``crawl_runs`` row; this command
   adds ``nightly_runs`` (the run) and ``nightly_site_runs`` (per site: outcome,
   requests, skipped, median body length; ``storage/nightly_models.py``).
6. **Re-clean** (``newsspider.storage.reclean``) every site whose crawl ended ``ok``
   and whose line table grew by ``RECLEAN_GROWTH`` (2.0; 0 turns it off) since its
   last re-clean.
7. **Report**: printed, kept in ``nightly_runs.report`` and each site's part in its
   ``crawl_runs.report``, with a WARNING line for each site figure outside its recent
   range (``newsspider/runreport.py``), and per site what failed on the way: requests
   that got no page after their retries, by reason (``http_404``, ``timeout``,
   ``connection_lost``…; ``crawl_runs.fetch_failures``/``fetch_failure_reasons``),
   downloads retried (``retries``) and write batches that waited for the database
   (``db_retries``). A crawl closed because the database stayed unavailable
   (``database_unavailable``) counts as a failed site.

Exit status: 0; 1 when a site failed entirely (the crawl raised, storing failed, or no
page came back 2xx) or a re-clean failed; 75 when another run holds the lock; 2 on a
usage error. ``-a NAME=VALUE`` goes to every site's spider, ``-s`` to every crawler.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import socket
import statistics
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, Self

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.conf import arglist_to_dict, closest_scrapy_cfg
from sqlalchemy.orm import Session
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from newsspider import runreport
from newsspider.incremental import PRIORITY, SKIPPED_STAT, StoredUrlFilter
from newsspider.pipelines import CorpusPipeline
from newsspider.sites import SITES
from newsspider.storage import engine_for, resolve_database_url
from newsspider.storage import runs as runstore
from newsspider.storage.db import DEFAULT_BUSY_TIMEOUT

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from sqlalchemy import Engine

__all__ = [
    "EXIT_LOCKED",
    "Command",
    "JobDir",
    "LockHeld",
    "RunLock",
    "finish_jobdir",
    "prepare_jobdir",
]

logger = logging.getLogger(__name__)

#: sysexits.h EX_TEMPFAIL: another run holds the lock; not a failure, try later.
EXIT_LOCKED = 75
DEFAULT_LOCK = "data/nightly.lock"
DEFAULT_JOBDIR = "data/jobs"
DEFAULT_RESUME_HOURS = 12.0
DEFAULT_RECLEAN_GROWTH = 2.0
#: The job directory's marker: what state the nightly left it in.
MARKER = "nightly.json"


# -- the lock -------------------------------------------------------------------------------


class LockHeld(Exception):
    """Another process holds the nightly lock."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(f"another nightly run is in progress ({who} holds {path})")


class RunLock:
    """An exclusive, non-blocking ``flock`` on a file that records the holder's PID.

    Released by :meth:`release` or by the kernel when the process exits or is killed,
    so it never goes stale. Linux and the BSDs; ``fcntl`` is imported when the lock is
    taken, so the other commands still load where it does not exist.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockHeld` at once (never waits)."""
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise LockHeld(self.path, int(text) if text.isdigit() else None) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases the ``flock``)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# -- job directories ----------------------------------------------------------------------


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
    if outcome == runreport.INTERRUPTED:
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


# -- one site's crawl ---------------------------------------------------------------------


@dataclass(eq=False)
class SiteCrawl:
    """One site's crawler in a nightly run and what its signals reported.

    The signal receivers are bound methods of this object, which the command keeps
    alive: Scrapy's dispatcher holds receivers weakly, so a ``partial`` would vanish.
    """

    site: str
    crawler: Crawler
    job: JobDir | None
    engine: Engine
    nightly_run_id: int
    crawl_run_id: int | None = None
    site_run_id: int | None = None
    error: str | None = None
    body_lengths: list[int] = field(default_factory=list)

    def connect(self) -> None:
        self.crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        self.crawler.signals.connect(self.item_scraped, signal=signals.item_scraped)

    def spider_opened(self, spider: Spider) -> None:
        """Link the ``crawl_runs`` row the pipeline just opened to this nightly run.

        Done now, not at the end, so a run killed mid-crawl leaves its rows linked and
        the next run can mark them ``killed``.
        """
        pipeline = self.crawler.get_item_pipeline(CorpusPipeline)
        self.crawl_run_id = pipeline.run_id if pipeline is not None else None
        with Session(self.engine) as session, session.begin():
            self.site_run_id = runstore.link_site_run(
                session,
                nightly_run_id=self.nightly_run_id,
                site=self.site,
                crawl_run_id=self.crawl_run_id,
            )

    def item_scraped(self, item: Any) -> None:
        """Measure the body of every stored article, for the median body length."""
        raw = ItemAdapter(item).get("raw_text")
        if isinstance(raw, str):
            self.body_lengths.append(len(raw))

    def watch(self, result: object) -> None:
        """Record how the crawl's task (AsyncCrawlerProcess) or Deferred ended."""
        if isinstance(result, Deferred):
            result.addErrback(self._failed_deferred)
        elif isinstance(result, asyncio.Future):
            result.add_done_callback(self._task_done)

    def _failed_deferred(self, failure: Failure) -> None:
        self.error = f"{failure.type.__name__}: {failure.getErrorMessage()}"
        logger.error(
            "%s: crawl failed: %s",
            self.site,
            self.error,
            exc_info=(failure.type, failure.value, failure.getTracebackObject()),
        )

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            self.error = "cancelled"
            return
        exc = task.exception()  # retrieved here, so asyncio does not log it a second time
        if exc is not None:
            self.error = f"{type(exc).__name__}: {exc}"
            logger.error("%s: crawl failed: %s", self.site, self.error, exc_info=exc)

    def stats(self) -> dict[str, Any]:
        """The crawler's final stats; empty when the crawl failed before it had any."""
        collector = getattr(self.crawler, "_stats", None)  # unset before the crawl starts
        return dict(collector.get_stats()) if collector is not None else {}


# -- the command ----------------------------------------------------------------------------


class Command(ScrapyCommand):
    """``scrapy nightly``; see the module docstring.

    Not a ``BaseRunSpiderCommand``: its ``-o``/``-O`` feed options would make every
    site's crawler write the same file at once.
    """

    requires_project = True
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return "[--sites KEY,KEY] [-a NAME=VALUE] [-s NAME=VALUE]"

    def short_desc(self) -> str:
        return "Crawl every site incrementally (one run at a time) and report"

    def long_desc(self) -> str:
        return (
            "Crawl every site of the table in one process: article URLs already stored "
            "are not downloaded again, a stopped run resumes, a second start exits with "
            "status 75 while one runs. Prints a run report (kept in nightly_runs) with a "
            "WARNING for each site figure outside its recent range; exit status 1 when a "
            "site failed entirely."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "-a",
            dest="spargs",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="set a spider argument of every site's spider (may be repeated)",
        )
        parser.add_argument(
            "--sites",
            metavar="KEY,KEY",
            default=None,
            help="crawl only these sites (default: every site of newsspider/sites.py)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        try:
            opts.spargs = arglist_to_dict(opts.spargs)
        except ValueError:
            raise UsageError("Invalid -a value, use -a NAME=VALUE", print_help=False) from None

    # -- helpers ----------------------------------------------------------------------------

    def _project_dir(self) -> Path:
        cfg = closest_scrapy_cfg()
        return Path(cfg).resolve().parent if cfg else Path.cwd()

    def _path(self, value: str) -> Path:
        """A path setting: relative paths are relative to the project (scrapy.cfg's folder)."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else self._project_dir() / path

    def _sites(self, option: str | None) -> list[str]:
        assert self.crawler_process is not None
        known = set(self.crawler_process.spider_loader.list())
        if option is None:
            return [key for key in SITES if key in known]
        wanted = list(dict.fromkeys(k.strip() for k in option.split(",") if k.strip()))
        unknown = [k for k in wanted if k not in known or k not in SITES]
        if unknown or not wanted:
            raise UsageError(
                f"unknown site(s) {', '.join(unknown) or '(none given)'}; "
                f"known: {', '.join(k for k in SITES if k in known)}",
                print_help=False,
            )
        return wanted

    def _enable_incremental(self) -> None:
        """INCREMENTAL on unless given on the command line; the middleware in the chain.

        Set at ``cmdline`` priority: a command's ``default_settings`` rank below the
        project's ``settings.py``, which keeps it off for plain crawls.
        """
        s = self.settings
        if (s.getpriority("INCREMENTAL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
            s.set("INCREMENTAL", True, priority="cmdline")
        s.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", StoredUrlFilter, PRIORITY)
        if s.get("JOBDIR"):
            logger.warning(
                "JOBDIR=%s is ignored: nightly gives each site its own under NIGHTLY_JOBDIR",
                s.get("JOBDIR"),
            )

    def _reclean_growth(self) -> float:
        growth = self.settings.getfloat("RECLEAN_GROWTH", DEFAULT_RECLEAN_GROWTH)
        if 0 < growth < 1:
            raise UsageError(
                f"RECLEAN_GROWTH must be 0 (off) or at least 1, not {growth}", print_help=False
            )
        return growth

    def _policy(self) -> runreport.HealthPolicy:
        return runreport.HealthPolicy(
            window=self.settings.getint("NIGHTLY_HEALTH_RUNS", 7),
            k=self.settings.getfloat("NIGHTLY_HEALTH_K", 3.0),
        )

    # -- run --------------------------------------------------------------------------------

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args:
            raise UsageError("nightly takes no positional arguments; use --sites", print_help=False)
        sites = self._sites(opts.sites)
        growth = self._reclean_growth()
        lock = RunLock(self._path(self.settings.get("NIGHTLY_LOCK") or DEFAULT_LOCK))
        try:
            lock.acquire()
        except LockHeld as exc:
            _say(f"scrapy nightly: {exc}; not started", sys.stderr)
            self.exitcode = EXIT_LOCKED
            return
        try:
            self.exitcode = self._run_locked(sites, opts.spargs, growth)
        finally:
            lock.release()

    def _run_locked(self, sites: list[str], spargs: dict[str, str], growth: float) -> int:
        assert self.crawler_process is not None
        s = self.settings
        self._enable_incremental()
        engine = engine_for(
            resolve_database_url(s.get("DATABASE_URL")),
            busy_timeout=s.getfloat("NEWS_DB_BUSY_TIMEOUT", DEFAULT_BUSY_TIMEOUT),
        )
        runstore.ensure_schema(engine)
        host = socket.gethostname()
        with Session(engine) as session, session.begin():
            killed = runstore.mark_killed_runs(session, host)
            nightly_id = runstore.start_nightly_run(
                session, host=host, pid=os.getpid(), sites=sites
            )
        if killed:
            logger.warning(
                "nightly runs %s on %s never finished (killed?): marked killed", killed, host
            )
        logger.info("nightly run %s: %s", nightly_id, ", ".join(sites))
        try:
            return self._crawl_and_report(engine, sites, spargs, growth, nightly_id, host)
        except BaseException as exc:
            _abort(engine, nightly_id, exc)
            raise

    def _crawl_and_report(
        self,
        engine: Engine,
        sites: list[str],
        spargs: dict[str, str],
        growth: float,
        nightly_id: int,
        host: str,
    ) -> int:
        """Crawl, settle each site, re-clean, report; return the exit status."""
        assert self.crawler_process is not None
        s = self.settings
        started_at = datetime.now(UTC)

        jobs_setting = s.get("NIGHTLY_JOBDIR", DEFAULT_JOBDIR)  # "" turns JOBDIR off
        jobs_root = self._path(jobs_setting) if jobs_setting else None
        max_age = timedelta(hours=s.getfloat("NIGHTLY_RESUME_HOURS", DEFAULT_RESUME_HOURS))
        crawls: list[SiteCrawl] = []
        for site in sites:
            crawler = self.crawler_process.create_crawler(site)
            job = None
            if jobs_root is not None:
                job = prepare_jobdir(jobs_root / site, now=started_at, max_age=max_age)
                if job.note:  # a resume is news; discarded state is worth a look
                    level = logging.INFO if job.resumed else logging.WARNING
                    logger.log(level, "%s: %s", site, job.note)
                crawler.settings.set("JOBDIR", str(job.path), priority="cmdline")
            crawl = SiteCrawl(site, crawler, job, engine, nightly_id)
            crawl.connect()
            crawl.watch(self.crawler_process.crawl(crawler, **spargs))
            crawls.append(crawl)
        self.crawler_process.start()

        finished = datetime.now(UTC)
        outcomes = {c.site: self._finish_site(c, now=finished) for c in crawls}
        ok_sites = [site for site, outcome in outcomes.items() if outcome == runreport.OK]
        extra, reclean_failures = self._reclean(engine, ok_sites, growth)
        return self._report(engine, crawls, nightly_id, host, started_at, extra, reclean_failures)

    def _finish_site(self, crawl: SiteCrawl, *, now: datetime) -> str:
        """Classify a finished crawl, store its figures, settle its job directory."""
        stats = crawl.stats()
        pages_ok = runreport.pages_ok_from_stats(stats)
        resumed = bool(crawl.job and crawl.job.resumed)
        with Session(crawl.engine) as session, session.begin():
            status = None
            if crawl.crawl_run_id is not None:
                status = runstore.site_run_status(session, crawl.crawl_run_id)
            outcome, note = runreport.classify(
                error=crawl.error,
                finish_reason=stats.get("finish_reason"),
                crawl_status=status,
                pages_ok=pages_ok,
                resumed=resumed,
            )
            notes = [n for n in (note, crawl.job.note if crawl.job else "") if n]
            lengths = crawl.body_lengths
            crawl.site_run_id = runstore.finish_site_run(
                session,
                crawl.site_run_id,
                nightly_run_id=crawl.nightly_run_id,
                site=crawl.site,
                crawl_run_id=crawl.crawl_run_id,
                outcome=outcome,
                finish_reason=stats.get("finish_reason"),
                resumed=resumed,
                requests=int(stats.get("downloader/request_count", 0)),
                pages_ok=pages_ok,
                skipped_stored=int(stats.get(SKIPPED_STAT, 0)),
                bodies=len(lengths),
                median_body_chars=round(statistics.median(lengths)) if lengths else None,
                note="; ".join(notes) or None,
            )
        if crawl.job is not None:
            finish_jobdir(crawl.job, outcome, now=now)
        return outcome

    def _reclean(self, engine: Engine, sites: list[str], growth: float) -> tuple[list[str], int]:
        """Re-clean the sites whose line table grew enough; report lines and failures.

        ``newsspider.storage.reclean`` is imported here, lazily, so nightly works (and
        says so) where it is not installed yet.
        """
        if growth <= 0:
            return ["reclean: off (RECLEAN_GROWTH = 0)"], 0
        try:
            from newsspider.storage.reclean import reclean, reclean_due
        except ImportError as exc:
            logger.info("re-cleaning skipped: newsspider.storage.reclean unavailable (%s)", exc)
            return [f"reclean: skipped, newsspider.storage.reclean unavailable ({exc})"], 0
        L = self.settings.getint("LINEHASH_L", 50)
        lines: list[str] = []
        failures = 0
        for site in sites:
            try:
                # reclean() commits per batch itself: a plain session, no begin() block.
                with Session(engine) as session:
                    if not reclean_due(session, site, growth):
                        continue
                    reports = reclean(session, site, L=L)
            except Exception:
                # Any failure here (database, a bug) must not cost the crawl report: it is
                # logged with its traceback, named in the report, and makes the exit status 1.
                logger.exception("reclean of %s failed", site)
                failures += 1
                lines.append(f"reclean: {site} FAILED (see the log)")
                continue
            for key, report in reports.items():
                figures = report.as_dict() if hasattr(report, "as_dict") else {"result": report}
                lines.append(
                    f"reclean: {key}: " + ", ".join(f"{k} {v}" for k, v in figures.items())
                )
        if not lines:
            lines.append(f"reclean: no site due (RECLEAN_GROWTH = {growth:g})")
        return lines, failures

    def _report(
        self,
        engine: Engine,
        crawls: list[SiteCrawl],
        nightly_id: int,
        host: str,
        started_at: datetime,
        extra: list[str],
        other_failures: int,
    ) -> int:
        """Build, store, log and print the report; return the exit status."""
        policy = self._policy()
        with Session(engine) as session:
            site_runs = [runstore.site_run(session, c.site_run_id) for c in crawls if c.site_run_id]
            history = {
                r.site: runstore.recent_site_runs(
                    session, r.site, exclude_nightly_run_id=nightly_id, limit=policy.window
                )
                for r in site_runs
            }
        warnings = {r.site: runreport.check_health(r, history[r.site], policy) for r in site_runs}
        sizes = {site: runreport.history_size(h, policy) for site, h in history.items()}
        exit_code = runreport.exit_status(site_runs, other_failures=other_failures)
        report = runreport.nightly_report(
            site_runs,
            warnings,
            nightly_run_id=nightly_id,
            host=host,
            started_at=started_at,
            finished_at=datetime.now(UTC),
            exit_code=exit_code,
            history_runs=sizes,
            policy=policy,
            extra=extra,
        )
        with Session(engine) as session, session.begin():
            for r in site_runs:
                if r.crawl_run_id is not None:
                    text = runreport.site_report(
                        r,
                        warnings[r.site],
                        history_runs=sizes[r.site],
                        policy=policy,
                        nightly_run_id=nightly_id,
                    )
                    runstore.save_site_report(session, r.crawl_run_id, text)
            runstore.finish_nightly_run(session, nightly_id, exit_code=exit_code, report=report)
        for site_warnings in warnings.values():
            for w in site_warnings:
                logger.warning("health: %s", w.message)
        for r in site_runs:
            if r.outcome == runreport.FAILED:
                logger.error("%s failed: %s", r.site, r.note)
        _say(report, sys.stdout)
        return exit_code


def _abort(engine: Engine, nightly_id: int, exc: BaseException) -> None:
    """Close the run's row as failed when the command itself breaks, then let it raise.

    Best effort: when the database is what broke, the row stays ``running`` and the next
    run on this host marks it ``killed``.
    """
    try:
        with Session(engine) as session, session.begin():
            runstore.finish_nightly_run(
                session,
                nightly_id,
                exit_code=1,
                report=f"nightly run {nightly_id} aborted: {type(exc).__name__}: {exc}",
            )
    except Exception:
        logger.exception("could not record the end of nightly run %s", nightly_id)


def _say(text: str, stream: IO[str]) -> None:
    """Commands are the only code that prints (STYLE.md)."""
    print(text, file=stream, flush=True)
