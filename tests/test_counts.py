"""``article_counts`` kept on write by triggers (storage/counts.py) equals a full recount of
``articles`` after inserts, re-dated, re-sited and re-archived rows, deletes and hand
edits, on SQLite and PostgreSQL; a database whose triggers are new is filled exactly."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine, insert, text

from newsspider.storage import Article, Corpus, create_schema, engine_for
from newsspider.storage.counts import COUNTS, has_counts
from newsspider.storage.web_queries import article_days, article_months
from tests import test_storage

#: A fresh schema on each backend (SQLite; PostgreSQL where its binaries are installed).
engine = test_storage.engine
SITES = ("netease", "sina", "zaobao")
ARCHIVES = (None, None, "cc:CC-MAIN-2019-35", "wayback")


def rows(rng: random.Random, n: int, start: int = 0) -> list[dict]:
    t0 = datetime(2019, 3, 1, tzinfo=UTC)
    out = []
    for i in range(start, start + n):
        published = None if i % 11 == 0 else t0 + timedelta(minutes=rng.randrange(0, 900 * 24 * 60))
        out.append({
            "url": f"https://example.com/{i}.html", "site": rng.choice(SITES), "source": "s",
            "title": f"标题{i}", "content": "正文。", "raw_text": "正文。", "content_md5": str(i),
            "published": published, "archive": rng.choice(ARCHIVES),
        })  # fmt: skip
    return out


def recount(engine: Engine) -> dict[tuple[str, str, str], int]:
    """What the triggers should hold, grouped from the articles themselves."""
    if engine.dialect.name == "sqlite":
        hour = "coalesce(strftime('%Y-%m-%d %H', published), '')"
    else:
        hour = "coalesce(to_char(published AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'), '')"
    sql = f"SELECT {hour}, site, coalesce(archive, ''), count(*) FROM articles GROUP BY 1, 2, 3"
    with engine.connect() as conn:
        return {(h, s, a): n for h, s, a, n in conn.execute(text(sql))}


def kept(engine: Engine) -> dict[tuple[str, str, str], int]:
    with engine.connect() as conn:
        return {(r.hour, r.site, r.archive): r.n for r in conn.execute(COUNTS.select())}


def test_counts_follow_every_write(engine):
    rng = random.Random(3)
    with engine.begin() as conn:
        conn.execute(insert(Article.__table__), rows(rng, 400))
    assert kept(engine) == recount(engine) and sum(kept(engine).values()) == 400
    with engine.begin() as conn:
        # re-dated (some to no time), re-sited, re-archived, unchanged, deleted
        conn.execute(text("UPDATE articles SET published = NULL WHERE id % 7 = 0"))
        conn.execute(
            Article.__table__.update()
            .where(Article.__table__.c.id % 5 == 1)
            .values(published=datetime(2024, 5, 1, 16, 30, tzinfo=UTC))
        )
        conn.execute(text("UPDATE articles SET site = 'tencent' WHERE id % 13 = 0"))
        conn.execute(text("UPDATE articles SET archive = NULL WHERE id % 3 = 0"))
        conn.execute(text("UPDATE articles SET title = 'x' WHERE id % 2 = 0"))
        conn.execute(text("DELETE FROM articles WHERE id % 17 = 0"))
    expected = recount(engine)
    assert kept(engine) == expected
    assert all(n > 0 for n in kept(engine).values())  # emptied keys are gone
    # a rolled-back write leaves no trace in the counts
    with pytest.raises(RuntimeError), engine.begin() as conn:
        conn.execute(insert(Article.__table__), rows(rng, 10, start=10_000))
        raise RuntimeError("abort")
    assert kept(engine) == expected


def test_new_triggers_fill_the_counts_from_the_stored_articles(engine):
    rng = random.Random(5)
    with engine.begin() as conn:
        conn.execute(insert(Article.__table__), rows(rng, 200))
        # an older corpus: no triggers, no counts
        if engine.dialect.name == "sqlite":
            for name in ("article_counts_ai", "article_counts_ad", "article_counts_au"):
                conn.execute(text(f"DROP TRIGGER {name}"))
        else:
            for name in ("article_counts_insdel", "article_counts_upd"):
                conn.execute(text(f"DROP TRIGGER {name} ON articles"))
        conn.execute(COUNTS.delete())
        conn.execute(insert(Article.__table__), rows(rng, 50, start=500))
    with engine.connect() as conn:
        assert not has_counts(conn)
    create_schema(engine)
    with engine.connect() as conn:
        assert has_counts(conn)
    assert kept(engine) == recount(engine) and sum(kept(engine).values()) == 250


def test_dashboard_and_stats_from_counts_equal_a_scan(engine):
    rng = random.Random(9)
    with engine.begin() as conn:
        conn.execute(insert(Article.__table__), rows(rng, 300))
    since, until = datetime(2019, 6, 1, tzinfo=UTC), datetime(2020, 6, 1, tzinfo=UTC)
    counted_days, counted_months = article_days(engine, since, until), article_months(engine)
    stats = Corpus(engine).stats()
    # the same queries with the triggers gone read the articles themselves
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            conn.execute(text("DROP TRIGGER article_counts_ai"))
        else:
            conn.execute(text("DROP TRIGGER article_counts_insdel ON articles"))
    assert article_days(engine, since, until) == counted_days
    assert article_months(engine) == counted_months
    scanned = Corpus(engine, setup=False).stats()
    assert scanned.per_day == stats.per_day and scanned.per_month == stats.per_month
    assert {k: s.articles for k, s in scanned.sites.items()} == {
        k: s.articles for k, s in stats.sites.items()
    }
    assert stats.total == 300 and sum(counted_months["live"].values()) > 0


def test_the_dashboard_opens_where_the_data_is(tmp_path):
    from newsspider.web.views import dashboard

    engine = engine_for(f"sqlite:///{tmp_path / 'old.db'}")
    create_schema(engine)
    rows_ = rows(random.Random(2), 60)  # 2019-03 .. 2021-08
    with engine.begin() as conn:
        conn.execute(insert(Article.__table__), rows_)
    newest = max(r["published"] for r in rows_ if r["published"])
    now = datetime(2026, 11, 28, 12, tzinfo=UTC)
    d = dashboard(engine, 90, now=now)
    newest_day = newest.astimezone(ZoneInfo("Asia/Shanghai")).date()
    assert d["last"] == newest_day.isoformat() and len(d["day_list"]) == 90
    assert sum(d["articles_total"].values()) > 0  # not an empty chart
    assert d["later"] is not None and d["earlier"] < d["first"]
    # any window: the one ending a year before
    earlier = dashboard(engine, 365, end=newest_day - timedelta(days=365), now=now)
    assert earlier["last"] == (newest_day - timedelta(days=365)).isoformat()
    shanghai = ZoneInfo("Asia/Shanghai")
    in_window = [
        r for r in rows_ if r["published"]
        and earlier["first"] <= r["published"].astimezone(shanghai).date().isoformat()
        <= earlier["last"]
    ]  # fmt: skip
    assert sum(earlier["articles_total"].values()) == len(in_window)
    # a corpus with today's articles opens on today
    with engine.begin() as conn:
        today_row = rows(random.Random(1), 1, start=999)[0]
        today_row["published"] = now - timedelta(hours=3)
        conn.execute(insert(Article.__table__), [today_row])
    fresh = dashboard(engine, 30, now=now)
    assert fresh["last"] == "2026-11-28" and fresh["later"] is None
