"""Dates in text, metadata values and URLs (Zou & Zhong 2011 §1.2.3, §A3)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import lxml.html
import pytest

from newsspider.extraction.dates import (
    DATE_PATTERN,
    MAX_YEAR,
    MIN_YEAR,
    date_from_url,
    day_first_for,
    find_date,
    find_date_forms,
    issue_date,
    parse_datetime,
)
from newsspider.extraction.metadata import meta_published

SHANGHAI = ZoneInfo("Asia/Shanghai")
SINGAPORE = ZoneInfo("Asia/Singapore")
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CX163 = SHARED / "datasets" / "cx163-zh"


def sh(*args: int) -> datetime:
    return datetime(*args, tzinfo=SHANGHAI)


# --- issue_date: a reprint's monthly issue (our addition) --------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("——《北京之春》1998年3月号", sh(1998, 3, 1)),
        ("原载《读书》2003年5月", sh(2003, 5, 1)),
        ("《中国青年》，二〇〇三年十二月号", sh(2003, 12, 1)),
        ("正文。\n——《北京之春》1996年3月号\n", sh(1996, 3, 1)),
    ],
)
def test_issue_date(text: str, expected: datetime) -> None:
    assert issue_date(text, SHANGHAI) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1998年3月号",  # no publication named
        "《北京之春》1998年3月5日",  # a full date: find_date's, not an issue
        "《北京之春》1998年第3期",  # an issue number, not a month
        "《北京之春》1998年13月号",  # no such month
        "《北京之春》1850年3月号",  # before MIN_YEAR
    ],
)
def test_issue_date_rejects(text: str) -> None:
    assert issue_date(text, SHANGHAI) is None


# --- find_date: the paper's pattern with digits and Chinese numerals ---------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2015-01-02 12:34", sh(2015, 1, 2, 12, 34)),
        ("2015/1/2 12:34:56", sh(2015, 1, 2, 12, 34, 56)),
        ("2015.01.02", sh(2015, 1, 2)),
        ("2015,01,02", sh(2015, 1, 2)),
        ("2015年1月2日 08:00", sh(2015, 1, 2, 8, 0)),
        ("2015年01月02日08:00", sh(2015, 1, 2, 8, 0)),
        ("2015年1月2日", sh(2015, 1, 2)),
        ("2015年1月2", sh(2015, 1, 2)),
        ("2015年 1月 2日", sh(2015, 1, 2)),
        ("二〇一五年一月二日", sh(2015, 1, 2)),
        ("二零一零年十二月十五日", sh(2010, 12, 15)),
        ("二〇一五年十月二十一日", sh(2015, 10, 21)),
        ("二〇一五年十二月三十一日", sh(2015, 12, 31)),
        ("2015年十二月二十日", sh(2015, 12, 20)),
        ("２０１５年１月２日", sh(2015, 1, 2)),
        ("2015-07-02 05:18:09\u3000来源: 网易财经", sh(2015, 7, 2, 5, 18, 9)),
        ("2015-07-02\u00a0\u00a005:18", sh(2015, 7, 2, 5, 18)),
        ("2015-07-02T05:18:09", sh(2015, 7, 2, 5, 18, 9)),
        ("2015-07-02 05：18", sh(2015, 7, 2, 5, 18)),
        ("发布时间：2019-09-07 13:43:45 来源：新华社", sh(2019, 9, 7, 13, 43, 45)),
    ],
)
def test_find_date_formats(text: str, expected: datetime) -> None:
    found = find_date(text, SHANGHAI)
    assert found == expected
    assert found.tzinfo is not None
    assert found.utcoffset() == timedelta(hours=8)


def test_find_date_explicit_offset_is_honoured() -> None:
    found = find_date("2015-01-02T12:34:56Z", SHANGHAI)
    assert found == datetime(2015, 1, 2, 12, 34, 56, tzinfo=UTC)
    assert found.utcoffset() == timedelta(0)
    found = find_date("2015-01-02 12:34:56+09:00", SHANGHAI)
    assert found.utcoffset() == timedelta(hours=9)
    assert found == datetime(2015, 1, 2, 11, 34, 56, tzinfo=SHANGHAI)


def test_find_date_uses_the_given_zone() -> None:
    found = find_date("2024年1月1日 09:30", SINGAPORE)
    assert found == datetime(2024, 1, 1, 9, 30, tzinfo=SINGAPORE)
    assert found.tzinfo is SINGAPORE


def test_date_only_is_midnight() -> None:
    found = find_date("2015.01.02", SHANGHAI)
    assert (found.hour, found.minute, found.second) == (0, 0, 0)


@pytest.mark.parametrize(
    "text",
    [
        "2015-13-01",
        "2015-02-30",
        "2015-01-32",
        "2015年13月1日",
        "1989-12-31",
        f"{MAX_YEAR + 1}-01-01",
        "二〇一五年十三月一日",
        "12015-01-02",  # inside a longer number
        "2015-01-023",
        "2015.1-2",  # separators disagree
        "1.2.3",
        "no date at all",
        "",
    ],
)
def test_find_date_rejects(text: str) -> None:
    assert find_date(text, SHANGHAI) is None


def test_invalid_match_does_not_stop_the_search() -> None:
    text = "编号2015-13-01，旧闻1989-06-01，发布于2016-02-29 10:00"
    assert find_date(text, SHANGHAI) == sh(2016, 2, 29, 10, 0)


def test_first_valid_match_wins() -> None:
    assert find_date("2015-07-02 然后 2016-01-01", SHANGHAI) == sh(2015, 7, 2)


def test_year_bounds_are_module_constants() -> None:
    assert (MIN_YEAR, MAX_YEAR) == (1990, 2100)
    assert find_date(f"{MIN_YEAR}-01-01", SHANGHAI) == sh(MIN_YEAR, 1, 1)
    assert find_date(f"{MAX_YEAR}-12-31", SHANGHAI) == sh(MAX_YEAR, 12, 31)


def test_bad_time_keeps_the_date() -> None:
    assert find_date("2015-01-02 25:61", SHANGHAI) == sh(2015, 1, 2)


def test_date_pattern_is_compiled_and_exposes_groups() -> None:
    m = DATE_PATTERN.search("时间 2015-07-02 05:18:09")
    assert m is not None
    assert (m["year"], m["month"], m["day"]) == ("2015", "07", "02")
    assert (m["hour"], m["minute"], m["second"]) == ("05", "18", "09")
    m = DATE_PATTERN.search("二零一零年十二月十五日")
    assert (m["cyear"], m["cmonth"], m["cday"]) == ("二零一零", "十二", "十五")


@pytest.mark.parametrize(
    "text",
    ["2015-" * 20000, "1" * 100000, "二〇一五年" * 20000, "2015-13-01 " * 20000],
)
def test_find_date_is_linear_on_hostile_text(text: str) -> None:
    assert find_date(text, SHANGHAI) is None  # finishes quickly, no backtracking


# --- parse_datetime: metadata values ---------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2019-09-07T13:43:45+08:00", sh(2019, 9, 7, 13, 43, 45)),
        ("2019-09-07T05:43:45Z", sh(2019, 9, 7, 13, 43, 45)),
        ("2019-09-07T05:43:45.123Z", sh(2019, 9, 7, 13, 43, 45)),
        ("2019-09-07T05:43:45.1234567Z", sh(2019, 9, 7, 13, 43, 45)),
        ("2019-09-07T13:43:45+0800", sh(2019, 9, 7, 13, 43, 45)),
        ("2019-09-07T13:43:45", sh(2019, 9, 7, 13, 43, 45)),
        ("2019-09-07 13:43:45", sh(2019, 9, 7, 13, 43, 45)),
        ("2020-11-26 08:04", sh(2020, 11, 26, 8, 4)),
        ("2023-11-17", sh(2023, 11, 17)),
        ("  2023-11-17  ", sh(2023, 11, 17)),
        ("Sat, 07 Sep 2019 13:43:45 +0800", sh(2019, 9, 7, 13, 43, 45)),
        ("Sat, 07 Sep 2019 05:43:45 GMT", sh(2019, 9, 7, 13, 43, 45)),
        ("07 Sep 2019 13:43:45 -0000", sh(2019, 9, 7, 13, 43, 45)),
        ("1567835025", sh(2019, 9, 7, 13, 43, 45)),
        ("1567835025000", sh(2019, 9, 7, 13, 43, 45)),
        ("2019年09月07日 13:43", sh(2019, 9, 7, 13, 43)),
        ("2019/09/07 13:43", sh(2019, 9, 7, 13, 43)),
    ],
)
def test_parse_datetime(value: str, expected: datetime) -> None:
    found = parse_datetime(value, SHANGHAI)
    assert found == expected
    assert found.tzinfo is not None


def test_parse_datetime_keeps_explicit_offset() -> None:
    found = parse_datetime("2019-09-07T13:43:45-05:00", SHANGHAI)
    assert found.utcoffset() == timedelta(hours=-5)
    assert found == datetime(2019, 9, 7, 18, 43, 45, tzinfo=UTC)
    assert parse_datetime("2019-09-07T13:43:45Z", SHANGHAI).utcoffset() == timedelta(0)


def test_parse_datetime_zaobao_form_in_singapore_time() -> None:
    found = parse_datetime("09/07/2019 - 13:43", SINGAPORE)
    assert found == datetime(2019, 9, 7, 13, 43, tzinfo=SINGAPORE)
    assert parse_datetime("12/31/2023", SINGAPORE) == datetime(2023, 12, 31, tzinfo=SINGAPORE)


def test_parse_datetime_epoch_is_an_instant() -> None:
    found = parse_datetime("1704067200", SINGAPORE)  # 2024-01-01T00:00Z
    assert found == datetime(2024, 1, 1, tzinfo=UTC)
    assert found.utcoffset() == timedelta(hours=8)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "garbage",
        "0000000000",  # epoch 1970: out of bounds
        "9999999999999",  # epoch ms in 2286
        "1989-01-01T00:00:00",
        "13/45/2019 - 10:00",
        "2019-13-01",
        "Sat, 99 Foo 2019",
        "12345",
    ],
)
def test_parse_datetime_rejects(value: str) -> None:
    assert parse_datetime(value, SHANGHAI) is None


# --- date_from_url ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://news.sina.com.cn/c/2015-07-02/doc-ifxu.shtml", sh(2015, 7, 2)),
        ("http://example.com/news/20150702/123.html", sh(2015, 7, 2)),
        ("http://www.cctv.com/2015/07/02/ARTI123.shtml", sh(2015, 7, 2)),
        ("http://www.xinhuanet.com/2015-07/02/c_1115790123.htm", sh(2015, 7, 2)),
        ("http://www.news.cn/fortune/2023-11/17/c_1129981476.htm", sh(2023, 11, 17)),
        ("http://money.163.com/15/0703/15/ATJVVCJR00254TFQ.html", sh(2015, 7, 3, 15)),
        ("https://new.qq.com/a/20190907/004563.htm", sh(2019, 9, 7)),
        ("https://new.qq.com/rain/a/20250101A01ABC00", sh(2025, 1, 1)),
        ("https://china.chinadaily.com.cn/a/202311/17/WS6557.html", sh(2023, 11, 17)),
        ("http://politics.people.com.cn/n1/2019/0907/c1001-3134.html", sh(2019, 9, 7)),
    ],
)
def test_date_from_url(url: str, expected: datetime) -> None:
    assert date_from_url(url, SHANGHAI) == expected


def test_date_from_url_zaobao_in_singapore_time() -> None:
    url = "https://www.zaobao.com/realtime/china/story20240101-1458123"
    assert date_from_url(url, SINGAPORE) == datetime(2024, 1, 1, tzinfo=SINGAPORE)


@pytest.mark.parametrize(
    "url",
    [
        "https://www.163.com/dy/article/HABCDEF0051234.html",
        "https://www.thepaper.cn/newsDetail_forward_1234567",
        "http://example.com/20151345/x.html",  # month 13
        "http://example.com/99/1399/25/X.html",  # NetEase form, bad date and hour
        "http://example.com/15/0703/25/X.html",  # NetEase form, hour 25
        "http://example.com/1980/01/01/x.html",  # before MIN_YEAR
        "http://example.com/?date=2015-07-02",  # only the path is read
        "",
        "not a url",
    ],
)
def test_date_from_url_none(url: str) -> None:
    assert date_from_url(url, SHANGHAI) is None


# --- real pages: cx163-zh (NetEase money, 2015) -------------------------------


def _cx163_cases() -> list[dict]:
    if not CX163.is_dir():
        pytest.skip(f"shared datasets not found at {CX163}")
    with open(CX163 / "cases.jsonl", encoding="utf-8") as f:
        return [c for c in map(json.loads, f) if c["published"]]


def test_cx163_date_from_url_gives_gold_day() -> None:
    cases = _cx163_cases()
    hits = sum(
        (found := date_from_url(c["url"], SHANGHAI)) is not None
        and found.date().isoformat() == c["published"][:10]
        for c in cases
    )
    assert cases
    assert hits >= 0.95 * len(cases), f"{hits}/{len(cases)}"


def test_cx163_find_date_on_page_text() -> None:
    """Paper mode on the whole text; the first date may be a nav date, so the
    floor is loose (measured: 54/54 to the second)."""
    cases = _cx163_cases()
    hits = 0
    for case in cases:
        raw = (CX163 / case["html_file"]).read_bytes()
        tree = lxml.html.document_fromstring(raw.decode("gb18030", "replace"))
        for element in tree.xpath("//script|//style"):
            element.drop_tree()
        found = find_date(tree.text_content(), SHANGHAI)
        assert found is None or found.tzinfo is not None
        gold = datetime.fromisoformat(case["published"])
        hits += found is not None and found.date() == gold.date()
    assert hits >= 0.5 * len(cases), f"{hits}/{len(cases)}"


def test_fixed_offset_result_compares_with_zoneinfo() -> None:
    found = find_date("2015-01-02T04:34:56+00:00", SHANGHAI)
    assert found == sh(2015, 1, 2, 12, 34, 56)
    assert found.tzinfo == timezone(timedelta(0))


# --- find_date_forms: dates day or month first, month names (best mode, date_forms) ---

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("text", "day_first", "expected"),
    [
        # German: day first, with a dot; numeric dots are always day first
        ("Veröffentlicht am 2. August 2019", True, (2019, 8, 2)),
        ("Stand: 02.08.2019, 14:30 Uhr", False, (2019, 8, 2, 14, 30)),
        ("2. Aug. 2019 um 9:05", True, (2019, 8, 2, 9, 5)),
        ("12. März 2020", True, (2020, 3, 12)),
        # English: month first and day first, ordinals, am/pm
        ("August 2, 2019", False, (2019, 8, 2)),
        ("Posted on Aug. 2nd, 2019 at 3:45 pm", False, (2019, 8, 2, 15, 45)),
        ("Updated 12:10 am, 2 Aug 2019", True, (2019, 8, 2)),
        ("Sunday 2 August 2019 10:02", True, (2019, 8, 2, 10, 2)),
        ("May 5, 2019 12:30 AM", False, (2019, 5, 5, 0, 30)),
        # French, Spanish, Portuguese, Italian
        ("le 2 août 2019 à 14h30", True, (2019, 8, 2, 14, 30)),
        ("Publicado el 2 de agosto de 2019", True, (2019, 8, 2)),
        ("2 de setembro de 2021", True, (2021, 9, 2)),
        ("2 settembre 2021 ore 10:15", True, (2021, 9, 2, 10, 15)),
        # ambiguous numbers follow the page's order; a field over 12 settles it
        ("06/02/2022", False, (2022, 6, 2)),
        ("06/02/2022", True, (2022, 2, 6)),
        ("13/06/2022", False, (2022, 6, 13)),
        ("06/13/2022 08:00", True, (2022, 6, 13, 8, 0)),
        # year first (the paper's pattern) still works, forum post headers included
        ("发表于 2005-5-7 21:23", False, (2005, 5, 7, 21, 23)),
        ("2019-08-02 then August 9, 2019", False, (2019, 8, 2)),
        ("August 9, 2019 then 2019-08-02", False, (2019, 8, 9)),
    ],
)
def test_date_forms(text, day_first, expected):
    assert find_date_forms(text, BERLIN, day_first) == datetime(*expected, tzinfo=BERLIN)


@pytest.mark.parametrize(
    "text", ["no date here", "version 2.0 in May", "in 2019 and 2020", "room 12/14", "32/13/2019"]
)
def test_date_forms_not_dates(text):
    assert find_date_forms(text, BERLIN, True) is None


@pytest.mark.parametrize(
    ("lang", "day_first"),
    [
        ("en-US", False),
        ("en", False),
        ("zh-CN", False),
        (None, False),
        ("en-GB", True),
        ("de-DE", True),
        ("fr", True),
        ("pt_BR", True),
    ],
)
def test_day_first_for(lang, day_first):
    assert day_first_for(lang) is day_first


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("August 2, 2019", (2019, 8, 2)),
        ("2. August 2019 14:30", (2019, 8, 2, 14, 30)),
        ("Friday 2 Aug 2019 3:45 PM", (2019, 8, 2, 15, 45)),
    ],
)
def test_metadata_values_in_day_or_month_first_forms(value, expected):
    assert parse_datetime(value, BERLIN) == datetime(*expected, tzinfo=BERLIN)


def test_a_time_element_stating_its_time_as_text():
    tree = lxml.html.document_fromstring(
        "<html><body><p>x</p><time class='pub'>2. August 2019, 14:30 Uhr</time></body></html>"
    )
    assert meta_published(tree, BERLIN) == (datetime(2019, 8, 2, 14, 30, tzinfo=BERLIN), "time-element")
