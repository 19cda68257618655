"""The search index out of the write path (``storage/fts.py``): rows are queued by the
triggers and indexed in bulk by ``sync_search``. The invariant: a search sees every
committed article at every moment and never a half-indexed one, and the index is complete
once a crawl has ended."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, text, update
from sqlalchemy.orm import Session

from newsspider.items import ArticleItem
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.storage import (
    Article,
    Base,
    Corpus,
    create_schema,
    engine_for,
    fts,
    upsert_articles,
)
from newsspider.storage.fts import pending_rows, sync_search
from tests.localserver import project_settings

T0 = datetime(2024, 3, 1, tzinfo=UTC)


def row(k: int, body: str) -> dict:
    return {
        "url": f"https://news.163.com/{k}.html",
        "site": "netease",
        "source": "网易新闻",
        "title": f"第{k}号新闻",
        "published": T0 + timedelta(hours=k),
        "content": body,
        "raw_text": body,
    }


def urls(hits) -> list[str]:
    return sorted(h.url for h in hits)


def integrity(engine) -> None:
    with engine.connect() as conn:
        conn.exec_driver_sql(
            "INSERT INTO articles_fts(articles_fts, rank) VALUES ('integrity-check', 1)"
        )


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path: Path):
    if request.param == "sqlite":
        eng = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    else:
        eng = engine_for(request.getfixturevalue("postgresql_url"))
        Base.metadata.drop_all(eng)
    create_schema(eng)
    return eng


def test_search_sees_every_committed_row_before_and_after_sync(engine):
    with Session(engine) as s, s.begin():
        upsert_articles(s, [row(k, f"量子计算第{k}次突破。\n结尾是增长") for k in range(30)])
    corpus = Corpus(engine)
    expect = sorted(f"https://news.163.com/{k}.html" for k in range(30))
    sqlite = engine.dialect.name == "sqlite"
    assert pending_rows(engine) == (30 if sqlite else 0)
    for query in ("量子计算", "增长", "第7次突破"):  # 3+ chars, 2 chars, one row
        hits = corpus.search(query, limit=100)
        assert urls(hits) == (expect if query != "第7次突破" else [expect[27]]), query
        assert all(h.snippet for h in hits)
    sync_search(engine)
    assert pending_rows(engine) == 0
    if sqlite:
        integrity(engine)
    assert urls(corpus.search("量子计算", limit=100)) == expect
    # changes after the sync: the old text leaves the index at once, the new is queued
    with Session(engine) as s, s.begin():
        s.execute(update(Article).where(Article.url == expect[0]).values(content="改写：新能源"))
        s.execute(delete(Article).where(Article.url == expect[1]))
    assert urls(corpus.search("新能源")) == [expect[0]]
    assert expect[0] not in urls(corpus.search("量子计算", limit=100))
    assert expect[1] not in urls(corpus.search("量子计算", limit=100))
    # a queued row changed again, or deleted, before it was ever indexed
    with Session(engine) as s, s.begin():
        s.execute(update(Article).where(Article.url == expect[0]).values(content="再改：风电"))
        upsert_articles(s, [row(99, "临时稿件")])
        s.execute(delete(Article).where(Article.url == "https://news.163.com/99.html"))
    assert urls(corpus.search("风电")) == [expect[0]] and corpus.search("新能源") == []
    sync_search(engine)
    if sqlite:
        integrity(engine)
        assert pending_rows(engine) == 0
    assert urls(corpus.search("风电")) == [expect[0]]
    assert len(corpus.search("量子计算", limit=100)) == 28


def test_a_sync_that_fails_midway_leaves_whole_rows_and_a_queue(tmp_path, monkeypatch):
    engine = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    create_schema(engine)
    with Session(engine) as s, s.begin():
        upsert_articles(s, [row(k, f"风力发电第{k}期") for k in range(25)])
    assert sync_search(engine, batch=10) == 25  # three transactions of at most 10
    with Session(engine) as s, s.begin():
        upsert_articles(s, [row(k, f"光伏发电第{k}期") for k in range(100, 125)])
    calls = {"n": 0}
    real = engine.begin

    def flaky():
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("killed")
        return real()

    monkeypatch.setattr(engine, "begin", flaky)
    with pytest.raises(RuntimeError):
        sync_search(engine, batch=10)
    monkeypatch.undo()
    assert pending_rows(engine) == 15  # one batch of 10 whole, the rest still queued
    integrity_rows = Corpus(engine).search("光伏发电", limit=100)
    assert len(integrity_rows) == 25  # indexed and queued alike
    with engine.connect() as conn:
        indexed = conn.scalar(text("SELECT count(*) FROM articles_fts WHERE articles_fts MATCH '光伏发 AND 伏发电'"))
    assert indexed == 10
    sync_search(engine)
    integrity(engine)


def test_the_index_is_complete_when_a_crawl_ends(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    pipeline = CorpusPipeline.from_settings(
        project_settings(DATABASE_URL=url, NEWS_DB_BATCH=7), stats=_Stats()
    )
    pipeline.open_spider(None)
    for k in range(40):
        pipeline.process_item(
            ArticleItem(
                url=f"https://news.163.com/{k}.html", site="netease", source="网易新闻",
                html=b"", headers={}, fetched_at=T0, title=f"标题{k}", published=T0,
                raw_text=f"海上风电项目第{k}期开工\n本报记者报道第{k}条",
            )  # fmt: skip
        )
    engine = engine_for(url)
    assert pending_rows(engine) > 0  # during the crawl: queued, searchable all the same
    assert len(Corpus(engine).search("海上风电", limit=100)) == 35
    pipeline.close_spider(None)
    assert pending_rows(engine) == 0
    integrity(engine)
    assert len(Corpus(engine).search("海上风电", limit=100)) == 40


def test_sync_interval_is_a_module_constant():
    assert fts.SEARCH_SYNC_SECONDS > 0


class _Stats:
    def __init__(self) -> None:
        self.values: dict = {}

    def inc_value(self, key, n=1) -> None:
        self.values[key] = self.values.get(key, 0) + n

    def set_value(self, key, value) -> None:
        self.values[key] = value

    def get_stats(self) -> dict:
        return dict(self.values)
