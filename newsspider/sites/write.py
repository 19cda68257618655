"""Rows written into the user's sites file (``scrapy addsite --write``).

The file is the user's: :mod:`tomlkit` adds a table and keeps their comments, order and
layout. The new text is read back and validated (:func:`read_sites_file`) before it
replaces the old file in one rename, so a failed write leaves the file as it was.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import tomlkit

from newsspider.sites.model import Site
from newsspider.sites.table import SitesFileError, read_sites_file

__all__ = ["HEADER", "add_site", "site_table"]

HEADER = (
    "newsspider sites: one table per site, added to the built-in rows by key\n"
    "(fields: newsspider/sites.toml's header; scrapy addsite URL --write adds rows)"
)

#: Fields written even when they hold their default, so a reader of the file sees them.
_ALWAYS = ("source", "facts", "allowed_domains", "start_urls", "article_patterns",
           "list_patterns", "tz", "checked")
_DEFAULTS = Site(key="x", source="", allowed_domains=(), start_urls=(), article_patterns=())


def site_table(site: Site) -> dict[str, Any]:
    """The TOML fields of ``site``: the ones in :data:`_ALWAYS`, and the rest when set."""
    fields: dict[str, Any] = {}
    for name in ("source", "facts", "allowed_domains", "start_urls", "article_patterns",
                 "list_patterns", "feeds", "tz", "title_stop_words", "encoding", "render",
                 "json_path", "section_from_path", "depth_limit", "next_page", "examples",
                 "checked", "enabled"):
        value = getattr(site, name)
        if name == "enabled":
            if value != site.checked:  # the loader's default is enabled = checked
                fields[name] = value
            continue
        if name not in _ALWAYS and value == getattr(_DEFAULTS, name):
            continue
        if name == "feeds":
            value = [
                {k: v for k, v in (("url", f.url), ("kind", f.kind), ("body", f.body)) if v}
                for f in value
            ]
        elif isinstance(value, tuple):
            value = list(value)
        fields[name] = value
    return fields


def _literal_array(values: list[str]) -> Any:
    """Strings as TOML literal strings ('...'), one per line, so regexes read as written."""
    array = tomlkit.array()
    array.multiline(True)
    for value in values:
        literal = "'" not in value and "\n" not in value
        array.append(tomlkit.string(value, literal=literal))
    return array


def add_site(path: Path, site: Site) -> None:
    """Add ``site`` to the sites file at ``path`` (created when missing).

    :class:`SitesFileError` when the file already has the key or cannot be read.
    """
    path = Path(path)
    if path.exists():
        read_sites_file(path)  # a broken file is reported, not extended
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    else:
        doc = tomlkit.document()
        for line in HEADER.splitlines():
            doc.add(tomlkit.comment(line))
        doc.add(tomlkit.nl())
    if site.key in doc:
        raise SitesFileError(f"{path}: site {site.key!r} is already there; choose another --key")
    table = tomlkit.table()
    for name, value in site_table(site).items():
        if name.endswith("patterns") or name in ("title_stop_words", "examples"):
            table.add(name, _literal_array(value) if value else tomlkit.array())
        elif name == "feeds":
            feeds = tomlkit.array()
            feeds.multiline(True)
            for feed in value:
                inline = tomlkit.inline_table()
                inline.update(feed)
                feeds.append(inline)
            table.add(name, feeds)
        else:
            table.add(name, value)
    doc.add(site.key, table)
    text = tomlkit.dumps(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        read_sites_file(Path(tmp))  # what is written loads back, or nothing is replaced
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
