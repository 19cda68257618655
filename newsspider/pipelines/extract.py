"""Extraction step of the crawl: Zou & Zhong 2011 (best or paper mode) on each page."""

from __future__ import annotations

import logging
from typing import Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from newsspider.extraction import MODES, ExtractionError, extract_article
from newsspider.extraction.methods import DEFAULT_METHOD, get_method
from newsspider.sites import SITES

logger = logging.getLogger(__name__)


class NotHtml(DropItem):
    """The response is not an HTML page (empty, binary): ExtractionError."""


class EmptyBody(DropItem):
    """The page is HTML but holds no article body (empty mainblockset)."""


class NoTitle(DropItem):
    """The page has a body but no headline could be found."""


class ExtractionPipeline:
    """Fill ``title``, ``newstime``, ``raw_text`` and ``encoding`` of an ArticleItem.

    The site's time zone (``Site.tz``) is used for times the page gives without
    an offset. Pages without body or title are dropped with a reason that
    Scrapy's core stats count under ``item_dropped_reasons_count/<class>``.
    """

    def __init__(self, mode: str, stats, method: str = DEFAULT_METHOD) -> None:
        if mode not in MODES:
            raise ValueError(f"EXTRACTION_MODE must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self.stats = stats
        self.method = method
        # ValueError for an unknown EXTRACTOR: the crawl fails at start, not per item
        self.extract = extract_article if method == DEFAULT_METHOD else get_method(method)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        s = crawler.settings
        return cls(
            s.get("EXTRACTION_MODE", "best"), crawler.stats, s.get("EXTRACTOR", DEFAULT_METHOD)
        )

    def process_item(self, item):
        adapter = ItemAdapter(item)
        url = adapter["urladdr"]
        site = SITES.get(adapter["site"])
        try:
            kwargs = {"mode": self.mode} if self.method == DEFAULT_METHOD else {}
            article = self.extract(
                adapter["html"],
                url,
                headers=adapter.get("headers") or None,
                tz=site.tz if site else None,
                **kwargs,
            )
        except ExtractionError as exc:
            raise NotHtml(f"not an HTML page ({exc}): {url}") from exc
        if not article.text:
            raise EmptyBody(f"no body: {url}", log_level="INFO")
        if not article.title:
            raise NoTitle(f"no title: {url}", log_level="INFO")
        if "\ufffd" in article.text:
            logger.warning("U+FFFD in the body after decoding as %s: %s", article.encoding, url)
        if article.published is None:
            logger.warning("no publication time found: %s", url)
            self.stats.inc_value("newsspider/no_time")
        adapter["title"] = article.title
        adapter["newstime"] = article.published
        adapter["newstime_source"] = article.published_source
        adapter["raw_text"] = article.text
        adapter["encoding"] = article.encoding
        self.stats.inc_value(f"newsspider/extracted/{adapter['site']}")
        return item
