"""Bad input from a local server: no crash, a log line naming the URL, and
the page either stored correctly or dropped with a counted reason, while the good pages of
the same crawl are stored.

One crawl (``tests/localserver.py``: ``scrapy runspider`` of a one-row ``NewsSpider`` with
the project's pipelines) serves good articles next to every kind of bad page, on SQLite
and on PostgreSQL; each case below then checks what was stored, dropped, counted and
logged for its URL. The all-boilerplate page needs a line table that has learned the
site first, so it gets two crawls of its own.

What a user gets for each bad page:

==============================  ========================================================
page                            outcome
==============================  ========================================================
empty body                      dropped ``NotHtml`` (WARNING "not an HTML page")
PDF / JPEG bytes as text/html   dropped ``NotHtml`` ("binary content (PDF signature)")
20 MB page                      download cancelled at ``DOWNLOAD_MAXSIZE`` (10 MiB),
                                ``newsspider/fetch_failed_reason/too_large``
10,000 nested elements          dropped ``EmptyBody``: libxml2 stops at depth 256 and
                                the text below is lost (see the final report)
wrong declared charset          stored, decoded correctly (GBK declared UTF-8 and back)
mixed GBK/UTF-8 bytes           stored; the foreign bytes become U+FFFD with a WARNING
                                (mostly UTF-8), or GB mojibake (mostly GBK, like a
                                browser shows it)
NUL bytes                       stored without NUL (PostgreSQL refuses NUL in text)
no ``<body>`` tag               stored (the tag is optional in HTML)
one 1 MB line                   stored whole
all boilerplate (table learnt)  dropped ``AllBoilerplate`` (not stored empty)
==============================  ========================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from newsspider.extraction.linehash import page_md5
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.storage import Article, SiteLineStats, engine_for, upsert_articles
from tests.localserver import (
    FakeStats,
    Page,
    article_html,
    fresh_database,
    links_page,
    project_settings,
    run_crawl,
    serve,
)

GOOD = [f"/article/good{n}.html" for n in range(1, 4)]
MB = 1024 * 1024


def _deep(levels: int) -> bytes:
    return (
        "<html><head><title>深层嵌套页面的标题</title></head><body>"
        + "<div>" * levels
        + "<p>深层嵌套的正文内容，这是一段很长的中文句子，用于测试解析器的深度限制。</p>"
        + "</div>" * levels
        + "</body></html>"
    ).encode()


def _no_meta_charset(n: str) -> str:
    return article_html(n).replace("<meta charset='utf-8'>", "")


NO_BODY = (
    "<html><head><title>无正文标签的页面标题</title></head>"
    "<h1>无正文标签的页面标题</h1>"
    "<p>这是一个没有body标签的页面，但它有足够长的正文内容，记者进行了详细的采访。</p>"
    "<p>第二段内容同样很长，专家认为这一变化将产生深远影响，需要各方持续关注。</p></html>"
)
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<</Type/Catalog>>endobj\n" + bytes(range(256)) * 20
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01" + bytes(range(256)) * 40
NUL = article_html("nul").replace("现场", "现\x00场").replace("新闻标题", "新闻\x00标题").encode()
UTF8_LABEL = {"Content-Type": "text/html; charset=utf-8"}
GBK_LABEL = {"Content-Type": "text/html; charset=gbk"}
LONG_LINE = "这是一行非常长的正文，没有任何换行符。" * 55_000  # ≈ 1 MB of UTF-8 in one line


@dataclass(frozen=True)
class Case:
    """A bad page and what must become of it."""

    path: str
    page: Page
    #: "stored", "dropped" (with ``reason``) or "fetch_failed" (with ``reason``)
    outcome: str
    reason: str = ""
    #: a log line that must name the URL (a regex; ``{url}`` is the page's URL)
    log: str = ""
    #: extra checks on the stored row
    check: Callable[[Article], None] | None = None


def _wrong_charset_gbk(row: Article) -> None:
    assert row.encoding == "gb18030"
    assert "记者在现场进行了详细的采访和报道" in row.content


def _wrong_charset_utf8(row: Article) -> None:
    assert row.encoding == "utf-8"
    assert "记者在现场进行了详细的采访和报道" in row.content


def _mixed_utf8(row: Article) -> None:
    lines = row.content.splitlines()
    assert "记者在现场进行了详细的采访和报道" in lines[0]
    assert "\ufffd" in lines[1] and "专家认为这一变化将产生深远影响" in lines[1]


def _mixed_gbk(row: Article) -> None:
    lines = row.content.splitlines()
    assert row.encoding == "gb18030"
    assert "记者在现场进行了详细的采访和报道" in lines[0]
    # The UTF-8 bytes of 背景 are valid GB18030 too: they come out as mojibake, as a
    # browser following the page's charset shows them; nothing can tell (see report).
    assert "专家认为这一变化将产生深远影响" in lines[1]


def _no_nul(row: Article) -> None:
    assert "\x00" not in row.title and "\x00" not in row.content and "\x00" not in row.raw_text
    # lxml reads a NUL in text as U+FFFD (the HTML standard does so in <title> and drops it
    # in body text); either way no NUL reaches the database
    assert "新闻标题" in row.title.replace("\ufffd", "")
    assert "记者在现场进行" in row.content.replace("\ufffd", "")
    assert row.content_md5 == page_md5(row.raw_text)


def _no_body(row: Article) -> None:
    assert row.title == "无正文标签的页面标题"
    assert "这是一个没有body标签的页面" in row.content


def _long_line(row: Article) -> None:
    assert LONG_LINE in row.content.splitlines()


CASES = [
    Case("/article/empty.html", Page(b""), "dropped", "NotHtml",
         r"Dropped: not an HTML page \(empty document.*\): {url}"),
    Case("/article/pdf.html",
         Page(PDF),
         "dropped", "NotHtml", r"Dropped: not an HTML page \(binary content \(PDF.*: {url}"),
    Case("/article/jpeg.html",
         Page(JPEG),
         "dropped", "NotHtml", r"Dropped: not an HTML page \(binary content \(JPEG.*: {url}"),
    Case("/article/huge.html", Page(b"<html><body>" + b"x" * (20 * MB) + b"</body></html>"),
         "fetch_failed", "too_large", r"fetch failed \(too_large\): {url}"),
    Case("/article/huge-unannounced.html",
         Page(b"<html><body>" + b"x" * (20 * MB) + b"</body></html>", no_length=True),
         "fetch_failed", "too_large", r"fetch failed \(too_large\): {url}"),
    Case("/article/deep.html", Page(_deep(10_000)), "dropped", "EmptyBody",
         r"Dropped: no body: {url}"),
    Case("/article/deep2000.html", Page(_deep(2000)), "stored",
         check=lambda row: row.content.startswith("深层嵌套的正文内容")),
    Case("/article/declared-utf8-is-gbk.html",
         Page(_no_meta_charset("w1").encode("gbk"), headers=UTF8_LABEL),
         "stored", check=_wrong_charset_gbk,
         log=r"INFO: declared charset utf-8 overruled, decoded as gb18030: {url}"),
    Case("/article/declared-gbk-is-utf8.html",
         Page(_no_meta_charset("w2").encode(), headers=GBK_LABEL),
         "stored", check=_wrong_charset_utf8,
         log=r"INFO: declared charset gb18030 overruled, decoded as utf-8: {url}"),
    Case("/article/mixed-utf8.html",
         Page(article_html("m1").encode().replace("背景".encode(), "背景".encode("gbk"))),
         "stored", log=r"WARNING: U\+FFFD in the body after decoding as utf-8: {url}",
         check=_mixed_utf8),
    Case("/article/mixed-gbk.html",
         Page(_no_meta_charset("m2").encode("gbk").replace("背景".encode("gbk"), "背景".encode()),
              headers={"Content-Type": "text/html"}),
         "stored", check=_mixed_gbk),
    Case("/article/nul.html",
         Page(NUL),
         "stored", check=_no_nul),
    Case("/article/no-body.html", Page(NO_BODY.encode()), "stored", check=_no_body),
    Case("/article/one-long-line.html", Page(article_html("long", [LONG_LINE]).encode()),
         "stored", check=_long_line),
]  # fmt: skip


@dataclass
class Crawled:
    base: str
    rows: dict[str, Article]
    stats: dict
    log: str


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def crawled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Crawled:
    tmp = tmp_path_factory.mktemp(f"bad-{request.param}")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'corpus.db'}"
    else:
        url = fresh_database(request.getfixturevalue("postgresql_url"))
    routes = {p: Page(article_html(n).encode()) for n, p in enumerate(GOOD, 1)}
    routes.update({c.path: c.page for c in CASES})
    routes["/"] = Page(links_page(*routes))
    with serve(routes) as server:
        result = run_crawl(server, tmp, url, "NEWS_DB_BATCH=4")
        base = server.base
    with Session(engine_for(url)) as s:
        rows = {r.url.removeprefix(base): r for r in s.scalars(select(Article))}
        s.expunge_all()
    return Crawled(base, rows, result.stats, result.log)


def test_the_good_pages_of_the_same_crawl_are_stored(crawled: Crawled) -> None:
    for path in GOOD:
        assert path in crawled.rows, path
    assert crawled.stats["finish_reason"] == "finished"
    stored = [c.path for c in CASES if c.outcome == "stored"]
    assert sorted(crawled.rows) == sorted([*GOOD, *stored])
    assert crawled.stats["newsspider/articles_new"] == len(GOOD) + len(stored)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path.rsplit("/", 1)[-1])
def test_bad_page(crawled: Crawled, case: Case) -> None:
    url = crawled.base + case.path
    if case.outcome == "stored":
        row = crawled.rows.get(case.path)
        assert row is not None, f"{case.path} was not stored"
        assert row.title and row.content.strip()
        if case.check:
            case.check(row)
    else:
        assert case.path not in crawled.rows
        if case.outcome == "dropped":
            assert crawled.stats.get(f"item_dropped_reasons_count/{case.reason}", 0) >= 1
        else:
            assert crawled.stats.get(f"newsspider/fetch_failed_reason/{case.reason}", 0) >= 1
    if case.log:
        assert re.search(case.log.format(url=re.escape(url)), crawled.log), case.log


def test_drop_and_failure_counts_are_exact(crawled: Crawled) -> None:
    dropped = {}
    for c in CASES:
        if c.outcome == "dropped":
            dropped[c.reason] = dropped.get(c.reason, 0) + 1
    for reason, n in dropped.items():
        assert crawled.stats[f"item_dropped_reasons_count/{reason}"] == n, reason
    assert crawled.stats["item_dropped_count"] == sum(dropped.values())
    assert crawled.stats["newsspider/fetch_failed_reason/too_large"] == 2
    assert crawled.stats["newsspider/fetch_failed/local"] == 2


# -- a page that is all boilerplate ------------------------------------------------------------

# Lines only the line table strips: best mode drops copyright notices on sight, so the
# site's repeated lines here are ones no rule of the extractor knows.
BOILERPLATE = [
    "本栏目文章仅代表作者个人观点，不代表本网立场，欢迎读者来信交流讨论。",
    "市场有风险，投资需谨慎，本文内容仅供参考，不构成任何投资建议。",
]


def _with_boilerplate(n: int) -> bytes:
    paras = [
        f"这是第{n}篇测试新闻的第一段正文，记者在现场进行了详细的采访和报道，内容翔实。",
        f"第{n}篇新闻的第二段介绍了事件的背景，专家认为这一变化将产生深远的影响。",
        *BOILERPLATE,
    ]
    return article_html(n, paras).encode()


def test_a_page_of_learnt_boilerplate_is_dropped_not_stored_empty(tmp_path: Path) -> None:
    """After the table has learnt the site's lines, a page with nothing else is dropped.

    A user searching or exporting the corpus expects articles, and an empty one is not
    (typically a template left after an article was removed); it is dropped with the
    reason ``AllBoilerplate`` and a WARNING naming the URL. The page still counts in the
    line table (RC), as every page does in Li & Jiang's method.
    """
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    learn = {f"/article/b{n}.html": Page(_with_boilerplate(n)) for n in range(1, 5)}
    only = "/article/only-boilerplate.html"
    routes: dict = {**learn, only: Page(article_html("x", BOILERPLATE).encode())}
    routes["/"] = Page(links_page(*learn))
    with serve(routes) as server:
        first = run_crawl(server, tmp_path, url)
        second = run_crawl(server, tmp_path, url, args=[f"start_urls={server.base}{only}"])
        base = server.base
    assert first.stat("newsspider/articles_new") == 4
    # the two lines are on every page: kept on the first, boilerplate from the second on
    assert first.stat("newsspider/boilerplate_lines/local") == 2 * 3
    assert second.stat("item_dropped_reasons_count/AllBoilerplate") == 1
    assert second.stat("newsspider/all_boilerplate/local") == 1
    assert second.stat("newsspider/articles_new") == 0
    assert re.search(
        rf"Dropped: every body line \(2\) is boilerplate .*: {re.escape(base + only)}",
        second.log,
    )
    engine = engine_for(url)
    with Session(engine) as s:
        urls = set(s.scalars(select(Article.url)))
        assert base + only not in urls and len(urls) == 4
        assert s.get(SiteLineStats, "local").RC == 5
        contents = s.scalars(select(Article.content)).all()
    # the first page counted keeps them (LC 1 <= 1), every later one loses both; which
    # page that is depends on the order the downloads came back in (a batch is written
    # in URL order, so ids do not say)
    kept = [c for c in contents if BOILERPLATE[0] in c and BOILERPLATE[1] in c]
    assert len(kept) == 1
    assert all(BOILERPLATE[0] not in c and BOILERPLATE[1] not in c for c in contents if c not in kept)


# -- NUL characters reach the database only as nothing -----------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'corpus.db'}"
        return
    yield fresh_database(request.getfixturevalue("postgresql_url"))


def test_nul_characters_are_removed_before_storing(database_url: str) -> None:
    """PostgreSQL refuses NUL in text (the whole batch would fail); SQLite would keep it."""
    from datetime import UTC, datetime

    from newsspider.items import ArticleItem

    pipeline = CorpusPipeline.from_settings(
        project_settings(DATABASE_URL=database_url, NEWS_DB_BATCH=2), stats=FakeStats()
    )
    pipeline.open_spider(None)
    for n in (1, 2):
        pipeline.process_item(
            ArticleItem(
                url=f"https://local.example/article/{n}.html",
                site="local",
                source="本地新闻",
                html=b"",
                headers={},
                fetched_at=datetime.now(UTC),
                title=f"标题\x00{n}",
                published=None,
                raw_text=f"第{n}篇正文\x00第一行。\n第二行\x00。",
                encoding="utf-8",
            )
        )
    pipeline.close_spider(None)
    engine = engine_for(database_url)
    with Session(engine) as s:
        rows = s.scalars(select(Article).order_by(Article.url)).all()
        assert [r.title for r in rows] == ["标题1", "标题2"]
        assert rows[0].raw_text == "第1篇正文第一行。\n第二行。"
        assert all(r.content_md5 == page_md5(r.raw_text) for r in rows)
    with Session(engine) as s, s.begin():  # the storage layer guards direct callers too
        upsert_articles(
            s,
            [{"url": "https://x/1", "site": "s", "source": "s", "title": "a\x00b",
              "content": "c\x00", "raw_text": "c\x00"}],
        )  # fmt: skip
    with Session(engine) as s:
        row = s.scalars(select(Article).where(Article.url == "https://x/1")).one()
        assert (row.title, row.content, row.raw_text) == ("ab", "c", "c")
