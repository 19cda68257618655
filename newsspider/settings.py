"""Scrapy settings for newsspider.

Only defaults live here; every value can be overridden with ``-s NAME=VALUE``.
"""

BOT_NAME = "newsspider"
SPIDER_MODULES = ["newsspider.spiders"]
NEWSPIDER_MODULE = "newsspider.spiders"
COMMANDS_MODULE = "newsspider.commands"

ROBOTSTXT_OBEY = True
DOWNLOAD_DELAY = 1.0
CONCURRENT_REQUESTS_PER_DOMAIN = 4
FEED_EXPORT_ENCODING = "utf-8"

# Extraction mode used by `scrapy extract`/`evaluate` defaults and the crawl pipeline:
# "best" (default, our improved method) or "paper" (Zou & Zhong 2011 alone).
EXTRACTION_MODE = "best"
