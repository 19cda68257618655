"""The punctuation method, Li & Jiang 2012 §1-§2.1, paper mode.

Every ratio below is counted by hand: punctuation characters (``PUNCTUATION``) over the
node's non-whitespace characters, kept when 0 < ratio <= p (p = 0.3).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from newsspider.evaluation import evaluate
from newsspider.extraction import ExtractionError
from newsspider.extraction.page import load_page
from newsspider.extraction.punctuation import (
    DROP_TAGS,
    UNWRAP_TAGS,
    P,
    extract_punctuation,
    keep_ratio,
    normalise,
    punctuation_nodes,
    punctuation_ratio,
    text_nodes,
)
from newsspider.extraction.registry import get_extractor

PAGE = """<!DOCTYPE html>
<html><head><title>测试页</title>
<meta property="og:title" content="测试标题">
<meta name="pubdate" content="2024-01-15 08:30:00">
<style>p { color: red; }</style><script>var s = "。。。，，，";</script></head>
<body>
<div class="nav"><a href="/">首页</a> | <a href="/news">新闻</a></div>
<!-- 注释，很长的注释。 -->
<div>今天天气很好，我们去公园散步。</div>
<div><p>他说：“<strong>明天</strong>再来！”</p></div>
<div><img src="x.jpg">图片说明，很好。</div>
<div>&nbsp;&nbsp;价格上涨了10%。</div>
<div>一二三，四五，六七。</div>
<div>Hello, world. This is <font color="red">fine</font></div>
<div>版权所有 © 2024</div>
<div>（完）</div>
</body></html>"""

# (text node after §1 (3)/(6), punctuation, characters, kept at p = 0.3)
EXPECTED = [
    ("测试页", 0, 3, False),  # ratio 0: excluded (navigation, §2.1)
    ("首页", 0, 2, False),
    ("|", 0, 1, False),  # "|" is not in the punctuation list
    ("新闻", 0, 2, False),
    ("今天天气很好，我们去公园散步。", 2, 15, True),  # 2/15 = 0.133
    ("他说：“明天再来！”", 4, 10, False),  # 0.4: strong and p unwrapped into one node
    ("图片说明，很好。", 2, 8, True),  # 0.25: the tail of the deleted <img> stays
    ("价格上涨了10%。", 1, 9, True),  # 1/9: &nbsp; removed, "%" is not punctuation
    ("一二三，四五，六七。", 3, 10, True),  # exactly p = 0.3: kept (ratio <= p)
    ("Hello, world. This is fine", 2, 22, True),  # 2/22: font unwrapped, spaces not counted
    ("版权所有 © 2024", 0, 9, False),
    ("（完）", 2, 3, False),  # 2/3
]


def nodes_of(html: str, **kw):
    page = load_page(html)
    normalise(page.root, **kw)
    return text_nodes(page.root)


def test_text_nodes_after_normalisation():
    """§1 (6): style, script, img, meta and comments are gone; §1 (3): p/strong/font unwrapped."""
    assert [n.text for n in nodes_of(PAGE)] == [e[0] for e in EXPECTED]


def test_ratio_per_node_and_verdict():
    rows = punctuation_nodes(nodes_of(PAGE))
    assert [(r.text, r.punctuation, r.characters, r.kept) for r in rows] == EXPECTED
    for row in rows:
        assert row.ratio == pytest.approx(row.punctuation / row.characters)


def test_body_is_the_kept_nodes_one_per_line():
    art = extract_punctuation(PAGE)
    assert art.text.splitlines() == [e[0] for e in EXPECTED if e[3]]
    assert art.mode == "paper"
    assert art.encoding == "unicode"


def test_title_and_time_come_from_the_shared_metadata_helpers():
    """<meta> is read before §1 (6) deletes it."""
    art = extract_punctuation(PAGE, tz="Asia/Shanghai")
    assert (art.title, art.title_source) == ("测试标题", "og:title")
    assert art.published == datetime(2024, 1, 15, 8, 30, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert art.published_source == "meta:pubdate"


def test_time_in_the_text_near_the_body():
    """page.py: a date-only metadata time gives way to the same day's time in the text
    (Zou & Zhong §1.2.3's pattern near the body); without metadata the text time is used."""
    body = (
        "<body><div>2024-01-15 08:30 来源：新华社</div>"
        "<div>今天天气很好，我们去公园散步。</div></body>"
    )
    zone = ZoneInfo("Asia/Shanghai")
    for head in ('<head><meta name="pubdate" content="2024-01-15"></head>', ""):
        art = extract_punctuation(f"<html>{head}{body}</html>")
        assert (art.published, art.published_source) == (
            datetime(2024, 1, 15, 8, 30, tzinfo=zone),
            "text",
        )
    other_day = '<head><meta name="pubdate" content="2024-01-14"></head>'
    art = extract_punctuation(f"<html>{other_day}{body}</html>")
    assert (art.published, art.published_source) == (
        datetime(2024, 1, 14, tzinfo=zone),
        "meta:pubdate",
    )


def test_punctuation_ratio_counts_non_whitespace_characters():
    assert punctuation_ratio("a, b.") == (2, 4, 0.5)
    assert punctuation_ratio("   ") == (0, 0, 0.0)
    assert punctuation_ratio("【注】《书》") == (4, 6, pytest.approx(4 / 6))
    assert punctuation_ratio("x|y", punctuation="|") == (1, 3, pytest.approx(1 / 3))


@pytest.mark.parametrize(
    ("ratio", "kwargs", "kept"),
    [
        (0.0, {}, False),  # 0 excluded by default
        (0.0, {"lower_inclusive": True}, True),  # the paper's [0, p]
        (0.01, {}, True),
        (0.3, {}, True),
        (0.3000001, {}, False),
        (0.4, {"p": 0.5}, True),
        (0.1, {"lower": 0.1}, False),
        (0.1, {"lower": 0.1, "lower_inclusive": True}, True),
    ],
)
def test_keep_ratio_bounds(ratio, kwargs, kept):
    assert keep_ratio(ratio, **kwargs) is kept


def test_parameters():
    assert P == 0.3
    assert DROP_TAGS == ("style", "script", "img", "iframe", "object", "meta", "applet", "link")
    assert UNWRAP_TAGS == ("strong", "font", "p")
    literal = extract_punctuation(PAGE, lower_inclusive=True).text.splitlines()
    assert literal == [e[0] for e in EXPECTED if e[3] or e[1] == 0]
    assert "他说：“明天再来！”" in extract_punctuation(PAGE, p=0.5).text.splitlines()
    # Without unwrapping, the quotation is three nodes: 2/4, 0, 2/4, none kept.
    nodes = [n.text for n in nodes_of(PAGE, unwrap=())]
    assert nodes[5:8] == ["他说：“", "明天", "再来！”"]
    assert "明天" not in extract_punctuation(PAGE, unwrap=(), lower_inclusive=False).text
    # A tag in the drop list goes with its text.
    assert "今天" not in extract_punctuation(PAGE, drop=(*DROP_TAGS, "div")).text


def test_bytes_in_a_chinese_encoding():
    raw = PAGE.replace("<head>", '<head><meta charset="gbk">').encode("gbk", "replace")
    art = extract_punctuation(raw)
    assert art.encoding == "gb18030"
    assert "今天天气很好，我们去公园散步。" in art.text.splitlines()


def test_not_html_and_no_best_mode():
    with pytest.raises(ExtractionError):
        extract_punctuation(b"%PDF-1.4\n" + bytes(range(256)) * 4)
    with pytest.raises(ExtractionError):
        extract_punctuation("   ")
    with pytest.raises(ValueError, match="unknown extraction method"):
        get_extractor("punctuation-best")


def test_registered_method():
    fn = get_extractor("punctuation")
    assert (fn.name, fn.mode) == ("punctuation", "paper")
    art = fn(PAGE, "http://example.com/a", headers={"Content-Type": "text/html"})
    assert art.text and art == extract_punctuation(PAGE, "http://example.com/a")


# -- datasets (skipped cleanly when ../shared is absent) ---------------------------------

# F1 floors a little under what was measured (cwced-zh 0.848, cx163-zh 0.720).
FLOORS = {"cwced-zh": 0.82, "cx163-zh": 0.70}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_dataset_floor(datasets, name):
    report = evaluate(datasets / name, lambda raw, url: extract_punctuation(raw, url))
    assert not report.errors
    assert report.f1 >= FLOORS[name]
