"""``scrapy sites check`` and ``scrapy sites list``, and the nightly report's redesign WARNING.

Real command lines in subprocesses, offline: every request is answered from a WARC replay
archive (``REPLAY_ARCHIVE``; 404 for anything not in it), the site rows come from a user
sites file (``SITES_FILE``) and results go to a SQLite file of the test (``DATABASE_URL``).

- Five small sites written here, one per status (``ok``, ``no start page``, ``no article
  links``, ``patterns match nothing``, ``extraction empty``), need nothing outside the
  repository.
- The acceptance test uses ``tests/sitegen.py``'s three fictional outlets built from real
  saved pages (``../shared/datasets``; skipped without it): rows written from their known
  URL forms pass on the normal archive; on the archive where one site's articles moved to
  a new URL form, that site and only it reports ``patterns match nothing``; a nightly run
  on that archive names it in a WARNING.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import tomlkit
from scrapy import Request
from scrapy.http import HtmlResponse, XmlResponse
from scrapy.utils.test import get_crawler
from warcio.warcwriter import WARCWriter

import newsspider.settings as project_settings
from newsspider.discovery.check import STATUSES, looks_like_article
from newsspider.nightly.report import (
    NOTE_NO_ARTICLE_LINKS,
    OK,
    SiteRun,
    classify,
    merge_site_runs,
    nightly_report,
    site_report,
)
from newsspider.replay import write_response_record
from newsspider.sites import SITES, load_table
from newsspider.spiders.news import spider_class
from tests.sitegen import SITE_KEYS, FakeSite, build_site_archives

REPO = Path(__file__).resolve().parents[1]
EXIT_USAGE = 2
EXIT_FAILED = 3
TODAY = datetime.now(UTC).strftime("%Y-%m-%d")

# -- five small sites, one per status ---------------------------------------------------------

ARTICLE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<title>{title}_{name}</title>
<meta property="article:published_time" content="2024-05-0{n}T08:30:00+08:00">
</head><body><div class="nav"><a href="/">首页</a> <a href="/news/">新闻</a></div>
<h1>{title}</h1><div class="time">2024-05-0{n} 08:30</div>
<div class="article">{paragraphs}</div>
<div class="footer">版权所有 {name}</div></body></html>"""

PARAGRAPH = (
    "<p>记者从市交通运输局获悉，今年以来全市新开通公交线路十二条，优化调整线路三十余条，"
    "覆盖新建小区和产业园区，市民出行更加便利。第{i}段：相关负责人表示，下一步将继续完善"
    "公交网络，提高准点率和换乘效率，让更多市民愿意选择绿色出行方式。</p>"
)

#: An article page with nothing in it: no title, no body.
EMPTY_ARTICLE = "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body></body></html>"


def home(links: list[str], name: str) -> str:
    items = "".join(f'<li><a href="{u}">{name}的标题 {i}</a></li>' for i, u in enumerate(links))
    return (
        f"<html><head><meta charset='utf-8'><title>{name}</title></head>"
        f"<body><ul>{items}</ul></body></html>"
    )


def article(name: str, title: str, n: int) -> str:
    paragraphs = "".join(PARAGRAPH.format(i=i) for i in range(6))
    return ARTICLE.format(name=name, title=title, n=n, paragraphs=paragraphs)


#: key -> (host, pages as url path -> html)
SMALL_SITES: dict[str, tuple[str, dict[str, str]]] = {
    "alpha": ("www.alpha-daily.test", {
        "/": home(["/news/", "/news/2024/0501/100001.html", "/news/2024/0502/100002.html",
                   "/news/2024/0503/100003.html", "/about.html"], "甲报"),
        "/news/": home(["/news/2024/0504/100004.html"], "甲报"),
        **{f"/news/2024/050{n}/10000{n}.html": article("甲报", f"公交线路调整{n}", n)
           for n in range(1, 5)},
    }),
    "bravo": ("www.bravo-times.test", {
        "/": home(["/news/2024/0501/200001.html", "/news/2024/0502/200002.html"], "乙报"),
        "/news/2024/0501/200001.html": EMPTY_ARTICLE,
        "/news/2024/0502/200002.html": EMPTY_ARTICLE,
    }),
    "charlie": ("www.charlie-post.test", {
        "/": home(["/news/", "/about.html", "/contact/"], "丙报"),
        "/news/": home(["/app.html", "/login"], "丙报"),
    }),
    "delta": ("www.delta-news.test", {
        "/": home(["/news/", "/content/300001.shtml", "/content/300002.shtml"], "丁报"),
        "/content/300001.shtml": article("丁报", "新址文章", 1),
    }),
    "echo": ("www.echo-herald.test", {}),  # nothing in the archive: every fetch is a 404
}  # fmt: skip

SMALL_STATUS = {
    "alpha": "ok",
    "bravo": "extraction empty",
    "charlie": "no article links",
    "delta": "patterns match nothing",
    "echo": "no start page",
}


def small_archive(path: Path) -> Path:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for host, pages in SMALL_SITES.values():
            for page, html in pages.items():
                write_response_record(
                    writer,
                    f"https://{host}{page}",
                    html.encode("utf-8"),
                    (("Content-Type", "text/html; charset=utf-8"),),
                )
    return path


def small_sites_file(path: Path) -> Path:
    doc = tomlkit.document()
    for key, (host, _) in SMALL_SITES.items():
        esc = re.escape(host)
        row = tomlkit.table()
        row.add("source", f"{key} daily")
        row.add("allowed_domains", [host])
        row.add("start_urls", [f"https://{host}/"])
        row.add("article_patterns", [rf"^https?://{esc}/news/\d{{4}}/\d{{4}}/\d{{6}}\.html"])
        row.add("list_patterns", [rf"^https?://{esc}/news/$"])
        row.add("checked", False)
        doc.add(key, row)
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


def sites_cmd(
    *args: str, archive: Path, sites_file: Path, database: str, extra: tuple = ()
) -> subprocess.CompletedProcess[str]:
    """``scrapy sites ARGS...`` on the archive, the sites file and the database given."""
    cmd = [
        sys.executable, "-m", "scrapy.cmdline", "sites", *args,
        "-s", f"REPLAY_ARCHIVE={archive}",
        "-s", f"SITES_FILE={sites_file}",
        "-s", f"DATABASE_URL={database}",
        *extra,
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=180, env=env)


def by_key(stdout: str) -> dict[str, str]:
    """Output lines by their first word (the site key); the indented coverage lines apart."""
    return {
        line.split()[0]: line
        for line in stdout.splitlines()
        if line.strip() and not line.startswith(" ")
    }


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]


@pytest.fixture
def small(tmp_path: Path) -> dict[str, object]:
    return {
        "archive": small_archive(tmp_path / "small.warc.gz"),
        "sites_file": small_sites_file(tmp_path / "sites.toml"),
        "database": f"sqlite:///{tmp_path / 'corpus.db'}",
    }


def test_looks_like_article() -> None:
    assert looks_like_article("https://a.test/content/318854.shtml")  # a digit run of 4+
    assert looks_like_article("https://a.test/2024-05-01/x.html")
    assert looks_like_article("https://a.test/story/9f2c3a0be1d4.html")  # hex id
    assert looks_like_article("https://a.test/dy/article/JH3K1L2M0001899O.html")
    assert not looks_like_article("https://a.test/news/index_2.html")
    assert not looks_like_article("https://a.test/tag/%E8%82%A1%E5%B8%82/")  # a CJK word
    assert not looks_like_article("https://a.test/about.html?id=123456")  # query, not path


def test_each_status_one_line_and_exit_3(small, tmp_path) -> None:
    proc = sites_cmd("check", *SMALL_SITES, **small)
    no_traceback(proc)
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr[-3000:]
    lines = by_key(proc.stdout)
    assert list(lines) == list(SMALL_SITES), proc.stdout
    for key, status in SMALL_STATUS.items():
        assert re.match(rf"{key}\s+{status}(?::|\s)", lines[key]), lines[key]
    assert re.search(
        r"alpha\s+ok\s+3 article links, 1 list link, 3/3 samples with title, time and body"
        r"; reach 4 of 4 article URLs seen \(100%\) at depth 2$",
        lines["alpha"],
    )
    assert "scrapy addsite https://www.delta-news.test/ to learn the new URL forms" in (
        lines["delta"]
    )
    assert "0 of 3 on-site links match (2 look like articles" in lines["delta"]
    assert "no 2xx answer from 1 start page (http_404 1)" in lines["echo"]
    assert "0 with title" in lines["bravo"] and "0 with body" in lines["bravo"]
    # the check wrote its results and nothing into the corpus: no article, no crawl_runs row
    db = tmp_path / "corpus.db"
    with sqlite3.connect(db) as conn:
        checks = dict(conn.execute("SELECT site, status FROM site_checks").fetchall())
        runs = conn.execute("SELECT count(*) FROM crawl_runs").fetchone()[0]
        articles = conn.execute("SELECT count(*) FROM articles").fetchone()[0]
    conn.close()
    assert checks == SMALL_STATUS and runs == 0 and articles == 0

    # one site that passes: exit 0
    proc = sites_cmd("check", "alpha", **small)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]


def test_json_output_parses(small) -> None:
    proc = sites_cmd("check", "alpha", "delta", "--json", **small)
    no_traceback(proc)
    assert proc.returncode == EXIT_FAILED
    found = json.loads(proc.stdout)
    assert [c["key"] for c in found] == ["alpha", "delta"]
    keys = {"key", "status", "article_links", "list_links", "samples", "sample_urls", "detail",
            "checked_at"}  # fmt: skip
    assert all(keys <= set(c) for c in found)
    alpha, delta = found
    assert alpha["status"] == "ok" and alpha["article_links"] == 3
    assert alpha["samples"]["tried"] == 3 and alpha["samples"]["with_body"] == 3
    assert len(alpha["sample_urls"]) == 3
    assert all("alpha-daily" in u for u in alpha["sample_urls"])
    assert datetime.fromisoformat(alpha["checked_at"]).tzinfo is not None
    assert delta["status"] == "patterns match nothing" and delta["article_links"] == 0
    assert all(c["status"] in STATUSES for c in found)


def test_fetches_stay_within_the_budget(small, tmp_path) -> None:
    proc = sites_cmd("check", "alpha", "--json", **small,
                     extra=("-s", "SITES_CHECK_MAX_FETCHES=3"))  # fmt: skip
    (alpha,) = json.loads(proc.stdout)
    assert alpha["fetches"] <= 3 and alpha["status"] == "ok", alpha


def test_user_errors_are_one_line(small) -> None:
    proc = sites_cmd("check", "alpha", "nosuchsite", **small)
    assert proc.returncode == EXIT_USAGE and proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(
        "scrapy sites: error: unknown site(s) nosuchsite; the sites are: netease, sina,"
    )
    proc = sites_cmd(**small)  # no action
    assert proc.returncode == EXIT_USAGE and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("scrapy sites: error: give an action: sites list")


def test_results_printed_when_the_database_is_unreachable(small) -> None:
    small = {**small, "database": "sqlite:////proc/no-such-folder/corpus.db"}
    proc = sites_cmd("check", "alpha", **small)
    no_traceback(proc)
    assert proc.returncode == 0
    assert re.match(r"alpha\s+ok\s", proc.stdout)
    warnings = [line for line in proc.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and "results not recorded" in warnings[0], proc.stderr


def test_sites_list_shows_origin_checked_and_nightly(small, tmp_path) -> None:
    sites_file = small["sites_file"]
    proc = sites_cmd("list", **small)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    lines = by_key(proc.stdout)
    builtin = list(load_table())
    assert list(lines) == [*builtin, *SMALL_SITES]  # built-in rows first, in table order
    assert re.match(r"netease\s+网易新闻\s+built-in\s+yes\s+nightly\s+4 article patterns$",
                    lines["netease"])  # fmt: skip
    assert re.match(rf"alpha\s+alpha daily\s+{re.escape(str(sites_file))}\s+no\s+-\s+"
                    r"1 article pattern$", lines["alpha"])  # fmt: skip

    sites_cmd("check", "alpha", "delta", **small)
    lines = by_key(sites_cmd("list", **small).stdout)
    assert re.search(rf"\s+yes, ok on {TODAY}\s+-\s+1 article pattern$", lines["alpha"])
    assert f"no, patterns match nothing on {TODAY}" in lines["delta"]
    assert re.search(r"\s+no\s+-\s+1 article pattern$", lines["charlie"])  # never checked

    listed = json.loads(sites_cmd("list", "--json", **small).stdout)
    alpha = next(r for r in listed if r["key"] == "alpha")
    assert alpha["origin"] == str(sites_file) and alpha["checked"] is False
    assert alpha["last_check"]["status"] == "ok" and alpha["nightly"] is False
    # NIGHTLY_SITES decides what nightly crawls
    lines = by_key(sites_cmd("list", **small, extra=("-s", "NIGHTLY_SITES=alpha")).stdout)
    assert " nightly " in lines["alpha"] and " nightly " not in lines["netease"]


# -- the nightly report ---------------------------------------------------------------------


def _spider(key: str):
    cls = spider_class(SITES[key], module=__name__)
    project = {k: getattr(project_settings, k) for k in dir(project_settings) if k.isupper()}
    return cls.from_crawler(get_crawler(cls, project))


def test_news_spider_counts_article_links_on_pages_and_feeds() -> None:
    spider = _spider("netease")
    stat = "newsspider/article_links/netease"
    body = b'<a href="https://news.163.com/world/">w</a><a href="https://news.163.com/x/">x</a>'
    url = "https://news.163.com/domestic/"
    page = HtmlResponse(url, body=body, request=Request(url))
    page.meta["depth"] = 0
    list(spider.parse(page))
    assert spider.crawler.stats.get_value(stat) == 0  # read, and no article link on it
    rss = (
        b"<rss><channel><item><link>https://news.163.com/19/0907/09/EOFBHDHQ0001899N.html"
        b"</link></item><item><link>https://news.163.com/world/</link></item></channel></rss>"
    )
    url = "https://news.163.com/rss.xml"
    feed = XmlResponse(url, body=rss, request=Request(url))
    feed.meta["depth"] = 0
    list(spider.parse_feed(feed, "rss"))
    assert spider.crawler.stats.get_value(stat) == 1


def test_nightly_report_names_a_site_without_article_links() -> None:
    ok = {"error": None, "crawl_status": "finished", "pages_ok": 9, "resumed": False}
    no_links = classify(finish_reason="finished", article_links=0, **ok)
    assert no_links == (OK, NOTE_NO_ARTICLE_LINKS)
    assert classify(finish_reason="finished", article_links=5, **ok) == (OK, "")
    assert classify(finish_reason="finished", article_links=None, **ok) == (OK, "")
    assert classify(finish_reason="finished", article_links=0, **{**ok, "resumed": True}) == (
        OK, "",
    )  # fmt: skip
    runs = [
        SiteRun("netease", OK, requests=10, pages_ok=9, note=NOTE_NO_ARTICLE_LINKS),
        SiteRun("sina", OK, requests=12, pages_ok=10, items_new=8),
    ]
    text = nightly_report(runs, {}, nightly_run_id=3, host="box", started_at=None,
                          finished_at=None, exit_code=0)  # fmt: skip
    warning = (
        "WARNING netease: no article links on its start pages and feeds, the usual sign of a "
        "redesign: run scrapy sites check netease, and scrapy addsite https://news.163.com/ "
        "to learn its new URL forms"
    )
    assert warning in text.splitlines()
    assert "WARNING sina" not in text
    assert "  netease: no article links" not in text  # said once, as the WARNING
    assert warning in site_report(runs[0]).splitlines()
    # a cluster run: another worker read the start pages that had the links
    parts = [
        SiteRun("netease", OK, note=NOTE_NO_ARTICLE_LINKS),
        SiteRun("netease", OK, items_new=4),
    ]
    (merged,) = merge_site_runs(parts)
    assert merged.note == ""


# -- acceptance: sitegen's three fictional outlets ---------------------------------------------


def fake_rows(sites: list[FakeSite], path: Path) -> Path:
    """A user sites file with a row per fake site, written from the archive's truth."""
    doc = tomlkit.document()
    for s in sites:
        row = tomlkit.table()
        row.add("source", s.name)
        row.add("allowed_domains", list(s.hosts))
        row.add("start_urls", list(s.list_urls))
        row.add("article_patterns", [s.article_regex.replace("^https://", "^https?://", 1)])
        lists = "|".join(re.escape(u.split("://", 1)[1]) for u in s.list_urls)
        row.add("list_patterns", [f"^https?://(?:{lists})$"])
        feeds = [{"url": u, "kind": "rss"} for u in s.feeds]
        if s.sitemaps:  # the index comes first
            feeds.append({"url": s.sitemaps[0], "kind": "sitemap"})
        if feeds:
            row.add("feeds", feeds)
        row.add("checked", False)
        doc.add(s.key, row)
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def fake_archives(datasets, tmp_path_factory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("sitegen")
    normal, sites = build_site_archives(datasets, out / "normal")
    renamed, _ = build_site_archives(datasets, out / "renamed", renamed="huanan")
    return {"normal": normal, "renamed": renamed, "sites": sites, "dir": out}


def test_rows_pass_then_a_renamed_site_fails(fake_archives, tmp_path) -> None:
    sites_file = fake_rows(fake_archives["sites"], tmp_path / "sites.toml")
    database = f"sqlite:///{tmp_path / 'corpus.db'}"
    common = {"sites_file": sites_file, "database": database}

    proc = sites_cmd("check", *SITE_KEYS, archive=fake_archives["normal"], **common)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = by_key(proc.stdout)
    assert list(lines) == list(SITE_KEYS)
    for key in SITE_KEYS:
        assert re.match(rf"{key}\s+ok\s+\d+ article links, \d+ list links?, 3/3 ", lines[key])

    listed = by_key(sites_cmd("list", archive=fake_archives["normal"], **common).stdout)
    for key in SITE_KEYS:
        assert re.search(rf"\s{re.escape(str(sites_file))}\s+yes, ok on {TODAY}\s", listed[key])

    proc = sites_cmd("check", *SITE_KEYS, archive=fake_archives["renamed"], **common)
    no_traceback(proc)
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr[-3000:]
    lines = by_key(proc.stdout)
    assert re.match(r"huanan\s+patterns match nothing: 0 of \d+ on-site links", lines["huanan"])
    assert "run scrapy addsite https://www.huanan-daily.cn/ to learn the new URL forms" in (
        lines["huanan"]
    )
    for key in ("beicheng", "nanyang"):
        assert re.match(rf"{key}\s+ok\s", lines[key]), lines[key]
    listed = by_key(sites_cmd("list", archive=fake_archives["renamed"], **common).stdout)
    assert f"no, patterns match nothing on {TODAY}" in listed["huanan"]


def test_nightly_names_the_renamed_site(fake_archives, tmp_path) -> None:
    sites_file = fake_rows(fake_archives["sites"], tmp_path / "sites.toml")
    cmd = [
        sys.executable, "-m", "scrapy.cmdline", "nightly", "--sites", "huanan,nanyang",
        "-s", f"REPLAY_ARCHIVE={fake_archives['renamed']}",
        "-s", f"SITES_FILE={sites_file}",
        "-s", f"DATABASE_URL=sqlite:///{tmp_path / 'corpus.db'}",
        "-s", f"NIGHTLY_LOCK={tmp_path / 'nightly.lock'}",
        "-s", f"NIGHTLY_JOBDIR={tmp_path / 'jobs'}",
        "-s", f"NIGHTLY_WARC_DIR={tmp_path / 'warc'}",
        "-s", "DOWNLOAD_DELAY=0",
        "-s", "AUTOTHROTTLE_ENABLED=False",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=180, env=env)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert re.search(
        r"^WARNING huanan: no article links on its start pages and feeds, the usual sign of a "
        r"redesign: run scrapy sites check huanan, and scrapy addsite "
        r"https://www\.huanan-daily\.cn/ to learn its new URL forms$",
        proc.stdout,
        re.M,
    ), proc.stdout
    assert "WARNING nanyang" not in proc.stdout
