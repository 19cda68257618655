"""``scrapy train SITE``: learn a site's xpath thresholds (Hou & Yang 2011 §3.3) and store them.

Per sample page, the middle centroid of a 1-D k-means (``Clusternum = 3``) of the
``Length`` and of the ``B_n`` values of all its xpath clusters (eq. (6), (8)); over the
``M`` pages, the minimum of each (eq. (9), (11)). The result goes to the
``xpath_thresholds`` table of ``DATABASE_URL``,
replacing the site's earlier row, and the ``xpath`` method uses it for that site.

The samples must be raw HTML, which the corpus does not keep (``articles`` stores the
extracted text), so they come from one of:

* ``--dataset DIR``: a dataset folder (``cases.jsonl`` + ``html/``, one file per
  page): its pages whose ``site`` or URL lies in the site's
  ``allowed_domains``, in file order, or every page with ``--all-pages`` (a folder saved
  for one site, whatever its cases say);
* ``--warc FILE``: the site's *stored articles*, newest first, read from a WARC archive
  that holds their responses (a crawl recorded with ``-s WARC_OUTPUT=FILE``, or one built
  by ``scrapy makewarc``). Articles the archive lacks are skipped.

``--pages N`` (default 20) is ``M``, the number of sample pages used. Pages that are not
HTML or have no text are skipped and do not count. ``--dry-run`` prints without storing.
The sampling and training are :mod:`newsspider.training`; this is the command around it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, ClassVar

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand
from newsspider.extraction.xpathseg import Thresholds
from newsspider.progress import progress_bar
from newsspider.sites import SITES
from newsspider.storage import (
    Engine,
    check_database,
    create_schema,
    save_thresholds,
    session,
    stored_urls,
    transaction,
)
from newsspider.training import Trained, dataset_samples, train_site, warc_samples

#: ``--pages`` default: the number ``M`` of sample pages.
DEFAULT_PAGES = 20


class Command(NewsCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "SITE (--dataset DIR | --warc FILE) [--pages N] [--all-pages] [--dry-run] [--json]"

    def short_desc(self) -> str:
        return "Learn a site's xpath thresholds (Hou & Yang §3.3) from sample pages"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--dataset", type=Path, default=None, help="a dataset folder")
        parser.add_argument(
            "--warc", type=Path, default=None, help="WARC holding the stored articles' pages"
        )
        parser.add_argument(
            "--pages", type=int, default=DEFAULT_PAGES, help="sample pages M (default 20)"
        )
        parser.add_argument(
            "--all-pages", action="store_true", help="--dataset: every page, not the site's only"
        )
        parser.add_argument("--dry-run", action="store_true", help="print, do not store")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give exactly one SITE")
        site_key = args[0]
        if opts.pages < 1:
            raise UsageError("--pages must be at least 1", print_help=False)
        if (opts.dataset is None) == (opts.warc is None):
            raise UsageError(
                "give --dataset DIR or --warc FILE: the database keeps no raw HTML, "
                "so samples come from a dataset folder or from a WARC of the stored pages",
                print_help=False,
            )
        assert self.settings is not None
        engine = check_database(self.settings)
        site = SITES.get(site_key)
        if opts.dataset is not None:
            if not (opts.dataset / "cases.jsonl").is_file():
                raise UsageError(f"{opts.dataset} is not a dataset folder", print_help=False)
            if site is None and not opts.all_pages:
                raise UsageError(
                    f"unknown site {site_key!r} (known: {', '.join(SITES)}); "
                    "--all-pages trains it on every page of the folder",
                    print_help=False,
                )
            samples = dataset_samples(opts.dataset, None if opts.all_pages else site)
        else:
            if not opts.warc.is_file():
                raise UsageError(f"no such archive: {opts.warc}", print_help=False)
            create_schema(engine)  # a new database: no articles yet, not an error
            with session(engine) as s:
                urls = stored_urls(s, site_key)
            if not urls:
                raise UsageError(f"no stored articles of site {site_key!r}", print_help=False)
            samples = warc_samples(opts.warc, urls)
        with progress_bar(opts.pages, desc="train", unit="page") as bar:
            trained = train_site(samples, opts.pages, progress=bar.update)
        if trained.result is None:
            print(f"no usable sample page for {site_key}; nothing stored")  # noqa: T201
            self.exitcode = 1
            return
        if not opts.dry_run:
            self._store(engine, site_key, trained.result)
        self._print(site_key, trained, opts)

    @staticmethod
    def _store(engine: Engine, site: str, result: Thresholds) -> None:
        create_schema(engine)
        with transaction(engine) as s:
            save_thresholds(s, site, result)

    @staticmethod
    def _print(site: str, trained: Trained, opts: argparse.Namespace) -> None:
        result = trained.result
        assert result is not None
        if opts.json:
            out = {
                "site": site,
                "Length_Threshold": result.Length_Threshold,
                "B_n_Threshold": result.B_n_Threshold,
                "pages": result.pages,
                "stored": not opts.dry_run,
                "samples": [
                    {
                        "page": n,
                        "Length_Threshold": t.Length_Threshold,
                        "B_n_Threshold": t.B_n_Threshold,
                    }
                    for n, t in trained.pages
                ],
                "skipped": [{"page": n, "reason": r} for n, r in trained.skipped],
            }
            print(json.dumps(out, ensure_ascii=False, indent=2))  # noqa: T201
            return
        width = max(len(n) for n, _ in trained.pages)
        print(f"{'page':<{width}}  Length_Threshold  B_n_Threshold")  # noqa: T201
        for name, t in trained.pages:
            print(f"{name:<{width}}  {t.Length_Threshold:16.2f}  {t.B_n_Threshold:13.4f}")  # noqa: T201
        for name, reason in trained.skipped:
            print(f"skipped {name}: {reason}")  # noqa: T201
        action = "not stored (--dry-run)" if opts.dry_run else "stored in xpath_thresholds"
        print(  # noqa: T201
            f"{site}: Length_Threshold = {result.Length_Threshold:.2f}, "
            f"B_n_Threshold = {result.B_n_Threshold:.4f} (minimum over M = {result.pages} pages); "
            f"{action}"
        )
