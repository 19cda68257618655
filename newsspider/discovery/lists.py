"""List pages: a channel's further pages, found by their pager, and the regexes of their forms.

A portal lists a channel's articles over pages: ``/guonei/`` then ``/guonei/index_2.html``
(or ``list_2.shtml``, ``?page=2``, ``&p=2``, ``/page/2/``, ``index2.htm``), linked from a
pager of numbers, a 下一页/下页/后页/Next link or a ``rel=next`` link. Discovery follows
that pager a few pages deep (``DISCOVERY_LIST_PAGES``) so that the row it writes knows the
form of the further pages and how deep they go.

- :func:`next_page` is the pager's next page of a list page: a ``rel=next`` link (``<a>``
  or ``<link>``), else a link whose text says "next", else the link to the page numbered
  one more than this one; each must be a page of the same channel (:func:`is_page_of`).
- :func:`page_links` are all the further pages of the channel the page links (its pager).
- :func:`list_patterns` writes one regex per channel URL form and one per pager form, the
  page number a ``\\d+`` (``^https?://www\\.x\\.cn/(?:guoji|guonei)/index_\\d+\\.html``):
  general in the number, so pages discovery never fetched match too; the channels' words
  stay the alternation of those seen, as for any list form that other pages share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import parse_qsl, urljoin, urlsplit

from scrapy.http import TextResponse
from w3lib.url import canonicalize_url

from newsspider.discovery.shapes import END, pattern, shape_of

__all__ = [
    "NEXT_WORDS",
    "PAGE_PARAMS",
    "is_page_of",
    "list_patterns",
    "next_page",
    "page_links",
    "page_number",
]

#: A link's text that says "the next page" (compared without spaces, lower-case).
NEXT_WORDS = frozenset(
    {"下一页", "下页", "后页", "下一頁", "下頁", "後頁", "next", "nextpage", "next›", "next»",
     "›", "»", ">", ">>", "下一页>", "下一页>>", "下一页»", "后页>", "后页>>", "下页>"}
)  # fmt: skip
#: Query parameters that number a list's pages.
PAGE_PARAMS = frozenset(
    {"page", "p", "pn", "pg", "pi", "pageno", "page_no", "pagenum", "pageindex", "curpage",
     "cp", "paged"}
)  # fmt: skip
#: The last path segment of a numbered page: index_2.html, list_2.shtml, index2.htm, 2.html.
_PAGE_FILE = re.compile(
    r"(?P<stem>(?:index|list|default|more|node)[_-]?)(?P<n>\d{1,4})"
    r"(?P<ext>\.(?:s?html?|php|aspx?|jsp))",
    re.I,
)
#: /page/2/, /p/2, /list/2
_PAGE_DIR = re.compile(r"(?P<stem>page|p|pages)/(?P<n>\d{1,4})/?", re.I)
#: The index file a query-numbered page may name (``/guoji/index.html?page=2``).
_INDEX = re.compile(r"(?:index|default)\.(?:s?html?|php|aspx?|jsp)", re.I)
_SPACE = re.compile(r"\s+")


def _base(section: str) -> str:
    """A section URL without its query and trailing index file or slash."""
    path = section.split("?")[0].split("#")[0]
    path = re.sub(r"/(?:index|default)\.(?:s?html?|php|aspx?|jsp)$", "/", path, flags=re.I)
    return path.rstrip("/")


def is_page_of(url: str, section: str) -> bool:
    """Is ``url`` a further page of ``section`` by its form: below it, the page number in a
    file name (``index_2.html``), a folder (``page/2/``) or a query parameter
    (``?page=2``, ``&p=2``)? The section itself is not."""
    return page_number(url, section) is not None and _key(url) != _key(section)


def _key(url: str) -> str:
    return canonicalize_url(url, keep_fragments=False)


def page_number(url: str, section: str) -> int | None:
    """The page number of ``url`` as a page of ``section`` (1 for the section itself),
    None when it is not one of its pages."""
    if _key(url) == _key(section):
        return 1
    base = _base(section)
    parts = urlsplit(url)
    path = f"{parts.scheme}://{parts.netloc}{parts.path}"
    if not path.startswith(base) or not base:
        return None
    rest = path[len(base) :]
    if rest and not rest.startswith("/"):
        return None
    rest = rest.lstrip("/")
    own = dict(parse_qsl(urlsplit(section).query, keep_blank_values=True))
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    numbered = [
        k for k in query if k.lower() in PAGE_PARAMS and query[k].isdigit() and k not in own
    ]
    if numbered:
        others = {k: v for k, v in query.items() if k != numbered[0]}
        if others == own and (not rest or _INDEX.fullmatch(rest)):
            return int(query[numbered[0]])
        return None
    if query != own:
        return None
    m = _PAGE_FILE.fullmatch(rest) or _PAGE_DIR.fullmatch(rest)
    return int(m.group("n")) if m else None


def _text(element: object) -> str:
    return _SPACE.sub("", "".join(element.xpath(".//text()").getall())).lower()  # type: ignore[attr-defined]


def next_page(response: TextResponse, section: str) -> str | None:
    """The next page of the list page ``response`` (a page of ``section``), by its pager
    (module docstring); None when it has none."""
    here = page_number(response.url, section) or 1
    candidates: list[str] = []
    for href in response.xpath(
        "//a[contains(concat(' ', normalize-space(@rel), ' '), ' next ')]/@href"
        " | //link[contains(concat(' ', normalize-space(@rel), ' '), ' next ')]/@href"
    ).getall():
        candidates.append(urljoin(response.url, href))
    for a in response.xpath("//a[@href]"):
        if _text(a) in NEXT_WORDS:
            candidates.append(urljoin(response.url, a.attrib["href"]))
    for url in candidates:
        n = page_number(url, section)
        if n is not None and n > here:
            return _key(url)
    numbered = sorted(
        (n, _key(u)) for u in page_links(response, section) if (n := page_number(u, section))
    )
    for n, url in numbered:
        if n == here + 1:
            return url
    return None


def page_links(response: TextResponse, section: str) -> list[str]:
    """The further pages of ``section`` that ``response`` links (its pager), canonical,
    in page order."""
    found: dict[str, int] = {}
    for href in response.xpath("//a/@href | //link[@rel]/@href").getall():
        url = urljoin(response.url, href.strip())
        if not url.startswith(("http://", "https://")):
            continue
        n = page_number(url, section)
        if n is not None and n > 1:
            found.setdefault(_key(url), n)
    return sorted(found, key=lambda u: found[u])


def _pager_form(url: str, section: str) -> tuple[str, str]:
    """The pager form of a page of ``section``: ``("path", "/index_\\d+\\.html")``,
    what follows the section's base with its numbers as ``\\d+``; or ``("query", NAME)``,
    the parameter that numbers it."""
    parts = urlsplit(url)
    own = dict(parse_qsl(urlsplit(section).query, keep_blank_values=True))
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    numbered = [k for k in query if k.lower() in PAGE_PARAMS and k not in own]
    if numbered:
        return "query", numbered[0]
    rest = f"{parts.scheme}://{parts.netloc}{parts.path}"[len(_base(section)) :]
    return "path", re.sub(r"\d+", r"\\d+", re.escape(rest))


def list_patterns(sections: Sequence[str], pages: Iterable[str]) -> list[str]:
    """The list patterns of a row: one per URL form of its channel pages, and one per
    (channel form, pager form) of their further pages (module docstring). A page of a
    channel whose address has a query (``list.php?cid=3&page=2``) gets the regex of its
    own URL form instead."""
    by_family: dict[tuple, list[str]] = {}
    for url in sections:
        by_family.setdefault(shape_of(url).coarse, []).append(url)
    out = [pattern([shape_of(u) for u in urls], exclusive=True) for urls in by_family.values()]
    forms: dict[tuple, list[str]] = {}
    plain: dict[tuple, list[str]] = {}
    for page in dict.fromkeys(pages):
        owners = [s for s in sections if is_page_of(page, s)]
        if not owners:
            continue
        section = max(owners, key=len)
        if urlsplit(section).query:
            plain.setdefault(shape_of(page).coarse, []).append(page)
            continue
        forms.setdefault((shape_of(section).coarse, *_pager_form(page, section)), []).append(
            section
        )
    for (family, kind, form), owners in forms.items():
        # Every channel of the form gets the pager form one of them shows: a portal's
        # channels share their templates, and a channel's pages discovery did not follow
        # are then lists too.
        alike = [u for u in sections if shape_of(u).coarse == family and not urlsplit(u).query]
        head = pattern(
            [shape_of(u) for u in dict.fromkeys(alike or owners)], exclusive=True, whole=False
        )
        head = head.removesuffix("/?").removesuffix("/")
        if kind == "query":
            out.append(
                f"{head}/?(?:{_INDEX.pattern})?\\?(?=(?:[^#]*&)?{re.escape(form)}=\\d+(?:[&#]|$))"
            )
        else:
            out.append(head + form + END)
    for urls in plain.values():
        out.append(pattern([shape_of(u) for u in urls], exclusive=True))
    return list(dict.fromkeys(out))
