"""中州日报, a fictional Chinese portal served through a local HTTP forward proxy.

The acceptance site of issue 33 ("reach"): a site in no site file, shaped like most
Chinese portals, on which discovery, coverage, multi-page joining, page kinds and
challenge handling are all measured at once. It is served by a threading HTTP server on
127.0.0.1 that acts as an HTTP *forward proxy*: it answers absolute-URI requests
(``GET http://news.zhongzhou-daily.cn/guonei/ HTTP/1.1``) by their host, so the site lives
under its realistic address and a crawl reaches it with nothing but ``http_proxy`` in its
environment (Scrapy's ``HttpProxyMiddleware`` reads it through ``urllib``'s
``getproxies()`` in ``scrapy addsite``, ``scrapy crawl``, ``scrapy sites check`` and
``scrapy nightly`` alike). The site is plain ``http://``, so no CONNECT is needed; any
other host is answered 502 (nothing is ever forwarded: no test touches the network).
A request straight to the server (``GET /guonei/``, Host 127.0.0.1) is served the same
site, for a quick look in a browser.

Shape::

    http://news.zhongzhou-daily.cn/                   home: channels, newest, 专题, 图集, 视频, 直播
      /guonei/ /guoji/ /caijing/ /shehui/             channels, 8 items a page, pager 下一页
      /guonei/index_2.html ... index_N.html           N >= 3 on every channel
      /guonei/YYYYMMDD/cNNNNNNN.shtml                 articles (real saved pages), and under the
                                                      same form: galleries, videos, one live page,
                                                      专题 topic pages
      /guonei/YYYYMMDD/cNNNNNNN_2.shtml ...           pages 2..n of a multi-page article
      /robots.txt                                     names /sitemap_news.xml
      /sitemap_news.xml                               Google News sitemap: every story of the last
                                                      two days (lists show only 80 % of those)

- Article pages are real saved Chinese pages of ``../shared/datasets`` (cx163-zh, magic-zh,
  cwced-zh, newspaper4k-fixtures-zh, readability-fixtures-zh: the pages with a gold body,
  read at build time, never copied into the repository), served in their own bytes and
  encoding with a matching Content-Type charset. The one change: the page's publication
  time (gold, else printed) and every full date within two days of it is moved by the
  same offset so that the story is as old as the URL says (digits only; every other
  byte is kept, undecodable bytes included). Times are relative to the moment the site is
  built, so "the last two days" holds whenever the test runs.
- A tenth of the articles (pages whose every gold line is a ``<p>`` of one container) are
  split over 2-5 pages: page *j* is the saved page with only the *j*-th run of those
  paragraphs left in its container and ``<div class="page">上一页 1 2 3 下一页</div>``
  (links where they lead somewhere) right after it. The truth is the whole gold body.
- Galleries (图集: figures with captions, and the slide data as JSON), videos (a player and
  a description), one live page (直播: timed entries, newest first as such pages show them)
  and three 专题 topic pages (an intro and blocks of links to articles) are generated in
  the portal's own markup (UTF-8).
- Challenges, deterministic by the SHA-1 of the URL (no randomness): of the article-like
  URLs in hash order, every 20th answers HTTP 521 with
  ``<script>document.cookie="__jsl_clearance=TOKEN;max-age=3600;path=/";location.reload()``
  until a request carries that cookie (one token for the whole site, as a clearance
  cookie is); every 40th, offset by 10, answers its first request with a 200 安全验证 page
  (访问过于频繁) and the real page from the second request on.
- Night two: :meth:`PortalServer.release` publishes six newer articles (lists, home and
  sitemap change; two of the six are in the sitemap only); before it they answer 404.

Truth (:class:`Portal`, ``server.portal``): ``stories`` (every page that should become a
row, by its first page's URL: kind, title, gold text, time, page URLs, channel, listed,
late, source), ``topics``, ``kinds`` (every page under the article URL form, page 1 of each
story and each topic), ``multipage`` (first URL -> page URLs), ``sitemap_only``,
``sitemap_urls()``, ``list_urls()``, ``never_stored()``, ``challenged``, ``verified``,
``article_regex``. The server records every request (``server.seen``: :class:`Hit` with the
URL, what was served, status and headers).

By hand::

    python -m tests.portalsite --serve [--port 8033] [--released] [--truth truth.json]
    # prints the proxy; then, in another shell:
    export http_proxy=http://127.0.0.1:8033 HTTP_PROXY=http://127.0.0.1:8033
    scrapy addsite http://news.zhongzhou-daily.cn/ --key zhongzhou --write \\
        -s SITES_FILE=/tmp/portal/sites.toml -s DOWNLOAD_DELAY=0 -s AUTOTHROTTLE_ENABLED=False
    scrapy crawl zhongzhou -s SITES_FILE=/tmp/portal/sites.toml \\
        -s DATABASE_URL=sqlite:////tmp/portal/corpus.db -s DOWNLOAD_DELAY=0
    curl -x http://127.0.0.1:8033 http://news.zhongzhou-daily.cn/sitemap_news.xml

Typing ``release`` and Enter on the serving terminal publishes night two's articles.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lxml import html as lxml_html

from tests.sitegen import (
    _CHARSET_LABEL,
    CST,
    _Case,
    _codec,
    _e,
    _excluded,
    _Link,
    _load,
    _page,
    _read_cases,
    _robots,
    _ul,
    _xml,
)

__all__ = [
    "BLOCK_WORDS",
    "HOME",
    "HOST",
    "Hit",
    "Portal",
    "PortalServer",
    "Story",
    "Topic",
    "build_portal",
    "main",
    "serve_portal",
]

HOST = "news.zhongzhou-daily.cn"
HOME = f"http://{HOST}/"
NAME = "中州日报"
CHANNELS = (("guonei", "国内"), ("guoji", "国际"), ("caijing", "财经"), ("shehui", "社会"))
PER_PAGE = 8
KINDS_STORED = ("article", "gallery", "video", "live")
#: the clearance cookie's name; its value is :attr:`Portal.token`
COOKIE = "__jsl_clearance"
#: words of the challenge and verification pages that no story's text or title holds: a
#: row with one of them stored an anti-bot answer
BLOCK_WORDS = ("访问过于频繁", "安全验证", "请按住滑块", COOKIE, "document.cookie")

# The datasets whose Chinese pages have a gold body, in this order.
_DATASETS = (
    "cx163-zh",
    "magic-zh",
    "cwced-zh",
    "newspaper4k-fixtures-zh",
    "readability-fixtures-zh",
)
# Pages the default extractor reads at token F1 < 0.9 (measured over each dataset with
# extract_article and evaluation.score_body): the site measures reach, not extraction.
_POOR = frozenset(
    {"cx163-28", "cx163-70", "magic-39dd62c5ba88", "magic-6558a82cd7af", "magic-71bfee3a8935",
     "magic-777ddd63e01e", "magic-9a0e481ae0f3", "magic-9f4c1adb9f61", "0df12126",
     "2bac7fb2", "386d70f8", "d5bced5e"}
)  # fmt: skip
# The multi-page articles: pages whose every gold line is a <p> of one container and which
# the extractor reads at F1 >= 0.99 as one page, from four templates (NetEase of 2015 and of
# 2004, Sohu, 中国青年网), split over 2..5 pages in this order. (Two magic-zh pages were tried
# and left out: on their shortened pages the extractor takes the footer too, F1 0.97.)
_MULTIPAGE = (
    "cx163-15", "cx163-20", "cx163-24", "cx163-43", "cx163-48", "cx163-51", "cx163-57",
    "ebe9df29", "cx163-56", "5acac71b", "readability-youth",
)  # fmt: skip


@dataclass(frozen=True)
class Story:
    """One page of the site that should be stored as one row (whatever its kind)."""

    url: str  # the first page's URL
    kind: str  # article | gallery | video | live
    channel: str  # slug
    title: str | None  # gold title (the case's, or the generated page's), None when unknown
    headline: str  # the link text on list pages
    text: str | None  # gold body (a multi-page article's pages joined), None when unknown
    published: datetime  # +08:00
    page_urls: tuple[str, ...]  # every page in order, the first included
    source: str  # "dataset/case-id" or "generated"
    listed: bool  # linked from the lists (False: in the news sitemap only)
    late: bool  # published by PortalServer.release()

    @property
    def multipage(self) -> bool:
        return len(self.page_urls) > 1


@dataclass(frozen=True)
class Topic:
    """A 专题 page under the article URL form: followed for links, never stored."""

    url: str
    title: str
    links: tuple[str, ...]
    published: datetime


@dataclass
class _Resp:
    body: bytes
    ctype: str


@dataclass
class Portal:
    """The site's content and its truth."""

    now: datetime
    stories: dict[str, Story]
    topics: dict[str, Topic]
    token: str
    challenged: frozenset[str]  # URLs answered 521 until the clearance cookie comes back
    verified: frozenset[str]  # URLs answered with a 安全验证 page on their first request
    pages: dict[str, _Resp] = field(repr=False)  # article-like URLs -> their page
    _generated: dict[bool, dict[str, _Resp]] = field(repr=False, default_factory=dict)

    home: str = HOME
    host: str = HOST
    name: str = NAME
    article_regex: str = r"^http://news\.zhongzhou-daily\.cn/[a-z]+/\d{8}/c\d{7}(?:_\d+)?\.shtml$"

    @property
    def sitemap(self) -> str:
        return f"{HOME}sitemap_news.xml"

    @property
    def kinds(self) -> dict[str, str]:
        """Every page under the article URL form (first pages and topics) -> its kind."""
        out = {u: s.kind for u, s in self.stories.items()}
        out.update(dict.fromkeys(self.topics, "topic"))
        return out

    @property
    def multipage(self) -> dict[str, tuple[str, ...]]:
        return {u: s.page_urls for u, s in self.stories.items() if s.multipage}

    def stored_urls(self, *, released: bool = True) -> list[str]:
        """The URLs that should be rows: every story (of night one only, unless released)."""
        return [u for u, s in self.stories.items() if released or not s.late]

    def article_urls(self, *, released: bool = True) -> list[str]:
        """The stories of kind ``article``."""
        return [u for u in self.stored_urls(released=released) if self.stories[u].kind == "article"]

    def window(self, *, released: bool = True) -> list[str]:
        """The stories of the last two days: what the news sitemap lists, newest first."""
        cut = self.now - timedelta(hours=48)
        return [s.url for s in self._newest(released) if s.published > cut]

    sitemap_urls = window

    @property
    def sitemap_only(self) -> tuple[str, ...]:
        """Stories in the news sitemap that no list, home or topic page links."""
        return tuple(u for u, s in self.stories.items() if not s.listed)

    def list_urls(self, *, released: bool = True) -> list[str]:
        """Home, channel pages and their pages 2..N."""
        return [u for u in self._generated_for(released) if u == HOME or _LIST.match(u)]

    def never_stored(self, *, released: bool = True) -> set[str]:
        """Lists, topics and pages 2..n: URLs that must never be article rows."""
        later = {p for s in self.stories.values() for p in s.page_urls[1:]}
        return set(self.list_urls(released=released)) | set(self.topics) | later

    def _newest(self, released: bool) -> list[Story]:
        chosen = [s for s in self.stories.values() if released or not s.late]
        return sorted(chosen, key=lambda s: (-s.published.timestamp(), s.url))

    def _generated_for(self, released: bool) -> dict[str, _Resp]:
        if released not in self._generated:
            self._generated[released] = _generate(self, released)
        return self._generated[released]

    def response(self, url: str, *, released: bool) -> _Resp | None:
        """The page at ``url`` in the state given (None: 404)."""
        story = self.stories.get(_first_page(url))
        if story is not None and story.late and not released:
            return None
        if url in self.pages:
            return self.pages[url]
        return self._generated_for(released).get(url)

    def truth_json(self) -> dict[str, Any]:
        """The truth as JSON-ready data (``--truth FILE``)."""
        return {
            "home": HOME,
            "sitemap": self.sitemap,
            "article_regex": self.article_regex,
            "stories": {
                u: {
                    "kind": s.kind, "channel": s.channel, "title": s.title, "text": s.text,
                    "published": s.published.isoformat(), "page_urls": list(s.page_urls),
                    "source": s.source, "listed": s.listed, "late": s.late,
                }
                for u, s in self.stories.items()
            },
            "topics": {
                u: {"title": t.title, "links": list(t.links)} for u, t in self.topics.items()
            },
            "lists": self.list_urls(),
            "sitemap_only": list(self.sitemap_only),
            "challenged": sorted(self.challenged),
            "verified": sorted(self.verified),
        }  # fmt: skip


_PAGE_N = re.compile(r"_(\d+)\.shtml$")
_LIST = re.compile(
    rf"^http://{re.escape(HOST)}/(?:{'|'.join(s for s, _ in CHANNELS)})/(?:index_\d+\.html)?$"
)


def _first_page(url: str) -> str:
    return _PAGE_N.sub(".shtml", url)


# --------------------------------------------------------------------------
# Dates moved to now


_DATE = re.compile(
    r"(?<!\d)((?:19|20)\d\d)(\s*[-/.年]\s*)(\d{1,2})(\s*[-/.月]\s*)(\d{1,2})(?!\d)"
    r"(?:(\s*日?\s*T?\s*)(\d{1,2})([:：])(\d{2})(?:([:：])(\d{2}))?)?"
)


def _pad(value: int, like: str) -> str:
    return str(value).zfill(len(like))


def _shift_dates(text: str, t0: datetime, delta: timedelta) -> str:
    """Move every full date within two days of ``t0`` (the page's own time) by ``delta``.

    Separators and zero padding are kept; a date without a clock keeps having none.
    Dates further from ``t0`` (history the text tells of) are left alone.
    """
    local0 = t0.astimezone(CST).replace(tzinfo=None)

    def sub(m: re.Match[str]) -> str:
        y, sep1, mo, sep2, d, sep3, h, c1, mi, c2, s = m.groups()
        try:
            when = datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
        except ValueError:
            return m.group(0)
        if abs(when - local0) > timedelta(days=2):
            return m.group(0)
        new = when + delta
        out = f"{new.year}{sep1}{_pad(new.month, mo)}{sep2}{_pad(new.day, d)}"
        if h is not None:
            out += f"{sep3}{_pad(new.hour, h)}{c1}{new.minute:02d}"
            if s is not None:
                out += f"{c2}{new.second:02d}"
        return out

    return _DATE.sub(sub, text)


def _moved(case: _Case, published: datetime) -> bytes:
    """The case's bytes with its own dates moved to ``published`` (other bytes untouched)."""
    codec = _codec(case.encoding)
    text = case.raw.decode(codec, "surrogateescape")
    return _shift_dates(text, case.time, published - case.time).encode(codec, "surrogateescape")


# --------------------------------------------------------------------------
# Multi-page articles


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _gold_paragraphs(doc: lxml_html.HtmlElement, gold: str) -> list[lxml_html.HtmlElement]:
    """The ``<p>`` children of one container that make up the whole gold body, in order;
    [] when the gold is not exactly such a run."""
    lines = [_norm(ln) for ln in gold.splitlines() if ln.strip()]
    wanted = set(lines)
    groups: dict[Any, list[lxml_html.HtmlElement]] = {}
    for p in doc.iter("p"):
        if _norm(p.text_content()) in wanted:
            groups.setdefault(p.getparent(), []).append(p)
    if not groups:
        return []
    best = max(groups.values(), key=len)
    if [_norm(p.text_content()) for p in best] != lines:
        return []
    return best


def _pager(page_urls: Sequence[str], j: int) -> lxml_html.HtmlElement:
    """``<div class="page">上一页 1 2 3 下一页</div>`` for page ``j`` (0-based)."""

    def name(k: int) -> str:
        return page_urls[k].rsplit("/", 1)[1]

    parts = [f'<a href="{name(j - 1)}">上一页</a>' if j else '<span class="disabled">上一页</span>']
    for k in range(len(page_urls)):
        parts.append(
            f'<span class="cur">{k + 1}</span>' if k == j else f'<a href="{name(k)}">{k + 1}</a>'
        )
    last = len(page_urls) - 1
    parts.append(
        f'<a href="{name(j + 1)}">下一页</a>'
        if j < last
        else '<span class="disabled">下一页</span>'
    )
    return lxml_html.fragment_fromstring('<div class="page">' + " ".join(parts) + "</div>")


def _split_pages(
    case: _Case, raw: bytes, gold: str, page_urls: Sequence[str]
) -> list[bytes] | None:
    """The saved page split over ``len(page_urls)`` pages (module docstring), or None."""
    codec = _codec(case.encoding)
    text = raw.decode(codec, "replace")
    n = len(page_urls)
    out = []
    for j in range(n):
        doc = lxml_html.document_fromstring(text)
        paras = _gold_paragraphs(doc, gold)
        if len(paras) < n:
            return None
        for el in doc.xpath('//link[@rel="canonical"]|//meta[@property="og:url"]'):
            el.drop_tree()  # the saved page's own address would name page 1 everywhere
        size = -(-len(paras) // n)
        keep = set(map(id, paras[j * size : (j + 1) * size]))
        container = paras[0].getparent()
        for p in paras:
            if id(p) not in keep:
                p.drop_tree()
        container.addnext(_pager(page_urls, j))
        doctype = doc.getroottree().docinfo.doctype
        html = lxml_html.tostring(doc, encoding="unicode", doctype=doctype or None)
        out.append(html.encode(codec, "xmlcharrefreplace"))
    return out


# --------------------------------------------------------------------------
# Generated stories: galleries, videos, the live page, topics


_GALLERIES = (
    ("图集：黄河滩区迁建后的新村落", (
        "清晨的新村广场上，老人们在晨练，远处是整齐排列的二层小楼。",
        "搬迁户李大爷在新家的院子里种下了从老宅带来的石榴树。",
        "村里新建的幼儿园里，孩子们在老师的带领下做游戏。",
        "滩区群众在村口的扶贫车间里加工出口的假发制品。",
        "从空中俯瞰，迁建社区与黄河大堤之间已是成片的麦田。",
        "傍晚时分，村民们在文化广场上跳起了广场舞。",
    )),
    ("图集：秋收时节的豫东平原", (
        "联合收割机在玉米地里来回穿梭，一天能收获两百多亩。",
        "种粮大户王建国站在晾晒场上，查看新收玉米的干湿程度。",
        "粮食收购点前，满载玉米的三轮车排起了长队。",
        "农技人员在田间地头为农民讲解秸秆还田的要点。",
        "夕阳下，刚刚翻耕过的土地等待着冬小麦的播种。",
    )),
    ("图集：老城区改造后的书院街", (
        "修缮一新的书院街保留了青砖灰瓦的传统风貌。",
        "街角的老茶馆重新开张，老街坊们又聚在一起喝茶下棋。",
        "游客在非遗工坊里体验传统木版年画的拓印。",
        "夜幕降临，书院街的灯笼次第亮起，人流如织。",
        "改造中保留下来的百年古井，如今成了街区的打卡点。",
        "社区志愿者在街口为游客指路、讲解街区历史。",
        "孩子们在新建的口袋公园里追逐嬉戏。",
    )),
    ("图集：国际马拉松赛鸣枪开跑", (
        "来自二十多个国家和地区的三万名选手从起点出发。",
        "赛道两侧，市民自发为选手加油助威。",
        "志愿者在补给站为选手递上饮用水和香蕉。",
        "一位坐轮椅的选手在家人陪伴下完成了迷你马拉松。",
        "男子组冠军冲过终点线的瞬间。",
    )),
)  # fmt: skip
_VIDEOS = (
    ("视频｜记者探访郑州航空港区智能手机生产线",
     "在航空港区的一家手机工厂里，平均每分钟就有一部新手机下线。记者走进生产车间，"
     "看智能化改造如何让生产效率提升三成。"),
    ("视频｜一分钟看懂个人养老金新政",
     "个人养老金制度全面实施后，缴费上限、税收优惠和领取条件有哪些变化？"
     "本报记者用一分钟为你梳理要点。"),
    ("视频｜暴雨过后，救援队连夜转移被困群众",
     "连日强降雨导致部分村庄被淹，消防救援队伍连夜出动，用冲锋舟转移被困群众一百二十余人。"),
)  # fmt: skip
_LIVE = (
    "直播｜2026年全省经济运行情况新闻发布会",
    (
        ("10:00", "发布会开始。省统计局新闻发言人介绍今年以来全省经济运行的总体情况。"),
        ("10:04", "前三季度全省地区生产总值同比增长百分之五点二，增速比上半年加快零点三个百分点。"),
        ("10:09", "规模以上工业增加值同比增长百分之六点八，装备制造业和高技术制造业增长较快。"),
        ("10:15", "社会消费品零售总额同比增长百分之五点五，网上零售额增长明显。"),
        ("10:21", "固定资产投资同比增长百分之六点一，其中基础设施投资增长百分之八点四。"),
        ("10:27", "居民人均可支配收入同比名义增长百分之五点九，农村居民收入增速快于城镇居民。"),
        ("10:34", "记者提问：下一步如何稳就业？发言人表示，将继续加大对中小微企业的支持力度。"),
        ("10:42", "记者提问：粮食生产情况如何？发言人介绍，全年粮食总产量有望再创新高。"),
        ("10:50", "记者提问：外贸形势怎样？发言人说，一般贸易进出口占比继续提高。"),
        ("10:58", "发布会结束。本报将持续关注后续报道。"),
    ),
)
_TOPICS = (
    ("专题：聚焦2026年全国两会", "两会时间，本报记者带你关注代表委员的声音和民生热点。"),
    ("专题：黄河流域生态保护和高质量发展", "保护母亲河，推动黄河流域生态保护和高质量发展。"),
    ("专题：秋粮收获进行时", "秋收秋种，粮安天下。关注各地秋粮收获进展。"),
)


def _chrome(title: str, main: str, *, aside: str = "", head_extra: str = "") -> bytes:
    nav = "\n".join(
        [f'<li><a href="{HOME}">首页</a></li>']
        + [f'<li><a href="/{slug}/">{_e(name)}</a></li>' for slug, name in CHANNELS]
        + ['<li><a href="javascript:void(0)" class="more">更多</a></li>']
    )
    header = f"""<div class="topbar"><a href="/about/">关于我们</a> |
<a href="/app/">客户端</a></div>
<header class="header"><a class="logo" href="/"><img src="/static/img/logo.png" alt="{NAME}"></a>
<nav class="nav"><ul>
{nav}
</ul></nav></header>"""
    footer = """<footer class="footer">
<p><a href="/about/">关于我们</a> | <a href="/about/contact.html">联系我们</a> |
<a href="/about/ad.html">广告服务</a></p>
<p>中州日报社 版权所有 豫ICP备26000033号 未经授权禁止转载</p>
</footer>"""
    full = title if title == NAME else f"{title}_{NAME}"
    return _page(title=full, charset="utf-8", head_extra=head_extra, header=header, main=main,
                 aside=aside, footer=footer)  # fmt: skip


def _date_line(when: datetime) -> str:
    return (
        f'<div class="info"><span class="time">{when.strftime("%Y-%m-%d %H:%M:%S")}</span>'
        f' <span class="source">来源：{NAME}</span></div>'
    )


def _gallery_page(title: str, captions: Sequence[str], when: datetime, gid: str) -> bytes:
    figs = "\n".join(
        f'<li><img src="http://img.zhongzhou-daily.cn/tuji/{gid}/{k}.jpg" alt="">'
        f'<p class="pic-desc">{_e(cap)}</p></li>'
        for k, cap in enumerate(captions, start=1)
    )
    data = json.dumps(
        {"images": [{"image_url": f"http://img.zhongzhou-daily.cn/tuji/{gid}/{k}.jpg", "note": c}
                    for k, c in enumerate(captions, start=1)]},
        ensure_ascii=False,
    )  # fmt: skip
    main = (
        f"<h1>{_e(title)}</h1>\n{_date_line(when)}\n"
        f'<div class="pic-show" id="picShow"><ul>\n{figs}\n</ul></div>\n'
        f'<div class="pic-nav"><span class="num">1/{len(captions)}</span></div>\n'
        f"<script>var slide_data = {data};</script>"
    )
    head = '<meta property="og:type" content="gallery">'
    return _chrome(title, main, head_extra=head)


def _video_page(title: str, desc: str, when: datetime, vid: str) -> bytes:
    main = (
        f"<h1>{_e(title)}</h1>\n{_date_line(when)}\n"
        f'<div class="video-box"><video controls preload="none" '
        f'poster="http://img.zhongzhou-daily.cn/video/{vid}.jpg" '
        f'src="http://v.zhongzhou-daily.cn/mp4/{vid}.mp4"></video></div>\n'
        f'<div class="video-intro"><p>{_e(desc)}</p></div>'
    )
    head = '<meta property="og:type" content="video">'
    return _chrome(title, main, head_extra=head)


def _live_page(title: str, entries: Sequence[tuple[str, str]], when: datetime) -> bytes:
    items = "\n".join(
        f'<li class="live-item"><span class="live-time">{_e(t)}</span>'
        f'<div class="live-text">{_e(text)}</div></li>'
        for t, text in reversed(entries)
    )
    main = (
        f"<h1>{_e(title)}</h1>\n{_date_line(when)}\n"
        '<div class="live-status"><span class="on">直播中</span> 图文直播 · 每30秒自动刷新</div>\n'
        f'<ul class="live-list" id="liveList">\n{items}\n</ul>\n'
        "<script>setInterval(function(){ /* refresh the entries */ }, 30000);</script>"
    )
    return _chrome(title, main)


def _topic_page(topic: Topic, intro: str, stories: dict[str, Story]) -> bytes:
    links = [stories[u] for u in topic.links]
    half = (len(links) + 1) // 2
    blocks = []
    for name, chunk in (("最新报道", links[:half]), ("深度观察", links[half:])):
        items = _ul([_Link(s.url, s.headline, s.published) for s in chunk])
        blocks.append(f'<div class="zt-block"><h2>{name}</h2>\n{items}</div>')
    main = (
        f'<div class="zt-banner"><img src="http://img.zhongzhou-daily.cn/zt/banner.jpg" alt="">'
        f"<h1>{_e(topic.title)}</h1></div>\n"
        f'<div class="zt-intro"><p>{_e(intro)}</p></div>\n' + "\n".join(blocks)
    )
    return _chrome(topic.title, main)


# --------------------------------------------------------------------------
# Lists, home, sitemap, robots


def _generate(portal: Portal, released: bool) -> dict[str, _Resp]:
    html = "text/html; charset=utf-8"
    out: dict[str, _Resp] = {}
    shown = [s for s in portal._newest(released) if s.listed]

    def link(s: Story) -> _Link:
        return _Link(urlsplit(s.url).path, s.headline, s.published)

    for slug, name in CHANNELS:
        own = [s for s in shown if s.channel == slug]
        chunks = [own[i : i + PER_PAGE] for i in range(0, len(own), PER_PAGE)] or [[]]
        n_pages = len(chunks)

        def href(k: int, slug: str = slug) -> str:
            return f"/{slug}/" if k == 1 else f"/{slug}/index_{k}.html"

        for n, chunk in enumerate(chunks, start=1):
            pager = [f'<a href="{href(1)}">首页</a>']
            if n > 1:
                pager.append(f'<a href="{href(n - 1)}">上一页</a>')
            pager += [
                f'<span class="cur">{k}</span>' if k == n else f'<a href="{href(k)}">{k}</a>'
                for k in range(1, n_pages + 1)
            ]
            if n < n_pages:
                pager.append(f'<a class="next" href="{href(n + 1)}">下一页</a>')
            pager.append(f'<a href="{href(n_pages)}">尾页</a>')
            crumbs = f'<div class="crumbs"><a href="/">首页</a> &gt; {_e(name)}</div>'
            main = (
                f"{crumbs}\n<h1>{_e(name)}</h1>\n{_ul([link(s) for s in chunk])}\n"
                f'<div class="pages">{" ".join(pager)}</div>'
            )
            title = name if n == 1 else f"{name}_第{n}页"
            out[f"http://{HOST}{href(n)}"] = _Resp(_chrome(title, main), html)

    focus = shown[0]
    by_kind = {k: [s for s in shown if s.kind == k] for k in KINDS_STORED}
    blocks = [
        f'<div class="focus"><h2><a href="{_e(focus.url)}">{_e(focus.headline)}</a></h2></div>',
        '<div class="block"><h2>最新</h2>\n' + _ul([link(s) for s in shown[1:11]]) + "</div>",
    ]
    for slug, name in CHANNELS:
        own = [s for s in shown if s.channel == slug][:5]
        blocks.append(
            f'<div class="block"><h2><a href="/{slug}/">{_e(name)}</a>'
            f'<a class="more" href="/{slug}/">更多&gt;&gt;</a></h2>\n'
            + _ul([link(s) for s in own]) + "</div>"
        )  # fmt: skip
    topics = [_Link(t.url, t.title) for t in portal.topics.values()]
    blocks.append('<div class="block zt"><h2>专题</h2>\n' + _ul(topics, dates=False) + "</div>")
    aside = (
        '<div class="box"><h3>图集</h3>\n'
        + _ul([link(s) for s in by_kind["gallery"]], "pics", dates=False) + "</div>\n"
        '<div class="box"><h3>视频</h3>\n'
        + _ul([link(s) for s in by_kind["video"]], "vlist", dates=False) + "</div>\n"
        '<div class="box"><h3>直播</h3>\n'
        + _ul([link(s) for s in by_kind["live"]], "live", dates=False) + "</div>"
    )  # fmt: skip
    out[HOME] = _Resp(_chrome(NAME, "\n".join(blocks), aside=aside), html)

    items = []
    for u in portal.window(released=released):
        s = portal.stories[u]
        items.append(
            f"<url><loc>{_e(u)}</loc><news:news><news:publication>"
            f"<news:name>{NAME}</news:name><news:language>zh-cn</news:language>"
            "</news:publication>"
            f"<news:publication_date>{s.published.isoformat()}</news:publication_date>"
            f"<news:title>{_e(s.headline)}</news:title></news:news></url>"
        )
    news = (
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">\n'
        + "\n".join(items) + "\n</urlset>\n"
    )  # fmt: skip
    out[portal.sitemap] = _Resp(_xml(news), "application/xml; charset=utf-8")
    robots = _robots("User-agent: *", "Disallow: /search/", "", f"Sitemap: {portal.sitemap}")
    out[f"{HOME}robots.txt"] = _Resp(robots, "text/plain")
    about = "<h1>关于我们</h1>\n<p>中州日报创刊于1949年，是一份立足中原、面向全国的综合性日报。</p>"
    out[f"{HOME}about/"] = _Resp(_chrome("关于我们", about), html)
    return out


# --------------------------------------------------------------------------
# Building the portal


@dataclass
class _Pick:
    case: _Case
    gold: str
    pages: int = 1


def _cases(datasets: Path) -> list[_Pick]:
    """The usable article pages with their gold bodies, in a fixed order."""
    picks = []
    for name in _DATASETS:
        if not (datasets / name / "cases.jsonl").is_file():
            continue
        golds = {c["id"]: c.get("body") for c in _read_cases(datasets / name)}
        for case in _load(datasets, name):
            gold = golds.get(case.id)
            if (
                gold
                and not _excluded(case.id)
                and case.id not in _POOR
                and case.id[:8] not in _POOR
            ):
                picks.append(_Pick(case, gold))
    return picks


def _hash(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:12], 16)


def build_portal(datasets: Path, *, now: datetime | None = None) -> Portal:
    """The whole site and its truth, from the saved pages of ``datasets`` (deterministic
    for a given ``now``: every time is relative to it)."""
    datasets = Path(datasets).resolve()
    now = (now or datetime.now(CST)).astimezone(CST).replace(second=0, microsecond=0)
    picks = _cases(datasets)
    if len(picks) < 60:
        raise FileNotFoundError(f"too few saved pages with a gold body under {datasets}")
    by_id = {p.case.id: p for p in picks}
    cycle = (2, 3, 4, 5)
    k = 0
    for wanted in _MULTIPAGE:
        p = by_id.get(wanted) or next((q for q in picks if q.case.id.startswith(wanted)), None)
        if p is not None:
            p.pages = cycle[k % len(cycle)]
            k += 1

    # the stories: articles, then the generated kinds, in one deterministic order
    specs: list[tuple[str, Any]] = [("article", p) for p in picks]
    specs += [("gallery", g) for g in _GALLERIES] + [("video", v) for v in _VIDEOS]
    specs.append(("live", _LIVE))
    specs.sort(key=lambda s: _hash(repr(s[1].case.source if s[0] == "article" else s[1][0])))
    # six late articles (night two); then ~40 % in the last two days; the rest older
    late = [i for i, (kind, p) in enumerate(specs) if kind == "article" and p.pages == 1][:6]
    rest = [i for i in range(len(specs)) if i not in late]
    n_window = round(0.4 * len(rest))
    ages: dict[int, timedelta] = {}
    for j, i in enumerate(late):
        ages[i] = timedelta(minutes=5 + 7 * j)
    for j, i in enumerate(rest):
        if j < n_window:
            ages[i] = timedelta(hours=1) + j * (timedelta(hours=39) / max(1, n_window - 1))
        else:
            ages[i] = timedelta(hours=56 + 5 * (j - n_window))
    # a fifth of the window is in the news sitemap only (articles: pages of one kind)
    window_idx = [i for i in rest[:n_window] if specs[i][0] == "article"]
    window_idx.sort(key=lambda i: _hash(f"sitemap-only:{i}"))
    hidden = set(window_idx[: round(0.2 * n_window)])
    hidden |= set(late[:2])
    hidden_share = len([i for i in hidden if i not in late]) / max(1, n_window)

    stories: dict[str, Story] = {}
    pages: dict[str, _Resp] = {}
    number = 4_310_000
    for i, (kind, spec) in enumerate(specs):
        number += 17 + _hash(f"id:{i}") % 389
        published = now - ages[i]
        slug = CHANNELS[i % len(CHANNELS)][0]
        url = f"http://{HOST}/{slug}/{published.strftime('%Y%m%d')}/c{number}.shtml"
        listed = i not in hidden
        if kind == "article":
            p: _Pick = spec
            page_urls = tuple(
                [url] + [url.replace(".shtml", f"_{j}.shtml") for j in range(2, p.pages + 1)]
            )
            raw = _moved(p.case, published)
            gold = _shift_dates(p.gold, p.case.time, published - p.case.time)
            ctype = f"text/html; charset={_CHARSET_LABEL.get(p.case.encoding, p.case.encoding)}"
            if p.pages > 1:
                split = _split_pages(p.case, raw, gold, page_urls)
                if split is None:
                    raise ValueError(f"{p.case.source}: the gold is not a run of <p> to split")
                for u, body in zip(page_urls, split, strict=True):
                    pages[u] = _Resp(body, ctype)
            else:
                pages[url] = _Resp(raw, ctype)
            title = p.case.gold_title
            stories[url] = Story(url, kind, slug, title, p.case.headline, gold, published,
                                 page_urls, p.case.source, listed, i in late)  # fmt: skip
            continue
        gid = f"{number}"
        if kind == "gallery":
            title, captions = spec
            body, text = _gallery_page(title, captions, published, gid), "\n".join(captions)
        elif kind == "video":
            title, desc = spec
            body, text = _video_page(title, desc, published, gid), desc
        else:
            title, entries = spec
            body = _live_page(title, entries, published)
            text = "\n".join(f"{t} {e}" for t, e in reversed(entries))
        pages[url] = _Resp(body, "text/html; charset=utf-8")
        stories[url] = Story(url, kind, slug, title, title, text, published, (url,), "generated",
                             listed, False)  # fmt: skip

    # topics: each links six listed articles of night one
    linkable = [u for u, s in stories.items() if s.kind == "article" and s.listed and not s.late]
    topics: dict[str, Topic] = {}
    intros = {}
    for t, (title, intro) in enumerate(_TOPICS):
        number += 29 + t
        published = now - timedelta(hours=20 + 30 * t)
        slug = CHANNELS[t % len(CHANNELS)][0]
        url = f"http://{HOST}/{slug}/{published.strftime('%Y%m%d')}/c{number}.shtml"
        links = tuple(linkable[t * 6 : t * 6 + 6])
        topics[url] = Topic(url, title, links, published)
        intros[url] = intro
    for url, topic in topics.items():
        pages[url] = _Resp(_topic_page(topic, intros[url], stories), "text/html; charset=utf-8")

    # challenges: every 20th article-like URL in hash order; verification pages every 40th
    ordered = sorted(pages, key=lambda u: (_hash(f"challenge:{u}"), u))
    challenged = frozenset(ordered[0::20])
    verified = frozenset(ordered[10::40])
    digest = hashlib.md5(HOST.encode()).hexdigest()
    token = f"{int(now.timestamp())}.{_hash('token') % 1000:03d}|0|{digest}"
    portal = Portal(now, stories, topics, token, challenged, verified, pages)
    _check(portal, hidden_share)
    return portal


def _check(portal: Portal, hidden_share: float) -> None:
    """The shape the acceptance list asks for, asserted when the site is built."""
    gen = portal._generated_for(False)
    for slug, _ in CHANNELS:
        assert f"http://{HOST}/{slug}/index_3.html" in gen, f"{slug} has fewer than 3 list pages"
    arts = portal.article_urls()
    multi = portal.multipage
    assert abs(len(multi) / len(arts) - 0.1) < 0.03, (len(multi), len(arts))
    assert 0.15 <= hidden_share <= 0.25, hidden_share
    for url in portal.stories:
        assert re.match(portal.article_regex, url), url
    for urls in multi.values():
        assert all(re.match(portal.article_regex, u) for u in urls)


# --------------------------------------------------------------------------
# The proxy server


@dataclass(frozen=True)
class Hit:
    """One request as the server saw it."""

    url: str  # absolute
    served: str  # page | challenge | verify | notfound | offsite | connect
    status: int
    headers: dict[str, str]
    at: float = 0.0  # time.monotonic()

    @property
    def cookie(self) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == "cookie"), "")


def _challenge_page(token: str) -> bytes:
    script = f'document.cookie="{COOKIE}={token};max-age=3600;path=/";location.reload()'
    return f"<html><body><script>{script}</script></body></html>".encode()


_VERIFY = """<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>安全验证</title></head>
<body><div class="verify-box"><h2>访问过于频繁</h2>
<p>您的访问过于频繁，为确认本次访问为正常用户行为，请完成安全验证后继续访问。</p>
<div id="nc_1_wrapper" class="nc-container">
<span class="nc-lang-cnt">请按住滑块，拖动到最右边</span></div>
<script src="/captcha/nc.js"></script></div></body></html>
""".encode()


class _Handler(BaseHTTPRequestHandler):
    server: PortalServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.server.handle_get(self)

    def do_HEAD(self) -> None:
        self.server.handle_get(self, head=True)

    def do_CONNECT(self) -> None:
        self.server.record(self.path, "connect", 405, self)
        self._send(405, "text/plain", b"CONNECT is not supported: the site is plain http\n")

    def _send(self, status: int, ctype: str, body: bytes, extra: Sequence[tuple[str, str]] = (),
              head: bool = False) -> None:  # fmt: skip
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Server", "nginx")
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if not head:
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class PortalServer(ThreadingHTTPServer):
    """The portal behind a forward proxy on 127.0.0.1 (``proxy`` is its URL)."""

    daemon_threads = True

    def __init__(self, portal: Portal, port: int = 0, *, released: bool = False) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.portal = portal
        self.released = released
        self.seen: list[Hit] = []
        self._lock = threading.Lock()
        self._verified_once: set[str] = set()

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment for a child process whose HTTP goes through this proxy.

        ``https_proxy`` points here too: the site needs no https, and anything else a child
        tries (tldextract fetching the Public Suffix List when Scrapy's cookie middleware
        first meets a cookie) is refused here (recorded as ``connect``) instead of going out.
        """
        env = dict(os.environ if base is None else base)
        for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
            env.pop(name, None)
        for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
            env[name] = self.proxy
        return env

    def release(self) -> None:
        """Night two: the late articles are published (lists, home and sitemap show them)."""
        self.released = True

    def hits(self, served: str | None = None) -> list[Hit]:
        with self._lock:
            return [h for h in self.seen if served is None or h.served == served]

    def record(self, url: str, served: str, status: int, handler: _Handler) -> None:
        hit = Hit(url, served, status, dict(handler.headers.items()), time.monotonic())
        with self._lock:
            self.seen.append(hit)

    def handle_get(self, h: _Handler, *, head: bool = False) -> None:
        target = h.path
        if target.startswith("/"):  # a direct request: the site itself, by any Host
            url = f"http://{HOST}{target}"
        else:
            url = target
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname != HOST or (parts.port or 80) != 80:
            self.record(url, "offsite", 502, h)
            h._send(502, "text/plain", b"offline test proxy: no such host\n", head=head)
            return
        url = f"http://{HOST}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")
        portal = self.portal
        resp = portal.response(url, released=self.released)
        if resp is None:
            self.record(url, "notfound", 404, h)
            body = _chrome(
                "页面不存在", "<h1>404 页面不存在</h1><p>您访问的页面不存在或已删除。</p>"
            )
            h._send(404, "text/html; charset=utf-8", body, head=head)
            return
        cookie = h.headers.get("Cookie", "")
        if url in portal.challenged and f"{COOKIE}={portal.token}" not in cookie:
            self.record(url, "challenge", 521, h)
            uid = hashlib.md5(url.encode()).hexdigest()
            h._send(521, "text/html", _challenge_page(portal.token),
                    [("Set-Cookie", f"__jsluid_h={uid}; max-age=31536000; path=/; HttpOnly")],
                    head=head)  # fmt: skip
            return
        if url in portal.verified:
            with self._lock:
                first = url not in self._verified_once
                self._verified_once.add(url)
            if first:
                self.record(url, "verify", 200, h)
                h._send(200, "text/html; charset=utf-8", _VERIFY, head=head)
                return
        self.record(url, "page", 200, h)
        h._send(200, resp.ctype, resp.body, head=head)


@contextmanager
def serve_portal(
    datasets: Path, *, port: int = 0, now: datetime | None = None
) -> Iterator[PortalServer]:
    """Build the portal and serve it in a thread for the ``with`` block."""
    server = PortalServer(build_portal(datasets, now=now), port)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


#: The repository, where the commands run.
REPO = Path(__file__).resolve().parents[1]
#: The key ``scrapy addsite`` writes the portal's row under.
KEY = "zhongzhou"
#: The commands' settings against a local site: no politeness delay, INFO logs.
FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=INFO")


def scrapy(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``scrapy ARGS`` in a child process of the repository, in ``env`` (the proxy's)."""
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


@dataclass
class Nights:
    """What a new user runs on the portal, in a scratch folder: ``addsite --write`` and
    ``crawl`` (night one), then, once :meth:`night_two` has released night two's stories,
    ``sites check --json``, ``nightly`` and ``sites check --json`` again. The acceptance
    test and ``benchmarks/reach_portal.py`` run the same commands through this."""

    server: PortalServer
    folder: Path
    addsite: subprocess.CompletedProcess[str] | None = None
    crawl: subprocess.CompletedProcess[str] | None = None
    check_before: subprocess.CompletedProcess[str] | None = None
    nightly: subprocess.CompletedProcess[str] | None = None
    check_after: subprocess.CompletedProcess[str] | None = None

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.folder / 'corpus.db'}"

    def _settings(self) -> tuple[str, ...]:
        sites = self.folder / "sites.toml"
        return ("-s", f"SITES_FILE={sites}", "-s", f"DATABASE_URL={self.database_url}", *FAST)

    def _scrapy(self, *args: str) -> subprocess.CompletedProcess[str]:
        return scrapy(self.server.env(), *args, *self._settings())

    def night_one(self) -> None:
        self.addsite = self._scrapy("addsite", HOME, "--key", KEY, "--write")
        if self.addsite.returncode == 0:
            self.crawl = self._scrapy("crawl", KEY)

    def night_two(self) -> None:
        self.server.release()
        self.check_before = self._scrapy("sites", "check", KEY, "--json")
        self.nightly = self._scrapy(
            "nightly", "--sites", KEY,
            "-s", f"NIGHTLY_LOCK={self.folder / 'nightly.lock'}",
            "-s", f"NIGHTLY_JOBDIR={self.folder / 'jobs'}",
            "-s", f"NIGHTLY_WARC_DIR={self.folder / 'warc'}",
        )  # fmt: skip
        self.check_after = self._scrapy("sites", "check", KEY, "--json")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.portalsite", description=__doc__.split("\n\n")[0]
    )
    here = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
    parser.add_argument("--datasets", type=Path, default=here, help=f"default {here}")
    parser.add_argument("--serve", action="store_true", help="serve until interrupted")
    parser.add_argument("--port", type=int, default=0, help="proxy port (default: a free one)")
    parser.add_argument("--released", action="store_true", help="start on night two")
    parser.add_argument("--truth", type=Path, help="write the truth as JSON to this file")
    args = parser.parse_args(argv)
    portal = build_portal(args.datasets)
    w = sys.stdout.write
    if args.truth:
        args.truth.write_text(
            json.dumps(portal.truth_json(), ensure_ascii=False, indent=1), "utf-8"
        )
        w(f"truth written to {args.truth}\n")
    kinds: dict[str, int] = {}
    for kind in portal.kinds.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    w(f"{NAME} {HOME}  stories={len(portal.stories)} kinds={kinds} "
      f"multipage={len(portal.multipage)} sitemap={len(portal.window())} "
      f"sitemap_only={len(portal.sitemap_only)} challenged={len(portal.challenged)} "
      f"verified={len(portal.verified)} lists={len(portal.list_urls())}\n")  # fmt: skip
    if not args.serve:
        return 0
    server = PortalServer(portal, args.port, released=args.released)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    w(f"proxy {server.proxy}\n  export http_proxy={server.proxy} HTTP_PROXY={server.proxy}\n"
      "type 'release' + Enter to publish night two's articles; Ctrl-C to stop\n")  # fmt: skip
    sys.stdout.flush()
    try:
        for line in sys.stdin:
            if line.strip() == "release":
                server.release()
                w("released: night two's articles are published\n")
                sys.stdout.flush()
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
