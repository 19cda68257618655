"""``scrapy reclean [--site S] [--due] [--json]``: re-clean stored articles.

Runs :func:`newsspider.storage.reclean` (the matured line table of each site applied to
the ``raw_text`` of its stored articles, Li & Jiang 2012 §2.2) on the database of the
``DATABASE_URL`` setting and prints per site how many articles changed and how many
lines were removed or restored. ``--due`` limits it to the sites whose ``RC`` has grown by
``RECLEAN_GROWTH`` since their last re-clean (first time: ``RC >= RECLEAN_MIN_RC``), which is
what an unattended nightly run wants.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, ClassVar

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand
from newsspider.progress import progress_bar
from newsspider.storage import check_database, create_schema, reclean_plan, reclean_sites


class Command(NewsCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[--site SITE] [--due] [--json]"

    def short_desc(self) -> str:
        return "Re-apply the matured line tables to stored articles (Li & Jiang §2.2)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--site", default=None, help="only this site (key)")
        parser.add_argument(
            "--due", action="store_true", help="only sites whose table grew by RECLEAN_GROWTH"
        )
        parser.add_argument("--json", action="store_true", help="print JSON")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if args:
            raise UsageError("reclean takes no arguments, only options")
        assert self.settings is not None
        s = self.settings
        L = s.getint("LINEHASH_L")
        growth = s.getfloat("RECLEAN_GROWTH")
        min_RC = s.getint("RECLEAN_MIN_RC")
        if growth < 1:
            raise UsageError("RECLEAN_GROWTH must be at least 1", print_help=False)
        engine = check_database(s)
        create_schema(engine)
        try:
            plan = reclean_plan(
                engine, opts.site, growth=growth if opts.due else None, min_RC=min_RC
            )
        except LookupError as exc:
            raise UsageError(str(exc.args[0]), print_help=False) from None
        with progress_bar(sum(plan.values()), desc="reclean", unit="article") as bar:
            reports = reclean_sites(engine, plan, L=L, progress=bar.update)
        if opts.json:
            out = {k: r.as_dict() for k, r in reports.items()}
            print(json.dumps(out, ensure_ascii=False, indent=2))  # noqa: T201
            return
        if not reports:
            print("no site is due for a re-clean" if opts.due else "no stored articles")  # noqa: T201
            return
        header = ("site", "RC", "articles", "changed", "lines removed", "lines restored")
        rows = [
            (k, r.RC, r.articles, r.changed, r.lines_removed, r.lines_restored)
            for k, r in reports.items()
        ]
        widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())  # noqa: T201
