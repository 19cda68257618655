"""``scrapy addsite URL``: learn a site row from its home page, and write it with ``--write``.

::

    scrapy addsite https://www.example-daily.cn/                 # the report, nothing written
    scrapy addsite https://www.example-daily.cn/ --key example --write
    scrapy addsite http://home/ --key k --write -s REPLAY_ARCHIVE=site.warc.gz -s SITES_FILE=my.toml

Discovery (:mod:`newsspider.discovery.discover`) fetches through Scrapy's downloader, so
robots.txt, ``DOWNLOAD_DELAY``, ``USER_AGENT`` and ``REPLAY_ARCHIVE`` work as in a crawl,
with at most ``DISCOVERY_MAX_FETCHES`` fetches. It prints every proposed field and, per
URL group, the sampled pages with title, time and body length, the decision and why.
``--write`` adds the row to the user's sites file (``SITES_FILE``, created when missing);
then ``scrapy crawl KEY``, ``scrapy nightly``, cluster mode and re-extraction treat it like
a built-in site.

Before anything is written, the crawl the row describes is replayed over the pages
discovery fetched (:mod:`newsspider.discovery.reach`) and its reach printed: of the article
URLs seen, how many the row's start pages, list patterns, feeds and depth get to, and why
the others are out of reach. ``--write`` refuses a row that reaches less than
``ADDSITE_MIN_REACH`` (0.9) of them unless ``--force`` is given.

Exit status: 0 a row was proposed (and written with ``--write``); 2 bad input (a URL that
is not http(s), a key that exists, an unknown time zone, a home page that is not HTML);
3 the home page could not be fetched, or no group of its links is articles, or (with
``--write`` and without ``--force``) the row's reach is under ``ADDSITE_MIN_REACH``.
Nothing is written unless the status is 0.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import ClassVar

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand, time_zone
from newsspider.discovery.discover import EXIT_NOTHING_FETCHED, reach_refusal
from newsspider.discovery.spider import DiscoverySpider
from newsspider.errors import UserError
from newsspider.preflight import check_settings
from newsspider.sites import SITES, sites_file
from newsspider.sites.write import add_site

_KEY = re.compile(r"[a-z][a-z0-9_]*")


class Command(NewsCommand):
    default_settings: ClassVar[dict] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "URL [--key K] [--name N] [--tz ZONE] [--write [--force]]"

    def short_desc(self) -> str:
        return "Discover a news site from its home page and propose (or write) its row"

    def long_desc(self) -> str:
        return (
            "Fetch a site's home page, feeds, sitemaps and section pages (through Scrapy's "
            "downloader, at most DISCOVERY_MAX_FETCHES fetches), group their links by URL "
            "shape, extract samples of each group, and propose the site's row: article and "
            "list URL patterns, start pages, feeds, time zone, title suffixes, encoding. "
            "The crawl the row describes is replayed over the fetched pages and its reach "
            "reported; --write adds the row to SITES_FILE, refusing one that reaches under "
            "ADDSITE_MIN_REACH of the article URLs seen unless --force. Exit status: 0 "
            "proposed, 2 bad input, 3 nothing fetched, no article links found or reach too "
            "low; nothing is written unless 0."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--key", help="the site's key (default: from its domain)")
        parser.add_argument("--name", help="the outlet's name (default: from its pages)")
        parser.add_argument("--tz", help="IANA zone of its times (default: guessed)")
        parser.add_argument(
            "--write", action="store_true", help="add the row to SITES_FILE (created if missing)"
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="with --write: write the row even when its reach is under ADDSITE_MIN_REACH",
        )

    def check(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give exactly one URL, the site's home page", print_help=False)
        url = args[0]
        if not re.match(r"https?://[^\s/]+", url):
            raise UserError(f"{url!r} is not an http:// or https:// URL")
        if opts.key is not None:
            if not _KEY.fullmatch(opts.key):
                raise UserError(
                    f"--key {opts.key!r}: a key is a lowercase identifier ([a-z][a-z0-9_]*)"
                )
            if opts.key in SITES:
                raise UserError(
                    f"--key {opts.key!r} exists ({SITES[opts.key].origin}); choose another key"
                )
        if opts.tz is not None:
            time_zone(opts.tz)
        assert self.settings is not None
        check_settings(self.settings)

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.crawler_process is not None and self.settings is not None
        crawler = self.crawler_process.create_crawler(DiscoverySpider)
        self.crawler_process.crawl(
            crawler, home=args[0], key=opts.key, source=opts.name, tz=opts.tz
        )
        self.crawler_process.start()
        spider = crawler.spider
        if spider is None or (spider.result is None and spider.error is None):
            self.exitcode = 1
            return
        if spider.error is not None:
            print(f"scrapy addsite: error: {spider.error}", file=sys.stderr)  # noqa: T201
            self.exitcode = spider.error.exit_code
            return
        discovery = spider.result
        print(discovery.report())  # noqa: T201
        if discovery.site.key in SITES:
            print(  # noqa: T201
                f"scrapy addsite: error: the key {discovery.site.key!r} exists "
                f"({SITES[discovery.site.key].origin}); give --key",
                file=sys.stderr,
            )
            self.exitcode = 2
            return
        if opts.write and not opts.force:
            refused = reach_refusal(discovery, self.settings.getfloat("ADDSITE_MIN_REACH"))
            if refused:
                print(f"scrapy addsite: error: {refused}", file=sys.stderr)  # noqa: T201
                self.exitcode = EXIT_NOTHING_FETCHED
                return
        if opts.write:
            path = sites_file(self.settings)
            try:
                add_site(path, discovery.site)
            except UserError as exc:
                print(f"scrapy addsite: error: {exc}", file=sys.stderr)  # noqa: T201
                self.exitcode = 2
                return
            key = discovery.site.key
            print(  # noqa: T201
                f"wrote [{key}] to {path}; next: scrapy sites check {key}, then scrapy crawl {key}"
            )
