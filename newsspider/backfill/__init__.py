"""Archive backfill: the years before the first crawl, from web archives' CDX indexes
(Common Crawl, the Wayback Machine, any CDX server) through the crawl's own pipeline.

:mod:`.cdx` reads CDX answers and chooses captures (pure), :mod:`.records` reads a fetched
WARC record, :mod:`.spider` is the crawl, :mod:`.backoff` honours 429/503 ``Retry-After``.
"""
