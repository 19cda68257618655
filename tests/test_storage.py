"""Storage on SQLite and on a real PostgreSQL (``tests/pgserver.py``): schema, upserts,
aware datetimes, and the SQL line table agreeing with the pure one (Li & Jiang 2012 §2.2)."""

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from scrapy.settings import Settings
from sqlalchemy import Engine, inspect, select, text
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import Session

from newsspider.extraction.linehash import LineTable, line_md5, page_md5
from newsspider.settings import NEWS_DB_SQLITE_MMAP
from newsspider.storage import (
    Article,
    Base,
    CrawlRun,
    LineCount,
    SiteLineStats,
    SqlLineTable,
    create_schema,
    default_database_url,
    display_url,
    engine_for,
    engine_from_settings,
    resolve_database_url,
    seen_content,
    upsert_articles,
)
from newsspider.storage.db import CHUNK, execute_many, select_in
from tests.localserver import project_settings

SHANGHAI = ZoneInfo("Asia/Shanghai")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """A freshly created schema on each backend (PostgreSQL's is dropped and recreated)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'data' / 'corpus.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    eng = engine_for(url)
    create_schema(eng)
    return eng


def article(url: str, **extra) -> dict:
    row = {
        "url": url,
        "site": "netease",
        "source": "网易新闻",
        "title": "标题",
        "content": "正文。",
        "raw_text": "导航\n正文。",
    }
    return row | extra


def test_create_schema_makes_every_table_and_is_idempotent(engine):
    create_schema(engine)  # second time: no error, nothing changes
    insp = inspect(engine)
    # Every table of models.py, with nothing else imported first (no registration by import).
    assert set(Base.metadata.tables) <= set(insp.get_table_names())
    assert {
        "articles", "line_counts", "site_line_stats", "crawl_runs", "nightly_runs",
        "nightly_site_runs", "site_reclean", "xpath_thresholds",
    } <= set(insp.get_table_names())  # fmt: skip
    # Paper names in Python, lower case in the database (no quoted identifiers on PostgreSQL).
    assert {c["name"] for c in insp.get_columns("line_counts")} == {"site", "md5", "lc"}
    assert insp.get_pk_constraint("line_counts")["constrained_columns"] == ["site", "md5"]
    indexes = {tuple(ix["column_names"]) for ix in insp.get_indexes("articles")}
    assert ("site", "content_md5") in indexes
    unique_url = [ix for ix in insp.get_indexes("articles") if ix["column_names"] == ["url"]]
    assert unique_url and unique_url[0]["unique"]


def test_upsert_counts_new_and_updated_and_never_duplicates(engine):
    with Session(engine) as s, s.begin():
        assert upsert_articles(s, [article("https://a/1"), article("https://a/2")]) == (2, 0)
    first_fetch = datetime(2024, 1, 1, tzinfo=UTC)
    with Session(engine) as s, s.begin():
        rows = [
            article("https://a/1", title="新标题", raw_text="新\n正文", updated_at=first_fetch),
            article("https://a/2"),
            article("https://a/3"),
        ]
        assert upsert_articles(s, rows) == (1, 2)
    with Session(engine) as s:
        assert upsert_articles(s, []) == (0, 0)
        stored = {a.url: a for a in s.scalars(select(Article))}
        assert sorted(stored) == ["https://a/1", "https://a/2", "https://a/3"]
        a1 = stored["https://a/1"]
        assert (a1.title, a1.raw_text, a1.updated_at) == ("新标题", "新\n正文", first_fetch)
        assert a1.content_md5 == page_md5("新\n正文")  # follows raw_text
        assert a1.fetched_at > first_fetch  # the first fetch time is kept


def test_upsert_collapses_a_url_repeated_in_one_batch(engine):
    with Session(engine) as s, s.begin():
        rows = [article("https://a/1", title="旧"), article("https://a/1", title="新")]
        assert upsert_articles(s, rows) == (1, 0)
    with Session(engine) as s:
        assert s.scalars(select(Article.title)).all() == ["新"]


def test_upsert_rejects_unknown_or_missing_columns(engine):
    with Session(engine) as s, s.begin():
        with pytest.raises(ValueError, match="unknown"):
            upsert_articles(s, [article("https://a/1", urladdr="x")])
        with pytest.raises(ValueError, match="lacks"):
            upsert_articles(s, [{"url": "https://a/1"}])


def test_upsert_parameterises_hostile_text(engine):
    evil = "'); DROP TABLE articles; --"
    with Session(engine) as s, s.begin():
        upsert_articles(s, [article("https://a/'1", title=evil)])
    with Session(engine) as s:
        assert s.scalar(select(Article.title)) == evil


def test_aware_datetimes_round_trip_as_utc(engine):
    published = datetime(2024, 5, 1, 8, 30, 15, 123456, tzinfo=SHANGHAI)
    with Session(engine) as s, s.begin():
        upsert_articles(s, [article("https://a/1", published=published)])
        s.add(CrawlRun(site="netease", started_at=published))
    with Session(engine) as s:
        got = s.scalar(select(Article.published))
        run = s.scalars(select(CrawlRun)).one()
        # the same instant, aware, in UTC (08:30 in Shanghai is 00:30 UTC)
        assert got == published
        assert got.utcoffset() == timedelta(0)
        assert (got.hour, got.minute, got.microsecond) == (0, 30, 123456)
        assert run.started_at == published and run.started_at.tzinfo is not None
        fetched = s.scalar(select(Article.fetched_at))
        assert fetched.tzinfo is not None
        # ordering by time compares instants, whatever the zone they came in
        later = datetime(2024, 5, 1, 1, 0, tzinfo=UTC)
        assert s.scalar(select(Article.url).where(Article.published < later)) == "https://a/1"


def test_naive_datetimes_are_refused(engine):
    with Session(engine) as s, s.begin():
        with pytest.raises(StatementError, match="naive datetime"):
            upsert_articles(s, [article("https://a/1", published=datetime(2024, 5, 1))])


def test_seen_content_is_per_site(engine):
    with Session(engine) as s, s.begin():
        upsert_articles(s, [article("https://a/1", raw_text="甲\n乙")])
        assert seen_content(s, "netease", page_md5("甲\n乙"))
        assert seen_content(s, "netease", page_md5("  甲 \n\n乙\n"))  # as the table sees it
        assert not seen_content(s, "sina", page_md5("甲\n乙"))
        assert not seen_content(s, "netease", page_md5("甲"))


def test_crawl_run_stores_counts_and_reasons(engine):
    reasons = {"EmptyMainblockset": 3, "NoTitle": 1}
    with Session(engine) as s, s.begin():
        run = CrawlRun(site="netease", pages_fetched=10, items_new=6, items_dropped=4)
        run.drop_reasons, run.report = json.dumps(reasons), "ok"
        s.add(run)
    with Session(engine) as s:
        run = s.scalars(select(CrawlRun)).one()
        assert (run.status, run.items_updated, run.errors) == ("running", 0, 0)
        assert run.finished_at is None
        assert json.loads(run.drop_reasons) == reasons


def random_pages(seed: int, n: int) -> list[str]:
    """Pages of a made-up site: rotating nav lines, unique bodies, recurring 'related'
    headlines, lines repeated inside a page, stray blank lines and an occasional empty page."""
    rng = random.Random(seed)
    nav = [f"导航 {i}" for i in range(8)]
    pages = []
    for k in range(n):
        if rng.random() < 0.03:
            pages.append("\n \n")
            continue
        lines = rng.sample(nav, rng.randint(0, 5))
        lines += [f"第{k}篇 第{j}段。" for j in range(rng.randint(1, 4))]
        lines += [f"相关新闻 {rng.randint(0, 25)}" for _ in range(rng.randint(0, 3))]
        if rng.random() < 0.2:
            lines.append(lines[0])
        rng.shuffle(lines)
        pages.append("\n".join(lines) + rng.choice(["", "\n", "\n\n  \n"]))
    return pages


@pytest.mark.parametrize("once_per_page", [True, False], ids=["once_per_page", "paper"])
def test_sql_line_table_matches_the_pure_one(engine, once_per_page):
    # L=3 moves the threshold quickly; 230 pages cross two prunings (RC 100 and 200).
    pure = LineTable(L=3, prune_every=100)
    pages = random_pages(11, 230)
    with Session(engine) as s:
        table = SqlLineTable(s, "netease", L=3, once_per_page=once_per_page, prune_every=100)
        for i, page in enumerate(pages):
            assert table.clean(page) == pure.clean(page, once_per_page=once_per_page), i
            if i % 10 == 0:
                s.commit()
        s.commit()
        snap = table.snapshot()
    assert pure.RC == 230 - sum(1 for p in pages if not p.strip())
    assert pure.pruned_at_RC == 200
    assert (snap.LC, snap.RC, snap.pruned_at_RC) == (pure.LC, pure.RC, pure.pruned_at_RC)


def test_sql_prune_deletes_at_or_below_RC_over_100_for_its_site_only(engine):
    with Session(engine) as s, s.begin():
        s.add(SiteLineStats(site="netease", RC=200, pruned_at_RC=0))
        s.add_all(
            [LineCount(site="netease", md5=h, LC=lc) for h, lc in [("a", 1), ("b", 2), ("c", 3)]]
            + [LineCount(site="sina", md5="a", LC=1)]
        )
    with Session(engine) as s, s.begin():
        # threshold 200/100 = 2: a (1) and b (2, equal) go; c stays; sina is untouched.
        assert SqlLineTable(s, "netease").prune() == 2
    with Session(engine) as s:
        left = s.execute(select(LineCount.site, LineCount.md5, LineCount.LC)).all()
        assert sorted(left) == [("netease", "c", 3), ("sina", "a", 1)]
        assert s.get(SiteLineStats, "netease").pruned_at_RC == 200


def test_line_state_persists_across_sessions_and_rollbacks(engine):
    pages = ["导航\n正文一\n版权", "导航\n正文二\n版权", "导航\n正文三\n正文一", "导航\n正文四"]
    pure = LineTable(L=2)
    expected = [pure.clean(p) for p in pages]
    with Session(engine) as s, s.begin():  # run 1
        table = SqlLineTable(s, "netease", L=2)
        assert [table.clean(p) for p in pages[:2]] == expected[:2]
    with Session(engine) as s:  # a run that fails: nothing it counted survives
        SqlLineTable(s, "netease", L=2).clean("导航\n坏页")
        s.rollback()
    with Session(engine) as s, s.begin():  # run 2, a new table object
        table = SqlLineTable(s, "netease", L=2)
        assert table.RC == 2
        assert [table.clean(p) for p in pages[2:]] == expected[2:]
    with Session(engine) as s:
        snap = SqlLineTable(s, "netease", L=2).snapshot()
        assert (snap.LC, snap.RC) == (pure.LC, pure.RC)
        assert snap.LC[line_md5("导航")] == 4
        # another site starts from nothing
        assert SqlLineTable(s, "sina").RC == 0


def test_driver_level_statements_bind_every_value_past_one_chunk(engine):
    """``select_in`` and ``execute_many`` (reprint detection's hot statements): more values
    than one ``IN`` chunk, hostile text bound, not spliced, on both backends."""
    rows = [
        article(f"https://example.com/{k}", title=f"t{k}'); DROP TABLE articles; --")
        for k in range(1203)
    ]
    with Session(engine) as s, s.begin():
        upsert_articles(s, rows)
        ids = [
            i
            for (i,) in select_in(
                s, "SELECT id FROM articles WHERE url {in_}", [r["url"] for r in rows]
            )
        ]
        assert len(ids) == 1203 > CHUNK
        execute_many(
            s, "UPDATE articles SET title = {} WHERE id = {}", [(f"n{i}'--", i) for i in ids]
        )
    with Session(engine) as s:
        titles = dict(s.execute(select(Article.id, Article.title)).all())
    assert titles == {i: f"n{i}'--" for i in ids}
    with Session(engine) as s:
        assert list(select_in(s, "SELECT id FROM articles WHERE id {in_}", [])) == []


def test_sqlite_engine_settings(tmp_path):
    url = f"sqlite:///{tmp_path / 'nested' / 'dir' / 'corpus.db'}"
    eng = engine_for(url)
    assert engine_for(url) is eng  # one engine per URL and process
    with eng.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 30000
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA mmap_size")).scalar() == NEWS_DB_SQLITE_MMAP
    assert (tmp_path / "nested" / "dir").is_dir()
    slow = engine_for(f"sqlite:///{tmp_path / 'b.db'}", busy_timeout=2.5)
    with slow.connect() as conn:
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 2500


def test_database_url_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert default_database_url(tmp_path) == f"sqlite:///{tmp_path}/data/corpus.db"
    assert resolve_database_url(None, tmp_path) == default_database_url(tmp_path)
    assert resolve_database_url(None).endswith("/data/corpus.db")
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://u@h/db")
    assert resolve_database_url(None) == "postgresql+psycopg://u@h/db"
    assert resolve_database_url("") == "postgresql+psycopg://u@h/db"  # empty -s falls back
    assert resolve_database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_engine_from_settings_reads_url_and_busy_timeout(monkeypatch, tmp_path):
    """One engine for the DATABASE_URL setting (else $DATABASE_URL) with NEWS_DB_BUSY_TIMEOUT;
    the same cached engine as engine_for with those arguments, so components share a pool."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    eng = engine_from_settings(Settings({"DATABASE_URL": url, "NEWS_DB_BUSY_TIMEOUT": 1.5}))
    assert eng is engine_for(url, busy_timeout=1.5, mmap=0)  # a bare Settings: no map
    with eng.connect() as conn:
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 1500
    unmapped = engine_from_settings(Settings({"DATABASE_URL": url, "NEWS_DB_SQLITE_MMAP": 0}))
    with unmapped.connect() as conn:
        assert conn.execute(text("PRAGMA mmap_size")).scalar() == 0
    env_url = f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv("DATABASE_URL", env_url)
    project = project_settings(DATABASE_URL=None)
    assert engine_from_settings(project) is engine_for(env_url)  # settings.py's 30 s
    assert display_url("postgresql+psycopg://u:secret@h/db") == "postgresql+psycopg://u:***@h/db"
