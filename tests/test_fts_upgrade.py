"""The search index of an earlier version (FTS5 with positions) upgraded in batches: the
rows queued at once, indexed a batch per transaction (interrupted and resumed, or by
``scrapy corpus index``), ending with the same index a full ``rebuild`` gives and the same
answers as a ``LIKE`` scan."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, insert, text

from newsspider.storage import Article, Corpus, create_schema, engine_for
from newsspider.storage import fts as fts_module
from newsspider.storage.fts import FTS_TABLE, FTS_VOCAB, pending_rows, sync_search

REPO = Path(__file__).resolve().parents[1]
WORDS = ("经济", "新能源", "光伏发电", "人工智能", "中华人民共和国", "Apple", "降雪", "台风")
OLD_FTS = (
    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(title, content, content='articles', "
    "content_rowid='id', tokenize='trigram')"
)


def corpus_of_an_earlier_version(path: Path, n: int = 120) -> Engine:
    """A corpus whose index keeps positions, as versions before ``detail=none`` built it."""
    engine = engine_for(f"sqlite:///{path}")
    create_schema(engine)
    rng = random.Random(4)
    rows = []
    for i in range(n):
        words = rng.sample(WORDS, 3)
        body = "\n".join(f"第{i}篇，关于{w}的报道。{w}继续。" for w in words)
        rows.append({"url": f"https://e.com/{i}", "site": "netease", "source": "s",
                     "title": f"{words[0]}新闻{i}", "content": body, "raw_text": body,
                     "content_md5": str(i)})  # fmt: skip
    with engine.begin() as conn:
        conn.execute(insert(Article.__table__), rows)
    sync_search(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP TABLE {FTS_VOCAB}")
        conn.exec_driver_sql(f"DROP TABLE {FTS_TABLE}")
        conn.exec_driver_sql(OLD_FTS)
        conn.exec_driver_sql(fts_module.SQLITE_TABLES[FTS_VOCAB])
        conn.exec_driver_sql(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
    return engine


def vocabulary(path: Path) -> list[tuple[str, int]]:
    """Every trigram of the index and how many rows hold it."""
    with sqlite3.connect(path) as conn:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, {FTS_TABLE}, row)"
        )
        return conn.execute("SELECT term, doc FROM temp.v ORDER BY term").fetchall()


def full_rebuild(path: Path) -> None:
    """The reference: the lean index built in one ``rebuild``."""
    with sqlite3.connect(path) as conn:
        conn.execute(f"DELETE FROM {fts_module.PENDING_TABLE}")
        conn.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")


def test_batched_upgrade_equals_a_full_rebuild_and_resumes(tmp_path, monkeypatch):
    db = tmp_path / "corpus.db"
    engine = corpus_of_an_earlier_version(db)
    create_schema(engine)  # replaces the index with the lean one, queues every row
    assert pending_rows(engine) == 120
    with engine.connect() as conn:
        ddl = conn.scalar(text("SELECT sql FROM sqlite_master WHERE name = :n"), {"n": FTS_TABLE})
        assert 'detail="none"' in ddl
        merge = conn.scalar(text(f"SELECT v FROM {FTS_TABLE}_config WHERE k = 'automerge'"))
        assert merge == fts_module.FTS_AUTOMERGE
    corpus = Corpus(engine)
    queued_answers = {w: [h.id for h in corpus.search(w, limit=200)] for w in WORDS}
    # interrupted after two batches of 25 ...
    calls = {"n": 0}
    real_begin = engine.begin

    def failing_begin():
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("killed")
        return real_begin()

    monkeypatch.setattr(engine, "begin", failing_begin)
    with pytest.raises(RuntimeError):
        sync_search(engine, batch=25)
    monkeypatch.undo()
    assert pending_rows(engine) == 70
    # ... answers stay whole while half indexed, and the next run finishes
    assert {w: [h.id for h in corpus.search(w, limit=200)] for w in WORDS} == queued_answers
    assert sync_search(engine, batch=25) == 70 and pending_rows(engine) == 0
    with engine.connect() as conn:
        conn.exec_driver_sql(
            f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('integrity-check', 1)"
        )
    engine.dispose()
    reference = tmp_path / "reference.db"
    shutil.copy(db, reference)
    full_rebuild(reference)
    assert vocabulary(db) == vocabulary(reference) and len(vocabulary(db)) > 100
    answers = {w: [h.id for h in Corpus(engine).search(w, limit=200)] for w in WORDS}
    assert answers == queued_answers
    like = {
        w: [r[0] for r in sqlite3.connect(db).execute(
            "SELECT id FROM articles WHERE title LIKE ? OR content LIKE ? "
            "ORDER BY published DESC, id DESC", (f"%{w}%", f"%{w}%"))]
        for w in WORDS
    }  # fmt: skip
    assert answers == like and all(answers.values())


def test_corpus_index_command_indexes_the_queue_in_batches(tmp_path):
    db = tmp_path / "corpus.db"
    corpus_of_an_earlier_version(db).dispose()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}"}
    out = subprocess.run(
        [sys.executable, "-m", "scrapy", "corpus", "index"], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "search index: 120 rows indexed, 0 queued"
    with sqlite3.connect(db) as conn:
        assert conn.execute(f"SELECT count(*) FROM {fts_module.PENDING_TABLE}").fetchone() == (0,)
    again = subprocess.run(
        [sys.executable, "-m", "scrapy", "corpus", "index"], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.stdout.strip().splitlines()[-1] == "search index: 0 rows indexed, 0 queued"


def test_both_plans_give_the_same_answers(tmp_path, monkeypatch):
    """Few candidates: looked up and sorted; many: a walk newest first. The same hits."""
    engine = corpus_of_an_earlier_version(tmp_path / "corpus.db", n=200)
    create_schema(engine)
    sync_search(engine, batch=60)
    with engine.begin() as conn:  # times and a second site, so order and filters matter
        conn.exec_driver_sql(
            "UPDATE articles SET published = strftime('%Y-%m-%d %H:%M:%S.000000+00:00', "
            "'2024-01-01', '+' || ((id * 7919) % 500) || ' hours'), "
            "site = CASE WHEN id % 3 = 0 THEN 'sina' ELSE 'netease' END"
        )
    corpus = Corpus(engine)
    since = datetime(2024, 1, 5, tzinfo=UTC)
    queries = [*WORDS, "人工智", "发电的", "不存在的词"]

    def answers() -> list[list[int]]:
        return [
            [h.id for h in corpus.search(w, limit=limit, **kw)]
            for w in queries
            for limit in (1, 7, 500)
            for kw in ({}, {"site": "sina"}, {"since": since})
        ]

    sorted_plan = answers()
    monkeypatch.setattr(fts_module, "CANDIDATES_SORTED", 0)  # every query walks
    assert answers() == sorted_plan
    assert sum(map(len, sorted_plan)) > 500


def test_a_reader_that_does_not_migrate_searches_the_earlier_index(tmp_path):
    """``scrapy corpus serve`` never migrates: it answers from the index with positions."""
    engine = corpus_of_an_earlier_version(tmp_path / "corpus.db")
    reader = Corpus(engine, setup=False)
    assert reader.backend == "fts5"
    for w in WORDS:
        hits = [h.id for h in reader.search(w, limit=200)]
        like = [r[0] for r in sqlite3.connect(tmp_path / "corpus.db").execute(
            "SELECT id FROM articles WHERE title LIKE ? OR content LIKE ? "
            "ORDER BY published DESC, id DESC", (f"%{w}%", f"%{w}%"))]  # fmt: skip
        assert hits == like and hits
