"""Coverage: what share of the article URLs a site lists for a day the corpus holds.

The modules, in the order a comparison uses them:

- ``listing``: one news sitemap, sitemap index, RSS/Atom feed or JSON list read into
  dated entries (Scrapy's ``Sitemap`` and feedparser, never a hand-written XML walk);
- ``compare``: the entries sorted into the site's local days and compared with the stored
  URLs, as pure functions (:class:`~.compare.SiteCoverage`, its lines and JSON);
- ``fetch``: a site's listing fetched through Scrapy's downloader (its row's feeds, its
  robots.txt ``Sitemap:`` lines, the ``<link rel=alternate>`` feeds of its start pages);
- ``gapfill``: the nightly run's part: list, compare, fetch the missing through the
  site's own spider, record ``coverage_days``.

The SQL (stored URLs among a listing, the ``coverage_days`` rows) is
:mod:`newsspider.storage.coverage`. Nothing is imported here, so ``storage`` can use
``compare``'s values without loading the crawl machinery (as with ``nightly.report``).
"""
