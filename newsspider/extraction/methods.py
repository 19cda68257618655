"""Every extraction method of the seed papers behind one name.

``EXTRACTOR`` (crawls) and ``--method`` (``scrapy extract``/``evaluate``)
select one of :data:`METHODS`. Each entry is imported lazily, so a method
whose optional dependency is missing (Playwright for ``visual``) does not
break the others. Every method takes ``(html, url, *, headers, tz, **params)``
and returns an :class:`~.model.ExtractedArticle`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .model import ExtractedArticle

#: name -> "module:function"
METHODS: dict[str, str] = {
    "blockstats": "newsspider.extraction.article:extract_article",  # Zou & Zhong 2011
    "punctuation": "newsspider.extraction.punctuation:extract_punctuation",  # Li & Jiang 2012
    "xpath": "newsspider.extraction.xpathseg:extract_xpath",  # Hou & Yang 2011
    "visual": "newsspider.extraction.visual:extract_visual",  # Jing & Zuo (VL_PS)
    "visual+blockstats": "newsspider.extraction.visual:extract_visual_blockstats",
}
DEFAULT_METHOD = "blockstats"

#: The ``mode=`` values each method accepts (the first is its default).
#: ``visual+blockstats`` runs block statistics in either mode after VL_PS.
METHOD_MODES: dict[str, tuple[str, ...]] = {
    "blockstats": ("best", "paper"),
    "punctuation": ("paper",),
    "xpath": ("paper",),
    "visual": ("paper",),
    "visual+blockstats": ("paper", "best"),
}


def get_method(name: str) -> Callable[..., ExtractedArticle]:
    """The extraction function registered under ``name``; ValueError for an unknown name."""
    try:
        target = METHODS[name]
    except KeyError:
        raise ValueError(
            f"unknown extraction method {name!r}; expected one of {', '.join(METHODS)}"
        ) from None
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def extract_with(name: str, html: bytes | str, url: str | None = None, **kwargs: Any) -> ExtractedArticle:
    """Run the method ``name`` on one page."""
    return get_method(name)(html, url, **kwargs)
