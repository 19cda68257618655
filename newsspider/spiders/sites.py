"""One spider per :data:`~newsspider.sites.SITES` row, generated, never copied.

``scrapy list`` shows every row's key and ``scrapy crawl <key>`` runs it.  A
site that truly crawls differently (a JSON listing, say) gets a hand-written
``NewsSpider`` subclass in its own module instead, still reading its row; drop
its key from the loop below then.
"""

from __future__ import annotations

from newsspider.sites import SITES
from newsspider.spiders.news import NewsSpider, spider_class

#: Generated classes by site key (``NeteaseSpider``, ``SinaSpider``, …).
SPIDERS: dict[str, type[NewsSpider]] = {
    key: spider_class(site, module=__name__) for key, site in SITES.items()
}

# The spider loader finds spiders among module globals.
globals().update({cls.__name__: cls for cls in SPIDERS.values()})
