"""Schema versioning: databases made before it are migrated, rows unchanged, times with
their offset in plain SQL; fresh databases are stamped; PostgreSQL too.

``fixtures/legacy/corpus-before-migrations.db`` was written by the code before versioning
(its README says how); ``corpus-before-migrations.json`` holds every timestamp as that code
read it back. Each test works on a copy.
"""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, event, inspect, select, text

from newsspider.sites import SITES
from newsspider.storage import (
    Article,
    Base,
    Corpus,
    UTCDateTime,
    create_schema,
    engine_for,
    transaction,
    upsert_articles,
)
from newsspider.storage import schema as schema_module
from newsspider.storage.corpus import utc_day_bounds
from newsspider.storage.fts import pending_rows, sync_search
from newsspider.storage.schema import (
    BASELINE,
    MIGRATIONS,
    alembic_config,
    current_revision,
    head_revision,
    include_object,
    lock_for_migration,
)

REPO = Path(__file__).resolve().parents[1]
LEGACY = REPO / "tests" / "fixtures" / "legacy"
LEGACY_DB = LEGACY / "corpus-before-migrations.db"
LEGACY_TIMES: dict[str, dict[str, dict[str, str | None]]] = json.loads(
    (LEGACY / "corpus-before-migrations.json").read_text("utf-8")
)
#: The form every stored SQLite time has after the migration.
STORED_LENGTH = len("2024-01-16 00:30:00.000000+00:00")
NEW_COLUMNS = {"published_source", "published_precision"}


def time_columns() -> dict[str, list[str]]:
    """Every ``UTCDateTime`` column of every table of the models that the legacy fixture
    has (a table or column added by a later revision, ``site_checks``,
    ``articles.captured_at``, starts empty)."""
    legacy = {r[0] for r in raw(LEGACY_DB, "SELECT name FROM sqlite_master WHERE type='table'")}
    columns = {
        table.name: [
            c.name
            for c in table.columns
            if isinstance(c.type, UTCDateTime) and c.name in columns_of(LEGACY_DB, table.name)
        ]
        for table in Base.metadata.sorted_tables
        if table.name in legacy
    }
    return {name: cols for name, cols in columns.items() if cols}


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    """A copy of the database made before versioning."""
    path = tmp_path / "corpus.db"
    shutil.copyfile(LEGACY_DB, path)
    return path


def url_of(path: Path) -> str:
    return f"sqlite:///{path}"


def raw(path: Path, sql: str) -> list[tuple]:
    """Rows of ``sql`` read with nothing but Python's ``sqlite3``: what any SQL reader sees."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(sql).fetchall()
    conn.close()
    return rows


def columns_of(path: Path, table: str) -> list[str]:
    return [r[1] for r in raw(path, f"PRAGMA table_info({table})")]


def dump(path: Path) -> list[str]:
    """The whole database as SQL, to compare before and after."""
    with sqlite3.connect(path) as conn:
        lines = list(conn.iterdump())
    conn.close()
    return lines


def read_times(engine: Engine) -> dict[str, dict[str, dict[str, str | None]]]:
    """Every timestamp as today's code reads it, in the JSON's shape."""
    values: dict[str, dict[str, dict[str, str | None]]] = {}
    with engine.connect() as conn:
        for name in LEGACY_TIMES:
            table = Base.metadata.tables[name]
            key = list(table.primary_key.columns)
            times = [table.c[c] for c in LEGACY_TIMES[name][next(iter(LEGACY_TIMES[name]))]]
            rows = conn.execute(select(*key, *times).order_by(*key)).all()
            values[name] = {
                "|".join(str(v) for v in row[: len(key)]): {
                    c.name: None if v is None else v.isoformat()
                    for c, v in zip(times, row[len(key) :], strict=True)
                }
                for row in rows
            }
    return values


# -- the fixture is what it says ------------------------------------------------------------


def test_the_fixture_is_unversioned_with_naive_times():
    tables = {r[0] for r in raw(LEGACY_DB, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert "alembic_version" not in tables and "articles" in tables
    assert not NEW_COLUMNS & set(columns_of(LEGACY_DB, "articles"))
    published = [r[0] for r in raw(LEGACY_DB, "SELECT published FROM articles") if r[0]]
    assert len(published) >= 12 and not any(p.endswith("+00:00") for p in published)
    counts = {t: raw(LEGACY_DB, f"SELECT count(*) FROM {t}")[0][0] for t in time_columns()}
    assert all(counts.values()), counts  # every table with times has rows
    assert raw(LEGACY_DB, "SELECT count(*) FROM line_counts")[0][0] > 0
    assert LEGACY_DB.stat().st_size < 600_000


# -- SQLite: the legacy corpus migrated -----------------------------------------------------


def test_legacy_sqlite_is_migrated_rows_unchanged_offsets_visible(legacy, caplog):
    engine = engine_for(url_of(legacy))
    articles_before = raw(legacy, "SELECT id, url, title, content, raw_text FROM articles")
    with caplog.at_level(logging.INFO, logger="newsspider.storage.schema"):
        create_schema(engine)
    migrated = f"migrated {url_of(legacy)} from no version (baseline {BASELINE})"
    assert f"{migrated} to {head_revision()}" in caplog.text

    # every old row reads back with its time unchanged
    assert read_times(engine) == LEGACY_TIMES
    order = "ORDER BY id"
    cols = "SELECT id, url, title, content, raw_text FROM articles"
    assert raw(legacy, f"{cols} {order}") == sorted(articles_before)

    # the offset is visible to a plain SQL reader, in every time column of every table
    published = raw(legacy, "SELECT published FROM articles WHERE published IS NOT NULL")
    assert published and all(p.endswith("+00:00") for (p,) in published)
    for table, columns in time_columns().items():
        for column in columns:
            values = [v for (v,) in raw(legacy, f"SELECT {column} FROM {table}") if v is not None]
            assert values, f"{table}.{column}"
            assert all(len(v) == STORED_LENGTH and v.endswith("+00:00") for v in values), (
                table,
                column,
                values,
            )
    first = raw(legacy, "SELECT published FROM articles WHERE id = 1")[0][0]
    assert first == LEGACY_TIMES["articles"]["1"]["published"].replace("T", " ")[:19] + (
        ".000000+00:00"
    )

    # the new columns, NULL for rows stored before them; the revision recorded
    assert NEW_COLUMNS <= set(columns_of(legacy, "articles"))
    assert raw(legacy, "SELECT count(*) FROM articles WHERE published_source IS NOT NULL") == [
        (0,)
    ]
    assert raw(legacy, "SELECT version_num FROM alembic_version") == [(head_revision(),)]


def test_migrating_twice_changes_nothing(legacy):
    engine = engine_for(url_of(legacy))
    create_schema(engine)
    once = dump(legacy)
    create_schema(engine)
    assert dump(legacy) == once
    # the revision itself is idempotent: run 0002 again over migrated data
    with engine.connect() as conn, conn.begin():
        lock_for_migration(conn)
        command.stamp(alembic_config(conn), BASELINE)
        command.upgrade(alembic_config(conn), "head")
    assert dump(legacy) == once


def test_migrated_and_fresh_schemas_match_the_models(legacy, tmp_path):
    fresh = tmp_path / "fresh.db"
    for path in (legacy, fresh):
        engine = engine_for(url_of(path))
        create_schema(engine)
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"include_object": include_object, "compare_type": True}
            )
            assert compare_metadata(context, Base.metadata) == [], path
    # the same columns in the same order, so SELECT * reads alike
    for table in Base.metadata.tables:
        assert columns_of(legacy, table) == columns_of(fresh, table), table


def test_sql_on_migrated_times_filters_orders_and_groups_as_before(legacy):
    engine = engine_for(url_of(legacy))
    create_schema(engine)
    expected = {
        int(k): datetime.fromisoformat(v["published"])
        for k, v in LEGACY_TIMES["articles"].items()
        if v["published"]
    }
    corpus = Corpus(engine)
    # range filters and ordering (export streams in id order; search is newest first)
    since, until = utc_day_bounds(datetime(2024, 1, 16).date())
    rows = [json.loads(line) for line in _export(corpus, since=since, until=until)]
    assert sorted(r["id"] for r in rows) == sorted(
        k for k, t in expected.items() if since <= t < until
    )
    hits = corpus.search("的", limit=50)
    times = [h.published for h in hits if h.published is not None]
    assert times == sorted(times, reverse=True) and times
    # SQLite's date functions read the stored text: per-day statistics (strftime by UTC hour)
    stats = corpus.stats()
    by_day: Counter = Counter()
    for site, days in stats.per_day.items():
        for day, n in days.items():
            if day is not None:  # the article without a time
                by_day[(site, str(day))] += n
    with engine.connect() as conn:
        site_of = dict(conn.execute(select(Article.id, Article.site)).all())
    want: Counter = Counter()
    for k, t in expected.items():
        site = site_of[k]
        want[(site, str(t.astimezone(SITES[site].zone).date()))] += 1
    assert by_day == want
    day = raw(legacy, "SELECT date(published, '+8 hours') FROM articles WHERE id = 1")[0][0]
    assert day == str(expected[1].astimezone(SITES["netease"].zone).date())
    # The earlier index (with positions) was replaced and its rows queued; once they are
    # indexed in batches, FTS5 agrees with the table (no trigger fires on a time rewrite).
    assert pending_rows(engine) == raw(legacy, "SELECT count(*) FROM articles")[0][0]
    assert [h.site for h in corpus.search("降雪")] == ["zaobao"]  # queued rows are found
    sync_search(engine, batch=3)
    assert pending_rows(engine) == 0
    with engine.connect() as conn:
        conn.exec_driver_sql(
            "INSERT INTO articles_fts(articles_fts, rank) VALUES ('integrity-check', 1)"
        )
    assert [h.site for h in corpus.search("降雪")] == ["zaobao"]


def test_a_command_migrates_the_database_it_opens(legacy):
    """``scrapy corpus show`` on the old file: it is migrated, and shows the old time."""
    done = subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", "corpus", "show", "14", "--json"],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": url_of(legacy)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout)
    assert shown["published"] == LEGACY_TIMES["articles"]["14"]["published"]
    assert shown["published_source"] is None and "published_precision" in shown
    assert raw(legacy, "SELECT version_num FROM alembic_version") == [(head_revision(),)]
    assert raw(legacy, "SELECT published FROM articles WHERE id = 14") == [
        ("2020-02-29 18:29:59.123456+00:00",)
    ]


def test_odd_legacy_values_are_rewritten_and_junk_is_left(legacy, caplog):
    """Values SQLAlchemy did not write (by hand, another tool) are parsed one by one."""
    with sqlite3.connect(legacy) as conn:
        conn.execute("UPDATE articles SET published = '2024-01-01 08:00:00' WHERE id = 1")
        conn.execute("UPDATE articles SET published = '2024-01-01T16:00:00+08:00' WHERE id = 2")
        conn.execute("UPDATE articles SET published = 'not a time' WHERE id = 3")
    conn.close()
    with caplog.at_level(logging.WARNING):
        create_schema(engine_for(url_of(legacy)))
    got = dict(raw(legacy, "SELECT id, published FROM articles WHERE id <= 3"))
    assert got == {
        1: "2024-01-01 08:00:00.000000+00:00",
        2: "2024-01-01 08:00:00.000000+00:00",
        3: "not a time",
    }
    assert "articles.published of row 3 is not a time" in caplog.text


def test_a_failed_migration_leaves_the_database_as_it_was(legacy):
    """One transaction: DDL included (SQLite's driver would otherwise commit it apart)."""
    before = dump(legacy)
    with sqlite3.connect(legacy) as conn:  # the last column the migration rewrites fails
        conn.execute(
            "CREATE TRIGGER boom BEFORE UPDATE OF finished_at ON nightly_runs "
            "BEGIN SELECT RAISE(ABORT, 'boom'); END"
        )
    conn.close()
    with pytest.raises(Exception, match="boom"):
        create_schema(engine_for(url_of(legacy)))
    with sqlite3.connect(legacy) as conn:
        conn.execute("DROP TRIGGER boom")
    conn.close()
    assert dump(legacy) == before


def test_downgrade_to_the_baseline_and_back(legacy):
    engine = engine_for(url_of(legacy))
    create_schema(engine)
    migrated = dump(legacy)
    with engine.connect() as conn, conn.begin():
        lock_for_migration(conn)
        command.downgrade(alembic_config(conn), BASELINE)
    assert not NEW_COLUMNS & set(columns_of(legacy, "articles"))
    published = [p for (p,) in raw(legacy, "SELECT published FROM articles") if p]
    assert published and not any(p.endswith("+00:00") for p in published)
    assert read_times(engine) == LEGACY_TIMES  # naive values read as UTC
    create_schema(engine)
    # the same objects and rows; indexes a revision drops and makes again come back after
    # search indexes that a first upgrade made after them (SQLite lists by creation)
    assert sorted(dump(legacy)) == sorted(migrated)


def test_a_database_from_a_newer_version_is_refused(tmp_path):
    engine = engine_for(url_of(tmp_path / "c.db"))
    create_schema(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(RuntimeError, match="revision 9999"):
        create_schema(engine)


# -- fresh databases --------------------------------------------------------------------------


def test_a_fresh_database_is_created_and_stamped_at_head(tmp_path, caplog):
    path = tmp_path / "new.db"
    with caplog.at_level(logging.INFO, logger="newsspider.storage.schema"):
        create_schema(engine_for(url_of(path)))
    assert "created the schema" in caplog.text
    assert raw(path, "SELECT version_num FROM alembic_version") == [(head_revision(),)]
    assert NEW_COLUMNS <= set(columns_of(path, "articles"))
    newest = sorted(p.name for p in (MIGRATIONS / "versions").glob("0*.py"))[-1]
    assert newest.startswith(head_revision() + "_")


def test_create_schema_at_head_costs_one_query(tmp_path, monkeypatch):
    engine = engine_for(url_of(tmp_path / "c.db"))
    create_schema(engine)
    statements: list[str] = []

    def record(conn, cursor, statement, *args) -> None:
        statements.append(statement)

    monkeypatch.setattr(schema_module, "setup_search", lambda engine: "fts5")
    monkeypatch.setattr(schema_module, "setup_counts", lambda engine: False)
    event.listen(engine, "before_cursor_execute", record)
    try:
        create_schema(engine)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert len(statements) == 1 and statements[0].startswith("SELECT version_num, (SELECT")


def test_a_table_dropped_at_head_is_made_again(tmp_path):
    path = tmp_path / "c.db"
    engine = engine_for(url_of(path))
    create_schema(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE xpath_thresholds")
    create_schema(engine)
    assert "xpath_thresholds" in inspect(engine).get_table_names()


def test_new_columns_are_written_and_updated_and_times_stored_with_offset(tmp_path):
    path = tmp_path / "c.db"
    engine = engine_for(url_of(path))
    create_schema(engine)
    row = {
        "url": "https://example.org/a",
        "site": "sina",
        "source": "新浪新闻",
        "title": "标题",
        "published": datetime(2024, 1, 16, 8, 30, tzinfo=UTC),
        "published_source": "json-ld",
        "published_precision": "minute",
        "content": "正文。",
        "raw_text": "正文。",
    }
    with transaction(engine) as s:
        upsert_articles(s, [row])
    with transaction(engine) as s:
        upsert_articles(s, [row | {"published_source": "url", "published_precision": "day"}])
    assert raw(path, "SELECT published, published_source, published_precision FROM articles") == [
        ("2024-01-16 08:30:00.000000+00:00", "url", "day")
    ]


# -- PostgreSQL -------------------------------------------------------------------------------


@pytest.fixture
def pg_url(postgresql_server, request) -> Iterator[str]:
    """A database of its own on the test server, empty; dropped afterwards."""
    psycopg = pytest.importorskip("psycopg")
    name = "mig_" + request.node.name.removeprefix("test_")[:50]
    sql_name = psycopg.sql.Identifier(name)

    def admin(statement) -> None:
        with psycopg.connect(
            host=postgresql_server.host,
            port=postgresql_server.port,
            user="postgres",
            dbname="postgres",
            autocommit=True,
        ) as conn:
            conn.execute(statement)

    admin(psycopg.sql.SQL("DROP DATABASE IF EXISTS {}").format(sql_name))
    admin(psycopg.sql.SQL("CREATE DATABASE {}").format(sql_name))
    url = postgresql_server.url(name)
    yield url
    engine_for(url).dispose()
    admin(psycopg.sql.SQL("DROP DATABASE IF EXISTS {}").format(sql_name))


def _legacy_pg(url: str) -> Engine:
    """The schema of before versioning (the baseline revision, whose tables are the old
    ``create_all``'s), without ``alembic_version``, and rows as the old code wrote them."""
    engine = engine_for(url)
    with engine.connect() as conn, conn.begin():
        command.upgrade(alembic_config(conn), BASELINE)
        conn.execute(text("DROP TABLE alembic_version"))
        for id_, values in LEGACY_TIMES["articles"].items():
            conn.execute(
                text(
                    "INSERT INTO articles (id, url, site, source, title, published, content, "
                    "raw_text, content_md5, fetched_at, updated_at) VALUES (:id, :url, 'sina', "
                    "'新浪新闻', '标题', :published, '正文', '正文', 'md5', :fetched_at, "
                    ":updated_at)"
                ),
                {"id": int(id_), "url": f"https://example.org/{id_}", **values},
            )
        for id_, values in LEGACY_TIMES["crawl_runs"].items():
            conn.execute(
                text(
                    "INSERT INTO crawl_runs (id, site, started_at, finished_at, status, "
                    "pages_fetched, items_new, items_updated, items_dropped, drop_reasons, "
                    "errors, fetch_failures, fetch_failure_reasons, retries, db_retries) "
                    "VALUES (:id, 'sina', :started_at, :finished_at, 'finished', 1, 1, 0, 0, "
                    "'{}', 0, 0, '{}', 0, 0)"
                ),
                {"id": int(id_), **values},
            )
    return engine


def test_postgresql_legacy_schema_is_migrated(pg_url, caplog):
    engine = _legacy_pg(pg_url)
    assert "alembic_version" not in inspect(engine).get_table_names()
    with caplog.at_level(logging.INFO, logger="newsspider.storage.schema"):
        create_schema(engine)
    assert "migrated" in caplog.text
    columns = {c["name"]: c for c in inspect(engine).get_columns("articles")}
    assert NEW_COLUMNS <= set(columns)
    assert columns["published"]["type"].timezone  # timestamptz: the offset is shown
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
        conn.execute(text("SET TIME ZONE 'UTC'"))
        shown = conn.execute(text("SELECT published::text FROM articles WHERE id = 1")).scalar()
        context = MigrationContext.configure(
            conn, opts={"include_object": include_object, "compare_type": True}
        )
        assert compare_metadata(context, Base.metadata) == []
    assert shown.endswith("+00")
    times = read_times(engine)
    assert times["articles"] == LEGACY_TIMES["articles"]
    assert times["crawl_runs"] == LEGACY_TIMES["crawl_runs"]
    # twice: nothing more to do
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="newsspider.storage.schema"):
        create_schema(engine)
    assert "migrated" not in caplog.text
    assert read_times(engine)["articles"] == LEGACY_TIMES["articles"]


def test_postgresql_fresh_database_is_stamped_at_head(pg_url):
    engine = engine_for(pg_url)
    create_schema(engine)
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
    assert NEW_COLUMNS <= {c["name"] for c in inspect(engine).get_columns("articles")}
    Base.metadata.drop_all(engine)  # every table, the version table included
    assert inspect(engine).get_table_names() == []
    create_schema(engine)
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()


# -- helpers ----------------------------------------------------------------------------------


def _export(corpus: Corpus, **filters) -> list[str]:
    fh = io.StringIO()
    corpus.export(fh, "jsonl", **filters)
    return fh.getvalue().splitlines()
