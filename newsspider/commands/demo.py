"""``scrapy demo``: an offline crawl of saved pages into the configured database.

Options, then a call into :mod:`newsspider.demo`: the saved pages shipped in
``newsspider/demo/pages`` (NetEase, Sina, Tencent and Zaobao) become one replay archive in
a temporary folder, each site's spider crawls it (``REPLAY_ARCHIVE``: nothing touches the
network) and the stored articles are printed. ``--datasets DIR`` crawls the pages of other
folders in the same layout instead. Running it twice stores nothing new: re-crawled URLs
update their rows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand
from newsspider.demo import PAGES, build_demo_archive, print_report
from newsspider.storage import Corpus, check_database, display_url


class Command(NewsCommand):
    requires_project = True
    default_settings = {"LOG_LEVEL": "WARNING"}  # noqa: RUF012

    def syntax(self) -> str:
        return "[options]"

    def short_desc(self) -> str:
        return "Crawl the saved pages of the four paper sites (no network) into the database"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--datasets",
            type=Path,
            default=None,
            help="crawl the pages of the folders holding a cases.jsonl under DIR instead of "
            "the saved pages shipped in newsspider/demo/pages",
        )

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        source = opts.datasets or PAGES
        if not source.is_dir():
            raise UsageError(f"no folder at {source}", print_help=False)
        with tempfile.TemporaryDirectory(prefix="newsspider-demo-") as work:
            archive = build_demo_archive(Path(work) / "demo.warc.gz", sources=(source,))
            if not archive.urls:
                raise UsageError(f"no page of the paper sites under {source}", print_help=False)
            for site, urls in archive.urls.items():
                start = archive.start_urls[site]
                print(f"{site}: {len(urls)} saved pages, start page {start}")  # noqa: T201
            self.settings.set("REPLAY_ARCHIVE", str(archive.path), priority="cmdline")
            for site, start in archive.start_urls.items():
                self.crawler_process.crawl(site, start_urls=start)
            self.crawler_process.start()

        engine = check_database(self.settings)
        print(f"\nstored in {display_url(engine)}:")  # noqa: T201
        print_report(Corpus(engine), archive.urls, sys.stdout)
        self.exitcode = int(bool(self.crawler_process.bootstrap_failed))
