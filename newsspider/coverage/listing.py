"""One listing document (news sitemap, sitemap index, RSS/Atom feed, JSON list) read into
dated entries, with well-kept parsers: Scrapy's :class:`~scrapy.utils.sitemap.Sitemap`
for sitemaps and sitemap indexes, feedparser for RSS and Atom, and the spider's own
:func:`~newsspider.spiders.news.feed_links` for JSON list APIs.

A date is what the document says an entry was published: a news sitemap's
``<news:publication_date>``, else its ``<lastmod>``; a feed entry's ``pubDate`` /
``published``, else ``updated``. A time without an offset, or a bare date, is read in
the site's zone (the caller's ``zone``). JSON lists carry no date a reader can know, so
their entries are undated; what an undated entry counts for is decided in
:mod:`.compare`.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

import feedparser
from lxml import etree
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

from newsspider.sites import FeedKind
from newsspider.spiders.news import MAX_FEED_BYTES, feed_links

__all__ = ["Document", "Entry", "parse_date", "read_document"]

URLSET = "urlset"
SITEMAP_INDEX = "sitemapindex"
FEED = "feed"
JSON = "json"


@dataclass(frozen=True, slots=True)
class Entry:
    """One URL a document lists, and when it says the URL was published (aware, or None)."""

    url: str
    published: datetime | None = None


@dataclass(frozen=True, slots=True)
class Document:
    """What one document lists: ``kind`` (``urlset``, ``sitemapindex``, ``feed``, ``json``,
    or "" when it could not be read), its entries, and a sitemap index's sitemaps (each
    with its ``lastmod``)."""

    kind: str
    entries: tuple[Entry, ...] = ()
    sitemaps: tuple[Entry, ...] = ()

    @property
    def dated(self) -> bool:
        """Does any entry carry a date? (An undated entry of a dated document is skipped.)"""
        return any(e.published is not None for e in self.entries)


class _NewsSitemap(Sitemap):
    """Scrapy's sitemap reader, keeping the Google News ``<news:publication_date>``.

    Scrapy's reader keeps each ``<url>`` child's own text, so the nested
    ``<news:news><news:publication_date>`` is lost (its parent has no text). The date is
    read here before Scrapy's reader clears the element; everything else is Scrapy's.
    """

    __slots__ = ()

    def _process_sitemap_element(self, elem: etree._Element) -> dict[str, Any] | None:
        published = None
        for child in elem:
            if self._get_tag_name(child) == "news":
                for item in child:
                    if self._get_tag_name(item) == "publication_date" and item.text:
                        published = item.text.strip()
        found = super()._process_sitemap_element(elem)
        if found is not None and published:
            found["publication_date"] = published
        return found


def parse_date(text: str | None, zone: tzinfo) -> datetime | None:
    """A W3C datetime (``2026-12-01T08:00:00+08:00``, ``...Z``, ``2026-12-01``) as an aware
    datetime; no offset means the site's ``zone``. None when it is not one."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=zone)


def _struct_time(value: Any) -> datetime | None:
    """feedparser's ``*_parsed`` (a UTC ``time.struct_time``) as an aware datetime."""
    if value is None:
        return None
    return datetime.fromtimestamp(calendar.timegm(value), UTC)


def _sitemap(body: bytes, zone: tzinfo) -> Document | None:
    """A urlset or sitemap index; None when the root is neither."""
    try:
        sitemap = _NewsSitemap(body)
    except (StopIteration, ValueError, SyntaxError):
        return None
    if sitemap.type not in (URLSET, SITEMAP_INDEX):
        return None
    rows = [r for r in sitemap if r.get("loc")]
    items = tuple(
        Entry(r["loc"], parse_date(r.get("publication_date") or r.get("lastmod"), zone))
        for r in rows
    )
    if sitemap.type == SITEMAP_INDEX:
        return Document(SITEMAP_INDEX, sitemaps=items)
    return Document(URLSET, entries=items)


def _feed(body: bytes) -> Document:
    parsed = feedparser.parse(body)
    entries = tuple(
        Entry(
            e["link"].strip(),
            _struct_time(e.get("published_parsed") or e.get("updated_parsed")),
        )
        for e in parsed.entries
        if e.get("link")
    )
    return Document(FEED if entries else "", entries)


def read_document(body: bytes, kind: FeedKind, zone: tzinfo) -> Document:
    """Read one fetched document; ``kind`` is the row's (``rss`` and ``sitemap`` are told
    apart by their root, so a mislabelled one still reads). Never raises on bad input: a
    broken feed lists nothing (kind "")."""
    if body.startswith(b"\x1f\x8b"):  # sitemap.xml.gz: gzip the transport did not undo
        try:
            body = gunzip(body, max_size=MAX_FEED_BYTES)
        except (OSError, ValueError, EOFError):
            return Document("")
    if kind in ("json", "jsonp"):
        pages = feed_links(body, kind).pages
        return Document(JSON if pages else "", tuple(Entry(u) for u in pages))
    return _sitemap(body, zone) or _feed(body)
