"""Checks made before a crawl starts, so that a mistake ends in seconds with one line.

``scrapy crawl`` and ``scrapy nightly`` run these while they process their options,
before Scrapy builds a crawler or logs anything: an unknown spider or spider argument,
a setting whose value is not of its type, an unknown ``EXTRACTOR``, a ``REPLAY_ARCHIVE``
that is not there, a ``DATABASE_URL`` that cannot be used or reached. Each raises a
:class:`~newsspider.errors.UserError` naming the problem and what is accepted; the
command prints it as one line and exits with status 2 (:mod:`newsspider.cli`).

A database that goes away later, mid-crawl, is the corpus pipeline's business (retries
with backoff for ``NEWS_DB_RETRY_SECONDS``), not a user error.
"""

from __future__ import annotations

from difflib import get_close_matches
from pathlib import Path
from typing import Any

from scrapy.settings import BaseSettings
from scrapy.spiderloader import get_spider_loader

from newsspider import settings as project_defaults
from newsspider.errors import UserError
from newsspider.extraction.registry import NAMES
from newsspider.storage import check_database
from newsspider.workers import parse_workers

__all__ = ["check_crawl", "check_settings", "check_spider", "unknown_spider"]


def check_spider(settings: BaseSettings, name: str, arguments: dict[str, Any]) -> None:
    """``name`` is a spider of the project and ``arguments`` are arguments it takes.

    An unknown name gets one short line with the closest names (``difflib``), not the
    list of every spider: ``unknown spider 'netese': did you mean netease? (scrapy list
    shows all 53)``.
    """
    loader = get_spider_loader(settings)
    names = sorted(loader.list())
    if name not in names:
        raise UserError(unknown_spider(name, names))
    check = getattr(loader.load(name), "check_arguments", None)
    if check is not None:
        check(dict(arguments))


def unknown_spider(name: str, names: list[str]) -> str:
    """The one line for a spider name that is not one of ``names``."""
    close = get_close_matches(name, names, n=3, cutoff=0.7)
    hint = f": did you mean {' or '.join(close)}?" if close else ""
    return f"unknown spider {name!r}{hint} (scrapy list shows all {len(names)})"


def check_settings(settings: BaseSettings) -> None:
    """Every setting of ``settings.py`` has a value of its default's type; ``EXTRACTOR``
    names a method; ``EXTRACTION_WORKERS`` is ``auto`` or a count; ``REPLAY_ARCHIVE``
    exists when set."""
    for name in dir(project_defaults):
        if not name.isupper():
            continue
        default = getattr(project_defaults, name)
        _check_type(settings, name, default)
    method = settings.get("EXTRACTOR")
    if method not in NAMES:
        raise UserError(
            f"unknown extraction method -s EXTRACTOR={method!r}; the methods are: "
            + ", ".join(NAMES)
        )
    try:
        parse_workers(settings.get("EXTRACTION_WORKERS"))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    archive = settings.get("REPLAY_ARCHIVE")
    if archive and not Path(archive).is_file():
        raise UserError(f"REPLAY_ARCHIVE not found: {archive} (a WARC file, .warc or .warc.gz)")


def check_crawl(settings: BaseSettings) -> None:
    """Everything a crawl needs before it starts: the settings, then (when the corpus
    pipeline is on) one connection to the database."""
    check_settings(settings)
    if settings.getbool("CORPUS_ENABLED"):
        check_database(settings)


_GETTERS = {bool: "getbool", int: "getint", float: "getfloat"}
_KINDS = {bool: "True or False", int: "a whole number", float: "a number"}


def _check_type(settings: BaseSettings, name: str, default: object) -> None:
    kind = type(default)
    getter = _GETTERS.get(kind)
    if getter is None:
        return
    try:
        getattr(settings, getter)(name)
    except (TypeError, ValueError):
        raise UserError(
            f"-s {name}={settings.get(name)!r} is not {_KINDS[kind]} (default {default!r})"
        ) from None
