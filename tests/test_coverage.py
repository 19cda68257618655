"""Coverage (``newsspider/coverage/``): the site's own listing compared with the corpus.

Pure parts first (sitemap and feed reading, the comparison), then the commands, offline:
a small site written here into a WARC replay archive (``REPLAY_ARCHIVE``) whose row comes
from a sites file (``SITES_FILE``). Its robots.txt names a Google News sitemap listing 10
articles of today and yesterday (site-local days), its list pages link 8 of them; the row
names no feed, so only coverage finds the sitemap. A nightly run stores the 8, names the 2
missing, fills them and records listed 10 / stored 8 / missing 2 / filled 2; the next
night's coverage is 100 %. A site listing nothing says "coverage unknown" everywhere.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import tomlkit
from warcio.warcwriter import WARCWriter

from newsspider.coverage.compare import (
    UNKNOWN,
    DayCoverage,
    SiteCoverage,
    compare,
    listed_by_day,
    lookups,
    share_text,
    window,
)
from newsspider.coverage.listing import Document, Entry, parse_date, read_document
from newsspider.coverage.read import _children
from newsspider.replay import write_response_record
from newsspider.sites import Site
from newsspider.storage import Base, create_schema, engine_for, transaction, upsert_articles
from newsspider.storage.coverage import (
    coverage_days,
    latest_coverage,
    save_coverage,
    stored_among,
)
from tests.test_web import request, run_server
from tests.test_web_browser import NO_BROWSER, browser, page

__all__ = ["browser", "page"]  # the Playwright fixtures of test_web_browser.py

REPO = Path(__file__).resolve().parents[1]
SHANGHAI = ZoneInfo("Asia/Shanghai")
HOST = "www.coverage-daily.test"
QUIET_HOST = "www.quiet-post.test"
EXIT_FAILED = 3

SITE = Site(
    key="cov",
    source="覆盖日报",
    allowed_domains=(HOST,),
    start_urls=(f"https://{HOST}/",),
    article_patterns=(rf"^https?://{re.escape(HOST)}/news/\d{{8}}/\d{{6}}\.html",),
    list_patterns=(rf"^https?://{re.escape(HOST)}/list/\w+\.html$",),
)


# -- the pure parts ---------------------------------------------------------------------------

NEWS_SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>https://www.coverage-daily.test/news/20261201/000001.html</loc>
    <news:news><news:publication><news:name>n</news:name><news:language>zh</news:language>
    </news:publication><news:publication_date>2026-12-01T07:30:00+08:00</news:publication_date>
    <news:title>t</news:title></news:news></url>
  <url><loc>https://www.coverage-daily.test/news/20261130/000002.html</loc>
    <lastmod>2026-11-30</lastmod></url>
  <url><loc>https://www.coverage-daily.test/news/20261130/000003.html</loc></url>
</urlset>"""

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>c</title>
<item><title>a</title><link>https://www.coverage-daily.test/news/20261201/000004.html</link>
<pubDate>Mon, 30 Nov 2026 17:10:00 GMT</pubDate></item>
<item><title>b</title><link>https://www.coverage-daily.test/news/20261201/000005.html</link>
</item></channel></rss>"""


def test_news_sitemap_dates_publication_date_first_then_lastmod() -> None:
    doc = read_document(NEWS_SITEMAP, "sitemap", SHANGHAI)
    assert doc.kind == "urlset" and doc.dated
    dates = {e.url.rsplit("/", 1)[1]: e.published for e in doc.entries}
    assert dates["000001.html"] == datetime(2026, 12, 1, 7, 30, tzinfo=SHANGHAI)
    assert dates["000002.html"] == datetime(2026, 11, 30, tzinfo=SHANGHAI)  # a bare date
    assert dates["000003.html"] is None


def test_feed_dates_and_bad_documents() -> None:
    doc = read_document(RSS, "rss", SHANGHAI)
    assert doc.kind == "feed" and [e.published for e in doc.entries] == [
        datetime(2026, 11, 30, 17, 10, tzinfo=UTC),
        None,
    ]
    index = read_document(
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap>'
        b"<loc>https://a.test/s1.xml</loc><lastmod>2026-11-01</lastmod></sitemap></sitemapindex>",
        "sitemap",
        SHANGHAI,
    )
    assert index.kind == "sitemapindex" and [s.url for s in index.sitemaps] == [
        "https://a.test/s1.xml"
    ]
    assert read_document(b"<html><body>not a feed</body></html>", "rss", SHANGHAI).kind == ""
    assert read_document(b"\x1f\x8bbroken", "sitemap", SHANGHAI).kind == ""
    assert parse_date("yesterday", SHANGHAI) is None
    assert parse_date("2026-12-01T00:00:00Z", SHANGHAI) == datetime(2026, 12, 1, tzinfo=UTC)


def test_days_window_undated_and_unmatched() -> None:
    now = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)  # 10:00 in Shanghai
    assert window(now, SITE, 2) == ("2026-12-01", "2026-11-30")
    base = f"https://{HOST}/news"
    dated = Document("urlset", (
        Entry(f"{base}/20261201/000001.html?from=rss", datetime(2026, 12, 1, 8, tzinfo=SHANGHAI)),
        # 23:30 UTC on Nov 30 is Dec 1 in Shanghai
        Entry(f"{base}/20261201/000002.html", datetime(2026, 11, 30, 23, 30, tzinfo=UTC)),
        Entry(f"{base}/20261130/000003.html", datetime(2026, 11, 30, 9, tzinfo=SHANGHAI)),
        Entry(f"{base}/20261120/000004.html", datetime(2026, 11, 20, 9, tzinfo=SHANGHAI)),
        Entry(f"{base}/20261130/000005.html"),  # undated in a dated document: skipped
        Entry(f"https://{HOST}/list/world.html", datetime(2026, 12, 1, 9, tzinfo=SHANGHAI)),
        Entry("https://elsewhere.test/news/20261201/000009.html",
              datetime(2026, 12, 1, 9, tzinfo=SHANGHAI)),
    ))  # fmt: skip
    undated = Document("json", (Entry(f"{base}/20261201/000006.html"),
                                Entry(f"{base}/20261130/000003.html")))  # fmt: skip
    by_day, unmatched = listed_by_day([dated, undated], SITE, now=now, days=2)
    assert by_day == {
        "2026-12-01": {f"{base}/20261201/000001.html", f"{base}/20261201/000002.html",
                       f"{base}/20261201/000006.html"},  # undated document: the day seen
        "2026-11-30": {f"{base}/20261130/000003.html"},  # dated elsewhere: that day only
    }  # fmt: skip
    assert unmatched == 2  # the list page and the other site's page


def test_compare_and_fill() -> None:
    listed = {"2026-12-01": ["u1", "u2", "u3"], "2026-11-30": ["u4", "u5_2"]}
    stored = {"u1", "u4", "u5"}
    pages = {"u5_2": "u5"}  # a continuation page whose first page is stored
    assert lookups(listed, pages.get) == {"u1", "u2", "u3", "u4", "u5_2", "u5"}
    days = compare("cov", listed, stored, first_page=pages.get)
    assert days == (
        DayCoverage("cov", "2026-12-01", 3, 1, 2, 0, ("u2", "u3")),
        DayCoverage("cov", "2026-11-30", 2, 2, 0, 0, ()),
    )
    coverage = SiteCoverage("cov", days, ("https://x/sitemap.xml",))
    assert (coverage.listed, coverage.stored, coverage.missing) == (5, 3, 2)
    assert coverage.share == 0.6 and coverage.below(0.9)
    assert coverage.line(0.9).startswith(
        "WARNING cov: coverage 60%, below COVERAGE_WARN 90% (3/5 listed"
    )
    assert "not stored: u2, u3" in coverage.line(0.9)
    after = coverage.with_filled({"u2"})
    assert (after.filled, after.missing_urls, share_text(after.share)) == (1, ("u3",), "80%")
    full = coverage.with_filled({"u2", "u3"})
    assert full.share == 1.0 and not full.below(0.9) and "WARNING" not in full.line(0.9)
    assert "2 missing, 2 filled" in full.line(0.9)


def test_nothing_listed_is_unknown_never_full() -> None:
    nothing = SiteCoverage("quiet")
    assert nothing.share is None and not nothing.below(0.9)
    assert nothing.line(0.9) == f"quiet: {UNKNOWN} (no news sitemap or feed found)"
    assert nothing.as_json()["known"] is False and nothing.as_json()["share"] is None
    assert share_text(None) == UNKNOWN
    empty_day = DayCoverage("quiet", "2026-12-01", 0, 0, 0)
    assert empty_day.share is None


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'corpus.db'}"
    url = request.getfixturevalue("postgresql_url")
    Base.metadata.drop_all(engine_for(url))
    return url


def test_storage_stored_among_and_rows_replaced(database_url: str) -> None:
    engine = engine_for(database_url)
    create_schema(engine)
    urls = [f"https://{HOST}/news/20261201/{i:06d}.html" for i in range(1, 4)]
    record = {"site": "cov", "source": "s", "title": "t", "content": "正文", "raw_text": "正文"}
    with transaction(engine) as session:
        upsert_articles(session, [{**record, "url": urls[0]}, {**record, "url": urls[1]}])
    with transaction(engine) as session:
        assert stored_among(session, [*urls, "https://other.test/x"]) == set(urls[:2])
        save_coverage(session, [DayCoverage("cov", "2026-12-01", 10, 8, 2)])
    with transaction(engine) as session:
        save_coverage(session, [DayCoverage("cov", "2026-12-01", 10, 8, 2, 2),
                                DayCoverage("cov", "2026-11-30", 4, 4, 0)])  # fmt: skip
        rows = coverage_days(session)
        assert [(r.day, r.listed, r.stored, r.missing, r.filled) for r in rows] == [
            ("2026-11-30", 4, 4, 0, 0),
            ("2026-12-01", 10, 8, 2, 2),
        ]
        assert [r.day for r in latest_coverage(session, 1)["cov"]] == ["2026-12-01"]
    engine.dispose()


# -- the site, its archive and its row ---------------------------------------------------------

PARAGRAPH = (
    "<p>第{n}号报道：记者从市交通运输局获悉，今年以来全市新开通公交线路{n}条，优化调整线路"
    "三十余条，覆盖新建小区和产业园区，市民出行更加便利。第{i}段：相关负责人表示，下一步将"
    "继续完善公交网络，提高准点率和换乘效率，让更多市民愿意选择绿色出行方式。编号{n}-{i}。</p>"
)


def article_page(n: int, published: datetime) -> bytes:
    paragraphs = "".join(PARAGRAPH.format(n=n, i=i) for i in range(5))
    stamp = published.isoformat(timespec="seconds")
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>公交线路调整第{n}篇_覆盖日报"
        f"</title><meta property='article:published_time' content='{stamp}'></head><body>"
        f"<div class='nav'><a href='/'>首页</a></div><h1>公交线路调整第{n}篇</h1>"
        f"<div class='time'>{published:%Y-%m-%d %H:%M}</div><div class='article'>{paragraphs}"
        "</div><div class='footer'>版权所有 覆盖日报</div></body></html>"
    ).encode()


def links(hrefs: list[str]) -> bytes:
    items = "".join(f"<li><a href='{h}'>标题 {i}</a></li>" for i, h in enumerate(hrefs))
    return f"<html><head><meta charset='utf-8'></head><body><ul>{items}</ul></body></html>".encode()


def news_sitemap(entries: list[tuple[str, datetime]]) -> bytes:
    urls = "".join(
        f"<url><loc>{u}</loc><news:news><news:publication><news:name>覆盖日报</news:name>"
        f"<news:language>zh</news:language></news:publication><news:publication_date>"
        f"{d.isoformat(timespec='seconds')}</news:publication_date><news:title>t</news:title>"
        "</news:news></url>"
        for u, d in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><urlset '
        'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        f'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">{urls}</urlset>'
    ).encode()


class Archive:
    """The two sites' pages: ``cov`` (10 articles listed, 8 linked) and ``quiet`` (linked
    articles, no sitemap or feed anywhere). ``absent``: listed articles left out of the
    archive (a 404 on fetch), for a gap fill that cannot fill."""

    def __init__(self, tmp: Path, *, absent: int = 0) -> None:
        now = datetime.now(UTC).astimezone(SHANGHAI)
        today = now.replace(hour=0, minute=5, second=0, microsecond=0)
        self.articles: list[tuple[str, datetime]] = []
        for n in range(1, 11):
            day = today - timedelta(days=n % 2)  # 5 today, 5 yesterday
            published = day + timedelta(minutes=n)
            url = f"https://{HOST}/news/{day:%Y%m%d}/{400000 + n:06d}.html"
            self.articles.append((url, published))
        old = today - timedelta(days=5)
        self.old = (f"https://{HOST}/news/{old:%Y%m%d}/400099.html", old)
        self.linked = [u for u, _ in self.articles[:8]]
        self.unlinked = [u for u, _ in self.articles[8:]]
        self.path = tmp / f"coverage-{absent}.warc.gz"
        listed = [*self.articles, self.old]
        pages: dict[str, tuple[bytes, str]] = {
            f"https://{HOST}/robots.txt": (
                f"User-agent: *\nAllow: /\nSitemap: https://{HOST}/sitemap-news.xml\n".encode(),
                "text/plain",
            ),
            f"https://{HOST}/sitemap-news.xml": (news_sitemap(listed), "application/xml"),
            f"https://{HOST}/": (links(["/list/a.html", "/list/b.html"]), "text/html"),
            f"https://{HOST}/list/a.html": (links(self.linked[:4]), "text/html"),
            f"https://{HOST}/list/b.html": (links(self.linked[4:]), "text/html"),
        }
        for n, (url, published) in enumerate(listed[: len(listed) - 1 - absent], 1):
            pages[url] = (article_page(n, published), "text/html")
        quiet = [f"https://{QUIET_HOST}/news/{today:%Y%m%d}/{500000 + n:06d}.html"
                 for n in range(1, 3)]  # fmt: skip
        pages[f"https://{QUIET_HOST}/"] = (links(quiet), "text/html")
        for n, url in enumerate(quiet, 20):
            pages[url] = (article_page(n, today), "text/html")
        with open(self.path, "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            for url, (body, ctype) in pages.items():
                write_response_record(
                    writer, url, body, (("Content-Type", f"{ctype}; charset=utf-8"),)
                )
        self.today = today.date().isoformat()
        self.yesterday = (today - timedelta(days=1)).date().isoformat()


def sites_file(path: Path) -> Path:
    doc = tomlkit.document()
    for key, host in (("cov", HOST), ("quiet", QUIET_HOST)):
        esc = re.escape(host)
        row = tomlkit.table()
        row.add("source", f"{key} daily")
        row.add("allowed_domains", [host])
        row.add("start_urls", [f"https://{host}/"])
        row.add("article_patterns", [rf"^https?://{esc}/news/\d{{8}}/\d{{6}}\.html"])
        row.add("list_patterns", [rf"^https?://{esc}/list/\w+\.html$"])
        doc.add(key, row)
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path


def command(
    tmp: Path, archive: Path, database: str, *args: str
) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable, "-m", "scrapy.cmdline", *args,
        "-s", f"REPLAY_ARCHIVE={archive}",
        "-s", f"SITES_FILE={sites_file(tmp / 'sites.toml')}",
        "-s", f"DATABASE_URL={database}",
        "-s", f"NIGHTLY_LOCK={tmp / 'nightly.lock'}",
        "-s", f"NIGHTLY_JOBDIR={tmp / 'jobs'}",
        "-s", f"NIGHTLY_WARC_DIR={tmp / 'warc'}",
        "-s", "DOWNLOAD_DELAY=0",
        "-s", "AUTOTHROTTLE_ENABLED=False",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    return proc


def rows(db: Path) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    with sqlite3.connect(db) as conn:
        found = conn.execute(
            "SELECT site, day, listed, stored, missing, filled FROM coverage_days"
        ).fetchall()
    conn.close()
    return {(site, day): tuple(figures) for site, day, *figures in found}


def stored_urls(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        found = {u for (u,) in conn.execute("SELECT url FROM articles")}
    conn.close()
    return found


# -- through the commands ----------------------------------------------------------------------


def test_nightly_names_fills_and_records_the_gap(tmp_path: Path) -> None:
    site = Archive(tmp_path)
    db = tmp_path / "corpus.db"
    proc = command(tmp_path, site.path, f"sqlite:///{db}", "nightly", "--sites", "cov,quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    # the 2 unlinked articles were named before the fill, then stored by it
    named = re.search(r"coverage cov: 2 of 10 listed article URLs not stored, filling: (.*)",
                      proc.stderr)  # fmt: skip
    assert named and set(named.group(1).split()) == set(site.unlinked), proc.stderr[-4000:]
    assert set(site.unlinked) | set(site.linked) <= stored_urls(db)
    assert site.old[0] not in stored_urls(db)  # listed, but outside the window
    figures = rows(db)
    assert {k: v for k, v in figures.items() if k[0] == "cov"} == {
        ("cov", site.today): (5, 4, 1, 1),
        ("cov", site.yesterday): (5, 4, 1, 1),
    }
    assert not [k for k in figures if k[0] == "quiet"]  # listing nothing: no row
    report = proc.stdout
    assert re.search(
        rf"^cov: coverage 100% \(10/10 listed for {site.yesterday}\.\.{site.today}; "
        r"8 stored, 2 missing, 2 filled\)$",
        report,
        re.M,
    ), report
    assert re.search(r"^quiet: coverage unknown \(no news sitemap or feed found\)$", report, re.M)
    assert "COVERAGE_WARN" not in report

    # the next night: everything listed is stored before any fill
    proc = command(tmp_path, site.path, f"sqlite:///{db}", "nightly", "--sites", "cov")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert re.search(r"^cov: coverage 100% \(10/10 listed .*; 10 stored, 0 missing, 0 filled\)$",
                     proc.stdout, re.M), proc.stdout  # fmt: skip
    assert "filling" not in proc.stderr
    assert rows(db)[("cov", site.today)] == (5, 5, 0, 0)

    # sites check: the figures in --json. The row's own crawl reaches 8 of the 11 article
    # URLs the check sees (3 are only in the sitemap, which is not among its feeds): coverage
    # is 100 % through the gap fill, reach is 73 %, under ADDSITE_MIN_REACH, so exit 3
    proc = command(tmp_path, site.path, f"sqlite:///{db}", "sites", "check", "cov", "quiet",
                   "--json")  # fmt: skip
    checks = {c["key"]: c for c in json.loads(proc.stdout)}
    cov, quiet = checks["cov"]["coverage"], checks["quiet"]["coverage"]
    assert (cov["listed"], cov["stored"], cov["missing"], cov["share"]) == (10, 10, 0, 1.0)
    assert [d["day"] for d in cov["days"]] == [site.today, site.yesterday]
    assert cov["sources"] == [f"https://{HOST}/sitemap-news.xml"]
    assert quiet["known"] is False and quiet["share"] is None
    reach = checks["cov"]["reach"]
    assert (reach["seen"], reach["reached"], reach["ok"]) == (11, 8, False)
    assert reach["unreachable"][0]["reason"] == "feed not read"
    assert checks["quiet"]["reach"]["ok"] is True
    assert proc.returncode == 3, proc.stdout + proc.stderr[-3000:]

    # corpus stats: the coverage table, and unknown for the site listing nothing
    proc = command(tmp_path, site.path, f"sqlite:///{db}", "corpus", "stats")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert re.search(rf"^cov\s+{site.today}\s+5\s+5\s+0\s+0\s+100%$", proc.stdout, re.M), (
        proc.stdout
    )
    assert re.search(r"^quiet\s+-\s+-\s+-\s+-\s+-\s+coverage unknown$", proc.stdout, re.M)
    stats = json.loads(
        command(tmp_path, site.path, f"sqlite:///{db}", "corpus", "stats", "--json").stdout
    )
    assert stats["coverage"]["cov"][0] == {
        "day": site.today, "listed": 5, "stored": 5, "missing": 0, "filled": 0, "share": 1.0,
    }  # fmt: skip
    assert stats["coverage"]["quiet"] == []


def test_below_the_threshold_warns_and_check_fails(tmp_path: Path) -> None:
    """One listed article the site no longer serves: the fill stores 1 of the 2."""
    site = Archive(tmp_path, absent=1)
    db = tmp_path / "corpus.db"
    proc = command(tmp_path, site.path, f"sqlite:///{db}", "nightly", "--sites", "cov",
                   "-s", "COVERAGE_WARN=0.95")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = (
        r"cov: coverage 90%, below COVERAGE_WARN 95% "
        rf"\(9/10 listed for {site.yesterday}\.\.{site.today}; 8 stored, 2 missing, 1 filled\); "
        rf"not stored: {re.escape(site.unlinked[1])}"
    )
    assert re.search(rf"^WARNING {text}$", proc.stdout, re.M), proc.stdout
    assert re.search(rf"WARNING: {text}$", proc.stderr, re.M), proc.stderr[-3000:]

    # sites check on a corpus without the site: 0 of 10, exit 3; above the threshold, 0
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    proc = command(tmp_path, site.path, empty, "sites", "check", "cov")
    assert proc.returncode == EXIT_FAILED, proc.stdout + proc.stderr[-3000:]
    assert re.search(r"^cov\s+ok\s.*\n\s+WARNING cov: coverage 0%, below", proc.stdout,
                     re.M), proc.stdout  # fmt: skip
    # (the row reaches 8 of the 11 article URLs, under ADDSITE_MIN_REACH: that floor is
    # lowered too, so only coverage decides here)
    proc = command(tmp_path, site.path, f"sqlite:///{db}", "sites", "check", "cov",
                   "-s", "COVERAGE_WARN=0.5", "-s", "ADDSITE_MIN_REACH=0.5")  # fmt: skip
    assert proc.returncode == 0, proc.stdout
    assert re.search(r"^\s+cov: coverage 90% \(9/10 listed", proc.stdout, re.M), proc.stdout


def coverage_web_db(tmp_path: Path) -> tuple[str, datetime]:
    """A corpus with articles of ``cov`` and ``quiet`` today, and coverage rows of ``cov``
    for today (10 listed, 8 stored, 2 filled) and yesterday (3 of 4)."""
    url = f"sqlite:///{tmp_path / 'web.db'}"
    engine = engine_for(url)
    create_schema(engine)
    today = datetime.now(UTC).astimezone(SHANGHAI).replace(hour=8, minute=0, second=0)
    yesterday = today - timedelta(days=1)
    record = {"source": "s", "title": "t", "content": "正文", "raw_text": "正文"}
    with transaction(engine) as session:
        upsert_articles(session, [
            {**record, "site": site, "url": f"https://{site}.test/{i}.html", "published": today}
            for site in ("cov", "quiet") for i in range(3)
        ])  # fmt: skip
        save_coverage(session, [
            DayCoverage("cov", today.date().isoformat(), 10, 8, 2, 2),
            DayCoverage("cov", yesterday.date().isoformat(), 4, 3, 1, 0),
        ])  # fmt: skip
    engine.dispose()
    return url, today


def test_dashboard_coverage_chart_and_unknown(tmp_path: Path) -> None:
    url, today = coverage_web_db(tmp_path)
    for base in run_server(url):
        status, body = request(f"{base}/api/dashboard?days=30")
        assert status == 200, body
        data = json.loads(body)
        assert data["coverage_per_day"]["cov"][-2:] == [75.0, 100.0]
        assert data["coverage_per_day"]["cov"][:-2] == [None] * 28  # no row: a gap, not 100
        assert "quiet" not in data["coverage_per_day"]
        assert data["coverage_latest"]["cov"] == {
            "day": today.date().isoformat(), "listed": 10, "stored": 8, "missing": 2,
            "filled": 2, "share": 1.0, "text": "100%",
        }  # fmt: skip
        assert data["coverage_latest"]["quiet"] == {"day": None, "share": None, "text": UNKNOWN}
        status, page = request(f"{base}/dashboard?days=30")
        assert status == 200 and 'id="chart-coverage"' in page
        assert re.search(r"<td>quiet</td><td colspan=\"5\">-</td><td class=\"muted\">"
                         r"coverage unknown</td>", page), page  # fmt: skip


@pytest.mark.skipif(NO_BROWSER is not None, reason=str(NO_BROWSER))
def test_dashboard_coverage_chart_is_drawn(tmp_path: Path, page: Any) -> None:
    url, _ = coverage_web_db(tmp_path)
    for base in run_server(url):
        page.goto(base + "/dashboard?days=30")
        page.wait_for_selector("body[data-charts=ready]")
        drawn = page.evaluate(
            """() => echarts.getInstanceByDom(document.getElementById('chart-coverage'))
                     .getOption().series.map(s => [s.name, s.data.slice(-3)])"""
        )
        assert drawn == [["cov", [None, 75.0, 100.0]]]
        assert not page.errors


def test_sitemap_index_children_fresh_news_first() -> None:
    def entry(name: str, day: str | None) -> Entry:
        return Entry(f"https://{HOST}/{name}", parse_date(day, SHANGHAI))

    sitemaps = [
        entry("sitemap-202610.xml", "2026-10-31"),  # older than the window: not read
        entry("sitemap-202612.xml", "2026-12-01"),
        entry("sitemap-202611.xml", None),  # no lastmod: may be fresh
        entry("news-sitemap.xml", "2026-12-01"),
        Entry("https://elsewhere.test/sitemap-202612.xml"),  # another site's
    ]
    assert _children(sitemaps, SITE, "2026-11-30", 0) == [
        f"https://{HOST}/news-sitemap.xml",
        f"https://{HOST}/sitemap-202612.xml",
        f"https://{HOST}/sitemap-202611.xml",
    ]
    assert _children(sitemaps, SITE, "2026-11-30", 2) == [
        f"https://{HOST}/news-sitemap.xml",
        f"https://{HOST}/sitemap-202612.xml",
    ]
