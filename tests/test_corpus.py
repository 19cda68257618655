"""Querying the corpus (``newsspider.storage.Corpus``, ``scrapy corpus``) on SQLite and on a
real PostgreSQL (``tests/pgserver.py``): Chinese full-text search of every query length
with filters, hostile characters, the FTS index kept in sync, exports that round-trip every
stored field, and statistics.

Search answers are checked against a brute-force substring scan of the same rows in
Python, so each backend path (FTS5 trigram, LIKE fallback, pg_trgm ILIKE) must agree with
plain ``in``.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from scrapy.cmdline import execute
from scrapy.utils.project import get_project_settings
from sqlalchemy import Engine, delete, inspect, select, text, update
from sqlalchemy.orm import Session

from newsspider.storage import (
    Article,
    Base,
    Corpus,
    LineCount,
    SiteLineStats,
    create_schema,
    engine_for,
    read_export,
    upsert_articles,
)
from newsspider.storage.fts import fts_phrase, like_pattern, make_snippet, sync_search

SH = ZoneInfo("Asia/Shanghai")
SG = ZoneInfo("Asia/Singapore")
REPO = Path(__file__).resolve().parents[1]

# (url, site, title, published, content)
ROWS = [
    ("https://news.163.com/a1", "netease", "国务院发布新能源汽车政策",
     datetime(2024, 5, 1, 7, 30, tzinfo=SH),
     "国务院今天发布新能源汽车产业发展政策。\n政策涉及人工智能与经济转型。"),
    ("https://news.163.com/a2", "netease", "粤港澳大湾区建设提速",
     datetime(2024, 5, 2, 9, 0, tzinfo=SH),
     "粤港澳大湾区基础设施投资增长，经济活力持续增强。"),
    ("https://news.163.com/a3", "netease", "央行：保持流动性合理充裕",
     datetime(2024, 4, 28, 23, 50, tzinfo=SH),
     "央行表示将保持流动性合理充裕，支持实体经济。\n税费减免继续。"),
    ("https://news.sina.com.cn/b1", "sina", "人工智能大模型竞赛升温",
     datetime(2024, 5, 1, 0, 10, tzinfo=SH),
     "多家公司发布人工智能大模型，新能源与芯片板块上涨。"),
    ("https://news.sina.com.cn/b2", "sina", None, None,
     "无时间的稿件：经济观察。\n含有百分号 100% 与下划线 a_b 以及 \"引号\" 和 'single'。"),
    ("https://www.zaobao.com.sg/c1", "zaobao", "新加坡经济增长放缓",
     datetime(2024, 5, 1, 23, 30, tzinfo=SG),
     "新加坡第一季度经济增长放缓，人工智能投资增加。"),
    ("https://www.zaobao.com.sg/c2", "zaobao", "Tesla 在华销量",
     datetime(2024, 5, 3, 12, 0, tzinfo=SG),
     "TESLA 与比亚迪竞争，新能源车价格战持续。OR AND NEAR( * -x : ^"),
]  # fmt: skip


def _row(url, site, title, published, content, **extra) -> dict:
    return {
        "url": url,
        "site": site,
        "source": {"netease": "网易新闻", "sina": "新浪新闻", "zaobao": "联合早报"}[site],
        "title": title,
        "published": published,
        "content": content,
        "raw_text": "导航\n" + content,
        "encoding": "utf-8",
    } | extra


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """A fresh schema with the ROWS stored, on each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'corpus.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    eng = engine_for(url)
    create_schema(eng)
    with Session(eng) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in ROWS])
    return eng


@pytest.fixture
def corpus(engine: Engine) -> Corpus:
    return Corpus(engine)


def expected_urls(query, site=None, since=None, until=None, limit=20, rows=ROWS) -> list[str]:
    """The answer by brute force: substring test (ASCII case-insensitive), newest first."""
    q = query.strip().lower()
    hits = [
        r
        for r in rows
        if (q in (r[2] or "").lower() or q in r[4].lower())
        and (site is None or r[1] == site)
        and (since is None or (r[3] is not None and r[3] >= since))
        and (until is None or (r[3] is not None and r[3] < until))
    ]
    # published desc, no time last, then insertion order (id) desc
    order = {r[0]: i for i, r in enumerate(rows)}
    hits.sort(key=lambda r: (r[3] is None, -(r[3].timestamp() if r[3] else 0), -order[r[0]]))
    return [r[0] for r in hits][:limit]


def urls(hits) -> list[str]:
    return [h.url for h in hits]


QUERIES = ["经济", "新能源", "人工智能", "粤港澳大湾区", "税", "济", "央行", "大模型竞赛", "tesla"]


@pytest.mark.parametrize("query", QUERIES)
def test_search_finds_chinese_words_of_every_length(corpus, query):
    got = corpus.search(query)
    assert urls(got) == expected_urls(query)
    assert got, query
    for h in got:
        assert h.snippet  # a snippet shows the match where the content has it
        row = next(r for r in ROWS if r[0] == h.url)
        if query.lower() in row[4].lower():
            assert "[" in h.snippet and "]" in h.snippet, h.snippet


TAIL_ROWS = [
    ("https://news.163.com/t1", "netease", "专家谈央行", datetime(2024, 6, 1, tzinfo=SH),
     "今年经济稳中有进\n市场预期增长"),
    ("https://news.163.com/t2", "netease", "It works", datetime(2024, 6, 2, tzinfo=SH),
     "first line\nends with iT"),
    ("https://news.163.com/t3", "netease", "Éclair 与 éclat", datetime(2024, 6, 3, tzinfo=SH),
     "法语词 Éc 与 éc 的大小写"),
    ("https://news.163.com/t4", "netease", "增长", None, "增长"),  # columns of exactly 2
]  # fmt: skip


SHORT_QUERIES = [
    "增长", "央行", "进\n", "长", "it", "IT", "iT", "Éc", "éc", "经济", "长期", "税费",
    "行", "T", "s", "谈", "饕",  # one character: a column's last, next to last, inside, absent
]  # fmt: skip


@pytest.mark.parametrize("row_cost", [0, 10**9], ids=["like-walk", "indexed"])
def test_short_queries_take_either_path_with_the_same_answers(
    corpus, monkeypatch, row_cost
):
    """Occurrences followed by a character are found through the trigram list, those
    ending a column through the tail indexes; the LIKE walk must agree exactly."""
    from newsspider.storage import fts

    with Session(corpus.engine) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in TAIL_ROWS])
    monkeypatch.setattr(fts, "SHORT_ROW_COST", row_cost)
    rows = ROWS + TAIL_ROWS
    since = datetime(2024, 5, 1, tzinfo=SH)
    for query in SHORT_QUERIES:
        assert urls(corpus.search(query)) == expected_urls(query, rows=rows), query
        got = corpus.search(query, site="netease", since=since, limit=2)
        want = expected_urls(query, site="netease", since=since, limit=2, rows=rows)
        assert urls(got) == want, query
    if corpus.backend == "fts5":
        with corpus.engine.connect() as conn:
            for query in ("增长", "it", "央行"):
                assert (fts.short_match(conn, query) is not None) == bool(row_cost), query
            assert fts.short_match(conn, "Éc") is None  # non-ASCII case: the walk
            for query in ("长", "T", "饕"):  # one character: either path too
                assert (fts.short_match(conn, query) is not None) == bool(row_cost), query


def test_search_uses_the_index_for_three_or_more_characters(corpus):
    if corpus.dialect == "sqlite":
        assert corpus.backend == "fts5"
        sync_search(corpus.engine)  # the index is brought up to date in bulk (fts.py)
        with corpus.engine.connect() as conn:
            n = conn.scalar(
                text("SELECT count(*) FROM articles_fts WHERE articles_fts MATCH :q"),
                {"q": fts_phrase("新能源")},
            )
        assert n == 3
    else:
        assert corpus.backend == "pg_trgm"
        names = {ix["name"] for ix in inspect(corpus.engine).get_indexes("articles")}
        assert {"ix_articles_title_trgm", "ix_articles_content_trgm"} <= names


SH_MAY1 = datetime(2024, 5, 1, tzinfo=SH)
FILTERS = [
    {"site": "netease"},
    {"site": "sina"},
    {"site": "nosuchsite"},
    {"since": SH_MAY1},
    {"until": SH_MAY1},
    {"since": SH_MAY1, "until": SH_MAY1 + timedelta(days=1)},
    {"site": "zaobao", "since": datetime(2024, 5, 1, 15, 30, tzinfo=UTC)},  # = 23:30 SG, inclusive
    {"site": "zaobao", "until": datetime(2024, 5, 1, 15, 30, tzinfo=UTC)},  # exclusive
    {"limit": 2},
    {"limit": 1, "site": "netease"},
]


def test_search_filters_by_site_and_time(corpus):
    for query in ["经济", "人工智能", "济", "新能源"]:
        for filters in FILTERS:
            want = expected_urls(query, **filters)
            assert urls(corpus.search(query, **filters)) == want, (query, filters)


def test_since_compares_instants_whatever_the_zone(corpus):
    # 2024-05-01 07:30 in Shanghai is 2024-04-30 23:30 UTC.
    got = urls(corpus.search("新能源", since=datetime(2024, 4, 30, 23, 30, tzinfo=UTC)))
    assert "https://news.163.com/a1" in got
    got = urls(corpus.search("新能源", since=datetime(2024, 4, 30, 23, 31, tzinfo=UTC)))
    assert "https://news.163.com/a1" not in got


def test_results_are_newest_first_and_untimed_last(corpus):
    got = corpus.search("经济")
    times = [h.published for h in got]
    assert times[-1] is None
    dated = [t for t in times if t is not None]
    assert dated == sorted(dated, reverse=True)
    assert all(t.tzinfo is not None for t in dated)


HOSTILE = ['"', '"引号"', "%", "100%", "_", "a_b", "'", "'single'", "' OR 1=1 --", "\\",
           "OR AND", "NEAR(", "*", "-x", ": ^", '""', "%%", "_%_"]  # fmt: skip


def test_special_characters_are_plain_text(corpus):
    for query in HOSTILE:
        assert urls(corpus.search(query)) == expected_urls(query), query


def test_wildcards_do_not_match_everything(corpus):
    assert urls(corpus.search("%")) == ["https://news.sina.com.cn/b2"]
    assert urls(corpus.search("_")) == ["https://news.sina.com.cn/b2"]
    assert corpus.search("1_0") == [] and corpus.search("1%0") == []


def test_bad_arguments_are_refused(corpus):
    with pytest.raises(ValueError, match="empty"):
        corpus.search("  ")
    with pytest.raises(ValueError, match="naive"):
        corpus.search("经济", since=datetime(2024, 5, 1))
    with pytest.raises(ValueError, match="limit"):
        corpus.search("经济", limit=0)


def test_index_follows_inserts_updates_and_deletes(corpus):
    engine = corpus.engine
    with Session(engine) as s, s.begin():
        upsert_articles(
            s,
            [
                _row(*ROWS[0][:4], "改写后的正文：量子计算突破。"),
                _row("https://news.163.com/new", "netease", "新稿", None, "量子计算再获突破"),
            ],
        )
    assert urls(corpus.search("量子计算")) == [  # dated first, the untimed one last
        "https://news.163.com/a1",
        "https://news.163.com/new",
    ]
    assert urls(corpus.search("产业发展")) == []  # the old content is gone from the index
    assert urls(corpus.search("新能源", site="netease")) == ["https://news.163.com/a1"]  # title
    with Session(engine) as s, s.begin():
        s.execute(update(Article).where(Article.url == ROWS[1][0]).values(title="改名"))
        s.execute(delete(Article).where(Article.url == "https://news.163.com/new"))
    assert urls(corpus.search("量子计算")) == ["https://news.163.com/a1"]
    assert urls(corpus.search("大湾区建设")) == []
    assert urls(corpus.search("改名")) == [ROWS[1][0]]
    if corpus.dialect == "sqlite":
        check_index(engine)


def test_fts_is_backfilled_when_added_to_an_existing_database(tmp_path):
    """A corpus crawled before search existed gets its index on the next create_schema."""
    eng = engine_for(f"sqlite:///{tmp_path / 'old.db'}")
    rows = ROWS + TAIL_ROWS
    Base.metadata.create_all(eng)  # the schema as it was: no FTS table, no triggers
    with Session(eng) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in rows])
    create_schema(eng)
    create_schema(eng)  # idempotent: no second backfill, no error
    corpus = Corpus(eng)
    assert corpus.backend == "fts5"
    for query in ["人工智能", "新能源", *SHORT_QUERIES]:
        assert urls(corpus.search(query)) == expected_urls(query, rows=rows), query
    check_index(eng)


def test_index_is_rebuilt_when_its_triggers_were_lost(tmp_path):
    """``articles`` dropped and made again behind the schema's back: the stale index and
    tail rows are refilled from the new rows, not trusted."""
    eng = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    create_schema(eng)
    with Session(eng) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in ROWS])
    with eng.begin() as conn:
        conn.exec_driver_sql("DROP TABLE articles")  # takes the triggers with it
    Base.metadata.create_all(eng)
    with Session(eng) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in TAIL_ROWS])
    create_schema(eng)
    corpus = Corpus(eng)
    for query in ["人工智能", "增长", "央行", "it", "经济"]:
        assert urls(corpus.search(query)) == expected_urls(query, rows=TAIL_ROWS), query
    check_index(eng)


def check_index(eng: Engine) -> None:
    """FTS5's own integrity check against ``articles`` once the queue is indexed
    (``sync_search``), and the tail table row by row."""
    sync_search(eng)
    with eng.connect() as conn:
        check = "INSERT INTO articles_fts(articles_fts, rank) VALUES ('integrity-check', 1)"
        conn.exec_driver_sql(check)  # raises if the index disagrees with articles
        tails = conn.exec_driver_sql(
            "SELECT a.id, substr(a.title, -2), substr(a.content, -2), t.id, t.title_tail, "
            "t.content_tail FROM articles a LEFT JOIN articles_search_tail t ON t.id = a.id"
        ).all()
        assert all(r[0:3] == r[3:6] for r in tails), tails
        orphans = (
            "SELECT count(*) FROM articles_search_tail WHERE id NOT IN (SELECT id FROM articles)"
        )
        assert conn.exec_driver_sql(orphans).scalar() == 0


def test_datasette_finds_the_fts_table(tmp_path):
    """Datasette (and sqlite-utils) offer search on a table when an FTS table declares it
    as ``content="<table>"``; this is their detection query."""
    eng = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    create_schema(eng)
    detect = (
        "SELECT name FROM sqlite_master WHERE rootpage = 0 AND "
        "sql LIKE '%VIRTUAL TABLE%USING FTS%content=\"articles\"%'"
    )
    with eng.connect() as conn:
        assert conn.exec_driver_sql(detect).scalars().all() == ["articles_fts"]


def test_drop_all_drops_the_fts_table(tmp_path):
    eng = engine_for(f"sqlite:///{tmp_path / 'c.db'}")
    create_schema(eng)
    Base.metadata.drop_all(eng)
    assert "articles_fts" not in inspect(eng).get_table_names()
    create_schema(eng)
    assert "articles_fts" in inspect(eng).get_table_names()


def test_pg_trgm_index_serves_chinese_queries_in_a_utf8_database(postgresql_url):
    """pg_trgm ignores characters its ctype does not call alphanumeric: in a C.UTF-8
    database the GIN index answers a CJK ILIKE (the test server's own database is C)."""
    import psycopg
    from psycopg import sql
    from sqlalchemy.engine import make_url

    base = make_url(postgresql_url)
    name = "newsspider_utf8"
    conninfo = {"host": base.host, "port": base.port, "user": base.username, "dbname": "postgres"}
    with psycopg.connect(**conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        try:
            conn.execute(
                sql.SQL(
                    "CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' "
                    "LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'"
                ).format(sql.Identifier(name))
            )
        except psycopg.Error as exc:
            pytest.skip(f"no C.UTF-8 locale for PostgreSQL here: {exc}")
    eng = engine_for(base.set(database=name).render_as_string(hide_password=False))
    create_schema(eng)
    with Session(eng) as s, s.begin():
        rows = [_row(*r) for r in ROWS]
        rows += [
            _row(f"https://x/{i}", "sina", f"稿件{i}", None, f"第{i}条普通新闻内容。")
            for i in range(300)
        ]
        upsert_articles(s, rows)
    with eng.connect() as conn:
        conn.exec_driver_sql("ANALYZE articles")
        conn.exec_driver_sql("SET enable_seqscan = off")
        plan = "\n".join(
            conn.scalars(
                text("EXPLAIN SELECT id FROM articles WHERE content ILIKE :p"),
                {"p": like_pattern("人工智能")},
            )
        )
    assert "ix_articles_content_trgm" in plan, plan
    assert urls(Corpus(eng).search("人工智能")) == expected_urls("人工智能")
    eng.dispose()


def test_pg_without_permission_for_pg_trgm_falls_back_to_ilike(postgresql_url, caplog):
    """A role that may create tables but not extensions: a warning, then ILIKE answers."""
    import psycopg
    from psycopg import sql
    from sqlalchemy.engine import make_url

    base = make_url(postgresql_url)
    db, role = "newsspider_notrgm", "newsspider_plain"
    admin = {"host": base.host, "port": base.port, "user": base.username}
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(db)))
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    with psycopg.connect(**admin, dbname=db, autocommit=True) as conn:
        conn.execute(sql.SQL("GRANT CREATE ON SCHEMA public TO {}").format(sql.Identifier(role)))
    url = base.set(database=db, username=role).render_as_string(hide_password=False)
    eng = engine_for(url)
    with caplog.at_level("WARNING", logger="newsspider.storage.fts"):
        create_schema(eng)
    assert "pg_trgm" in caplog.text and "ILIKE" in caplog.text
    with Session(eng) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in ROWS])
    corpus = Corpus(eng)
    assert corpus.backend == "like"
    for query in ["人工智能", "经济", "%"]:
        assert urls(corpus.search(query)) == expected_urls(query), query
    eng.dispose()


# -- get / export ---------------------------------------------------------------------------


def test_get_by_id_or_url(corpus):
    with Session(corpus.engine) as s:
        first = s.scalar(select(Article).where(Article.url == ROWS[0][0]))
    a = corpus.get(first.id)
    assert a is not None and a.url == ROWS[0][0] and a.content == ROWS[0][4]
    assert corpus.get(str(first.id)).url == ROWS[0][0]
    assert corpus.get(ROWS[3][0]).title == ROWS[3][2]
    assert corpus.get(10**9) is None and corpus.get("https://nowhere/") is None


TRICKY = [
    _row("https://t/1", "netease", "", datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=SH),
         'a "quoted", comma\nline\r\nCRLF line\n\n  indented\t tab 🀄 \u2028 end',
         encoding=None, raw_text='"\n,\n""\n'),
    _row("https://t/2?q=1,2&x=\"y\"", "sina", None, None, "单行", raw_text=""),
]  # fmt: skip


def stored_rows(engine: Engine) -> list[dict]:
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(select(Article.__table__).order_by("id"))]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_round_trips_every_stored_field(corpus, fmt):
    with Session(corpus.engine) as s, s.begin():
        upsert_articles(s, TRICKY)
    fh = io.StringIO(newline="")
    n = corpus.export(fh, fmt, batch=3)  # several fetch batches
    stored = stored_rows(corpus.engine)
    assert n == len(stored) == len(ROWS) + len(TRICKY)
    back = list(read_export(io.StringIO(fh.getvalue(), newline=""), fmt))
    assert back == stored
    assert set(back[0]) == set(Article.__table__.c.keys())
    tricky = {r["url"]: r for r in back}
    assert (
        tricky["https://t/1"]["title"] == "" and tricky['https://t/2?q=1,2&x="y"']["title"] is None
    )
    assert tricky["https://t/1"]["published"].microsecond == 999999


def test_export_formats_are_standard(corpus):
    jl = io.StringIO()
    corpus.export(jl, "jsonl", site="netease")
    first = json.loads(jl.getvalue().splitlines()[0])
    assert first["published"].endswith("+00:00")  # ISO 8601 with the offset
    assert first["title"] == ROWS[0][2]  # UTF-8 text, not \u escapes
    assert "国务院" in jl.getvalue()
    csv_fh = io.StringIO(newline="")
    corpus.export(csv_fh, "csv", site="sina")
    lines = csv_fh.getvalue().split("\r\n")
    assert lines[0] == ",".join(Article.__table__.c.keys())
    # NULL title and published are empty *unquoted* fields (PostgreSQL COPY's CSV NULL)
    b2 = next(line for line in lines if "news.sina.com.cn/b2" in line)
    assert ',"新浪新闻",,,"无时间的稿件' in b2


def test_export_streams_in_constant_memory(corpus):
    """Peak Python memory while exporting 1,800 rows is about that of 300: rows are
    fetched in batches (a server-side cursor on PostgreSQL) and written one by one."""
    import tracemalloc

    body = "正文段落，" * 200  # 1,000 characters, 3 kB of UTF-8

    def add(n: int, prefix: str) -> None:
        rows = [_row(f"https://m/{prefix}{i}", "sina", "稿", None, body) for i in range(n)]
        with Session(corpus.engine) as s, s.begin():
            upsert_articles(s, rows)

    def peak() -> tuple[int, int]:
        tracemalloc.start()
        try:
            n = corpus.export(NullWriter(), "jsonl", site="sina", batch=50)
            return n, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    add(300, "a")
    n_small, small = peak()
    add(1500, "b")
    n_large, large = peak()
    assert n_large - n_small == 1500
    # Holding 1,500 more rows would take ~5 MB (content and raw_text); allow noise only.
    assert large < small * 2 + 1_000_000, (small, large)


class NullWriter:
    """A file that discards what it is given (``/dev/null`` without the OS)."""

    def write(self, s: str) -> int:
        return len(s)


def test_export_filters(corpus):
    for kwargs in [{"site": "zaobao"}, {"since": SH_MAY1}, {"until": SH_MAY1}]:
        fh = io.StringIO()
        n = corpus.export(fh, "jsonl", **kwargs)
        got = sorted(r["url"] for r in read_export(io.StringIO(fh.getvalue())))
        want = sorted(expected_urls("", limit=100, **kwargs))
        assert n == len(got) and got == want
    with pytest.raises(ValueError, match="format"):
        corpus.export(io.StringIO(), "xml")


# -- stats ----------------------------------------------------------------------------------


def test_stats(corpus):
    with Session(corpus.engine) as s, s.begin():
        s.add(SiteLineStats(site="netease", RC=3, pruned_at_RC=0))
        s.add_all([LineCount(site="netease", md5=f"{i:032x}", LC=1) for i in range(5)])
        s.add_all([LineCount(site="sina", md5=f"{i:032x}", LC=1) for i in range(2)])
    st = corpus.stats()
    assert st.total == len(ROWS)
    assert {k: v.articles for k, v in st.sites.items()} == {"netease": 3, "sina": 2, "zaobao": 2}
    assert {k: v.line_counts for k, v in st.sites.items()} == {"netease": 5, "sina": 2, "zaobao": 0}
    assert (st.sites["netease"].RC, st.sites["sina"].RC) == (3, 0)
    net = st.sites["netease"]
    assert net.newest_title == "粤港澳大湾区建设提速"
    assert net.newest_published == datetime(2024, 5, 2, 1, 0, tzinfo=UTC)
    assert (
        st.sites["sina"].newest_title == "人工智能大模型竞赛升温"
    )  # the untimed row is not newest
    # Site-local days: 07:30 and 00:10 in Shanghai are 1 May there (30 April in UTC);
    # 23:50 on 28 April stays 28 April; Zaobao counts in Singapore time.
    assert st.per_day == {
        "netease": {date(2024, 4, 28): 1, date(2024, 5, 1): 1, date(2024, 5, 2): 1},
        "sina": {date(2024, 5, 1): 1, None: 1},
        "zaobao": {date(2024, 5, 1): 1, date(2024, 5, 3): 1},
    }
    as_json = json.loads(json.dumps(st.as_dict()))
    assert as_json["sites"]["netease"]["newest"]["published"] == "2024-05-02T01:00:00+00:00"
    assert as_json["per_day"]["sina"] == {"2024-05-01": 1, "null": 1}


def test_snippet_helper():
    text_ = "第一行\n" + "很长的正文" * 20 + "关键字" + "后文" * 30
    snip = make_snippet(text_, "关键字")
    assert "[关键字]" in snip and snip.startswith("…") and snip.endswith("…")
    assert "\n" not in snip and len(snip) <= 60
    assert make_snippet("ABC def", "abc") == "[ABC] def"
    assert make_snippet("没有匹配", "标题词") == "没有匹配"


# -- the command ---------------------------------------------------------------------------


def scrapy(monkeypatch, capsys, url: str, *argv: str) -> tuple[int, str, str]:
    """Run ``scrapy corpus ...`` in this process (as scrapy.cmdline does); return
    (exit status, stdout, stderr)."""
    monkeypatch.chdir(REPO)
    settings = get_project_settings()
    with pytest.raises(SystemExit) as exc:
        execute(["scrapy", *argv, "-s", f"DATABASE_URL={url}"], settings)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.fixture
def db_url(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    eng = engine_for(url)
    create_schema(eng)
    with Session(eng) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in ROWS])
    return url


def test_cli_search(monkeypatch, capsys, db_url):
    code, out, _ = scrapy(monkeypatch, capsys, db_url, "corpus", "search", "人工智能", "--json")
    assert code == 0
    assert [h["url"] for h in json.loads(out)] == expected_urls("人工智能")
    code, out, _ = scrapy(
        monkeypatch, capsys, db_url, "corpus", "search", "经济", "--site", "netease",
        "--since", "2024-05-01", "--until", "2024-05-01", "--limit", "5",
    )  # fmt: skip
    assert code == 0
    assert out.splitlines()[0].split("\t")[1:3] == ["netease", "2024-05-01 07:30+08:00"]
    assert "[经济]" in out and len(out.splitlines()) == 2  # one hit: title line + snippet
    code, out, _ = scrapy(monkeypatch, capsys, db_url, "corpus", "search", "不存在的词")
    assert code == 0 and "no article" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["corpus", "search", "经济", "--since", "May 1"], "bad date"),
        (["corpus", "search", "经济", "--since", "2024-02-30"], "not a calendar date"),
        (["corpus", "search", "经济", "--since", "2024-05-02", "--until", "2024-05-01"],
         "--since must be before --until"),
        (["corpus", "search", "经济", "--tz", "Mars/Base"], "unknown time zone"),
        (["corpus", "show", "99999"], "no stored article with id '99999'"),
        (["corpus", "show", "https://nowhere/x"], "no stored article with URL"),
        (["corpus", "frobnicate"], "give an action"),
        (["corpus"], "give an action"),
    ],
)  # fmt: skip
def test_cli_usage_errors(monkeypatch, capsys, db_url, argv, message):
    code, _, err = scrapy(monkeypatch, capsys, db_url, *argv)
    assert code == 2 and message in err


def test_cli_indexes_an_old_corpus_once_and_says_so(monkeypatch, capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    eng = engine_for(url)
    Base.metadata.create_all(eng)  # crawled before search existed
    with Session(eng) as s, s.begin():
        upsert_articles(s, [_row(*r) for r in ROWS])
    code, out, err = scrapy(monkeypatch, capsys, url, "corpus", "search", "大湾区", "--json")
    assert code == 0 and "adding the search index" in err
    assert [h["url"] for h in json.loads(out)] == [ROWS[1][0]]
    code, _, err = scrapy(monkeypatch, capsys, url, "corpus", "search", "大湾区")
    assert code == 0 and "adding the search index" not in err


def test_cli_show_export_stats(monkeypatch, capsys, db_url, tmp_path):
    code, out, _ = scrapy(monkeypatch, capsys, db_url, "corpus", "show", ROWS[2][0])
    assert code == 0 and "央行：保持流动性合理充裕" in out and ROWS[2][4] in out
    assert "2024-04-28 23:50+08:00" in out
    code, out, _ = scrapy(monkeypatch, capsys, db_url, "corpus", "show", "1", "--json")
    assert json.loads(out)["url"] == ROWS[0][0]

    code, out, _ = scrapy(monkeypatch, capsys, db_url, "corpus", "export", "--site", "sina")
    assert code == 0 and len(out.splitlines()) == 2
    target = tmp_path / "out.csv"
    code, _, err = scrapy(
        monkeypatch, capsys, db_url, "corpus", "export", "--format", "csv", "-o", str(target)
    )
    assert code == 0 and "exported 7 articles" in err
    with open(target, encoding="utf-8", newline="") as fh:
        assert list(read_export(fh, "csv")) == stored_rows(engine_for(db_url))

    code, out, _ = scrapy(monkeypatch, capsys, db_url, "corpus", "stats", "--json")
    assert json.loads(out)["total"] == len(ROWS)
    code, out, _ = scrapy(monkeypatch, capsys, db_url, "corpus", "stats")
    assert code == 0 and "netease" in out and "2024-05-01" in out and "total" in out


@pytest.mark.parametrize("window", [1, 2, 3, 2000])
def test_postgresql_reads_the_newest_rows_first_with_the_same_answers(corpus, monkeypatch, window):
    """The newest rows first (PostgreSQL, Corpus._recent_first), the whole statement when
    they hold too few hits: the same hits in the same order whatever the window."""
    from newsspider.storage import corpus as corpus_module

    queries = ["经济", "政策", "新能源", "人工智能", "税", "a", "Xx", "不存在"]
    since = datetime(2024, 5, 2, tzinfo=SH)

    def answers() -> list[list[str]]:
        return [
            urls(corpus.search(q, limit=limit, **kw))
            for q in queries
            for limit in (1, 2, 20)
            for kw in ({}, {"site": "netease"}, {"since": since})
        ]

    reference = answers()
    monkeypatch.setattr(corpus_module, "PG_RECENT_WINDOW", window)
    assert answers() == reference
    assert any(reference)
