"""Re-extraction of a stored corpus from its WARC archives (``scrapy reextract``).

A user who upgrades newsspider wants every stored article extracted again with the new
extractor. The nightly run records every fetched page (``NIGHTLY_WARC_DIR``,
``data/warc/<site>/<date>.warc.gz``); :func:`reextract` reads such archives record by
record, sends each archived page whose URL is stored to the extraction worker processes
of :mod:`newsspider.workers` (one per core by default, ``REEXTRACT_WORKERS``), cleans the
new body with its site's line table as it stands (Li & Jiang 2012 §2.2, applied without
learning: the pages were counted when they were crawled, as in ``scrapy reclean``) and
rewrites the row in place: same id, same URL, same ``fetched_at``.

What a fresh crawl with the same extractor would store, it stores: the same headers
(``ITEM_HEADERS`` of the spider, from the record), the body decoded from its
``Content-Encoding``, the same drop rules (:class:`ExtractionPipeline`'s); only the line
table differs, being today's matured table rather than one learning page by page.

Never loses an article: a page is skipped, and its stored row left as it was, with a
counted reason (:data:`SKIP_REASONS`) when its archive is corrupt or truncated, its record
is torn, not a 2xx answer, not HTML, or it now fails extraction (no body, no title, every
line boilerplate, not HTML to the extractor, a worker that died twice on it). A row whose
page a crawl re-fetched meanwhile (``content_md5`` moved) is left to the crawl.

A multi-page article (``articles.page_urls``, docs/crawling.md "Multi-page articles") is
re-extracted once the archives have given every one of its pages: the pages' records are
held until the last one is read, each is extracted, and their bodies are joined as the
crawl joined them (:func:`newsspider.extraction.pager.join_pages`); a page no archive holds
leaves the row as it was (``pages_missing``).

Archives are read with FastWARC (:func:`newsspider.backfill.warcscan.warc_responses`, the
reader of ``scrapy backfill --warc``): the gunzip and the WARC and HTTP header parsing, this
process's share of the work beside the extraction workers, in native code
(``benchmarks/reextract_speed.py``). A corrupt stretch of an archive is counted and read
past; the records after it are re-extracted too.

Each batch of :data:`BATCH` pages is one transaction, so a run killed at any moment (even
SIGKILL) leaves every row either as it was or fully rewritten; running it again completes
it (rows already rewritten come out the same and are not touched again).
"""

from __future__ import annotations

import logging
import os
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scrapy.http import Headers, TextResponse
from scrapy.responsetypes import responsetypes

from newsspider.backfill.warcscan import Tape, WarcResponse, decode_body, warc_responses
from newsspider.extraction import ExtractionError
from newsspider.extraction.kinds import NOT_STORED
from newsspider.extraction.linehash import page_md5
from newsspider.extraction.model import ExtractedArticle
from newsspider.extraction.pager import join_pages
from newsspider.extraction.registry import get_extractor, registered
from newsspider.sites import SITES
from newsspider.spiders.news import ITEM_HEADERS
from newsspider.storage import Engine, SqlLineTable, load_all_thresholds, transaction
from newsspider.storage.fts import sync_search
from newsspider.storage.rewrite import (
    StoredArticle,
    paged_articles,
    record_values,
    rewrite_articles,
    stored_by_url,
)
from newsspider.workers import WorkerDied, WorkerPool, extract_page, site_headers

__all__ = [
    "BATCH",
    "SKIP_REASONS",
    "ArchivedPage",
    "ReextractReport",
    "archive_pages",
    "default_archives",
    "parse_reextract_workers",
    "reextract",
]

logger = logging.getLogger(__name__)

#: Pages per transaction (and per round of jobs handed to the workers).
BATCH = 100
#: Batches whose pages are with the workers while the oldest one is written.
AHEAD = 3

#: Every reason a page is skipped, its row left as it was.
SKIP_REASONS = (
    "archive_corrupt",  # a corrupt stretch of an archive, or its torn tail (each counted)
    "truncated_record",  # a record shorter than its Content-Length (a torn tail)
    "status",  # not a 2xx answer (a redirect, an error page)
    "undecodable",  # a Content-Encoding that could not be undone
    "not_html",  # not a text page by its headers, or ExtractionError
    "empty_body",  # the extractor finds no article body now
    "not_stored_kind",  # the page reads as a topic, list or challenge page now
    "no_title",  # a body but no headline
    "all_boilerplate",  # every body line is boilerplate by the site's table
    "extraction_failed",  # a worker died twice on it, or the extractor raised
    "refetched",  # a crawl rewrote the row meanwhile: the crawl's version stays
    "pages_missing",  # a multi-page article some of whose pages no archive holds
)

Progress = Callable[[int], None]


def parse_reextract_workers(value: Any) -> int:
    """``REEXTRACT_WORKERS``: ``auto`` (or empty) is one process per core; 0: in this one."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return os.cpu_count() or 1
    workers = int(value)
    if workers < 0:
        raise ValueError(f"REEXTRACT_WORKERS must be 'auto' or >= 0, not {value!r}")
    return workers


def default_archives(warc_dir: Path, site: str | None = None) -> list[Path]:
    """The archives the nightly run recorded under ``warc_dir`` (``<site>/<date>.warc.gz``),
    oldest date first (so the newest fetch of a URL is applied last)."""
    pattern = f"{site}/*.warc.gz" if site else "*/*.warc.gz"
    return sorted(Path(warc_dir).glob(pattern), key=lambda p: (p.name, str(p)))


# --------------------------------------------------------------------------
# Reading archives


@dataclass(slots=True)
class ArchivedPage:
    """One ``response`` record: what the spider would have put in its item, or why not."""

    url: str
    date: str  # WARC-Date, ISO 8601
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    skip: str | None = None  # a reason of SKIP_REASONS found while reading
    #: a multi-page article's pages after the first (``url`` is the stored row's)
    more: list[ArchivedPage] = field(default_factory=list)


class _PagedArticles:
    """The records of stored multi-page articles' pages, held until an article has them all.

    ``paged`` maps a row's URL to its ``page_urls``. A record of one of those pages is held;
    when the last of an article's pages arrives the article leaves as one page whose
    ``more`` are the others. The record of a row's own URL that is not among its pages (the
    first page of an article read through its one-page version) is part of no body and is
    passed over. Any other record goes through untouched.
    """

    def __init__(self, paged: Mapping[str, Sequence[str]], report: ReextractReport) -> None:
        self.paged = paged
        self.report = report
        self.owners: dict[str, list[str]] = {}
        for row, pages in paged.items():
            for url in dict.fromkeys((row, *pages)):
                self.owners.setdefault(url, []).append(row)
        self.held: dict[str, dict[str, ArchivedPage]] = {}

    def feed(self, page: ArchivedPage) -> Iterator[ArchivedPage]:
        rows = self.owners.get(page.url)
        if rows is None:
            yield page
            return
        self.report.records += 1  # counted here: it may never leave as a page of its own
        for row in rows:
            pages = self.paged[row]
            if page.url not in pages:
                continue
            held = self.held.setdefault(row, {})
            held[page.url] = page  # a later record of a page replaces an earlier one
            if len(held) == len(pages):
                del self.held[row]
                first, *more = (held[u] for u in pages)
                skip = next((p.skip for p in (first, *more) if p.skip), None)
                self.report.records -= 1  # _submit counts the article's page
                yield ArchivedPage(
                    row, first.date, first.status, first.headers, first.body, skip, more
                )

    def incomplete(self) -> int:
        """Articles some but not all of whose pages were read."""
        return len(self.held)


_HOP = (b"transfer-encoding", b"connection", b"keep-alive", b"content-length")


def _page(response: WarcResponse) -> ArchivedPage:
    url = response.url
    page = ArchivedPage(url, response.date, response.status)
    if not 200 <= response.status < 300:
        page.skip = "status"
        return page
    headers = Headers()
    encodings: list[str] = []
    chunked = False
    for name, value in response.headers:
        low = name.lower()
        if low == b"content-encoding":
            encodings.extend(value.decode("latin-1").split(","))
        elif low == b"transfer-encoding":
            chunked = chunked or b"chunked" in value.lower()
        elif low not in _HOP:
            headers.appendlist(name, value)
    try:
        body = decode_body(response.body, encodings, chunked=chunked)
    except (ValueError, OSError, EOFError, zlib.error) as exc:
        logger.info("undecodable body (%s): %s", exc, url)
        page.skip = "undecodable"
        return page
    respcls = responsetypes.from_args(headers=headers, url=url, body=body)
    if not issubclass(respcls, TextResponse):
        page.skip = "not_html"
        return page
    page.headers = {
        name: value.decode("latin-1")
        for name in ITEM_HEADERS
        if (value := headers.get(name)) is not None
    }
    page.body = body
    return page


def archive_pages(
    path: Path, counts: Counter[str] | None = None, progress: Progress | None = None
) -> Iterator[ArchivedPage]:
    """The ``response`` records of one WARC, in order, read as a stream.

    A torn record is yielded with ``skip="truncated_record"``; a corrupt stretch (garbage,
    a corrupt gzip member) is read past, and a torn tail ends the archive, each counted in
    ``counts["archive_corrupt"]`` and logged, the records around them kept. ``progress(n)``
    is called with the KiB read since its last call.
    """
    told = 0
    events: Counter[str] = Counter()
    torn = False
    try:
        fh = open(path, "rb")
    except OSError as exc:
        logger.warning("%s: unreadable: %s", path, exc)
        if counts is not None:
            counts["archive_corrupt"] += 1
        return
    tape = Tape(fh)
    try:
        for response in warc_responses(tape, events, name=str(path)):
            if progress is not None and (at := tape.consumed // 1024) > told:
                progress(at - told)
                told = at
            if response.truncated:
                torn = True
                logger.warning("%s: record of %s is truncated; skipped", path, response.url)
                yield ArchivedPage(response.url, "", 0, skip="truncated_record")
                continue
            yield _page(response)
    finally:
        tape.close()
    bad = events["corrupt"] + (0 if torn else events["truncated"])
    if bad and counts is not None:
        counts["archive_corrupt"] += bad
    if progress is not None and path.is_file() and (end := path.stat().st_size // 1024) > told:
        progress(end - told)


# --------------------------------------------------------------------------
# The run


@dataclass(slots=True)
class ReextractReport:
    """What a re-extraction did.

    ``records`` response records were read, ``pages`` of them belong to stored articles
    (of ``--site``) and date from ``--since`` on; ``rewritten`` rows were updated, of which
    ``bodies_changed`` got a different ``content`` (the cleaned body), ``titles_changed``
    and ``times_changed`` a different title or publication time; ``unchanged`` came out as
    stored. ``skipped`` counts the pages (and archives) left alone, by reason.
    """

    archives: int = 0
    records: int = 0
    pages: int = 0
    not_stored: int = 0
    older: int = 0
    rewritten: int = 0
    unchanged: int = 0
    bodies_changed: int = 0
    titles_changed: int = 0
    times_changed: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            k: getattr(self, k)
            for k in (
                "archives", "records", "pages", "not_stored", "older", "rewritten",
                "unchanged", "bodies_changed", "titles_changed", "times_changed",
            )
        }  # fmt: skip
        out["skipped"] = dict(sorted(self.skipped.items()))
        return out


@dataclass(slots=True)
class _Job:
    page: ArchivedPage
    site: str
    future: Future[ExtractedArticle] | None = None
    retried: bool = False
    more: list[Future[ExtractedArticle]] = field(default_factory=list)


class _Extractor:
    """Extraction jobs in worker processes (``workers`` > 0) or in this process."""

    def __init__(self, method: str, workers: int, max_tasks: int, params: Mapping[str, Any]):
        get_extractor(method)  # an unknown method fails here, before any archive is read
        self.method = method
        self.params = params
        inline = workers < 1 or registered(method).renders
        self.pool = None if inline else WorkerPool(workers, max_tasks)

    def job(self, job: _Job, page: ArchivedPage | None = None) -> tuple[Any, ...]:
        site = SITES.get(job.site)
        page = page or job.page
        return (
            self.method,
            page.body,
            page.url,
            site_headers(job.page.headers or None, site and site.encoding),
            site and site.tz,
            {**self.params.get(job.site, {}), "site_name": site and site.source},
            site and site.json_path,
        )

    def submit(self, job: _Job) -> None:
        if self.pool is not None:
            job.future = self.pool.submit(*self.job(job))
            job.more = [self.pool.submit(*self.job(job, p)) for p in job.page.more]

    def result(self, job: _Job) -> ExtractedArticle:
        """The page's extraction; a multi-page article's with its pages' bodies joined."""
        article = self._first(job)
        if not job.page.more or not article.text:
            return article
        texts = [article.text]
        for k, page in enumerate(job.page.more):
            try:
                if k < len(job.more):
                    texts.append(job.more[k].result().text)
                else:
                    texts.append(extract_page(*self.job(job, page)).text)
            except Exception as exc:  # as in a crawl: the page adds nothing, the article stays
                logger.warning("page %s of a multi-page article not extracted: %r", page.url, exc)
        article.text = join_pages(texts)
        return article

    def _first(self, job: _Job) -> ExtractedArticle:
        if job.future is None:
            return extract_page(*self.job(job))
        try:
            return job.future.result()
        except WorkerDied:
            if job.retried:
                raise
            job.retried = True
            logger.warning("extraction worker died on %s; trying a fresh one", job.page.url)
            self.submit(job)
            return self._first(job)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def _batches(pages: Iterable[ArchivedPage], size: int) -> Iterator[list[ArchivedPage]]:
    batch: list[ArchivedPage] = []
    for page in pages:
        batch.append(page)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def reextract(
    engine: Engine,
    archives: Sequence[Path],
    *,
    method: str,
    site: str | None = None,
    since: datetime | None = None,
    workers: int = 0,
    max_tasks: int = 0,
    linehash: bool = True,
    L: int = 50,
    database_url: str | None = None,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> ReextractReport:
    """Re-extract the stored articles found in ``archives`` into the corpus of ``engine``.

    ``site`` limits it to that site's stored articles; ``since`` (aware) to records fetched
    at or after it (``WARC-Date``). ``method`` is the registry's extraction method (the
    setting ``EXTRACTOR``); ``workers`` extraction processes (0: this process). ``linehash``
    and ``L`` as ``LINEHASH_ENABLED`` and ``LINEHASH_L``. ``database_url`` is read for the
    xpath method's trained thresholds. ``progress(n)`` is called with the KiB of archive
    read. See the module docstring for what is skipped and why nothing is lost.
    """
    report = ReextractReport()
    params = {k: t.as_params() for k, t in load_all_thresholds(database_url).items()} if (
        method == "xpath" and database_url
    ) else {}
    extractor = _Extractor(method, workers, max_tasks, params)
    with transaction(engine) as session:
        paged = _PagedArticles(paged_articles(session, site), report)
    try:
        window: deque[list[_Job]] = deque()
        for batch_pages in _batches(_all_pages(archives, report, progress, paged), batch):
            window.append(_submit(engine, extractor, batch_pages, site, since, report))
            while len(window) > AHEAD:
                _write(engine, extractor, window.popleft(), report, linehash, L)
        while window:
            _write(engine, extractor, window.popleft(), report, linehash, L)
    finally:
        extractor.close()
    sync_search(engine)  # the rewritten rows into the search index, in bulk
    logger.info("reextract: %s", report.as_dict())
    return report


def _all_pages(
    archives: Sequence[Path],
    report: ReextractReport,
    progress: Progress | None,
    paged: _PagedArticles,
) -> Iterator[ArchivedPage]:
    for path in archives:
        report.archives += 1
        for page in archive_pages(Path(path), report.skipped, progress):
            yield from paged.feed(page)
    if missing := paged.incomplete():
        report.skipped["pages_missing"] += missing
        report.pages += missing


def _fetched(date: str) -> datetime | None:
    try:
        return datetime.fromisoformat(date.replace("Z", "+00:00"))
    except ValueError:
        return None


def _submit(
    engine: Engine,
    extractor: _Extractor,
    pages: list[ArchivedPage],
    site: str | None,
    since: datetime | None,
    report: ReextractReport,
) -> list[_Job]:
    """Pick the pages of stored articles in ``pages`` and hand them to the workers."""
    report.records += len(pages)
    with transaction(engine) as session:
        stored = stored_by_url(session, (p.url for p in pages), site)
    jobs: list[_Job] = []
    last: dict[str, int] = {}
    for page in pages:
        row = stored.get(page.url)
        if row is None:
            report.not_stored += 1
            continue
        if since is not None:
            fetched = _fetched(page.date)
            if fetched is not None and fetched < since:
                report.older += 1
                continue
        report.pages += 1
        if page.skip is not None:
            report.skipped[page.skip] += 1
            continue
        if page.url in last:  # the later record of the batch wins
            jobs[last[page.url]] = _Job(page, row.site)
        else:
            last[page.url] = len(jobs)
            jobs.append(_Job(page, row.site))
    for job in jobs:
        extractor.submit(job)
        job.page.body = job.page.body if job.future is None else b""  # the worker has it
    return jobs


def _write(
    engine: Engine,
    extractor: _Extractor,
    jobs: list[_Job],
    report: ReextractReport,
    linehash: bool,
    L: int,
) -> None:
    """Collect a batch's extractions and rewrite its rows in one transaction."""
    fresh: list[tuple[_Job, ExtractedArticle]] = []
    for job in jobs:
        try:
            article = extractor.result(job)
        except ExtractionError:
            report.skipped["not_html"] += 1
            continue
        except Exception as exc:
            logger.warning("extraction failed on %s: %r", job.page.url, exc)
            report.skipped["extraction_failed"] += 1
            continue
        if article.kind in NOT_STORED:  # a page never stored (docs/crawling.md "Page kinds")
            report.skipped["not_stored_kind"] += 1
        elif not article.text:
            report.skipped["empty_body"] += 1
        elif not article.title:
            report.skipped["no_title"] += 1
        else:
            fresh.append((job, article))
    if not fresh:
        return
    with transaction(engine) as session:
        stored = stored_by_url(session, (job.page.url for job, _ in fresh))
        by_site: dict[str, list[int]] = {}
        raw = [_no_nul(article.text) for _, article in fresh]
        for k, (job, _) in enumerate(fresh):
            by_site.setdefault(job.site, []).append(k)
        content: dict[int, str | None] = {}
        for key, ks in by_site.items():
            if not linehash:
                content.update((k, raw[k]) for k in ks)
                continue
            table = SqlLineTable(session, key, L=L)
            for k, result in zip(ks, table.clean_batch([(raw[k], False) for k in ks]), strict=True):
                content[k] = result.text if result.kept or not result.dropped else None
        changes: list[tuple[StoredArticle, dict[str, Any]]] = []
        for k, (job, article) in enumerate(fresh):
            row = stored.get(job.page.url)
            if row is None or row.site != job.site:
                report.skipped["refetched"] += 1
                continue
            if content[k] is None:
                report.skipped["all_boilerplate"] += 1
                continue
            values = {
                "title": article.title,
                "published": article.published,
                "published_source": article.published_source,
                "published_precision": article.published_precision,
                "content": content[k],
                "raw_text": raw[k],
                "encoding": article.encoding,
                "content_md5": page_md5(raw[k]),
                # the record: authors, origin, editor, section, language, script, image
                **record_values(article, SITES.get(job.site)),
            }
            if values == row.values(values):
                report.unchanged += 1
                continue
            changes.append((row, values))
        done = rewrite_articles(session, changes)
    if done < len(changes):
        report.skipped["refetched"] += len(changes) - done
    report.rewritten += done
    for row, values in changes:
        report.bodies_changed += values["content"] != row.content
        report.titles_changed += values["title"] != row.title
        report.times_changed += values["published"] != row.published


def _no_nul(text: str) -> str:
    return text.replace("\x00", "") if "\x00" in text else text


