"""Discovery of sites: a site row learnt from a home page and proven by extracting samples
(``scrapy addsite``, ``scrapy crawl news -a url=URL``), and the check of a row against the
live site (``scrapy sites check``). Fetching goes through Scrapy's downloader
(:mod:`.fetch`); URL shapes (:mod:`.shapes`) and page verdicts (:mod:`.classify`) are pure.
"""
