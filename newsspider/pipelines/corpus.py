"""Cleaning and storage step: Li & Jiang 2012 §2.2 line-hash table, then the SQL upsert.

Items are buffered and written in batches (``NEWS_DB_BATCH``). One batch is one
transaction: its line counts (LC, RC) and its articles are committed together
or not at all, so a crash leaves every stored article whole and the line table
consistent with the articles it counted.

Failures while writing:

- **Transient** (``storage.db.is_transient``: SQLite locked by another writer for longer
  than ``NEWS_DB_BUSY_TIMEOUT``, PostgreSQL restarting or unreachable): the whole
  transaction is rolled back and retried with a doubling wait (0.5 s up to 30 s) for up to
  ``NEWS_DB_RETRY_SECONDS``, with a WARNING per retry. Nothing is applied twice, because
  a failed attempt leaves nothing behind, and even a batch whose COMMIT did go through
  before the connection dropped is safe to retry: its pages are then stored with their
  content MD5, so the retry treats them as duplicates and does not count them again.
  While a batch waits, the items behind it wait too (``process_item`` is a coroutine), so
  the crawl slows down instead of piling pages up in memory. After
  ``NEWS_DB_RETRY_SECONDS`` the batch's articles are dropped (``DatabaseUnavailable``,
  logged with their URLs) and the crawl is closed (finish reason
  ``database_unavailable``): nothing is left half-written and the next crawl fetches them
  again.
- **Permanent** (anything else: a value the database refuses, a constraint): the batch
  is written again one article per transaction, so one bad article costs only itself
  (dropped as ``StoreError``, logged with its URL and traceback).

A page whose every body line the line table knows as boilerplate is not stored
(``AllBoilerplate``): an empty article is not news. It is still counted in the table,
as the paper counts every page.

Reasons are counted in Scrapy's ``item_dropped_count`` and
``item_dropped_reasons_count/<reason>`` stats, so they reach ``crawl_runs.drop_reasons``
and the nightly report like the extraction pipeline's drops; these items did pass
``process_item`` (they are in ``item_scraped_count`` too), because they are judged when
their batch is written.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings
from scrapy.utils.asyncio import sleep
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import DeferredLock

from newsspider.errors import DatabaseUnreachable
from newsspider.extensions import site_of
from newsspider.extraction.linehash import CleanResult, page_md5
from newsspider.outcome import (
    DATABASE_UNAVAILABLE as DATABASE_UNAVAILABLE_FINISH,
)
from newsspider.outcome import (
    DROPPED_DATABASE,
    EXIT_ALL_DROPPED,
    EXIT_BLOCKED,
    EXIT_BUG,
    EXIT_DATABASE,
    EXIT_NOTHING_FETCHED,
    by_suffix,
    crawl_outcome,
)
from newsspider.reprints import ReprintParams, params_from_settings
from newsspider.storage import (
    Backoff,
    Engine,
    Session,
    SqlLineTable,
    create_schema,
    display_url,
    engine_from_settings,
    is_transient,
    seen_contents,
    short_error,
    transaction,
    upsert_articles,
)
from newsspider.storage.db import join_authors, page_urls_json
from newsspider.storage.fts import SEARCH_SYNC_SECONDS, sync_search
from newsspider.storage.runs import finish_crawl_run, start_crawl_run
from newsspider.storage.stories import assign_stories
from newsspider.workers import await_future, stage_cpu

__all__ = ["ALL_BOILERPLATE", "DATABASE_UNAVAILABLE", "STORE_ERROR", "CorpusPipeline"]

logger = logging.getLogger(__name__)

#: Drop reasons of this pipeline (``item_dropped_reasons_count/<reason>``).
ALL_BOILERPLATE = "AllBoilerplate"
STORE_ERROR = "StoreError"
DATABASE_UNAVAILABLE = DROPPED_DATABASE
#: Stat set when the crawl run could not be opened (the first connection failed).
DATABASE_FAILED_STAT = "newsspider/database_failed"
#: ``crawl_runs.status`` of a crawl by its exit status (newsspider/outcome.py); 0 is
#: ``finished``.
RUN_STATUS = {
    EXIT_DATABASE: "failed",
    EXIT_NOTHING_FETCHED: "nothing_fetched",
    EXIT_ALL_DROPPED: "all_dropped",
    EXIT_BLOCKED: "blocked",
}
#: Finish reason of a crawl closed because the database stayed unavailable.
FINISH_DATABASE_UNAVAILABLE = DATABASE_UNAVAILABLE_FINISH
#: URLs named in one log line about a batch (the rest are counted).
LOG_URLS = 5
#: The stages of a batch's write whose CPU a benchmark measures (``workers.stage_cpu``):
#: the line table, reprint detection, the search index, and the rest of the write (rows,
#: upserts, commit).
STAGE_LINES = "line table"
STAGE_REPRINTS = "reprints"
STAGE_SEARCH = "search index"
STAGE_STORAGE = "storage"


@dataclass(slots=True)
class _Written:
    """What one committed batch did; counted into the stats only after the commit."""

    new: int = 0
    updated: int = 0
    rows: int = 0
    removed: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    #: (url, site, lines) of pages whose every line was boilerplate
    all_boilerplate: list[tuple[str, str, int]] = field(default_factory=list)


class CorpusPipeline:
    """Clean each article's ``raw_text`` with its site's line table and store it.

    Built from settings (:meth:`from_settings`; :meth:`from_crawler` in a crawl): the
    keyword arguments are those settings, ``NEWS_DB_BATCH``, ``LINEHASH_*`` and
    ``NEWS_DB_RETRY_SECONDS``, whose defaults live in ``settings.py``.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        batch: int,
        linehash: bool,
        L: int,
        prune_every: int,
        once_per_page: bool,
        retry_seconds: float,
        reprints: ReprintParams | None = None,
        stats=None,
        crawler: Crawler | None = None,
    ) -> None:
        self.engine = engine
        self.batch = max(1, batch)
        self.linehash = linehash
        self.L = L
        self.prune_every = prune_every
        self.once_per_page = once_per_page
        self.retry_seconds = retry_seconds
        #: reprint detection's parameters; None: no stories assigned (``REPRINTS_ENABLED``)
        self.reprints = reprints
        self.stats = stats
        self.crawler = crawler
        self.pending: list[Any] = []
        self.run_id: int | None = None
        self.site = ""
        self.site_keys: set[str] = set()
        #: one batch at a time; items behind a retrying batch wait here
        self._lock = DeferredLock()
        #: set while the database is given up on: later batches get one attempt each
        self.unavailable = False
        #: set once any batch was given up on: the crawl run ends ``failed``
        self.gave_up = False
        #: the thread of first write attempts in a crawl (``_attempt_in_thread``)
        self._writer: ThreadPoolExecutor | None = None
        #: when the search index was last brought up to date (``_sync_search``)
        self._synced = time.monotonic()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        if not crawler.settings.getbool("CORPUS_ENABLED"):
            raise NotConfigured("CORPUS_ENABLED is off")
        return cls.from_settings(crawler.settings, stats=crawler.stats, crawler=crawler)

    @classmethod
    def from_settings(
        cls, settings: BaseSettings, *, stats=None, crawler: Crawler | None = None
    ) -> Self:
        """The pipeline the settings describe, on :func:`engine_from_settings`'s engine."""
        s = settings
        return cls(
            engine_from_settings(s),
            batch=s.getint("NEWS_DB_BATCH"),
            linehash=s.getbool("LINEHASH_ENABLED"),
            L=s.getint("LINEHASH_L"),
            prune_every=s.getint("LINEHASH_PRUNE_EVERY"),
            once_per_page=s.getbool("LINEHASH_ONCE_PER_PAGE"),
            retry_seconds=s.getfloat("NEWS_DB_RETRY_SECONDS"),
            reprints=params_from_settings(s) if s.getbool("REPRINTS_ENABLED") else None,
            stats=stats,
            crawler=crawler,
        )

    # -- spider lifecycle ---------------------------------------------------

    def open_spider(self, spider=None) -> None:
        spider = spider or (self.crawler.spider if self.crawler else None)
        # The first connection is not retried: a database that cannot be reached as the
        # crawl opens is a set-up mistake, reported at once in one line
        # (``scrapy crawl`` checks it even earlier, newsspider.preflight).
        self.site = site_of(spider)
        try:
            self._open_run(self.site)
        except Exception as exc:
            if self.stats is not None:
                self.stats.set_value(DATABASE_FAILED_STAT, 1)
            raise DatabaseUnreachable(
                f"cannot open a crawl run in {display_url(self.engine)}: {short_error(exc)}"
            ) from exc
        logger.info("storing into %s (crawl run %s)", display_url(self.engine), self.run_id)

    def _open_run(self, site: str) -> None:
        create_schema(self.engine)
        with transaction(self.engine) as session:
            self.run_id = start_crawl_run(session, site)

    def close_spider(self, spider=None) -> Coroutine[Any, Any, None] | None:
        """Store what is pending and finish the ``crawl_runs`` row.

        In a crawl (a ``crawler`` was given) this returns a coroutine, which Scrapy awaits,
        so retries wait without blocking the reactor; without one (tools, tests) it runs to
        the end before returning.
        """
        if self.crawler is not None:
            return self._close_async()
        status = "finished"
        try:
            self.flush()
            self._sync_search()
        except Exception:
            status = "failed"
            raise
        finally:
            self._record_end(status, time.sleep)
        return None

    async def _close_async(self) -> None:
        status = "finished"
        try:
            await self._flush_async(final=True)
            # the crawl's articles into the search index, in bulk (storage/fts.py)
            if self._writer is not None:
                await await_future(self._writer.submit(self._sync_search))
            else:
                self._sync_search()
        except Exception:
            status = "failed"
            raise
        finally:
            status = "failed" if self.gave_up else status
            try:
                for wait in self._retrying("record the crawl run", self._finish_run, status):
                    await sleep(wait)
            except Exception:
                logger.exception("could not record the end of crawl run %s", self.run_id)
            if self._writer is not None:
                self._writer.shutdown(wait=False)
                self._writer = None

    def _record_end(self, status: str, wait_with: Callable[[float], None]) -> None:
        status = "failed" if self.gave_up else status
        try:
            for wait in self._retrying("record the crawl run", self._finish_run, status):
                wait_with(wait)
        except Exception:
            logger.exception("could not record the end of crawl run %s", self.run_id)

    # -- items ----------------------------------------------------------------

    def process_item(self, item: Any) -> Any:
        """Buffer ``item``; write a batch once ``NEWS_DB_BATCH`` items are waiting.

        In a crawl the write is a coroutine that Scrapy awaits (the item, and the items
        queued behind it, wait while the batch is retried); without a crawler the batch is
        written before returning.
        """
        self.pending.append(item)
        if len(self.pending) < self.batch:
            return item
        if self.crawler is None:
            self.flush()
            return item
        return self._flush_then(item)

    async def _flush_then(self, item: Any) -> Any:
        await self._flush_async()
        return item

    async def _flush_async(self, *, final: bool = False) -> None:
        """Store full batches (every pending item when ``final``), one batch at a time."""
        await maybe_deferred_to_future(self._lock.acquire())
        try:
            while self.pending and (final or len(self.pending) >= self.batch):
                items = self.pending[: self.batch]
                del self.pending[: self.batch]
                first = await self._attempt_in_thread(items)
                for wait in self._store(items, first):
                    await sleep(wait)
        finally:
            self._lock.release()

    async def _attempt_in_thread(self, items: list[Any]) -> _Written | Exception:
        """The first attempt at a batch, in this pipeline's writer thread.

        SQLite does the FTS indexing and the line table's lookups in C without the GIL, so
        the reactor goes on fetching and parsing meanwhile
        (``benchmarks/crawl_throughput.py``), and a writer waiting out another's lock no
        longer stops the crawl. Retries (rare) stay in the reactor thread, in ``_store``.
        """
        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="newsspider-db")
        try:
            return await await_future(self._writer.submit(self._write_batch, items))
        except Exception as exc:
            return exc

    def flush(self) -> None:
        """Store every pending item now, in batches, blocking through retries.

        For callers outside a running crawl (tools, tests); the crawl itself goes through
        the coroutines, which wait without blocking the reactor.
        """
        while self.pending:
            items = self.pending[: self.batch]
            del self.pending[: self.batch]
            for wait in self._store(items):
                time.sleep(wait)

    def _store(
        self, items: list[Any], first: _Written | Exception | None = None
    ) -> Iterator[float]:
        """Write ``items`` as one transaction; yield each wait before a retry.

        The caller does the waiting (``time.sleep`` or a reactor-friendly sleep), so the
        retry logic exists once. See the module docstring for what is retried. ``first``
        is the outcome of a first attempt already made elsewhere (the writer thread).
        """
        backoff: Backoff | None = None
        while True:
            try:
                if first is None:
                    written = self._write_batch(items)
                else:
                    outcome, first = first, None
                    if isinstance(outcome, Exception):
                        raise outcome
                    written = outcome
            except Exception as exc:
                if is_transient(exc):
                    if backoff is None:
                        backoff = Backoff(0 if self.unavailable else self.retry_seconds)
                    wait = backoff.next_delay()
                    if wait is not None:
                        self.stats.inc_value("newsspider/db_retries")
                        logger.warning(
                            "database unavailable while storing %s articles (%s): "
                            "retry %s in %.1f s, for up to %.0f s in all",
                            len(items),
                            short_error(exc),
                            backoff.retries,
                            wait,
                            self.retry_seconds,
                        )
                        yield wait
                        continue
                    self._give_up(items, exc)
                    return
                if len(items) > 1:
                    logger.warning(
                        "storing a batch of %s articles failed (%s): storing them one by one",
                        len(items),
                        short_error(exc),
                    )
                    for item in items:
                        yield from self._store([item])
                    return
                self._drop(items, STORE_ERROR, exc, exc_info=True)
                return
            if backoff is not None:
                logger.info("stored after %s retries: the database is back", backoff.retries)
            self.unavailable = False
            self._count(written)
            return

    def _write_batch(self, items: list[Any]) -> _Written:
        """Clean and store ``items`` in one transaction (raises; rolled back on failure)."""
        with stage_cpu(STAGE_STORAGE):
            return self._write_batch_timed(items)

    def _write_batch_timed(self, items: list[Any]) -> _Written:
        written = _Written()
        rows = []
        with transaction(self.engine) as session:
            pages = []
            for item in items:
                adapter = ItemAdapter(item)
                raw_text = _no_nul(adapter["raw_text"])
                pages.append((adapter, adapter["site"], raw_text, page_md5(raw_text)))
            results = {}
            if self.linehash:
                with stage_cpu(STAGE_LINES):
                    results = self._clean_batch(session, pages, written)
            for k, (adapter, site, raw_text, md5) in enumerate(pages):
                content = raw_text
                if k in results:
                    result = results[k]
                    content = result.text
                    written.removed[site] = written.removed.get(site, 0) + result.dropped
                    if not result.kept and result.dropped:
                        written.all_boilerplate.append((adapter["url"], site, result.dropped))
                        continue
                adapter["content"] = content
                rows.append(
                    {
                        "url": adapter["url"],
                        "site": site,
                        "source": adapter["source"],
                        "title": adapter["title"],
                        "published": adapter["published"],
                        "published_source": adapter.get("published_source"),
                        "published_precision": adapter.get("published_precision"),
                        "content": content,
                        "raw_text": raw_text,
                        "encoding": adapter["encoding"],
                        "content_md5": md5,
                        "fetched_at": adapter["fetched_at"],
                        "archive": adapter.get("archive"),
                        "captured_at": adapter.get("captured_at"),
                        "authors": join_authors(adapter.get("authors")),
                        "authors_source": adapter.get("authors_source"),
                        "origin": adapter.get("origin"),
                        "origin_source": adapter.get("origin_source"),
                        "editor": adapter.get("editor"),
                        "section": adapter.get("section"),
                        "section_source": adapter.get("section_source"),
                        "language": adapter.get("language"),
                        "script": adapter.get("script"),
                        "image": adapter.get("image"),
                        "image_caption": adapter.get("image_caption"),
                        "page_urls": page_urls_json(adapter.get("page_urls")),
                        "kind": adapter.get("kind"),
                    }
                )
                self.site_keys.add(site)
            if rows:
                written.new, written.updated = upsert_articles(session, rows)
                if self.reprints is not None:
                    # Stories in the same transaction: stored means placed (docs/reprints.md).
                    with stage_cpu(STAGE_REPRINTS):
                        assign_stories(session, self.reprints, urls=[r["url"] for r in rows])
        written.rows = len(rows)
        if time.monotonic() - self._synced >= SEARCH_SYNC_SECONDS:
            self._sync_search()
        return written

    def _sync_search(self) -> None:
        """Index the stored articles not yet in the search index (``storage.fts``); a
        failure only delays it (search sees queued rows anyway, the next call indexes)."""
        self._synced = time.monotonic()
        try:
            with stage_cpu(STAGE_SEARCH):
                n = sync_search(self.engine)
        except Exception as exc:
            logger.warning("search index not brought up to date: %s", short_error(exc))
            return
        if n:
            logger.info("search index: %s articles indexed", n)

    def _clean_batch(
        self, session: Session, pages: list[tuple[Any, str, str, str]], written: _Written
    ) -> dict[int, CleanResult]:
        """The line table's verdict on each page (by index), site by site, in page order.

        A page is a duplicate, filtered but not counted (exact duplicate pages are skipped,
        an addition to Li & Jiang 2012 §2.2), when its site already stores its text or an
        earlier page of the batch had it. One query for the stored texts and one
        :meth:`SqlLineTable.clean_batch` per site and batch, instead of five statements
        per page.
        """
        by_site: dict[str, list[int]] = {}
        for k, (_, site, _, _) in enumerate(pages):
            by_site.setdefault(site, []).append(k)
        results: dict[int, CleanResult] = {}
        for site, ks in by_site.items():
            stored = seen_contents(session, site, (pages[k][3] for k in ks))
            earlier: set[str] = set()
            batch: list[tuple[str, bool]] = []
            for k in ks:
                md5 = pages[k][3]
                duplicate = md5 in earlier or md5 in stored
                earlier.add(md5)
                if duplicate:
                    written.duplicates[site] = written.duplicates.get(site, 0) + 1
                batch.append((pages[k][2], not duplicate))
            table = SqlLineTable(
                session,
                site,
                L=self.L,
                once_per_page=self.once_per_page,
                prune_every=self.prune_every,
            )
            results.update(zip(ks, table.clean_batch(batch), strict=True))
        return results

    def _count(self, written: _Written) -> None:
        """Stats and log lines of a committed batch (never of an attempt that failed)."""
        self.stats.inc_value("newsspider/articles_new", written.new)
        self.stats.inc_value("newsspider/articles_updated", written.updated)
        for site, n in written.removed.items():
            self.stats.inc_value(f"newsspider/boilerplate_lines/{site}", n)
        for site, n in written.duplicates.items():
            self.stats.inc_value(f"newsspider/duplicate_pages/{site}", n)
        for url, site, lines in written.all_boilerplate:
            logger.warning(
                "Dropped: every body line (%s) is boilerplate by the line table of %s, "
                "not stored: %s",
                lines,
                site,
                url,
            )
            self.stats.inc_value(f"newsspider/all_boilerplate/{site}")
            self._count_drop(ALL_BOILERPLATE)
        logger.info(
            "stored %s articles (%s new, %s updated)", written.rows, written.new, written.updated
        )

    def _count_drop(self, reason: str, n: int = 1) -> None:
        self.stats.inc_value("item_dropped_count", n)
        self.stats.inc_value(f"item_dropped_reasons_count/{reason}", n)

    def _drop(self, items: list[Any], reason: str, exc: Exception, *, exc_info: bool) -> None:
        urls = [ItemAdapter(i).get("url") for i in items]
        logger.error(
            "Dropped (%s): %s article(s) not stored (%s): %s",
            reason,
            len(items),
            short_error(exc),
            ", ".join(map(str, urls[:LOG_URLS])) + (" …" if len(urls) > LOG_URLS else ""),
            exc_info=exc if exc_info else None,
        )
        self._count_drop(reason, len(items))

    def _give_up(self, items: list[Any], exc: Exception) -> None:
        """The database stayed unavailable: drop the batch and close the crawl."""
        first = not self.gave_up
        self.unavailable = self.gave_up = True
        self._drop(items, DATABASE_UNAVAILABLE, exc, exc_info=False)
        engine = getattr(self.crawler, "engine", None) if self.crawler else None
        if first and engine is not None and getattr(engine, "spider", None) is not None:
            logger.error(
                "the database was unavailable for %.0f s (NEWS_DB_RETRY_SECONDS): "
                "closing the crawl; the next one fetches the articles again",
                self.retry_seconds,
            )
            deferred_from_coro(engine.close_spider_async(reason=FINISH_DATABASE_UNAVAILABLE))

    def _retrying(self, what: str, action: Callable[..., None], *args: Any) -> Iterator[float]:
        """Run ``action(*args)`` until it succeeds, yielding waits while failures are transient.

        Raises the last error when it is not transient or ``NEWS_DB_RETRY_SECONDS`` ran out.
        """
        backoff = Backoff(self.retry_seconds)
        while True:
            try:
                action(*args)
                return
            except Exception as exc:
                wait = backoff.next_delay() if is_transient(exc) else None
                if wait is None:
                    raise
                reason = short_error(exc)
                logger.warning("could not %s (%s): retrying in %.1f s", what, reason, wait)
                yield wait

    # -- crawl run row ----------------------------------------------------------

    def _finish_run(self, status: str) -> None:
        if self.run_id is None:
            return
        stats = self.stats.get_stats() if self.stats else {}
        # Honest: a crawl that fetched nothing or stored nothing did not finish its job.
        verdict = crawl_outcome(self.site, stats, storing=True, now=datetime.now(UTC))
        if status == "finished":
            status = RUN_STATUS.get(verdict.status, status)
        exit_status = verdict.status if status != "failed" else max(verdict.status, EXIT_BUG)
        with transaction(self.engine) as session:
            finish_crawl_run(
                session,
                self.run_id,
                status=status,
                pages_fetched=int(stats.get("downloader/response_count", 0)),
                items_new=int(stats.get("newsspider/articles_new", 0)),
                items_updated=int(stats.get("newsspider/articles_updated", 0)),
                items_dropped=int(stats.get("item_dropped_count", 0)),
                drop_reasons=json.dumps(by_suffix(stats, "item_dropped_reasons_count/")),
                errors=int(stats.get("log_count/ERROR", 0)),
                fetch_failures=sum(by_suffix(stats, "newsspider/fetch_failed/").values()),
                fetch_failure_reasons=json.dumps(
                    by_suffix(stats, "newsspider/fetch_failed_reason/")
                ),
                retries=int(stats.get("retry/count", 0)),
                db_retries=int(stats.get("newsspider/db_retries", 0)),
                summary=verdict.line(),
                exit_status=exit_status,
            )


def _no_nul(text: str) -> str:
    """Text without NUL characters (PostgreSQL refuses them; see ``storage.db._no_nul``).

    Removed before the line table and the content MD5 see the text, so both describe
    exactly what is stored.
    """
    return text.replace("\x00", "") if "\x00" in text else text
