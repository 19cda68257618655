"""The xpath method, Hou & Yang 2011, paper mode, on a page written for it.

Leaves of PAGE, numbered in document order (hand-listed):

     0 首页  /html/body/div/a (link)       7 链接  /html/body/div/p/a (link)
     1 国内  /html/body/div/a (link)       8 正文。  /html/body/div/p
     2 国际  /html/body/div/a (link)       9 第三段正文内容。  /html/body/div/p
     3 财经  /html/body/div/a (link)      10 第四段正文内容。  /html/body/div/p
     4 标题文字  /html/body/h1            11 关于  /html/body/div/a (link)
     5 第一段正文内容，很长。  /html/body/div/p   12 联系  /html/body/div/a (link)
     6 第二段  /html/body/div/p

Clusters: /html/body/div/a {0,1,2,3,11,12}, /html/body/h1 {4}, /html/body/div/p
{5,6,8,9,10}, /html/body/div/p/a {7}.
"""

from __future__ import annotations

import pytest

from newsspider.evaluation import evaluate
from newsspider.extraction.page import load_page
from newsspider.extraction.registry import get_extractor
from newsspider.extraction.xpathseg import (
    CLUSTERNUM,
    MIN_LEAVES,
    VARIANCE_LIMIT,
    Cluster,
    ClusterStats,
    Thresholds,
    cluster_leaves,
    cluster_stats,
    extract_xpath,
    kmeans_1d,
    leaf_thresholds,
    leaves_of,
    mid_centroid,
    page_thresholds,
    segment,
    split_cluster,
    split_points,
    text_length,
    train_thresholds,
    θ_RANGE,
)

PAGE = """<html><head><script>var x = "脚本";</script>
<style>p { margin: 0 }</style></head><body>
<div id="nav"><a href="/1">首页</a><a href="/2">国内</a>
<a href="/3">国际</a><a href="/4">财经</a></div>
<!-- 注释不是叶子 -->
<h1>标题文字</h1>
<div id="body">
<p>第一段正文内容，很长。</p>
<p>第二段<a href="/x">链接</a>正文。</p>
<p>第三段正文内容。</p>
<p>第四段正文内容。</p>
</div>
<div id="foot"><a href="/a">关于</a><a href="/b">联系</a></div>
</body></html>"""

NAV, H1, P, P_A = "/html/body/div/a", "/html/body/h1", "/html/body/div/p", "/html/body/div/p/a"
TITLED = PAGE.replace("<head>", "<head><title>页面标题_网易新闻</title>")
BODY = ["第一段正文内容，很长。", "第二段", "正文。", "第三段正文内容。", "第四段正文内容。"]


@pytest.fixture
def leaves():
    return leaves_of(load_page(PAGE).root)


def test_leaves_numbered_in_document_order(leaves):
    """§D1-2: script, style and comments are gone; each text node is one leaf."""
    assert [leaf.number for leaf in leaves] == list(range(13))
    assert [leaf.text for leaf in leaves] == [
        "首页", "国内", "国际", "财经", "标题文字", *BODY[:2], "链接", *BODY[2:], "关于", "联系",
    ]  # fmt: skip
    assert [leaf.path for leaf in leaves] == [NAV] * 4 + [H1, P, P, P_A, P, P, P, NAV, NAV]
    assert [leaf.number for leaf in leaves if leaf.in_link] == [0, 1, 2, 3, 7, 11, 12]
    titled = leaves_of(load_page(TITLED).root)
    assert (titled[0].text, titled[0].path) == ("页面标题_网易新闻", "/html/head/title")


def test_clusters_gaps_period_variance(leaves):
    """§D2-3, eq. (2)-(4)."""
    clusters = {c.path: c for c in cluster_leaves(leaves)}
    assert [c.path for c in cluster_leaves(leaves)] == [NAV, H1, P, P_A]
    nav, body = clusters[NAV], clusters[P]
    assert nav.X == [0, 1, 2, 3, 11, 12]
    assert nav.ΔD == [1, 1, 1, 8, 1]
    assert nav.ΔT == pytest.approx(12 / 5)  # 2.4
    assert nav.variance == pytest.approx((4 * (1 - 2.4) ** 2 + (8 - 2.4) ** 2) / 5)  # 7.84
    assert body.X == [5, 6, 8, 9, 10]
    assert body.ΔD == [1, 2, 1, 1]
    assert body.ΔT == pytest.approx(1.25)
    assert body.variance == pytest.approx((3 * 0.25**2 + 0.75**2) / 4)  # 0.1875
    one = clusters[H1]
    assert (one.ΔD, one.ΔT, one.variance) == ([], 0.0, 0.0)


@pytest.mark.parametrize(
    ("ΔD", "cuts"),
    [
        ([1, 1, 1, 8, 1], [3]),  # θ = 1, 1, 8, 1/8: both out-of-range θ point at gap 3
        ([1, 2, 1, 1], [1]),  # θ = 2 (in range), 0.5 (cut at the larger gap, 1), 1
        ([1, 2], []),  # θ = 2: the closed range includes 2
        ([20, 17], []),  # θ = 0.85: included too
        ([20, 16], [0]),  # θ = 0.8
        ([1, 3], [1]),  # θ = 3
        ([5], []),  # one gap: no θ
    ],
)
def test_split_points(ΔD, cuts):
    """§D4, eq. (5): θ = ΔD_(j+1) / ΔD_j outside [0.85, 2] splits at the larger gap."""
    assert θ_RANGE == (0.85, 2.0)
    assert split_points(ΔD) == cuts


def test_split_cluster():
    parts = split_cluster(Cluster(NAV, [0, 1, 2, 3, 11, 12]))
    assert [p.X for p in parts] == [[0, 1, 2, 3], [11, 12]]
    assert split_cluster(Cluster(NAV, [0, 1, 2]))[0].X == [0, 1, 2]
    assert [p.X for p in split_cluster(Cluster(P, [0, 1, 3, 4]), (0.4, 2.5))] == [[0, 1, 3, 4]]


def test_length_and_B_n(leaves):
    """§D5, eq. (1): Length over the cluster's leaves, B_n over the leaves it spans."""
    assert text_length("标题文字") == 8  # above U+00FF: 2 each
    assert text_length("ab 1，") == 5  # a, b, 1: 1 each; "，" (U+FF0C): 2; space: 0
    clusters = cluster_leaves(leaves)
    stats = dict(zip([c.path for c in clusters], cluster_stats(leaves, clusters), strict=True))
    # Body: Length = 22 + 6 + 6 + 16 + 16; span = leaves 5..10: characters
    # 11 + 3 + 2 + 3 + 8 + 8 = 35, of which "链接" (2) in a link; one leaf in a link.
    assert stats[P] == ClusterStats(5, 1.25, 0.1875, 66, 33, 2, 1, 5)
    assert stats[P].B_n == pytest.approx(33 / 35 * 5 / 2)  # 2.357
    # Nav spans every leaf, 0 to 12: 51 characters, 14 in links (8 + 2 + 4);
    # 7 leaves in links, 6 not.
    assert (stats[NAV].Length, stats[NAV].N1, stats[NAV].N2) == (24, 37, 14)
    assert (stats[NAV].NODE_href, stats[NAV].NODE_nohref) == (7, 6)
    assert stats[NAV].B_n == pytest.approx(37 / 51 * 6 / 8)  # 0.544
    assert stats[H1].B_n == 1.0  # 4/4 * 1/(0+1)
    assert stats[P_A].B_n == 0.0  # N1 = 0


def test_segment_picks_the_first_cluster_passing_every_test(leaves):
    """§D6 with hand-set thresholds: the nav cluster (variance 7.84 > 2) is split at gap 3;
    its first part is short (Length 16 <= 20), the h1 has too few leaves, the <p> cluster
    passes (variance 0.1875, 5 leaves, Length 66, B_n 2.357, ΔT 1.25 > 0)."""
    seg = segment(leaves, Length_Threshold=20, B_n_Threshold=1, variance_limit=2)
    assert [(c.path, c.X[0], verdict) for c, _, verdict in seg.examined] == [
        (NAV, 0, "split"),
        (NAV, 0, "short"),
        (H1, 4, "too few leaves"),
        (P, 5, "body"),
    ]
    assert seg.body is not None and seg.body.X == [5, 6, 8, 9, 10]


def test_segment_rejections(leaves):
    # B_n 2.357 <= 2.5: list noise; nothing else qualifies.
    seg = segment(leaves, Length_Threshold=20, B_n_Threshold=2.5, variance_limit=2)
    assert seg.body is None
    assert (P, "list noise") in [(c.path, v) for c, _, v in seg.examined]
    # Length 66 is not > 66.
    assert segment(leaves, Length_Threshold=66, B_n_Threshold=1).body is None
    # Five leaves are not more than five.
    assert segment(leaves, Length_Threshold=20, B_n_Threshold=1, min_leaves=5).body is None
    # ΔT = 1.25 is not > PreD = 2.
    seg = segment(leaves, Length_Threshold=20, B_n_Threshold=1, variance_limit=2, PreD=2)
    assert seg.body is None and (P, "ΔT <= PreD") in [(c.path, v) for c, _, v in seg.examined]
    # Variance limit 0.1 < 0.1875: the <p> cluster is cut at its θ point (gap 1) into
    # {5, 6} (Length 28 <= 30: short) and {8, 9, 10} (Length 38, B_n 19/19 * 3/1 = 3).
    seg = segment(leaves, Length_Threshold=30, B_n_Threshold=1, variance_limit=0.1)
    assert seg.body is not None and seg.body.X == [8, 9, 10]


def test_extract_with_thresholds_given():
    art = extract_xpath(TITLED, Length_Threshold=20, B_n_Threshold=1, variance_limit=2)
    assert art.text.splitlines() == BODY
    # The h1 near the body; it does not agree with <title> ("页面标题") and there is no
    # og:title, so the heading is taken (title_time.best_title, as in the blockstats best mode).
    assert (art.title, art.title_source) == ("标题文字", "heading")
    assert art.mode == "paper"


def test_kmeans_1d_by_hand():
    """§D7. Values 1 2 3 10 11 30, k = 3: start at distinct values 0, 2, 5 -> 1, 3, 30;
    {1, 2 (tie: lower)} {3, 10, 11} {30} -> 1.5, 8, 30; {1, 2, 3} {10, 11} {30} ->
    2, 10.5, 30; stable. Mid = 10.5."""
    assert kmeans_1d([30, 1, 11, 2, 10, 3]) == [2.0, 10.5, 30.0]
    assert mid_centroid([1, 2, 3, 10, 11, 30]) == 10.5
    assert kmeans_1d([5, 5, 7]) == [5.0, 7.0]  # two distinct values: each its own cluster
    assert mid_centroid([5, 5, 7]) == 5.0  # lower middle of two
    assert kmeans_1d([]) == [] and mid_centroid([]) is None
    assert kmeans_1d([1, 2, 3, 4], k=1) == [2.5]
    assert CLUSTERNUM == 3


def test_page_thresholds_by_hand(leaves):
    """Eq. (6), (8) on PAGE.

    Length of the clusters 24, 8, 66, 4: start 4, 8, 66; {4} {8, 24} {66} -> 4, 16, 66;
    {4, 8} {24} {66} -> 6, 24, 66; stable: Mid 24.
    B_n 37/51*6/8 = 0.544, 1, 2.357, 0: start 0, 0.544, 2.357; {0} {0.544, 1} {2.357} ->
    0, 0.772, 2.357; stable: Mid (37/68 + 1) / 2 = 105/136.
    """
    found = leaf_thresholds(leaves)
    assert found is not None
    assert found.Length_Threshold == pytest.approx(24)
    assert found.B_n_Threshold == pytest.approx(105 / 136)
    assert found.as_params() == {
        "Length_Threshold": found.Length_Threshold,
        "B_n_Threshold": found.B_n_Threshold,
    }
    assert page_thresholds(PAGE) == found
    assert page_thresholds("<html><body></body></html>") is None


def test_train_thresholds_takes_the_minimum():
    """Eq. (9), (11): over M pages, the minimum of each threshold."""
    got = train_thresholds([Thresholds(10.5, 2.0), None, Thresholds(8.0, 3.0)])
    assert got == Thresholds(8.0, 2.0, 2)
    assert train_thresholds([None]) is None


def test_default_thresholds_are_the_pages_own():
    """Untrained: eq. (6)/(8) on the page itself (M = 1), here Length 24 and B_n 0.772.
    With the default variance limit (8), the nav cluster (7.84) is not split, and its
    Length 24 is not > 24; the <p> cluster is the body."""
    assert (VARIANCE_LIMIT, MIN_LEAVES) == (8.0, 1)
    assert extract_xpath(PAGE).text.splitlines() == BODY
    # Trained thresholds win over the page's own: B_n_Threshold 3 rejects every cluster.
    assert extract_xpath(PAGE, Length_Threshold=10, B_n_Threshold=3).text == ""


def test_registered_method_and_errors():
    assert (get_extractor("xpath").name, get_extractor("xpath").mode) == ("xpath", "paper")
    assert get_extractor("xpath")(PAGE) == extract_xpath(PAGE)
    with pytest.raises(ValueError, match="unknown extraction method"):
        get_extractor("xpath-best")
    art = extract_xpath(PAGE.encode("gbk"), "http://money.163.com/15/0702/05/X.html")
    assert art.encoding == "gb18030"
    assert art.published is not None and art.published_source == "url"


# -- datasets (skipped cleanly when ../shared is absent) ---------------------------------

# F1 floors a little under what was measured (cwced-zh 0.826, cx163-zh 0.890), with each
# page's own thresholds (no site trained).
FLOORS = {"cwced-zh": 0.80, "cx163-zh": 0.86}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_dataset_floor(datasets, name):
    report = evaluate(datasets / name, lambda raw, url: extract_xpath(raw, url))
    assert not report.errors
    assert report.f1 >= FLOORS[name]
