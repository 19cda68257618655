"""``scrapy demo``: an offline crawl of saved pages into the default database.

Builds a WARC replay archive from ../shared/datasets (NetEase pages of
cx163-zh, Sina pages of gne-unlabelled-zh, the Zaobao pages written for the
tests), crawls each site's spider through it (``REPLAY_ARCHIVE``: nothing
touches the network) and prints what was stored. Running it twice stores
nothing new: re-crawled URLs update their rows.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.conf import closest_scrapy_cfg
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from newsspider.replay import build_warc
from newsspider.sites import SITES
from newsspider.storage import Article, engine_for, resolve_database_url

# site -> (dataset folder relative to the datasets dir or the repo, URL filter, start page)
DEMO_SOURCES = {
    "netease": ("cx163-zh", r"163\.com", "http://money.163.com/demo/start.html"),
    "sina": ("gne-unlabelled-zh", r"sina\.com\.cn", "https://news.sina.com.cn/demo/start.html"),
    "zaobao": (
        "tests/fixtures/zaobao",
        r"zaobao",
        "https://www.zaobao.com.sg/demo/start.html",
    ),
}


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_LEVEL": "WARNING"}  # noqa: RUF012

    def syntax(self) -> str:
        return "[options]"

    def short_desc(self) -> str:
        return "Crawl saved pages (a WARC built from ../shared/datasets) into the database"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--datasets", default=None, help="datasets folder (../shared/datasets)")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        repo = Path(closest_scrapy_cfg()).parent
        datasets = Path(opts.datasets) if opts.datasets else repo.parent / "shared" / "datasets"
        if not datasets.is_dir():
            raise UsageError(f"no datasets folder at {datasets} (use --datasets)")
        work = repo / "data" / "demo"
        work.mkdir(parents=True, exist_ok=True)
        archive = work / "demo.warc.gz"
        parts = []
        starts = {}
        for site, (folder, match, start) in DEMO_SOURCES.items():
            source = repo / folder if folder.startswith("tests/") else datasets / folder
            if not source.is_dir():
                print(f"skipping {site}: {source} not found")  # noqa: T201
                continue
            part = work / f"{site}.warc.gz"
            built = build_warc([source], part, start_page_url=start, per_page=1000, match=match)
            parts.append(part)
            starts[site] = built.start_url
            print(f"{site}: {built.count} saved pages, start page {built.start_url}")  # noqa: T201
        with open(archive, "wb") as out:  # a .warc.gz is a series of gzip members
            for part in parts:
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, out)
                part.unlink()

        self.settings.set("REPLAY_ARCHIVE", str(archive), priority="cmdline")
        for site, start in starts.items():
            self.crawler_process.crawl(site, start_urls=start)
        self.crawler_process.start()

        url = resolve_database_url(self.settings.get("DATABASE_URL"))
        print(f"\nstored in {url}:")  # noqa: T201
        with Session(engine_for(url)) as s:
            counts = s.execute(
                select(Article.site, func.count()).group_by(Article.site).order_by(Article.site)
            ).all()
            for site, n in counts:
                print(f"  {site:10s} {n:5d} articles")  # noqa: T201
            for a in s.scalars(select(Article).order_by(Article.published.desc()).limit(5)):
                zone = SITES[a.site].zone if a.site in SITES else None
                when = a.published.astimezone(zone).isoformat() if a.published else "-"
                first = a.content.split("\n", 1)[0][:40]
                print(f"  {when}  [{a.site}] {a.title}\n      {first}…")  # noqa: T201
        self.exitcode = int(bool(self.crawler_process.bootstrap_failed))
