"""The project's spider loader: one generated spider per site row, never copied.

Scrapy finds spiders by importing ``SPIDER_MODULES``; the site table is data whose user
part depends on the settings (``SITES_FILE``, ``-s SITES_FILE=...`` included), so the
loader builds the table from the settings it is given (:func:`configure_sites`) and adds
a :class:`~newsspider.spiders.news.NewsSpider` subclass per row (:func:`spider_class`).
``scrapy list`` shows every row's key and ``scrapy crawl <key>`` runs it. A site that
truly crawls differently gets a hand-written ``NewsSpider`` subclass in a module of
``newsspider/spiders/`` with ``name`` set to its key, which wins over the generated one.

A sites file that cannot be used ends the command with its one line and exit status 2
(newsspider's own commands report it earlier, while they read their options).
"""

from __future__ import annotations

import sys

from scrapy.settings import BaseSettings
from scrapy.spiderloader import SpiderLoader

from newsspider.errors import UserError
from newsspider.sites import configure_sites
from newsspider.spiders.news import NewsSpider, spider_class

__all__ = ["GENERATED_MODULE", "SiteSpiderLoader", "site_spiders"]

#: The ``__module__`` the generated classes claim.
GENERATED_MODULE = "newsspider.spiders.generated"


def site_spiders(settings: BaseSettings | None = None) -> dict[str, type[NewsSpider]]:
    """A generated spider class per row of the settings' site table, by key."""
    return {
        key: spider_class(site, module=GENERATED_MODULE)
        for key, site in configure_sites(settings).items()
    }


class SiteSpiderLoader(SpiderLoader):
    """Scrapy's loader (``SPIDER_MODULES``) plus a spider per site row."""

    def __init__(self, settings: BaseSettings) -> None:
        try:
            generated = site_spiders(settings)
        except UserError as exc:
            print(f"scrapy: error: {exc}", file=sys.stderr)  # noqa: T201 (the one line)
            raise SystemExit(2) from None
        super().__init__(settings)
        for key, cls in generated.items():
            if key not in self._spiders:
                self._spiders[key] = cls
                self._found[key].append((GENERATED_MODULE, cls.__name__))
