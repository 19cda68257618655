"""Li & Jiang 2012 §2.2 line-hash table, checked against hand computations.

Most tests use ``L = 2`` so the threshold ``int(1 + RC / L)`` moves every two pages:

    RC:         0  1  2  3  4  5  6
    threshold:  1  1  2  2  3  3  4
"""

import hashlib
import random
import re
from pathlib import Path

import pytest

from newsspider.extraction import linehash
from newsspider.extraction.linehash import (
    CleanResult,
    LineTable,
    decide_page,
    keep_line,
    line_md5,
    page_counts,
    page_md5,
    prune_due,
    prune_threshold,
    should_prune,
    split_lines,
)


def test_line_md5_is_hex_md5_of_stripped_utf8():
    assert line_md5("abc") == "900150983cd24fb0d6963f7d28e17f72"  # RFC 1321 test vector
    assert line_md5("  abc \r") == line_md5("abc")
    assert line_md5("新闻") == hashlib.md5("新闻".encode()).hexdigest()
    assert line_md5("新闻") != hashlib.md5("新闻".encode("gbk")).hexdigest()


def test_split_lines_strips_and_skips_empty():
    assert split_lines("  第一行  \r\n\n\t\n第二行\n") == ["第一行", "第二行"]
    assert split_lines("") == []
    assert split_lines(" \n \n") == []


def test_page_md5_ignores_what_the_table_cannot_see():
    assert page_md5("a\n  b \n\n") == page_md5("a\nb")
    assert page_md5("a\nb") != page_md5("b\na")


@pytest.mark.parametrize(
    ("LC", "RC", "L", "keep"),
    [
        (1, 0, 50, True),  # int(1 + 0/50) = 1
        (2, 0, 50, False),
        (2, 49, 50, False),  # int(1 + 0.98) = 1
        (2, 50, 50, True),  # int(1 + 1) = 2
        (3, 100, 50, True),  # int(1 + 2) = 3
        (4, 100, 50, False),
        (2, 1, 2, False),  # int(1 + 0.5) = 1
        (2, 2, 2, True),  # int(1 + 1) = 2
        (3, 5, 2, True),  # int(1 + 2.5) = 3
    ],
)
def test_keep_line_threshold(LC, RC, L, keep):
    assert keep_line(LC, RC, L) is keep


def test_keep_line_defaults_to_paper_L_50():
    assert keep_line(2, 50) and not keep_line(2, 49)


def test_prune_threshold_and_boundary():
    assert prune_threshold(250) == 2.5
    assert should_prune(2, 200)  # LC == RC/100 is pruned (<=)
    assert not should_prune(3, 200)
    assert not should_prune(1, 99)  # nothing goes before RC reaches 100


def test_prune_due_counts_pages_since_last_pruning():
    assert not prune_due(99, 0, 100)
    assert prune_due(100, 0, 100)
    assert not prune_due(150, 100, 100)
    assert prune_due(200, 100, 100)
    assert not prune_due(10_000, 0, 0)  # 0 = never


def test_page_counts_once_per_page_vs_paper():
    assert page_counts(["a", "b", "a"]) == {"a": 1, "b": 1}
    assert page_counts(["a", "b", "a"], once_per_page=False) == {"a": 2, "b": 1}


def test_decide_page_rebuilds_the_papers_line_by_line_counts():
    # "x" three times on a page, LC after the page = 3, RC = 2, L = 2: threshold 2.
    # Line by line the paper saw LC 1, 2, 3 -> keep, keep, drop.
    md5s = ["X", "Y", "X", "X"]
    r = decide_page(["x", "y", "x", "x"], md5s, {"X": 3, "Y": 1}, RC=2, L=2, once_per_page=False)
    assert r == CleanResult("x\ny\nx", 3, 1, ["x"])
    # Counted once per page, every occurrence sees LC = 1: all kept.
    r = decide_page(["x", "y", "x"], ["X", "Y", "X"], {"X": 1, "Y": 1}, RC=2, L=2)
    assert r == CleanResult("x\ny\nx", 3, 0, [])


def test_decide_page_needs_one_md5_per_line():
    with pytest.raises(ValueError):
        decide_page(["a"], [], {}, RC=0)


def test_table_learns_boilerplate_hand_computed():
    t = LineTable(L=2)
    # P1, RC=0, threshold 1: nav=1, 正文一=1, 版权=1: all kept (the table knows nothing yet).
    r = t.clean("导航\n正文一\n版权所有")
    assert (r.text, r.dropped_lines) == ("导航\n正文一\n版权所有", [])
    # P2, RC=1, threshold int(1.5)=1: nav=2 drop, 正文二=1 keep, 版权=2 drop.
    r = t.clean("导航\n正文二\n版权所有")
    assert (r.text, r.kept, r.dropped, r.dropped_lines) == ("正文二", 1, 2, ["导航", "版权所有"])
    # P3, RC=2, threshold 2: nav=3 drop, 正文三=1 keep, 正文一=2 keep (a quoted headline),
    # 版权=3 drop.
    r = t.clean("导航\n正文三\n正文一\n版权所有")
    assert (r.text, r.dropped_lines) == ("正文三\n正文一", ["导航", "版权所有"])
    # P4, RC=3, threshold int(2.5)=2: nav=4 drop, 正文一=3 drop, 正文四=1 keep.
    r = t.clean("导航\n正文一\n正文四")
    assert (r.text, r.dropped_lines) == ("正文四", ["导航", "正文一"])
    assert t.RC == 4
    assert {line: t.LC[line_md5(line)] for line in ["导航", "版权所有", "正文一", "正文四"]} == {
        "导航": 4,
        "版权所有": 3,
        "正文一": 3,
        "正文四": 1,
    }


def test_once_per_page_vs_paper_mode():
    page = "分享到\n正文\n分享到"
    # once per page, RC=0, threshold 1: 分享到 counted once, LC=1: both copies kept.
    improved = LineTable(L=2)
    assert improved.clean(page).text == page
    assert improved.LC[line_md5("分享到")] == 1
    # paper: first copy LC=1 kept, second LC=2 > 1 dropped; the line ends at LC=2.
    paper = LineTable(L=2)
    r = paper.clean(page, once_per_page=False)
    assert (r.text, r.dropped_lines) == ("分享到\n正文", ["分享到"])
    assert paper.LC[line_md5("分享到")] == 2
    # P2, RC=1, threshold 1: both drop it; the improvement is at LC=2, paper mode at LC=3.
    assert improved.clean("分享到\n正文二").dropped_lines == ["分享到"]
    assert paper.clean("分享到\n正文二", once_per_page=False).dropped_lines == ["分享到"]
    assert improved.LC[line_md5("分享到")] == 2
    assert paper.LC[line_md5("分享到")] == 3
    # P3, P4 without it (RC becomes 4, threshold int(1 + 4/2) = 3). On P5 the improvement
    # sees LC=3 <= 3 and keeps it; paper mode, inflated by the repeat, sees LC=4 and drops it.
    for k in (3, 4):
        improved.clean(f"正文{k}")
        paper.clean(f"正文{k}", once_per_page=False)
    assert improved.clean("分享到\n正文五").dropped == 0
    assert paper.clean("分享到\n正文五", once_per_page=False).dropped_lines == ["分享到"]


def test_empty_page_is_not_counted():
    t = LineTable()
    assert t.clean(" \n\n\t") == CleanResult("", 0, 0, [])
    assert (t.RC, t.LC) == (0, {})


def test_prune_deletes_records_at_or_below_RC_over_100():
    t = LineTable(LC={"a": 1, "b": 2, "c": 3}, RC=200)
    # threshold 200/100 = 2.0: a (1) and b (2, equal) go, c (3) stays.
    assert t.prune() == 2
    assert t.LC == {"c": 3}
    assert t.pruned_at_RC == 200
    t = LineTable(LC={"b": 2, "c": 3}, RC=250)  # threshold 2.5
    assert t.prune() == 1
    assert t.LC == {"c": 3}


def test_automatic_pruning_every_100_pages():
    t = LineTable(prune_every=100)  # L = 50
    for k in range(99):
        t.clean(f"导航\n第{k}篇的正文")
    assert len(t.LC) == 100  # 99 body lines (LC=1 each) + the nav line (LC=99)
    t.clean("导航\n第99篇的正文")
    # RC=100, threshold 1.0: every LC=1 body line goes, the nav line (LC=100) stays.
    assert t.LC == {line_md5("导航"): 100}
    assert t.pruned_at_RC == 100


def test_early_pages_keep_boilerplate_the_papers_admitted_weakness():
    t = LineTable()  # paper L = 50
    first = t.clean("首页 | 国内 | 国际\n今天的新闻正文。\n版权所有 网易公司")
    assert first.dropped == 0  # page 1 of a site keeps all its boilerplate
    for k in range(2, 30):
        assert t.clean(f"首页 | 国内 | 国际\n第{k}篇正文。").dropped_lines == ["首页 | 国内 | 国际"]
    # The site changes its footer on page 30: the new footer is kept the first time...
    r = t.clean("首页 | 国内 | 国际\n第30篇正文。\n版权所有 2025 网易")
    assert r.text == "第30篇正文。\n版权所有 2025 网易"
    # ...and dropped from the second time on (RC=30, threshold int(1 + 30/50) = 1).
    assert t.clean("第31篇正文。\n版权所有 2025 网易").dropped_lines == ["版权所有 2025 网易"]


def paper_loop(table: dict[str, int], RC: int, L: int, text: str) -> tuple[list[str], list[str]]:
    """The paper's loop written literally, one line at a time: the oracle for decide_page."""
    kept, dropped = [], []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        h = hashlib.md5(line.encode("utf-8")).hexdigest()
        table[h] = table.get(h, 0) + 1
        (kept if table[h] <= int(1 + RC / L) else dropped).append(line)
    return kept, dropped


def test_paper_mode_matches_the_literal_line_by_line_loop():
    rng = random.Random(7)
    pool = [f"行{i}" for i in range(12)]
    t, oracle, RC = LineTable(L=3), {}, 0
    for _ in range(60):
        text = "\n".join(rng.choice(pool) for _ in range(rng.randint(1, 8)))
        r = t.clean(text, once_per_page=False)
        kept, dropped = paper_loop(oracle, RC, 3, text)
        RC += 1
        assert (r.text.split("\n") if r.text else [], r.dropped_lines) == (kept, dropped)
    assert (t.LC, t.RC) == (oracle, RC)


def test_linehash_is_pure():
    source = Path(linehash.__file__).read_text("utf-8")
    mods = set(re.findall(r"^\s*(?:from|import) (\w+)", source, re.M))
    assert not {"scrapy", "twisted", "sqlalchemy", "newsspider"} & mods
