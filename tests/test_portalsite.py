"""tests/portalsite.py serves what it claims: the portal's shape, its pages' bytes and
charsets, the forward proxy, the 521 and 安全验证 challenges, the news sitemap against the
lists, the multi-page pager, night two; and Scrapy in a child process reaches the site
through ``http_proxy`` alone."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from urllib.parse import urljoin

import pytest
from lxml import etree
from lxml import html as lxml_html

from tests.portalsite import (
    BLOCK_WORDS,
    CHANNELS,
    COOKIE,
    HOME,
    HOST,
    Portal,
    PortalServer,
    _gold_paragraphs,
    _norm,
    _shift_dates,
    build_portal,
    main,
)
from tests.sitegen import CST, _load

REPO = Path(__file__).resolve().parents[1]
SITEMAP_NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


@pytest.fixture(scope="module")
def portal(datasets: Path) -> Portal:
    return build_portal(datasets)


@pytest.fixture
def server(portal: Portal) -> Iterator[PortalServer]:
    """A fresh server (fresh request counts) on the module's portal."""
    srv = PortalServer(portal)
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=10)


def get(server: PortalServer, url: str, cookie: str = "") -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` through the proxy: status, headers, body (HTTP errors included)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": server.proxy}))
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with opener.open(request, timeout=10) as resp:
            return resp.status, dict(resp.headers.items()), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers.items()), err.read()


def parse(headers: dict[str, str], body: bytes) -> lxml_html.HtmlElement:
    """The page parsed in the charset its Content-Type names (GB ones as gb18030)."""
    charset = headers.get("Content-Type", "").partition("charset=")[2] or "utf-8"
    codec = "gb18030" if charset.lower().startswith("gb") else charset
    return lxml_html.document_fromstring(body.decode(codec))


def links(url: str, body: bytes) -> list[str]:
    doc = lxml_html.document_fromstring(body.decode("utf-8"))
    return [urljoin(url, a.get("href")) for a in doc.iter("a") if a.get("href")]


def plain(portal: Portal) -> list[str]:
    """Single-page stories that no challenge stands in front of."""
    return [
        u
        for u, s in portal.stories.items()
        if not s.multipage and not s.late and u not in portal.challenged | portal.verified
    ]


def test_shape(portal: Portal) -> None:
    kinds = list(portal.kinds.values())
    assert kinds.count("gallery") >= 3 and kinds.count("video") >= 2
    assert kinds.count("live") == 1 and kinds.count("topic") >= 2
    arts = portal.article_urls()
    assert len(arts) >= 90
    assert 0.08 <= len(portal.multipage) / len(arts) <= 0.12
    assert {len(p) for p in portal.multipage.values()} == {2, 3, 4, 5}
    for url in portal.kinds:
        assert re.match(portal.article_regex, url), url
    for topic in portal.topics.values():
        assert len(topic.links) >= 5 and all(
            portal.stories[u].kind == "article" for u in topic.links
        )
    late = [s for s in portal.stories.values() if s.late]
    assert len(late) == 6 and sum(not s.listed for s in late) == 2
    # the news sitemap's window: everything in it is younger than two days, nothing else is
    window = set(portal.window())
    for url, s in portal.stories.items():
        age = portal.now - s.published
        assert (url in window) == (age.total_seconds() < 48 * 3600), url


def test_no_story_holds_a_challenge_word(portal: Portal) -> None:
    """So a stored row with one of them can only be an anti-bot answer stored."""
    for story in portal.stories.values():
        for word in BLOCK_WORDS:
            assert word not in (story.text or "") and word not in (story.title or "")
            assert word not in story.headline


def test_shift_dates_moves_the_pages_own_dates_only() -> None:
    t0 = datetime(2015, 7, 2, 5, 18, 9, tzinfo=CST)
    delta = datetime(2026, 12, 1, 20, 0, 0, tzinfo=CST) - t0
    text = (
        "2015-07-02 05:18:09 来源 | 2015年7月3日 | 2015/07/01 | 2015-07-02T05:18:09+08:00 | "
        "1998年7月2日 | 2015-06-20"
    )
    assert _shift_dates(text, t0, delta) == (
        "2026-12-01 20:00:00 来源 | 2026年12月2日 | 2026/11/30 | 2026-12-01T20:00:00+08:00 | "
        "1998年7月2日 | 2015-06-20"
    )


def test_cli_writes_the_truth(
    tmp_path: Path, datasets: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "truth.json"
    assert main(["--datasets", str(datasets), "--truth", str(out)]) == 0
    truth = json.loads(out.read_text("utf-8"))
    assert set(truth) >= {"stories", "topics", "lists", "sitemap_only", "challenged", "verified"}
    assert len(truth["stories"]) >= 100
    assert "stories=" in capsys.readouterr().out


def test_home_channels_and_pagination(server: PortalServer) -> None:
    portal = server.portal
    status, headers, body = get(server, HOME)
    assert status == 200 and "charset=utf-8" in headers["Content-Type"]
    home_links = set(links(HOME, body))
    channels = [f"{HOME}{slug}/" for slug, _ in CHANNELS]
    assert set(channels) <= home_links and len(channels) >= 3
    reached: set[str] = set()
    for first in channels:
        url, depth = first, 0
        while url:  # follow 下一页 to the end of the channel
            status, _, body = get(server, url)
            assert status == 200, url
            depth += 1
            doc = lxml_html.document_fromstring(body)
            reached |= {u for u in links(url, body) if u in portal.stories}
            nxt = [a.get("href") for a in doc.iter("a") if a.text_content().strip() == "下一页"]
            url = urljoin(url, nxt[0]) if nxt else ""
            assert not url or re.search(r"/index_\d+\.html$", url), url
        assert depth >= 3, first
    # the lists link every night-one story but the sitemap-only ones
    listed = {u for u, s in portal.stories.items() if s.listed and not s.late}
    assert reached == listed


def test_article_bytes_and_charset(server: PortalServer, datasets: Path) -> None:
    """Saved pages keep their bytes (only the digits of their own dates move) and are served
    with the charset their bytes are in."""
    portal = server.portal
    cases = {c.source: c for name in ("cx163-zh", "cwced-zh") for c in _load(datasets, name)}
    checked = 0
    for url in plain(portal):
        story = portal.stories[url]
        if story.source not in cases:
            continue
        raw = cases[story.source].raw
        status, headers, body = get(server, url)
        assert status == 200
        charset = headers["Content-Type"].split("charset=")[1]
        body.decode("gb18030" if charset.lower().startswith("gb") else charset)
        digits = re.compile(rb"[0-9]")
        assert digits.sub(b"", body) == digits.sub(b"", raw), "only digits may change"
        if story.source.startswith("cx163"):
            assert body != raw, "the page's time is moved to the story's"
            text = body.decode("gb18030")
            assert story.published.strftime("%Y-%m-%d %H:%M") in text
        checked += 1
    assert checked >= 40


def test_multipage_pages_and_pager(server: PortalServer) -> None:
    portal = server.portal
    for first, urls in portal.multipage.items():
        story = portal.stories[first]
        seen_lines: list[str] = []
        for j, url in enumerate(urls):
            status, headers, body = get(server, url)
            if status == 521:
                cookie = f"{COOKIE}={portal.token}"
                status, headers, body = get(server, url, cookie)
            if "安全验证".encode() in body:
                status, headers, body = get(server, url)
            assert status == 200, url
            doc = parse(headers, body)
            pager = doc.xpath('//div[@class="page"]')
            assert len(pager) == 1, url
            text = pager[0].text_content()
            assert text.split() == ["上一页", *map(str, range(1, len(urls) + 1)), "下一页"]
            nxt = pager[0].xpath('.//a[text()="下一页"]/@href')
            assert [urljoin(url, h) for h in nxt] == ([urls[j + 1]] if j + 1 < len(urls) else [])
            prev = pager[0].xpath('.//a[text()="上一页"]/@href')
            assert [urljoin(url, h) for h in prev] == ([urls[j - 1]] if j else [])
            # this page's run of the gold paragraphs sits just before the pager
            gold = [_norm(ln) for ln in story.text.splitlines() if ln.strip()]
            paras = [p for p in doc.iter("p") if _norm(p.text_content()) in set(gold)]
            assert paras and paras[0].getparent().getnext() is pager[0]
            seen_lines += [_norm(p.text_content()) for p in paras]
        assert seen_lines == gold, story.source


def test_gold_paragraphs_refuses_a_partial_match() -> None:
    doc = lxml_html.document_fromstring("<div><p>第一段。</p><p>第二段。</p></div>")
    assert len(_gold_paragraphs(doc, "第一段。\n第二段。")) == 2
    assert _gold_paragraphs(doc, "第一段。\n第三段。") == []


def test_proxy_answers_by_host_and_nothing_else(server: PortalServer) -> None:
    status, _, body = get(server, "http://www.example.com/")
    assert status == 502 and b"no such host" in body
    status, _, _ = get(server, f"{HOME}no/such/page.html")
    assert status == 404
    # a direct request (no proxy) is the same site
    with urllib.request.urlopen(f"{server.proxy}/robots.txt", timeout=10) as resp:
        assert b"Sitemap: http://news.zhongzhou-daily.cn/sitemap_news.xml" in resp.read()
    # CONNECT is refused: the site is plain http
    with socket.create_connection(server.server_address, timeout=10) as s:
        s.sendall(b"CONNECT www.example.com:443 HTTP/1.1\r\nHost: www.example.com:443\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 405")
    served = [(h.url, h.served) for h in server.hits()]
    assert ("http://www.example.com/", "offsite") in served
    assert (f"{HOME}no/such/page.html", "notfound") in served
    assert (f"{HOME}robots.txt", "page") in served


def test_cookie_challenge(server: PortalServer) -> None:
    portal = server.portal
    assert 0.04 <= len(portal.challenged) / len(portal.pages) <= 0.06
    url = sorted(portal.challenged)[0]
    status, headers, body = get(server, url)
    assert status == 521 and "__jsluid_h=" in headers["Set-Cookie"]
    m = re.search(rb'document\.cookie="([^"]+)";location\.reload\(\)', body)
    assert m, body
    cookie = m.group(1).decode().split(";")[0]
    assert cookie == f"{COOKIE}={portal.token}"
    status, _, _ = get(server, url)
    assert status == 521, "no cookie, no page"
    status, _, page = get(server, url, f"__jsluid_h=x; {cookie}")
    assert status == 200 and page == portal.pages[url].body
    assert [h.served for h in server.hits() if h.url == url] == ["challenge", "challenge", "page"]
    # an unchallenged page needs no cookie
    other = next(u for u in plain(portal))
    assert get(server, other)[0] == 200


def test_verification_page_then_the_article(server: PortalServer) -> None:
    portal = server.portal
    assert 2 <= len(portal.verified) <= 6
    assert not portal.verified & portal.challenged
    for url in portal.verified:
        status, _, first = get(server, url)
        text = first.decode("utf-8")
        assert status == 200 and "访问过于频繁" in text and "<title>安全验证</title>" in text
        status, _, second = get(server, url)
        assert status == 200 and second == portal.pages[url].body
        assert get(server, url)[2] == second


def test_sitemap_against_the_lists(server: PortalServer) -> None:
    portal = server.portal
    status, _, robots = get(server, f"{HOME}robots.txt")
    assert f"Sitemap: {portal.sitemap}".encode() in robots
    status, headers, body = get(server, portal.sitemap)
    assert status == 200 and "xml" in headers["Content-Type"]
    locs = etree.fromstring(body).xpath("//s:url/s:loc/text()", namespaces=SITEMAP_NS)
    night_one = portal.window(released=False)
    assert locs == night_one and len(locs) >= 30
    # the lists, home and topics show 80 % of the sitemap's stories
    linked: set[str] = set()
    for url in [*portal.list_urls(released=False), *portal.topics]:
        linked |= set(links(url, get(server, url)[2]))
    shown = [u for u in locs if u in linked]
    assert 0.75 <= len(shown) / len(locs) <= 0.85, (len(shown), len(locs))
    only = set(locs) - linked
    assert only == {u for u in portal.sitemap_only if not portal.stories[u].late}
    # every older story is on the lists
    older = set(portal.stored_urls(released=False)) - set(locs)
    assert older and older <= linked


def test_night_two_publishes_late_articles(server: PortalServer) -> None:
    portal = server.portal
    late = [u for u, s in portal.stories.items() if s.late]
    assert all(get(server, u)[0] == 404 for u in late)
    server.release()
    assert all(get(server, u)[0] in (200, 521) for u in late)
    locs = etree.fromstring(get(server, portal.sitemap)[2]).xpath(
        "//s:url/s:loc/text()", namespaces=SITEMAP_NS
    )
    assert set(late) <= set(locs) and locs == portal.window()
    home = set(links(HOME, get(server, HOME)[2]))
    assert {u for u in late if portal.stories[u].listed} <= home | set().union(
        *(links(u, get(server, u)[2]) for u in portal.list_urls())
    )


def test_generated_kinds_carry_their_text(server: PortalServer) -> None:
    portal = server.portal
    for url, story in portal.stories.items():
        if story.kind == "article":
            continue
        body = get(server, url, f"{COOKIE}={portal.token}")[2]
        if "安全验证".encode() in body:
            body = get(server, url)[2]
        text = lxml_html.document_fromstring(body).text_content()
        for line in story.text.splitlines():
            assert line.split(" ", 1)[-1] in text, (story.kind, line)
    for url, topic in portal.topics.items():
        body = get(server, url, f"{COOKIE}={portal.token}")[2]
        if "安全验证".encode() in body:
            body = get(server, url)[2]
        assert set(topic.links) <= set(links(url, body))


def test_scrapy_reaches_the_site_through_http_proxy(server: PortalServer) -> None:
    """Scrapy's HttpProxyMiddleware takes the proxy from the environment in a child."""
    out = subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", "fetch", "--nolog", f"{HOME}robots.txt"],
        cwd=REPO, env=server.env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"Sitemap: {server.portal.sitemap}" in out.stdout
    hits = [h for h in server.hits() if h.url == f"{HOME}robots.txt"]
    assert hits and all(HOST in h.headers.get("Host", "") for h in hits)
