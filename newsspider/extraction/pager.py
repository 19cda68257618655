"""Multi-page articles: the pager of an article page, its page URLs, and the pages' bodies
joined into one text. Pure functions over URLs, lxml trees and text.

Portals split long stories over several pages behind a pager inside or just after the body
(人民网 ``<div class="zdfy clearfix">``, 新华网 ``#div_currpage``, 中新网
``#function_code_page``, 新浪 ``<p class="page">`` in ``#artibody``, 腾讯 ``#ArtPLink``),
the pages numbered in the URL: ``a_2.shtml``, ``c_1127517461_2.htm``, ``c1001-321195-2.html``,
``index_2.htm``, ``?page=2``, ``&p=2``. A crawl that stores the first page alone keeps a
fragment of the story, and one that stores each page keeps fragments under several rows.

- :func:`page_number` and :func:`first_page_url` read those URL forms, so a link to page 3
  can be taken back to its page 1 (the row every page of the article is stored under);
- :func:`next_page_url` finds the link to the page after this one: a site row's
  ``next_page`` rule (an XPath, or a regex over link URLs) when it has one, else
  ``rel=next``, then a link reading 下一页 / 下页 / 后页 / Next, then the numbered link of
  the following page, each only when it leads to a page of the same article (same URL
  stem), so a "next story" link never glues two stories together;
- :func:`single_page_url` finds a 全文 / 阅读全文 / 单页阅读 link of a paged article, which
  a crawl prefers over walking the pages;
- :func:`join_pages` joins the pages' extracted bodies in order, without the pager's lines
  (:func:`strip_pager_lines`: "上一页 1 2 3 下一页", "共3页") and without the lines every
  page repeats (a byline or an editor's line printed on each page is the page template's,
  not the story's);
- :func:`might_have_pager` is the byte test a crawl runs before parsing a page at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from lxml import etree, html

__all__ = [
    "PAGE_QUERY_KEYS",
    "first_page_url",
    "is_xpath_rule",
    "join_pages",
    "might_have_pager",
    "next_page_url",
    "page_number",
    "same_article",
    "single_page_url",
    "single_version_of",
    "strip_pager_lines",
]

#: Query parameters that number an article's pages (``?page=2``, ``&p=2``).
PAGE_QUERY_KEYS = ("page", "p", "pn", "pg", "pageno", "pagenum", "curpage", "cp")
#: The last path segment of a numbered page: ``stem`` ``_``/``-`` ``n`` ``.ext``. One to
#: three digits: ``c_1127517461.htm`` (Xinhua's id) is not page 1127517461 of ``c.htm``.
_PATH_PAGE = re.compile(
    r"^(?P<stem>.*[^_-])(?P<sep>[_-])(?P<n>[1-9]\d{0,2})(?P<ext>\.(?:s?html?|php|aspx?|jsp))$",
    re.I,
)
_MAX_QUERY_PAGE = 999

#: Link texts of the next page (compared without spaces, case-folded).
_NEXT_TEXTS = frozenset(
    t.casefold()
    for t in (
        "下一页", "下页", "后页", "后一页", "下一頁", "下頁", "後頁", "next", "nextpage",
        "next»", "next>", "next›", "下一页>", "下一页>>", "下一页»", "下一页›", "下一页→",
        "下页>", "下页>>", "后页>", "后页>>", "下一页〉", ">", ">>", "»", "›",
    )
)  # fmt: skip
#: Link texts of a one-page version of a paged article.
_SINGLE_TEXTS = frozenset(
    t.casefold()
    for t in (
        "全文", "阅读全文", "单页阅读", "单页", "全文阅读", "显示全文", "查看全文", "全文浏览",
        "单页浏览", "单页显示", "在本页阅读全文", "本页阅读全文", "不分页阅读", "不分页显示",
        "閱讀全文", "單頁閱讀", "singlepage", "viewassinglepage", "viewall",
    )
)  # fmt: skip
#: The one-page forms of a URL's stem: ``a_all.htm`` (Tencent), ``?page=all``.
_SINGLE_STEM = re.compile(r"[_-](?:all|full|single|quanwen)$", re.I)
_SPACES = re.compile(r"[\s\u3000\xa0]+")

#: What a pager line is made of: page words, numbers, arrows and separators.
_PAGER_TOKEN = re.compile(
    r"(?:上一页|下一页|上一頁|下一頁|上页|下页|前页|后页|後頁|首页|尾页|末页|最后一页|"
    r"第\s*\d+\s*页|共\s*\d+\s*页|\d+\s*/\s*\d+|\d+|[<>«»‹›〈〉…|·.\-\[\]【】()（）→←]+|"
    r"prev(?:ious)?|next|first|last|page|全文|阅读全文|单页阅读|跳转|到第|页|go)",
    re.I,
)
_PAGE_WORD = re.compile(
    r"上一页|下一页|上一頁|下一頁|上页|下页|前页|后页|後頁|首页|尾页|末页|第\s*\d+\s*页|"
    r"共\s*\d+\s*页|prev|next",
    re.I,
)
_NUMBER = re.compile(r"\d+")

#: Byte markers of a pager: 下一页 / 下页 / 后页 in UTF-8 and GBK, rel=next.
#: ``rel=next`` as pages write it (``<link rel="next">`` in the head, ``<a rel=next>``).
_REL_NEXT = (b'rel="next"', b"rel=next", b"rel='next'")


def _query_page(parts) -> tuple[int, str] | None:
    """(page number, its key) of a URL numbered by its query, else None."""
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key.lower() in PAGE_QUERY_KEYS and value.isdigit():
            n = int(value)
            if 1 <= n <= _MAX_QUERY_PAGE:
                return n, key
    return None


def page_number(url: str) -> int:
    """Which page of its article ``url`` is by its form: ``a_3.shtml`` is 3, ``a.shtml`` 1."""
    parts = urlsplit(url)
    if (q := _query_page(parts)) is not None:
        return q[0]
    segment = parts.path.rsplit("/", 1)[-1]
    m = _PATH_PAGE.match(segment)
    return int(m["n"]) if m else 1


def first_page_url(url: str) -> str | None:
    """The first page of the article whose page ``url`` is, when ``url`` is a page after
    the first by its form (``a_2.shtml`` -> ``a.shtml``, ``index_3.htm`` -> ``index.htm``,
    ``?id=7&page=2`` -> ``?id=7``); None for any other URL (a first page, a plain URL).
    A fragment is dropped."""
    parts = urlsplit(url)
    if (q := _query_page(parts)) is not None:
        n, key = q
        if n < 2:
            return None
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query, True) if k != key])
        return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    head, _, segment = parts.path.rpartition("/")
    m = _PATH_PAGE.match(segment)
    if m is None or int(m["n"]) < 2:
        return None
    path = f"{head}/{m['stem']}{m['ext']}"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _article_key(url: str) -> tuple[str, str, str]:
    """What all pages of one article share: host, and the first page's path and query."""
    first = first_page_url(url) or url
    parts = urlsplit(first)
    query = "&".join(
        sorted(
            f"{k}={v}" for k, v in parse_qsl(parts.query, True) if k.lower() not in PAGE_QUERY_KEYS
        )
    )
    return (parts.netloc.lower(), parts.path, query)


def same_article(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` pages of one article by their URL forms (``x.html``,
    ``x_2.html``, ``x_3.html``; ``?id=1``, ``?id=1&page=2``)?"""
    return _article_key(a) == _article_key(b)


@cache
def is_xpath_rule(rule: str) -> bool:
    """A site row's ``next_page`` rule is an XPath when it starts with ``/`` or ``(`` and
    lxml compiles it (``//div[@id="div_currpage"]/a[.="下一页"]``), else a regex over link
    URLs (``/s/88-p(\\d+)\\.html`` is no XPath, so a regex)."""
    if not rule.lstrip().startswith(("/", "(")):
        return False
    try:
        etree.XPath(rule)
    except etree.XPathError:
        return False
    return True


def might_have_pager(body: bytes, url: str) -> bool:
    """The cheap test a crawl runs on a page's bytes before parsing anything: could
    :func:`next_page_url` find a next page here? Only when the bytes name the following
    page of ``url``'s article in one of its URL forms (``stem_2.ext``, ``stem-2.ext``;
    ``page=2``, ``p=2``... when the URL has a query), or hold a ``rel=next``: the general
    rule accepts no other link, whatever its text says (a 下一页 to an unrelated URL is not
    followed), so a page without either has no next page for it. Long needles, so each
    scan is quick (``benchmarks/pager_cost.py``)."""
    parts = urlsplit(first_page_url(url) or url)
    n = page_number(url) + 1
    segment = parts.path.rsplit("/", 1)[-1]
    stem, dot, ext = segment.rpartition(".")
    if dot and stem and any(f"{stem}{sep}{n}.{ext}".encode() in body for sep in ("_", "-")):
        return True
    if parts.query and any(f"{key}={n}".encode() in body for key in PAGE_QUERY_KEYS):
        return True
    return any(marker in body for marker in _REL_NEXT)


def _text(element: etree._Element) -> str:
    return _SPACES.sub("", "".join(element.itertext()))


def _links(tree: etree._Element, url: str) -> Iterable[tuple[etree._Element, str]]:
    """Every ``<a href>`` of the page with its absolute URL (``javascript:`` left out)."""
    for a in tree.iter("a"):
        href = (a.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        yield a, urljoin(url, href)


def _as_tree(page: etree._Element | str | bytes) -> etree._Element:
    if isinstance(page, (str, bytes)):
        return html.fromstring(page)
    return page


def _later(candidate: str, url: str, seen: Sequence[str]) -> bool:
    """A next-page candidate is a page of the same article that is not one already seen."""
    c = candidate.split("#", 1)[0]
    return c != url and c not in seen and same_article(c, url)


def _rule_next(tree: etree._Element, url: str, rule: str, seen: Sequence[str]) -> str | None:
    """The next page by a site row's ``next_page`` rule (:func:`is_xpath_rule`)."""
    if is_xpath_rule(rule):
        for found in tree.xpath(rule):
            href = found if isinstance(found, str) else found.get("href")
            if href and href.strip() and not href.strip().startswith("javascript:"):
                target = urljoin(url, href.strip()).split("#", 1)[0]
                if target != url and target not in seen:
                    return target
        return None
    regex = re.compile(rule)
    own = regex.search(url)
    if own is not None and own.groups() and (own.group(1) or "").isdigit():
        current = int(own.group(1))  # the rule numbers this page too
    else:
        current = page_number(url)
    numbered: list[tuple[int, str]] = []
    texts: list[str] = []
    for a, target in _links(tree, url):
        m = regex.search(target)
        if m is None or target == url or target in seen:
            continue
        if m.groups() and m.group(1) and m.group(1).isdigit():
            numbered.append((int(m.group(1)), target))
        elif _text(a).casefold() in _NEXT_TEXTS:
            texts.append(target)
    later = sorted((n, t) for n, t in numbered if n > current)
    if later:
        return later[0][1]
    return texts[0] if texts else None


def next_page_url(
    page: etree._Element | str | bytes,
    url: str,
    rule: str | None = None,
    seen: Sequence[str] = (),
) -> str | None:
    """The URL of the page after ``url`` in its article, or None when it is the last (or
    the only) page. ``page`` is the page's lxml tree (or its HTML); ``rule`` a site row's
    ``next_page`` (an XPath selecting the next page's link or its ``href``, or a regex over
    link URLs whose first group, when it has one, is the page number); ``seen`` the pages
    already fetched, never returned again (a pager that links back cannot loop).

    Without a rule, in order: a ``rel=next`` link or ``<link>``, a link reading 下一页 /
    下页 / 后页 / Next, the numbered link of page n+1; each only when it is a page of the
    same article by URL form (:func:`same_article`)."""
    tree = _as_tree(page)
    url = url.split("#", 1)[0]
    if rule:
        return _rule_next(tree, url, rule, seen)
    for el in tree.xpath("//a[@href][@rel] | //link[@href][@rel]"):
        if "next" in (el.get("rel") or "").lower().split():
            target = urljoin(url, el.get("href").strip())
            if _later(target, url, seen):
                return target.split("#", 1)[0]
    numbered: dict[int, str] = {}
    current = page_number(url)
    for a, target in _links(tree, url):
        if not _later(target, url, seen):
            continue
        text = _text(a)
        if text.casefold() in _NEXT_TEXTS or (a.get("title") or "").strip() in ("下一页", "下页"):
            if page_number(target) > current:
                return target.split("#", 1)[0]
        if text.isdigit():
            numbered.setdefault(int(text), target.split("#", 1)[0])
    following = numbered.get(current + 1)
    if following is not None and page_number(following) == current + 1:
        return following
    return None


def single_page_url(page: etree._Element | str | bytes, url: str) -> str | None:
    """The link of a one-page version of a paged article (全文 / 阅读全文 / 单页阅读), when
    it leads to the same article: a URL whose stem is the article's with ``_all`` (Tencent's
    ``002713_all.htm``), or the same page with ``page=all`` / another page parameter, or
    the article's own stem. None when the page offers none. Called on paged articles only:
    a 阅读全文 link on a list page is a link to an article, not a version of one."""
    tree = _as_tree(page)
    url = url.split("#", 1)[0]
    base = urlsplit(first_page_url(url) or url)
    stem = base.path.rsplit(".", 1)[0]
    for a, target in _links(tree, url):
        if _text(a).casefold() not in _SINGLE_TEXTS:
            continue
        t = urlsplit(target)
        if t.netloc.lower() != base.netloc.lower() or target.split("#", 1)[0] == url:
            continue
        t_stem = t.path.rsplit(".", 1)[0]
        query = dict(parse_qsl(t.query, True))
        if (
            t_stem == stem
            and t.query != base.query
            and any(k.lower() in (*PAGE_QUERY_KEYS, "all", "full", "single") for k in query)
        ):
            return target.split("#", 1)[0]
        if t_stem.startswith(stem) and _SINGLE_STEM.search(t_stem[len(stem) :] or "x"):
            return target.split("#", 1)[0]
    return None


def single_version_of(url: str) -> str | None:
    """The article URL whose one-page version ``url`` is by its form (``002713_all.htm`` ->
    ``002713.htm``, ``a-full.html`` -> ``a.html``), or None."""
    parts = urlsplit(url)
    head, _, segment = parts.path.rpartition("/")
    stem, dot, ext = segment.rpartition(".")
    m = _SINGLE_STEM.search(stem) if dot else None
    if m is None or m.start() == 0:
        return None
    path = f"{head}/{stem[: m.start()]}.{ext}"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _pager_line(line: str) -> tuple[bool, bool]:
    """(is the line made only of pager tokens, does it hold a page word or two numbers)."""
    rest = _PAGER_TOKEN.sub("", line)
    if _SPACES.sub("", rest):
        return False, False
    strong = bool(_PAGE_WORD.search(line)) or len(_NUMBER.findall(line)) >= 2
    return True, strong


def strip_pager_lines(text: str) -> str:
    """``text`` without its pager: each run of lines made only of pager tokens (page words,
    numbers, arrows: "上一页 1 2 3 下一页", "共3页", "1", "2", "下一页>>") that holds a page
    word or two numbers. A lone number line stays (a list item's "1", a score)."""
    lines = text.split("\n")
    marks = [_pager_line(line) if line.strip() else (False, False) for line in lines]
    keep = [True] * len(lines)
    k = 0
    while k < len(lines):
        if not marks[k][0]:
            k += 1
            continue
        end = k
        while end < len(lines) and marks[end][0]:
            end += 1
        if any(strong for _, strong in marks[k:end]):
            for j in range(k, end):
                keep[j] = False
        k = end
    return "\n".join(line for line, kept in zip(lines, keep, strict=True) if kept)


def join_pages(texts: Sequence[str]) -> str:
    """One article's body from its pages' bodies, in order: each page without its pager
    lines, and pages 2..n without the lines every page holds (the template's byline or
    editor line printed on each page; kept once, where page 1 has it). One line per block,
    as every body is."""
    pages = [[s for s in strip_pager_lines(t).split("\n") if s.strip()] for t in texts]
    if len(pages) > 1:
        common = set.intersection(*(set(p) for p in pages))
        pages = [pages[0], *([s for s in p if s not in common] for p in pages[1:])]
    return "\n".join(line for p in pages for line in p)
