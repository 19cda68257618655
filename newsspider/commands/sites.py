"""``scrapy sites list|check``: the site table, and whether each row still works.

::

    scrapy sites list [--json]                 # every row: origin, checked, nightly, patterns
    scrapy sites check [KEY...] [--json]       # fetch a few pages per site and judge its row

The options and a call: the listing is :func:`newsspider.discovery.check.list_sites`, the
check :func:`newsspider.discovery.check.check_sites` (what it fetches and the five statuses
are described there). ``-s REPLAY_ARCHIVE=...`` checks offline, as every command does.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, ClassVar

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand
from newsspider.discovery.check import EXIT_FAILED, STATUSES, check_sites, list_sites
from newsspider.errors import UserError
from newsspider.preflight import check_settings
from newsspider.sites import SITES

ACTIONS = ("list", "check")


class Command(NewsCommand):
    requires_project = True
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "list [--json] | check [KEY...] [--json]"

    def short_desc(self) -> str:
        return "List the site rows, or check that their start pages still lead to articles"

    def long_desc(self) -> str:
        return (
            "list: one line per site row: key, source, where the row comes from (built-in or "
            "the sites file), checked (the row's flag, or its last stored check and when), "
            "whether scrapy nightly crawls it, its article patterns. "
            "check [KEY...]: for every site (or those named) fetch its start pages and feeds, "
            "count the links its article and list patterns match, and extract a few "
            "sampled articles, with at most SITES_CHECK_MAX_FETCHES fetches per site; one "
            "line per site with its status: " + ", ".join(STATUSES) + ". Results are kept "
            "in the database for sites list. --json prints a JSON list instead. "
            "Under each site, its coverage: the article URLs its news sitemaps and feeds "
            "list for the last COVERAGE_DAYS days, and how many the corpus stores. "
            f"Exit status of check: 0 when every checked site is ok, {EXIT_FAILED} when one "
            "is not or its coverage is below COVERAGE_WARN, 2 for a user error (an unknown key)."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print a JSON list")

    def check(self, args: list[str], opts: argparse.Namespace) -> None:
        """The action and the keys, before anything starts: one line and status 2."""
        if not args or args[0] not in ACTIONS:
            raise UsageError(
                "give an action: sites list [--json] | sites check [KEY...] [--json]",
                print_help=False,
            )
        if args[0] == "list" and len(args) > 1:
            raise UsageError("sites list takes no arguments, only --json", print_help=False)
        unknown = [k for k in args[1:] if k not in SITES]
        if unknown:
            raise UserError(
                f"unknown site(s) {', '.join(unknown)}; the sites are: {', '.join(SITES)}"
            )
        if args[0] == "check":
            assert self.settings is not None
            check_settings(self.settings)  # REPLAY_ARCHIVE there, settings of their types

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        if args[0] == "list":
            listing = list_sites(self.settings)
            _print(listing.as_json() if opts.json else listing.lines(), opts.json)
            if listing.not_read:
                _warn("list", f"last checks not read ({listing.not_read})")
            return
        keys = list(dict.fromkeys(args[1:])) or list(SITES)
        assert self.crawler_process is not None
        run = check_sites(self.crawler_process, keys)
        _print(run.as_json() if opts.json else run.lines(), opts.json)
        if run.not_recorded:
            _warn("check", f"results not recorded ({run.not_recorded})")
        self.exitcode = run.exit_code


def _print(output: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(output, ensure_ascii=False, indent=2), flush=True)  # noqa: T201
    else:
        print("\n".join(output), flush=True)  # noqa: T201


def _warn(action: str, message: str) -> None:
    print(f"scrapy sites {action}: WARNING: {message}", file=sys.stderr, flush=True)  # noqa: T201
