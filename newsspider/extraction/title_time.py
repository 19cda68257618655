"""Title and time choice shared by every method: the ``meta_first`` rule.

Zou & Zhong 2011 §1.2.3 take the headline from the highest ``h1``-``h6`` near the
body, else from ``<title>`` (site names filtered), and the report time from the
first date pattern near the body's first or last block. The other seed papers say
nothing on either. Every method here finds its candidates its own way (blocks,
text nodes, visual regions) and chooses among them with the two functions below,
measured as block statistics' best mode (:mod:`.best`, ``meta_first``):

* :func:`best_title`: the heading near the body when it agrees with the page's
  ``<title>``/``og:title``; otherwise ``og:title``/JSON-LD, then the heading, then
  ``<title>`` without site names;
* :func:`combine_published`: JSON-LD or a ``<meta>`` publication time (a date-only
  one gives way to a same-day time found in the text), else the time found in the
  text, else a date in the URL.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

from .dates import date_from_url

__all__ = ["best_title", "combine_published", "strip_spaces"]

_SPACES = re.compile(r"\s+")


def strip_spaces(text: str) -> str:
    """``text`` without any whitespace: how two headlines are compared."""
    return _SPACES.sub("", text)


def best_title(
    heading: str | None, meta: tuple[str, str] | None, page_title: str | None
) -> tuple[str | None, str | None]:
    """``meta_first`` title choice; returns (title, source)."""
    if heading:
        h = strip_spaces(heading)
        for other in (meta[0] if meta else None, page_title):
            if other and (h in strip_spaces(other) or strip_spaces(other) in h):
                return heading, "heading"
    if meta:
        return meta[0], meta[1]
    if heading:
        return heading, "heading"
    if page_title:
        return page_title, "title"
    return None, None


def combine_published(
    found: datetime | None,
    meta: tuple[datetime, str] | None,
    url: str | None,
    tz: tzinfo,
) -> tuple[datetime | None, str | None]:
    """``meta_first``: metadata, else the time ``found`` in the text, else the URL's date.

    A date-only metadata value (midnight) gives way to a time found in the
    text on the same day.
    """
    if meta is not None:
        value, source = meta
        if (
            found is not None
            and (value.hour, value.minute, value.second) == (0, 0, 0)
            and found.date() == value.date()
        ):
            return found, "text"
        return value, source
    if found is not None:
        return found, "text"
    if url:
        from_url = date_from_url(url, tz)
        if from_url is not None:
            return from_url, "url"
    return None, None
