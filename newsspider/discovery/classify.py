"""What a sampled page is: an article, a list, or neither; and what a group of samples is.

Discovery extracts every sampled page with the crawl's own method (block statistics, Zou
& Zhong 2011 §1.2, with the project's improvements) and reads three things off it:

- an **article** gives a title, a publication time and a body of at least
  :data:`MIN_BODY_CHARS` characters that is not mostly the text of links (a list page's
  headlines can pass for a body: block statistics picks the longest run of text blocks,
  and on a list page that run is the headlines);
- a **list** is link-dense: at least :data:`MIN_LIST_LINKS` links on the site, and most
  of its text is the text of links;
- anything else (a video with a one-line description, a gallery, a login form, a shell
  that needs scripts) is **other**.

A page whose HTML holds almost no text but a large script or JSON blob is flagged
``needs_scripts``: its text appears only after scripts run (issue: ``render`` and
``json_path`` in the site row).

A group's verdict is the kind most of its samples have, when they are at least
:data:`MAJORITY` of them; a tie or a spread is ``mixed`` and the group is left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lxml import html as lxml_html

from newsspider.extraction.article import extract_article
from newsspider.extraction.errors import ExtractionError

__all__ = [
    "MAJORITY",
    "MIN_BODY_CHARS",
    "MIN_LIST_LINKS",
    "PageVerdict",
    "group_verdict",
    "judge_page",
]

#: The shortest body that counts as an article (a video's description is one line).
MIN_BODY_CHARS = 150
#: Links on the site a list page has at least.
MIN_LIST_LINKS = 10
#: Share of a body's characters in lines that are the text of a link, above which the
#: "body" is a list of headlines.
MAX_BODY_LINK_SHARE = 0.5
#: Share of a page's text inside links above which it is link-dense.
MIN_LIST_LINK_SHARE = 0.4
#: Share of samples that decides a group.
MAJORITY = 0.6
#: A page with less visible text than this, beside a script blob this many times larger,
#: needs scripts to show its text.
SHELL_TEXT_CHARS = 200
SHELL_SCRIPT_RATIO = 5

_SPACE = re.compile(r"\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True, slots=True)
class PageVerdict:
    """One sampled page: its kind and what decided it."""

    url: str
    kind: str  # article | list | other
    title: str | None = None
    published: datetime | None = None
    body_chars: int = 0
    links: int = 0
    link_share: float = 0.0
    needs_scripts: bool = False
    html_title: str | None = None
    declared_charset: str | None = None
    lang: str | None = None
    reason: str = ""


def _norm(text: str) -> str:
    return _SPACE.sub("", text)


def judge_page(
    body: bytes,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    tz: str | None = None,
    same_site: Any = None,
) -> PageVerdict:
    """Extract ``body`` and decide its kind (module docstring). ``same_site(url)`` says
    whether a link is on the site (default: every http link counts)."""
    try:
        article = extract_article(body, url, headers=headers, tz=tz)
    except ExtractionError as exc:
        return PageVerdict(url, "other", reason=f"not an HTML page ({exc})")
    try:
        doc = lxml_html.document_fromstring(body)
    except (ValueError, lxml_html.etree.ParserError):
        return PageVerdict(url, "other", reason="unparsable")
    doc.make_links_absolute(url, resolve_base_href=True)
    for hidden in doc.xpath("//style|//noscript|//template"):
        hidden.drop_tree()
    scripts = sum(len(s.text_content()) for s in doc.xpath("//script"))
    for s in doc.xpath("//script"):
        s.drop_tree()
    page_text = _norm(doc.text_content())
    anchors = [a for a in doc.xpath("//a[@href]") if a.get("href", "").startswith("http")]
    on_site = [a for a in anchors if same_site is None or same_site(a.get("href"))]
    anchor_texts = {t for a in anchors if len(t := _norm(a.text_content())) >= 4}
    anchor_chars = sum(len(_norm(a.text_content())) for a in anchors)
    link_share = anchor_chars / len(page_text) if page_text else 0.0
    body_lines = [_norm(line) for line in article.text.splitlines() if _norm(line)]
    body_chars = sum(map(len, body_lines))
    linked = sum(len(line) for line in body_lines if _is_link_line(line, anchor_texts))
    body_link_share = linked / body_chars if body_chars else 1.0
    shell = len(page_text) < SHELL_TEXT_CHARS and scripts >= SHELL_SCRIPT_RATIO * max(
        len(page_text), 1
    )
    root = doc.getroottree().getroot()
    metas = doc.xpath("//meta[@charset]/@charset") or [
        m.split("charset=")[-1]
        for m in doc.xpath("//meta[@http-equiv]/@content")
        if "charset=" in m.lower()
    ]
    html_titles = doc.xpath("//title/text()")
    common = {
        "url": url,
        "title": article.title,
        "published": article.published,
        "body_chars": body_chars,
        "links": len(on_site),
        "link_share": round(link_share, 2),
        "needs_scripts": shell,
        "html_title": _SPACE.sub(" ", html_titles[0]).strip() if html_titles else None,
        "declared_charset": metas[0].strip().lower() if metas else None,
        "lang": root.get("lang") or root.get("xml:lang"),
    }
    if (
        article.title
        and article.published is not None
        and body_chars >= MIN_BODY_CHARS
        and body_link_share <= MAX_BODY_LINK_SHARE
    ):
        return PageVerdict(kind="article", reason="title, time and body", **common)
    if len(on_site) >= MIN_LIST_LINKS and link_share >= MIN_LIST_LINK_SHARE:
        return PageVerdict(
            kind="list", reason=f"{len(on_site)} links, {link_share:.0%} of its text", **common
        )
    missing = [
        what
        for what, ok in (
            ("title", article.title),
            ("time", article.published is not None),
            (f"a body of {MIN_BODY_CHARS}+ characters", body_chars >= MIN_BODY_CHARS),
        )
        if not ok
    ]
    if body_chars and body_link_share > MAX_BODY_LINK_SHARE:
        missing.append("a body that is not links")
    reason = "needs scripts: " if shell else ""
    return PageVerdict(kind="other", reason=reason + "no " + ", no ".join(missing), **common)


def _is_link_line(line: str, anchor_texts: set[str]) -> bool:
    """A body line that is a link's text, or holds one covering half of it (a headline
    with its date: ``07-04 证监会暂停IPO``)."""
    if line in anchor_texts:
        return True
    return any(len(t) * 2 >= len(line) and t in line for t in anchor_texts)


def group_verdict(verdicts: Sequence[PageVerdict]) -> tuple[str, str]:
    """The group's kind and why: the samples' majority kind, or ``mixed``."""
    if not verdicts:
        return "unsampled", "no page fetched"
    counts = Counter(v.kind for v in verdicts)
    kind, n = counts.most_common(1)[0]
    summary = ", ".join(f"{k} {c}" for k, c in counts.most_common())
    if n / len(verdicts) >= MAJORITY:
        return kind, f"{n} of {len(verdicts)} samples are {kind}" + (
            f" ({summary})" if len(counts) > 1 else ""
        )
    return "mixed", f"samples disagree ({summary})"
