"""WARC replay archives of fictional news sites, built from real saved article pages.

The acceptance fixture of ``scrapy addsite`` (discover a site's article and list URL
patterns from its home page) and ``scrapy sites check`` (do a site row's patterns still
match). Three fictional sites, in no site table, each on its own host and with its own
article URL form and way in; their article pages are real saved Chinese pages of
``../shared/datasets`` (read when the archive is built, never copied into the
repository), served with their bytes untouched and a Content-Type charset that matches
those bytes. Everything around them (home, section, tag, author, video, gallery and
login pages, robots.txt, feeds, sitemaps) is generated here, in the markup of a portal:
header navigation, headline lists with short dates, a "hot" sidebar, a footer.

=========  ======================================  ==========================================
key        home / article URL form                 way in (``reach``)
=========  ======================================  ==========================================
huanan     https://www.huanan-daily.cn/            ``links``: home and section pages (with
           ``/{news|finance|tech}/YYYY-MM-DD/      ``index_2.html`` pages) link the articles;
           NNNNNN.html`` (date from the page's     tag and author pages are link lists too; an
           gold time)                              RSS feed of the 20 newest is linked as well
beicheng   https://news.beicheng-times.com.tw/     ``sitemap``: home and sections are pages
           ``/article/NNNNNNN``                    whose headline lists load by JavaScript (no
                                                   article link at all); robots.txt names
                                                   ``/sitemap_index.xml``: a Google News
                                                   sitemap, two article sitemaps, a pages one
nanyang    https://www.nanyang-post.com.sg/        ``feed``: every HTML page is a JavaScript
           ``/story/<16 hex>.html``                shell without article links; the home page
                                                   has ``<link rel="alternate"
                                                   type="application/rss+xml" href="/rss.xml">``
                                                   and the RSS lists every article
=========  ======================================  ==========================================

Each site also has links that are not articles: tag pages (``/tag/<percent-encoded
Chinese>/``), author pages (``/author/<slug>/``), video pages (a title, a player embed, a
one-line description and a date, no body), a login page, and on huanan a photo section
with galleries. On huanan, tag and author pages list articles; on the other two sites they
are JavaScript shells like the rest, so their articles stay reachable one way only.
Only the main host of each site has a robots.txt; huanan's video and login hosts (``v.``,
``passport.``) answer 404 for it (allow all), as the replay does for any URL not in the
archive. Links to a few pages that do not exist (``/about/jobs.html``,
``/static/js/...``) are left in on purpose, as on the real web.

Pages are picked deterministically (sorted case ids, explicit exclusions of non-news pages
and duplicates, no randomness), so the archive is the same on every run:
huanan takes the cx163-zh pages with gold times; beicheng the news pages of
gne-unlabelled-zh and cx163-zh's opinion-column pages; nanyang the news pages of
cwced-zh, newspaper4k-fixtures-zh, readability-fixtures-zh and gerapy-detail-unlabelled.
A page's time is its case's ``published`` gold when known (taken as +08:00 without an
offset), else the first time printed in the page (meta tags first, then the body text);
pages with neither, and pages without a ``<title>``, are left out. The pages keep what
they were saved with: links to their original publishers, and on 12 of them (gne, China
Daily, ifeng) a ``rel=canonical`` or ``og:url`` naming the original, off-site address.

API (stable)::

    build_site_archives(datasets, out_dir, *, renamed=None) -> (archive_path, [FakeSite])
    FakeSite: key, name, home, hosts, reach, article_urls, list_urls, other_urls, titles,
              published, sources, feeds, sitemaps, article_regex, renamed, sections
    SITE_KEYS = ("huanan", "beicheng", "nanyang")

``renamed=KEY`` builds the same archive except that site KEY's articles live at a new URL
form (huanan ``/content/NNNNNN.shtml``, beicheng ``/news/<section>/breakingnews/NNNNNNN``,
nanyang ``/p/<hex>/``) and every page, feed and sitemap of that site links the new
addresses, while its home, section, tag and other pages keep theirs: a site row learnt on
the original archive no longer matches any article link. The other sites are
byte-identical.

By hand::

    python -m tests.sitegen ../shared/datasets /tmp/sites [--renamed huanan]
    scrapy addsite https://www.huanan-daily.cn/ --key huanan --write \\
        -s REPLAY_ARCHIVE=/tmp/sites/sites.warc.gz -s SITES_FILE=/tmp/sites/sites.toml
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote, urlsplit

from lxml import html as lxml_html

from newsspider.replay import _open_writer, write_response_record

__all__ = ["SITE_KEYS", "FakeSite", "build_site_archives", "main"]

SITE_KEYS = ("huanan", "beicheng", "nanyang")
CST = timezone(timedelta(hours=8))

# The charset label sent in Content-Type for a case's real encoding (cases.jsonl
# ``encoding``: the narrowest of gb2312/gbk/gb18030 that decodes the bytes).
_CHARSET_LABEL = {"utf-8": "utf-8", "gb2312": "gb2312", "gbk": "GBK", "gb18030": "GB18030"}


@dataclass(frozen=True)
class FakeSite:
    """The truth about one fictional site of an archive."""

    key: str  # a suggested site key
    name: str  # the site's name as its pages print it
    home: str  # "https://www.huanan-daily.cn/"
    hosts: tuple[str, ...]  # every host of the site that has pages in the archive
    reach: str  # "links" (home and sections) | "feed" (RSS only) | "sitemap" (only)
    article_urls: tuple[str, ...]  # every article URL in the archive, newest first
    list_urls: tuple[str, ...]  # home + section pages (+ their page 2)
    other_urls: tuple[str, ...]  # tag, author, video, login, gallery, feed, sitemap, robots
    titles: dict[str, str | None]  # article URL -> the case's gold title, None when unknown
    published: dict[str, str]  # article URL -> ISO time (gold, else printed in the page)
    sources: dict[str, str]  # article URL -> "dataset/case-id"
    feeds: tuple[str, ...] = ()  # RSS URLs (also in other_urls)
    sitemaps: tuple[str, ...] = ()  # sitemap index first, then its sitemaps (also in other)
    article_regex: str = ""  # a regex matching every article URL and no other URL
    renamed: bool = False  # True when built with renamed=key
    sections: dict[str, str] = field(default_factory=dict)  # article URL -> section slug


# --------------------------------------------------------------------------
# Cases: the real pages


@dataclass(frozen=True)
class _Case:
    dataset: str
    id: str
    raw: bytes
    encoding: str  # the bytes' real encoding (cases.jsonl)
    gold_title: str | None
    headline: str  # gold title, else the page's h1 / <title>: link text on list pages
    time: datetime  # gold published, else printed in the page
    gold_time: bool
    summary: str  # a line for feeds: the start of the gold body, else the headline

    @property
    def source(self) -> str:
        return f"{self.dataset}/{self.id}"

    @property
    def content_type(self) -> str:
        return f"text/html; charset={_CHARSET_LABEL.get(self.encoding, self.encoding)}"

    def digest(self, salt: str) -> str:
        return hashlib.sha1(f"{salt}:{self.source}".encode()).hexdigest()


# Pages that are not news articles (blogs, forum posts, a syllabus, Wikipedia, laws),
# or that duplicate another page, or whose printed time contradicts the page.
_EXCLUDED = frozenset(
    {
        # gne-unlabelled-zh
        "gne-baijiahao-1", "gne-baijiahao-2", "gne-baijiahao-3", "gne-baijiahao-4",
        "gne-njxfhn-1", "gne-other-1", "gne-readhub-readhub", "gne-wechat-1",
        "gne-wechat-2", "gne-sxmu-1", "gne-qq-qq", "gne-gamersky-gamersky",
        "gne-thepaper-4", "gne-visible-thepaper-1",
        # cwced-zh (by id prefix, see _excluded)
        "2168485b", "d5bced5e", "d02c66a2", "c38e2b2d", "54e89e4e", "8f1cdd94",
        "77fa9435", "a6e8b739", "9b1e5dcb", "b828b656", "0df12126", "e3f3b532",
        "c3f7d079", "386d70f8", "455de1c0", "4fa9dfe4", "c3a80850", "d7605742",
        "fad52388", "5dc3fa2d", "fddcb19c", "2397c95d",
        # readability-fixtures-zh: a travel blog; gerapy: the same ifeng article again
        "readability-pixnet", "gerapy-ifeng_news1_detail_20220630",
    }
)  # fmt: skip


def _excluded(case_id: str) -> bool:
    return case_id in _EXCLUDED or case_id[:8] in _EXCLUDED


_PRINTED = re.compile(
    r"(?<!\d)((?:19|20)\d\d)\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})(?!\d)\s*日?"
    r"(?:[T\s]*(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?)?"
)
_TIME_META = frozenset(
    {"article:published_time", "pubdate", "publishdate", "datepublished", "publish_time",
     "og:release_date", "ptime"}
)  # fmt: skip


def _match_time(m: re.Match[str]) -> tuple[datetime | None, bool]:
    y, mo, d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    try:
        when = datetime(y, mo, d, h, mi, s, tzinfo=CST)
    except ValueError:
        return None, False
    return (when if 1995 <= y <= 2030 else None), m.group(4) is not None


def _printed_time(doc: lxml_html.HtmlElement) -> datetime | None:
    """The page's time: a publication meta tag, else the first time (else date) in the body."""
    for el in doc.iter("meta"):
        name = (el.get("property") or el.get("name") or el.get("itemprop") or "").lower()
        if name in _TIME_META and (m := _PRINTED.search(el.get("content") or "")):
            when, _ = _match_time(m)
            if when is not None:
                return when
    body = doc.find("body")
    root = body if body is not None else doc
    for el in root.xpath(".//script|.//style|.//noscript"):
        el.drop_tree()
    text = root.text_content()
    first = None
    for m in _PRINTED.finditer(text):
        when, has_clock = _match_time(m)
        if when is None:
            continue
        if has_clock:
            return when
        first = first or when
    return first


def _gold_time(value: str) -> datetime | None:
    """A ``published`` gold value with at least a day; +08:00 when it states no offset."""
    if len(value) < 10:
        return None
    when = datetime.fromisoformat(value)
    return when if when.tzinfo else when.replace(tzinfo=CST)


_TITLE_SPLIT = re.compile(r"\s*(?:_|\||｜|--|-\s|—|－)\s*")


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _page_headline(doc: lxml_html.HtmlElement) -> str:
    for h in doc.iter("h1"):
        text = _clean(h.text_content())
        if 4 <= len(text) <= 60:
            return text
    title = doc.find(".//title")
    text = _clean(title.text_content()) if title is not None else ""
    parts = [p for p in _TITLE_SPLIT.split(text) if p]
    return (max(parts[:2], key=len) if parts else text)[:60] or "无标题"


def _codec(encoding: str) -> str:
    return "utf-8" if encoding == "utf-8" else "gb18030"


def _read_cases(folder: Path) -> Iterator[dict]:
    with open(folder / "cases.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


@lru_cache(maxsize=4)
def _load(datasets: Path, dataset: str) -> tuple[_Case, ...]:
    """The usable cases of one dataset folder, sorted by id (cached per process)."""
    out = []
    for c in sorted(_read_cases(datasets / dataset), key=lambda c: c["id"]):
        if _excluded(c["id"]) or c.get("lang") != "zh":
            continue
        raw = (datasets / dataset / c["html_file"]).read_bytes()
        doc = lxml_html.document_fromstring(raw.decode(_codec(c["encoding"]), "replace"))
        title_el = doc.find(".//title")
        if title_el is None or not title_el.text_content().strip():
            continue  # no <title>: a fragment of a page rather than a page a site serves
        gold = _gold_time(c["published"]) if c.get("published") else None
        when = gold or _printed_time(doc)
        if when is None:
            continue
        title = c.get("title")
        body_lines = [ln.strip() for ln in (c.get("body") or "").splitlines() if ln.strip()]
        headline = title or _page_headline(doc)
        summary = body_lines[0][:80] if body_lines else headline
        out.append(
            _Case(dataset, c["id"], raw, c["encoding"], title, headline, when, bool(gold),
                  summary)
        )  # fmt: skip
    return tuple(out)


def _pick(datasets: Path, key: str) -> list[_Case]:
    if key == "huanan":  # one template: NetEase money pages with gold times
        cases = [c for c in _load(datasets, "cx163-zh") if c.gold_time]
    elif key == "beicheng":
        cases = list(_load(datasets, "gne-unlabelled-zh"))
        cases += [c for c in _load(datasets, "cx163-zh") if not c.gold_time]
    else:
        cases = []
        for name in ("cwced-zh", "newspaper4k-fixtures-zh", "readability-fixtures-zh",
                     "gerapy-detail-unlabelled"):  # fmt: skip
            cases += _load(datasets, name)
    # newest first, as sites list them; ties by source for a stable order
    return sorted(cases, key=lambda c: (-c.time.timestamp(), c.source))


# --------------------------------------------------------------------------
# Page chrome


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _short(when: datetime) -> str:
    return when.astimezone(CST).strftime("%m-%d %H:%M")


@dataclass
class _Link:
    url: str
    text: str
    when: datetime | None = None


def _ul(links: Sequence[_Link], cls: str = "list", *, dates: bool = True) -> str:
    items = []
    for link in links:
        span = f'<span class="time">{_short(link.when)}</span>' if dates and link.when else ""
        items.append(f'<li><a href="{_e(link.url)}">{_e(link.text)}</a>{span}</li>')
    return f'<ul class="{cls}">\n' + "\n".join(items) + "\n</ul>"


def _page(
    *,
    title: str,
    charset: str,
    head_extra: str = "",
    header: str,
    main: str,
    aside: str = "",
    footer: str,
    lang: str = "zh-CN",
) -> bytes:
    doc = f"""<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="{charset}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title>
<link rel="stylesheet" href="/static/css/site.css">
{head_extra}
</head>
<body>
{header}
<div class="wrap">
<main class="main">
{main}
</main>
{f'<aside class="side">{aside}</aside>' if aside else ""}
</div>
{footer}
</body>
</html>
"""
    return doc.encode(charset, "xmlcharrefreplace")


def _xml(text: str) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + text).encode()


def _rss(channel: str, home: str, self_url: str, desc: str, items: Sequence[tuple]) -> bytes:
    """RSS 2.0; items are (url, title, when, category, summary)."""
    out = []
    for url, title, when, category, summary in items:
        out.append(
            f"<item>\n<title>{_e(title)}</title>\n<link>{_e(url)}</link>\n"
            f'<guid isPermaLink="true">{_e(url)}</guid>\n'
            f"<pubDate>{format_datetime(when)}</pubDate>\n"
            f"<category>{_e(category)}</category>\n"
            f"<description>{_e(summary)}</description>\n</item>"
        )
    newest = max((it[2] for it in items), default=datetime(2020, 1, 1, tzinfo=CST))
    return _xml(
        '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">\n<channel>\n'
        f"<title>{_e(channel)}</title>\n<link>{_e(home)}</link>\n"
        f'<atom:link href="{_e(self_url)}" rel="self" type="application/rss+xml"/>\n'
        f"<description>{_e(desc)}</description>\n<language>zh-cn</language>\n"
        f"<lastBuildDate>{format_datetime(newest)}</lastBuildDate>\n<ttl>10</ttl>\n"
        + "\n".join(out)
        + "\n</channel>\n</rss>\n"
    )


def _robots(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


@dataclass
class _Out:
    """The records of one site and its truth, filled by a site builder."""

    records: list[tuple[str, bytes, str]] = field(default_factory=list)
    articles: list[str] = field(default_factory=list)
    lists: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    feeds: list[str] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)

    def add(self, url: str, body: bytes, ctype: str, role: str | None = None) -> None:
        self.records.append((url, body, ctype))
        if role is not None:
            getattr(self, role).append(url)


@dataclass(frozen=True)
class _Article:
    case: _Case
    url: str
    section: str  # slug
    number: str  # the id in the URL


def _truth(spec: _Spec, out: _Out, arts: Sequence[_Article], *, renamed: bool) -> FakeSite:
    return FakeSite(
        key=spec.key,
        name=spec.name,
        home=spec.home,
        hosts=spec.hosts,
        reach=spec.reach,
        article_urls=tuple(a.url for a in arts),
        list_urls=tuple(out.lists),
        other_urls=tuple(out.others),
        titles={a.url: a.case.gold_title for a in arts},
        published={a.url: a.case.time.isoformat() for a in arts},
        sources={a.url: a.case.source for a in arts},
        feeds=tuple(out.feeds),
        sitemaps=tuple(out.sitemaps),
        article_regex=spec.renamed_regex if renamed else spec.article_regex,
        renamed=renamed,
        sections={a.url: a.section for a in arts},
    )


@dataclass(frozen=True)
class _Spec:
    key: str
    name: str
    home: str
    hosts: tuple[str, ...]
    reach: str
    sections: tuple[tuple[str, str], ...]  # (slug, label) of the article sections
    article_regex: str
    renamed_regex: str
    build: Callable[[_Spec, list[_Case], bool], tuple[_Out, list[_Article]]]


# --------------------------------------------------------------------------
# huanan: date in the path, reached through home and section pages


_HN = "https://www.huanan-daily.cn"
_HN_TAGS = (
    ("股市", ("股", "A股", "沪指", "两市", "券商", "救市")),
    ("证监会", ("证监会",)),
    ("基金", ("基金", "私募", "资金")),
    ("互联网", ("互联网", "Uber", "京东", "同程")),
    ("宏观经济", ("PMI", "发改委", "经济", "印花税", "债")),
)
_HN_AUTHORS = (("lin-xiaoyu", "林晓雨"), ("chen-haoran", "陈浩然"), ("zhou-min", "周敏"))
_HN_VIDEOS = (
    (60231, "直击交易所：收盘前最后十分钟", "记者在交易大厅记录收盘前的最后十分钟。"),
    (60244, "三分钟看懂融资融券", "动画解读两融业务的基本规则。"),
    (60258, "专访：私募经理谈仓位管理", "一位私募基金经理谈震荡市中的仓位管理。"),
    (60263, "珠江新城航拍", "航拍镜头下的珠江新城夜景。"),
)
_HN_GALLERIES = (
    (8812, "组图：台风过境后的珠江口", ("渔船回港避风", "海堤上的巡查人员", "雨后的江面")),
    (8815, "组图：夜幕下的广州塔", ("灯光秀", "江边的游人")),
    (8821, "组图：早茶里的老广州", ("虾饺", "茶楼一角", "老街坊")),
)


def _hn_tag_url(tag: str) -> str:
    return f"{_HN}/tag/{quote(tag)}/"


def _hn_build(spec: _Spec, cases: list[_Case], renamed: bool) -> tuple[_Out, list[_Article]]:
    out = _Out()
    sections = spec.sections
    arts: list[_Article] = []
    oldest_first = sorted(cases, key=lambda c: (c.time.timestamp(), c.source))
    number = 318_200
    for i, case in enumerate(oldest_first):
        number += 7 + int(case.digest("hn")[:2], 16) % 11
        slug = sections[i % len(sections)][0]
        day = case.time.astimezone(CST).strftime("%Y-%m-%d")
        url = f"{_HN}/content/{number}.shtml" if renamed else f"{_HN}/{slug}/{day}/{number}.html"
        arts.append(_Article(case, url, slug, str(number)))
    arts.sort(key=lambda a: (-a.case.time.timestamp(), a.case.source))
    label = dict(sections)
    charset = "gbk"
    ctype = "text/html; charset=GBK"

    tags: dict[str, list[_Article]] = {}
    for a in arts:
        for tag, words in _HN_TAGS:
            if any(w in a.case.headline for w in words):
                tags.setdefault(tag, []).append(a)
    authors: dict[str, list[_Article]] = {slug: [] for slug, _ in _HN_AUTHORS}
    for i, a in enumerate(reversed(arts)):
        authors[_HN_AUTHORS[i % len(_HN_AUTHORS)][0]].append(a)
    authors = {k: v[::-1] for k, v in authors.items()}

    def link(a: _Article, form: str = "abs") -> _Link:
        url = a.url
        if form == "rel":
            url = urlsplit(a.url).path
        elif form == "proto":
            url = a.url.removeprefix("https:")
        return _Link(url, a.case.headline, a.case.time)

    video_urls = [f"https://v.huanan-daily.cn/video/{vid}.html" for vid, _, _ in _HN_VIDEOS]
    gallery_urls = [f"{_HN}/photo/{gid}.html" for gid, _, _ in _HN_GALLERIES]
    login = "https://passport.huanan-daily.cn/login"
    nav = "\n".join(
        [f'<li><a href="{_HN}/">首页</a></li>']
        + [f'<li><a href="/{slug}/">{_e(name)}</a></li>' for slug, name in sections]
        + ['<li><a href="/photo/">图片</a></li>',
           '<li><a href="https://v.huanan-daily.cn/">视频</a></li>',
           '<li><a href="javascript:void(0)" class="more">更多</a></li>']
    )  # fmt: skip
    header = f"""<div class="topbar"><span>2015年7月 星期六</span>
<a href="{login}?next=%2F">登录</a> |
<a href="https://passport.huanan-daily.cn/register">注册</a> |
<a href="/rss/latest.xml">RSS订阅</a></div>
<header class="header">
<a class="logo" href="/"><img src="/static/img/logo.png" alt="{spec.name}"></a>
<form action="/search" method="get">
<input name="q" placeholder="搜索新闻"><button>搜索</button></form>
<nav class="nav"><ul>
{nav}
</ul></nav></header>"""
    footer = """<footer class="footer">
<p><a href="/about/">关于我们</a> | <a href="/about/jobs.html">招聘信息</a> |
<a href="mailto:news@huanan-daily.cn">新闻热线</a> | <a href="/about/">广告服务</a></p>
<p>华南日报社 版权所有 粤ICP备15000321号 未经授权禁止转载</p>
</footer>"""
    hot = [link(a, "proto") for a in sorted(arts, key=lambda a: a.case.digest("hot"))[:8]]
    tag_box = " ".join(f'<a href="{_e(_hn_tag_url(t))}">{_e(t)}</a>' for t in tags)
    aside = (
        '<div class="box hot"><h3>热点排行</h3>\n'
        + _ul(hot, "rank", dates=False)
        + "</div>\n"
        + f'<div class="box tags"><h3>热门标签</h3><p>{tag_box}</p></div>\n'
        + '<div class="box video"><h3>视频</h3>\n'
        + _ul([_Link(u, t) for u, (_, t, _) in zip(video_urls, _HN_VIDEOS, strict=True)],
              "vlist")
        + "</div>"
    )  # fmt: skip

    def page(title: str, main: str, head_extra: str = "") -> bytes:
        return _page(
            title=f"{title}_{spec.name}" if title != spec.name else title,
            charset=charset, head_extra=head_extra, header=header, main=main,
            aside=aside, footer=footer,
        )  # fmt: skip

    feed_url = f"{_HN}/rss/latest.xml"
    rss_link = f'<link rel="alternate" type="application/rss+xml" title="{spec.name}" href="/rss/latest.xml">'  # noqa: E501
    # home: top story block, newest headlines, one block per section, photos
    blocks = [
        f'<div class="focus"><h2><a href="{_e(arts[0].url)}">{_e(arts[0].case.headline)}</a>'
        f"</h2><p>{_e(arts[0].case.summary)}</p></div>",
        '<div class="block"><h2>最新</h2>\n' + _ul([link(a) for a in arts[1:13]]) + "</div>",
    ]
    for slug, name in sections:
        own = [a for a in arts if a.section == slug][:6]
        blocks.append(
            f'<div class="block"><h2><a href="/{slug}/">{_e(name)}</a>'
            f'<a class="more" href="/{slug}/">更多&gt;&gt;</a></h2>\n'
            + _ul([link(a, "rel") for a in own])
            + "</div>"
        )
    blocks.append(
        '<div class="block photos"><h2><a href="/photo/">图片</a></h2>'
        + _ul([_Link(u, t) for u, (_, t, _) in zip(gallery_urls, _HN_GALLERIES, strict=True)],
              "pics", dates=False)
        + "</div>"
    )  # fmt: skip
    out.add(f"{_HN}/", page(spec.name, "\n".join(blocks), rss_link), ctype, "lists")

    per_page = 12
    for slug, name in sections:
        own = [a for a in arts if a.section == slug]
        chunks = [own[i : i + per_page] for i in range(0, len(own), per_page)] or [[]]
        for n, chunk in enumerate(chunks, start=1):
            url = f"{_HN}/{slug}/" if n == 1 else f"{_HN}/{slug}/index_{n}.html"
            pager = " ".join(
                f'<a href="/{slug}/">1</a>' if k == 1 else f'<a href="index_{k}.html">{k}</a>'
                for k in range(1, len(chunks) + 1)
            )
            if n < len(chunks):
                pager += f' <a class="next" href="index_{n + 1}.html">下一页</a>'
            crumbs = f'<div class="crumbs"><a href="/">首页</a> &gt; {_e(name)}</div>'
            items = _ul([link(a, "rel") for a in chunk])
            main = f'{crumbs}\n<h1>{_e(name)}</h1>\n{items}\n<div class="pager">{pager}</div>'
            title = name if n == 1 else f"{name} 第{n}页"
            out.add(url, page(title, main), ctype, "lists")

    pics = _ul(
        [_Link(u, t) for u, (_, t, _) in zip(gallery_urls, _HN_GALLERIES, strict=True)],
        "pics", dates=False,
    )  # fmt: skip
    out.add(f"{_HN}/photo/", page("图片", f"<h1>图片</h1>\n{pics}"), ctype, "lists")
    for url, (gid, title, captions) in zip(gallery_urls, _HN_GALLERIES, strict=True):
        figs = "\n".join(
            f'<figure><img src="https://img.huanan-daily.cn/photo/{gid}/{k}.jpg" alt="">'
            f"<figcaption>{_e(cap)}</figcaption></figure>"
            for k, cap in enumerate(captions, start=1)
        )
        main = f'<h1>{_e(title)}</h1>\n<p class="meta">2015-07-0{gid % 5 + 1} 10:00</p>\n{figs}'
        out.add(url, page(title, main), ctype, "others")

    for tag, tagged in tags.items():
        main = f"<h1>标签：{_e(tag)}</h1>\n" + _ul([link(a, "rel") for a in tagged])
        out.add(_hn_tag_url(tag), page(tag, main), ctype, "others")
    for slug, name in _HN_AUTHORS:
        main = (
            f'<div class="author"><img src="/static/img/author/{slug}.jpg" alt="">'
            f"<h1>{_e(name)}</h1><p>华南日报财经记者，关注资本市场与宏观经济。</p></div>\n"
            + _ul([link(a, "rel") for a in authors[slug]])
        )
        out.add(f"{_HN}/author/{slug}/", page(name, main), ctype, "others")

    out.add(
        "https://v.huanan-daily.cn/",
        page("视频", "<h1>视频</h1>\n" + _ul(
            [_Link(u, t) for u, (_, t, _) in zip(video_urls, _HN_VIDEOS, strict=True)],
            "vlist", dates=False)),
        ctype, "others",
    )  # fmt: skip
    for url, (vid, title, desc) in zip(video_urls, _HN_VIDEOS, strict=True):
        main = (
            f"<h1>{_e(title)}</h1>\n"
            f'<div class="player"><iframe src="https://player.huanan-daily.cn/embed/{vid}" '
            'width="640" height="360" frameborder="0" allowfullscreen></iframe></div>\n'
            f'<p class="desc">{_e(desc)}</p>\n<p class="meta">2015-07-04 18:30 华南日报视频</p>'
        )
        out.add(url, page(title, main), ctype, "others")
    login_main = (
        "<h1>登录华南日报通行证</h1>\n"
        '<form method="post" action="/login"><input name="user" placeholder="手机号/邮箱">'
        '<input type="password" name="password"><button>登录</button></form>\n'
        '<p><a href="https://passport.huanan-daily.cn/register">注册新账号</a></p>'
    )
    out.add(login, page("登录", login_main), ctype, "others")
    about = "<h1>关于我们</h1>\n<p>华南日报创刊于1998年，是一份面向华南地区的综合性日报。</p>"
    out.add(f"{_HN}/about/", page("关于我们", about), ctype)

    items = [
        (a.url, a.case.headline, a.case.time, label[a.section], a.case.summary) for a in arts[:20]
    ]
    out.add(
        feed_url,
        _rss(spec.name, f"{_HN}/", feed_url, "华南日报最新新闻", items),
        "application/rss+xml; charset=utf-8",
        "feeds",
    )
    out.others.append(feed_url)
    robots = _robots("User-agent: *", "Disallow: /search", "Disallow: /api/", "")
    out.add(f"{_HN}/robots.txt", robots, "text/plain", "others")
    for a in arts:
        out.add(a.url, a.case.raw, a.case.content_type, "articles")
    return out, arts


# --------------------------------------------------------------------------
# beicheng: numeric ids, reached only through the sitemaps


_BC = "https://news.beicheng-times.com.tw"
_BC_TAGS = ("颱風", "股市", "選舉", "疫情", "5G")
_BC_AUTHORS = (("wang-yiting", "王怡婷"), ("huang-zhiming", "黃志明"))
_BC_VIDEOS = (
    (31207, "颱風動態：最新路徑預測", "氣象專家解析颱風最新路徑。"),
    (31215, "早安北城：今日新聞重點", "三分鐘帶你看完今日重點新聞。"),
    (31222, "夜市美食大搜查", "記者走訪北城夜市的人氣攤位。"),
)


def _bc_build(spec: _Spec, cases: list[_Case], renamed: bool) -> tuple[_Out, list[_Article]]:
    out = _Out()
    sections = spec.sections
    oldest_first = sorted(cases, key=lambda c: (c.time.timestamp(), c.source))
    arts = []
    number = 4_512_000
    for i, case in enumerate(oldest_first):
        number += 300 + int(case.digest("bc")[:4], 16) % 4000
        slug = sections[i % len(sections)][0]
        url = f"{_BC}/news/{slug}/breakingnews/{number}" if renamed else f"{_BC}/article/{number}"
        arts.append(_Article(case, url, slug, str(number)))
    arts.sort(key=lambda a: (-a.case.time.timestamp(), a.case.source))
    charset = "utf-8"
    ctype = "text/html; charset=utf-8"
    tag_urls = [f"{_BC}/tag/{quote(t)}" for t in _BC_TAGS]
    video_urls = [f"{_BC}/video/{vid}.html" for vid, _, _ in _BC_VIDEOS]
    login = f"{_BC}/member/login"

    nav = "\n".join(
        [f'<li><a href="{_BC}/">首頁</a></li>']
        + [f'<li><a href="{_BC}/list/{slug}">{_e(name)}</a></li>' for slug, name in sections]
        + [f'<li><a href="{video_urls[0]}">影音</a></li>']
    )
    header = f"""<header class="header">
<div class="topbar"><a href="{login}">會員登入</a> | <a href="/member/register">加入會員</a></div>
<a class="logo" href="/">{spec.name}</a>
<nav><ul>
{nav}
</ul></nav></header>"""
    tag_box = " ".join(
        f'<a href="{_e(u)}">#{_e(t)}</a>' for u, t in zip(tag_urls, _BC_TAGS, strict=True)
    )
    authors = " ".join(f'<a href="/author/{slug}">{_e(name)}</a>' for slug, name in _BC_AUTHORS)
    footer = f"""<footer class="footer">
<div class="tags">熱門話題：{tag_box}</div>
<div class="columns">專欄作家：{authors}</div>
<p><a href="/about/privacy">隱私權政策</a> | <a href="/about/contact">聯絡我們</a></p>
<p>© 北城時報 Beicheng Times. All rights reserved.</p>
</footer>"""
    videos = _ul(
        [_Link(u, t) for u, (_, t, _) in zip(video_urls, _BC_VIDEOS, strict=True)],
        "vlist", dates=False,
    )  # fmt: skip
    aside = f'<div class="box"><h3>熱門影音</h3>\n{videos}</div>'
    loader = (
        '<section class="news-list" data-api="/api/v2/list?channel={ch}&amp;size=20">\n'
        '<div class="skeleton"></div><div class="skeleton"></div><div class="skeleton"></div>\n'
        "</section>\n<noscript>請開啟瀏覽器的 JavaScript 以閱讀新聞列表。</noscript>"
    )
    scripts = '<script src="/static/js/vendor.8c1d2e.js"></script>\n<script src="/static/js/list.31ab9f.js"></script>'  # noqa: E501

    def page(title: str, main: str) -> bytes:
        return _page(
            title=f"{title} - {spec.name}" if title != spec.name else title,
            charset=charset, header=header, main=main + "\n" + scripts, aside=aside,
            footer=footer, lang="zh-Hant-TW",
        )  # fmt: skip

    out.add(
        f"{_BC}/",
        page(spec.name, "<h2>即時新聞</h2>\n" + loader.format(ch="latest")),
        ctype, "lists",
    )  # fmt: skip
    for slug, name in sections:
        main = f"<h1>{_e(name)}</h1>\n" + loader.format(ch=slug)
        out.add(f"{_BC}/list/{slug}", page(name, main), ctype, "lists")
    for url, tag in zip(tag_urls, _BC_TAGS, strict=True):
        main = f"<h1>#{_e(tag)}</h1>\n" + loader.format(ch=f"tag-{quote(tag)}")
        out.add(url, page(tag, main), ctype, "others")
    for slug, name in _BC_AUTHORS:
        main = (
            f'<div class="author"><h1>{_e(name)}</h1><p>北城時報資深記者。</p></div>\n'
            + loader.format(ch=f"author-{slug}")
        )
        out.add(f"{_BC}/author/{slug}", page(name, main), ctype, "others")
    for url, (vid, title, desc) in zip(video_urls, _BC_VIDEOS, strict=True):
        main = (
            f"<h1>{_e(title)}</h1>\n"
            f'<div class="player"><video controls poster="/static/video/{vid}.jpg">'
            f'<source src="https://media.beicheng-times.com.tw/v/{vid}.mp4" type="video/mp4">'
            f'</video></div>\n<p class="desc">{_e(desc)}</p>\n'
            '<p class="meta">2019/09/26 08:00</p>'
        )
        out.add(url, page(title, main), ctype, "others")
    login_main = (
        "<h1>會員登入</h1>\n"
        '<form method="post"><input name="email" placeholder="電子郵件">'
        '<input type="password" name="pw"><button>登入</button></form>'
    )
    out.add(login, page("會員登入", login_main), ctype, "others")

    # sitemaps: Google News (20 newest), articles in two files by id, other pages
    xml_type = "application/xml; charset=utf-8"
    news_items = []
    for a in arts[:20]:
        news_items.append(
            f"<url><loc>{_e(a.url)}</loc><news:news><news:publication>"
            f"<news:name>{spec.name}</news:name><news:language>zh-tw</news:language>"
            "</news:publication>"
            f"<news:publication_date>{a.case.time.isoformat()}</news:publication_date>"
            f"<news:title>{_e(a.case.headline)}</news:title></news:news></url>"
        )
    news = (
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">\n'
        + "\n".join(news_items)
        + "\n</urlset>\n"
    )
    by_id = sorted(arts, key=lambda a: int(a.number))
    half = (len(by_id) + 1) // 2
    maps = [(f"{_BC}/sitemap-news.xml", _xml(news))]
    for n, chunk in enumerate((by_id[:half], by_id[half:]), start=1):
        urls = "\n".join(
            f"<url><loc>{_e(a.url)}</loc><lastmod>{a.case.time.isoformat()}</lastmod>"
            "<changefreq>never</changefreq></url>"
            for a in chunk
        )
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}\n</urlset>\n'
        maps.append((f"{_BC}/sitemaps/article-{n}.xml", _xml(body)))
    page_urls = out.lists + [u for u in out.others if u != login]
    urls = "\n".join(
        f"<url><loc>{_e(u)}</loc><changefreq>hourly</changefreq></url>" for u in page_urls
    )
    body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}\n</urlset>\n'
    maps.append((f"{_BC}/sitemap-pages.xml", _xml(body)))
    newest = arts[0].case.time.isoformat()
    index = "\n".join(
        f"<sitemap><loc>{_e(u)}</loc><lastmod>{newest}</lastmod></sitemap>" for u, _ in maps
    )
    index_url = f"{_BC}/sitemap_index.xml"
    out.add(
        index_url,
        _xml(
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + index
            + "\n</sitemapindex>\n"
        ),
        xml_type,
        "sitemaps",
    )
    for u, body in maps:
        out.add(u, body, xml_type, "sitemaps")
    out.others.extend(out.sitemaps)
    robots = _robots(
        "User-agent: *", "Disallow: /api/", "Disallow: /member/", "", f"Sitemap: {index_url}"
    )
    out.add(f"{_BC}/robots.txt", robots, "text/plain; charset=utf-8", "others")
    for a in arts:
        out.add(a.url, a.case.raw, a.case.content_type, "articles")
    return out, arts


# --------------------------------------------------------------------------
# nanyang: hash ids, reached only through the RSS feed


_NY = "https://www.nanyang-post.com.sg"
_NY_TAGS = ("新冠疫情", "中美关系", "房地产")
_NY_AUTHORS = (("tan-weiming", "陈伟明"), ("lee-huiling", "李慧玲"))
_NY_VIDEOS = (
    (70415, "狮城早报：今日要闻一分钟", "一分钟看完今天的新加坡要闻。"),
    (70433, "小贩中心的传承", "走访三代经营的小贩摊位。"),
)


def _ny_build(spec: _Spec, cases: list[_Case], renamed: bool) -> tuple[_Out, list[_Article]]:
    out = _Out()
    sections = spec.sections
    arts = []
    for i, case in enumerate(sorted(cases, key=lambda c: c.source)):
        h = case.digest("nanyang")[:16]
        slug = sections[i % len(sections)][0]
        url = f"{_NY}/p/{h}/" if renamed else f"{_NY}/story/{h}.html"
        arts.append(_Article(case, url, slug, h))
    arts.sort(key=lambda a: (-a.case.time.timestamp(), a.case.source))
    label = dict(sections)
    ctype = "text/html; charset=utf-8"
    tag_urls = [f"{_NY}/tag/{quote(t)}/" for t in _NY_TAGS]
    video_urls = [f"{_NY}/video/{vid}.html" for vid, _, _ in _NY_VIDEOS]
    login = f"{_NY}/login"
    feed_url = f"{_NY}/rss.xml"
    head = (
        f'<link rel="alternate" type="application/rss+xml" title="{spec.name} - 最新新闻" '
        'href="/rss.xml">\n'
        '<link rel="preload" href="/_next/static/chunks/main-5d1e.js" as="script">'
    )
    nav = "\n".join(
        [f'<a href="/">{spec.name}</a>']
        + [f'<a href="/section/{slug}">{_e(name)}</a>' for slug, name in sections]
        + [f'<a href="{video_urls[0]}">视频</a>', f'<a href="{login}">登录</a>']
    )
    tags = " ".join(
        f'<a href="{_e(u)}">{_e(t)}</a>' for u, t in zip(tag_urls, _NY_TAGS, strict=True)
    )
    columns = " ".join(f'<a href="/author/{slug}/">{_e(name)}</a>' for slug, name in _NY_AUTHORS)

    def shell(title: str, route: str, main: str = "") -> bytes:
        state = json.dumps({"route": route, "build": "5d1e9a0"}, ensure_ascii=False)
        return _page(
            title=f"{title} | {spec.name}" if title != spec.name else title,
            charset="utf-8", head_extra=head,
            header=f'<header id="masthead"><nav class="nav">\n{nav}\n</nav></header>',
            main=(
                f'<div id="__next" data-route="{_e(route)}">{main}'
                '<div class="spinner">加载中…</div></div>\n'
                f"<script>window.__NY_STATE__ = {state};</script>\n"
                '<script src="/_next/static/chunks/main-5d1e.js" defer></script>'
            ),
            footer=(
                f'<footer><p>热门话题：{tags}</p><p>专栏：{columns}</p>'
                '<p><a href="/about">关于我们</a> · © Nanyang Post Pte Ltd</p></footer>'
            ),
        )  # fmt: skip

    out.add(f"{_NY}/", shell(spec.name, "/"), ctype, "lists")
    for slug, name in sections:
        out.add(f"{_NY}/section/{slug}", shell(name, f"/section/{slug}"), ctype, "lists")
    for url, tag in zip(tag_urls, _NY_TAGS, strict=True):
        out.add(url, shell(tag, urlsplit(url).path, f"<h1>{_e(tag)}</h1>"), ctype, "others")
    for slug, name in _NY_AUTHORS:
        main = f"<h1>{_e(name)}</h1><p>南洋邮报专栏作者</p>"
        out.add(f"{_NY}/author/{slug}/", shell(name, f"/author/{slug}", main), ctype, "others")
    for url, (vid, title, desc) in zip(video_urls, _NY_VIDEOS, strict=True):
        main = (
            f"<h1>{_e(title)}</h1>"
            f'<div class="player"><iframe src="https://www.youtube.com/embed/ny{vid}" '
            "allowfullscreen></iframe></div>"
            f'<p class="desc">{_e(desc)}</p><time datetime="2022-02-13T08:00:00+08:00">'
            "2022年2月13日 08:00</time>"
        )
        out.add(url, shell(title, urlsplit(url).path, main), ctype, "others")
    login_main = '<h1>登录</h1><form method="post"><input name="email"><input type="password" name="pw"></form>'  # noqa: E501
    out.add(login, shell("登录", "/login", login_main), ctype, "others")

    items = [(a.url, a.case.headline, a.case.time, label[a.section], a.case.summary) for a in arts]
    out.add(
        feed_url,
        _rss(f"{spec.name} - 最新新闻", f"{_NY}/", feed_url, "南洋邮报即时新闻", items),
        "application/rss+xml; charset=utf-8",
        "feeds",
    )
    out.others.append(feed_url)
    robots = _robots("User-agent: *", "Disallow: /api/", "Disallow: /login", "")
    out.add(f"{_NY}/robots.txt", robots, "text/plain", "others")
    for a in arts:
        out.add(a.url, a.case.raw, a.case.content_type, "articles")
    return out, arts


# --------------------------------------------------------------------------
# The sites and the archive


_SPECS = (
    _Spec(
        key="huanan",
        name="华南日报",
        home=f"{_HN}/",
        hosts=("www.huanan-daily.cn", "v.huanan-daily.cn", "passport.huanan-daily.cn"),
        reach="links",
        sections=(("news", "要闻"), ("finance", "财经"), ("tech", "科技")),
        article_regex=r"^https://www\.huanan-daily\.cn/(?:news|finance|tech)/\d{4}-\d{2}-\d{2}/\d{6}\.html$",
        renamed_regex=r"^https://www\.huanan-daily\.cn/content/\d{6}\.shtml$",
        build=_hn_build,
    ),
    _Spec(
        key="beicheng",
        name="北城時報",
        home=f"{_BC}/",
        hosts=("news.beicheng-times.com.tw",),
        reach="sitemap",
        sections=(
            ("politics", "政治"),
            ("society", "社會"),
            ("business", "財經"),
            ("life", "生活"),
        ),
        article_regex=r"^https://news\.beicheng-times\.com\.tw/article/\d{7}$",
        renamed_regex=r"^https://news\.beicheng-times\.com\.tw/news/[a-z]+/breakingnews/\d{7}$",
        build=_bc_build,
    ),
    _Spec(
        key="nanyang",
        name="南洋邮报",
        home=f"{_NY}/",
        hosts=("www.nanyang-post.com.sg",),
        reach="feed",
        sections=(
            ("singapore", "狮城"),
            ("world", "国际"),
            ("china", "中国"),
            ("lifestyle", "生活"),
        ),
        article_regex=r"^https://www\.nanyang-post\.com\.sg/story/[0-9a-f]{16}\.html$",
        renamed_regex=r"^https://www\.nanyang-post\.com\.sg/p/[0-9a-f]{16}/$",
        build=_ny_build,
    ),
)


def build_site_archives(
    datasets: Path, out_dir: Path, *, renamed: str | None = None
) -> tuple[Path, list[FakeSite]]:
    """Write all fictional sites into one .warc.gz under ``out_dir``; return it and the truth.

    ``renamed=KEY`` moves that site's articles to its other URL form (the ``sites check``
    fixture); the archive is then ``sites-renamed-KEY.warc.gz``, else ``sites.warc.gz``.
    Same inputs, same bytes (WARC record ids and dates aside).
    """
    if renamed is not None and renamed not in SITE_KEYS:
        raise ValueError(f"unknown site {renamed!r}; expected one of {', '.join(SITE_KEYS)}")
    datasets = Path(datasets).resolve()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / (f"sites-renamed-{renamed}.warc.gz" if renamed else "sites.warc.gz")
    part = path.with_name(path.name + ".part")
    sites: list[FakeSite] = []
    with open(part, "wb") as fh:
        writer = _open_writer(fh, path)
        writer.write_record(
            writer.create_warcinfo_record(
                path.name, {"software": "newsspider tests/sitegen.py", "renamed": renamed or ""}
            )
        )
        for spec in _SPECS:
            is_renamed = renamed == spec.key
            out, arts = spec.build(spec, _pick(datasets, spec.key), is_renamed)
            for url, body, ctype in out.records:
                headers = [("Content-Type", ctype), ("Server", "nginx")]
                write_response_record(writer, url, body, headers)
            sites.append(_truth(spec, out, arts, renamed=is_renamed))
    part.replace(path)
    return path, sites


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.sitegen", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("datasets", type=Path, help="the shared/datasets folder")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--renamed", choices=SITE_KEYS, help="rename this site's article URLs")
    args = parser.parse_args(argv)
    path, sites = build_site_archives(args.datasets, args.out_dir, renamed=args.renamed)
    w = sys.stdout.write
    w(f"{path}\n")
    for s in sites:
        w(
            f"{s.key:9} {s.home:40} reach={s.reach:8} articles={len(s.article_urls)} "
            f"lists={len(s.list_urls)} others={len(s.other_urls)}"
            f"{' (renamed)' if s.renamed else ''}\n"
        )
        w(f"          e.g. {s.article_urls[0]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
