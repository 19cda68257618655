"""Multi-page articles in a WARC scan (``scrapy backfill --warc``): each page's capture joined.

A live crawl fetches a paged article's pages one after the other (``NewsSpider``); a WARC
file holds them as separate records, in any order, some perhaps missing. :class:`PagedPages`
sits between the scan and the items: a page with a next page (by
:func:`~newsspider.extraction.pager.next_page_url` and the site row's ``next_page``), or a
page after the first of an article (:func:`~newsspider.extraction.pager.first_page_url`)
is held until its article is whole, and the article then leaves as one
:class:`Joined`: its first page and the further pages, in order, as the crawl would have
fetched them; or its one-page version (全文) when the file holds that. At the end of the
scan an article still missing a page leaves with the pages up to the first missing one
(logged); a page after the first whose first page is in no record is not an article and is
dropped (counted). Any other page goes straight through.

Parsing happens only for pages the byte test lets through
(:func:`~newsspider.extraction.pager.might_have_pager`), in the scan's thread.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree, html

from newsspider.backfill.warcscan import WarcPage
from newsspider.extraction.pager import (
    first_page_url,
    might_have_pager,
    next_page_url,
    single_page_url,
    single_version_of,
)
from newsspider.sites import SITES

__all__ = ["Joined", "PagedPages"]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Joined:
    """An article as the scan hands it on: ``page`` (under whose URL it is stored, the
    body of the one-page version when ``single`` is set) and the pages after it."""

    page: WarcPage
    more: list[WarcPage] = field(default_factory=list)
    #: the URLs of the pages whose bodies make the article (empty: one ordinary page)
    page_urls: tuple[str, ...] = ()


@dataclass(slots=True)
class _Chain:
    first: WarcPage
    following: str
    single: str | None


class PagedPages:
    """The scan's pages with the pages of each multi-page article joined (module docstring).

    ``max_pages`` is ``MULTIPAGE_MAX_PAGES``: an article leaves with at most that many pages;
    1 turns joining off (every page goes through as it is)."""

    def __init__(self, max_pages: int) -> None:
        self.max_pages = max_pages
        self.chains: dict[str, _Chain] = {}  # first page URL -> its chain
        self.held: dict[str, WarcPage] = {}  # pages after the first, and one-page versions
        self.next_of: dict[str, str | None] = {}  # a held page's next page
        self.counts: Counter[str] = Counter()

    def feed(self, page: WarcPage) -> Iterator[Joined]:
        """What can leave now that ``page`` was read: nothing, it, or a whole article."""
        if self.max_pages <= 1:
            yield Joined(page)
            return
        site = SITES[page.site]
        first = first_page_url(page.url)
        if first is not None and site.is_article(site.canonical_url(first)):
            self._hold(page)
            yield from self._completed(site.canonical_url(first))
            return
        following, single = self._pager(page)
        if following is None:
            if self._maybe_single(page):
                self._hold(page)  # a one-page version waits for the page that names it
                yield from self._claimed(page.url)
                return
            yield Joined(page)
            return
        self.chains[page.url] = _Chain(page, following, single)
        yield from self._completed(page.url)

    def finish(self) -> Iterator[Joined]:
        """At the end of the scan: the articles still waiting, with the pages there are,
        and the one-page versions no article named, as pages of their own."""
        for url in list(self.chains):
            chain = self.chains.pop(url)
            pages = self._walk(chain, partial=True)
            logger.info(
                "paged article %s: %s of its pages in the archive, the next (%s) not",
                url, len(pages), self._missing(chain, pages),
            )  # fmt: skip
            self.counts["paged_incomplete"] += 1
            yield self._joined(pages)
        claimed = {c.single for c in self.chains.values()}
        for url, page in list(self.held.items()):
            if self._maybe_single(page) and url not in claimed:
                yield Joined(page)
            else:
                self.counts["page_without_first"] += 1
        self.held.clear()

    # -- helpers ---------------------------------------------------------------------------

    def _pager(self, page: WarcPage) -> tuple[str | None, str | None]:
        site = SITES[page.site]
        if not (site.next_page or might_have_pager(page.body, page.url)):
            return None, None
        try:
            tree = html.fromstring(page.body)
        except (etree.ParserError, ValueError):
            return None, None
        following = next_page_url(tree, page.url, site.next_page, [page.url])
        if following is None:
            return None, None
        return following, single_page_url(tree, page.url)

    def _maybe_single(self, page: WarcPage) -> bool:
        return single_version_of(page.url) is not None

    def _hold(self, page: WarcPage) -> None:
        earlier = self.held.get(page.url)
        if earlier is None or page.captured_at > earlier.captured_at:
            self.held[page.url] = page
            self.next_of[page.url] = self._pager(page)[0]

    def _claimed(self, single: str) -> Iterator[Joined]:
        for url, chain in list(self.chains.items()):
            if chain.single == single:
                yield from self._completed(url)

    def _completed(self, first: str) -> Iterator[Joined]:
        chain = self.chains.get(first)
        if chain is None:
            return
        if chain.single is not None and chain.single in self.held:
            del self.chains[first]
            single = self.held.pop(chain.single)
            self.counts["paged_single"] += 1
            page = WarcPage(
                chain.first.url, chain.first.site, single.captured_at, single.status,
                single.headers, single.body, single.warc,
            )  # fmt: skip
            yield Joined(page, [], (single.url,))
            return
        pages = self._walk(chain, partial=False)
        if pages:
            del self.chains[first]
            self.counts["paged_joined"] += 1
            yield self._joined(pages)

    def _walk(self, chain: _Chain, *, partial: bool) -> list[WarcPage]:
        """The chain's pages in order; [] when one is not read yet (unless ``partial``)."""
        pages = [chain.first]
        following: str | None = chain.following
        while following is not None and len(pages) < self.max_pages:
            page = self.held.get(following)
            if page is None:
                return pages if partial else []
            pages.append(page)
            following = self.next_of.get(following)
            if following in {p.url for p in pages}:
                break
        for page in pages[1:]:
            self.held.pop(page.url, None)
        return pages

    def _missing(self, chain: _Chain, pages: list[WarcPage]) -> str | None:
        return chain.following if len(pages) == 1 else self.next_of.get(pages[-1].url)

    @staticmethod
    def _joined(pages: list[WarcPage]) -> Joined:
        first, *more = pages
        return Joined(first, more, tuple(p.url for p in pages) if more else ())
