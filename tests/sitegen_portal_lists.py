"""A WARC replay archive of two fictional portals whose articles sit behind paginated lists.

The development fixture of discovery's reach (issue 33, build item 1): a site shaped like
most Chinese portals, home page -> channel pages -> lists paginated several pages deep ->
articles, on which ``scrapy addsite URL --write`` used to keep only the home page as a start
page (the channels were "other") so that ``scrapy crawl`` stored 2 of 30 articles; and a
site whose lists show only the newest articles, the rest listed in its sitemap alone.

=========  ==============================================  =====================================
key        home / article URL form                         way in
=========  ==============================================  =====================================
zhongzhou  https://www.zhongzhou-news.cn/                  four channels, five list pages each,
           ``/{channel}/YYYYMMDD/NNNNNNN.html``            six headlines a page, each channel
                                                           with its own pager: ``guonei``
                                                           ``index_N.html`` with a window of
                                                           numbers (1 2 3 下一页), ``guoji``
                                                           ``?page=N`` with 上一页/下一页 only,
                                                           ``keji`` ``/page/N/`` with a
                                                           ``rel=next`` 后页 link only, ``shehui``
                                                           ``list_N.shtml`` with every number
                                                           and a lead paragraph per headline;
                                                           the home page links the 8 newest
xiyu       https://www.xiyu-ribao.cn/                      three channels that show their 4
           ``/news/NNNNNN.shtml``                          newest articles and no pager;
                                                           robots.txt names ``/sitemap.xml``,
                                                           which lists every article
=========  ==============================================  =====================================

Both have pages that are neither lists nor articles (about, login, contact, a video page),
as real portals do. Article pages are real saved pages of ``../shared/datasets`` (read when
the archive is built, never copied into the repository), served with their bytes untouched:
zhongzhou takes the cx163-zh pages with gold times and the gne-unlabelled-zh pages, xiyu
the cwced-zh pages; a page's time is as in :mod:`tests.sitegen`. Deterministic: same
inputs, same bytes (WARC record ids and dates aside).

API::

    build_portal_archive(datasets, out_dir) -> (archive_path, [FakeSite])
    PORTAL_KEYS = ("zhongzhou", "xiyu")

By hand::

    python -m tests.sitegen_portal_lists ../shared/datasets /tmp/portal
    scrapy addsite https://www.zhongzhou-news.cn/ --key zhongzhou --write \\
        -s REPLAY_ARCHIVE=/tmp/portal/portal.warc.gz -s SITES_FILE=/tmp/portal/sites.toml
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from newsspider.replay import _open_writer, write_response_record
from tests.sitegen import (
    CST,
    FakeSite,
    _Case,
    _e,
    _Link,
    _load,
    _Out,
    _page,
    _robots,
    _ul,
    _xml,
)

__all__ = ["PORTAL_KEYS", "build_portal_archive", "main"]

PORTAL_KEYS = ("zhongzhou", "xiyu")
_HTML = "text/html; charset=utf-8"

# --------------------------------------------------------------------------
# zhongzhou: four channels, four pagers

_ZZ = "https://www.zhongzhou-news.cn"
#: (slug, label, pager): how each channel's pages are addressed and linked.
_ZZ_CHANNELS = (
    ("guonei", "国内", "index"),
    ("guoji", "国际", "query"),
    ("keji", "科技", "path"),
    ("shehui", "社会", "list"),
)
_ZZ_PER_PAGE = 6
_ZZ_PAGES = 5


def _zz_page_url(slug: str, pager: str, page: int) -> str:
    if page == 1:
        return f"{_ZZ}/{slug}/"
    return {
        "index": f"{_ZZ}/{slug}/index_{page}.html",
        "query": f"{_ZZ}/{slug}/?page={page}",
        "path": f"{_ZZ}/{slug}/page/{page}/",
        "list": f"{_ZZ}/{slug}/list_{page}.shtml",
    }[pager]


def _zz_pager(slug: str, pager: str, page: int, pages: int) -> tuple[str, str]:
    """The pager's HTML and a ``<link rel=next>`` for the head (keji only)."""
    url = lambda k: _e(_zz_page_url(slug, pager, k))  # noqa: E731
    parts: list[str] = []
    head = ""
    if pager == "index":  # a window: the current page and the next two, then 下一页
        if page > 1:
            parts.append(f'<a href="{url(page - 1)}">上一页</a>')
        for k in range(max(1, page - 2), min(pages, page + 2) + 1):
            parts.append(f"<span>{k}</span>" if k == page else f'<a href="{url(k)}">{k}</a>')
        if page < pages:
            parts.append(f'<a href="{url(page + 1)}">下一页</a>')
    elif pager == "query":  # previous and next only
        if page > 1:
            parts.append(f'<a href="{url(page - 1)}">上一页</a>')
        parts.append(f"<span>第{page}页</span>")
        if page < pages:
            parts.append(f'<a href="{url(page + 1)}">下一页</a>')
    elif pager == "path":  # a rel=next link, and 后页
        parts.append(f"<span>{page} / {pages}</span>")
        if page < pages:
            parts.append(f'<a rel="next" href="{url(page + 1)}">后页 &gt;</a>')
            head = f'<link rel="next" href="{url(page + 1)}">'
    else:  # every number
        for k in range(1, pages + 1):
            parts.append(f"<span>{k}</span>" if k == page else f'<a href="{url(k)}">{k}</a>')
        if page < pages:
            parts.append(f'<a href="{url(page + 1)}">下页</a>')
    return '<div class="pages">' + " ".join(parts) + "</div>", head


def _chrome(name: str, home: str, nav: str, domain: str) -> tuple[str, str]:
    header = f"""<div class="topbar"><a href="https://passport.{domain}/login">登录</a> |
<a href="{home}/about/contact.html">联系我们</a></div>
<header class="header"><a class="logo" href="{home}/">{_e(name)}</a>
<nav class="nav"><ul>
{nav}
</ul></nav></header>"""
    footer = f"""<footer class="footer">
<p><a href="{home}/about/">关于我们</a> | <a href="{home}/about/ads.html">广告服务</a> |
<a href="{home}/about/contact.html">联系我们</a></p>
<p>{_e(name)} 版权所有 未经授权禁止转载</p></footer>"""
    return header, footer


def _numbered(cases: Sequence[_Case], salt: str, start: int) -> list[tuple[_Case, int]]:
    """Cases oldest first with growing ids (steps from a hash of the case: stable)."""
    out = []
    number = start
    for case in sorted(cases, key=lambda c: (c.time.timestamp(), c.source)):
        number += 3 + int(case.digest(salt)[:2], 16) % 17
        out.append((case, number))
    return out


def _summaries(chunk: Sequence[tuple[str, _Case, str]]) -> str:
    """Headlines each with its lead paragraph and time: a channel page whose text is
    mostly not links (judged no list by its link density, the issue's failing portal)."""
    items = [
        f'<div class="item"><h3><a href="{_e(url)}">{_e(case.headline)}</a></h3>'
        f"<p>{_e(case.summary)}……{_e(case.summary[::-1])}</p>"
        f'<span class="time">{case.time.astimezone(CST):%Y-%m-%d %H:%M}</span></div>'
        for url, case, _ in chunk
    ]
    return '<div class="news-list">\n' + "\n".join(items) + "\n</div>"


def _zz_build(cases: list[_Case]) -> tuple[_Out, FakeSite]:
    out = _Out()
    name = "中州新闻网"
    capacity = len(_ZZ_CHANNELS) * _ZZ_PER_PAGE * _ZZ_PAGES
    picked = sorted(cases, key=lambda c: (-c.time.timestamp(), c.source))[:capacity]
    arts: list[tuple[str, _Case, str]] = []  # url, case, channel slug
    for i, (case, number) in enumerate(_numbered(picked, "zz", 4_310_000)):
        slug = _ZZ_CHANNELS[i % len(_ZZ_CHANNELS)][0]
        day = case.time.astimezone(CST).strftime("%Y%m%d")
        arts.append((f"{_ZZ}/{slug}/{day}/{number}.html", case, slug))
    arts.sort(key=lambda a: (-a[1].time.timestamp(), a[1].source))
    nav = "\n".join(
        [f'<li><a href="{_ZZ}/">首页</a></li>']
        + [f'<li><a href="{_ZZ}/{slug}/">{label}</a></li>' for slug, label, _ in _ZZ_CHANNELS]
        + [f'<li><a href="{_ZZ}/video/88120.html">视频</a></li>']
    )
    header, footer = _chrome(name, _ZZ, nav, "zhongzhou-news.cn")

    def page(title: str, main: str, head: str = "") -> bytes:
        return _page(
            title=f"{title}_{name}" if title != name else title, charset="utf-8",
            head_extra=head, header=header, main=main, footer=footer,
        )  # fmt: skip

    def link(a: tuple[str, _Case, str]) -> _Link:
        return _Link(a[0], a[1].headline, a[1].time)

    lists: list[str] = [f"{_ZZ}/"]
    main = '<div class="focus"><h2>要闻</h2>\n' + _ul([link(a) for a in arts[:8]]) + "</div>"
    for slug, label, _ in _ZZ_CHANNELS:
        main += f'\n<div class="box"><h2><a href="{_ZZ}/{slug}/">{label}</a></h2></div>'
    out.add(f"{_ZZ}/", page(name, main), _HTML)
    for slug, label, pager in _ZZ_CHANNELS:
        mine = [a for a in arts if a[2] == slug]
        pages = -(-len(mine) // _ZZ_PER_PAGE)
        for k in range(1, pages + 1):
            chunk = mine[(k - 1) * _ZZ_PER_PAGE : k * _ZZ_PER_PAGE]
            pager_html, head = _zz_pager(slug, pager, k, pages)
            body = (
                f'<div class="crumb"><a href="{_ZZ}/">首页</a> &gt; {label}</div>\n'
                f'<h1 class="chan">{label}</h1>\n'
                + (
                    _summaries(chunk)
                    if slug == "shehui"
                    else _ul([link(a) for a in chunk], "news-list")
                )
                + "\n"
                + pager_html
            )
            url = _zz_page_url(slug, pager, k)
            out.add(url, page(label if k == 1 else f"{label} 第{k}页", body, head), _HTML)
            lists.append(url)
    others = [
        (f"{_ZZ}/about/", "关于我们", "<p>中州新闻网创办于2001年，是中原地区的综合新闻门户。</p>"),
        (f"{_ZZ}/about/contact.html", "联系我们", "<p>新闻热线：0371-0000000</p>"),
        (f"{_ZZ}/about/ads.html", "广告服务", "<p>广告合作请来电。</p>"),
        (f"{_ZZ}/video/88120.html", "视频：黄河岸边的清晨",
         '<h1>视频：黄河岸边的清晨</h1><div class="player"><video src="/v/88120.mp4">'
         "</video></div><p>2015-07-04 08:00</p>"),
        ("https://passport.zhongzhou-news.cn/login", "登录",
         '<form method="post"><input name="u"><input name="p" type="password"></form>'),
    ]  # fmt: skip
    for url, title, main in others:
        out.add(url, page(title, main), _HTML)
    out.add(f"{_ZZ}/robots.txt", _robots("User-agent: *", "Disallow: /search"), "text/plain")
    for url, case, _ in arts:
        out.add(url, case.raw, case.content_type)
    site = FakeSite(
        key="zhongzhou",
        name=name,
        home=f"{_ZZ}/",
        hosts=("www.zhongzhou-news.cn",),
        reach="lists",
        article_urls=tuple(a[0] for a in arts),
        list_urls=tuple(lists),
        other_urls=(*(u for u, _, _ in others), f"{_ZZ}/robots.txt"),
        titles={a[0]: a[1].gold_title for a in arts},
        published={a[0]: a[1].time.isoformat() for a in arts},
        sources={a[0]: a[1].source for a in arts},
        article_regex=r"^https://www\.zhongzhou-news\.cn/(?:guonei|guoji|keji|shehui)/\d{8}/\d{7}\.html$",
        sections={a[0]: a[2] for a in arts},
    )
    return out, site


# --------------------------------------------------------------------------
# xiyu: lists of the newest four, the rest only in the sitemap

_XY = "https://www.xiyu-ribao.cn"
_XY_CHANNELS = (("yaowen", "要闻"), ("difang", "地方"), ("shehui", "社会"))
_XY_SHOWN = 4


def _xy_build(cases: list[_Case]) -> tuple[_Out, FakeSite]:
    out = _Out()
    name = "西域日报"
    arts: list[tuple[str, _Case, str]] = []
    for i, (case, number) in enumerate(_numbered(cases, "xy", 552_000)):
        slug = _XY_CHANNELS[i % len(_XY_CHANNELS)][0]
        arts.append((f"{_XY}/news/{number}.shtml", case, slug))
    arts.sort(key=lambda a: (-a[1].time.timestamp(), a[1].source))
    nav = "\n".join(
        [f'<li><a href="{_XY}/">首页</a></li>']
        + [f'<li><a href="{_XY}/{slug}/">{label}</a></li>' for slug, label in _XY_CHANNELS]
    )
    header, footer = _chrome(name, _XY, nav, "xiyu-ribao.cn")

    def page(title: str, main: str) -> bytes:
        return _page(
            title=f"{title}_{name}" if title != name else title, charset="utf-8",
            header=header, main=main, footer=footer,
        )  # fmt: skip

    def link(a: tuple[str, _Case, str]) -> _Link:
        return _Link(a[0], a[1].headline, a[1].time)

    lists = [f"{_XY}/"]
    main = '<div class="focus"><h2>头条</h2>\n' + _ul([link(a) for a in arts[:3]]) + "</div>"
    out.add(f"{_XY}/", page(name, main), _HTML)
    for slug, label in _XY_CHANNELS:
        mine = [a for a in arts if a[2] == slug][:_XY_SHOWN]
        body = f'<h1 class="chan">{label}</h1>\n' + _ul([link(a) for a in mine], "news-list")
        body += '\n<div class="more">更多新闻请见客户端</div>'
        out.add(f"{_XY}/{slug}/", page(label, body), _HTML)
        lists.append(f"{_XY}/{slug}/")
    sitemap = f"{_XY}/sitemap.xml"
    entries = "\n".join(
        f"<url><loc>{_e(u)}</loc><lastmod>{c.time.isoformat()}</lastmod></url>" for u, c, _ in arts
    )
    out.add(
        sitemap,
        _xml(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{entries}\n</urlset>\n'
        ),
        "application/xml",
    )
    robots = f"{_XY}/robots.txt"
    out.add(robots, _robots("User-agent: *", "Allow: /", f"Sitemap: {sitemap}"), "text/plain")
    others = [(f"{_XY}/about/", "关于我们", "<p>西域日报社主办。</p>"),
              (f"{_XY}/about/contact.html", "联系我们", "<p>电话：0991-0000000</p>")]  # fmt: skip
    for url, title, main in others:
        out.add(url, page(title, main), _HTML)
    for url, case, _ in arts:
        out.add(url, case.raw, case.content_type)
    site = FakeSite(
        key="xiyu",
        name=name,
        home=f"{_XY}/",
        hosts=("www.xiyu-ribao.cn",),
        reach="sitemap",
        article_urls=tuple(a[0] for a in arts),
        list_urls=tuple(lists),
        other_urls=(*(u for u, _, _ in others), sitemap, robots),
        titles={a[0]: a[1].gold_title for a in arts},
        published={a[0]: a[1].time.isoformat() for a in arts},
        sources={a[0]: a[1].source for a in arts},
        sitemaps=(sitemap,),
        article_regex=r"^https://www\.xiyu-ribao\.cn/news/\d{6}\.shtml$",
        sections={a[0]: a[2] for a in arts},
    )
    return out, site


_BUILDS: tuple[tuple[str, Callable[[Path], list[_Case]], Callable], ...] = (
    (
        "zhongzhou",
        lambda d: (
            [c for c in _load(d, "cx163-zh") if c.gold_time] + list(_load(d, "gne-unlabelled-zh"))
        ),
        _zz_build,
    ),
    ("xiyu", lambda d: list(_load(d, "cwced-zh")), _xy_build),
)


def build_portal_archive(datasets: Path, out_dir: Path) -> tuple[Path, list[FakeSite]]:
    """Write both portals into ``out_dir/portal.warc.gz``; return it and the truth."""
    datasets = Path(datasets).resolve()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "portal.warc.gz"
    part = path.with_name(path.name + ".part")
    sites: list[FakeSite] = []
    with open(part, "wb") as fh:
        writer = _open_writer(fh, path)
        writer.write_record(
            writer.create_warcinfo_record(
                path.name, {"software": "newsspider tests/sitegen_portal_lists.py"}
            )
        )
        for _, pick, build in _BUILDS:
            out, site = build(pick(datasets))
            for url, body, ctype in out.records:
                write_response_record(writer, url, body, [("Content-Type", ctype)])
            sites.append(site)
    part.replace(path)
    return path, sites


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sitegen_portal_lists")
    parser.add_argument("datasets", type=Path, help="the shared/datasets folder")
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    path, sites = build_portal_archive(args.datasets, args.out_dir)
    sys.stdout.write(f"{path}\n")
    for s in sites:
        sys.stdout.write(
            f"{s.key:10} {s.home:34} articles={len(s.article_urls)} lists={len(s.list_urls)}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
