"""Concurrent writers on one PostgreSQL: the corpus and the line table stay exact.

Four processes store interleaved batches of one site through the real ``CorpusPipeline``
(line-hash cleaning, duplicate-page check, article upsert), with pages whose text repeats
under other URLs in other processes and URLs stored by two processes. The result must be
what one process storing the same pages one after the other leaves: the same article rows
(no duplicate), ``RC`` and every ``LC``. Without the site lock in ``seen_contents`` two
processes storing one text at the same moment both count it, and ``RC`` comes out high.
"""

from __future__ import annotations

import multiprocessing
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.pgserver import PgServer
from tests.test_cluster import new_database, query

SITE = "netease"
WRITERS = 4
BOILERPLATE = [f"网易新闻 导航 第{i}行 版权所有" for i in range(12)]


class Stats:
    """The stats calls the pipeline makes."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def inc_value(self, key: str, n: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + n

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value

    def get_stats(self) -> dict[str, Any]:
        return dict(self.values)


def pages(seed: int = 7) -> list[dict[str, Any]]:
    """200 pages: boilerplate lines shared by all, body lines of their own; one in five
    repeats an earlier page's text under a new URL, one in ten repeats an earlier URL."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for n in range(200):
        if n and n % 5 == 0:
            text = out[rng.randrange(len(out))]["raw_text"]
        else:
            body = [f"正文 {n} 第{k}段 " + "新闻内容" * rng.randint(2, 9) for k in range(rng.randint(3, 8))]
            text = "\n".join(rng.sample(BOILERPLATE, 6) + body + rng.sample(BOILERPLATE, 3))
        url = f"https://news.163.com/24/0101/10/A{n:06d}.html"
        if n and n % 10 == 3:
            url = out[rng.randrange(len(out))]["url"]
            text = next(p["raw_text"] for p in out if p["url"] == url)
        out.append(
            {
                "url": url,
                "site": SITE,
                "source": "网易",
                "title": f"标题 {n}",
                "published": datetime(2024, 1, 1, tzinfo=UTC),
                "published_source": "url",
                "published_precision": "day",
                "raw_text": text,
                "encoding": "utf-8",
                "fetched_at": datetime(2024, 1, 2, tzinfo=UTC),
            }
        )
    return out


def store(database_url: str, items: list[dict[str, Any]], batch: int, barrier: Any = None) -> None:
    """Store ``items`` through the crawl's pipeline, as one crawl process would."""
    from scrapy.settings import Settings

    from newsspider import settings as project
    from newsspider.pipelines.corpus import CorpusPipeline

    settings = Settings({k: getattr(project, k) for k in dir(project) if k.isupper()})
    settings.setdict(
        {"DATABASE_URL": database_url, "NEWS_DB_BATCH": batch, "LINEHASH_PRUNE_EVERY": 0,
         "REPRINTS_ENABLED": False}
    )  # fmt: skip
    pipeline = CorpusPipeline.from_settings(settings, stats=Stats())
    pipeline.open_spider(type("S", (), {"name": SITE})())
    if barrier is not None:
        barrier.wait()
    for item in items:
        pipeline.process_item(dict(item))
    pipeline.close_spider()


def test_concurrent_writers_count_as_one(postgresql_server: PgServer) -> None:
    items = pages()
    serial = new_database(postgresql_server, "writers_serial")
    shared = new_database(postgresql_server, "writers_shared")
    store(serial, items, batch=5)
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(WRITERS)
    procs = [
        ctx.Process(target=store, args=(shared, items[w::WRITERS], 5, barrier))
        for w in range(WRITERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    for name in ("serial", "shared"):
        url = serial if name == "serial" else shared
        count, distinct = query(url, "SELECT count(*), count(DISTINCT url) FROM articles")[0]
        assert count == distinct == len({i["url"] for i in items}), name
    distinct_texts = len({i["raw_text"] for i in items})
    assert query(shared, "SELECT rc FROM site_line_stats")[0][0] == distinct_texts
    assert query(shared, "SELECT rc FROM site_line_stats") == query(
        serial, "SELECT rc FROM site_line_stats"
    )
    lc = "SELECT md5, lc FROM line_counts ORDER BY md5"
    assert query(shared, lc) == query(serial, lc)
    rows = "SELECT url, title, raw_text, content_md5 FROM articles ORDER BY url"
    assert len(query(shared, rows)) == len(query(serial, rows))
    assert {r[0] for r in query(shared, rows)} == {r[0] for r in query(serial, rows)}


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
