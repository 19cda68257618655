"""The site table: the shipped rows, a user's file over them, read and validated once.

Sites are data. The package ships ``newsspider/sites.toml`` (the built-in rows); a user's
own file, named by the setting ``SITES_FILE`` (default ``sites.toml`` in the project
folder, used when it exists), adds sites and overrides built-in ones by key. Both are
TOML, one table per site, read with :mod:`tomllib`.

A file is validated as a whole when it is read, so a mistake ends a command before
anything starts, as one line naming the file, the site and the field
(:class:`SitesFileError`, a :class:`~newsspider.errors.UserError`: exit status 2): an
unknown field, a value of the wrong type, a pattern that is not an anchored Python regex,
an unknown time zone, a key declared twice, an encoding Python does not know, an article
pattern that matches the site's own start pages, or an example URL no article pattern
matches.

:data:`SITES` is the table of the running process. It starts as the built-in rows and
:func:`configure_sites` brings the user's file in (commands do it before they start, and
the project's spider loader does it from the crawl's settings); it is updated in place,
so every module that imported it sees the same rows.
"""

from __future__ import annotations

import codecs
import re
import tomllib
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scrapy.settings import BaseSettings

from newsspider import settings as project_defaults
from newsspider.errors import UserError
from newsspider.extraction.pager import is_xpath_rule
from newsspider.paths import project_path
from newsspider.sites.model import FEED_KINDS, Feed, Site

__all__ = [
    "BUILTIN",
    "BUILTIN_FILE",
    "FIELDS",
    "PAPER_SITES",
    "SITES",
    "SitesFileError",
    "configure_sites",
    "load_table",
    "nightly_sites",
    "read_sites_file",
    "site_for_url",
    "site_from_table",
    "sites_file",
]

#: The shipped rows, inside the package.
BUILTIN_FILE: Path = Path(__file__).resolve().parents[1] / "sites.toml"
#: ``Site.origin`` of a shipped row.
BUILTIN = "built-in"

#: The four sites the papers' corpora came from; the others are extra rows.
PAPER_SITES: tuple[str, ...] = ("netease", "sina", "tencent", "zaobao")

_KEY = re.compile(r"[a-z][a-z0-9_]*")
_HTTP = re.compile(r"https?://[^\s/]+", re.I)
_ANCHOR = "^https?://"

#: Every field a site table may hold: its kind, and whether a row must have it.
#: ``str``/``bool`` are scalars, ``list`` a list of strings, ``feeds`` a list of
#: ``{ url, kind, body }`` tables.
FIELDS: dict[str, tuple[str, bool]] = {
    "source": ("str", True),
    "allowed_domains": ("list", True),
    "start_urls": ("list", False),
    "article_patterns": ("list", True),
    "list_patterns": ("list", False),
    "feeds": ("feeds", False),
    "tz": ("str", False),
    "title_stop_words": ("list", False),
    "encoding": ("str", False),
    "render": ("bool", False),
    "json_path": ("str", False),
    "section_from_path": ("bool", False),
    "depth_limit": ("int", False),
    "next_page": ("str", False),
    "checked": ("bool", False),
    "enabled": ("bool", False),
    "facts": ("str", False),
    "examples": ("list", False),
}
_FEED_FIELDS = ("url", "kind", "body")


class SitesFileError(UserError):
    """A sites file that cannot be used; the message names the file, the site and the field."""


def _kind_name(kind: str) -> str:
    return {
        "str": "a string",
        "bool": "true or false",
        "int": "a positive integer",
        "list": "a list of strings",
        "feeds": "a list of { url, kind } tables",
    }[kind]


def _check_next_page(fail: Callable[[str, str], SitesFileError], rule: str) -> None:
    """A ``next_page`` rule is an XPath (``/``, ``(``) lxml compiles, or a Python regex."""
    if not rule.strip():
        raise fail("next_page", "empty; give an XPath or a regex, or leave the field out")
    if is_xpath_rule(rule):
        return
    try:
        re.compile(rule)
    except re.error as exc:
        what = "an XPath lxml accepts nor " if rule.lstrip().startswith(("/", "(")) else ""
        raise fail("next_page", f"{rule!r} is neither {what}a Python regex ({exc})") from None


def site_from_table(where: str, key: str, table: Mapping[str, Any], origin: str) -> Site:
    """One validated :class:`Site` from a TOML table; :class:`SitesFileError` on a mistake."""

    def fail(field: str, problem: str) -> SitesFileError:
        return SitesFileError(f"{where}: site {key!r}, field {field}: {problem}")

    if not _KEY.fullmatch(key):
        raise SitesFileError(
            f"{where}: site {key!r}: a key is a lowercase identifier ([a-z][a-z0-9_]*)"
        )
    if not isinstance(table, Mapping):
        raise SitesFileError(f"{where}: {key} is not a table of fields ([{key}] ...)")
    for field in table:
        if field not in FIELDS:
            raise fail(field, f"unknown field; the fields are: {', '.join(FIELDS)}")
    for field, (kind, required) in FIELDS.items():
        if required and field not in table:
            raise fail(field, "missing; every site needs source, allowed_domains, article_patterns")
        if field in table and not _of_kind(table[field], kind):
            raise fail(field, f"{table[field]!r} is not {_kind_name(kind)}")
    if not table["allowed_domains"]:
        raise fail("allowed_domains", "empty; give the hosts the crawl stays on")
    if not table["article_patterns"]:
        raise fail("article_patterns", "empty; give at least one article URL regex")
    for field in ("article_patterns", "list_patterns"):
        for pattern in table.get(field, ()):
            if not pattern.startswith(_ANCHOR):
                raise fail(field, f"{pattern!r} does not start with {_ANCHOR}")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise fail(field, f"{pattern!r} is not a Python regex ({exc})") from None
    for field in ("start_urls", "examples"):
        for url in table.get(field, ()):
            if not _HTTP.match(url):
                raise fail(field, f"{url!r} is not an http:// or https:// URL")
    tz = table.get("tz", "Asia/Shanghai")
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise fail(
            "tz", f"unknown time zone {tz!r}; give an IANA name such as Asia/Taipei"
        ) from None
    encoding = table.get("encoding")
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise fail("encoding", f"{encoding!r} is not an encoding Python knows") from None
    next_page = table.get("next_page")
    if next_page is not None:
        _check_next_page(fail, next_page)
    feeds = tuple(_feed(fail, feed) for feed in table.get("feeds", ()))
    if not table.get("start_urls") and not feeds:
        raise fail("start_urls", "empty, and no feeds: a crawl would have nowhere to start")
    checked = table.get("checked", True)
    site = Site(
        key=key,
        source=table["source"],
        allowed_domains=tuple(d.lower() for d in table["allowed_domains"]),
        start_urls=tuple(table.get("start_urls", ())),
        article_patterns=tuple(table["article_patterns"]),
        list_patterns=tuple(table.get("list_patterns", ())),
        feeds=feeds,
        tz=tz,
        title_stop_words=tuple(table.get("title_stop_words", ())),
        encoding=encoding,
        render=table.get("render", False),
        json_path=table.get("json_path"),
        section_from_path=table.get("section_from_path", False),
        depth_limit=table.get("depth_limit"),
        next_page=next_page,
        checked=checked,
        enabled=table.get("enabled", checked),
        facts=table.get("facts", ""),
        examples=tuple(table.get("examples", ())),
        origin=origin,
    )
    for url in site.start_urls:
        if site.is_article(url):
            raise fail("article_patterns", f"a pattern matches the site's own start page {url}")
    for url in site.examples:
        if not site.is_article(url):
            raise fail("examples", f"no article pattern matches {url}")
    return site


def _of_kind(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1
    if kind == "list":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, list) and all(isinstance(v, Mapping) for v in value)


def _feed(fail: Any, table: Mapping[str, Any]) -> Feed:
    for name in table:
        if name not in _FEED_FIELDS:
            raise fail("feeds", f"unknown feed field {name!r}; a feed has url, kind and body")
    url, kind, body = table.get("url"), table.get("kind", "rss"), table.get("body")
    if not isinstance(url, str) or not _HTTP.match(url):
        raise fail("feeds", f"feed url {url!r} is not an http:// or https:// URL")
    if kind not in FEED_KINDS:
        raise fail("feeds", f"feed kind {kind!r}; the kinds are: {', '.join(FEED_KINDS)}")
    if body is not None and not isinstance(body, str):
        raise fail("feeds", f"feed body {body!r} is not a string")
    return Feed(url, kind, body)


def _builtin_text() -> str:
    """The shipped file's text, read as package data (so it also loads from a zipped egg,
    as Scrapyd runs the project)."""
    return resources.files("newsspider").joinpath("sites.toml").read_text(encoding="utf-8")


_DECLARED_TWICE = re.compile(r"Cannot declare \('?([^',)]+)'?.*?\) twice")


def read_sites_file(path: Path, origin: str | None = None) -> dict[str, Site]:
    """The rows of one TOML file, in file order, each validated (:func:`site_from_table`).

    ``origin`` is what each row's ``origin`` says (default: the path).
    """
    path = Path(path)
    where = str(path)
    try:
        text = _builtin_text() if path == BUILTIN_FILE else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SitesFileError(f"{where}: no such sites file") from None
    except UnicodeDecodeError:
        raise SitesFileError(f"{where}: not UTF-8 text; save the sites file as UTF-8") from None
    except OSError as exc:
        raise SitesFileError(f"{where}: cannot be read ({exc.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if m := _DECLARED_TWICE.search(str(exc)):
            raise SitesFileError(
                f"{where}: site {m.group(1)!r}, field (key): declared twice ({exc}); "
                "one table per site"
            ) from None
        raise SitesFileError(f"{where}: not valid TOML: {exc}") from None
    return {
        key: site_from_table(where, key, table, origin or where) for key, table in data.items()
    }


@cache
def _builtin_rows() -> dict[str, Site]:
    """The shipped rows, read and validated once per process (rows are frozen)."""
    return read_sites_file(BUILTIN_FILE, BUILTIN)


def load_table(user_file: Path | None = None) -> dict[str, Site]:
    """The built-in rows with ``user_file``'s over them (by key; new keys after them)."""
    table = dict(_builtin_rows())
    if user_file is not None and user_file.is_file():
        table.update(read_sites_file(user_file))
    return table


def sites_file(settings: BaseSettings | None = None) -> Path:
    """The user's sites file ``SITES_FILE`` names (relative to the project folder)."""
    value = settings.get("SITES_FILE") if settings is not None else None
    return project_path(value or project_defaults.SITES_FILE)


#: The process's site table (module docstring), built-in rows until configured.
SITES: dict[str, Site] = {}
_loaded: list[Any] = [None]


def _stamp(path: Path) -> tuple[str, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (str(path), stat.st_mtime_ns, stat.st_size)


def configure_sites(settings: BaseSettings | None = None) -> dict[str, Site]:
    """Make :data:`SITES` the built-in rows plus the user's file of ``settings``.

    Read again only when the file (its path, size or time) changed; raises
    :class:`SitesFileError` on a file that cannot be used, leaving :data:`SITES` as it was.
    """
    path = sites_file(settings)
    stamp = (path, _stamp(path))
    if _loaded[0] != stamp or not SITES:
        table = load_table(path)
        SITES.clear()
        SITES.update(table)
        _loaded[0] = stamp
    return SITES


def nightly_sites(settings: BaseSettings | None = None) -> list[str]:
    """The keys ``scrapy nightly`` crawls without ``--sites``: ``NIGHTLY_SITES`` when set,
    else every enabled row (the built-in eight and the user's own; catalogue rows that
    were never checked stay out)."""
    named = settings.getlist("NIGHTLY_SITES") if settings is not None else []
    if named:
        return [key for key in named if key in SITES]
    return [key for key, site in SITES.items() if site.enabled]


def site_for_url(url: str) -> Site | None:
    """The site whose ``allowed_domains`` hold the URL's host, or None."""
    for site in SITES.values():
        if site.owns(url):
            return site
    return None


SITES.update(_builtin_rows())
