"""Re-cleaning stored articles with the matured line table (Li & Jiang 2012 §2.2).

The state is built the way a crawl builds it: a sequence of pages goes through
``CorpusPipeline`` (line table learning, then the upsert, in batches), on SQLite and on a
real PostgreSQL. Each page has its own body lines plus a copyright footer and an editor
line on every page; a template change adds an app prompt from page 100 on. The young
table keeps the footer on the first page and the prompt on pages 100-102 (at RC 100 the
threshold is already 3); a re-clean removes exactly those lines and touches no other
article.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from newsspider.extraction.linehash import split_lines
from newsspider.items import ArticleItem
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.storage import (
    Article,
    Base,
    Corpus,
    RecleanReport,
    SiteLineStats,
    SiteReclean,
    engine_for,
    reclean,
    reclean_due,
)
from tests.localserver import project_settings
from tests.test_corpus import scrapy

FOOTER = "网易新闻版权所有，未经授权不得转载。"
EDITOR = "责任编辑：张三_NN1234"
APP = "下载网易新闻客户端，看更多精彩内容"
PAGES = 150
TEMPLATE_CHANGE = 100
#: A new line survives while LC <= int(1 + RC/50) = 3 (RC 100..102): three pages keep it.
APP_KEPT = (100, 101, 102)
EARLY = (0, *APP_KEPT)
T0 = datetime(2024, 3, 1, tzinfo=UTC)


class Stats:
    """The slice of Scrapy's stats collector the pipeline uses."""

    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, n: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + n

    def get_stats(self) -> dict[str, int]:
        return dict(self.values)


def body(k: int) -> list[str]:
    """Lines unique to page k (a lead, one to three paragraphs)."""
    lines = [f"第{k}号新闻：本市今日召开第{k}次发布会。"]
    lines += [f"发布会第{j}项议题涉及民生工程{k}-{j}。" for j in range(1 + k % 3)]
    return lines


def page(k: int) -> str:
    lines = [EDITOR, *body(k)]
    if k >= TEMPLATE_CHANGE:
        lines.insert(1, APP)
    return "\n".join([*lines, FOOTER]) + "\n"


def item(site: str, k: int, text: str) -> ArticleItem:
    return ArticleItem(
        url=f"https://{site}.example/news/{k}.html",
        site=site,
        source=site,
        html=b"",
        headers={},
        fetched_at=T0 + timedelta(minutes=k),
        title=f"{site} 新闻 {k}",
        published=T0 + timedelta(hours=k),
        raw_text=text,
    )


def crawl(url: str, site: str, texts: list[str]) -> Stats:
    """Feed pages through CorpusPipeline as a crawl would (batches of 10)."""
    stats = Stats()
    pipeline = CorpusPipeline.from_settings(
        project_settings(DATABASE_URL=url, NEWS_DB_BATCH=10), stats=stats
    )
    pipeline.open_spider(None)
    for k, text in enumerate(texts):
        pipeline.process_item(item(site, k, text))
    pipeline.close_spider(None)
    return stats


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'corpus.db'}"
    url = request.getfixturevalue("postgresql_url")
    Base.metadata.drop_all(engine_for(url))
    return url


def contents(engine: Engine, site: str = "netease") -> dict[int, tuple[str, datetime]]:
    """Page number -> (content, updated_at)."""
    with Session(engine) as s:
        rows = s.execute(
            select(Article.url, Article.content, Article.updated_at).where(Article.site == site)
        )
        return {int(r.url.rsplit("/", 1)[1].split(".")[0]): (r.content, r.updated_at) for r in rows}


def test_reclean_removes_early_boilerplate_and_nothing_later(database_url):
    stats = crawl(database_url, "netease", [page(k) for k in range(PAGES)])
    assert stats.values["newsspider/articles_new"] == PAGES
    engine = engine_for(database_url)
    before = contents(engine)
    # What the young table did: page 0 kept everything, pages 100-102 the new app prompt.
    assert FOOTER in before[0][0] and EDITOR in before[0][0]
    for k in range(1, PAGES):
        assert FOOTER not in before[k][0] and EDITOR not in before[k][0], k
        assert (APP in before[k][0]) == (k in APP_KEPT), k
    assert Corpus(engine).search(FOOTER[:6])[0].url.endswith("/0.html")

    with Session(engine) as s:
        reports = reclean(s)
    assert reports == {
        "netease": RecleanReport(
            articles=PAGES, changed=4, lines_removed=5, lines_restored=0, RC=PAGES
        )
    }
    after = contents(engine)
    for k in range(PAGES):
        assert split_lines(after[k][0]) == body(k), k  # every body line, no boilerplate
        if k not in EARLY:
            assert after[k] == before[k], k  # untouched: same text, same updated_at
    assert after[0][1] > before[0][1]
    # the search index followed the rewrite (FTS triggers on SQLite)
    assert Corpus(engine).search(FOOTER[:6]) == []
    assert Corpus(engine).search("张三") == []
    with Session(engine) as s:
        rc = s.get(SiteLineStats, "netease").RC
        assert rc == PAGES  # re-cleaning learned nothing
        row = s.get(SiteReclean, "netease")
        assert (row.last_reclean_RC, row.changed, row.lines_removed) == (PAGES, 4, 5)
        assert row.reclean_at is not None and row.reclean_at.tzinfo is not None
        # A second pass finds nothing left to do.
        assert reclean(s, "netease")["netease"].changed == 0


def test_reclean_restores_lines_the_young_table_dropped(database_url):
    """A line on three early pages 40 apart is dropped at its 2nd and 3rd sighting
    (LC 2 > int(1 + 40/50) = 1, LC 3 > int(1 + 80/50) = 2); at RC = 150 the threshold is
    int(1 + 150/50) = 4, so by the matured table it is body and comes back."""
    RARE = "本栏目长期征集读者来信。"
    texts = [page(k) for k in range(PAGES)]
    for k in (0, 40, 80):
        texts[k] = texts[k].replace(FOOTER, RARE + "\n" + FOOTER)
    crawl(database_url, "netease", texts)
    engine = engine_for(database_url)
    before = contents(engine)
    assert RARE in before[0][0] and RARE not in before[40][0] and RARE not in before[80][0]
    with Session(engine) as s:
        report = reclean(s, "netease")["netease"]
    assert (report.changed, report.lines_removed, report.lines_restored) == (6, 5, 2)
    after = contents(engine)
    assert all(RARE in after[k][0] for k in (0, 40, 80))
    assert FOOTER not in after[0][0]


def test_reclean_per_site_and_sites_without_a_table(database_url):
    crawl(database_url, "netease", [page(k) for k in range(60)])
    crawl(database_url, "sina", [f"新浪独家稿件第{k}篇。\n新浪第{k}篇正文。" for k in range(5)])
    engine = engine_for(database_url)
    with Session(engine) as s:
        # a site stored without line-hash cleaning has no table: skipped, nothing written
        s.execute(update(SiteLineStats).where(SiteLineStats.site == "sina").values(RC=0))
        s.commit()
        only = reclean(s, "sina")
        assert only == {"sina": RecleanReport(RC=0)}
        assert s.get(SiteReclean, "sina") is None
        s.execute(update(SiteLineStats).where(SiteLineStats.site == "sina").values(RC=5))
        s.commit()
        both = reclean(s, batch=7)
    assert set(both) == {"netease", "sina"}
    assert (both["netease"].changed, both["netease"].lines_removed) == (1, 2)
    assert both["sina"] == RecleanReport(articles=5, RC=5)
    with pytest.raises(ValueError):
        reclean(Session(engine), batch=0)


def test_reclean_due(database_url):
    crawl(database_url, "netease", [page(k) for k in range(PAGES)])
    engine = engine_for(database_url)
    with Session(engine) as s:
        assert reclean_due(s, "netease", 2.0)  # never re-cleaned, RC 150 >= 100
        assert not reclean_due(s, "netease", 2.0, min_RC=200)
        assert not reclean_due(s, "nosuchsite", 2.0)
        reclean(s, "netease")
        assert not reclean_due(s, "netease", 2.0)  # last re-clean at RC 150
        assert not reclean_due(s, "netease", 1.0)  # RC has not moved at all
        s.execute(update(SiteLineStats).where(SiteLineStats.site == "netease").values(RC=299))
        assert not reclean_due(s, "netease", 2.0)
        assert reclean_due(s, "netease", 1.5)
        s.execute(update(SiteLineStats).where(SiteLineStats.site == "netease").values(RC=300))
        assert reclean_due(s, "netease", 2.0)
        with pytest.raises(ValueError):
            reclean_due(s, "netease", 0.5)
        s.rollback()


def test_reclean_command(monkeypatch, capsys, tmp_path):
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    crawl(url, "netease", [page(k) for k in range(PAGES)])
    code, out, _ = scrapy(monkeypatch, capsys, url, "reclean", "--site", "netease", "--json")
    assert code == 0
    assert json.loads(out) == {
        "netease": {"articles": PAGES, "changed": 4, "lines_removed": 5, "lines_restored": 0,
                    "RC": PAGES},
    }  # fmt: skip
    code, out, _ = scrapy(monkeypatch, capsys, url, "reclean", "--due")
    assert code == 0 and "no site is due" in out
    code, out, _ = scrapy(monkeypatch, capsys, url, "reclean", "--due", "-s", "RECLEAN_GROWTH=1")
    assert code == 0 and "no site is due" in out  # RC has not moved since
    code, out, _ = scrapy(monkeypatch, capsys, url, "reclean")
    assert code == 0 and out.split("\n")[1].split()[:4] == ["netease", str(PAGES), str(PAGES), "0"]
    code, _, err = scrapy(monkeypatch, capsys, url, "reclean", "--site", "nosuchsite")
    assert code == 2 and "no stored articles of site 'nosuchsite'" in err
