"""The fictional-site archives of tests/sitegen.py: what ``scrapy addsite`` will be tested on.

Each site's articles must be in the archive and replay, reachable exactly the way the site
says (links, feed or sitemap) and no other way, and the renamed variant must move one
site's articles and nothing else. Skips when ../shared/datasets is absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from lxml import etree
from lxml import html as lxml_html

from newsspider.replay import WarcIndex, replay_key
from tests.sitegen import SITE_KEYS, FakeSite, build_site_archives

RENAMED = "huanan"
SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
NEWS = "{http://www.google.com/schemas/sitemap-news/0.9}"
# Hosts of real publishers that the fictional sites must not use.
REAL_HOSTS = re.compile(
    r"163\.com|sina\.com|qq\.com|zaobao|sohu|news\.cn|xinhuanet|chinadaily|thepaper|"
    r"people\.com\.cn|chinanews|ifeng|\.test$|\.local$"
)


@pytest.fixture(scope="module")
def built(datasets: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sitegen")
    path, sites = build_site_archives(datasets, out)
    index = WarcIndex(path)
    yield path, {s.key: s for s in sites}, index
    index.close()


@pytest.fixture(scope="module")
def renamed(datasets: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sitegen-renamed")
    path, sites = build_site_archives(datasets, out, renamed=RENAMED)
    index = WarcIndex(path)
    yield path, {s.key: s for s in sites}, index
    index.close()


def _doc(index: WarcIndex, url: str) -> lxml_html.HtmlElement:
    record = index.get(url)
    assert record is not None and record.status == 200, url
    return lxml_html.document_fromstring(record.body)


def _links(index: WarcIndex, url: str) -> set[str]:
    """Absolute http(s) targets of a page's <a href>, fragments dropped."""
    out = set()
    for a in _doc(index, url).iter("a"):
        href = (a.get("href") or "").strip()
        if not href or href.startswith(("javascript:", "mailto:", "#")):
            continue
        out.add(urljoin(url, href).split("#")[0])
    return out


def _crawl_html(index: WarcIndex, site: FakeSite) -> Iterator[tuple[str, set[str]]]:
    """Breadth-first over the site's HTML pages by <a href> only: (page, its links)."""
    seen, queue = {site.home}, [site.home]
    articles = set(site.article_urls)
    while queue:
        url = queue.pop(0)
        record = index.get(url)
        if record is None or record.status != 200 or url in articles:
            continue
        ctype = dict((k.lower(), v) for k, v in record.headers).get("content-type", "")
        if not ctype.startswith("text/html"):
            continue
        links = _links(index, url)
        yield url, links
        for link in sorted(links):
            if urlsplit(link).hostname in site.hosts and link not in seen:
                seen.add(link)
                queue.append(link)


def _xml(index: WarcIndex, url: str) -> etree._Element:
    record = index.get(url)
    assert record is not None and record.status == 200, url
    return etree.fromstring(record.body)


def test_three_sites_on_fictional_hosts(built) -> None:
    _, sites, _ = built
    assert tuple(sites) == SITE_KEYS
    assert {s.reach for s in sites.values()} == {"links", "feed", "sitemap"}
    hosts = [h for s in sites.values() for h in s.hosts]
    assert len(hosts) == len(set(hosts))
    for site in sites.values():
        assert site.home == f"https://{site.hosts[0]}/"
        assert not any(REAL_HOSTS.search(h) for h in site.hosts), site.hosts
        assert 30 <= len(site.article_urls) <= 60, (site.key, len(site.article_urls))
        assert len(set(site.article_urls)) == len(site.article_urls)
        assert set(site.titles) == set(site.published) == set(site.sources)
        assert set(site.titles) == set(site.article_urls)
        assert 4 <= len(site.list_urls) <= 9 and site.list_urls[0] == site.home
        kinds = "/".join(site.other_urls)
        for kind in ("/tag/", "/author/", "/video/", "login", "/robots.txt"):
            assert kind in kinds, (site.key, kind)
        pattern = re.compile(site.article_regex)
        assert all(pattern.search(u) for u in site.article_urls), site.key
        assert not any(pattern.search(u) for u in site.list_urls + site.other_urls), site.key
        assert all(urlsplit(u).hostname in site.hosts for u in site.article_urls)
    # three different URL forms: a date, a number, a hash
    assert re.search(r"/\d{4}-\d{2}-\d{2}/\d+\.html$", sites["huanan"].article_urls[0])
    assert re.search(r"/article/\d{7}$", sites["beicheng"].article_urls[0])
    assert re.search(r"/story/[0-9a-f]{16}\.html$", sites["nanyang"].article_urls[0])
    # gold titles travel with their pages (cx163-zh has them all)
    assert all(sites["huanan"].titles.values())


def test_every_page_replays_with_its_bytes_and_charset(built, datasets: Path) -> None:
    _, sites, index = built
    cases = {}
    for folder in {src.split("/")[0] for s in sites.values() for src in s.sources.values()}:
        with open(datasets / folder / "cases.jsonl", encoding="utf-8") as fh:
            for line in fh:
                case = json.loads(line)
                cases[f"{folder}/{case['id']}"] = (folder, case)
    used = [src for s in sites.values() for src in s.sources.values()]
    assert len(used) == len(set(used)), "a saved page serves two articles"
    for site in sites.values():
        for url in site.list_urls + site.other_urls:
            record = index.get(url)
            assert record is not None and record.status == 200, url
        for url in site.article_urls:
            record = index.get(url)
            assert record is not None and record.status == 200, url
            folder, case = cases[site.sources[url]]
            assert record.body == (datasets / folder / case["html_file"]).read_bytes()
            ctype = dict(record.headers)["Content-Type"]
            charset = ctype.split("charset=")[1].lower()
            assert charset == case["encoding"], (url, ctype)
    assert index.get("https://www.huanan-daily.cn/no/such/page.html") is None


def test_dates_in_urls_are_the_pages_dates(built) -> None:
    _, sites, _ = built
    site = sites["huanan"]
    for url in site.article_urls:
        day = re.search(r"/(\d{4}-\d{2}-\d{2})/", url)[1]
        assert site.published[url].startswith(day), url
    assert {site.sections[u] for u in site.article_urls} == {"news", "finance", "tech"}
    assert all(f"/{site.sections[u]}/" in u for u in site.article_urls)


def test_links_site_reaches_every_article_from_its_home(built) -> None:
    _, sites, index = built
    site = sites["huanan"]
    pages = dict(_crawl_html(index, site))
    found = set().union(*pages.values())
    assert set(site.article_urls) <= found
    assert set(site.list_urls) <= set(pages)
    assert set(site.article_urls) & _links(index, site.home)  # the home page links some
    # tag and author pages are link lists of articles too
    for url in site.other_urls:
        if "/tag/" in url or "/author/" in url:
            assert _links(index, url) & set(site.article_urls), url


@pytest.mark.parametrize("key", ["beicheng", "nanyang"])
def test_feed_and_sitemap_sites_link_no_article_from_html(built, key: str) -> None:
    _, sites, index = built
    site = sites[key]
    pages = dict(_crawl_html(index, site))
    assert site.home in pages and set(site.list_urls) <= set(pages)
    linked = set().union(*pages.values())
    assert not linked & set(site.article_urls)
    # nor anywhere else in the HTML (scripts, data attributes)
    for url in pages:
        body = index.get(url).body.decode("utf-8")
        assert not any(urlsplit(a).path in body for a in site.article_urls), url


def test_feed_lists_the_articles(built) -> None:
    _, sites, index = built
    site = sites["nanyang"]
    head = _doc(index, site.home).xpath('//link[@rel="alternate"][@type="application/rss+xml"]')
    assert [urljoin(site.home, el.get("href")) for el in head] == list(site.feeds)
    assert dict(index.get(site.feeds[0]).headers)["Content-Type"].startswith("application/rss")
    rss = _xml(index, site.feeds[0])
    items = rss.findall("./channel/item")
    links = [it.findtext("link") for it in items]
    assert links == list(site.article_urls)  # newest first
    for it in items:
        assert it.findtext("title")
        assert parsedate_to_datetime(it.findtext("pubDate")).utcoffset() is not None
    # the links site has a feed too, of its 20 newest
    hn = sites["huanan"]
    links = [it.findtext("link") for it in _xml(index, hn.feeds[0]).iter("item")]
    assert links == list(hn.article_urls[:20])


def test_sitemap_index_lists_every_article(built) -> None:
    _, sites, index = built
    site = sites["beicheng"]
    robots = index.get(f"{site.home}robots.txt").body.decode()
    named = re.findall(r"^Sitemap:\s*(\S+)$", robots, re.M)
    assert named == [site.sitemaps[0]] and named[0].endswith("/sitemap_index.xml")
    root = _xml(index, named[0])
    assert root.tag == f"{SM}sitemapindex"
    maps = [loc.text for loc in root.iter(f"{SM}loc")]
    assert len(maps) >= 2 and maps == list(site.sitemaps[1:])
    listed, news = set(), 0
    for url in maps:
        urlset = _xml(index, url)
        assert urlset.tag == f"{SM}urlset"
        for entry in urlset.iter(f"{SM}url"):
            listed.add(entry.findtext(f"{SM}loc"))
            if entry.find(f"{NEWS}news") is not None:
                news += 1
                assert entry.findtext(f"{NEWS}news/{NEWS}publication/{NEWS}name")
                assert re.match(r"\d{4}-\d\d-\d\dT", entry.findtext(f".//{NEWS}publication_date"))
    assert set(site.article_urls) <= listed
    assert news >= 10
    # the other sites name no sitemap
    for other in ("huanan", "nanyang"):
        body = index.get(f"{sites[other].home}robots.txt").body.decode()
        assert "Sitemap:" not in body


def test_renamed_moves_one_sites_articles_only(built, renamed) -> None:
    _, before, old = built
    _, after, new = renamed
    for key in SITE_KEYS:
        a, b = before[key], after[key]
        assert a.home == b.home and a.list_urls == b.list_urls and a.other_urls == b.other_urls
        if key != RENAMED:
            assert a == b
            for url in a.article_urls + a.list_urls + a.other_urls:
                assert old.get(url).body == new.get(url).body, url
            continue
        assert b.renamed and len(b.article_urls) == len(a.article_urls)
        assert not set(a.article_urls) & set(b.article_urls)
        assert [a.sources[u] for u in a.article_urls] == [b.sources[u] for u in b.article_urls]
        assert not any(replay_key(u) in new.offsets for u in a.article_urls)
        learnt = re.compile(a.article_regex)  # what a site row learnt on the original holds
        linked = set().union(*(_links(new, u) for u in b.list_urls))
        assert set(b.article_urls) <= linked
        assert not any(learnt.search(u) for u in linked)
        assert all(re.search(b.article_regex, u) for u in b.article_urls)


def test_same_archive_every_run(built, datasets: Path, tmp_path: Path) -> None:
    _, sites, index = built
    path, again = build_site_archives(datasets, tmp_path)
    assert {s.key: s for s in again} == sites
    fresh = WarcIndex(path)
    try:
        assert fresh.offsets.keys() == index.offsets.keys()
        for site in again:
            for url in site.list_urls + site.other_urls:
                assert fresh.get(url).body == index.get(url).body, url
    finally:
        fresh.close()
