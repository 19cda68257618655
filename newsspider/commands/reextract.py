"""``scrapy reextract [--site S] [--since WHEN] [--json] [ARCHIVES...]``: re-extract stored
articles from WARC archives with the current extractor.

Runs :func:`newsspider.reextract.reextract` on the database of ``DATABASE_URL``: every
archived page whose URL is stored is extracted again (``EXTRACTOR``, in
``REEXTRACT_WORKERS`` processes), cleaned with its site's line table and rewritten in
place. Without ``ARCHIVES`` it reads what the nightly run recorded under
``NIGHTLY_WARC_DIR`` (``<site>/<date>.warc.gz``; only ``<site>/`` with ``--site``).
``--since`` (``YYYY-MM-DD`` or an ISO 8601 time, in ``--tz`` when it has no offset) keeps
records fetched from then on. Prints how many rows were rewritten, how many bodies
changed, and every skipped page by reason.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand, time_zone
from newsspider.extraction.registry import get_extractor
from newsspider.paths import project_path
from newsspider.progress import progress_bar
from newsspider.reextract import default_archives, parse_reextract_workers, reextract
from newsspider.storage import check_database, create_schema, resolve_database_url


class Command(NewsCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[--site SITE] [--since WHEN] [--json] [ARCHIVE ...]"

    def short_desc(self) -> str:
        return "Re-extract stored articles from WARC archives with the current extractor"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--site", default=None, help="only this site's stored articles")
        parser.add_argument(
            "--since", default=None, help="only records fetched at or after (date or time)"
        )
        parser.add_argument("--tz", default="Asia/Shanghai", help="zone of --since")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        s = self.settings
        since = _since(opts.since, opts.tz) if opts.since else None
        method = s.get("EXTRACTOR")
        try:
            get_extractor(method)
            workers = parse_reextract_workers(s.get("REEXTRACT_WORKERS"))
        except ValueError as exc:
            raise UsageError(str(exc), print_help=False) from None
        if args:
            archives = [Path(a) for a in args]
            missing = [str(a) for a in archives if not a.is_file()]
            if missing:
                raise UsageError(f"no such archive: {', '.join(missing)}", print_help=False)
        else:
            root = project_path(s.get("NIGHTLY_WARC_DIR"))
            archives = default_archives(root, opts.site)
            if not archives:
                where = root / opts.site if opts.site else root
                raise UsageError(f"no archives under {where} (*.warc.gz)", print_help=False)
        engine = check_database(s)
        create_schema(engine)
        total = sum(a.stat().st_size for a in archives) // 1024
        with progress_bar(total, desc="reextract", unit="KiB", enabled=not opts.json) as bar:
            report = reextract(
                engine,
                archives,
                method=method,
                site=opts.site,
                since=since,
                workers=workers,
                max_tasks=s.getint("EXTRACTION_WORKER_MAX_TASKS"),
                linehash=s.getbool("LINEHASH_ENABLED"),
                L=s.getint("LINEHASH_L"),
                database_url=resolve_database_url(s.get("DATABASE_URL")),
                progress=bar.update,
            )
        out = report.as_dict()
        if opts.json:
            print(json.dumps(out, ensure_ascii=False, indent=2))  # noqa: T201
            return
        skipped = ", ".join(f"{k} {v}" for k, v in out["skipped"].items()) or "none"
        print(  # noqa: T201
            f"{report.archives} archives, {report.records} records, {report.pages} pages of "
            f"stored articles: {report.rewritten} rewritten ({report.bodies_changed} bodies, "
            f"{report.titles_changed} titles, {report.times_changed} times changed), "
            f"{report.unchanged} unchanged; skipped: {skipped}"
        )


def _since(value: str, tz: str) -> datetime:
    zone = time_zone(tz)
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"--since {value!r}: give YYYY-MM-DD or an ISO 8601 time", print_help=False
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=zone)
