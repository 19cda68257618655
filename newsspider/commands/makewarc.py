"""``scrapy makewarc DATASET_DIR... -o OUT.warc.gz``: a replay archive from datasets.

Builds a WARC with :func:`newsspider.replay.build_warc` (every saved page at
its URL, bytes unchanged, ``Content-Type: text/html`` without a charset, plus
list pages linking them all) so a spider can crawl the saved pages offline::

    scrapy makewarc newsspider/demo/pages/netease -o netease.warc.gz
    scrapy crawl netease -s REPLAY_ARCHIVE=netease.warc.gz

Prints the start URL and the counts; it needs no crawler.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import ClassVar

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand
from newsspider.evaluation import count_cases
from newsspider.progress import progress_bar
from newsspider.replay import build_warc


class Command(NewsCommand):
    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "[options] DATASET_DIR... -o OUT.warc.gz"

    def short_desc(self) -> str:
        return "Build a WARC replay archive from dataset folders"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "-o", "--output", metavar="OUT", help="archive to write (.warc or .warc.gz)"
        )
        parser.add_argument(
            "--start-url",
            default="http://replay.local/start.html",
            help="URL of the first list page (default %(default)s)",
        )
        parser.add_argument(
            "--base-url",
            default=None,
            help="base of the URLs given to pages without one (default http://replay.local/)",
        )
        parser.add_argument(
            "--match", metavar="REGEX", default=None, help="keep pages whose URL matches"
        )
        parser.add_argument(
            "--per-page", type=int, default=50, help="links per list page (default: 50)"
        )

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one DATASET_DIR")
        if not opts.output:
            raise UsageError("give the archive to write with -o OUT.warc.gz")
        if opts.per_page < 1:
            raise UsageError("--per-page must be at least 1")
        if opts.match:
            try:
                re.compile(opts.match)
            except re.error as exc:
                raise UsageError(f"bad --match regex: {exc}") from exc
        dirs = [Path(a) for a in args]
        for d in dirs:
            if not (d / "cases.jsonl").is_file():
                raise UsageError(f"{d} is not a dataset folder (no cases.jsonl)")
        with progress_bar(sum(map(count_cases, dirs)), desc="makewarc", unit="page") as bar:
            result = build_warc(
                dirs,
                Path(opts.output),
                base_url=opts.base_url,
                start_page_url=opts.start_url,
                per_page=opts.per_page,
                match=opts.match,
                progress=bar.update,
            )
        print(f"wrote {opts.output}: {result.count} pages, {len(result.list_urls)} list pages")  # noqa: T201
        if result.duplicates:
            print(f"skipped {result.duplicates} pages whose URL was already written")  # noqa: T201
        print(f"start URL: {result.start_url}")  # noqa: T201
