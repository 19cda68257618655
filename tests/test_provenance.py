"""Provenance: where each stored article's bytes came from, on SQLite and PostgreSQL.

``articles.archive`` and ``captured_at`` (revision 0007) through the upsert, the corpus
pipeline, the export and ``scrapy corpus show``; the captures a backfill fetched
(``backfill_captures``, ``storage/backfill.py``); articles per month by origin in
``scrapy corpus stats`` and on the dashboard; the migration from revision 0006.
"""

from __future__ import annotations

import io
import json
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from scrapy.cmdline import execute
from scrapy.utils.project import get_project_settings
from sqlalchemy import Engine, inspect, select, text
from sqlalchemy.orm import Session

from newsspider.items import ArticleItem
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.storage import (
    Article,
    Base,
    Corpus,
    create_schema,
    engine_for,
    read_export,
    transaction,
    upsert_articles,
)
from newsspider.storage.backfill import fetched_captures, record_captures, stored_urls_among
from newsspider.storage.corpus import LIVE
from newsspider.storage.db import CHUNK
from newsspider.storage.models import BackfillCapture
from newsspider.storage.schema import (
    alembic_config,
    current_revision,
    head_revision,
    include_object,
    lock_for_migration,
)
from newsspider.storage.web_queries import article_months
from newsspider.web.views import MONTHS_SHOWN, month_series
from tests.localserver import project_settings
from tests.test_web import request, run_server

REPO = Path(__file__).resolve().parents[1]
SHANGHAI = ZoneInfo("Asia/Shanghai")
CC = "cc:CC-MAIN-2019-13"
WAYBACK = "wayback"
CAPTURED = datetime(2019, 3, 20, 4, 5, 6, tzinfo=UTC)
#: The revision before provenance.
PREVIOUS = "0006"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """A fresh schema at the newest revision on each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'corpus.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    eng = engine_for(url)
    create_schema(eng)
    return eng


def row(url: str, published: datetime | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "url": url,
        "site": "netease",
        "source": "网易新闻",
        "title": "标题",
        "published": published,
        "content": "正文。",
        "raw_text": f"正文。{url}",
    } | extra


def provenance(engine: Engine) -> dict[str, tuple[str | None, datetime | None]]:
    with Session(engine) as s:
        rows = s.execute(select(Article.url, Article.archive, Article.captured_at))
        return {r.url: (r.archive, r.captured_at) for r in rows}


# -- the upsert and the pipeline ------------------------------------------------------------


def test_upsert_stores_provenance_and_a_live_fetch_clears_it(engine):
    url = "https://news.163.com/19/0320/a.html"
    local = CAPTURED.astimezone(SHANGHAI)  # any zone in, UTC back
    with transaction(engine) as s:
        assert upsert_articles(s, [row(url, archive=CC, captured_at=local)]) == (1, 0)
        upsert_articles(s, [row("https://news.163.com/live.html")])
    assert provenance(engine) == {
        url: (CC, CAPTURED),
        "https://news.163.com/live.html": (None, None),
    }
    with Session(engine) as s:
        first_fetch = s.scalar(select(Article.fetched_at).where(Article.url == url))
    # A live crawl refetching the URL: the bytes stored now are live ones.
    with transaction(engine) as s:
        assert upsert_articles(s, [row(url, title="新标题")]) == (0, 1)
    assert provenance(engine)[url] == (None, None)
    # A later capture of another archive overwrites it again; fetched_at stays the first.
    with transaction(engine) as s:
        upsert_articles(s, [row(url, archive=WAYBACK, captured_at=CAPTURED + timedelta(days=1))])
    with Session(engine) as s:
        stored = s.scalars(select(Article).where(Article.url == url)).one()
        assert (stored.archive, stored.captured_at) == (WAYBACK, CAPTURED + timedelta(days=1))
        assert stored.fetched_at == first_fetch and stored.title == "标题"
    with pytest.raises(Exception, match="naive"), transaction(engine) as s:
        upsert_articles(s, [row(url, archive=CC, captured_at=datetime(2019, 3, 20))])


def test_the_corpus_pipeline_stores_an_items_archive_and_capture_time(engine):
    pipeline = CorpusPipeline.from_settings(
        project_settings(DATABASE_URL=engine.url.render_as_string(hide_password=False),
                         NEWS_DB_BATCH=2),
        stats=_Stats(),
    )  # fmt: skip
    pipeline.open_spider(None)
    for n, (archive, captured) in enumerate([(CC, CAPTURED), (None, None)]):
        pipeline.process_item(
            ArticleItem(
                url=f"https://local.example/article/{n}.html",
                site="local",
                source="本地新闻",
                html=b"",
                headers={},
                fetched_at=datetime.now(UTC),
                title=f"标题{n}",
                raw_text=f"第{n}篇正文。\n第二行。",
                encoding="utf-8",
                archive=archive,
                captured_at=captured,
            )
        )
    pipeline.close_spider(None)
    assert provenance(engine) == {
        "https://local.example/article/0.html": (CC, CAPTURED),
        "https://local.example/article/1.html": (None, None),
    }


def test_the_item_exports_the_capture_time_with_its_offset():
    serializer = {f.name: f.metadata.get("serializer") for f in fields(ArticleItem)}
    assert serializer["captured_at"](CAPTURED) == "2019-03-20T04:05:06+00:00"
    item = ArticleItem(url="u", site="s", source="s", html=b"", headers={}, fetched_at=CAPTURED)
    assert (item.archive, item.captured_at) == (None, None)


# -- backfill_captures and stored URLs ------------------------------------------------------


def test_captures_are_recorded_once_and_read_back(engine):
    rows = [
        {"archive": CC, "url": "https://a/1", "timestamp": "20190320040506", "outcome": "stored"},
        {"archive": CC, "url": "https://a/1", "timestamp": "20190401000000", "outcome": "not_html"},
        {"archive": CC, "url": "https://a/2", "timestamp": "20190320040506", "outcome": "http_404"},
        # the same capture again in one batch: the first row is kept
        {"archive": CC, "url": "https://a/2", "timestamp": "20190320040506", "outcome": "dropped"},
        {"archive": WAYBACK, "url": "https://a/1", "timestamp": "20190320040506",
         "outcome": "stored", "fetched_at": CAPTURED},
    ]  # fmt: skip
    with transaction(engine) as s:
        assert record_captures(s, rows) == 4
    with Session(engine) as s:
        assert fetched_captures(s, CC, ["https://a/1", "https://a/2", "https://a/3"]) == {
            ("https://a/1", "20190320040506"),
            ("https://a/1", "20190401000000"),
            ("https://a/2", "20190320040506"),
        }
        assert fetched_captures(s, WAYBACK, {"https://a/1", "https://a/2"}) == {
            ("https://a/1", "20190320040506")
        }
        assert fetched_captures(s, "cc:CC-MAIN-2020-05", ["https://a/1"]) == set()
        assert fetched_captures(s, CC, []) == set()
    # Recorded again (a restarted backfill, a second worker): the first row is kept.
    with transaction(engine) as s:
        assert record_captures(s, [*rows[1:3], rows[3] | {"timestamp": "20190501000000"}]) == 1
        assert record_captures(s, []) == 0
    with Session(engine) as s:
        got = {
            (r.archive, r.url, r.timestamp): (r.outcome, r.fetched_at)
            for r in s.scalars(select(BackfillCapture))
        }
    assert len(got) == 5
    assert got[(CC, "https://a/2", "20190320040506")][0] == "http_404"
    assert got[(CC, "https://a/2", "20190501000000")][0] == "dropped"
    assert got[(WAYBACK, "https://a/1", "20190320040506")] == ("stored", CAPTURED)
    assert all(t.tzinfo is not None for _, t in got.values())
    with pytest.raises(ValueError, match="unknown"), Session(engine) as s:
        record_captures(s, [rows[0] | {"status": 200}])
    with pytest.raises(ValueError, match="lacks"), Session(engine) as s:
        record_captures(s, [{"archive": CC, "url": "https://a/9", "timestamp": "2019"}])


def test_many_captures_and_urls_are_looked_up_in_chunks(engine):
    urls = [f"https://news.163.com/{k:05d}.html" for k in range(CHUNK * 2 + 7)]
    captures = [
        {"archive": CC, "url": u, "timestamp": "20190320040506", "outcome": "stored"} for u in urls
    ]
    with transaction(engine) as s:
        assert record_captures(s, captures) == len(urls)
        upsert_articles(s, [row(u) for u in urls[::2]])
        upsert_articles(s, [row("https://sina.example/1.html", site="sina")])
    with Session(engine) as s:
        assert fetched_captures(s, CC, urls) == {(u, "20190320040506") for u in urls}
        asked = [*urls, "https://sina.example/1.html", "https://nowhere/x"]
        assert stored_urls_among(s, asked) == {*urls[::2], "https://sina.example/1.html"}
        assert stored_urls_among(s, asked, site="sina") == {"https://sina.example/1.html"}
        assert stored_urls_among(s, []) == set()


# -- statistics by origin, export, show -----------------------------------------------------

#: (url, published, archive): two sites, live and two archives, a month boundary in UTC.
ROWS = [
    ("https://news.163.com/a", datetime(2019, 3, 31, 23, 30, tzinfo=UTC), CC),
    ("https://news.163.com/b", datetime(2019, 4, 1, 0, 30, tzinfo=UTC), CC),
    # 2019-04-01 07:00 in Beijing is still March in UTC
    ("https://news.163.com/c", datetime(2019, 4, 1, 7, 0, tzinfo=SHANGHAI), WAYBACK),
    ("https://news.163.com/d", datetime(2024, 5, 1, 8, 0, tzinfo=UTC), None),
    ("https://news.163.com/e", None, WAYBACK),
    ("https://news.sina.com.cn/f", datetime(2024, 5, 2, 8, 0, tzinfo=UTC), None),
]


def fill(engine: Engine) -> None:
    with transaction(engine) as s:
        upsert_articles(
            s,
            [
                row(u, p, site="sina" if "sina" in u else "netease", archive=a,
                    captured_at=None if a is None else CAPTURED)
                for u, p, a in ROWS
            ],
        )  # fmt: skip


def test_stats_count_articles_per_month_by_origin(engine):
    fill(engine)
    stats = Corpus(engine).stats()
    assert stats.per_month == {
        "netease": {
            "2019-03": {CC: 1, WAYBACK: 1},
            "2019-04": {CC: 1},
            "2024-05": {LIVE: 1},
            None: {WAYBACK: 1},
        },
        "sina": {"2024-05": {LIVE: 1}},
    }
    assert stats.origins() == [LIVE, CC, WAYBACK]
    assert stats.origins("sina") == [LIVE]
    assert stats.only("sina").per_month == {"sina": {"2024-05": {LIVE: 1}}}
    as_json = json.loads(json.dumps(stats.as_dict()))
    assert as_json["per_month_by_origin"]["netease"]["null"] == {WAYBACK: 1}
    assert as_json["per_month_by_origin"]["netease"]["2019-03"] == {CC: 1, WAYBACK: 1}
    assert set(as_json) == {"total", "sites", "per_day", "per_month_by_origin"}
    # The same counts as the dashboard's query (every site together, dated articles only).
    assert article_months(engine) == {
        LIVE: {"2024-05": 2},
        CC: {"2019-03": 1, "2019-04": 1},
        WAYBACK: {"2019-03": 1},
    }
    assert article_months(engine, origins=False) == {
        LIVE: {"2019-03": 2, "2019-04": 1, "2024-05": 2}
    }


def test_export_carries_archive_and_capture_time(engine):
    fill(engine)
    corpus = Corpus(engine)
    for fmt in ("jsonl", "csv"):
        fh = io.StringIO()
        assert corpus.export(fh, fmt) == len(ROWS)
        back = {r["url"]: r for r in read_export(io.StringIO(fh.getvalue()), fmt)}
        archived, live = back["https://news.163.com/a"], back["https://news.163.com/d"]
        assert (archived["archive"], archived["captured_at"]) == (CC, CAPTURED)
        assert (live["archive"], live["captured_at"]) == (None, None)
    line = json.loads(_export(corpus).splitlines()[0])
    assert line["archive"] == CC and line["captured_at"] == "2019-03-20T04:05:06+00:00"


def _export(corpus: Corpus) -> str:
    fh = io.StringIO()
    corpus.export(fh, "jsonl")
    return fh.getvalue()


def scrapy(monkeypatch, capsys, url: str, *argv: str) -> tuple[int, str, str]:
    """``scrapy ...`` in this process, as ``scrapy.cmdline`` runs it."""
    monkeypatch.chdir(REPO)
    with pytest.raises(SystemExit) as exc:
        execute(["scrapy", *argv, "-s", f"DATABASE_URL={url}"], get_project_settings())
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_cli_stats_by_origin_json_and_show(monkeypatch, capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    engine = engine_for(url)
    create_schema(engine)
    fill(engine)
    code, plain, _ = scrapy(monkeypatch, capsys, url, "corpus", "stats")
    assert code == 0 and "per month" not in plain and "articles per day" in plain
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "stats", "--by-origin")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "netease: articles per month (UTC publication month) by origin:"
    assert lines[1].split() == ["month", LIVE, CC, WAYBACK, "total"]
    assert [line.split() for line in lines[2:6]] == [
        ["2024-05", "1", "0", "0", "1"],
        ["2019-04", "0", "1", "0", "1"],
        ["2019-03", "0", "1", "1", "2"],
        ["no", "time", "0", "0", "1", "1"],
    ]
    assert "sina: articles per month" in out and "2024-05" in out.split("sina:")[1]
    code, out, _ = scrapy(
        monkeypatch, capsys, url, "corpus", "stats", "--by-origin", "--site", "sina"
    )
    assert (
        code == 0
        and "netease" not in out
        and out.splitlines()[1].split() == ["month", LIVE, "total"]
    )
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "stats", "--json")
    assert json.loads(out)["per_month_by_origin"]["netease"]["2019-04"] == {CC: 1}
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "show", "https://news.163.com/a")
    assert code == 0 and f"archive:     {CC}, captured 2019-03-20 12:05+08:00" in out
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "show", "https://news.163.com/d")
    assert code == 0 and "archive:" not in out
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "show", "1", "--json")
    assert json.loads(out)["archive"] == CC


# -- the migration from the revision before ---------------------------------------------------


def _at_previous_revision(engine: Engine) -> None:
    """Take a database at the newest revision down to :data:`PREVIOUS`."""
    with engine.connect() as conn, conn.begin():
        lock_for_migration(conn)
        command.downgrade(alembic_config(conn), PREVIOUS)


def test_migration_from_0006_keeps_rows_and_adds_null_columns(engine):
    fill(engine)
    with transaction(engine) as s:
        record_captures(s, [{"archive": CC, "url": "u", "timestamp": "1", "outcome": "stored"}])
    _at_previous_revision(engine)
    insp = inspect(engine)
    assert not {"archive", "captured_at"} & {c["name"] for c in insp.get_columns("articles")}
    assert "backfill_captures" not in insp.get_table_names()
    with engine.connect() as conn:
        assert current_revision(conn) == PREVIOUS
        before = conn.execute(
            text("SELECT id, url, title, published FROM articles ORDER BY id")
        ).all()
    # A row written by the code of revision 0006, after the downgrade.
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO articles (url, site, source, content, raw_text, content_md5, "
                "fetched_at, updated_at) VALUES ('https://old/1', 'sina', 's', 'c', 'c', 'm', "
                ":t, :t)"
            ),
            {"t": CAPTURED},
        )
    create_schema(engine)
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
        after = conn.execute(
            text("SELECT id, url, title, published FROM articles ORDER BY id")
        ).all()
        nulls = conn.execute(
            text("SELECT count(*) FROM articles WHERE archive IS NULL AND captured_at IS NULL")
        ).scalar()
        context = MigrationContext.configure(
            conn, opts={"include_object": include_object, "compare_type": True}
        )
        assert compare_metadata(context, Base.metadata) == []
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert nulls == len(after)  # the provenance of rows stored before is unknown: NULL
    indexes = {ix["name"]: ix["column_names"] for ix in inspect(engine).get_indexes("articles")}
    assert indexes["ix_articles_site_archive_published"] == ["site", "archive", "published"]
    with transaction(engine) as s:  # the new table works at once
        assert (
            record_captures(s, [{"archive": CC, "url": "u", "timestamp": "1", "outcome": "x"}]) == 1
        )
    # Migrating again changes nothing (the revision is idempotent).
    with engine.connect() as conn, conn.begin():
        lock_for_migration(conn)
        command.stamp(alembic_config(conn), PREVIOUS)
        command.upgrade(alembic_config(conn), "head")
    assert provenance(engine)["https://old/1"] == (None, None)


# -- the dashboard ----------------------------------------------------------------------------


def test_month_series_fills_gaps_and_leaves_out_the_future():
    now = datetime(2024, 5, 15, tzinfo=UTC)
    months, series = month_series(
        {LIVE: {"2024-05": 2, "2099-01": 9}, CC: {"2024-02": 1}, "empty": {"2099-02": 1}}, now
    )
    assert months == ["2024-02", "2024-03", "2024-04", "2024-05"]
    assert series == {LIVE: [0, 0, 0, 2], CC: [1, 0, 0, 0]}
    # At most MONTHS_SHOWN months back: a time of 1970 (a wrong one) does not stretch it.
    months, series = month_series({LIVE: {"1970-01": 5, "1995-01": 1, "2024-05": 1}}, now)
    assert months[0] == "1995-01" and months[-1] == "2024-05" and len(months) == 353
    assert sum(series[LIVE]) == 2 and len(months) <= MONTHS_SHOWN
    assert month_series({}, now) == ([], {})


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'web.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    engine = engine_for(url)
    create_schema(engine)
    fill(engine)
    return url


def test_dashboard_shows_articles_per_month_by_origin(served):
    for base in run_server(served):
        status, body = request(base + "/api/dashboard?days=30")
        assert status == 200
        data = json.loads(body)
        months = data["month_list"]
        assert months[0] == "2019-03" and months[-1] == datetime.now(UTC).strftime("%Y-%m")
        per_month = data["articles_per_month_by_origin"]
        assert list(per_month) == [LIVE, CC, WAYBACK]
        assert {o: sum(s) for o, s in per_month.items()} == {LIVE: 2, CC: 2, WAYBACK: 1}
        assert per_month[CC][:2] == [1, 1] and per_month[WAYBACK][:2] == [1, 0]
        assert per_month[LIVE][months.index("2024-05")] == 2
        status, page = request(base + "/dashboard?days=30")
        assert status == 200 and 'id="chart-origins"' in page and "<td>" + CC in page
        with Session(engine_for(served)) as s:
            archived = s.scalar(select(Article.id).where(Article.url == "https://news.163.com/a"))
        article = json.loads(request(f"{base}/api/article/{archived}")[1])
        assert (article["archive"], article["captured_at"]) == (CC, CAPTURED.isoformat())
        status, page = request(f"{base}/article/{archived}")
        assert status == 200 and f'<dd id="archive">{CC}, captured' in page


def test_dashboard_of_a_database_before_provenance(tmp_path):
    """``serve`` never migrates: at revision 0006 every article counts as live."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = engine_for(url)
    create_schema(engine)
    fill(engine)
    _at_previous_revision(engine)
    engine.dispose()
    for base in run_server(url):
        status, body = request(base + "/api/dashboard?days=30")
        assert status == 200, body
        per_month = json.loads(body)["articles_per_month_by_origin"]
        assert list(per_month) == [LIVE] and sum(per_month[LIVE]) == 5
        # An article of the old schema: the columns it lacks read as NULL.
        status, page = request(base + "/article/1")
        assert status == 200 and "news.163.com/a" in page and 'id="archive"' not in page
        assert json.loads(request(base + "/api/article/1")[1])["archive"] is None
    with engine.connect() as conn:
        assert current_revision(conn) == PREVIOUS


class _Stats:
    """The slice of Scrapy's stats collector the pipeline uses."""

    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, n: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + n

    def get_stats(self) -> dict[str, int]:
        return dict(self.values)
