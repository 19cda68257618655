"""A harder set of fictional news sites, in the style and with the API of tests/sitegen.py.

tests/sitegen.py's three sites are what ``scrapy addsite`` was written against. The five
sites here print their article URLs in forms that discovery
(newsspider/discovery/shapes.py, classify.py, discover.py) was *not* written against, so
that its URL grouping and pattern writing can be measured on them. As in sitegen, the
article pages are real saved Chinese pages of ``../shared/datasets`` (read when the
archive is built, never copied into the repository), served with a Content-Type charset
that matches their bytes; everything around them (home, sections and their page 2, tag,
author, columnist, video, gallery, topic, daily index and login pages, robots.txt,
feeds, sitemaps) is generated portal markup: navigation, headline lists with short
dates, a "hot" sidebar, a footer.

========  ==============================================  ===================================
key       article URL form                                what makes it hard
========  ==============================================  ===================================
dongfang  ``https://{finance|tech|world|society}.         one form on four subdomains (home
          dongfang-wang.cn/a/YYYYMMDD/c100N-NNNNNNNN      on ``www.``); each subdomain's home
          .shtml``                                        is its section (a path-less URL);
                                                          ``/a/YYYYMMDD/`` daily indexes are
                                                          lists under the articles' folder;
                                                          ``www./special/<word>/`` topic lists
pearl     ``https://www.pearl-tribune.com.hk/news/        a slug of 2-6 words (some with
          <section>/YYYY/MM/DD/<slug-words>-NNNNNNN/``    digits: ``g20``, ``covid-19``)
                                                          before the id, trailing slash;
                                                          ``/news/<s>/page/2/`` pagination;
                                                          ``/columnist/<name>/`` lists;
                                                          ``/video/YYYY/MM/DD/<slug>-NNNNN/``
                                                          videos in the same dated slug+id form
xibei     ``https://news.xibei-daily.com.cn/content.php   the id is in the query; list pages
          ?id=NNNNN&cid=N``                               ``list.php?cid=N&page=2`` have the
                                                          same query shape; ``tag.php?t=`` with
                                                          GBK percent-escapes; every generated
                                                          page (and the RSS) is GBK
dawan     ``https://www.dawan-news.com/c/<11 base62>``    opaque mixed-case ids, no date (each
                                                          has a digit, an upper- and a lower-
                                                          case letter; 10 of 33 have a single
                                                          digit); ``/photo/<id>``
                                                          galleries and ``/video/<id>`` clips in
                                                          the same id form; the 20 newest only
                                                          in a Google News sitemap
taibei    ``https://www.taibei-post.com.tw/news/          a traditional-character section word
          %E6%94%BF%E6%B2%BB/YYYYMMDD/NNNNNNN.html``      percent-encoded in the path; an AMP
                                                          copy of every article under
                                                          ``/amp/news/...`` (``amp_urls``);
                                                          sections paginate past two hops, the
                                                          rest are only in yearly sitemaps
========  ==============================================  ===================================

Ways in (``reach``): every article is linked from the home page or from a page the home
page links (a section page or its page 2: home pages carry a pager per section block), as
a crawl with depth limit 2 needs, except on ``dawan`` and ``taibei`` (``links+sitemap``),
where some articles are only in a sitemap named by robots.txt (dawan: the 20 newest, in a
Google News sitemap, the home page listing them by script only; taibei: the oldest,
on section page 3 and beyond, and in ``/sitemaps/article-YYYY.xml``). ``linked_urls``
holds the articles reachable by links within two hops. dongfang, pearl and xibei also
declare an RSS feed of their 20 newest in the home page's ``<head>`` and link it from the
top bar with an ``<a>`` (pearl's is WordPress's ``/feed/``, a one-word path).

Article bytes are untouched except on taibei, whose articles get one line inserted after
``<head>`` (``<link rel="amphtml" href="…/amp/news/…">``, ASCII, the way real sites link
their AMP copies), and whose AMP copies are the original bytes with ``<link
rel="canonical" href="…">`` inserted the same way (:data:`AMP_LINK`, :data:`CANONICAL_LINK`).

Pages are picked deterministically: every page that tests/sitegen.py can use (a title and a
time, its exclusions), each once in this archive. sitegen.py already uses them all (the
datasets hold no other Chinese news page), so they are shared with it: cx163-zh's pages
with gold times alternate between dongfang and xibei (GB-encoded pages for the GBK
portal), its pages without go to dawan, and the other datasets' pages (gne-unlabelled-zh,
cwced-zh, newspaper4k-fixtures-zh, readability-fixtures-zh, gerapy-detail-unlabelled),
sorted by source, are dealt in turn to pearl, dawan and taibei.

API (stable)::

    build_hard_archives(datasets, out_dir) -> (archive_path, [HardSite])
    HardSite(FakeSite): FakeSite's fields + amp_urls, linked_urls
    HARD_KEYS = ("dongfang", "pearl", "xibei", "dawan", "taibei")

By hand::

    python -m tests.sitegen_hard ../shared/datasets /tmp/hard
    scrapy addsite https://www.pearl-tribune.com.hk/ --key pearl --write \\
        -s REPLAY_ARCHIVE=/tmp/hard/hard-sites.warc.gz -s SITES_FILE=/tmp/hard/sites.toml
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

from lxml import html as lxml_html

from newsspider.replay import _open_writer, write_response_record
from tests.sitegen import (
    CST,
    FakeSite,
    _Article,
    _Case,
    _e,
    _Link,
    _load,
    _Out,
    _page,
    _robots,
    _rss,
    _short,
    _ul,
    _xml,
)

__all__ = ["AMP_LINK", "CANONICAL_LINK", "HARD_KEYS", "HardSite", "build_hard_archives", "main"]

HARD_KEYS = ("dongfang", "pearl", "xibei", "dawan", "taibei")

#: What taibei inserts after ``<head>`` of an article and of its AMP copy (``%s``: the URL).
AMP_LINK = '\n<link rel="amphtml" href="%s">'
CANONICAL_LINK = '\n<link rel="canonical" href="%s">'


@dataclass(frozen=True)
class HardSite(FakeSite):
    """FakeSite, plus the article copies and the articles reachable by links."""

    # Article copies (taibei's /amp/news/...): each is another address of an article, so
    # a pattern may take them or leave them; they are in neither article_urls nor
    # other_urls.
    amp_urls: tuple[str, ...] = ()
    # The article URLs linked from the home page or from a page the home page links
    # (a depth-2 crawl finds them); the rest are reachable through a sitemap only.
    linked_urls: tuple[str, ...] = ()


# --------------------------------------------------------------------------
# Shared pieces


def _pick(datasets: Path) -> dict[str, list[_Case]]:
    """Every usable page once, dealt to the five sites (module docstring)."""
    cx = _load(datasets, "cx163-zh")
    gold = [c for c in cx if c.gold_time]
    rest: list[_Case] = []
    for name in ("gne-unlabelled-zh", "cwced-zh", "newspaper4k-fixtures-zh",
                 "readability-fixtures-zh", "gerapy-detail-unlabelled"):  # fmt: skip
        rest += _load(datasets, name)
    rest.sort(key=lambda c: c.source)
    return {
        "dongfang": gold[0::2],
        "pearl": rest[0::3],
        "xibei": gold[1::2],
        "dawan": rest[1::3] + [c for c in cx if not c.gold_time],
        "taibei": rest[2::3],
    }


def _oldest_first(cases: Iterable[_Case]) -> list[_Case]:
    return sorted(cases, key=lambda c: (c.time.timestamp(), c.source))


def _newest_first(arts: Iterable[_Article]) -> list[_Article]:
    return sorted(arts, key=lambda a: (-a.case.time.timestamp(), a.case.source))


def _numbered(cases: Iterable[_Case], salt: str, start: int, step: int, spread: int):
    """(case, id) oldest first, ids growing with time by ``step`` plus a hashed jitter."""
    n = start
    for case in _oldest_first(cases):
        n += step + int(case.digest(salt)[:8], 16) % spread
        yield case, n


def _chunks(seq: Sequence, n: int) -> list[list]:
    return [list(seq[i : i + n]) for i in range(0, len(seq), n)] or [[]]


def _by_hash(arts: Sequence[_Article], salt: str, n: int) -> list[_Article]:
    return sorted(arts, key=lambda a: a.case.digest(salt))[:n]


def _day(a: _Article, fmt: str = "%Y%m%d") -> str:
    return a.case.time.astimezone(CST).strftime(fmt)


def _link(a: _Article, form: str = "abs") -> _Link:
    url = a.url
    if form == "rel":
        url = urlsplit(a.url).path + (f"?{urlsplit(a.url).query}" if urlsplit(a.url).query else "")
    elif form == "proto":
        url = a.url.removeprefix("https:")
    return _Link(url, a.case.headline, a.case.time)


_HEAD = re.compile(rb"<head(?:\s[^>]*)?>", re.I)


def _insert_in_head(raw: bytes, line: str) -> bytes:
    """``raw`` with ``line`` (ASCII) right after its ``<head>`` tag (else before ``<title``)."""
    m = _HEAD.search(raw)
    pos = m.end() if m else raw.lower().find(b"<title")
    return raw[:pos] + line.encode("ascii") + raw[pos:]


def _sitemap_urlset(entries: Iterable[tuple[str, str | None]]) -> bytes:
    rows = "\n".join(
        f"<url><loc>{_e(u)}</loc>" + (f"<lastmod>{m}</lastmod>" if m else "") + "</url>"
        for u, m in entries
    )
    return _xml(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}\n</urlset>\n'
    )


def _news_sitemap(arts: Sequence[_Article], name: str, language: str) -> bytes:
    items = "\n".join(
        f"<url><loc>{_e(a.url)}</loc><news:news><news:publication>"
        f"<news:name>{_e(name)}</news:name><news:language>{language}</news:language>"
        "</news:publication>"
        f"<news:publication_date>{a.case.time.isoformat()}</news:publication_date>"
        f"<news:title>{_e(a.case.headline)}</news:title></news:news></url>"
        for a in arts
    )
    return _xml(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">\n' + items + "\n</urlset>\n"
    )


def _feed_items(arts: Sequence[_Article], label: dict[str, str]) -> list[tuple]:
    return [(a.url, a.case.headline, a.case.time, label[a.section], a.case.summary) for a in arts]


_RSS_TYPE = "application/rss+xml; charset=utf-8"
_XML_TYPE = "application/xml; charset=utf-8"
_HTML_UTF8 = "text/html; charset=utf-8"


def _pager(urls: Sequence[str], current: int | None = None, *, more: str = "下一页") -> str:
    """Links to pages 1..n of a list (``current``: 1-based page shown, or None on home)."""
    parts = []
    for k, u in enumerate(urls, start=1):
        cls = ' class="on"' if k == current else ""
        parts.append(f'<a{cls} href="{_e(u)}">{k}</a>')
    if current is not None and current < len(urls):
        parts.append(f'<a class="next" href="{_e(urls[current])}">{more}</a>')
    elif current is None and len(urls) > 1:
        parts.append(f'<a class="next" href="{_e(urls[1])}">{more}</a>')
    return '<div class="pager">' + " ".join(parts) + "</div>"


# --------------------------------------------------------------------------
# dongfang: one article form on four channel subdomains


_DF_DOMAIN = "dongfang-wang.cn"
_DF = f"https://www.{_DF_DOMAIN}"
_DF_CHANNELS = (("finance", "财经", 1001), ("tech", "科技", 1002), ("world", "国际", 1003),
                ("society", "社会", 1004))  # fmt: skip
_DF_SPECIALS = (("lianghui", "两会特别报道"), ("gushi", "股市风云"), ("chuangxin", "创新中国"))
_DF_TAGS = ("股市", "楼市", "人民币", "互联网")
_DF_AUTHORS = (("zhangwei", "张伟"), ("liuyang", "刘洋"), ("wangfang", "王芳"))
_DF_VIDEOS = (
    (210455, "东方快评：股市震荡怎么看", "评论员解读本周股市震荡。"),
    (210468, "一分钟看懂新经济", "动画讲解新经济的几个关键词。"),
    (210471, "外滩夜景延时摄影", "黄浦江两岸的夜景延时摄影。"),
)


def _df_channel_url(sub: str, page: int = 1) -> str:
    return f"https://{sub}.{_DF_DOMAIN}/" + ("" if page == 1 else f"index_{page}.shtml")


def _df_build(spec: _HardSpec, cases: list[_Case]) -> tuple[_Out, list[_Article], list[str]]:
    out = _Out()
    arts = []
    for i, (case, number) in enumerate(_numbered(cases, "df", 31_200_000, 3_000, 40_000)):
        sub, _, chan = _DF_CHANNELS[i % len(_DF_CHANNELS)]
        day = case.time.astimezone(CST).strftime("%Y%m%d")
        url = f"https://{sub}.{_DF_DOMAIN}/a/{day}/c{chan}-{number}.shtml"
        arts.append(_Article(case, url, sub, str(number)))
    arts = _newest_first(arts)
    label = {sub: name for sub, name, _ in _DF_CHANNELS}
    ctype = _HTML_UTF8
    video_urls = [f"https://v.{_DF_DOMAIN}/video/{vid}.html" for vid, _, _ in _DF_VIDEOS]
    special_urls = [f"{_DF}/special/{word}/" for word, _ in _DF_SPECIALS]
    tag_urls = [f"{_DF}/tag/{quote(t)}/" for t in _DF_TAGS]
    login = f"https://passport.{_DF_DOMAIN}/login"
    feed_url = f"{_DF}/rss/news.xml"

    nav = "\n".join(
        [f'<li><a href="{_DF}/">首页</a></li>']
        + [f'<li><a href="{_df_channel_url(sub)}">{_e(name)}</a></li>'
           for sub, name, _ in _DF_CHANNELS]
        + [f'<li><a href="https://v.{_DF_DOMAIN}/">视频</a></li>',
           f'<li><a href="{special_urls[0]}">专题</a></li>']
    )  # fmt: skip
    header = f"""<div class="topbar"><span>东方网 · 看东方</span>
<a href="{login}">登录</a> | <a href="https://passport.{_DF_DOMAIN}/register">注册</a> |
<a href="{feed_url}">RSS</a></div>
<header class="header"><a class="logo" href="{_DF}/"><img src="//img.{_DF_DOMAIN}/logo.png" alt="{spec.name}"></a>
<form action="https://search.{_DF_DOMAIN}/" method="get"><input name="q"><button>搜索</button></form>
<nav class="nav"><ul>
{nav}
</ul></nav></header>"""  # noqa: E501
    tag_box = " ".join(
        f'<a href="{_e(u)}">{_e(t)}</a>' for u, t in zip(tag_urls, _DF_TAGS, strict=True)
    )
    authors = " ".join(f'<a href="{_DF}/author/{slug}/">{_e(n)}</a>' for slug, n in _DF_AUTHORS)
    footer = f"""<footer class="footer">
<p class="tags">热词：{tag_box}</p>
<p class="authors">本网记者：{authors}</p>
<p><a href="{_DF}/about/">关于我们</a> | <a href="{_DF}/about/contact.html">联系我们</a> |
<a href="{_DF}/about/jobs.html">加入我们</a></p>
<p>东方网 版权所有 沪ICP备19001234号 互联网新闻信息服务许可证 31120190001</p>
</footer>"""
    hot = [_link(a, "proto") for a in _by_hash(arts, "df-hot", 8)]
    aside = (
        '<div class="box hot"><h3>24小时热榜</h3>\n' + _ul(hot, "rank", dates=False) + "</div>\n"
        '<div class="box video"><h3>视频</h3>\n'
        + _ul([_Link(u, t) for u, (_, t, _) in zip(video_urls, _DF_VIDEOS, strict=True)],
              "vlist", dates=False)
        + "</div>"
    )  # fmt: skip

    def page(title: str, main: str, head_extra: str = "") -> bytes:
        return _page(
            title=f"{title}--{spec.name}" if title != spec.name else title,
            charset="utf-8", head_extra=head_extra, header=header, main=main, aside=aside,
            footer=footer,
        )  # fmt: skip

    channel_pages: dict[str, list[str]] = {}
    per_page = 5
    for sub, _, _ in _DF_CHANNELS:
        own = [a for a in arts if a.section == sub]
        channel_pages[sub] = [
            _df_channel_url(sub, n) for n in range(1, len(_chunks(own, per_page)) + 1)
        ]

    # home: focus, latest, one block per channel (with its pager), specials
    rss_link = f'<link rel="alternate" type="application/rss+xml" title="{spec.name}要闻" href="/rss/news.xml">'  # noqa: E501
    blocks = [
        f'<div class="focus"><h2><a href="{_e(arts[0].url)}">{_e(arts[0].case.headline)}</a></h2>'
        f"<p>{_e(arts[0].case.summary)}</p></div>",
        '<div class="block"><h2>要闻</h2>\n' + _ul([_link(a) for a in arts[1:11]]) + "</div>",
    ]
    for sub, name, _ in _DF_CHANNELS:
        own = [a for a in arts if a.section == sub][:per_page]
        blocks.append(
            f'<div class="block"><h2><a href="{_df_channel_url(sub)}">{_e(name)}</a></h2>\n'
            + _ul([_link(a) for a in own])
            + "\n"
            + _pager(channel_pages[sub], more="更多")
            + "</div>"
        )
    blocks.append(
        '<div class="block special"><h2>专题</h2>\n'
        + _ul([_Link(u, t) for u, (_, t) in zip(special_urls, _DF_SPECIALS, strict=True)],
              "specials", dates=False)
        + "</div>"
    )  # fmt: skip
    out.add(f"{_DF}/", page(spec.name, "\n".join(blocks), rss_link), ctype, "lists")

    days: dict[tuple[str, str], list[_Article]] = {}
    for a in arts:
        days.setdefault((a.section, _day(a)), []).append(a)
    for sub, name, _ in _DF_CHANNELS:
        own = [a for a in arts if a.section == sub]
        for n, chunk in enumerate(_chunks(own, per_page), start=1):
            crumbs = f'<div class="crumbs"><a href="{_DF}/">首页</a> &gt; {_e(name)}</div>'
            cal = sorted({_day(a) for a in chunk}, reverse=True)
            calendar = " ".join(f'<a href="/a/{d}/">{d[:4]}-{d[4:6]}-{d[6:]}</a>' for d in cal)
            main = (
                f"{crumbs}\n<h1>{_e(name)}</h1>\n"
                + _ul([_link(a, "rel") for a in chunk])
                + "\n"
                + _pager(channel_pages[sub], n)
                + f'\n<div class="calendar"><h3>按日期浏览</h3>{calendar}</div>'
            )
            title = name if n == 1 else f"{name}_第{n}页"
            out.add(channel_pages[sub][n - 1], page(title, main), ctype, "lists")
    for (sub, day), listed in sorted(days.items()):
        name = label[sub]
        when = f"{day[:4]}年{int(day[4:6])}月{int(day[6:])}日"
        main = (
            f'<div class="crumbs"><a href="{_DF}/">首页</a> &gt; '
            f'<a href="{_df_channel_url(sub)}">{_e(name)}</a> &gt; {when}</div>\n'
            f"<h1>{_e(name)} {when}</h1>\n" + _ul([_link(a, "rel") for a in listed])
        )
        out.add(
            f"https://{sub}.{_DF_DOMAIN}/a/{day}/", page(f"{name} {when}", main), ctype, "others"
        )
    for k, (url, (_, title)) in enumerate(zip(special_urls, _DF_SPECIALS, strict=True)):
        listed = [a for j, a in enumerate(_by_hash(arts, "df-sp", len(arts))) if j % 3 == k]
        listed = _newest_first(listed)
        main = (
            f'<div class="special-head"><h1>{_e(title)}</h1>'
            f"<p>东方网{_e(title)}专题，持续更新。</p></div>\n" + _ul([_link(a) for a in listed])
        )
        out.add(url, page(title, main), ctype, "others")
    for k, (url, tag) in enumerate(zip(tag_urls, _DF_TAGS, strict=True)):
        listed = _newest_first(a for j, a in enumerate(_by_hash(arts, "df-tag", 20)) if j % 4 == k)
        main = f"<h1>标签：{_e(tag)}</h1>\n" + _ul([_link(a) for a in listed])
        out.add(url, page(tag, main), ctype, "others")
    for k, (slug, name) in enumerate(_DF_AUTHORS):
        listed = [a for j, a in enumerate(arts) if j % len(_DF_AUTHORS) == k]
        main = f'<div class="author"><h1>{_e(name)}</h1><p>东方网记者。</p></div>\n' + _ul(
            [_link(a) for a in listed]
        )
        out.add(f"{_DF}/author/{slug}/", page(name, main), ctype, "others")
    vlist = _ul([_Link(u, t) for u, (_, t, _) in zip(video_urls, _DF_VIDEOS, strict=True)], "vlist",
                dates=False)  # fmt: skip
    out.add(
        f"https://v.{_DF_DOMAIN}/", page("东方视频", f"<h1>东方视频</h1>\n{vlist}"), ctype, "others"
    )
    for url, (vid, title, desc) in zip(video_urls, _DF_VIDEOS, strict=True):
        main = (
            f"<h1>{_e(title)}</h1>\n"
            f'<div class="player"><iframe src="https://player.{_DF_DOMAIN}/embed/{vid}" '
            'width="640" height="360" allowfullscreen></iframe></div>\n'
            f'<p class="desc">{_e(desc)}</p>\n<p class="meta">2015-07-03 09:30 来源：东方网视频</p>'
        )
        out.add(url, page(title, main), ctype, "others")
    login_main = (
        "<h1>东方网通行证登录</h1>\n"
        '<form method="post"><input name="user" placeholder="手机号"><input type="password" '
        'name="pw"><button>登录</button></form>'
    )
    out.add(login, page("登录", login_main), ctype, "others")
    out.add(
        f"{_DF}/about/",
        page("关于我们", "<h1>关于我们</h1>\n<p>东方网是一家综合性新闻网站。</p>"),
        ctype,
    )

    out.add(feed_url, _rss(f"{spec.name}要闻", f"{_DF}/", feed_url, "东方网要闻",
                           _feed_items(arts[:20], label)), _RSS_TYPE, "feeds")  # fmt: skip
    out.others.append(feed_url)
    robots = _robots("User-agent: *", "Disallow: /search/", "Disallow: /api/", "")
    out.add(f"{_DF}/robots.txt", robots, "text/plain", "others")
    for sub, _, _ in _DF_CHANNELS:
        out.add(f"https://{sub}.{_DF_DOMAIN}/robots.txt", _robots("User-agent: *", "Disallow:", ""),
                "text/plain")  # fmt: skip
    for a in arts:
        out.add(a.url, a.case.raw, a.case.content_type, "articles")
    return out, arts, []


# --------------------------------------------------------------------------
# pearl: dated folders with a slug and an id, WordPress-style


_PT = "https://www.pearl-tribune.com.hk"
_PT_SECTIONS = (("hong-kong", "港聞"), ("china", "中國"), ("world", "國際"), ("business", "財經"))
_PT_WORDS = (
    "hong", "kong", "legco", "budget", "housing", "policy", "court", "ruling", "mtr", "fares",
    "market", "stocks", "property", "prices", "beijing", "trade", "talks", "police", "protest",
    "school", "teachers", "hospital", "election", "bank", "rates", "typhoon", "warning",
    "tourism", "border", "reopen", "tech", "startup", "tax", "relief", "elderly", "jobs",
)  # fmt: skip
_PT_DIGIT_WORDS = ("g20", "covid-19", "5g", "2021", "10")
_PT_COLUMNISTS = (("chan-tai-man", "陳大文"), ("wong-ka-yan", "黃嘉欣"), ("lee-siu-ming", "李小明"))
_PT_TAGS = ("立法會", "樓市", "疫苗", "港股")
_PT_VIDEOS = (
    (99123, "路線圖", ("legco", "budget", "explained"), "三分鐘看懂財政預算案。"),
    (99140, "維港煙花", ("harbour", "fireworks"), "維港煙花匯演精華。"),
    (99158, "茶餐廳", ("cha", "chaan", "teng", "stories"), "老字號茶餐廳的故事。"),
    (99166, "颱風", ("typhoon", "signal", "eight", "live"), "八號風球下的街頭直擊。"),
)


def _pt_slug(case: _Case) -> str:
    """2-6 different words chosen by the digest; one article in five gets a word with digits."""
    h = case.digest("pt-slug")
    n = 2 + int(h[0], 16) % 5
    pool = sorted(_PT_WORDS, key=lambda w: hashlib.sha1(f"{h}:{w}".encode()).hexdigest())
    words = pool[:n]
    if int(h[1], 16) % 5 == 0:
        words.insert(
            int(h[20], 16) % (n + 1), _PT_DIGIT_WORDS[int(h[21], 16) % len(_PT_DIGIT_WORDS)]
        )
    return "-".join(words)


def _pt_section_url(slug: str, page: int = 1) -> str:
    return f"{_PT}/news/{slug}/" + ("" if page == 1 else f"page/{page}/")


def _pt_build(spec: _HardSpec, cases: list[_Case]) -> tuple[_Out, list[_Article], list[str]]:
    out = _Out()
    arts = []
    for i, (case, number) in enumerate(_numbered(cases, "pt", 4_400_000, 500, 9_000)):
        slug = _PT_SECTIONS[i % len(_PT_SECTIONS)][0]
        day = case.time.astimezone(CST).strftime("%Y/%m/%d")
        url = f"{_PT}/news/{slug}/{day}/{_pt_slug(case)}-{number}/"
        arts.append(_Article(case, url, slug, str(number)))
    arts = _newest_first(arts)
    label = dict(_PT_SECTIONS)
    ctype = _HTML_UTF8
    video_urls = [
        f"{_PT}/video/2021/03/{5 + k:02d}/{'-'.join(words)}-{vid}/"
        for k, (vid, _, words, _) in enumerate(_PT_VIDEOS)
    ]
    tag_urls = [f"{_PT}/tag/{quote(t)}/" for t in _PT_TAGS]
    login = f"{_PT}/account/login/"
    feed_url = f"{_PT}/feed/"
    nav = "\n".join(
        [f'<li class="menu-item"><a href="{_PT}/">主頁</a></li>']
        + [f'<li class="menu-item"><a href="{_pt_section_url(s)}">{_e(n)}</a></li>'
           for s, n in _PT_SECTIONS]
        + [f'<li class="menu-item"><a href="{_PT}/video/">影片</a></li>',
           f'<li class="menu-item"><a href="{_PT}/columnist/">專欄</a></li>']
    )  # fmt: skip
    header = f"""<header id="masthead" class="site-header">
<div class="top-bar"><a href="{login}">登入</a> · <a href="{_PT}/account/register/">訂閱</a> ·
<a href="{feed_url}">RSS</a></div>
<div class="site-branding"><a href="{_PT}/" rel="home">{spec.name}</a>
<p class="site-description">Pearl Tribune · 香港新聞</p></div>
<nav id="site-navigation" class="main-navigation"><ul id="primary-menu" class="menu">
{nav}
</ul></nav></header>"""
    tags = " ".join(
        f'<a href="{_e(u)}" rel="tag">{_e(t)}</a>' for u, t in zip(tag_urls, _PT_TAGS, strict=True)
    )
    cols = " ".join(f'<a href="{_PT}/columnist/{s}/">{_e(n)}</a>' for s, n in _PT_COLUMNISTS)
    footer = f"""<footer id="colophon" class="site-footer">
<div class="widget tagcloud">熱門標籤：{tags}</div>
<div class="widget">專欄作家：{cols}</div>
<p><a href="{_PT}/about-us/">關於我們</a> | <a href="{_PT}/privacy-policy/">私隱政策</a> |
<a href="{_PT}/contact/">聯絡我們</a></p>
<p>© 2021 明珠論壇報 Pearl Tribune Limited. 版權所有，不得轉載。</p>
</footer>"""
    hot = [_link(a, "rel") for a in _by_hash(arts, "pt-hot", 6)]
    aside = (
        '<section class="widget popular"><h2 class="widget-title">最多人閱讀</h2>\n'
        + _ul(hot, "popular", dates=False) + "</section>\n"
        '<section class="widget video"><h2 class="widget-title">影片</h2>\n'
        + _ul([_Link(u, t) for u, (_, t, _, _) in zip(video_urls, _PT_VIDEOS, strict=True)],
              "vlist", dates=False)
        + "</section>"
    )  # fmt: skip
    head = (
        f'<link rel="alternate" type="application/rss+xml" title="{spec.name} &raquo; Feed" '
        f'href="{feed_url}">\n<meta name="generator" content="WordPress 5.7">'
    )

    def page(title: str, main: str) -> bytes:
        return _page(
            title=f"{title} | {spec.name}" if title != spec.name else f"{title} | 香港新聞",
            charset="utf-8", head_extra=head, header=header, main=main, aside=aside,
            footer=footer, lang="zh-Hant-HK",
        )  # fmt: skip

    per_page = 5
    pages = {
        s: [
            _pt_section_url(s, n)
            for n in range(1, len(_chunks([a for a in arts if a.section == s], per_page)) + 1)
        ]
        for s, _ in _PT_SECTIONS
    }  # fmt: skip
    blocks = [
        f'<article class="lead"><h2 class="entry-title"><a href="{_e(arts[0].url)}">'
        f"{_e(arts[0].case.headline)}</a></h2><p>{_e(arts[0].case.summary)}</p></article>",
        '<section class="latest"><h2>即時新聞</h2>\n'
        + _ul([_link(a) for a in arts[1:9]])
        + "</section>",
    ]
    for s, name in _PT_SECTIONS:
        own = [a for a in arts if a.section == s][:per_page]
        blocks.append(
            f'<section class="cat-block"><h2><a href="{_pt_section_url(s)}">{_e(name)}</a></h2>\n'
            + _ul([_link(a, "rel") for a in own])
            + "\n"
            + _pager(pages[s], more="更多")
            + "</section>"
        )
    out.add(f"{_PT}/", page(spec.name, "\n".join(blocks)), ctype, "lists")
    for s, name in _PT_SECTIONS:
        own = [a for a in arts if a.section == s]
        for n, chunk in enumerate(_chunks(own, per_page), start=1):
            items = "\n".join(
                f'<article class="post"><h2 class="entry-title"><a href="{_e(a.url)}" '
                f'rel="bookmark">{_e(a.case.headline)}</a></h2>'
                f'<time class="entry-date">{_short(a.case.time)}</time></article>'
                for a in chunk
            )
            main = (
                f'<header class="page-header"><h1 class="page-title">{_e(name)}</h1></header>\n'
                f"{items}\n" + _pager(pages[s], n, more="下一頁")
            )
            title = name if n == 1 else f"{name} – 第 {n} 頁"
            out.add(pages[s][n - 1], page(title, main), ctype, "lists")
    for k, (s, name) in enumerate(_PT_COLUMNISTS):
        listed = [a for j, a in enumerate(arts) if j % 4 == k]
        main = (
            f'<div class="author-info"><h1>{_e(name)}</h1><p>{_e(name)}，本報專欄作家，'
            "評論香港時事。</p></div>\n" + _ul([_link(a) for a in listed])
        )
        out.add(f"{_PT}/columnist/{s}/", page(name, main), ctype, "others")
    cols_main = "<h1>專欄</h1>\n" + _ul(
        [_Link(f"{_PT}/columnist/{s}/", n) for s, n in _PT_COLUMNISTS], "columnists", dates=False
    )
    out.add(f"{_PT}/columnist/", page("專欄", cols_main), ctype, "others")
    for k, (url, tag) in enumerate(zip(tag_urls, _PT_TAGS, strict=True)):
        listed = _newest_first(a for j, a in enumerate(_by_hash(arts, "pt-tag", 20)) if j % 4 == k)
        main = f'<h1 class="page-title">標籤：{_e(tag)}</h1>\n' + _ul([_link(a) for a in listed])
        out.add(url, page(tag, main), ctype, "others")
    vids = _ul([_Link(u, t) for u, (_, t, _, _) in zip(video_urls, _PT_VIDEOS, strict=True)],
               "vlist", dates=False)  # fmt: skip
    out.add(f"{_PT}/video/", page("影片", f"<h1>影片</h1>\n{vids}"), ctype, "others")
    for k, (url, (vid, title, _, desc)) in enumerate(zip(video_urls, _PT_VIDEOS, strict=True)):
        main = (
            f'<h1 class="entry-title">{_e(title)}</h1>\n'
            f'<div class="player"><iframe src="https://www.youtube.com/embed/pt{vid}" '
            "allowfullscreen></iframe></div>\n"
            f'<p class="desc">{_e(desc)}</p>\n'
            f'<time datetime="2021-03-{5 + k:02d}T18:00:00+08:00">2021年3月{5 + k}日 18:00</time>'
        )
        out.add(url, page(title, main), ctype, "others")
    login_main = (
        '<h1>登入</h1>\n<form method="post" action="/account/login/"><input name="log">'
        '<input type="password" name="pwd"><button>登入</button></form>'
    )
    out.add(login, page("登入", login_main), ctype, "others")
    out.add(feed_url, _rss(spec.name, f"{_PT}/", feed_url, "香港新聞",
                           _feed_items(arts[:20], label)), _RSS_TYPE, "feeds")  # fmt: skip
    out.others.append(feed_url)
    robots = _robots("User-agent: *", "Disallow: /wp-admin/", "Disallow: /account/",
                     "Allow: /wp-admin/admin-ajax.php", "")  # fmt: skip
    out.add(f"{_PT}/robots.txt", robots, "text/plain", "others")
    for a in arts:
        out.add(a.url, a.case.raw, a.case.content_type, "articles")
    return out, arts, []


# --------------------------------------------------------------------------
# xibei: an old PHP portal, ids in the query, GBK everywhere


_XB = "https://news.xibei-daily.com.cn"
_XB_CHANNELS = ((1, "时政要闻"), (2, "西北新闻"), (3, "财经"), (5, "社会"))
_XB_TAGS = ("股市", "基金", "丝绸之路", "西部大开发")
_XB_AUTHORS = ((23, "马建国"), (31, "杨晓燕"))
_XB_VIDEOS = (
    (1203, "黄河壶口瀑布", "壶口瀑布汛期景观。"),
    (1217, "兰州牛肉面", "走进一家老字号面馆。"),
)
_XB_GBK = "text/html; charset=GBK"


def _xb_tag_url(tag: str) -> str:
    return f"{_XB}/tag.php?t={quote(tag.encode('gbk'))}"


def _xb_build(spec: _HardSpec, cases: list[_Case]) -> tuple[_Out, list[_Article], list[str]]:
    out = _Out()
    arts = []
    for i, (case, number) in enumerate(_numbered(cases, "xb", 88_000, 11, 60)):
        cid = _XB_CHANNELS[i % len(_XB_CHANNELS)][0]
        arts.append(
            _Article(case, f"{_XB}/content.php?id={number}&cid={cid}", str(cid), str(number))
        )
    arts = _newest_first(arts)
    label = {str(cid): name for cid, name in _XB_CHANNELS}
    login = f"{_XB}/member.php?action=login"
    feed_url = f"{_XB}/rss.php"
    video_urls = [f"{_XB}/video.php?id={vid}" for vid, _, _ in _XB_VIDEOS]

    def rel(a: _Article) -> _Link:
        return _Link(a.url.removeprefix(_XB + "/"), a.case.headline, a.case.time)

    nav = " | ".join(
        ['<a href="/">首页</a>']
        + [f'<a href="list.php?cid={cid}">{_e(name)}</a>' for cid, name in _XB_CHANNELS]
        + [f'<a href="{video_urls[0]}">视频</a>']
    )
    tags = " ".join(f'<a href="{_e(_xb_tag_url(t))}">{_e(t)}</a>' for t in _XB_TAGS)
    authors = " ".join(f'<a href="author.php?uid={uid}">{_e(n)}</a>' for uid, n in _XB_AUTHORS)
    hot = "".join(
        f'<tr><td class="hot">·<a href="{_e(a.url)}" target="_blank">'
        f"{_e(a.case.headline)}</a></td></tr>"
        for a in _by_hash(arts, "xb-hot", 8)
    )

    def page(title: str, main: str) -> bytes:
        doc = f"""<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=gbk" />
<title>{_e(title)}</title>
<meta name="keywords" content="西北日报,西北新闻,陕西,甘肃,宁夏,青海,新疆" />
<link href="skin/css/style.css" rel="stylesheet" type="text/css" />
<link rel="alternate" type="application/rss+xml" title="西北日报新闻" href="rss.php" />
<script type="text/javascript" src="skin/js/common.js"></script>
</head>
<body>
<table width="960" border="0" align="center" cellpadding="0" cellspacing="0" class="top">
<tr><td><img src="skin/images/logo.gif" alt="{spec.name}" /></td>
<td align="right"><a href="{login}">登录</a> | <a href="member.php?action=register">注册</a> |
<a href="rss.php">RSS</a> | <a href="javascript:addfav()">加入收藏</a></td></tr>
<tr><td colspan="2" class="nav">{nav}</td></tr>
</table>
<table width="960" border="0" align="center" cellpadding="0" cellspacing="0">
<tr><td width="700" valign="top" class="main">
{main}
</td>
<td width="260" valign="top" class="side">
<table width="100%" class="box"><tr><th>点击排行</th></tr>{hot}</table>
<table width="100%" class="box"><tr><th>热门标签</th></tr><tr><td>{tags}</td></tr></table>
</td></tr>
</table>
<table width="960" border="0" align="center" class="foot"><tr><td align="center">
<a href="about.php">关于我们</a> | <a href="about.php?p=ad">广告服务</a> | 本报记者：{authors}<br />
西北日报社主办 版权所有 陕ICP备05001234号 Copyright &copy; 2003-2015 xibei-daily.com.cn
</td></tr></table>
</body>
</html>
"""
        return doc.encode("gbk", "xmlcharrefreplace")

    def rows(listed: Sequence[_Article]) -> str:
        return "\n".join(
            f'<tr><td>·<a href="{_e(rel(a).url)}" target="_blank">{_e(a.case.headline)}</a></td>'
            f'<td class="date">[{a.case.time.astimezone(CST).strftime("%Y-%m-%d")}]</td></tr>'
            for a in listed
        )

    per_page = 5
    pages: dict[int, list[str]] = {}
    for cid, _ in _XB_CHANNELS:
        n = len(_chunks([a for a in arts if a.section == str(cid)], per_page))
        pages[cid] = [
            f"{_XB}/list.php?cid={cid}" + ("" if k == 1 else f"&page={k}") for k in range(1, n + 1)
        ]
    blocks = [
        f'<div class="headline"><a href="{_e(rel(arts[0]).url)}"><b>{_e(arts[0].case.headline)}</b>'
        f"</a><br />{_e(arts[0].case.summary)}</div>",
        '<table width="100%" class="list"><tr><th colspan="2">最新新闻</th></tr>'
        + rows(arts[1:11])
        + "</table>",
    ]
    for cid, name in _XB_CHANNELS:
        own = [a for a in arts if a.section == str(cid)][:per_page]
        more = " ".join(
            f'<a href="{_e(u.removeprefix(_XB + "/"))}">'
            + ("更多&gt;&gt;" if k == 0 else f"[{k + 1}]")
            + "</a>"
            for k, u in enumerate(pages[cid])
        )
        blocks.append(
            f'<table width="100%" class="list"><tr><th>{_e(name)}</th>'
            f'<th align="right">{more}</th></tr>' + rows(own) + "</table>"
        )
    out.add(f"{_XB}/", page(f"{spec.name}-西北新闻门户", "\n".join(blocks)), _XB_GBK, "lists")
    for cid, name in _XB_CHANNELS:
        own = [a for a in arts if a.section == str(cid)]
        chunks = _chunks(own, per_page)
        for n, chunk in enumerate(chunks, start=1):
            pager = f"共{len(own)}条 第{n}/{len(chunks)}页 " + " ".join(
                f'<a href="{_e(u.removeprefix(_XB + "/"))}">{k}</a>'
                for k, u in enumerate(pages[cid], start=1)
            )
            if n < len(chunks):
                pager += f' <a href="{_e(pages[cid][n].removeprefix(_XB + "/"))}">下一页</a>'
            main = (
                f'<div class="pos">当前位置：<a href="/">首页</a> &gt; {_e(name)}</div>\n'
                f'<table width="100%" class="list">{rows(chunk)}</table>\n'
                f'<div class="page">{pager}</div>'
            )
            title = f"{name}_{spec.name}" if n == 1 else f"{name}_第{n}页_{spec.name}"
            out.add(pages[cid][n - 1], page(title, main), _XB_GBK, "lists")
    for k, tag in enumerate(_XB_TAGS):
        listed = _newest_first(a for j, a in enumerate(_by_hash(arts, "xb-tag", 20)) if j % 4 == k)
        main = (
            f'<div class="pos">标签：{_e(tag)}</div>\n'
            f'<table width="100%" class="list">{rows(listed)}</table>'
        )
        out.add(_xb_tag_url(tag), page(f"{tag}_{spec.name}", main), _XB_GBK, "others")
    for k, (uid, name) in enumerate(_XB_AUTHORS):
        listed = [a for j, a in enumerate(arts) if j % 3 == k]
        main = (
            f'<div class="pos">记者：{_e(name)}</div>\n<p>西北日报记者{_e(name)}的稿件。</p>\n'
            f'<table width="100%" class="list">{rows(listed)}</table>'
        )
        out.add(f"{_XB}/author.php?uid={uid}", page(f"{name}_{spec.name}", main), _XB_GBK, "others")
    for url, (vid, title, desc) in zip(video_urls, _XB_VIDEOS, strict=True):
        main = (
            f'<h1 class="title">{_e(title)}</h1>\n'
            f'<embed src="http://v.xibei-daily.com.cn/player.swf?vid={vid}" '
            'width="600" height="450" '
            'type="application/x-shockwave-flash" />\n'
            f'<p>{_e(desc)}</p>\n<p class="info">2015-07-02 16:20 来源：西北日报视频</p>'
        )
        out.add(url, page(f"{title}_{spec.name}", main), _XB_GBK, "others")
    login_main = (
        '<form action="member.php?action=login" method="post"><table><tr><td>用户名：</td>'
        '<td><input name="username" /></td></tr><tr><td>密码：</td><td><input type="password" '
        'name="password" /></td></tr></table><input type="submit" value="登录" /></form>'
    )
    out.add(login, page(f"会员登录_{spec.name}", login_main), _XB_GBK, "others")
    rss = _rss(spec.name, f"{_XB}/", feed_url, "西北日报最新新闻", _feed_items(arts[:20], label))
    rss = rss.decode("utf-8").replace('encoding="UTF-8"', 'encoding="gbk"', 1)
    out.add(
        feed_url,
        rss.encode("gbk", "xmlcharrefreplace"),
        "application/rss+xml; charset=GBK",
        "feeds",
    )
    out.others.append(feed_url)
    robots = _robots("User-agent: *", "Disallow: /member.php", "Disallow: /search.php",
                     "Disallow: /skin/", "")  # fmt: skip
    out.add(f"{_XB}/robots.txt", robots, "text/plain", "others")
    for a in arts:
        out.add(a.url, a.case.raw, a.case.content_type, "articles")
    return out, arts, []


# --------------------------------------------------------------------------
# dawan: opaque base62 ids, the newest only in a Google News sitemap


_DW = "https://www.dawan-news.com"
_DW_SECTIONS = (("guoji", "国际"), ("dawanqu", "大湾区"), ("caijing", "财经"), ("shehui", "社会"))
_DW_TAGS = ("港珠澳大桥", "粤港澳大湾区", "科技创新")
_DW_AUTHORS = (("huang-lixin", "黄立新"), ("he-meiling", "何美玲"))
_DW_GALLERIES = (
    ("组图：深圳湾的日落", ("海边步道", "归航的渔船", "夕阳下的大桥")),
    ("组图：澳门街头的老店", ("杏仁饼", "骑楼", "老招牌")),
    ("组图：广州塔灯光秀", ("灯光秀", "江边人群")),
    ("组图：横琴新区航拍", ("新区全景", "口岸", "河道")),
)
_DW_VIDEOS = (
    ("早班车：湾区一分钟", "一分钟看完湾区要闻。"),
    ("走进前海自贸区", "记者走访前海自贸区的新企业。"),
    ("跨境通勤的一天", "记录一位跨境上班族的一天。"),
)
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _opaque(seed: str, taken: set[str], n: int = 11) -> str:
    """An ``n``-character base62 id from ``seed``, with a digit, an upper- and a lower-case
    letter (retried with a counter otherwise, and when taken)."""
    k = 0
    while True:
        h = int(hashlib.sha256(f"{seed}:{k}".encode()).hexdigest(), 16)
        chars = []
        for _ in range(n):
            h, r = divmod(h, 62)
            chars.append(_B62[r])
        out = "".join(chars)
        if (
            any(c.isdigit() for c in out) and any(c.isupper() for c in out)
            and any(c.islower() for c in out) and out not in taken
        ):  # fmt: skip
            taken.add(out)
            return out
        k += 1


def _dw_build(spec: _HardSpec, cases: list[_Case]) -> tuple[_Out, list[_Article], list[str]]:
    out = _Out()
    taken: set[str] = set()
    arts = []
    for i, case in enumerate(_oldest_first(cases)):
        oid = _opaque(f"dawan:{case.source}", taken)
        arts.append(_Article(case, f"{_DW}/c/{oid}", _DW_SECTIONS[i % len(_DW_SECTIONS)][0], oid))
    arts = _newest_first(arts)
    newest, older = arts[:20], arts[20:]
    ctype = _HTML_UTF8
    gallery_urls = [f"{_DW}/photo/{_opaque(f'dawan-photo:{t}', taken)}" for t, _ in _DW_GALLERIES]
    video_urls = [f"{_DW}/video/{_opaque(f'dawan-video:{t}', taken)}" for t, _ in _DW_VIDEOS]
    tag_urls = [f"{_DW}/tag/{quote(t)}" for t in _DW_TAGS]
    login = f"{_DW}/account/login"
    nav = "\n".join(
        [f'<a href="{_DW}/">首页</a>']
        + [f'<a href="/section/{s}">{_e(n)}</a>' for s, n in _DW_SECTIONS]
        + ['<a href="/section/photo">图片</a>', '<a href="/section/video">视频</a>',
           f'<a href="{login}">登录</a>']
    )  # fmt: skip
    header = f"""<header class="hd"><div class="logo"><a href="/">{spec.name}</a>
<span>湾区新闻 · 一网打尽</span></div>
<nav class="channels">
{nav}
</nav></header>"""
    tags = " ".join(
        f'<a href="{_e(u)}">#{_e(t)}</a>' for u, t in zip(tag_urls, _DW_TAGS, strict=True)
    )
    authors = " ".join(f'<a href="/author/{s}">{_e(n)}</a>' for s, n in _DW_AUTHORS)
    footer = f"""<footer class="ft"><p>话题：{tags}</p><p>记者：{authors}</p>
<p><a href="/about">关于大湾新闻</a> · <a href="/about/ads">广告合作</a> ·
粤ICP备20012345号</p></footer>"""
    pics = _ul(
        [_Link(u, t) for u, (t, _) in zip(gallery_urls, _DW_GALLERIES, strict=True)],
        "pics",
        dates=False,
    )
    vids = _ul(
        [_Link(u, t) for u, (t, _) in zip(video_urls, _DW_VIDEOS, strict=True)],
        "vlist",
        dates=False,
    )
    aside = (
        f'<div class="box"><h3>图集</h3>\n{pics}</div>\n'
        f'<div class="box"><h3>视频</h3>\n{vids}</div>'
    )
    live = (
        '<section class="live"><h2>即时</h2>\n'
        '<div id="live-list" data-src="/api/live.json?size=20">'
        '<div class="skeleton"></div><div class="skeleton"></div></div>\n'
        "<noscript>请开启 JavaScript 以查看即时新闻。</noscript></section>"
    )
    scripts = '<script src="/static/js/live.4f2a9c.js" defer></script>'

    def page(title: str, main: str) -> bytes:
        return _page(
            title=f"{title} - {spec.name}" if title != spec.name else f"{title} - 粤港澳大湾区新闻",
            charset="utf-8", header=header, main=main + "\n" + scripts, aside=aside, footer=footer,
        )  # fmt: skip

    blocks = [
        live,
        '<section class="picks"><h2>深度 · 精选</h2>\n'
        + _ul([_link(a, "rel") for a in older])
        + "</section>",
    ]
    per_page = 3
    pages = {}
    for s, _ in _DW_SECTIONS:
        own = [a for a in older if a.section == s]
        pages[s] = [f"{_DW}/section/{s}" + ("" if k == 1 else f"?page={k}")
                    for k in range(1, len(_chunks(own, per_page)) + 1)]  # fmt: skip
        blocks.append(
            f'<div class="sec-more">{_e(dict(_DW_SECTIONS)[s])}：'
            + _pager(pages[s], more="更多")
            + "</div>"
        )
    out.add(f"{_DW}/", page(spec.name, "\n".join(blocks)), ctype, "lists")
    for s, name in _DW_SECTIONS:
        own = [a for a in older if a.section == s]
        for n, chunk in enumerate(_chunks(own, per_page), start=1):
            main = (
                f"<h1>{_e(name)}</h1>\n"
                + live.replace("size=20", f"size=20&amp;section={s}")
                + '\n<section class="picks"><h2>往期精选</h2>\n'
                + _ul([_link(a, "rel") for a in chunk])
                + "\n"
                + _pager(pages[s], n)
                + "</section>"
            )
            out.add(
                pages[s][n - 1], page(name if n == 1 else f"{name} 第{n}页", main), ctype, "lists"
            )
    out.add(f"{_DW}/section/photo", page("图片", f"<h1>图片</h1>\n{pics}"), ctype, "others")
    out.add(f"{_DW}/section/video", page("视频", f"<h1>视频</h1>\n{vids}"), ctype, "others")
    for k, (url, (title, captions)) in enumerate(zip(gallery_urls, _DW_GALLERIES, strict=True)):
        pid = url.rsplit("/", 1)[1]
        figs = "\n".join(
            f'<figure><img src="https://img.dawan-news.com/p/{pid}/{j}.jpg" alt="">'
            f"<figcaption>{_e(c)}</figcaption></figure>"
            for j, c in enumerate(captions, start=1)
        )
        main = (
            f'<h1>{_e(title)}</h1>\n<p class="meta">2022-02-1{k} 10:00 摄影：本网记者</p>\n{figs}'
        )
        out.add(url, page(title, main), ctype, "others")
    for k, (url, (title, desc)) in enumerate(zip(video_urls, _DW_VIDEOS, strict=True)):
        vid = url.rsplit("/", 1)[1]
        main = (
            f"<h1>{_e(title)}</h1>\n"
            f'<div class="player"><video controls src="https://media.dawan-news.com/v/{vid}.mp4"></video></div>\n'
            f'<p class="desc">{_e(desc)}</p>\n'
            f'<time datetime="2022-02-2{k}T08:00:00+08:00">2022-02-2{k} 08:00</time>'
        )
        out.add(url, page(title, main), ctype, "others")
    for k, (url, tag) in enumerate(zip(tag_urls, _DW_TAGS, strict=True)):
        listed = [a for j, a in enumerate(older) if j % 3 == k]
        main = f"<h1>#{_e(tag)}</h1>\n" + _ul([_link(a, "rel") for a in listed])
        out.add(url, page(tag, main), ctype, "others")
    for k, (s, name) in enumerate(_DW_AUTHORS):
        listed = [a for j, a in enumerate(older) if j % 2 == k]
        main = f'<div class="author"><h1>{_e(name)}</h1><p>大湾新闻记者。</p></div>\n' + _ul(
            [_link(a, "rel") for a in listed]
        )
        out.add(f"{_DW}/author/{s}", page(name, main), ctype, "others")
    login_main = (
        '<h1>登录</h1><form method="post"><input name="phone">'
        '<input type="password" name="pw"></form>'
    )
    out.add(login, page("登录", login_main), ctype, "others")
    news_url = f"{_DW}/sitemap-news.xml"
    out.add(news_url, _news_sitemap(newest, spec.name, "zh-cn"), _XML_TYPE, "sitemaps")
    out.others.append(news_url)
    robots = _robots("User-agent: *", "Disallow: /api/", "Disallow: /account/", "",
                     f"Sitemap: {news_url}")  # fmt: skip
    out.add(f"{_DW}/robots.txt", robots, "text/plain", "others")
    for a in arts:
        out.add(a.url, a.case.raw, a.case.content_type, "articles")
    return out, arts, []


# --------------------------------------------------------------------------
# taibei: percent-encoded section words, AMP copies, sitemaps for the older articles


_TB = "https://www.taibei-post.com.tw"
_TB_SECTIONS = ("政治", "社會", "國際", "財經", "生活")
_TB_TAGS = ("颱風", "疫情", "選舉", "半導體")
_TB_AUTHORS = (("lin-yating", "林雅婷"), ("chen-guanyu", "陳冠宇"))
_TB_VIDEOS = (
    (5512345, "颱風最新動態", "氣象專家解析颱風路徑。"),
    (5512388, "夜市人氣美食", "走訪夜市的排隊名店。"),
)


def _tb_section_url(word: str, page: int = 1) -> str:
    return f"{_TB}/news/{quote(word)}" + ("" if page == 1 else f"?page={page}")


def _tb_build(spec: _HardSpec, cases: list[_Case]) -> tuple[_Out, list[_Article], list[str]]:
    out = _Out()
    arts = []
    for i, (case, number) in enumerate(_numbered(cases, "tb", 4_400_000, 200, 5_000)):
        word = _TB_SECTIONS[i % len(_TB_SECTIONS)]
        day = case.time.astimezone(CST).strftime("%Y%m%d")
        arts.append(
            _Article(case, f"{_TB}/news/{quote(word)}/{day}/{number}.html", word, str(number))
        )
    arts = _newest_first(arts)
    amp = {a.url: a.url.replace(f"{_TB}/news/", f"{_TB}/amp/news/", 1) for a in arts}
    ctype = _HTML_UTF8
    tag_urls = [f"{_TB}/tag/{quote(t)}" for t in _TB_TAGS]
    video_urls = [f"{_TB}/video/20210305/{vid}.html" for vid, _, _ in _TB_VIDEOS]
    login = f"{_TB}/member/login"
    nav = "\n".join(
        ['<li><a href="/">首頁</a></li>']
        + [f'<li><a href="/news/{quote(w)}">{_e(w)}</a></li>' for w in _TB_SECTIONS]
        + [f'<li><a href="{video_urls[0]}">影音</a></li>']
    )
    header = f"""<header class="header">
<div class="topbar"><a href="{login}">會員登入</a> | <a href="/member/register">免費註冊</a></div>
<a class="logo" href="/">{spec.name}</a>
<nav><ul>
{nav}
</ul></nav></header>"""
    tags = " ".join(
        f'<a href="{_e(u)}">#{_e(t)}</a>' for u, t in zip(tag_urls, _TB_TAGS, strict=True)
    )
    authors = " ".join(f'<a href="/author/{s}">{_e(n)}</a>' for s, n in _TB_AUTHORS)
    footer = f"""<footer class="footer">
<div class="tags">熱門話題：{tags}</div><div>記者：{authors}</div>
<p><a href="/about/privacy">隱私權政策</a> | <a href="/about/contact">聯絡我們</a></p>
<p>© 台北郵報 Taibei Post. All rights reserved.</p></footer>"""
    vids = _ul(
        [_Link(u, t) for u, (_, t, _) in zip(video_urls, _TB_VIDEOS, strict=True)],
        "vlist",
        dates=False,
    )
    aside = f'<div class="box"><h3>熱門影音</h3>\n{vids}</div>'

    def page(title: str, main: str) -> bytes:
        return _page(
            title=f"{title} - {spec.name}" if title != spec.name else title,
            charset="utf-8", header=header, main=main, aside=aside, footer=footer,
            lang="zh-Hant-TW",
        )  # fmt: skip

    per_page = 2
    pages: dict[str, list[str]] = {}
    for w in _TB_SECTIONS:
        own = [a for a in arts if a.section == w]
        pages[w] = [_tb_section_url(w, k) for k in range(1, len(_chunks(own, per_page)) + 1)]
    latest = []
    for w in _TB_SECTIONS:
        latest += [a for a in arts if a.section == w][:per_page]
    blocks = ["<h2>即時新聞</h2>\n" + _ul([_link(a, "rel") for a in _newest_first(latest)])]
    for w in _TB_SECTIONS:
        blocks.append(
            f'<div class="sec"><h2><a href="/news/{quote(w)}">{_e(w)}</a></h2>'
            + _pager(pages[w][:2], more="更多")
            + "</div>"
        )
    out.add(f"{_TB}/", page(spec.name, "\n".join(blocks)), ctype, "lists")
    for w in _TB_SECTIONS:
        own = [a for a in arts if a.section == w]
        for n, chunk in enumerate(_chunks(own, per_page), start=1):
            main = (
                f"<h1>{_e(w)}</h1>\n"
                + _ul([_link(a, "rel") for a in chunk])
                + "\n"
                + _pager(pages[w], n, more="下一頁")
            )
            role = (
                "lists" if n <= 2 else "others"
            )  # page 3+: beyond two hops, like the sitemaps' older pages
            out.add(pages[w][n - 1], page(w if n == 1 else f"{w} 第{n}頁", main), ctype, role)
    for k, (url, tag) in enumerate(zip(tag_urls, _TB_TAGS, strict=True)):
        listed = [a for j, a in enumerate(arts[:10]) if j % 4 == k]
        main = f"<h1>#{_e(tag)}</h1>\n" + _ul([_link(a, "rel") for a in listed])
        out.add(url, page(tag, main), ctype, "others")
    for k, (s, name) in enumerate(_TB_AUTHORS):
        listed = [a for j, a in enumerate(arts[:10]) if j % 2 == k]
        main = f'<div class="author"><h1>{_e(name)}</h1><p>台北郵報記者。</p></div>\n' + _ul(
            [_link(a, "rel") for a in listed]
        )
        out.add(f"{_TB}/author/{s}", page(name, main), ctype, "others")
    for url, (vid, title, desc) in zip(video_urls, _TB_VIDEOS, strict=True):
        main = (
            f"<h1>{_e(title)}</h1>\n"
            f'<div class="player"><video controls poster="/static/video/{vid}.jpg">'
            f'<source src="https://media.taibei-post.com.tw/v/{vid}.mp4" type="video/mp4">'
            "</video></div>\n"
            f'<p class="desc">{_e(desc)}</p>\n<p class="meta">2021/03/05 08:00</p>'
        )
        out.add(url, page(title, main), ctype, "others")
    login_main = (
        '<h1>會員登入</h1>\n<form method="post"><input name="email">'
        '<input type="password" name="pw"></form>'
    )
    out.add(login, page("會員登入", login_main), ctype, "others")

    years = sorted({a.case.time.astimezone(CST).year for a in arts}, reverse=True)
    maps = []
    for y in years:
        listed = sorted(
            (a for a in arts if a.case.time.astimezone(CST).year == y), key=lambda a: int(a.number)
        )
        body = _sitemap_urlset((a.url, a.case.time.isoformat()) for a in listed)
        maps.append((f"{_TB}/sitemaps/article-{y}.xml", body))
    section_urls = [u for w in _TB_SECTIONS for u in pages[w][:1]] + tag_urls
    maps.append((f"{_TB}/sitemaps/section.xml", _sitemap_urlset((u, None) for u in section_urls)))
    index_url = f"{_TB}/sitemap.xml"
    newest = arts[0].case.time.isoformat()
    index = "\n".join(
        f"<sitemap><loc>{_e(u)}</loc><lastmod>{newest}</lastmod></sitemap>" for u, _ in maps
    )
    out.add(index_url, _xml('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                            + index + "\n</sitemapindex>\n"), _XML_TYPE, "sitemaps")  # fmt: skip
    for u, body in maps:
        out.add(u, body, _XML_TYPE, "sitemaps")
    out.others.extend(out.sitemaps)
    robots = _robots(
        "User-agent: *", "Disallow: /member/", "Disallow: /api/", "", f"Sitemap: {index_url}"
    )
    out.add(f"{_TB}/robots.txt", robots, "text/plain", "others")
    for a in arts:
        out.add(
            a.url,
            _insert_in_head(a.case.raw, AMP_LINK % amp[a.url]),
            a.case.content_type,
            "articles",
        )
        out.add(
            amp[a.url], _insert_in_head(a.case.raw, CANONICAL_LINK % a.url), a.case.content_type
        )
    return out, arts, [amp[a.url] for a in arts]


# --------------------------------------------------------------------------
# The sites and the archive


@dataclass(frozen=True)
class _HardSpec:
    key: str
    name: str
    home: str
    hosts: tuple[str, ...]
    reach: str
    article_regex: str
    build: Callable[[_HardSpec, list[_Case]], tuple[_Out, list[_Article], list[str]]]


_SPECS = (
    _HardSpec(
        key="dongfang",
        name="东方网",
        home=f"{_DF}/",
        hosts=tuple(
            f"{h}.{_DF_DOMAIN}"
            for h in ("www", "finance", "tech", "world", "society", "v", "passport")
        ),
        reach="links",
        article_regex=r"^https://(?:finance|tech|world|society)\.dongfang-wang\.cn/a/\d{8}/c100[1-4]-\d{8}\.shtml$",
        build=_df_build,
    ),
    _HardSpec(
        key="pearl",
        name="明珠論壇報",
        home=f"{_PT}/",
        hosts=("www.pearl-tribune.com.hk",),
        reach="links",
        article_regex=(
            r"^https://www\.pearl-tribune\.com\.hk/news/(?:hong-kong|china|world|business)/"
            r"\d{4}/\d{2}/\d{2}/[a-z0-9]+(?:-[a-z0-9]+)*-\d{7}/$"
        ),
        build=_pt_build,
    ),
    _HardSpec(
        key="xibei",
        name="西北日报",
        home=f"{_XB}/",
        hosts=("news.xibei-daily.com.cn",),
        reach="links",
        article_regex=r"^https://news\.xibei-daily\.com\.cn/content\.php\?id=\d{5}&cid=\d$",
        build=_xb_build,
    ),
    _HardSpec(
        key="dawan",
        name="大湾新闻",
        home=f"{_DW}/",
        hosts=("www.dawan-news.com",),
        reach="links+sitemap",
        article_regex=r"^https://www\.dawan-news\.com/c/[0-9A-Za-z]{11}$",
        build=_dw_build,
    ),
    _HardSpec(
        key="taibei",
        name="台北郵報",
        home=f"{_TB}/",
        hosts=("www.taibei-post.com.tw",),
        reach="links+sitemap",
        article_regex=r"^https://www\.taibei-post\.com\.tw/news/(?:%[0-9A-F]{2})+/\d{8}/\d{7}\.html$",
        build=_tb_build,
    ),
)


def _charset(ctype: str) -> str:
    label = ctype.partition("charset=")[2].strip().lower() or "utf-8"
    return "gb18030" if label in ("gbk", "gb2312", "gb18030") else label


def _hrefs(url: str, body: bytes, ctype: str) -> set[str]:
    doc = lxml_html.document_fromstring(body.decode(_charset(ctype), "replace"))
    out = set()
    for a in doc.iter("a"):
        href = (a.get("href") or "").strip()
        if href and not href.startswith(("javascript:", "mailto:", "#")):
            out.add(urljoin(url, href).split("#")[0])
    return out


def _linked(home: str, out: _Out) -> tuple[str, ...]:
    """Articles linked from the home page or from a non-article page the home page links."""
    pages = {
        url: (body, ctype) for url, body, ctype in out.records if ctype.startswith("text/html")
    }
    articles = set(out.articles)
    first = _hrefs(home, *pages[home])
    found = first & articles
    for url in sorted(first - articles):
        if url in pages:
            found |= _hrefs(url, *pages[url]) & articles
    return tuple(u for u in out.articles if u in found)


def _truth(spec: _HardSpec, out: _Out, arts: Sequence[_Article], amp: Sequence[str]) -> HardSite:
    return HardSite(
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
        article_regex=spec.article_regex,
        sections={a.url: a.section for a in arts},
        amp_urls=tuple(amp),
        linked_urls=_linked(spec.home, out),
    )


def build_hard_archives(datasets: Path, out_dir: Path) -> tuple[Path, list[HardSite]]:
    """Write the five sites into ``out_dir/hard-sites.warc.gz``; return it and the truth.

    Same inputs, same bytes (WARC record ids and dates aside).
    """
    datasets = Path(datasets).resolve()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "hard-sites.warc.gz"
    part = path.with_name(path.name + ".part")
    picked = _pick(datasets)
    sites: list[HardSite] = []
    with open(part, "wb") as fh:
        writer = _open_writer(fh, path)
        writer.write_record(
            writer.create_warcinfo_record(
                path.name, {"software": "newsspider tests/sitegen_hard.py"}
            )
        )
        for spec in _SPECS:
            out, arts, amp = spec.build(spec, picked[spec.key])
            for url, body, ctype in out.records:
                write_response_record(
                    writer, url, body, [("Content-Type", ctype), ("Server", "nginx")]
                )
            sites.append(_truth(spec, out, arts, amp))
    part.replace(path)
    return path, sites


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.sitegen_hard", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("datasets", type=Path, help="the shared/datasets folder")
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    path, sites = build_hard_archives(args.datasets, args.out_dir)
    w = sys.stdout.write
    w(f"{path}\n")
    for s in sites:
        w(
            f"{s.key:9} {s.home:36} reach={s.reach:13} articles={len(s.article_urls)} "
            f"linked={len(s.linked_urls)} lists={len(s.list_urls)} others={len(s.other_urls)}"
            f"{f' amp={len(s.amp_urls)}' if s.amp_urls else ''}\n"
        )
        w(f"          e.g. {s.article_urls[0]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
