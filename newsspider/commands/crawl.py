"""``scrapy crawl SITE``: Scrapy's own command, with newsspider's errors and exit statuses.

Before anything starts (:mod:`newsspider.preflight`): the spider exists (else the closest
names, "did you mean"), every ``-a`` argument is one the spider takes, settings
have values of their type, ``EXTRACTOR`` names a method, ``REPLAY_ARCHIVE`` exists, and
the database answers a first connection. A mistake ends there, with one line and exit
status 2 (:mod:`newsspider.cli`).

After the crawl, the exit status is the crawl's verdict (:mod:`newsspider.outcome`): 0
when it did its job, 3 when nothing could be fetched, 4 when the database failed, 5 when
every article was dropped, 6 when anti-bot challenges blocked it; its summary line is the
last line of the log.
"""

from __future__ import annotations

import argparse

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError

from newsspider.cli import OneLineErrors
from newsspider.cluster import check_redis, enable_cluster
from newsspider.extensions import exit_status
from newsspider.outcome import EXIT_STATUSES
from newsspider.preflight import check_crawl, check_spider


class Command(OneLineErrors, ScrapyCrawl):
    def long_desc(self) -> str:
        table = "; ".join(f"{status} {meaning}" for status, meaning in EXIT_STATUSES[:-1])
        return f"Run a spider of the project, by name. Exit status: {table}."

    def check(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give exactly one spider name (scrapy list shows them)")
        assert self.settings is not None
        check_spider(self.settings, args[0], opts.spargs)
        check_crawl(self.settings)
        check_redis(self.settings)  # cluster mode (REDIS_URL): Redis answers

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.crawler_process is not None
        enable_cluster(self.crawler_process.settings)  # REDIS_URL: a worker of the cluster
        crawler = self._create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        self.exitcode = exit_status(crawler, self.crawler_process.bootstrap_failed)
