"""What a page states about itself, stored and queried (revision 0008), on SQLite and
PostgreSQL.

The record columns of ``articles`` (authors, origin, editor, section, language, script,
image, caption and where each was read) through the migration from 0007, the upsert, the
extraction and corpus pipelines, ``rewrite_articles`` (``scrapy reextract``), search
filters, ``scrapy corpus stats``, exports (JSON lines, CSV, Parquet with its types), the
web view (article page, search filters, a database still at 0007) and the choice of a
reprint story's original.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from itemadapter import ItemAdapter
from sqlalchemy import Engine, inspect, select, text
from sqlalchemy.orm import Session

from newsspider.extraction.model import ExtractedArticle
from newsspider.items import ArticleItem
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.pipelines.extract import RECORD_FIELDS, ExtractionPipeline
from newsspider.reprints import params_from_settings
from newsspider.sites import SITES, Site
from newsspider.sites.table import site_from_table
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
from newsspider.storage.corpus import EXPORT_COLUMNS, parquet_schema
from newsspider.storage.db import RECORD_COLUMNS, RECORD_LIMITS, join_authors, split_authors
from newsspider.storage.rewrite import record_values, rewrite_articles, stored_by_url
from newsspider.storage.schema import (
    alembic_config,
    current_revision,
    head_revision,
    include_object,
    lock_for_migration,
)
from newsspider.storage.stories import list_stories, original_first, reprint_stats, story_of
from tests.localserver import project_settings
from tests.test_provenance import _Stats, scrapy
from tests.test_web import request, run_server

#: The revision before the record columns.
PREVIOUS = "0007"
T0 = datetime(2024, 5, 1, 2, 0, tzinfo=UTC)
INDEXES = {
    "ix_articles_site_origin": ["site", "origin"],
    "ix_articles_site_section": ["site", "section"],
    "ix_articles_language": ["language"],
}


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


def row(n: int, site: str = "sina", **extra: Any) -> dict[str, Any]:
    return {
        "url": f"https://{site}.example/{n}.html",
        "site": site,
        "source": SITES[site].source if site in SITES else site,
        "title": f"第{n}条新闻",
        "published": T0 + timedelta(hours=n),
        "content": f"经济运行总体平稳。第{n}篇。",
        "raw_text": f"经济运行总体平稳。第{n}篇。",
    } | extra


#: Ten articles: sina 0-5, xinhua 6-9, with their record columns.
RECORDS: dict[int, dict[str, Any]] = {
    0: {"authors": ("张三", "李四"), "authors_source": "text", "origin": "新华社",
        "origin_source": "text", "editor": "王五", "section": "国内",
        "section_source": "breadcrumb", "language": "zh", "script": "simplified",
        "image": "https://img.example/0.jpg", "image_caption": "图为现场"},
    1: {"authors": ("张三丰",), "origin": "新华社", "section": "国内", "language": "zh"},
    2: {"authors": ("李四",), "origin": "中新网", "section": "财经", "language": "zh"},
    3: {"origin": "人民日报", "section": "财经", "language": "en", "script": None},
    4: {"origin": "新华社", "section": "科技", "language": "zh", "script": "traditional"},
    5: {},
    6: {"authors": ("Jane Doe",), "origin": "新华网", "section": "时政", "language": "zh"},
    7: {"origin": "新华网", "section": "时政", "language": "zh"},
    8: {"origin": "新华社", "section": "国际", "language": "zh"},
    9: {"section": "国际"},
}  # fmt: skip


def fill(engine: Engine) -> dict[str, int]:
    rows = [row(n, "sina" if n < 6 else "xinhua", **RECORDS[n]) for n in range(10)]
    with transaction(engine) as s:
        upsert_articles(s, rows)
    with engine.connect() as conn:
        return dict(conn.execute(text("SELECT url, id FROM articles")).all())


def ids(hits: list[Any]) -> list[int]:
    return [h.id for h in hits]


def n_of(engine: Engine) -> dict[int, int]:
    """article id -> the row number of :data:`RECORDS`."""
    with engine.connect() as conn:
        return {
            i: int(url.rsplit("/", 1)[1].removesuffix(".html"))
            for url, i in conn.execute(text("SELECT url, id FROM articles")).all()
        }


# -- migration ------------------------------------------------------------------------------


def _to_previous(engine: Engine) -> None:
    with engine.connect() as conn, conn.begin():
        lock_for_migration(conn)
        command.downgrade(alembic_config(conn), PREVIOUS)


def test_migration_from_0007_adds_null_columns_and_indexes(engine):
    fill(engine)
    _to_previous(engine)
    have = {c["name"] for c in inspect(engine).get_columns("articles")}
    assert not set(RECORD_COLUMNS) & have
    assert not set(INDEXES) & {ix["name"] for ix in inspect(engine).get_indexes("articles")}
    with engine.connect() as conn:
        assert current_revision(conn) == PREVIOUS
        before = conn.execute(
            text("SELECT id, url, title, published FROM articles ORDER BY id")
        ).all()
    with engine.begin() as conn:  # a row written by the code of revision 0007
        conn.execute(
            text(
                "INSERT INTO articles (url, site, source, content, raw_text, content_md5, "
                "fetched_at, updated_at) VALUES ('https://old/1', 'sina', 's', 'c', 'c', 'm', "
                ":t, :t)"
            ),
            {"t": T0},
        )
    create_schema(engine)
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
        after = conn.execute(
            text("SELECT id, url, title, published FROM articles ORDER BY id")
        ).all()
        assert after[: len(before)] == before and len(after) == len(before) + 1
        for name in RECORD_COLUMNS:  # stored before: unknown, NULL until reextract
            assert (
                conn.execute(
                    text(f"SELECT count(*) FROM articles WHERE {name} IS NOT NULL")
                ).scalar()
                == 0
            )
        context = MigrationContext.configure(
            conn, opts={"include_object": include_object, "compare_type": True}
        )
        assert compare_metadata(context, Base.metadata) == []
    indexes = {ix["name"]: ix["column_names"] for ix in inspect(engine).get_indexes("articles")}
    assert {name: indexes.get(name) for name in INDEXES} == INDEXES
    # Idempotent: the revision run again over the migrated database changes nothing.
    with engine.connect() as conn, conn.begin():
        lock_for_migration(conn)
        command.stamp(alembic_config(conn), PREVIOUS)
        command.upgrade(alembic_config(conn), "head")
    fill(engine)  # and the upsert writes the new columns at once
    with Session(engine) as s:
        stored = s.scalars(
            select(Article).where(Article.url == "https://sina.example/0.html")
        ).one()
        assert (stored.authors, stored.origin, stored.language) == ("张三、李四", "新华社", "zh")


# -- upsert, pipelines, rewrite ----------------------------------------------------------------


def test_upsert_writes_updates_joins_and_cuts(engine):
    url = "https://sina.example/0.html"
    with transaction(engine) as s:
        upsert_articles(s, [row(0, **RECORDS[0])])
    with Session(engine) as s:
        a = s.scalars(select(Article)).one()
        assert a.authors == "张三、李四" and split_authors(a.authors) == ["张三", "李四"]
        assert (a.origin, a.editor, a.section, a.language, a.script) == (
            "新华社",
            "王五",
            "国内",
            "zh",
            "simplified",
        )
        assert (a.image, a.image_caption) == ("https://img.example/0.jpg", "图为现场")
        assert (a.authors_source, a.origin_source, a.section_source) == (
            "text",
            "text",
            "breadcrumb",
        )
    # A re-crawl that states nothing clears them; odd values are made storable alike on
    # both backends: a name holding 、, NUL, blanks, over-long values (PostgreSQL refuses
    # them), a URL too long to store (dropped, not cut).
    long_origin = "来" * (RECORD_LIMITS["origin"] + 20)
    with transaction(engine) as s:
        upsert_articles(s, [row(0)])
        odd = {"authors": ["赵、钱", " 孙\x00李 ", "", "赵、钱"], "origin": long_origin,
               "section": "  ", "image": "https://img/" + "x" * 3000}  # fmt: skip
        upsert_articles(s, [row(1, **odd)])
    with Session(engine) as s:
        got = {a.url: a for a in s.scalars(select(Article))}
    assert all(getattr(got[url], name) is None for name in RECORD_COLUMNS)
    one = got["https://sina.example/1.html"]
    assert one.authors == "赵 钱、孙李" and split_authors(one.authors) == ["赵 钱", "孙李"]
    assert (
        one.origin == "来" * RECORD_LIMITS["origin"] and one.section is None and one.image is None
    )
    assert (
        join_authors(()) is None
        and join_authors("甲、乙") == "甲、乙"
        and split_authors(None) == []
    )


def test_the_pipelines_carry_the_record_from_extraction_to_the_row(engine, monkeypatch):
    site = Site(
        key="pathsite", source="路径新闻", allowed_domains=("path.example",),
        start_urls=("https://path.example/",), article_patterns=(r"^https?://path\.example/.+",),
        section_from_path=True,
    )  # fmt: skip
    monkeypatch.setitem(SITES, "pathsite", site)
    extraction = ExtractionPipeline(_Stats(), "blockstats")
    items = []
    for n, (url, section) in enumerate(
        [
            ("https://path.example/Finance/2024/a.html", None),
            ("https://path.example/b.html", "要闻"),
        ]
    ):
        item = ArticleItem(url=url, site="pathsite", source="路径新闻", html=b"<html></html>",
                           headers={}, fetched_at=T0)  # fmt: skip
        article = ExtractedArticle(
            title=f"标题{n}", published=T0, published_source="json-ld", text=f"正文{n}。\n第二行。",
            encoding="utf-8", mode="best", url=url, authors=("张三", "李四"),
            authors_source="json-ld", origin="新华社", origin_source="text", editor="王五",
            section=section, section_source="breadcrumb" if section else None, language="zh",
            script="simplified", image="https://img.example/a.jpg", image_caption="说明",
        )  # fmt: skip
        extraction._fill(ItemAdapter(item), item, article, url, {})
        items.append(item)
    assert items[0].authors == ("张三", "李四") and items[0].editor == "王五"
    assert (items[0].section, items[0].section_source) == ("finance", "url")  # the row's rule
    assert (items[1].section, items[1].section_source) == ("要闻", "breadcrumb")  # the page's
    assert {name for name in RECORD_FIELDS} <= set(ItemAdapter(items[0]).keys())
    corpus = CorpusPipeline.from_settings(
        project_settings(DATABASE_URL=engine.url.render_as_string(hide_password=False),
                         NEWS_DB_BATCH=2),
        stats=_Stats(),
    )  # fmt: skip
    corpus.open_spider(None)
    for item in items:
        corpus.process_item(item)
    corpus.close_spider(None)
    with Session(engine) as s:
        stored = {a.url: a for a in s.scalars(select(Article))}
    a = stored["https://path.example/Finance/2024/a.html"]
    assert (a.authors, a.authors_source, a.origin, a.origin_source, a.editor) == (
        "张三、李四",
        "json-ld",
        "新华社",
        "text",
        "王五",
    )
    assert (a.section, a.section_source, a.language, a.script) == (
        "finance",
        "url",
        "zh",
        "simplified",
    )
    assert (a.image, a.image_caption) == ("https://img.example/a.jpg", "说明")
    assert stored["https://path.example/b.html"].section == "要闻"


def test_section_from_path_is_a_site_row_field():
    table = {"source": "x", "allowed_domains": ["x.example"], "start_urls": ["https://x.example/"],
             "article_patterns": [r"^https?://x\.example/\w+/\d+\.html"]}  # fmt: skip
    off = site_from_table("f", "x", table, "f")
    on = site_from_table("f", "x", table | {"section_from_path": True}, "f")
    assert not off.section_from_path and off.path_section("https://x.example/tech/1.html") is None
    assert on.path_section("https://x.example/Tech/1.html") == "tech"
    assert on.path_section("https://x.example/1.html") is None  # no folder
    assert on.path_section("https://x.example/2024/1.html") is None  # a date, not a section
    assert not any(s.section_from_path for s in SITES.values())  # no built-in row says so


def test_rewrite_writes_the_record_and_keeps_it_when_not_given(engine):
    fill(engine)
    url = "https://sina.example/5.html"
    article = ExtractedArticle(
        title="新标题", published=T0, published_source="url", text="新正文。", encoding="utf-8",
        mode="best", url=url, authors=("周七",), authors_source="text", origin="光明日报",
        section=None, language="zh",
    )  # fmt: skip
    values = record_values(article, SITES["sina"])  # no section_from_path: none
    assert values["authors"] == "周七" and values["section"] is None
    with transaction(engine) as s:
        stored = stored_by_url(s, [url, "https://sina.example/0.html"])
        base = {"title": "新标题", "published": T0, "published_source": "url",
                "published_precision": "day", "content": "新正文。", "raw_text": "新正文。",
                "encoding": "utf-8", "content_md5": "m5"}  # fmt: skip
        changes = [
            (stored[url], base | values),
            (stored["https://sina.example/0.html"], base | {"content_md5": "m0"}),  # no record
        ]
        assert stored[url].values(values) != values  # what reextract compares
        assert rewrite_articles(s, changes) == 2
    with Session(engine) as s:
        got = {a.url: a for a in s.scalars(select(Article))}
    assert (got[url].authors, got[url].origin, got[url].language) == ("周七", "光明日报", "zh")
    assert got["https://sina.example/0.html"].authors == "张三、李四"  # kept
    assert got["https://sina.example/0.html"].title == "新标题"
    with transaction(engine) as s:
        again = stored_by_url(s, [url])[url]
        assert again.values(values) == values  # unchanged now


# -- search, stats, export --------------------------------------------------------------------


def test_search_filters_by_author_origin_section_and_language(engine):
    fill(engine)
    corpus = Corpus(engine)
    row_of = n_of(engine)

    def found(query: str | None = None, **filters: Any) -> list[int]:
        return [row_of[i] for i in ids(corpus.search(query, limit=50, **filters))]

    assert found(author="张三") == [0]  # a whole name: not 张三丰
    assert found(author="张三丰") == [1] and found(author="李四") == [2, 0]
    assert found(author="Jane Doe") == [6] and found(author="张") == []
    assert found(author="%") == [] and found(author="、") == []
    assert found(origin="新华社") == [8, 4, 1, 0] and found(origin="新华") == []
    assert found(section="财经") == [3, 2]
    assert found(language="EN") == [3] and found(language="zh", section="国内") == [1, 0]
    assert found("经济", origin="新华网") == [7, 6] and found("第1篇", author="张三丰") == [1]
    assert found("经济运行", origin="人民日报", site="sina") == [3]
    assert found("不存在的词", origin="新华社") == []
    hit = corpus.search(None, author="张三")[0]
    assert hit.snippet.startswith("经济运行总体平稳")  # the start of the body
    with pytest.raises(ValueError):
        corpus.search("")  # no query and no filter
    with pytest.raises(ValueError):
        corpus.search("  ", origin="新华社")  # a blank query is still refused


def test_cli_search_filters_stats_and_show(monkeypatch, capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    engine = engine_for(url)
    create_schema(engine)
    fill(engine)
    code, out, _ = scrapy(
        monkeypatch, capsys, url, "corpus", "search", "--author", "张三", "--json"
    )
    assert code == 0 and [h["url"] for h in json.loads(out)] == ["https://sina.example/0.html"]
    argv = ("search", "经济", "--origin", "新华社", "--section", "国内", "--lang", "zh")
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", *argv)
    assert code == 0 and out.count("\tsina\t") == 2
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "search", "--section", "无此栏目")
    assert code == 0 and "no article has section '无此栏目'" in out
    code, _, err = scrapy(monkeypatch, capsys, url, "corpus", "search")
    assert code == 2 and "--author" in err
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "stats", "--json")
    sites = json.loads(out)["sites"]
    assert sites["sina"]["top_origins"] == [
        {"origin": "新华社", "articles": 3}, {"origin": "中新网", "articles": 1},
        {"origin": "人民日报", "articles": 1},
    ]  # fmt: skip
    assert sites["xinhua"]["top_sections"] == [
        {"section": "国际", "articles": 2}, {"section": "时政", "articles": 2}
    ]  # fmt: skip
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "stats")
    table = out.split("stated origins (来源) and sections per site")[1]
    assert "新华社 3, 中新网 1, 人民日报 1" in table and "国际 2, 时政 2" in table
    code, out, _ = scrapy(monkeypatch, capsys, url, "corpus", "show", "https://sina.example/0.html")
    assert code == 0
    for line in (
        "authors:     张三、李四  [text]",
        "origin:      新华社  [text]",
        "editor:      王五",
        "section:     国内  [breadcrumb]",
        "language:    zh/simplified",
        "image:       https://img.example/0.jpg  (图为现场)",
    ):
        assert line in out, line


def test_stats_top_five_per_site(engine):
    with transaction(engine) as s:
        upsert_articles(s, [
            row(n, origin=f"来源{n % 7}", section=None if n % 2 else f"栏目{n % 3}")
            for n in range(40)
        ])  # fmt: skip
    stats = Corpus(engine).stats()
    top = stats.sites["sina"].top_origins
    assert len(top) == 5 and top[0] == ("来源0", 6) and all(n == 6 for _, n in top[:5])
    assert stats.sites["sina"].top_sections == [("栏目0", 7), ("栏目2", 7), ("栏目1", 6)]
    assert stats.only("sina").as_dict()["sites"]["sina"]["top_origins"][0] == {
        "origin": "来源0",
        "articles": 6,
    }


def test_exports_carry_the_columns_and_parquet_keeps_the_types(engine, tmp_path):
    fill(engine)
    corpus = Corpus(engine)
    rows = []
    for fmt in ("jsonl", "csv"):
        fh = io.StringIO(newline="")
        assert corpus.export(fh, fmt) == 10
        fh.seek(0)
        rows.append(list(read_export(fh, fmt)))
    path = tmp_path / "corpus.parquet"
    assert corpus.export(path, "parquet") == 10
    rows.append(list(read_export(path, "parquet")))
    with open(path, "rb") as fh:  # a binary file too
        rows.append(list(read_export(fh, "parquet")))
    assert rows[0] == rows[1] == rows[2] == rows[3]
    first = rows[0][0]
    assert list(first) == list(EXPORT_COLUMNS) and set(RECORD_COLUMNS) <= set(first)
    assert (first["authors"], first["origin"], first["image_caption"]) == (
        "张三、李四",
        "新华社",
        "图为现场",
    )
    with Session(engine) as s:  # the same rows as stored, value for value
        stored = s.scalars(select(Article).order_by(Article.id)).all()
        assert [{k: getattr(a, k) for k in EXPORT_COLUMNS} for a in stored] == rows[2]
    # Typed columns: integers, UTC timestamps, strings; NOT NULL columns required.
    schema = pq.read_schema(path)
    assert schema.equals(parquet_schema(), check_metadata=True)
    assert schema.field("id").type == pa.int64() and not schema.field("id").nullable
    assert schema.field("story_id").type == pa.int64()
    assert schema.field("published").type == pa.timestamp("us", tz="UTC")
    assert schema.field("authors").type == pa.string() and schema.field("authors").nullable
    assert schema.metadata[b"newsspider.revision"] == head_revision().encode()
    table = pq.read_table(path)
    assert table.num_rows == 10 and table.column("published")[0].as_py() == T0
    # Filters as for the other formats; an empty export is a valid file with the schema.
    since = T0 + timedelta(hours=8)
    assert corpus.export(tmp_path / "late.parquet", "parquet", site="xinhua", since=since) == 2
    assert pq.read_table(tmp_path / "late.parquet").column("url").to_pylist() == [
        "https://xinhua.example/8.html", "https://xinhua.example/9.html"
    ]  # fmt: skip
    assert corpus.export(tmp_path / "none.parquet", "parquet", site="zaobao") == 0
    assert pq.read_table(tmp_path / "none.parquet").schema.equals(parquet_schema())


def test_parquet_row_groups_are_written_as_rows_stream(engine, tmp_path, monkeypatch):
    import newsspider.storage.corpus as corpus_module

    with transaction(engine) as s:
        upsert_articles(s, [row(n) for n in range(25)])
    monkeypatch.setattr(corpus_module, "PARQUET_GROUP_ROWS", 10)
    path = tmp_path / "groups.parquet"
    assert Corpus(engine).export(path, "parquet", batch=7) == 25
    file = pq.ParquetFile(path)
    assert [file.metadata.row_group(i).num_rows for i in range(file.num_row_groups)] == [10, 10, 5]
    monkeypatch.setattr(corpus_module, "PARQUET_GROUP_ROWS", 1000)
    monkeypatch.setattr(corpus_module, "PARQUET_GROUP_CHARS", 100)  # text fills a group first
    assert Corpus(engine).export(path, "parquet") == 25
    assert pq.ParquetFile(path).num_row_groups > 3
    assert [r["url"] for r in read_export(path, "parquet")] == sorted(
        row(n)["url"] for n in range(25)
    )


def test_cli_export_parquet(monkeypatch, capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    engine = engine_for(url)
    create_schema(engine)
    fill(engine)
    out = tmp_path / "out.parquet"
    code, _, err = scrapy(monkeypatch, capsys, url, "corpus", "export", "--format", "parquet",
                          "-o", str(out), "--site", "sina", "--until", "2024-05-01")  # fmt: skip
    assert code == 0 and "exported 6 articles" in err
    assert pq.read_table(out).num_rows == 6


# -- web --------------------------------------------------------------------------------------


XSS = '<script>alert(1)</script>"><img src=x onerror=alert(1)>'


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, int]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'web.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    engine = engine_for(url)
    create_schema(engine)
    found = fill(engine)
    with transaction(engine) as s:
        upsert_articles(s, [row(20, authors=(XSS, "赵六"), origin=XSS, editor=XSS, section=XSS,
                                image="javascript:alert(1)", image_caption=XSS)])  # fmt: skip
    with engine.connect() as conn:
        found.update(conn.execute(text("SELECT url, id FROM articles")).all())
    return url, found


def test_web_article_page_and_search_filters(served):
    url, found = served
    first, xss = found["https://sina.example/0.html"], found["https://sina.example/20.html"]
    for base in run_server(url):
        status, page = request(f"{base}/article/{first}")
        assert status == 200
        zhang, li = "%E5%BC%A0%E4%B8%89", "%E6%9D%8E%E5%9B%9B"
        assert f'<a href="/?author={zhang}">张三</a>、<a href="/?author={li}">李四</a>' in page
        assert '<dd id="origin"><a href="/?origin=%E6%96%B0%E5%8D%8E%E7%A4%BE">新华社</a>' in page
        assert '<dd id="editor">王五</dd>' in page and "国内" in page and "simplified" in page
        # The image is a link, never loaded by the page (no <img>): no request leaves.
        assert (
            '<a href="https://img.example/0.jpg" rel="noopener noreferrer nofollow">图为现场</a>'
            in page
        )
        assert "<img" not in page
        record = json.loads(request(f"{base}/api/article/{first}")[1])
        assert (
            record["authors"] == ["张三", "李四"]
            and record["image_link"] == "https://img.example/0.jpg"
        )
        assert (record["origin"], record["section"], record["language"]) == ("新华社", "国内", "zh")
        # Stored strings are text: escaped everywhere, a javascript: image is no link.
        status, page = request(f"{base}/article/{xss}")
        assert status == 200 and "<script>alert(1)" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and 'href="javascript:' not in page
        # Search by the filters, with and without a query; the form keeps them.
        data = json.loads(request(f"{base}/api/search?" + urlencode({"author": "张三"}))[1])
        assert [h["id"] for h in data["hits"]] == [first] and data["filters"] == {"author": "张三"}
        status, page = request(
            f"{base}/?" + urlencode({"q": "经济", "origin": "新华社", "lang": "ZH"})
        )
        assert status == 200 and page.count('class="hit"') == 4
        assert 'name="origin" value="新华社"' in page and 'name="lang" value="zh"' in page
        status, page = request(f"{base}/?" + urlencode({"site": "sina", "section": "财经"}))
        assert page.count('class="hit"') == 2
        status, page = request(f"{base}/?" + urlencode({"author": "无名氏"}))
        assert "No article has author “无名氏”." in page
        status, page = request(f"{base}/?" + urlencode({"author": XSS}))
        assert status == 200 and page.count('class="hit"') == 1 and "<script>alert" not in page
        for bad in ({"lang": "chinese"}, {"author": "x" * 101}, {"lang": "z1"}):
            status, body = request(f"{base}/api/search?" + urlencode(bad))
            assert status == 400 and "error" in json.loads(body), bad


def test_web_on_a_database_still_at_0007(tmp_path):
    """``serve`` never migrates: the article page reads the record as empty, the search
    form has no filters, and a filter given is a 400 saying why."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = engine_for(url)
    create_schema(engine)
    found = fill(engine)
    _to_previous(engine)
    engine.dispose()
    for base in run_server(url):
        status, page = request(f"{base}/article/{found['https://sina.example/0.html']}")
        assert status == 200 and "第0条新闻" in page and 'id="origin"' not in page
        record = json.loads(request(f"{base}/api/article/1")[1])
        assert record["origin"] is None and record["authors"] == []
        status, page = request(f"{base}/?" + urlencode({"q": "经济"}))
        assert status == 200 and page.count('class="hit"') == 10 and 'name="author"' not in page
        status, body = request(f"{base}/api/search?" + urlencode({"origin": "新华社"}))
        assert status == 400 and "0008" in json.loads(body)["error"]
    with engine.connect() as conn:
        assert current_revision(conn) == PREVIOUS


# -- reprints: the original ---------------------------------------------------------------------


def _story(engine: Engine, members: list[tuple[str, int, str | None]]) -> list[int]:
    """Store one story: (site, hours after T0, stated origin) per member; its ids in order."""
    body = "新华社北京5月1日电 国务院常务会议今天召开，研究部署进一步扩大内需的政策措施。" * 5
    rows = [
        row(100 + k, site, published=T0 + timedelta(hours=h), origin=origin, content=body,
            raw_text=body)
        for k, (site, h, origin) in enumerate(members)
    ]  # fmt: skip
    with transaction(engine) as s:
        upsert_articles(s, rows)
    with engine.begin() as conn:
        got = [
            conn.execute(text("SELECT id FROM articles WHERE url = :u"), {"u": r["url"]}).scalar()
            for r in rows
        ]
        conn.execute(text("UPDATE articles SET story_id = :s WHERE id IN (" +
                          ", ".join(map(str, got)) + ")"), {"s": min(got)})  # fmt: skip
    return got


def test_the_original_is_the_member_whose_own_site_is_the_stated_origin(engine):
    params = params_from_settings(project_settings())
    # sina published first, stating 新华网 as its source; xinhua's own copy came later.
    sina, xinhua, sohu = _story(engine, [("sina", 0, "新华网"), ("xinhua", 2, None),
                                         ("sohu", 3, "新华网客户端")])  # fmt: skip
    story = story_of(engine, sina, params)
    assert story is not None and [m.id for m in story.members] == [xinhua, sina, sohu]
    assert story.members[0].similarity == 1.0 and story.members[1].origin == "新华网"
    stats = reprint_stats(engine)
    assert stats.originals == {"xinhua": 1} and stats.reprints == {"sina": 1, "sohu": 1}
    assert [s.original.id for s in list_stories(engine, params)] == [xinhua]


def test_without_a_matching_origin_the_earliest_is_the_original(engine):
    params = params_from_settings(project_settings())
    # 新华社 is the agency, not the site row 新华网: no member's own site; earliest first.
    sina, xinhua = _story(engine, [("sina", 0, "新华社"), ("xinhua", 2, "新华社")])
    assert [m.id for m in story_of(engine, xinhua, params).members] == [sina, xinhua]


def test_original_first_rules():
    class R:
        def __init__(self, id: int, site: str, source: str, origin: str | None, h: int | None):
            self.id, self.site, self.source, self.origin = id, site, source, origin
            self.published = None if h is None else T0 + timedelta(hours=h)

    # A site unknown to the table answers to its stored source; parentheses split it.
    rows = [R(1, "a", "某网", "新民晚报", 0), R(2, "xm", "新民网（新民晚报）", None, 5)]
    assert [r.id for r in original_first(rows)] == [2, 1]
    # Two members of the stated outlet: the earlier of them.
    rows = [R(1, "a", "某网", "中国新闻网", 0), R(3, "chinanews", "中国新闻网", None, 9),
            R(2, "chinanews", "中国新闻网", "中新网", 4)]  # fmt: skip
    assert [r.id for r in original_first(rows)] == [2, 1, 3]
    # No stated origin: publication order, undated last.
    rows = [R(1, "a", "甲", None, None), R(2, "b", "乙", None, 3)]
    assert [r.id for r in original_first(rows)] == [2, 1]
