"""``extract_article``: one saved page in, headline, time and body out, by block statistics.

The public entry of the package and the block-statistics method of Zou & Zhong
2011 as an :class:`~.method.Extractor`, :class:`Blockstats`. ``mode="paper"`` is
the paper alone (:mod:`.paper`); ``mode="best"`` (the default) is the paper plus
the improvements of :mod:`.best`, each documented there beside the paper step it
changes. The other methods are reached by name through :mod:`.registry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import tzinfo
from typing import Any

from .best import extract_best
from .method import MODES, Extractor, Mode
from .model import ExtractedArticle
from .page import Page
from .paper import extract_paper

__all__ = ["Blockstats", "extract_article"]


class Blockstats(Extractor):
    """Zou & Zhong 2011 block statistics: ``blockstats`` (best mode), ``blockstats-paper``."""

    @property
    def records_itself(self) -> bool:  # type: ignore[override]
        """The best mode reads the record fields from its own blocks
        (:func:`.best.record_around`)."""
        return self.mode == "best"

    def extract(self, page: Page, url: str | None) -> ExtractedArticle:
        assert page.root is not None
        if self.mode == "paper":
            return extract_paper(page.root, url, page.encoding, page.tz)
        return extract_best(
            page.root,
            url,
            page.encoding,
            page.tz,
            tz_known=page.tz_known,
            scan=page.scan,
            site_name=page.site_name,
        )


_BY_MODE: dict[str, Blockstats] = {
    "best": Blockstats("blockstats", "best"),
    "paper": Blockstats("blockstats-paper", "paper"),
}


def extract_article(
    html: bytes | str,
    url: str | None = None,
    *,
    headers: Mapping[Any, Any] | None = None,
    mode: Mode | str = "best",
    tz: tzinfo | str | None = None,
    site_name: str | None = None,
) -> ExtractedArticle:
    """Extract headline, publication time and body from one page.

    ``html`` is the raw bytes as served (any Chinese encoding) or an already
    decoded string. ``headers`` may carry the HTTP Content-Type (its charset
    is the first declaration tried). ``tz`` is the site's time zone, used for
    times the page gives without an offset (without one: Asia/Shanghai for a page
    showing a sign of China, else UTC, or the zone its language points to).
    ``site_name`` is the site's own name (the paper a ``本报讯`` stands for).
    ``mode`` is ``"best"`` or ``"paper"``.

    Raises :class:`~.errors.ExtractionError` when the input is not an HTML page
    at all (empty, binary); a page without an article gives empty ``text``.
    """
    extractor = _BY_MODE.get(mode)
    if extractor is None:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    return extractor(html, url, headers=headers, tz=tz, site_name=site_name)
