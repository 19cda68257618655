"""Zou & Zhong 2011 §1.2.1-§1.2.2, checked against hand computations."""

import pytest
from lxml import etree

from newsspider.extraction.blocks import blockset_of
from newsspider.extraction.blockstats import (
    accept_runs,
    block_statistics,
    find_runs,
    smooth,
    thresholds,
)


def test_sblocknum_pads_both_ends_with_zero():
    # first: (0 + 2*4 + 0)/4, last: (8 + 2*2 + 0)/4
    assert smooth([4, 0, 8, 2]) == [2.0, 3.0, 4.5, 3.0]
    assert smooth([6]) == [3.0]
    assert smooth([]) == []


# A blocknum array with two rule-① runs, a BSet between them (rule ②) and a
# run after the last rule-① run that is rejected. Every value below is
# computed by hand in the comments.
BLOCKNUM = [10, 0, 0, 100, 0, 0, 0, 30, 0, 0, 0, 100, 0, 0, 0, 40]
# i0 (0+20+0)/4=5; i1 (10+0+0)/4=2.5; i2 (0+0+100)/4=25; i3 200/4=50; i4 25;
# i5 0; i6 30/4=7.5; i7 60/4=15; i8 7.5; i9 0; i10 25; i11 50; i12 25; i13 0;
# i14 40/4=10; i15 (0+80)/4=20
SBLOCKNUM = [5, 2.5, 25, 50, 25, 0, 7.5, 15, 7.5, 0, 25, 50, 25, 0, 10, 20]
N_AVG = 267.5 / 16  # sum of sblocknum / 16 = 16.71875
N_MIN = 2.5  # smallest non-zero
N_MIN_PRIME = (2 * 2.5 + N_AVG) / 3  # 7.2395833...
N_CAL = (50 + 50 + 25 + 25 + 25 + 25 + 20 + 15 + 10 + N_AVG) / 10  # 26.171875


def test_smoothing_by_hand():
    assert smooth(BLOCKNUM) == SBLOCKNUM


def test_thresholds_by_hand():
    N_min, N_avg, N_min_prime, N_cal = thresholds(SBLOCKNUM)
    assert N_min == N_MIN
    assert N_avg == pytest.approx(16.71875)
    assert N_min_prime == pytest.approx(7.2395833333)
    assert N_cal == pytest.approx(26.171875)


def test_runs_rule_1_and_rule_2():
    runs = find_runs(SBLOCKNUM, N_MIN_PRIME)
    # i0 = 5 < N'min: not a run; the four runs are A, B, C, D.
    assert [(r.start, r.end) for r in runs] == [(2, 4), (6, 8), (10, 12), (14, 15)]
    mainblockset = accept_runs(runs, SBLOCKNUM, N_CAL)
    # A and C reach N_cal (50 >= 26.17): rule ①. B (max 15) lies between
    # them: rule ② (BSet). D (max 20) lies after the last rule-① run: rejected.
    assert [r.rule for r in runs] == [1, 2, 1, 0]
    assert mainblockset == [2, 3, 4, 6, 7, 8, 10, 11, 12]


def test_block_statistics_exposes_every_value():
    stats = block_statistics(BLOCKNUM)
    assert stats.blocknum == BLOCKNUM
    assert stats.sblocknum == SBLOCKNUM
    assert (stats.N_min, stats.N_avg) == (N_MIN, pytest.approx(N_AVG))
    assert stats.N_min_prime == pytest.approx(N_MIN_PRIME)
    assert stats.N_cal == pytest.approx(N_CAL)
    assert (stats.block_i, stats.block_j) == (2, 12)


def test_fewer_than_nine_blocks_sum_all_for_N_cal():
    # sblocknum of [4, 4]: [(8+4)/4, (4+8)/4] = [3, 3]; N_avg 3
    stats = block_statistics([4, 4])
    assert stats.sblocknum == [3.0, 3.0]
    assert stats.N_cal == pytest.approx((3 + 3 + 3) / 10)
    assert stats.mainblockset == [0, 1]


def test_no_text_gives_no_mainblockset():
    stats = block_statistics([0, 0, 0])
    assert stats.mainblockset == []
    assert stats.block_i is None and stats.block_j is None


PAGE = (
    "<html><head><title>标题_网易新闻</title><script>var x = 1;</script></head>"
    "<body><div>导航<a href='/'>首页</a>栏目<!-- ad --></div>"
    "<h1>新闻标题</h1><p>第一段<b>正文</b>内容。<br>换行后</p>"
    "<table><tr><td>单元格 text</td></tr></table>"
    "<div><form><input>表单</form>尾巴</div></body></html>"
)
# Separators in document order: <head> </head> <body> <div> </div> <h1> </h1>
# <p> <br> </p> <table> <tr> <td> </td> </tr> </table> <div> </div> </body>
EXPECTED_BLOCKS = [
    "标题_网易新闻",  # <head> … </head>: title text stays, script (type I) deleted
    "",  # </head> … <body>
    "",  # <body> … <div>
    "导航栏目",  # link and comment deleted, text around them kept
    "",  # </div> … <h1>
    "新闻标题",  # <h1> … </h1>
    "",  # </h1> … <p>
    "第一段正文内容。",  # <b> is neither type: its text stays
    "换行后",  # <br> (void) … </p>
    "",  # </p> … <table>
    "",  # <table> … <tr>
    "",  # <tr> … <td>
    "单元格 text",  # a single space keeps Latin words apart
    "",  # </td> … </tr>
    "",  # </tr> … </table>
    "",  # </table> … <div>
    "尾巴",  # form (type I) deleted, its tail kept
    "",  # </div> … </body>
]


def test_blockset_of_hand_written_page():
    root = etree.fromstring(PAGE, etree.HTMLParser())
    blocks = blockset_of(root).blocks
    assert [b.text for b in blocks] == EXPECTED_BLOCKS
    assert [b.blocknum for b in blocks] == [len(t.replace(" ", "")) for t in EXPECTED_BLOCKS]
    assert [b.heading for b in blocks if b.heading] == [1]
    assert blocks[5].heading == 1


def test_blockset_keep_links_counts_link_characters():
    root = etree.fromstring(PAGE, etree.HTMLParser())
    blocks = blockset_of(root, keep_links=True).blocks
    assert blocks[3].text == "导航首页栏目"
    assert (blocks[3].blocknum, blocks[3].link_chars) == (6, 2)


def test_blockset_maps_blocks_to_elements():
    root = etree.fromstring(PAGE, etree.HTMLParser())
    blockset = blockset_of(root)
    p = root.find(".//p")
    k = blockset.elements.index(p)
    # <p> holds block 7 (after <p>) and block 8 (after <br>, still inside <p>)
    assert list(blockset.block_range(k)) == [7, 8]
    assert blockset.container(7) is p
    assert blockset.container(8) is p  # <br> is void: its block is in <p>
    assert blockset.container(9).tag == "body"  # after </p>
