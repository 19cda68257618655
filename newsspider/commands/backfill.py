"""``scrapy backfill SITE... --since DAY``: a site's earlier years from a web archive.

::

    scrapy backfill netease --since 2016-01-01 --until 2019-12-31 --archive cc:CC-MAIN-2019-35
    scrapy backfill zaobao sina --since 2020-01-01 --archive wayback --limit 500
    scrapy backfill netease --since 2015-01-01 --cdx http://127.0.0.1:8080/cc/cdx --data http://127.0.0.1:8081/
    scrapy backfill --warc CC-NEWS-20240301000000-00001.warc.gz https://example.org/crawl.warc.gz

The crawl is :class:`~newsspider.backfill.spider.BackfillSpider`: the sites' domains
queried in the archive's CDX index, the article captures in range fetched once each, and
stored through the same extraction, line table, reprints and storage as ``scrapy crawl``,
each row saying which archive and capture it came from. A second run fetches only what
is new; a stopped one resumes. With ``REDIS_URL``, every worker running the same command
shares the work. Exit statuses as ``scrapy crawl``'s.

With ``--warc FILE_OR_URL...`` no index is asked: the files themselves (local ``.warc``
or ``.warc.gz``, or ``http(s)`` URLs read as a stream) are scanned for the article pages
of the named sites, or of every site of the table when none is named
(:class:`~newsspider.backfill.warcspider.WarcBackfillSpider`); ``--since`` and ``--until``
are then optional filters on the capture day. The scan reads on one machine:
``REDIS_URL`` does not share it.
"""

from __future__ import annotations

import argparse
from datetime import date
from typing import ClassVar

from scrapy.exceptions import UsageError

from newsspider.backfill.cdx import archive_from_options
from newsspider.backfill.spider import BackfillSpider
from newsspider.backfill.warcscan import is_url, local_missing
from newsspider.backfill.warcspider import WarcBackfillSpider
from newsspider.cli import NewsCommand
from newsspider.cluster import check_redis, enable_cluster
from newsspider.errors import UserError
from newsspider.extensions import exit_status
from newsspider.outcome import EXIT_STATUSES
from newsspider.preflight import check_crawl
from newsspider.sites import SITES


def _day(option: str, value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UserError(f"{option} {value!r}: give a day as YYYY-MM-DD") from None


class Command(NewsCommand):
    default_settings: ClassVar[dict] = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return (
            "SITE [SITE...] --since DAY [--until DAY] "
            "(--archive cc:CRAWL[,CRAWL] | --archive wayback | --cdx URL --data URL) [--limit N]"
            " | [SITE...] --warc FILE_OR_URL [FILE_OR_URL...] [--since DAY] [--until DAY]"
        )

    def short_desc(self) -> str:
        return "Store a site's earlier articles from a web archive (Common Crawl, Wayback, CDX)"

    def long_desc(self) -> str:
        table = "; ".join(f"{status} {meaning}" for status, meaning in EXIT_STATUSES[:-1])
        return (
            "Query a web archive's CDX index for the sites' domains, fetch each article "
            "capture in the range once (the latest per URL), and store it as a crawl does, "
            "with the archive and capture time. Resumable; a second run fetches only what "
            f"is new; REDIS_URL shares it across workers. With --warc, read whole WARC files "
            "(paths or http(s) URLs, as a stream) instead, keeping the article pages of the "
            f"named sites (all sites when none is named). Exit status: {table}."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--since", metavar="DAY", help="first day (YYYY-MM-DD), required")
        parser.add_argument("--until", metavar="DAY", help="last day (YYYY-MM-DD); default: none")
        parser.add_argument(
            "--archive", help="cc:CC-MAIN-YYYY-WW[,CC-MAIN-...] (Common Crawl) or wayback"
        )
        parser.add_argument("--cdx", metavar="URL", help="any CDX server answering CC's API")
        parser.add_argument("--data", metavar="URL", help="prefix of the --cdx archive's files")
        parser.add_argument("--limit", type=int, help="stop after N records")
        parser.add_argument(
            "--warc",
            nargs="+",
            action="extend",
            metavar="FILE_OR_URL",
            help="read these WARC files (.warc, .warc.gz; paths or http(s) URLs) instead of "
            "an archive's index; SITE and --since are then optional",
        )

    def check(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args and not opts.warc:
            raise UsageError("name the sites to backfill (scrapy sites list)", print_help=False)
        unknown = [key for key in args if key not in SITES]
        if unknown:
            raise UserError(
                f"unknown site(s) {', '.join(unknown)}; the sites are: {', '.join(SITES)}"
            )
        opts.since_day = _day("--since", opts.since)
        if opts.since_day is None and not opts.warc:
            raise UserError("--since DAY is required (YYYY-MM-DD)")
        opts.until_day = _day("--until", opts.until)
        if opts.until_day is not None and opts.since_day and opts.until_day < opts.since_day:
            raise UserError(f"--until {opts.until} is before --since {opts.since}")
        if opts.limit is not None and opts.limit < 1:
            raise UserError(f"--limit must be a positive number of records, not {opts.limit}")
        if opts.warc:
            self._check_warc(opts)
            return
        try:
            opts.archives = archive_from_options(opts.archive, opts.cdx, opts.data)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        assert self.settings is not None
        check_crawl(self.settings)
        check_redis(self.settings)

    def _check_warc(self, opts: argparse.Namespace) -> None:
        if opts.archive or opts.cdx or opts.data:
            raise UserError("give --warc or an archive (--archive, --cdx/--data), not both")
        odd = [w for w in opts.warc if "://" in w and not is_url(w)]
        if odd:
            raise UserError(f"--warc {odd[0]!r}: give a local path or an http(s) URL")
        missing = local_missing(opts.warc)
        if missing:
            raise UserError(f"--warc: no such file: {', '.join(missing)}")
        assert self.settings is not None
        check_crawl(self.settings)

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.crawler_process is not None
        if opts.warc:
            crawler = self.crawler_process.create_crawler(WarcBackfillSpider)
            self.crawler_process.crawl(
                crawler,
                warcs=list(dict.fromkeys(opts.warc)),
                sites=list(dict.fromkeys(args)),
                since=opts.since_day,
                until=opts.until_day,
                limit=opts.limit,
            )
        else:
            enable_cluster(self.crawler_process.settings)
            crawler = self.crawler_process.create_crawler(BackfillSpider)
            self.crawler_process.crawl(
                crawler,
                sites=list(dict.fromkeys(args)),
                archives=opts.archives,
                since=opts.since_day,
                until=opts.until_day,
                limit=opts.limit,
            )
        self.crawler_process.start()
        self.exitcode = exit_status(crawler, self.crawler_process.bootstrap_failed)
