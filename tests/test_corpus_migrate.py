"""``scrapy corpus migrate --to postgresql+psycopg://...``: a SQLite corpus copied into a real
PostgreSQL (tests/pgserver.py, skipped where absent), asserting on what was stored: every
table equal row for row, times exact and UTC, bytes as bytes, Chinese text intact, id
sequences past the copied ids, search working on the target; a run killed with SIGKILL
and run again gives the same tables; bad targets are one line and exit status 2; a
difference after the copy is one line and exit status 1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from scrapy.cmdline import execute
from scrapy.utils.project import get_project_settings
from sqlalchemy import Engine, insert, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from newsspider.reprints import params_from_settings
from newsspider.storage import Corpus, create_schema, engine_for, rebuild_stories, upsert_articles
from newsspider.storage.migrate import copied_tables, table_digest
from newsspider.storage.models import (
    Article,
    BackfillCapture,
    CrawlRun,
    LineCount,
    NightlyRun,
    NightlySiteRun,
    ReprintBand,
    ReprintSignature,
    SiteCheck,
    SiteLineStats,
    SiteReclean,
    XpathThresholds,
)

REPO = Path(__file__).resolve().parents[1]
#: A time with microseconds, to see that nothing is rounded on the way.
T0 = datetime(2024, 5, 1, 7, 30, 15, 123456, tzinfo=UTC)
STORY = (
    "国务院今天发布新能源汽车产业发展政策，明确提出到二〇三〇年新能源汽车销量占比达到一半以上。"
    "政策涉及人工智能、芯片与经济转型，多部门将出台配套措施，支持充电基础设施建设。"
)


def _article(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "url": f"https://news.example.cn/{i}.html",
        "site": ("netease", "sina", "zaobao")[i % 3],
        "source": "网易新闻",
        "title": f"第{i}条新闻：经济观察",
        "published": T0 + timedelta(minutes=i, microseconds=i),
        "content": f"第{i}条稿件的正文，含有百分号 100% 与引号 \"'。\n第二段：人工智能。",
        "raw_text": f"导航\n第{i}条稿件的正文。",
        "encoding": "utf-8",
        "fetched_at": T0 + timedelta(hours=1, microseconds=7),
    } | extra


def build_corpus(url: str, articles: int = 40) -> Engine:
    """A small corpus touching every kind of column: Chinese text, NULLs, times with
    microseconds, reprint signatures (bytes) and band keys, stories, line counts, crawl
    and nightly runs (with their foreign keys), checks, captures, thresholds."""
    eng = engine_for(url)
    create_schema(eng)
    rows = [_article(i) for i in range(articles)]
    rows[1] |= {"title": None, "published": None, "encoding": None}  # NULLs
    rows[2] |= {"archive": "cc:CC-MAIN-2024-10", "captured_at": T0 - timedelta(days=300)}
    rows[3] |= {"authors": ["张三", "李四"], "origin": "新华社", "section": "国内"}
    for k in (4, 5, 6):  # one story of three reprints
        rows[k] |= {"content": STORY * 2 + f"（记者 {k}）", "raw_text": STORY}
    with Session(eng) as s, s.begin():
        upsert_articles(s, rows)
    rebuild_stories(eng, params_from_settings(get_project_settings()))
    with eng.begin() as conn:
        conn.execute(
            insert(LineCount.__table__),
            [
                {"site": s, "md5": f"{i:032x}", "LC": i}
                for s in ("netease", "sina")
                for i in range(30)
            ],
        )
        conn.execute(insert(SiteLineStats.__table__), [{"site": "netease", "RC": 120}])
        run = conn.execute(
            insert(CrawlRun.__table__).returning(CrawlRun.__table__.c.id),
            {"site": "netease", "started_at": T0, "finished_at": T0 + timedelta(seconds=41),
             "status": "finished", "drop_reasons": '{"EmptyBody": 3}', "summary": "网易: 12"},
        ).scalar_one()  # fmt: skip
        night = conn.execute(
            insert(NightlyRun.__table__).returning(NightlyRun.__table__.c.id),
            {"host": "主机", "pid": 1, "sites": "netease", "started_at": T0},
        ).scalar_one()
        conn.execute(
            insert(NightlySiteRun.__table__),
            {"nightly_run_id": night, "crawl_run_id": run, "site": "netease", "resumed": True},
        )
        conn.execute(
            insert(SiteCheck.__table__),
            {"site": "sina", "checked_at": T0, "status": "ok", "detail": None},
        )
        conn.execute(
            insert(BackfillCapture.__table__),
            {"archive": "wayback", "url": "https://news.example.cn/1.html",
             "timestamp": "20240501073015", "outcome": "stored", "fetched_at": T0},
        )  # fmt: skip
        conn.execute(
            insert(XpathThresholds.__table__),
            {"site": "sina", "Length_Threshold": 0.1 + 0.2, "B_n_Threshold": 1e-300, "pages": 9,
             "trained_at": T0},
        )  # fmt: skip
        conn.execute(insert(SiteReclean.__table__), {"site": "sina", "reclean_at": None})
    return eng


def table_rows(eng: Engine) -> dict[str, list[tuple]]:
    """Every copied table's rows in primary-key order, as the models' types read them."""
    out = {}
    with eng.connect() as conn:
        for table in copied_tables():
            key = list(table.primary_key.columns)
            order = [c.collate("C") if eng.dialect.name == "postgresql" and
                     c.type.python_type is str else c for c in key]  # fmt: skip
            out[table.name] = [tuple(r) for r in conn.execute(select(table).order_by(*order))]
    return out


@pytest.fixture
def pg_database(postgresql_url: str):
    """A function that makes an empty PostgreSQL database and returns its URL."""
    import psycopg
    from psycopg import sql

    base = make_url(postgresql_url)
    made: list[str] = []

    def make(name: str) -> str:
        conninfo = {"host": base.host, "port": base.port, "user": base.username}
        with psycopg.connect(**conninfo, dbname="postgres", autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        made.append(name)
        return base.set(database=name).render_as_string(hide_password=False)

    yield make
    for name in made:
        engine_for(base.set(database=name).render_as_string(hide_password=False)).dispose()


def scrapy(monkeypatch, capsys, source: str, *argv: str) -> tuple[int, str, str]:
    """``scrapy corpus ...`` in this process; (exit status, stdout, stderr)."""
    monkeypatch.chdir(REPO)
    with pytest.raises(SystemExit) as exc:
        execute(["scrapy", "corpus", *argv, "-s", f"DATABASE_URL={source}"], get_project_settings())
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_migrate_copies_every_table_exactly(monkeypatch, capsys, tmp_path, pg_database):
    source_url = f"sqlite:///{tmp_path / 'corpus.db'}"
    source = build_corpus(source_url)
    target_url = pg_database("migrate_full")
    status, out, err = scrapy(monkeypatch, capsys, source_url, "migrate", "--to", target_url)
    assert status == 0, err
    last = out.strip().splitlines()[-1]
    assert last.startswith("copied ") and "verified" in last and "digests equal" in last, out
    target = engine_for(target_url)
    expected, got = table_rows(source), table_rows(target)
    assert got == expected
    assert {t for t, rows in expected.items() if rows} >= {
        "articles", "reprint_signatures", "reprint_bands", "line_counts", "site_line_stats",
        "crawl_runs", "nightly_runs", "nightly_site_runs", "site_checks", "backfill_captures",
        "xpath_thresholds", "site_reclean",
    }  # fmt: skip
    with Session(target) as s:
        a0 = s.scalars(select(Article).where(Article.url == _article(0)["url"])).one()
        assert a0.published == T0 and a0.published.tzinfo is not None
        assert a0.published.utcoffset() == timedelta(0) and a0.published.microsecond == 123456
        assert a0.title == "第0条新闻：经济观察" and "百分号 100%" in a0.content
        a1 = s.scalars(select(Article).where(Article.url == _article(1)["url"])).one()
        assert (a1.title, a1.published, a1.encoding) == (None, None, None)
        reprints = [_article(k)["url"] for k in (4, 5, 6)]
        members = s.scalars(select(Article).where(Article.url.in_(reprints))).all()
        assert len({a.story_id for a in members} - {None}) == 1  # the reprints are one story
        sig = s.scalar(
            select(ReprintSignature.signature).where(ReprintSignature.article_id == members[0].id)
        )
        assert isinstance(sig, bytes) and len(sig) > 100
        assert s.scalar(select(ReprintBand.band_key).limit(1)) is not None
        th = s.scalars(select(XpathThresholds)).one()
        assert (th.Length_Threshold, th.B_n_Threshold) == (0.1 + 0.2, 1e-300)
    # the revision is the source's, and the sequences are past the copied ids
    with source.connect() as s_conn, target.connect() as t_conn:
        version = "SELECT version_num FROM alembic_version"
        assert t_conn.scalar(text(version)) == s_conn.scalar(text(version))
    with Session(target) as s, s.begin():
        upsert_articles(s, [_article(1000)])
        run = CrawlRun(site="sina")
        s.add(run)
        s.flush()
        assert run.id == 2
        assert s.scalar(select(Article.id).where(Article.url == _article(1000)["url"])) == 41
    # search on the target is PostgreSQL's own, over the copied rows
    hits = Corpus(target).search("第7条稿件")
    assert [h.url for h in hits] == [_article(7)["url"]]
    assert len(Corpus(target).search("人工智能", limit=100)) == 41
    with target.connect() as conn:
        names = set(
            conn.scalars(text("SELECT indexname FROM pg_indexes WHERE tablename = 'articles'"))
        )
    assert {"ix_articles_title_trgm", "ix_articles_content_trgm", "ix_articles_published"} <= names
    target.dispose()


def test_a_finished_migration_run_again_copies_nothing_and_verifies(
    monkeypatch, capsys, tmp_path, pg_database
):
    source_url = f"sqlite:///{tmp_path / 'corpus.db'}"
    build_corpus(source_url, articles=10)
    target_url = pg_database("migrate_twice")
    assert scrapy(monkeypatch, capsys, source_url, "migrate", "--to", target_url)[0] == 0
    status, out, err = scrapy(monkeypatch, capsys, source_url, "migrate", "--to", target_url)
    assert status == 0, err
    assert out.strip().splitlines()[-1].startswith("copied 0 rows (resumed)"), out


def _killed_run(source_url: str, target_url: str, batch: int, total: int) -> int:
    """Start the command in a subprocess, SIGKILL it once some batches of ``articles`` are
    in; return how many article rows it had committed."""
    env = os.environ | {"DATABASE_URL": source_url}
    cmd = [sys.executable, "-m", "scrapy.cmdline", "corpus", "migrate", "--to", target_url,
           "--batch", str(batch)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    target = engine_for(target_url)
    deadline = time.monotonic() + 120
    n = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with target.connect() as conn:
                    n = conn.scalar(text("SELECT count(*) FROM articles")) or 0
            except Exception:  # the schema is not there yet
                n = 0
            if n >= total // 4:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, "the migration ended before it could be killed"
    with target.connect() as conn:
        n = conn.scalar(text("SELECT count(*) FROM articles")) or 0
    target.dispose()
    return n


def test_a_killed_migration_resumes_to_the_same_tables(monkeypatch, capsys, tmp_path, pg_database):
    """SIGKILL half way through ``articles``, run again: every table equal to the source's
    and to an uninterrupted run's, sequences included; batches were whole."""
    source_url = f"sqlite:///{tmp_path / 'corpus.db'}"
    total, batch = 3000, 7
    source = build_corpus(source_url, articles=total)
    target_url = pg_database("migrate_killed")
    copied = _killed_run(source_url, target_url, batch, total)
    assert 0 < copied < total and copied % batch == 0, copied
    in_target = sum(map(len, table_rows(engine_for(target_url)).values()))
    status, out, err = scrapy(
        monkeypatch, capsys, source_url, "migrate", "--to", target_url, "--batch", str(batch)
    )
    assert status == 0, err
    last = out.strip().splitlines()[-1]
    assert "(resumed)" in last and "digests equal" in last, out
    assert f"copied {sum(map(len, table_rows(source).values())) - in_target:,} rows" in last
    whole_url = pg_database("migrate_whole")
    assert scrapy(monkeypatch, capsys, source_url, "migrate", "--to", whole_url)[0] == 0
    resumed, whole = engine_for(target_url), engine_for(whole_url)
    assert table_rows(resumed) == table_rows(source) == table_rows(whole)
    sequences = "SELECT sequencename, last_value FROM pg_sequences ORDER BY 1"
    with resumed.connect() as a, whole.connect() as b:
        assert a.execute(text(sequences)).all() == b.execute(text(sequences)).all()
    resumed.dispose()
    whole.dispose()


def test_bad_targets_are_one_line_and_status_2(monkeypatch, capsys, tmp_path, pg_database):
    source_url = f"sqlite:///{tmp_path / 'corpus.db'}"
    build_corpus(source_url, articles=10)
    other_sqlite = f"sqlite:///{tmp_path / 'other.db'}"
    base = make_url(pg_database("migrate_bad"))
    closed = base.set(port=1).render_as_string(hide_password=False)
    for to, words in (
        (other_sqlite, "must be a PostgreSQL URL"),
        ("not a url", "not a database URL"),
        (closed, "cannot connect"),
    ):
        status, _, err = scrapy(monkeypatch, capsys, source_url, "migrate", "--to", to)
        assert status == 2, (to, err)
        assert len(err.strip().splitlines()) == 1 and words in err, err
    # a target holding another corpus is refused, and left as it was
    other_url = f"sqlite:///{tmp_path / 'another.db'}"
    other = build_corpus(other_url, articles=10)
    with other.begin() as conn:
        conn.execute(text("UPDATE articles SET title = '另一个语料库' || id"))
    target_url = base.render_as_string(hide_password=False)
    assert scrapy(monkeypatch, capsys, other_url, "migrate", "--to", target_url)[0] == 0
    before = table_rows(engine_for(target_url))
    status, _, err = scrapy(monkeypatch, capsys, source_url, "migrate", "--to", target_url)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert "holds another corpus (articles" in err, err
    assert table_rows(engine_for(target_url)) == before
    # so is a PostgreSQL source
    status, _, err = scrapy(monkeypatch, capsys, target_url, "migrate", "--to", target_url)
    assert status == 2 and "must be SQLite" in err, err
    engine_for(target_url).dispose()


def test_a_difference_after_the_copy_is_one_line_and_status_1(
    monkeypatch, capsys, tmp_path, pg_database
):
    """The verification reads both sides: a row changed in the target after it was copied
    (same count, same keys) is found by its digest."""
    source_url = f"sqlite:///{tmp_path / 'corpus.db'}"
    source = build_corpus(source_url, articles=10)
    target_url = pg_database("migrate_differs")
    assert scrapy(monkeypatch, capsys, source_url, "migrate", "--to", target_url)[0] == 0
    target = engine_for(target_url)
    with target.begin() as conn:
        conn.execute(text("UPDATE line_counts SET lc = lc + 1 WHERE md5 = :m"), {"m": f"{15:032x}"})
    table = LineCount.__table__
    assert table_digest(source, table)[0] == table_digest(target, table)[0]
    assert table_digest(source, table)[1] != table_digest(target, table)[1]
    status, out, err = scrapy(monkeypatch, capsys, source_url, "migrate", "--to", target_url)
    assert status == 1, (out, err)
    assert err.strip().splitlines() == [err.strip()] and "line_counts differs" in err, err
    assert "verified" not in out
    target.dispose()


def test_the_digest_is_order_independent_and_sees_types(tmp_path):
    """Equal rows in another order: equal digests; a time one microsecond off, or bytes
    differing in one byte, are other digests."""
    a = engine_for(f"sqlite:///{tmp_path / 'a.db'}")
    b = engine_for(f"sqlite:///{tmp_path / 'b.db'}")
    table = ReprintSignature.__table__
    rows = [{"article_id": i, "content_md5": "x", "chars": i, "signature": bytes([i]) * 8}
            for i in range(1, 50)]  # fmt: skip
    for eng, order in ((a, rows), (b, rows[::-1])):
        create_schema(eng)
        with eng.begin() as conn:
            conn.execute(insert(table), order)
    assert table_digest(a, table) == table_digest(b, table)
    with b.begin() as conn:
        conn.execute(text("UPDATE reprint_signatures SET signature = x'0102' WHERE article_id = 3"))
    assert table_digest(a, table) != table_digest(b, table)
