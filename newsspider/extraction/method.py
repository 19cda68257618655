"""What every extraction method is: one page in, one :class:`~.model.ExtractedArticle` out.

Every method of the seed papers (block statistics, Zou & Zhong 2011; punctuation,
Li & Jiang 2012; xpath clusters, Hou & Yang 2011; visual layout and visual layout
before block statistics, Jing & Zuo) is an :class:`Extractor`: a callable with a
``name`` (the one it is registered under in :mod:`.registry`) and a ``mode``.

The steps the methods share sit here once: decoding and parsing the page
(:func:`.page.load_page`), the empty result for a page in which lxml finds no
document, and the record fields beside title and time (:mod:`.record`: the page's
metadata read before the method changes the tree, the lines around the body it chose;
the body's language and script, :mod:`.language`). A method only says what it does
with the parsed page (:meth:`Extractor.extract`); one that reads the lines around its
body itself (``records_itself``: block statistics' best mode, which has them as blocks)
fills the record fields in its result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import tzinfo
from typing import Any, Literal

from .challenge import VERIFY_TEXT_MAX, challenge_reason
from .kinds import decide_kind, gallery_lead, kind_text, page_signals
from .language import detect_language, detect_script
from .model import ExtractedArticle
from .page import Page, empty_article, load_page
from .record import page_lines, record_from_lines, scan_page

__all__ = ["MODES", "Extractor", "Mode"]

#: A body shorter than this (characters) is read together with the title for its language.
LANGUAGE_MIN_BODY = 100

#: ``paper``: a paper's method alone; ``best``: block statistics with the measured
#: improvements of :mod:`.best`. Only the methods built on block statistics have both.
Mode = Literal["paper", "best"]
MODES: tuple[Mode, ...] = ("paper", "best")


class Extractor(ABC):
    """One extraction method in one mode, called like a function.

    ``extractor(html, url, headers=..., tz=..., site_name=..., **params)``: ``html`` is
    the raw bytes as served (any Chinese encoding) or a decoded string, ``headers`` may
    carry the HTTP Content-Type (its charset is tried first), ``tz`` is the site's
    zone for times given without an offset, ``site_name`` the site's own name (the
    paper a ``本报讯`` stands for), ``params`` are the method's own parameters. Raises
    :class:`~.errors.ExtractionError` when the input is not HTML at all; a page without
    an article gives empty ``text``.
    """

    #: whether :meth:`extract` fills the record fields itself (from its own blocks)
    records_itself: bool = False

    def __init__(self, name: str, mode: Mode = "paper") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        self.name = name
        self.mode: Mode = mode

    def __call__(
        self,
        html: bytes | str,
        url: str | None = None,
        *,
        headers: Mapping[Any, Any] | None = None,
        tz: tzinfo | str | None = None,
        site_name: str | None = None,
        **params: Any,
    ) -> ExtractedArticle:
        page = load_page(html, headers=headers, tz=tz, url=url)
        if page.root is None:
            return empty_article(page, url, self.mode)
        page.scan = scan_page(page.root, page.markup)
        page.site_name = site_name
        lines = None if self.records_itself else page_lines(page.root)
        signals = page_signals(page.root, url, page.scan)  # before the method changes the tree
        article = self.extract(page, url, **params)
        if lines is not None:
            record = record_from_lines(
                page.scan, lines[0], lines[1], article.text, article.title, url, site_name
            )
            for name in record.__slots__:
                setattr(article, name, getattr(record, name))
        article.kind = decide_kind(signals, article.text)
        article.text = kind_text(article.kind, signals, article.text)
        if article.kind == "gallery" and article.image is None:
            article.image, article.image_caption = gallery_lead(signals, url)
        if len(article.text) <= VERIFY_TEXT_MAX and is_challenge(html):
            article.kind = "blocked"
        sample = article.text
        if len(sample) < LANGUAGE_MIN_BODY:  # a body too short to tell: the title too
            sample = f"{article.title or ''}\n{sample}"
        article.language = detect_language(sample)
        article.script = detect_script(sample) if article.language == "zh" else None
        return article

    @abstractmethod
    def extract(self, page: Page, url: str | None, **params: Any) -> ExtractedArticle:
        """The method on a decoded and parsed page (``page.root`` is not None; it may be
        modified)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.mode!r})"


def is_challenge(html: bytes | str) -> bool:
    """Is a page whose body came out short an anti-bot verification, captcha or 访问过于频繁
    notice (:func:`~newsspider.extraction.challenge.challenge_reason` at status 200)?

    A live crawl's downloader middleware catches these before any extraction; this is the
    same test for pages that reach a method another way: a replayed or backfilled capture,
    ``scrapy reextract`` of an archive holding a challenge, ``scrapy extract FILE``. Their
    kind is ``blocked``, never stored. Only a short body is tested (a verification page
    shows at most ``VERIFY_TEXT_MAX`` characters), so an article costs nothing; script
    shells are not judged here (``shells_expected``): whether a site's articles are shells
    by design is the site row's fact, which the middleware has and a method does not.
    """
    raw = html if isinstance(html, bytes) else html.encode("utf-8")
    headers = {"Content-Type": "text/html"}
    return challenge_reason(200, headers, raw, shells_expected=True) is not None
