"""The harder fictional-site archive of tests/sitegen_hard.py: five URL forms discovery was
not written against.

Every page must replay, every article must be reachable the way a depth-2 crawl or the
site's feeds and sitemaps reach it, each site must have the URL traps its docstring
promises, and the archive must be the same on every run. Skips when ../shared/datasets
is absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from lxml import etree
from lxml import html as lxml_html

from newsspider.replay import WarcIndex
from tests import sitegen
from tests.sitegen import SITE_KEYS
from tests.sitegen_hard import (
    AMP_LINK,
    CANONICAL_LINK,
    HARD_KEYS,
    HardSite,
    build_hard_archives,
)

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
NEWS = "{http://www.google.com/schemas/sitemap-news/0.9}"
REAL_HOSTS = re.compile(
    r"163\.com|sina\.com|qq\.com|zaobao|sohu|news\.cn|xinhuanet|chinadaily|thepaper|"
    r"people\.com\.cn|chinanews|ifeng|eastday|scmp|udn\.com|ltn\.com|\.test$|\.local$"
)


@pytest.fixture(scope="module")
def built(datasets: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sitegen-hard")
    path, sites = build_hard_archives(datasets, out)
    index = WarcIndex(path)
    yield path, {s.key: s for s in sites}, index
    index.close()


def _ctype(index: WarcIndex, url: str) -> str:
    record = index.get(url)
    assert record is not None and record.status == 200, url
    return dict((k.lower(), v) for k, v in record.headers).get("content-type", "")


def _text(index: WarcIndex, url: str) -> str:
    label = _ctype(index, url).partition("charset=")[2].lower() or "utf-8"
    codec = "gb18030" if label in ("gbk", "gb2312", "gb18030") else label
    return index.get(url).body.decode(codec)


def _links(index: WarcIndex, url: str) -> set[str]:
    """Absolute targets of a page's <a href>, fragments dropped."""
    out = set()
    for a in lxml_html.document_fromstring(_text(index, url)).iter("a"):
        href = (a.get("href") or "").strip()
        if href and not href.startswith(("javascript:", "mailto:", "#")):
            out.add(urljoin(url, href).split("#")[0])
    return out


def _html_pages(
    index: WarcIndex, site: HardSite, depth: int | None
) -> Iterator[tuple[str, int, set[str]]]:
    """Breadth-first over the site's non-article HTML pages by <a href>: (page, depth,
    links), pages up to ``depth`` link hops from home (None: all)."""
    seen, queue = {site.home}, [(site.home, 0)]
    articles = set(site.article_urls) | set(site.amp_urls)
    while queue:
        url, d = queue.pop(0)
        record = index.get(url)
        if record is None or record.status != 200 or url in articles:
            continue
        if not _ctype(index, url).startswith("text/html"):
            continue
        links = _links(index, url)
        yield url, d, links
        if depth is not None and d >= depth:
            continue
        for link in sorted(links):
            if urlsplit(link).hostname in site.hosts and link not in seen:
                seen.add(link)
                queue.append((link, d + 1))


def _xml(index: WarcIndex, url: str) -> etree._Element:
    record = index.get(url)
    assert record is not None and record.status == 200, url
    return etree.fromstring(record.body)


def _from_feeds_and_sitemaps(index: WarcIndex, site: HardSite) -> set[str]:
    """What the home page's declared feeds and robots.txt's sitemaps list."""
    found: set[str] = set()
    doc = lxml_html.document_fromstring(_text(index, site.home))
    for el in doc.xpath('//link[@rel="alternate"][@type="application/rss+xml"]'):
        feed = urljoin(site.home, el.get("href"))
        found |= {it.findtext("link") for it in _xml(index, feed).iter("item")}
    robots = index.get(urljoin(site.home, "/robots.txt")).body.decode()
    queue = re.findall(r"^Sitemap:\s*(\S+)$", robots, re.M)
    while queue:
        root = _xml(index, queue.pop(0))
        locs = [loc.text for loc in root.iter(f"{SM}loc")]
        if root.tag == f"{SM}sitemapindex":
            queue += locs
        else:
            found |= set(locs)
    return found


def test_five_sites_on_fictional_hosts(built) -> None:
    _, sites, _ = built
    assert tuple(sites) == HARD_KEYS
    hosts = [h for s in sites.values() for h in s.hosts]
    assert len(hosts) == len(set(hosts))
    used = [src for s in sites.values() for src in s.sources.values()]
    assert len(used) == len(set(used)), "a saved page serves two articles"
    for site in sites.values():
        assert isinstance(site, HardSite)
        assert site.home == f"https://{site.hosts[0]}/"
        assert not any(REAL_HOSTS.search(h) for h in site.hosts), site.hosts
        assert 25 <= len(site.article_urls) <= 40, (site.key, len(site.article_urls))
        assert len(set(site.article_urls)) == len(site.article_urls)
        assert (
            set(site.titles) == set(site.published) == set(site.sources) == set(site.article_urls)
        )
        assert site.list_urls[0] == site.home and len(site.list_urls) >= 5
        kinds = "/".join(site.other_urls)
        for kind in ("tag", "author|columnist", "video", "login", "/robots.txt"):
            assert re.search(kind, kinds), (site.key, kind)
        pattern = re.compile(site.article_regex)
        assert all(pattern.search(u) for u in site.article_urls), site.key
        others = site.list_urls + site.other_urls + site.amp_urls
        assert not any(pattern.search(u) for u in others), site.key
        assert all(urlsplit(u).hostname in site.hosts for u in site.article_urls)
        # published: newest first
        times = [datetime.fromisoformat(site.published[u]) for u in site.article_urls]
        assert times == sorted(times, reverse=True)
    # no host of tests/sitegen.py's sites either
    old = {h for spec in sitegen._SPECS for h in spec.hosts}
    assert not old & set(hosts)
    assert set(SITE_KEYS).isdisjoint(HARD_KEYS)


def test_every_page_replays_with_its_bytes_and_charset(built, datasets: Path) -> None:
    _, sites, index = built
    cases = {}
    for folder in {src.split("/")[0] for s in sites.values() for src in s.sources.values()}:
        with open(datasets / folder / "cases.jsonl", encoding="utf-8") as fh:
            for line in fh:
                case = json.loads(line)
                cases[f"{folder}/{case['id']}"] = (folder, case)
    for site in sites.values():
        for url in site.list_urls + site.other_urls:
            _text(index, url)  # 200, and decodes in the charset it is served with
        for url in site.article_urls:
            record = index.get(url)
            assert record is not None and record.status == 200, url
            folder, case = cases[site.sources[url]]
            raw = (datasets / folder / case["html_file"]).read_bytes()
            body = record.body
            if site.amp_urls:  # taibei: one <link rel="amphtml"> line inserted
                line = (AMP_LINK % url.replace("/news/", "/amp/news/", 1)).encode()
                assert body.count(line) == 1, url
                body = body.replace(line, b"", 1)
            assert body == raw, url
            charset = _ctype(index, url).split("charset=")[1].lower()
            assert charset == case["encoding"], url
    # xibei's own pages are GBK, and say so
    xb = sites["xibei"]
    for url in xb.list_urls:
        assert _ctype(index, url).lower().endswith("charset=gbk")
        body = index.get(url).body
        assert b'charset=gbk"' in body
        with pytest.raises(UnicodeDecodeError):
            body.decode("utf-8")
    assert b'encoding="gbk"' in index.get(xb.feeds[0]).body
    assert index.get("https://www.dawan-news.com/no/such/page") is None


def test_every_article_reachable_by_a_depth_two_crawl_or_a_sitemap(built) -> None:
    _, sites, index = built
    sitemap_only = []
    for site in sites.values():
        pages = list(_html_pages(index, site, depth=1))
        assert {u for u, _, _ in pages} >= set(site.list_urls)
        linked = set().union(*(links for _, _, links in pages)) & set(site.article_urls)
        assert linked == set(site.linked_urls), site.key
        listed = _from_feeds_and_sitemaps(index, site)
        assert set(site.article_urls) <= linked | listed, site.key
        assert listed <= set(site.article_urls) | set(site.list_urls) | set(site.other_urls)
        # the home page itself links articles (dawan's newest are script-loaded: its older)
        assert _links(index, site.home) & set(site.article_urls), site.key
        if linked != set(site.article_urls):
            sitemap_only.append(site.key)
            assert site.reach == "links+sitemap"
        else:
            assert site.reach == "links"
    assert sitemap_only == ["dawan", "taibei"]


def test_dawan_newest_only_in_its_news_sitemap(built) -> None:
    _, sites, index = built
    site = sites["dawan"]
    robots = index.get(f"{site.home}robots.txt").body.decode()
    assert re.findall(r"^Sitemap:\s*(\S+)$", robots, re.M) == [f"{site.home}sitemap-news.xml"]
    root = _xml(index, site.sitemaps[0])
    entries = list(root.iter(f"{SM}url"))
    assert [e.findtext(f"{SM}loc") for e in entries] == list(site.article_urls[:20])
    assert all(e.find(f"{NEWS}news/{NEWS}publication_date") is not None for e in entries)
    everywhere = set().union(*(links for _, _, links in _html_pages(index, site, None)))
    assert not everywhere & set(site.article_urls[:20])
    assert set(site.article_urls[20:]) <= everywhere
    # one opaque id form for articles, galleries and videos
    ids = [urlsplit(u).path.rsplit("/", 1)[1] for u in site.article_urls + site.other_urls
           if re.search(r"/(?:c|photo|video)/[^/]+$", u)]  # fmt: skip
    assert len(ids) == len(site.article_urls) + 7 and len(set(ids)) == len(ids)
    for oid in ids:
        assert re.fullmatch(r"[0-9A-Za-z]{11}", oid)
        assert re.search(r"\d", oid) and re.search("[A-Z]", oid) and re.search("[a-z]", oid)


def test_taibei_amp_copies_and_sitemap_only_articles(built, datasets: Path) -> None:
    _, sites, index = built
    site = sites["taibei"]
    assert len(site.amp_urls) == len(site.article_urls)
    for url, amp in zip(site.article_urls, site.amp_urls, strict=True):
        assert amp == url.replace("/news/", "/amp/news/", 1)
        doc = lxml_html.document_fromstring(index.get(url).body)
        assert doc.xpath('//link[@rel="amphtml"]/@href')[:1] == [amp]
        copy = index.get(amp)
        assert copy is not None and copy.status == 200
        line = (CANONICAL_LINK % url).encode()
        original = index.get(url).body.replace((AMP_LINK % amp).encode(), b"", 1)
        assert copy.body.replace(line, b"", 1) == original
    words = {unquote(urlsplit(u).path.split("/")[2]) for u in site.article_urls}
    assert words == {"政治", "社會", "國際", "財經", "生活"}
    # the oldest of each section are on page 3 only, and in the yearly sitemaps
    unlinked = set(site.article_urls) - set(site.linked_urls)
    assert len(unlinked) == 5
    assert all(re.search(r"/sitemaps/article-\d{4}\.xml$", u) for u in site.sitemaps[1:-1])


def test_url_forms_have_their_traps(built) -> None:
    _, sites, _ = built
    df = sites["dongfang"]
    assert len({urlsplit(u).hostname for u in df.article_urls}) == 4
    assert {urlsplit(u).path.split("/")[1] for u in df.article_urls} == {"a"}
    daily = [u for u in df.other_urls if re.search(r"/a/\d{8}/$", u)]
    assert daily and {urlsplit(u).hostname for u in daily} <= set(df.hosts[1:5])
    assert any("/special/" in u for u in df.other_urls)
    assert all(urlsplit(u).path in ("/", "/index_2.shtml") for u in df.list_urls)
    pt = sites["pearl"]
    slugs = [urlsplit(u).path.split("/")[6] for u in pt.article_urls]
    assert len({s.count("-") for s in slugs}) >= 3  # slugs of several lengths
    assert any(re.search(r"\d", s.rsplit("-", 1)[0]) for s in slugs)  # some words with digits
    assert all(u.endswith("/") for u in pt.article_urls)
    videos = [u for u in pt.other_urls if re.search(r"/video/\d{4}/\d\d/\d\d/[a-z-]+-\d+/$", u)]
    assert len(videos) >= 3
    assert any("/page/2/" in u for u in pt.list_urls)
    assert any("/columnist/" in u for u in pt.other_urls)
    xb = sites["xibei"]
    two_numbers = re.compile(r"\.php\?[a-z]+=\d+&[a-z]+=\d+$")
    assert all(two_numbers.search(u) for u in xb.article_urls)
    assert sum(bool(two_numbers.search(u)) for u in xb.list_urls) >= 3  # list.php?cid=N&page=2
    tags = [u for u in xb.other_urls if "tag.php?t=" in u]
    assert tags and unquote(tags[0].split("=", 1)[1], encoding="gbk") == "股市"
    dated = (
        ("dongfang", r"/a/(\d{4})(\d\d)(\d\d)/"),
        ("pearl", r"/(\d{4})/(\d\d)/(\d\d)/"),
        ("taibei", r"/(\d{4})(\d\d)(\d\d)/\d+\.html$"),
    )
    for key, fmt in dated:
        site = sites[key]
        for url in site.article_urls:
            y, m, d = re.search(fmt, url).groups()
            assert site.published[url].startswith(f"{y}-{m}-{d}"), url


def test_same_archive_every_run(built, datasets: Path, tmp_path: Path) -> None:
    _, sites, index = built
    path, again = build_hard_archives(datasets, tmp_path)
    assert {s.key: s for s in again} == sites
    fresh = WarcIndex(path)
    try:
        assert fresh.offsets.keys() == index.offsets.keys()
        for site in again:
            for url in site.list_urls + site.other_urls + site.amp_urls + site.article_urls:
                assert fresh.get(url).body == index.get(url).body, url
    finally:
        fresh.close()
