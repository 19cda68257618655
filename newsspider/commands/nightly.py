"""``scrapy nightly``: every site, incrementally, one run at a time, with a report.

::

    scrapy nightly                                 # every site of the table
    scrapy nightly --sites netease,sina            # some of them
    scrapy nightly -a limit=200 -s DATABASE_URL=postgresql+psycopg://news@db/news

The options and a call: the run itself (lock, concurrent crawls, job directories,
re-clean, report) is :func:`newsspider.nightly.run.run_nightly`, described there.

Exit status: the table of :mod:`newsspider.outcome`, the same as ``scrapy crawl``'s, for
the most severe failed site (0 ok, 1 a bug or a failed re-clean, 2 a user error found
before any site starts, 3 nothing fetched, 4 the database failed, 5 every article
dropped), and 75 when another run holds the lock. ``-a NAME=VALUE`` goes to every site's
spider, ``-s`` to every crawler.

With ``-s REDIS_URL=redis://...`` (cluster mode, docs/cluster.md) every ``scrapy nightly``
started against that Redis joins one run instead of taking the host's lock; the last
worker to finish prints the run's report (:mod:`newsspider.nightly.cluster`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, ClassVar

from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.conf import arglist_to_dict

from newsspider.cli import NewsCommand
from newsspider.cluster import check_redis, is_cluster
from newsspider.nightly.cluster import run_cluster_nightly
from newsspider.nightly.lock import EXIT_LOCKED, LockHeld
from newsspider.nightly.run import run_nightly
from newsspider.outcome import EXIT_STATUSES
from newsspider.preflight import check_crawl, check_spider
from newsspider.sites import SITES, nightly_sites


class Command(NewsCommand):
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
            "WARNING for each site figure outside its recent range. Exit status: "
            + "; ".join(f"{status} {meaning}" for status, meaning in EXIT_STATUSES)
            + "."
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
            help="crawl only these sites (default: NIGHTLY_SITES, else every enabled row: "
            "the built-in eight and the sites file's own; scrapy sites list shows them)",
        )

    def check(self, args: list[str], opts: argparse.Namespace) -> None:
        """The spider arguments, settings and database, before any site starts
        (:mod:`newsspider.preflight`): a mistake stops the run with one line, status 2."""
        try:
            opts.spargs = arglist_to_dict(opts.spargs)
        except ValueError:
            raise UsageError("Invalid -a value, use -a NAME=VALUE", print_help=False) from None
        assert self.settings is not None
        for site in self._sites(opts.sites):
            check_spider(self.settings, site, opts.spargs)
        check_crawl(self.settings)
        check_redis(self.settings)  # cluster mode (REDIS_URL): Redis answers

    def _sites(self, option: str | None) -> list[str]:
        assert self.settings is not None
        known = set(get_spider_loader(self.settings).list())
        if option is None:
            unknown = [k for k in self.settings.getlist("NIGHTLY_SITES") if k not in SITES]
            if unknown:
                raise UsageError(
                    f"-s NIGHTLY_SITES: unknown site(s) {', '.join(unknown)}; "
                    f"known: {', '.join(k for k in SITES if k in known)}",
                    print_help=False,
                )
            return [key for key in nightly_sites(self.settings) if key in known]
        wanted = list(dict.fromkeys(k.strip() for k in option.split(",") if k.strip()))
        unknown = [k for k in wanted if k not in known or k not in SITES]
        if unknown or not wanted:
            raise UsageError(
                f"unknown site(s) {', '.join(unknown) or '(none given)'}; "
                f"known: {', '.join(k for k in SITES if k in known)}",
                print_help=False,
            )
        return wanted

    def _reclean_growth(self) -> float:
        growth = self.settings.getfloat("RECLEAN_GROWTH")
        if 0 < growth < 1:
            raise UsageError(
                f"RECLEAN_GROWTH must be 0 (off) or at least 1, not {growth}", print_help=False
            )
        return growth

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if args:
            raise UsageError("nightly takes no positional arguments; use --sites", print_help=False)
        assert self.crawler_process is not None
        sites = self._sites(opts.sites)
        growth = self._reclean_growth()
        # REDIS_URL: this process is one worker of the cluster's nightly run (no host lock).
        run = run_cluster_nightly if is_cluster(self.settings) else run_nightly
        try:
            result = run(self.crawler_process, sites, opts.spargs, growth=growth)
        except LockHeld as exc:
            print(f"scrapy nightly: {exc}; not started", file=sys.stderr, flush=True)  # noqa: T201
            self.exitcode = EXIT_LOCKED
            return
        print(result.report, flush=True)  # noqa: T201
        self.exitcode = result.exit_code
