"""Publication times from text, metadata values and URLs.

Paper mode follows Zou & Zhong 2011 §1.2.3: the report
time is found with the regular expression
``\\w{4}[-./,年]\\w{1,2}[-./,月]\\w{1,2}日?``.  :data:`DATE_PATTERN` implements
it with Arabic digits and Chinese numerals (``二零一零年十二月十五日``) in place
of ``\\w`` and adds an optional ``HH:MM(:SS)`` time after the date, as §A3
asks.  Two tightenings keep ``\\w`` from matching words or numbers, and both
are documented on :data:`DATE_PATTERN`:

* the separators must agree (``-``/``.``/``/``/``,`` twice, or ``年`` then
  ``月``), so ``2015.1-2`` is not a date;
* the match may not sit inside a longer run of digits.

The rest (:func:`parse_datetime` for metadata values, :func:`date_from_url`)
are our additions from §A3.  Every result is timezone aware: a value with an
explicit offset (``+08:00``, ``Z``) keeps it, anything else is taken as local
time in the site's zone ``tz``.  All functions are pure and return ``None``
rather than raise.  :func:`time_precision` says what a found time states
(``day`` for a date without a clock time, ``month`` for a reprint's issue...).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

__all__ = [
    "DATE_PATTERN",
    "ISSUE_PATTERN",
    "MAX_YEAR",
    "MIN_YEAR",
    "PRECISIONS",
    "date_from_url",
    "day_first_for",
    "find_date",
    "find_date_forms",
    "issue_date",
    "parse_datetime",
    "stamp_with_time",
    "time_precision",
]

#: Years outside ``MIN_YEAR..MAX_YEAR`` are not publication times (they are
#: history, founding years, phone numbers ...): the match is rejected.
MIN_YEAR = 1990
MAX_YEAR = 2100

_CN_DIGITS = "〇零一二三四五六七八九"
_CN_VALUE = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0}

# One field of the date: Arabic digits (``\d`` also takes full-width ０-９,
# which int() reads) or Chinese numerals.  The Chinese month/day form is
# exact (十, 十二, 二十一, 〇一), so a bare run of numerals cannot run on.
_YEAR = rf"(?<![\d{_CN_DIGITS}])(?:\d{{4}}|[{_CN_DIGITS}]{{4}})"
_CN_SMALL = "[一二三]?十[一二三四五六七八九]?|[〇零]?[一二三四五六七八九]"
_FIELD = rf"(?:\d{{1,2}}|{_CN_SMALL})"

_TIME = (
    r"(?:T|[^\S\n]{0,8})"  # 'T' or a few spaces (full-width and nbsp too)
    r"(?P<hour>\d{1,2})[:：](?P<minute>\d{2})(?![\d])"
    r"(?:[:：](?P<second>\d{2})(?:\.\d{1,9})?)?"
    r"(?P<offset>Z|[+-]\d{2}:?\d{2})?"
)

#: The paper's ``\w{4}[-./,年]\w{1,2}[-./,月]\w{1,2}日?`` with digits and
#: Chinese numerals for ``\w``, matching separators, and an optional time.
#: Groups: ``year``/``month``/``day`` (numeric form) or ``cyear``/``cmonth``/
#: ``cday`` (年月日 form), then ``hour``, ``minute``, ``second``, ``offset``.
#: Every repetition is bounded, so a search is linear in the text length.
#: Where a match of DATE_PATTERN can start: four digits (Arabic or Chinese).
_YEAR_START = re.compile(rf"[\d{_CN_DIGITS}]{{4}}")

DATE_PATTERN = re.compile(
    rf"(?:(?P<year>{_YEAR})(?P<sep>[-./,])(?P<month>{_FIELD})(?P=sep)"
    rf"(?P<day>{_FIELD})(?!\d)"
    rf"|(?P<cyear>{_YEAR})\s?年\s?(?P<cmonth>{_FIELD})\s?月\s?(?P<cday>{_FIELD})"
    rf"(?:\s?日|(?!\d)))"
    rf"(?:{_TIME})?"
)

#: A reprint's source line, a publication and its monthly issue:
#: ``——《北京之春》1998年3月号``, ``原载《读书》2003年5月``. Only the month is
#: known; a day after it makes it a full date, which DATE_PATTERN reads.
ISSUE_PATTERN = re.compile(
    rf"《[^《》\n]{{1,30}}》\s?[,，]?\s?(?P<cyear>{_YEAR})\s?年\s?(?P<cmonth>{_FIELD})\s?月"
    rf"(?!\s?{_FIELD}\s?日)"
)

_EPOCH = re.compile(r"\d{10}(?:\d{3})?")
# Zaobao's JSON-LD "MM/DD/YYYY - HH:mm".
_US_DATE = re.compile(
    r"(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})"
    r"(?:\s*-?\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?)?"
)
_RFC_MONTH = re.compile(r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)", re.I)
_OFFSET = re.compile(r"(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})")

# Dates in URL paths, most specific first.  Each gives year, month, day and
# optionally hour; the year is four digits unless the pattern says "yy".
_URL_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Zaobao: /realtime/china/story20240101-123456
    re.compile(r"story(?P<year>\d{4})(?P<month>\d{2})(?P<day>\d{2})(?!\d)"),
    # /2015-07-02/ (sina), /2015_07_02/
    re.compile(r"/(?P<year>\d{4})([-_])(?P<month>\d{1,2})\2(?P<day>\d{1,2})(?!\d)"),
    # /2015/07/02/ (cctv, many others)
    re.compile(r"/(?P<year>\d{4})/(?P<month>\d{1,2})/(?P<day>\d{1,2})(?:/|$)"),
    # /2015-07/02/ (xinhua), /202311/17/ (chinadaily), /2019/0907/ (people)
    re.compile(r"/(?P<year>\d{4})-?(?P<month>\d{2})/(?P<day>\d{2})(?:/|$)"),
    re.compile(r"/(?P<year>\d{4})/(?P<month>\d{2})(?P<day>\d{2})(?:/|$)"),
    # /20150702/, Tencent /a/20190907/ and /rain/a/20250101A0ABCD00
    re.compile(r"/(?P<year>\d{4})(?P<month>\d{2})(?P<day>\d{2})(?![\d])"),
    # NetEase before 2018: /15/0703/15/DOCID.html = yy/mmdd/hh
    re.compile(r"/(?P<yy>\d{2})/(?P<month>\d{2})(?P<day>\d{2})/(?P<hour>\d{2})/"),
)


def _cn_number(text: str) -> int:
    """Value of a Chinese numeral: digit by digit (``二〇一五``) or with ``十``."""
    if "十" in text:
        tens, _, units = text.partition("十")
        return _CN_VALUE.get(tens, 1) * 10 + (_CN_VALUE[units] if units else 0)
    value = 0
    for char in text:
        value = value * 10 + _CN_VALUE[char]
    return value


def _number(text: str) -> int:
    return int(text) if text[0] not in _CN_VALUE and text[0] != "十" else _cn_number(text)


def _offset(text: str | None, tz: tzinfo) -> tzinfo:
    if not text:
        return tz
    if text == "Z":
        return UTC
    m = _OFFSET.fullmatch(text)
    if m is None:
        return tz
    delta = timedelta(hours=int(m["hh"]), minutes=int(m["mm"]))
    if delta >= timedelta(hours=24):
        return tz
    return timezone(-delta if m["sign"] == "-" else delta)


def _build(
    year: int,
    month: int,
    day: int,
    tz: tzinfo,
    hour: int = 0,
    minute: int = 0,
    second: int = 0,
) -> datetime | None:
    """An aware datetime, or None when the fields are not a plausible date."""
    if not MIN_YEAR <= year <= MAX_YEAR:
        return None
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        return None


def _from_match(m: re.Match[str], tz: tzinfo) -> datetime | None:
    if m["year"] is not None:
        fields = m["year"], m["month"], m["day"]
    else:
        fields = m["cyear"], m["cmonth"], m["cday"]
    try:
        year, month, day = (_number(f) for f in fields)
    except (KeyError, ValueError):
        return None
    date = _build(year, month, day, tz)
    if date is None or m["hour"] is None:
        return date
    zone = _offset(m["offset"], tz)
    second = int(m["second"]) if m["second"] else 0
    with_time = _build(year, month, day, zone, int(m["hour"]), int(m["minute"]), second)
    # A bad time ("25:00") does not spoil a good date: keep the date.
    return with_time if with_time is not None else date


def find_date(text: str, tz: tzinfo) -> datetime | None:
    """First valid date (and time) in ``text``, Zou & Zhong 2011 §1.2.3.

    Matches of :data:`DATE_PATTERN` that are not real dates (month 13, day 32,
    a year outside ``MIN_YEAR..MAX_YEAR``) are skipped and the search goes on
    from the next character.  A date without time is midnight in ``tz``; a
    time without offset is local time in ``tz``.

    Every match starts with a four-digit year, so a plain search for four
    digits finds the candidates and the full pattern is only tried there
    (much faster on whole pages than searching with the full pattern, whose
    leading look-behind defeats the regex engine's fast scan).
    """
    pos = 0
    year_start = _YEAR_START.search
    match = DATE_PATTERN.match
    while (s := year_start(text, pos)) is not None:
        m = match(text, s.start())
        if m is not None:
            found = _from_match(m, tz)
            if found is not None:
                return found
        pos = s.start() + 1
    return None


def stamp_with_time(text: str) -> re.Match[str] | None:
    """The first match of :data:`DATE_PATTERN` in ``text`` that has a clock time, or None
    (a post header's or comment's stamp: ``2005-03-21 01:20:44``)."""
    pos = 0
    while (s := _YEAR_START.search(text, pos)) is not None:
        m = DATE_PATTERN.match(text, s.start())
        if m is not None and m["hour"] is not None:
            return m
        pos = s.start() + 1
    return None


def issue_date(text: str, tz: tzinfo) -> datetime | None:
    """The month of the first issue citation in ``text`` (:data:`ISSUE_PATTERN`), or None.

    Our addition to §A3, for reprints whose only date is their source's
    monthly issue. The result is midnight on the first of that month in
    ``tz``: it is precise to the month only, and the caller says so
    (``published_source`` ``"text:issue"``).
    """
    for m in ISSUE_PATTERN.finditer(text):
        try:
            year, month = _number(m["cyear"]), _number(m["cmonth"])
        except (KeyError, ValueError):
            continue
        found = _build(year, month, 1, tz)
        if found is not None:
            return found
    return None


def parse_datetime(value: str, tz: tzinfo) -> datetime | None:
    """Parse one metadata value (``<meta content>``, JSON-LD, ``<time datetime>``).

    Tried in order: epoch seconds (10 digits) or milliseconds (13 digits);
    ISO 8601 / RFC 3339 (offset or ``Z`` honoured, fractional seconds
    dropped); Zaobao's ``MM/DD/YYYY - HH:mm``; RFC 2822/1123
    (``Sat, 07 Sep 2019 13:43:45 +0800``); finally :func:`find_date_forms` (the
    paper's pattern and the day- or month-first forms: ``August 2, 2019``).  Values
    without an offset are local time in ``tz``.
    """
    value = value.strip()
    if not value:
        return None
    if _EPOCH.fullmatch(value):
        seconds = int(value) / 1000 if len(value) == 13 else int(value)
        try:
            found = datetime.fromtimestamp(seconds, tz)
        except (OverflowError, OSError, ValueError):
            return None
        return found if MIN_YEAR <= found.year <= MAX_YEAR else None
    if value[0].isdigit() and len(value) >= 10 and value[4:5] == "-":
        try:
            found = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if not MIN_YEAR <= found.year <= MAX_YEAR:
                return None
            found = found.replace(microsecond=0)
            return found if found.tzinfo else found.replace(tzinfo=tz)
    if m := _US_DATE.fullmatch(value):
        hour = int(m["hour"]) if m["hour"] else 0
        minute = int(m["minute"]) if m["minute"] else 0
        second = int(m["second"]) if m["second"] else 0
        year, month, day = int(m["year"]), int(m["month"]), int(m["day"])
        return _build(year, month, day, tz, hour, minute, second)
    if _RFC_MONTH.search(value):
        try:
            found = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            found = None
        if found is not None:
            if not MIN_YEAR <= found.year <= MAX_YEAR:
                return None
            return found if found.tzinfo else found.replace(tzinfo=tz)
    return find_date_forms(value, tz)


def date_from_url(url: str, tz: tzinfo) -> datetime | None:
    """Publication date embedded in a URL's path, or None (§A3, our addition).

    Knows ``/2015-07-02/``, ``/2015/07/02/``, ``/2015-07/02/`` (Xinhua),
    ``/202311/17/`` (China Daily), ``/2019/0907/`` (People's Daily),
    ``/20150702/`` (Tencent ``/a/20190907/``, ``/rain/a/20250101A…``),
    Zaobao's ``story20240101-123`` and NetEase's old ``/15/0703/15/``
    (yy/mmdd/hh, giving 2015-07-03 15:00).  The result is midnight (or the
    NetEase hour) in ``tz``.  Only the path is searched.
    """
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    if not path:
        return None
    for pattern in _URL_PATTERNS:
        for m in pattern.finditer(path):
            groups = m.groupdict()
            year = 2000 + int(groups["yy"]) if groups.get("yy") else int(groups["year"])
            hour = int(groups["hour"]) if groups.get("hour") else 0
            if hour > 23:
                continue
            found = _build(year, int(m["month"]), int(m["day"]), tz, hour)
            if found is not None:
                return found
    return None


# --- Date forms beyond the paper's year-first pattern (best mode, ``date_forms``) ---

#: Month names and abbreviations of the languages news sites abroad write in
#: (English, German, French, Spanish, Portuguese, Italian, Dutch), lower case.
MONTH_NAMES: dict[str, int] = {}
for _n, _names in enumerate(
    (
        "january jan januar janv janvier enero ene janeiro gennaio gen januari",
        "february feb februar févr fevr février fevrier febrero fevereiro fev febbraio februari",
        "march mar märz maerz mär mars marzo março marco maart mrt",
        "april apr avril avr abril aprile",
        "may mai mayo maio maggio mag mei",
        "june jun juni juin junio junho giugno giu",
        "july jul juli juil juillet julio julho luglio lug",
        "august aug août aout agosto ago augustus",
        "september sep sept septembre septiembre setiembre setembro set settembre",
        "october oct oktober okt octobre octubre outubro out ottobre ott",
        "november nov novembre noviembre novembro",
        "december dec dezember dez décembre decembre déc diciembre dic dezembro dicembre",
    ),
    start=1,
):
    for _name in _names.split():
        MONTH_NAMES.setdefault(_name, _n)

_MONTH = "|".join(sorted(MONTH_NAMES, key=len, reverse=True))
# A clock time after a date: "August 2, 2019 at 3:45 pm", "2. August 2019, 14:30 Uhr",
# "2 août 2019 à 14h30", "02.08.2019 - 14:30".
_CLOCK = (
    r"(?:[^\S\n]*(?:,|at|um|à|a las|às|alle|ore|\||-|–|—)?[^\S\n]*"
    r"(?P<hour>\d{1,2})[:h](?P<minute>\d{2})(?![\d])(?::(?P<second>\d{2}))?"
    r"(?:[^\S\n]*(?P<ampm>[ap]\.?\s?m\b\.?))?"
    r"(?:[^\S\n]*(?P<offset>Z|[+-]\d{2}:?\d{2}|UTC|GMT))?)?"
)
#: Dates written day or month first: ``August 2, 2019``, ``Aug. 2nd 2019``,
#: ``2 August 2019``, ``2. August 2019``, ``2 de agosto de 2019``, ``02.08.2019``,
#: ``06/02/2022``, ``2-8-2019``, each with an optional clock time after it.
DATE_FORMS = re.compile(
    rf"(?:\b(?P<mname1>{_MONTH})\.?[^\S\n]+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?[^\S\n]+"
    rf"(?P<y1>\d{{4}})"
    rf"|(?<![\d.])(?P<d2>\d{{1,2}})(?:\.|st|nd|rd|th|er|º)?[^\S\n]*(?:de[^\S\n]+)?"
    rf"(?P<mname2>{_MONTH})\.?,?[^\S\n]+(?:de[^\S\n]+)?(?P<y2>\d{{4}})"
    rf"|(?<![\d.\-/])(?P<a>\d{{1,2}})(?P<sep>[./-])(?P<b>\d{{1,2}})(?P=sep)(?P<y3>\d{{4}}))"
    rf"(?!\d){_CLOCK}",
    re.IGNORECASE,
)
_FORM_YEAR = re.compile(r"(?<!\d)(?:19|20|21)\d\d(?!\d)")
#: How far before its year a date form may start (``Wednesday, 23. September 2019``'s
#: month and day), and how far its clock time may run after.
_FORM_REACH = 32

#: Languages (``<html lang>``, ``og:locale``) whose numeric dates put the month
#: first: US English (``06/02/2022`` is June 2) and Chinese (Zaobao's ``MM/DD/YYYY``).
MONTH_FIRST_LOCALES = ("en-us", "en_us", "zh", "en-ph", "en_ph")
#: English locales that write the day first (``en-GB``, ``en-AU`` ...).
_DAY_FIRST_ENGLISH = re.compile(r"^en[-_](?:gb|au|nz|ie|in|za|sg|hk|my|ng|ke)", re.I)


def day_first_for(lang: str | None) -> bool:
    """Whether numeric slash/dash dates on a page in ``lang`` put the day first.

    Dot dates (``02.08.2019``) always do; slash and dash dates do unless the
    language is US English, bare ``en``, Chinese, or unknown (then month first).
    A field over 12 settles the order whatever the language.
    """
    if not lang:
        return False
    lang = lang.strip().lower()
    if _DAY_FIRST_ENGLISH.match(lang):
        return True
    return not (lang == "en" or lang.startswith(MONTH_FIRST_LOCALES))


def _from_form(m: re.Match[str], tz: tzinfo, day_first: bool) -> datetime | None:
    if m["y1"] is not None:
        year, month, day = int(m["y1"]), MONTH_NAMES[m["mname1"].lower()], int(m["d1"])
    elif m["y2"] is not None:
        year, month, day = int(m["y2"]), MONTH_NAMES[m["mname2"].lower()], int(m["d2"])
    else:
        a, b, year = int(m["a"]), int(m["b"]), int(m["y3"])
        if m["sep"] == "." or a > 12:
            day, month = a, b
        elif b > 12:
            month, day = a, b
        else:
            day, month = (a, b) if day_first else (b, a)
    date = _build(year, month, day, tz)
    if date is None or m["hour"] is None:
        return date
    hour, minute = int(m["hour"]), int(m["minute"])
    ampm = (m["ampm"] or "").lower()
    if ampm.startswith("p") and hour < 12:
        hour += 12
    elif ampm.startswith("a") and hour == 12:
        hour = 0
    offset = m["offset"]
    zone = UTC if offset and offset.upper() in ("UTC", "GMT") else _offset(offset, tz)
    second = int(m["second"]) if m["second"] else 0
    with_time = _build(year, month, day, zone, hour, minute, second)
    return with_time if with_time is not None else date


def find_date_forms(text: str, tz: tzinfo, day_first: bool = False) -> datetime | None:
    """First valid date in ``text`` in any common form (best mode, ``date_forms``).

    The paper's year-first pattern (:func:`find_date`) and :data:`DATE_FORMS`
    (month names in seven languages, day- or month-first numbers); whichever
    valid date comes first in the text wins. ``day_first`` orders ambiguous
    slash and dash dates (:func:`day_first_for`). A clock time after the date
    (``3:45 pm``, ``14h30``) is read with it.
    """
    first = _find_date_at(text, tz)
    end = first[0] if first is not None else len(text)
    # Every form ends with a four-digit year: look for years (a C-level scan), then
    # try the forms in a short window before each one.
    done = 0
    for y in _FORM_YEAR.finditer(text, 0, end):
        start = max(done, y.start() - _FORM_REACH)
        for m in DATE_FORMS.finditer(text, start, min(len(text), y.end() + _FORM_REACH)):
            if m.start() >= y.start():
                break
            if (m["y1"] or m["y2"] or m["y3"]) is not None:
                found = _from_form(m, tz, day_first)
                if found is not None:
                    return found
        done = y.end()
    return first[1] if first is not None else None


def _find_date_at(text: str, tz: tzinfo) -> tuple[int, datetime] | None:
    """:func:`find_date` with the position of its match."""
    pos = 0
    year_start = _YEAR_START.search
    match = DATE_PATTERN.match
    while (s := year_start(text, pos)) is not None:
        m = match(text, s.start())
        if m is not None:
            found = _from_match(m, tz)
            if found is not None:
                return s.start(), found
        pos = s.start() + 1
    return None


#: What a publication time can state, finest first (``ExtractedArticle.published_precision``).
PRECISIONS: tuple[str, ...] = ("second", "minute", "hour", "day", "month")


def time_precision(published: datetime | None, source: str | None) -> str | None:
    """What the time ``published``, found at ``source``, states: one of :data:`PRECISIONS`.

    - ``"text:issue"`` (:func:`issue_date`, a reprint's monthly issue): ``month``;
    - ``"url"`` (:func:`date_from_url`): ``day``, or ``hour`` for NetEase's
      ``/yy/mmdd/hh/`` paths (an hour other than 0);
    - any other source: ``day`` for midnight (a date without a clock time: the finders
      give a date alone as midnight, and the ``meta_first`` rule of ``title_time``
      reads a midnight the same way), ``second`` when the seconds are not 0, else
      ``minute``.

    The finders return the time alone, so this reads the value in its own zone: a
    clock time stated with ``:00`` seconds reads as ``minute`` and one stated as
    ``00:00`` as ``day``. None when ``published`` is None.
    """
    if published is None:
        return None
    if source == "text:issue":
        return "month"
    if source == "url":
        return "hour" if published.hour else "day"
    if published.second or published.microsecond:
        return "second"
    if published.hour or published.minute:
        return "minute"
    return "day"

