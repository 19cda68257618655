"""Reprints through real crawls: the demo's saved NetEase and Sina pages (real articles)
reappear on other sites' article URLs with a portal's edits (a source line, an editor
line, traditional script, a paragraph cut, sentences edited, a new headline), all in one
WARC replay archive; ``scrapy crawl`` of each site stores them, and ``scrapy corpus
reprints --format jsonl`` gives one story per original, the earliest published as its
original. Crawling every site again changes nothing. The commands around stories
(``search --collapse``, ``show``, ``stats``, ``export``) read the same database.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta
from html import escape
from pathlib import Path

import opencc
import pytest

from newsspider.extraction import extract_article
from newsspider.sites import SITES
from tests.test_user_errors import FAST, scrapy, write_archive

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "newsspider" / "demo" / "pages"
_S2T = opencc.OpenCC("s2t")

#: Start pages of the archive, one per site crawled.
START = {
    "netease": "http://money.163.com/reprints/start.html",
    "sina": "https://news.sina.com.cn/reprints/start.html",
    "tencent": "https://news.qq.com/reprints/start.html",
    "sohu": "https://www.sohu.com/reprints/start.html",
}


def demo_page(site: str, case_id: str) -> tuple[str, bytes, str, datetime]:
    """(url, bytes, body, published) of one of the demo's saved pages."""
    for line in open(PAGES / site / "cases.jsonl", encoding="utf-8"):
        case = json.loads(line)
        if case["id"] == case_id:
            raw = (PAGES / site / case["html_file"]).read_bytes()
            art = extract_article(raw, case["url"], headers={}, tz="Asia/Shanghai")
            assert art.published is not None and len(art.text) > 1000
            return case["url"], raw, art.text, art.published
    raise KeyError(case_id)


def portal_page(site: str, title: str, published: datetime, body: str) -> bytes:
    """An article page of a reprinting portal: its navigation, share bar and footer around
    the reprinted text."""
    paras = "".join(f"<p>{escape(p)}</p>\n" for p in body.splitlines() if p.strip())
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<title>{escape(title)}_{site}新闻</title>
<meta property="article:published_time" content="{published.isoformat()}">
</head><body>
<div class="nav"><a href="/">首页</a> <a href="/news/">新闻</a> <a href="/finance/">财经</a>
<a href="/tech/">科技</a> <a href="/sports/">体育</a></div>
<h1>{escape(title)}</h1>
<div class="info">{published.strftime("%Y-%m-%d %H:%M")} 来源：{site}综合</div>
<div class="article-body">
{paras}</div>
<div class="share">分享到：微信 微博 QQ空间</div>
<div class="footer">关于我们 | 联系我们 | 版权所有 © {site}</div>
</body></html>""".encode()


def start_page(urls: list[str]) -> bytes:
    return ("<html><body>" + "".join(f'<a href="{u}">{u}</a><br>' for u in urls)
            + "</body></html>").encode()  # fmt: skip


def paragraphs(text: str) -> list[str]:
    return [p for p in text.splitlines() if p.strip()]


def edit(text: str, every: int) -> str:
    """Every ``every``-th sentence edited: two characters replaced, a phrase inserted."""
    pieces = re.findall(r"[^。！？\n]+[。！？]?\n?", text)
    for k in range(0, len(pieces), every):
        s = pieces[k]
        if len(s) > 8:
            pieces[k] = "据悉，" + s[:3] + "将" + s[4:6] + "其" + s[7:]
    return "".join(pieces)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """The archive and, per original URL, the URLs of its reprints."""
    nokia = demo_page("netease", "cx163-2")
    uber = demo_page("netease", "cx163-11")
    samsung = demo_page("netease", "cx163-30")
    chips = demo_page("sina", "gne-sina-sina")
    h = timedelta(hours=1)
    reprints = {
        # source and editor lines added, a new headline
        "https://news.sina.com.cn/c/2015-06-19/doc-ifxczqan1234567.shtml": (
            "sina", nokia, nokia[3] + 3 * h, "诺基亚为何衰落：埃洛普的五年",
            "来源：网易财经\n" + nokia[2] + "\n（责任编辑：王晓明）"),
        # traditional script, the last paragraph cut
        "https://news.qq.com/rain/a/20150619A0XYZ123": (
            "tencent", nokia, nokia[3] + 5 * h, "諾基亞的衰落",
            _S2T.convert("\n".join(paragraphs(nokia[2])[:-1]))),
        # one sentence in five edited, a source line
        "https://www.sohu.com/a/123456789_100001": (
            "sohu", uber, uber[3] + 2 * h, "Uber的商业模式",
            "本文来源：网易财经\n" + edit(uber[2], 5)),
        # a Sina article on NetEase, paragraphs reordered, an editor line
        "https://www.163.com/dy/article/ABCDEFGH12345678.html": (
            "netease", chips, chips[3] + 4 * h, "芯片巅峰对决",
            "\n".join(reversed(paragraphs(chips[2]))) + "\n责任编辑：李娜"),
    }  # fmt: skip
    pages: dict[str, bytes] = {}
    by_site: dict[str, list[str]] = {site: [] for site in START}
    for original in (nokia, uber, samsung):
        pages[original[0]] = original[1]
        by_site["netease"].append(original[0])
    pages[chips[0]] = chips[1]
    by_site["sina"].append(chips[0])
    expected: dict[str, list[str]] = {nokia[0]: [], uber[0]: [], chips[0]: []}
    for url, (site, original, published, title, body) in reprints.items():
        assert SITES[site].is_article(url), url
        pages[url] = portal_page(site, title, published, body)
        by_site[site].append(url)
        expected[original[0]].append(url)
    for site, url in START.items():
        pages[url] = start_page(by_site[site])
    path = write_archive(tmp_path_factory.mktemp("reprints") / "reprints.warc.gz", pages)
    return path, expected


def crawl_all(path: Path, db: str) -> None:
    for site, start in START.items():
        proc = scrapy(
            "crawl", site, "-a", f"start_urls={start}", "-s", f"REPLAY_ARCHIVE={path}",
            *sum((["-s", s] for s in FAST), []), db=db, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]


def stories(db: str) -> list[dict]:
    proc = scrapy("corpus", "reprints", "--format", "jsonl", db=db)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_crawled_reprints_make_one_story_per_original_and_a_second_crawl_changes_nothing(
    archive, tmp_path
):
    path, expected = archive
    db = f"sqlite:///{tmp_path / 'corpus.db'}"
    crawl_all(path, db)
    found = stories(db)
    assert len(found) == len(expected)
    for story in found:
        members = story["members"]
        original = members[0]["url"]
        assert original in expected, original
        assert sorted(m["url"] for m in members[1:]) == sorted(expected[original])
        assert story["original"] == members[0]["id"]
        assert all(m["similarity"] >= 0.5 for m in members)
    with sqlite3.connect(db.removeprefix("sqlite:///")) as conn:
        before = conn.execute("SELECT id, url, story_id, updated_at FROM articles").fetchall()
        bands = conn.execute("SELECT count(*) FROM reprint_bands").fetchone()
    assert all(row[2] is not None for row in before)

    crawl_all(path, db)
    assert stories(db) == found
    with sqlite3.connect(db.removeprefix("sqlite:///")) as conn:
        after = conn.execute("SELECT id, url, story_id, updated_at FROM articles").fetchall()
        assert conn.execute("SELECT count(*) FROM reprint_bands").fetchone() == bands
    assert [r[:3] for r in after] == [r[:3] for r in before]

    # the commands around stories
    nokia = next(s for s in found if "ASFHLQ5D" in s["members"][0]["url"])
    proc = scrapy("corpus", "show", str(nokia["members"][1]["id"]), "--json", db=db)
    assert json.loads(proc.stdout)["story"] == nokia
    proc = scrapy("corpus", "search", "埃洛普", "--collapse", "--json", db=db)
    hits = json.loads(proc.stdout)
    assert [h["story_id"] for h in hits].count(nokia["story_id"]) == 1
    assert next(h for h in hits if h["story_id"] == nokia["story_id"])["sites"] == [
        "netease", "sina", "tencent"
    ]  # fmt: skip
    proc = scrapy("corpus", "stats", "--json", db=db)
    reprints = json.loads(proc.stdout)["reprints"]
    assert reprints["stories"] == 3
    assert {p["source"] + ">" + p["reprinted_by"] for p in reprints["pairs"]} == {
        "netease>sina", "netease>tencent", "netease>sohu", "sina>netease"
    }  # fmt: skip
    proc = scrapy("corpus", "stats", db=db)
    assert "reprint share" in proc.stdout
    proc = scrapy("corpus", "export", "--format", "jsonl", db=db)
    exported = {r["url"]: r["story_id"] for r in map(json.loads, proc.stdout.splitlines())}
    assert exported == {r[1]: r[2] for r in after}
    proc = scrapy("corpus", "reprints", "--rebuild", "--format", "jsonl", db=db)
    assert [json.loads(line) for line in proc.stdout.splitlines()] == found
    proc = scrapy("corpus", "reprints", "--site", "sohu", db=db)
    assert proc.returncode == 0 and proc.stdout.count("story ") == 1, proc.stdout
    proc = scrapy("corpus", "export", "--format", "table", db=db)
    assert proc.returncode == 2 and "jsonl or csv" in proc.stderr
