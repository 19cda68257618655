"""Every extraction method under one name: the names ``EXTRACTOR``, ``--method`` and
``scrapy evaluate`` use.

A name is a method of the seed papers in one mode (:data:`.method.MODES`):

============================  ===================================================
``blockstats``                Zou & Zhong 2011, best mode (the paper plus
                              :mod:`.best`'s improvements): the default
``blockstats-paper``          Zou & Zhong 2011 alone
``punctuation``               Li & Jiang 2012 §1-§2.1
``xpath``                     Hou & Yang 2011
``visual``                    Jing & Zuo, the CENTER region of VL_PS
``visual+blockstats``         Jing & Zuo, VL_PS then Zou & Zhong in paper mode
``visual+blockstats-best``    VL_PS then block statistics in best mode
============================  ===================================================

Each name says where its :class:`~.method.Extractor` class lives as a string and
the class is imported on first use, so listing the names, or running a method,
never imports the optional dependency of another (Playwright for the visual
methods).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from .method import Extractor, Mode
from .model import ExtractedArticle

__all__ = ["NAMES", "REGISTRY", "Registered", "extract_with", "get_extractor", "registered"]


@dataclass(frozen=True, slots=True)
class Registered:
    """One name of the registry: its extractor class (``module:Class``), mode and needs."""

    location: str
    mode: Mode
    #: The method renders the page in headless Chromium: slow waits, one browser.
    renders: bool = False


_BLOCKSTATS = "newsspider.extraction.article:Blockstats"
_VISUAL_BLOCKSTATS = "newsspider.extraction.visual:VisualBlockstats"

REGISTRY: dict[str, Registered] = {
    "blockstats": Registered(_BLOCKSTATS, "best"),
    "blockstats-paper": Registered(_BLOCKSTATS, "paper"),
    "punctuation": Registered("newsspider.extraction.punctuation:Punctuation", "paper"),
    "xpath": Registered("newsspider.extraction.xpathseg:XpathClusters", "paper"),
    "visual": Registered("newsspider.extraction.visual:VisualCenter", "paper", renders=True),
    "visual+blockstats": Registered(_VISUAL_BLOCKSTATS, "paper", renders=True),
    "visual+blockstats-best": Registered(_VISUAL_BLOCKSTATS, "best", renders=True),
}
NAMES: tuple[str, ...] = tuple(REGISTRY)


def registered(name: str) -> Registered:
    """The registry's entry for ``name``; ValueError listing the valid names."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown extraction method {name!r}; expected one of {', '.join(NAMES)}"
        ) from None


@functools.cache
def get_extractor(name: str) -> Extractor:
    """The extractor registered under ``name``, its module imported now (once a process)."""
    entry = registered(name)
    module, _, cls = entry.location.partition(":")
    extractor: Extractor = getattr(importlib.import_module(module), cls)(name, entry.mode)
    return extractor


def extract_with(
    name: str,
    html: bytes | str,
    url: str | None = None,
    *,
    headers: Mapping[Any, Any] | None = None,
    tz: tzinfo | str | None = None,
    **params: Any,
) -> ExtractedArticle:
    """Run the method ``name`` on one page (parameters as :class:`~.method.Extractor`)."""
    return get_extractor(name)(html, url, headers=headers, tz=tz, **params)
