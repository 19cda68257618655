"""What every extraction method is: one page in, one :class:`~.model.ExtractedArticle` out.

Every method of the seed papers (block statistics, Zou & Zhong 2011; punctuation,
Li & Jiang 2012; xpath clusters, Hou & Yang 2011; visual layout and visual layout
before block statistics, Jing & Zuo) is an :class:`Extractor`: a callable with a
``name`` (the one it is registered under in :mod:`.registry`) and a ``mode``.

The steps the methods share sit here once: decoding and parsing the page
(:func:`.page.load_page`), and the empty result for a page in which lxml finds no
document. A method only says what it does with the parsed page
(:meth:`Extractor.extract`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import tzinfo
from typing import Any, Literal

from .model import ExtractedArticle
from .page import Page, empty_article, load_page

__all__ = ["MODES", "Extractor", "Mode"]

#: ``paper``: a paper's method alone; ``best``: block statistics with the measured
#: improvements of :mod:`.best`. Only the methods built on block statistics have both.
Mode = Literal["paper", "best"]
MODES: tuple[Mode, ...] = ("paper", "best")


class Extractor(ABC):
    """One extraction method in one mode, called like a function.

    ``extractor(html, url, headers=..., tz=..., **params)``: ``html`` is the raw
    bytes as served (any Chinese encoding) or a decoded string, ``headers`` may
    carry the HTTP Content-Type (its charset is tried first), ``tz`` is the site's
    zone for times given without an offset, ``params`` are the method's own
    parameters. Raises :class:`~.errors.ExtractionError` when the input is not
    HTML at all; a page without an article gives empty ``text``.
    """

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
        **params: Any,
    ) -> ExtractedArticle:
        page = load_page(html, headers=headers, tz=tz)
        if page.root is None:
            return empty_article(page, url, self.mode)
        return self.extract(page, url, **params)

    @abstractmethod
    def extract(self, page: Page, url: str | None, **params: Any) -> ExtractedArticle:
        """The method on a decoded and parsed page (``page.root`` is not None; it may be
        modified)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.mode!r})"
