"""What every newsspider command shares: one-line errors and exit statuses a scheduler trusts.

One rule for every command and crawl: a user error (:class:`~newsspider.errors.UserError`,
or Scrapy's ``UsageError``) ends with one line on stderr, ``scrapy CMD: error: what is
wrong; what is accepted``, and exit status 2, without the usage block and without a
traceback unless ``--traceback`` (or an explicit ``-s LOG_LEVEL=DEBUG``/``-L DEBUG``) asks
for it. Anything else that escapes a command is a bug and keeps its traceback (status 1).

Commands derive from :class:`NewsCommand` (or mix :class:`OneLineErrors` into a Scrapy
command class, as ``crawl`` does) and put their work in ``execute``; the checks that must
come before Scrapy starts logging go in ``check``, which runs while options are processed.
"""

from __future__ import annotations

import argparse
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from newsspider.errors import UserError
from newsspider.sites import configure_sites

__all__ = [
    "EXIT_USAGE",
    "NewsCommand",
    "OneLineErrors",
    "one_line_parser",
    "time_zone",
    "wants_traceback",
]

#: Exit status of a user error (Scrapy's own, for its usage errors).
EXIT_USAGE = 2


def one_line_parser(parser: argparse.ArgumentParser) -> None:
    """Make ``parser.error`` print one line, ``scrapy CMD: error: MESSAGE``.

    Scrapy's parser prints the whole usage line first and names the program ``scrapy``;
    the command's ``--help`` still shows the usage.
    """
    words = (parser.usage or "").split()
    if len(words) >= 2:
        parser.prog = " ".join(words[:2])
    parser.print_usage = _no_usage  # type: ignore[method-assign]


def _no_usage(file: Any = None) -> None:
    """``print_usage`` replaced: ``error`` prints only its own line."""


def wants_traceback(opts: argparse.Namespace, settings: BaseSettings | None) -> bool:
    """Did the user ask for tracebacks: ``--traceback``, or DEBUG logging set explicitly?

    Scrapy's own default level is DEBUG, so only a level given on the command line
    (``-s LOG_LEVEL=DEBUG``, ``-L DEBUG``) counts.
    """
    if getattr(opts, "traceback", False):
        return True
    if settings is None:
        return False
    explicit = (settings.getpriority("LOG_LEVEL") or 0) >= SETTINGS_PRIORITIES["cmdline"]
    return explicit and str(settings.get("LOG_LEVEL")).upper() == "DEBUG"


def time_zone(name: str) -> ZoneInfo:
    """The IANA zone ``name``; a :class:`UserError` naming the accepted form otherwise."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UserError(
            f"unknown time zone {name!r}: give an IANA name such as Asia/Shanghai or UTC"
        ) from None


class OneLineErrors:
    """Mixin for a Scrapy command: user errors become one line and exit status 2.

    Subclasses implement ``execute(args, opts)`` (the command's work) and may implement
    ``check(args, opts)`` (validation that runs before Scrapy builds the crawler process,
    so a bad command line fails before any log line).
    """

    settings: BaseSettings | None

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)  # type: ignore[misc]
        parser.add_argument(
            "--traceback",
            action="store_true",
            help="on an error, show its traceback instead of one line",
        )
        one_line_parser(parser)

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)  # type: ignore[misc]
        self._one_line(self._configure, args, opts)
        self._one_line(self.check, args, opts)

    def _configure(self, args: list[str], opts: argparse.Namespace) -> None:
        """The site table of these settings (``SITES_FILE``), so a bad sites file is one
        line before anything starts."""
        configure_sites(self.settings)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        self._one_line(self.execute, args, opts)

    def check(self, args: list[str], opts: argparse.Namespace) -> None:
        """Validate the command line before any work (default: nothing to check)."""

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        raise NotImplementedError

    def _one_line(self, step: Any, args: list[str], opts: argparse.Namespace) -> None:
        try:
            step(args, opts)
        except UserError as exc:
            if wants_traceback(opts, self.settings):
                raise
            raise UsageError(str(exc), print_help=False) from None


class NewsCommand(OneLineErrors, ScrapyCommand):
    """Base of newsspider's own commands (``extract``, ``corpus``, ``nightly``...)."""

    requires_project = True
