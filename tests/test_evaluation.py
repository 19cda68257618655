"""Tests of the §A4 scorer (newsspider.evaluation); no dataset files needed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from newsspider.evaluation import (
    BodyScore,
    Case,
    DatasetReport,
    date_matches,
    evaluate,
    format_table,
    load_cases,
    score_body,
    title_matches,
    tokens,
)

CST = timezone(timedelta(hours=8))

# --------------------------------------------------------------------------
# tokens


def test_tokens_cjk_characters_and_latin_runs():
    assert tokens("新华社北京3月21日电 Xinhua reports GDP2024增长") == [
        *"新华社北京",
        "3",
        "月",
        "21",
        *"日电",
        "xinhua",
        "reports",
        "gdp2024",
        *"增长",
    ]


def test_tokens_full_width_letters_and_digits_become_ascii():
    assert tokens("ＧＤＰ增长６.５％，ＡＢＣ１２３") == [
        "gdp",
        "增",
        "长",
        "6",
        "5",
        "abc123",
    ]


def test_tokens_skip_punctuation_whitespace_and_underscore():
    assert tokens("“你好”，world!\n\t（测试）——foo_bar... 、。") == [
        "你",
        "好",
        "world",
        "测",
        "试",
        "foo",
        "bar",
    ]
    assert tokens(" \n。，！？") == []
    assert tokens("") == []


def test_tokens_kana_hangul_extension_a_and_compatibility():
    assert tokens("カタカナ・ひらがな") == [
        *"カタカナ",
        *"ひらがな",
    ]  # ・ is punctuation
    assert tokens("한국어 text") == ["한", "국", "어", "text"]
    assert tokens("㐀䶵") == ["㐀", "䶵"]  # extension A
    assert tokens("\uf900") == ["\u8c48"]  # compatibility ideograph -> unified by NFKC
    assert tokens("二〇〇五年") == [*"二〇〇五年"]


def test_tokens_other_scripts_are_runs_lowercased():
    assert tokens("Café São-Paulo ПРИВЕТ мир") == [
        "café",
        "são",
        "paulo",
        "привет",
        "мир",
    ]


# --------------------------------------------------------------------------
# score_body


def test_score_body_identical():
    s = score_body("新华社电\n记者 张三", "新华社电 记者张三。")
    assert isinstance(s, BodyScore)
    assert (s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0)
    assert s.qualified and s.excellent
    assert (s.true_positives, s.false_positives, s.false_negatives) == (8, 0, 0)


def test_score_body_hand_computed_multiset():
    # gold: a a b c (4 tokens); extracted: a b b d e (5 tokens)
    # intersection: a (min 2,1 = 1) + b (min 1,2 = 1) = 2
    s = score_body("a b b d e", "a a b c")
    assert (s.extracted_tokens, s.gold_tokens, s.true_positives) == (5, 4, 2)
    assert (s.false_positives, s.false_negatives) == (3, 2)
    assert s.precision == pytest.approx(2 / 5)
    assert s.recall == pytest.approx(2 / 4)
    assert s.f1 == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    assert not s.qualified and not s.excellent


def test_score_body_chinese_hand_computed():
    # gold 10 characters; extraction keeps 9 of them and adds 2 noise chars
    gold = "今天北京天气晴朗温暖"
    s = score_body("今天北京天气晴朗温导航", gold)
    assert (s.true_positives, s.false_positives, s.false_negatives) == (9, 2, 1)
    assert s.precision == pytest.approx(9 / 11)
    assert s.recall == pytest.approx(0.9)


def _gold(n: int) -> str:
    return " ".join(f"g{i}" for i in range(n))


def _noise(n: int) -> str:
    return " ".join(f"n{i}" for i in range(n))


def test_qualified_boundary_exactly_five_percent():
    gold = _gold(100)
    at = score_body(gold + " " + _noise(5), gold)  # 5 FP = 5% of 100
    assert at.false_positives == 5
    assert at.recall == 1.0
    assert at.qualified
    assert not at.excellent
    over = score_body(gold + " " + _noise(6), gold)  # 6%
    assert not over.qualified and not over.excellent


def test_excellent_strictly_below_two_percent():
    gold = _gold(100)
    two = score_body(gold + " " + _noise(2), gold)  # exactly 2%: not excellent
    assert two.qualified and not two.excellent
    one = score_body(gold + " " + _noise(1), gold)  # 1%
    assert one.qualified and one.excellent
    # 200 gold tokens: 3 FP is 1.5% -> excellent
    gold200 = _gold(200)
    assert score_body(gold200 + " " + _noise(3), gold200).excellent
    assert not score_body(gold200 + " " + _noise(4), gold200).excellent


def test_recall_boundary_ninety_five_percent():
    gold = _gold(100)
    kept95 = " ".join(f"g{i}" for i in range(95))
    s = score_body(kept95, gold)
    assert s.recall == pytest.approx(0.95)
    assert s.qualified and s.excellent
    kept94 = " ".join(f"g{i}" for i in range(94))
    assert not score_body(kept94, gold).qualified


def test_fp_threshold_relative_to_gold_not_extraction():
    # 20 gold tokens: 1 FP = 5% of gold (qualified); 2 FP = 10% (not)
    gold = _gold(20)
    assert score_body(gold + " x", gold).qualified
    assert not score_body(gold + " x y", gold).qualified


def test_score_body_edge_cases():
    both_empty = score_body("", "")
    assert (both_empty.precision, both_empty.recall, both_empty.f1) == (1.0, 1.0, 1.0)
    assert both_empty.qualified and both_empty.excellent
    only_punct = score_body("。，", "！")  # no tokens on either side
    assert only_punct.f1 == 1.0
    noise = score_body("多余", "")
    assert noise.precision == 0.0 and noise.f1 == 0.0
    assert not noise.qualified and not noise.excellent
    missing = score_body("", "正文")
    assert (missing.precision, missing.recall, missing.f1) == (0.0, 0.0, 0.0)
    assert not missing.qualified


# --------------------------------------------------------------------------
# title_matches


def test_title_matches_whitespace_and_width():
    assert title_matches("欧阳觅剑:收费公路亏损扩大", "欧阳觅剑:收费公路亏损扩大")
    assert title_matches(
        " 欧阳觅剑：收费 公路\n亏损扩大 ", "欧阳觅剑:收费公路亏损扩大"
    )  # NFKC ： -> :
    assert title_matches("ＧＤＰ增长", "GDP增长")
    assert title_matches("Hello  World", "HelloWorld")


def test_title_matches_ignoring_punctuation():
    assert title_matches("“一带一路”峰会开幕", '"一带一路"峰会开幕')
    assert title_matches("习近平：推进改革", "习近平推进改革")
    assert title_matches("A—B·C", "A-B C")


def test_title_mismatches():
    assert not title_matches(None, "标题")
    assert not title_matches("", "标题")
    assert not title_matches("标题|网易财经", "标题")  # a site suffix is not punctuation
    assert not title_matches("标题_网易财经", "标题")
    assert not title_matches("hello world", "Hello World")  # case is kept
    assert not title_matches("标题一", "标题二")


# --------------------------------------------------------------------------
# date_matches


@pytest.mark.parametrize(
    ("gold", "ok"),
    [
        ("2005", True),
        ("2005-03", True),
        ("2005-03-21", True),
        ("2005-03-21T11:21", True),
        ("2005-03-21T11:21:08", True),
        ("2004", False),
        ("2005-04", False),
        ("2005-03-22", False),
        ("2005-03-21T11:22", False),
        ("2005-03-21T12:21", False),
        ("2005-03-21T11:21:09", False),
    ],
)
def test_date_matches_each_precision(gold, ok):
    extracted = datetime(2005, 3, 21, 11, 21, 8, tzinfo=CST)
    assert date_matches(extracted, gold) is ok


def test_date_seconds_only_when_gold_has_them():
    extracted = datetime(2005, 3, 21, 11, 21, 59)
    assert date_matches(extracted, "2005-03-21T11:21")
    assert not date_matches(extracted, "2005-03-21T11:21:00")
    assert date_matches(datetime(2005, 3, 21, 11, 21, 8, 999), "2005-03-21T11:21:08")


def test_date_with_offset_converts_extracted():
    gold = "2015-07-02T05:18:09+08:00"
    assert date_matches(datetime(2015, 7, 2, 5, 18, 9, tzinfo=CST), gold)
    assert date_matches(datetime(2015, 7, 1, 21, 18, 9, tzinfo=UTC), gold)
    assert not date_matches(datetime(2015, 7, 2, 5, 18, 9, tzinfo=UTC), gold)
    # naive: read as wall-clock time in the gold's offset
    assert date_matches(datetime(2015, 7, 2, 5, 18, 9), gold)
    assert date_matches(datetime(2015, 7, 1, 21, 18, 9, tzinfo=UTC), "2015-07-01T21:18:09Z")
    assert date_matches(datetime(2015, 7, 2, 0, 30, tzinfo=CST), "2015-07-01T11:30-05:00")
    assert date_matches(datetime(2015, 7, 2, 0, 30, tzinfo=CST), "2015-07-01T11:30-0500")


def test_date_offset_can_change_the_day():
    # 2015-07-02 01:00 in Beijing is still 07-01 in UTC
    extracted = datetime(2015, 7, 2, 1, 0, tzinfo=CST)
    assert date_matches(extracted, "2015-07-02+08:00")
    assert date_matches(extracted, "2015-07-01Z")
    assert not date_matches(extracted, "2015-07-02Z")


def test_date_without_offset_compares_own_wall_clock():
    gold = "2005-03-21T11:21"
    assert date_matches(datetime(2005, 3, 21, 11, 21, tzinfo=CST), gold)
    assert date_matches(datetime(2005, 3, 21, 11, 21, tzinfo=UTC), gold)
    assert date_matches(datetime(2005, 3, 21, 11, 21), gold)


def test_date_missing_and_bad_gold():
    assert not date_matches(None, "2005")
    with pytest.raises(ValueError):
        date_matches(datetime(2005, 1, 1), "March 2005")


# --------------------------------------------------------------------------
# load_cases and evaluate


def _write_dataset(root: Path) -> Path:
    d = root / "tiny-zh"
    (d / "html").mkdir(parents=True)
    rows = [
        # body + title + date gold; GBK bytes stay GBK
        {
            "id": "a",
            "url": "http://example.com/a.html",
            "html": "<html><title>标题甲</title><p>今天天气很好。</p></html>".encode("gbk"),
            "title": "标题甲",
            "published": "2015-07-02T05:18:09+08:00",
            "body": "今天天气很好。",
            "encoding": "gbk",
        },
        # body only
        {
            "id": "b",
            "url": None,
            "html": b"<html><p>hello world again</p></html>",
            "title": None,
            "published": "2005-03",
            "body": "hello world",
            "encoding": "utf-8",
        },
        # unlabelled
        {
            "id": "c",
            "url": None,
            "html": b"<html><p>list</p></html>",
            "title": None,
            "published": None,
            "body": None,
            "encoding": "utf-8",
        },
        # the extractor raises on this one
        {
            "id": "d",
            "url": "http://example.com/d.html",
            "html": b"BOOM",
            "title": "标题丁",
            "published": None,
            "body": "正文",
            "encoding": "utf-8",
        },
    ]
    with open(d / "cases.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            html = r.pop("html")
            (d / "html" / f"{r['id']}.html").write_bytes(html)
            r |= {
                "lang": "zh",
                "site": "example.com",
                "html_file": f"html/{r['id']}.html",
                "notes": "x",
            }
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return d


def test_load_cases_reads_raw_bytes(tmp_path):
    d = _write_dataset(tmp_path)
    cases = list(load_cases(d))
    assert [c.id for c in cases] == ["a", "b", "c", "d"]
    a = cases[0]
    assert isinstance(a, Case)
    assert a.dataset == "tiny-zh"
    assert a.html == "<html><title>标题甲</title><p>今天天气很好。</p></html>".encode("gbk")
    assert (a.url, a.title, a.published, a.encoding, a.lang, a.site, a.notes) == (
        "http://example.com/a.html",
        "标题甲",
        "2015-07-02T05:18:09+08:00",
        "gbk",
        "zh",
        "example.com",
        "x",
    )
    assert cases[2].body is None


@dataclass
class _Result:
    text: str
    title: str | None
    published: datetime | None


def _fake_extract(html: bytes, url: str | None) -> _Result:
    if html == b"BOOM":
        raise RuntimeError("cannot parse\nsecond line")
    if url == "http://example.com/a.html":
        return _Result(
            "今天天气很好。",
            "标题甲",
            datetime(2015, 7, 1, 21, 18, 9, tzinfo=UTC),
        )
    return _Result(
        html.decode("utf-8").replace("<html><p>", "").replace("</p></html>", ""),
        None,
        None,
    )


def test_evaluate_scores_and_records_errors(tmp_path):
    d = _write_dataset(tmp_path)
    report = evaluate(d, _fake_extract, name="fake")
    assert isinstance(report, DatasetReport)
    assert (report.dataset, report.extractor, report.pages, report.body_pages) == (
        "tiny-zh",
        "fake",
        4,
        3,
    )
    # a: perfect; b: 2/3 precision, recall 1 -> F1 0.8; d: error -> F1 0
    assert report.f1 == pytest.approx((1.0 + 0.8 + 0.0) / 3)
    assert report.precision == pytest.approx((1.0 + 2 / 3 + 0.0) / 3)
    assert report.recall == pytest.approx((1.0 + 1.0 + 0.0) / 3)
    # micro: tp 6 + 2 + 0 = 8, extracted 6 + 3 = 9, gold 6 + 2 + 2 = 10
    assert report.micro_precision == pytest.approx(8 / 9)
    assert report.micro_recall == pytest.approx(8 / 10)
    assert report.micro_f1 == pytest.approx(2 * (8 / 9) * 0.8 / (8 / 9 + 0.8))
    assert (report.qualified_n, report.excellent_n) == (1, 1)
    assert report.qualified == pytest.approx(1 / 3)
    # titles: a right, d (error) wrong; b and c have no title gold
    assert (report.title_n, report.title_accuracy) == (2, 0.5)
    # dates: a right (after conversion), b missing -> wrong
    assert (report.date_n, report.date_accuracy) == (2, 0.5)
    assert len(report.errors) == 1
    err = report.errors[0]
    assert (err.case_id, err.error, err.message) == (
        "d",
        "RuntimeError",
        "cannot parse",
    )
    by_id = {c.id: c for c in report.cases}
    assert by_id["a"].title_ok and by_id["a"].date_ok and by_id["a"].qualified
    assert by_id["c"].f1 is None and by_id["c"].title_ok is None and by_id["c"].date_ok is None
    assert by_id["d"].error == "RuntimeError: cannot parse" and by_id["d"].f1 == 0.0
    assert report.seconds > 0 and report.pages_per_s > 0


def test_evaluate_peer_without_title_or_date(tmp_path):
    d = _write_dataset(tmp_path)

    def text_only(html: bytes, url: str | None) -> SimpleNamespace:
        return SimpleNamespace(text="今天天气很好。hello world")

    report = evaluate(d, text_only, name="text-only")
    assert report.errors == []
    assert report.title_accuracy == 0.0 and report.title_n == 2
    assert report.date_accuracy == 0.0 and report.date_n == 2


def test_evaluate_accepts_none_mapping_and_cases(tmp_path):
    d = _write_dataset(tmp_path)
    cases = list(load_cases(d))
    calls = []

    def as_dict(html: bytes, url: str | None) -> dict | None:
        calls.append(url)
        if html == b"BOOM":
            return None
        return {"text": "今天天气很好。 hello world", "title": "标题甲"}

    report = evaluate(cases, as_dict, name="dict", repeat=3, warmup=True, disable_gc=True)
    assert len(calls) == 4 * 4  # one warm-up and three timed passes
    assert report.passes == 3 and report.seconds <= report.seconds_median
    assert report.dataset == "tiny-zh" and report.errors == []
    assert report.title_accuracy == 0.5


def test_report_as_dict_is_json_and_table_lists_rows(tmp_path):
    d = _write_dataset(tmp_path)
    report = evaluate(d, _fake_extract, name="fake")
    data = json.loads(json.dumps(report.as_dict()))
    assert data["dataset"] == "tiny-zh" and data["pages"] == 4
    assert data["errors"][0]["case_id"] == "d"
    assert len(data["cases"]) == 4 and data["pages_per_s"] > 0
    assert "cases" not in report.as_dict(cases=False)
    table = format_table([report, DatasetReport(dataset="empty", extractor="none")])
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["dataset", "extractor", "pages"]
    assert "tiny-zh" in lines[2] and "fake" in lines[2] and "50.0 (2)" in lines[2]
    assert lines[3].startswith("empty")


def test_docstring_examples():
    import doctest

    import newsspider.evaluation

    assert doctest.testmod(newsspider.evaluation).failed == 0


def test_format_markdown_marks_the_winner_and_says_who_is_behind(tmp_path):
    from newsspider.evaluation import format_markdown

    d = _write_dataset(tmp_path)
    good = evaluate(d, _fake_extract, name="good")

    def worse(raw: bytes, url: str | None):
        return SimpleNamespace(text="无关", title=None, published=None)

    bad = evaluate(d, worse, name="bad")
    md = format_markdown([bad, good])
    lines = md.splitlines()
    assert lines[0] == "**tiny-zh** (4 pages, 3 with body gold)"
    good_row = next(line for line in lines if line.startswith("| good |"))
    bad_row = next(line for line in lines if line.startswith("| bad |"))
    assert f"**{good.f1:.3f}**" in good_row and "**" not in bad_row
    summary = next(line for line in lines if line.startswith("- tiny-zh:"))
    assert f"highest F1 good ({good.f1:.3f})" in summary
    assert f"bad {bad.f1 - good.f1:+.3f}" in summary


def test_pooled_accuracy_sums_the_pages_of_every_dataset():
    from newsspider.evaluation import pooled_accuracy

    reports = [
        DatasetReport("a", "x", title_accuracy=1.0, title_n=54, date_accuracy=1.0, date_n=54),
        DatasetReport("b", "x", date_accuracy=33 / 37, date_n=37),
        DatasetReport("c", "x"),  # no title or date gold: not counted
        DatasetReport("a", "alone", date_accuracy=0.5, date_n=2),  # one dataset: no pooled row
    ]
    assert pooled_accuracy(reports) == {"x": (54, 54, 87, 91)}
    table = format_table(reports)
    pooled_row = table.splitlines()[-1]
    assert pooled_row.startswith("(all datasets)") and "95.6 (91)" in pooled_row
    assert "100.0 (54)" in pooled_row
