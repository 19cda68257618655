"""Cleaning and storage step: Li & Jiang 2012 §2.2 line-hash table, then the SQL upsert.

Items are buffered and written in batches (``NEWS_DB_BATCH``). One batch is one
transaction: its line counts (LC, RC) and its articles are committed together
or not at all, so a crash leaves every stored article whole and the line table
consistent with the articles it counted.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from sqlalchemy.orm import Session

from newsspider.extraction.linehash import DEFAULT_L, page_md5
from newsspider.storage import (
    CrawlRun,
    SqlLineTable,
    create_schema,
    engine_for,
    resolve_database_url,
    seen_content,
    upsert_articles,
)

logger = logging.getLogger(__name__)


class CorpusPipeline:
    """Clean each article's ``raw_text`` with its site's line table and store it."""

    def __init__(
        self,
        database_url: str,
        *,
        batch: int = 50,
        linehash: bool = True,
        L: int = DEFAULT_L,
        prune_every: int = 100,
        once_per_page: bool = True,
        busy_timeout: float = 30.0,
        stats=None,
        crawler: Crawler | None = None,
    ) -> None:
        self.database_url = database_url
        self.batch = max(1, batch)
        self.linehash = linehash
        self.L = L
        self.prune_every = prune_every
        self.once_per_page = once_per_page
        self.busy_timeout = busy_timeout
        self.stats = stats
        self.crawler = crawler
        self.pending: list[Any] = []
        self.engine = None
        self.run_id: int | None = None
        self.site_keys: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        s = crawler.settings
        if not s.getbool("CORPUS_ENABLED", True):
            raise NotConfigured("CORPUS_ENABLED is off")
        return cls(
            resolve_database_url(s.get("DATABASE_URL")),
            batch=s.getint("NEWS_DB_BATCH", 50),
            linehash=s.getbool("LINEHASH_ENABLED", True),
            L=s.getint("LINEHASH_L", DEFAULT_L),
            prune_every=s.getint("LINEHASH_PRUNE_EVERY", 100),
            once_per_page=s.getbool("LINEHASH_ONCE_PER_PAGE", True),
            busy_timeout=s.getfloat("NEWS_DB_BUSY_TIMEOUT", 30.0),
            stats=crawler.stats,
            crawler=crawler,
        )

    # -- spider lifecycle ---------------------------------------------------

    def open_spider(self, spider=None) -> None:
        self.engine = engine_for(self.database_url, busy_timeout=self.busy_timeout)
        create_schema(self.engine)
        spider = spider or (self.crawler.spider if self.crawler else None)
        site = getattr(getattr(spider, "site", None), "key", None) or getattr(spider, "name", "")
        with Session(self.engine) as session, session.begin():
            run = CrawlRun(site=site, started_at=datetime.now(UTC), status="running")
            session.add(run)
            session.flush()
            self.run_id = run.id
        logger.info("storing into %s (crawl run %s)", _safe_url(self.database_url), self.run_id)

    def close_spider(self, spider=None) -> None:
        try:
            self.flush()
            status = "finished"
        except Exception:
            status = "failed"
            raise
        finally:
            self._finish_run(spider, status)

    # -- items ----------------------------------------------------------------

    def process_item(self, item):
        self.pending.append(item)
        if len(self.pending) >= self.batch:
            self.flush()
        return item

    def flush(self) -> None:
        """Clean and store the buffered items in one transaction."""
        if not self.pending:
            return
        items, self.pending = self.pending, []
        rows = []
        removed: dict[str, int] = {}
        with Session(self.engine) as session, session.begin():
            tables: dict[str, SqlLineTable] = {}
            batch_md5s: set[tuple[str, str]] = set()
            for item in items:
                adapter = ItemAdapter(item)
                site, raw_text = adapter["site"], adapter["raw_text"]
                md5 = page_md5(raw_text)
                content = raw_text
                if self.linehash:
                    table = tables.get(site) or tables.setdefault(
                        site,
                        SqlLineTable(
                            session,
                            site,
                            L=self.L,
                            once_per_page=self.once_per_page,
                            prune_every=self.prune_every,
                        ),
                    )
                    duplicate = (site, md5) in batch_md5s or seen_content(session, site, md5)
                    result = table.apply(raw_text) if duplicate else table.clean(raw_text)
                    if duplicate:
                        self.stats.inc_value(f"newsspider/duplicate_pages/{site}")
                    content = result.text
                    removed[site] = removed.get(site, 0) + result.dropped
                batch_md5s.add((site, md5))
                adapter["content"] = content
                rows.append(
                    {
                        "url": adapter["urladdr"],
                        "site": site,
                        "source": adapter["source"],
                        "title": adapter["title"],
                        "published": adapter["newstime"],
                        "content": content,
                        "raw_text": raw_text,
                        "encoding": adapter["encoding"],
                        "content_md5": md5,
                        "fetched_at": adapter["fetched_at"],
                    }
                )
                self.site_keys.add(site)
            new, updated = upsert_articles(session, rows)
        self.stats.inc_value("newsspider/articles_new", new)
        self.stats.inc_value("newsspider/articles_updated", updated)
        for site, n in removed.items():
            self.stats.inc_value(f"newsspider/boilerplate_lines/{site}", n)
        logger.info("stored %s articles (%s new, %s updated)", len(rows), new, updated)

    # -- crawl run row ----------------------------------------------------------

    def _finish_run(self, spider, status: str) -> None:
        if self.run_id is None or self.engine is None:
            return
        stats = self.stats.get_stats() if self.stats else {}
        reasons = {
            k.rsplit("/", 1)[-1]: v
            for k, v in stats.items()
            if k.startswith("item_dropped_reasons_count/")
        }
        with Session(self.engine) as session, session.begin():
            run = session.get(CrawlRun, self.run_id)
            run.finished_at = datetime.now(UTC)
            run.status = status
            run.pages_fetched = int(stats.get("downloader/response_count", 0))
            run.items_new = int(stats.get("newsspider/articles_new", 0))
            run.items_updated = int(stats.get("newsspider/articles_updated", 0))
            run.items_dropped = int(stats.get("item_dropped_count", 0))
            run.drop_reasons = json.dumps(reasons, sort_keys=True)
            run.errors = int(stats.get("log_count/ERROR", 0))


def _safe_url(url: str) -> str:
    """The database URL without its password, for logs."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
