"""What the demo prints: the articles stored per site, then each saved page's article."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TextIO

from newsspider.sites import SITES
from newsspider.storage import Corpus

#: Characters of the first content line shown under each title.
FIRST_LINE_CHARS = 40


def print_report(corpus: Corpus, urls: Mapping[str, Sequence[str]], out: TextIO) -> int:
    """Write each site's article count, then the stored article of every URL in ``urls``
    (site -> saved page URLs); return how many of those URLs are stored.

    Times are shown in the site's zone (the site table's ``tz``); a URL the crawl did not
    store is listed as such, so a page the extraction rejected is visible.
    """
    stats = corpus.stats()
    for key in urls:
        articles = stats.sites[key].articles if key in stats.sites else 0
        out.write(f"  {key:10s} {articles:5d} articles\n")
    stored = 0
    for key, site_urls in urls.items():
        zone = SITES[key].zone
        for url in site_urls:
            article = corpus.get(url)
            if article is None:
                out.write(f"  not stored  [{key}] {url}\n")
                continue
            stored += 1
            when = article.published.astimezone(zone).isoformat() if article.published else "-"
            first = article.content.split("\n", 1)[0][:FIRST_LINE_CHARS]
            out.write(f"  {when}  [{key}] {article.title}\n      {first}…\n")
    return stored
