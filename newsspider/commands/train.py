"""``scrapy train SITE``: learn a site's xpath thresholds (Hou & Yang 2011 §3.3) and store them.

Per sample page, the middle centroid of a 1-D k-means (``Clusternum = 3``) of the
``Length`` and of the ``B_n`` values of all its xpath clusters (eq. (6), (8)); over the
``M`` pages, the minimum of each (eq. (9), (11)). The result goes to the
``xpath_thresholds`` table (``newsspider/storage/thresholds.py``) of ``DATABASE_URL``,
replacing the site's earlier row, and the ``xpath`` method uses it for that site.

The samples must be raw HTML, which the corpus does not keep (``articles`` stores the
extracted text), so they come from one of:

* ``--dataset DIR``: a dataset folder (``cases.jsonl`` + ``html/``, the layout of
  ``../shared/datasets``): its pages whose ``site`` or URL lies in the site's
  ``allowed_domains``, in file order, or every page with ``--all-pages`` (a folder saved
  for one site, whatever its cases say);
* ``--warc FILE``: the site's *stored articles*, newest first, read from a WARC archive
  that holds their responses (a crawl recorded with ``-s WARC_OUTPUT=FILE``, or one built
  by ``scrapy makewarc``). Articles the archive lacks are skipped.

``--pages N`` (default 20) is ``M``, the number of sample pages used. Pages that are not
HTML or have no text are skipped and do not count. ``--dry-run`` prints without storing.
"""

from __future__ import annotations

import argparse
import json
import logging
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from sqlalchemy import select
from sqlalchemy.orm import Session

from newsspider.evaluation import load_cases
from newsspider.extraction.errors import ExtractionError
from newsspider.extraction.xpathseg import CLUSTERNUM, Thresholds, page_thresholds, train_thresholds
from newsspider.replay import WarcIndex
from newsspider.sites import SITES, Site
from newsspider.storage import Article, create_schema, engine_for, resolve_database_url
from newsspider.storage.thresholds import create_thresholds_table, save_thresholds

logger = logging.getLogger(__name__)

#: ``--pages`` default: the number ``M`` of sample pages.
DEFAULT_PAGES = 20


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample page: a name to print, its bytes and HTTP headers (for the charset)."""

    name: str
    html: bytes
    headers: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Trained:
    """The per-page thresholds of the samples used and their minimum (None: no usable page)."""

    result: Thresholds | None
    pages: list[tuple[str, Thresholds]]
    skipped: list[tuple[str, str]]  # (name, reason)


def train_site(samples: Iterator[Sample], pages: int, k: int = CLUSTERNUM) -> Trained:
    """Eq. (6)-(11) over the first ``pages`` usable samples."""
    used: list[tuple[str, Thresholds]] = []
    skipped: list[tuple[str, str]] = []
    for sample in samples:
        if len(used) >= pages:
            break
        try:
            found = page_thresholds(sample.html, headers=sample.headers, Clusternum=k)
        except ExtractionError as exc:
            skipped.append((sample.name, f"not HTML: {exc}"))
            continue
        if found is None:
            skipped.append((sample.name, "no text"))
            continue
        used.append((sample.name, found))
    return Trained(train_thresholds(t for _, t in used), used, skipped)


def _in_domains(host: str, domains: Sequence[str]) -> bool:
    host = host.lower().strip(".")
    return any(host == d or host.endswith("." + d) for d in domains)


def dataset_samples(directory: Path, site: Site | None) -> Iterator[Sample]:
    """The pages of a dataset folder that belong to ``site`` (all of them for None)."""
    for case in load_cases(directory):
        if site is not None:
            ours = (case.site is not None and _in_domains(case.site, site.allowed_domains)) or (
                case.url is not None and site.owns(case.url)
            )
            if not ours:
                continue
        yield Sample(f"{directory.name}/{case.id}", case.html)


def _decoded_body(body: bytes, headers: Sequence[tuple[str, str]]) -> bytes | None:
    """The body without its Content-Encoding (a WARC keeps what the server sent)."""
    coding = next((v for k, v in headers if k.lower() == "content-encoding"), "").strip().lower()
    if coding in ("", "identity"):
        return body
    if coding in ("gzip", "x-gzip", "deflate"):
        try:
            return zlib.decompress(body, zlib.MAX_WBITS | 32)  # gzip or zlib header
        except zlib.error:
            try:
                return zlib.decompress(body, -zlib.MAX_WBITS)  # raw deflate
            except zlib.error:
                return None
    return None


def warc_samples(archive: Path, urls: Sequence[str]) -> Iterator[Sample]:
    """The archived responses of ``urls`` (stored articles), in the given order."""
    index = WarcIndex(archive)
    try:
        for url in urls:
            record = index.get(url)
            if record is None or not 200 <= record.status < 300:
                continue
            body = _decoded_body(record.body, record.headers)
            if body is None:
                logger.warning("train: %s has an encoding we cannot undo; skipped", url)
                continue
            headers = {k: v for k, v in record.headers if k.lower() == "content-type"}
            yield Sample(url, body, headers or None)
    finally:
        index.close()


def stored_urls(database_url: str, site: str, busy_timeout: float) -> list[str]:
    """URLs of the site's stored articles, newest fetch first."""
    engine = engine_for(database_url, busy_timeout=busy_timeout)
    create_schema(engine)  # a new database: no articles yet, not an error
    with Session(engine) as session:
        stmt = (
            select(Article.url)
            .where(Article.site == site)
            .order_by(Article.fetched_at.desc(), Article.id.desc())
        )
        return list(session.scalars(stmt))


class Command(ScrapyCommand):
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

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
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
        s = self.settings
        database_url = resolve_database_url(s.get("DATABASE_URL"))
        busy_timeout = s.getfloat("NEWS_DB_BUSY_TIMEOUT", 30.0)
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
            urls = stored_urls(database_url, site_key, busy_timeout)
            if not urls:
                raise UsageError(f"no stored articles of site {site_key!r}", print_help=False)
            samples = warc_samples(opts.warc, urls)
        trained = train_site(samples, opts.pages)
        if trained.result is None:
            print(f"no usable sample page for {site_key}; nothing stored")  # noqa: T201
            self.exitcode = 1
            return
        if not opts.dry_run:
            self._store(database_url, busy_timeout, site_key, trained.result)
        self._print(site_key, trained, opts)

    @staticmethod
    def _store(database_url: str, busy_timeout: float, site: str, result: Thresholds) -> None:
        engine = engine_for(database_url, busy_timeout=busy_timeout)
        create_thresholds_table(engine)
        with Session(engine) as session, session.begin():
            save_thresholds(session, site, result)

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
