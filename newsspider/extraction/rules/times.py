"""Rules of §1.2.3 beside the body: where the time is read (``time_after_headline``,
``nonempty_window``, ``date_forms``, ``issue_dates``, ``meta_first``), the zone a time
without offset takes (``page_zone``), and the title (``site_suffix_titles``)."""

from __future__ import annotations

import re
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

from lxml import etree

from ..blocks import Blockset
from ..blockstats import BlockStatistics
from ..dates import find_date, find_date_forms, issue_date
from ..paper import paper_time_blocks
from ..title_time import combine_published, strip_spaces
from .common import HEADLINE_MIN_CHARS, may_hold_tag

#: ``nonempty_window``, ``meta_first``: on (the ablation switches each off).
NONEMPTY_WINDOW = True
META_FIRST = True
#: ``time_after_headline``: on, and how many text blocks under the headline are read first.
TIME_AFTER_HEADLINE = True


HEADLINE_WINDOW = 3


#: ``issue_dates``: on (the ablation switches it off).
ISSUE_DATES = True


#: ``date_forms``: on (the ablation switches it off).
DATE_FORMS = True


#: ``page_zone``: on (the ablation switches it off), and the zone of each language or
#: locale whose speakers mostly live in one (English without a country names none).
PAGE_ZONE = True


LANGUAGE_ZONES: dict[str, str] = {
    "zh": "Asia/Shanghai",
    "zh-cn": "Asia/Shanghai",
    "zh-tw": "Asia/Taipei",
    "zh-hk": "Asia/Hong_Kong",
    "zh-sg": "Asia/Singapore",
    "zh-hant-tw": "Asia/Taipei",
    "zh-hant-hk": "Asia/Hong_Kong",
    "ja": "Asia/Tokyo",
    "ko": "Asia/Seoul",
    "de": "Europe/Berlin",
    "de-at": "Europe/Vienna",
    "de-ch": "Europe/Zurich",
    "fr": "Europe/Paris",
    "fr-ca": "America/Toronto",
    "it": "Europe/Rome",
    "es": "Europe/Madrid",
    "es-mx": "America/Mexico_City",
    "es-ar": "America/Argentina/Buenos_Aires",
    "pt": "Europe/Lisbon",
    "pt-br": "America/Sao_Paulo",
    "nl": "Europe/Amsterdam",
    "pl": "Europe/Warsaw",
    "cs": "Europe/Prague",
    "ru": "Europe/Moscow",
    "tr": "Europe/Istanbul",
    "en-gb": "Europe/London",
    "en-us": "America/New_York",
    "en-in": "Asia/Kolkata",
    "en-sg": "Asia/Singapore",
    "en-au": "Australia/Sydney",
    "vi": "Asia/Ho_Chi_Minh",
    "th": "Asia/Bangkok",
    "id": "Asia/Jakarta",
}


#: ``site_suffix_titles``: on (the ablation switches it off).
SITE_SUFFIX_TITLES = True


def headline_block(blockset: Blockset, title: str | None, before: int | None) -> int | None:
    """``time_after_headline``: the block holding the headline, when it comes before ``before``."""
    if not title or before is None:
        return None
    t = strip_spaces(title)
    text = blockset.text
    for i in range(before - 1, -1, -1):
        block = text[i]
        if block and len(block) <= 2 * len(title) + 10:
            b = strip_spaces(block)
            if b == t or (t in b and len(b) <= 2 * len(t)):
                return i
    return None


def text_time(
    blockset: Blockset,
    stats: BlockStatistics,
    tz: tzinfo,
    headline: int | None = None,
    day_first: bool = False,
) -> datetime | None:
    """The time in the text: under the headline (``time_after_headline``), then the paper's
    pattern near block_i/block_j (``nonempty_window``), then page order.

    ``date_forms``: near the headline and body, dates in any common form count
    (:func:`.dates.find_date_forms`, ``day_first`` for ambiguous numbers); over
    the whole page the paper's year-first pattern is tried before them.
    """
    text = blockset.text
    under_headline = []
    if headline is not None:
        under_headline = [i for i in range(headline + 1, len(text)) if text[i]][:HEADLINE_WINDOW]
    for i in under_headline + paper_time_blocks(blockset, stats, nonempty=NONEMPTY_WINDOW):
        found = find_date_forms(text[i], tz, day_first) if DATE_FORMS else find_date(text[i], tz)
        if found is not None:
            return found
    # One regex pass over the page (blocks one per line) instead of one per block.
    page = "\n".join(t for t in text if t)
    found = find_date(page, tz)
    if found is None and DATE_FORMS:
        found = find_date_forms(page, tz, day_first)
    return found


def best_published(
    blockset: Blockset,
    stats: BlockStatistics,
    meta: tuple[datetime, str] | None,
    url: str | None,
    tz: tzinfo,
    title: str | None = None,
    day_first: bool = False,
) -> tuple[datetime | None, str | None]:
    """``meta_first`` time choice; returns (time, source).

    Metadata wins, except that a date-only metadata value (midnight) gives way
    to a time found in the text on the same day.
    """
    headline = headline_block(blockset, title, stats.block_i) if TIME_AFTER_HEADLINE else None
    found = text_time(blockset, stats, tz, headline, day_first)
    published, source = combine_published(found, meta, url, tz)
    if published is None and ISSUE_DATES:
        published = issue_date("\n".join(t for t in blockset.text if t), tz)
        source = "text:issue" if published is not None else None
    return published, source


def zone_for_language(lang: str | None) -> tzinfo | None:
    """``page_zone``: the zone a page's language (``<html lang>``, ``og:locale``) points to,
    for a page of no known site; None when the language names no one zone."""
    if not lang:
        return None
    lang = lang.strip().lower().replace("_", "-")
    name = LANGUAGE_ZONES.get(lang) or LANGUAGE_ZONES.get(lang.split("-")[0])
    return ZoneInfo(name) if name else None


#: ``page_zone``: languages written in Han script, and the share of Han characters in the
#: title above which a page is taken to be written in one of them.
HAN_LANGUAGES = ("zh", "ja", "ko")


HAN_TITLE_SHARE = 0.3


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


_XP_TITLE = etree.XPath("string(/html/head/title)")


def language_fits_title(lang: str, root: etree._Element) -> bool:
    """``page_zone``: whether a language claim agrees with the page's own script.

    Templates carry a CMS's default (``lang="en-US"`` on Chinese portals is common); a
    claim of a language not written in Han script on a page whose title is mostly Han
    characters is not evidence of the page's zone, and is ignored.
    """
    if lang.strip().lower()[:2] in HAN_LANGUAGES:
        return True
    title = "".join(_XP_TITLE(root).split())
    return not title or len(_HAN.findall(title)) <= HAN_TITLE_SHARE * len(title)


def page_language(root: etree._Element) -> str | None:
    """``date_forms``: the page's language, ``<html lang>`` else ``og:locale``; a bare
    ``<html lang>`` (``en``) gives way to an ``og:locale`` of that language with a country
    (``en_GB``): ``page_zone`` and the order of numeric dates need the country."""
    lang = root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang")
    locale = _XP_OG_LOCALE(root).strip()
    if lang:
        bare = lang.strip().lower()
        if (
            locale
            and "-" not in bare
            and "_" not in bare
            and locale.lower().replace("_", "-").startswith(bare + "-")
        ):
            return locale
        return lang
    return locale or None


_XP_OG_LOCALE = etree.XPath("string(/html/head/meta[@property='og:locale']/@content)")


#: ``site_suffix_titles``: a title separator, then the site's name (`` | Aktuálně.cz``).
_SITE_SUFFIX = re.compile(r"\s*(?:\||｜|_|--|——|\s[-–—:·]\s)\s*\S")


def headline_for_title(
    root: etree._Element, meta: tuple[str, str], markup: str | None = None
) -> tuple[str, str]:
    """``site_suffix_titles``: the page's ``h1`` in place of an ``og:title`` (or JSON-LD
    headline) that is that ``h1`` followed by a separator and the site's name; else
    ``meta`` as it is."""
    if not may_hold_tag(markup, "h1"):  # the trigger
        return meta
    title = meta[0]
    for h1 in root.iter("h1"):
        text = " ".join("".join(h1.itertext()).split())
        if (
            len(text) >= HEADLINE_MIN_CHARS
            and title.startswith(text)
            and _SITE_SUFFIX.match(title, len(text))
        ):
            return text, meta[1]
    return meta
