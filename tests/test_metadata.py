"""Title and publication time from page metadata (§1.2.3 title filter, §A3)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import lxml.html
import pytest

from newsspider.extraction.metadata import (
    DEFAULT_TITLE_STOP_WORDS,
    META_PUBLISHED_KEYS,
    html_title,
    meta_published,
    meta_title,
    strip_site_names,
)

SHANGHAI = ZoneInfo("Asia/Shanghai")
SINGAPORE = ZoneInfo("Asia/Singapore")
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def page(head: str = "", body: str = "<p>正文</p>", html_attrs: str = "") -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(
        f"<html{html_attrs}><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>"
    )


def ld(obj: object) -> str:
    text = json.dumps(obj, ensure_ascii=False)
    return f'<script type="application/ld+json">{text}</script>'


def sh(*args: int) -> datetime:
    return datetime(*args, tzinfo=SHANGHAI)


# --- meta_title -------------------------------------------------------------


def test_meta_title_prefers_og_title() -> None:
    tree = page(
        '<meta name="twitter:title" content="推特标题">'
        + ld({"@type": "NewsArticle", "headline": "结构化标题"})
        + '<meta property="og:title" content="  开放图谱\n 标题 ">'
    )
    assert meta_title(tree) == ("开放图谱 标题", "og:title")


def test_meta_title_json_ld_before_twitter() -> None:
    tree = page(
        '<meta name="twitter:title" content="推特标题">'
        + ld({"@type": "NewsArticle", "headline": "结构化标题"})
    )
    assert meta_title(tree) == ("结构化标题", "json-ld")


def test_meta_title_twitter_last() -> None:
    tree = page('<meta property="twitter:title" content="推特标题">')
    assert meta_title(tree) == ("推特标题", "twitter:title")


def test_meta_title_json_ld_graph_prefers_article() -> None:
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebSite", "headline": "网站"},
            {"@type": ["NewsArticle"], "headline": "文章标题"},
        ],
    }
    assert meta_title(page(ld(graph))) == ("文章标题", "json-ld")


def test_meta_title_empty_values_skipped() -> None:
    tree = page(
        '<meta property="og:title" content="  "><meta name="twitter:title" content="推特标题">'
    )
    assert meta_title(tree) == ("推特标题", "twitter:title")
    assert meta_title(page()) is None


def test_meta_title_case_insensitive_keys() -> None:
    assert meta_title(page('<meta property="OG:Title" content="大写">')) == (
        "大写",
        "og:title",
    )


# --- html_title and the stop-word filter ---------------------------------------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        (
            "姚明对周琦说了啥？周琦上下半场判若两人_网易新闻",
            "姚明对周琦说了啥？周琦上下半场判若两人",
        ),
        ("龙湖集团暗伤曝露？_网易财经", "龙湖集团暗伤曝露？"),
        (
            "最强中国芯本月商用 华为抢跑5G芯片大战-新浪新闻",
            "最强中国芯本月商用 华为抢跑5G芯片大战",
        ),
        ("债券市场是否存在泡沫？_新浪财经_新浪网", "债券市场是否存在泡沫？"),
        ("标题在此_腾讯新闻", "标题在此"),
        ("新加坡总理发表讲话|联合早报网", "新加坡总理发表讲话"),
        ("他放弃百万年薪来到这里_凤凰网资讯_凤凰网", "他放弃百万年薪来到这里"),
        ("短缺药品保供稳价_新华网", "短缺药品保供稳价"),
        (
            "外国专家：中美合作共赢符合国际社会利益 - 中国日报网",
            "外国专家：中美合作共赢符合国际社会利益",
        ),
        # generic separators, site/channel names by marker or as short tags
        (
            "外媒眼中的武汉长假：蓬勃发展_首页武汉_新闻中心_长江网_cjn.cn",
            "外媒眼中的武汉长假：蓬勃发展",
        ),
        (
            "港特首梁振英就住宅违建事件道歉 - BBC中文网 - 两岸三地",
            "港特首梁振英就住宅违建事件道歉",
        ),
        (
            "60万账号外泄? 中铁总辟谣称消息不实|辟谣_新浪财经_新浪网",
            "60万账号外泄? 中铁总辟谣称消息不实",
        ),
        (
            "女儿出嫁，郑板桥画了几笔兰花当嫁妆--文化--人民网 ",
            "女儿出嫁，郑板桥画了几笔兰花当嫁妆",
        ),
        (
            "逆水寒再按照这个速度研发下去 应该马上就要收到律师函了！｜游民星空",
            "逆水寒再按照这个速度研发下去 应该马上就要收到律师函了！",
        ),
        ("金融知识普及月活动——当代商报", "金融知识普及月活动"),
        ("新浪新闻 | 这是一条足够长的新闻标题", "这是一条足够长的新闻标题"),
        ("一场新闻发布会_新闻中心_X网", "一场新闻发布会"),
        # bare hyphens split only before a site name with a marker
        (
            "交通运输部：打造京津冀区域综合立体交通网络-股票频道-和讯网",
            "交通运输部：打造京津冀区域综合立体交通网络",
        ),
        ("知道创宇发布新版ZoomEye-CSDN.NET", "知道创宇发布新版ZoomEye"),
        # hyphens inside the headline survive
        (
            "Manuel Pinho：中国煤炭需求最快5年达顶峰_网易财经",
            "Manuel Pinho：中国煤炭需求最快5年达顶峰",
        ),
        ("COVID-19疫苗研发取得进展 - 新华网", "COVID-19疫苗研发取得进展"),
        ("COVID-19", "COVID-19"),
        (
            "1-10月德清县固定资产投资结构趋稳趋优",
            "1-10月德清县固定资产投资结构趋稳趋优",
        ),
        ("中国-东盟自贸区3.0版升级谈判启动", "中国-东盟自贸区3.0版升级谈判启动"),
        # a long last segment is headline, not a site: nothing is cut
        (
            "明日股市预测--最新出炉联合国贸发报告：2019年全球经济增长率降至2.3%",
            "明日股市预测--最新出炉联合国贸发报告：2019年全球经济增长率降至2.3%",
        ),
        ("没有分隔符的标题", "没有分隔符的标题"),
    ],
)
def test_strip_site_names(title: str, expected: str) -> None:
    assert strip_site_names(title) == expected


def test_strip_site_names_never_empties() -> None:
    assert strip_site_names("网易新闻") == "网易新闻"
    assert strip_site_names("_网易新闻") == "网易新闻"
    # the longest segment always stays, even when it is the site name
    assert strip_site_names("新闻动态--中国地理学会官网") == "中国地理学会官网"
    assert strip_site_names("___") == "___"


def test_html_title_uses_title_element_and_stop_words() -> None:
    tree = page("<title>  收评：沪指暴跌5.77%\n失守3700_网易财经 </title>")
    assert html_title(tree) == "收评：沪指暴跌5.77% 失守3700"


def test_html_title_custom_stop_words() -> None:
    tree = page("<title>某标题 XYZ电视台在线点播</title>")
    assert html_title(tree, stop_words=[" XYZ电视台在线点播"]) == "某标题"
    assert html_title(tree, stop_words=()) == "某标题 XYZ电视台在线点播"


def test_html_title_missing_or_empty() -> None:
    assert html_title(page()) is None
    assert html_title(page("<title> </title>")) is None


def test_default_stop_words_cover_the_sites() -> None:
    for suffix in (
        "_网易新闻",
        "-新浪新闻",
        "_腾讯新闻",
        "|联合早报网",
        "_新华网",
        "_中国日报网",
    ):
        assert suffix in DEFAULT_TITLE_STOP_WORDS


# --- meta_published -----------------------------------------------------------


def test_json_ld_date_published_first() -> None:
    tree = page(
        '<meta property="article:published_time" content="2019-09-07T10:00:00+08:00">'
        + ld({"@type": "NewsArticle", "datePublished": "2019-09-07T13:43:45+08:00"})
    )
    assert meta_published(tree, SHANGHAI) == (sh(2019, 9, 7, 13, 43, 45), "json-ld")


def test_json_ld_graph_and_lists() -> None:
    graph = {
        "@graph": [
            {"@type": "WebPage"},
            {"@type": "Article", "datePublished": "2020-01-02"},
        ]
    }
    assert meta_published(page(ld(graph)), SHANGHAI) == (sh(2020, 1, 2), "json-ld")
    listed = [
        {"@type": "BreadcrumbList"},
        {"@type": "NewsArticle", "datePublished": ["2020-01-03"]},
    ]
    assert meta_published(page(ld(listed)), SHANGHAI) == (sh(2020, 1, 3), "json-ld")


def test_json_ld_zaobao_form_in_singapore_time() -> None:
    tree = page(ld({"@type": "NewsArticle", "datePublished": "01/02/2024 - 09:30"}))
    assert meta_published(tree, SINGAPORE) == (
        datetime(2024, 1, 2, 9, 30, tzinfo=SINGAPORE),
        "json-ld",
    )


def test_json_ld_trailing_comma_repaired() -> None:
    script = (
        '<script type="application/ld+json">'
        '{"@type": "NewsArticle", "datePublished": "2021-05-06T07:08:09Z",}'
        "</script>"
    )
    found, source = meta_published(page(script), SHANGHAI)
    assert source == "json-ld"
    assert found.utcoffset() == timedelta(0)
    assert found == sh(2021, 5, 6, 15, 8, 9)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("<![CDATA[", "]]>"),
        ("\n  <![CDATA[\n", "\n  ]]>\n"),
        ("//<![CDATA[", "//]]>"),
        ("<!--", "-->"),
    ],
)
def test_json_ld_wrapped_in_cdata_or_a_comment_is_read(before: str, after: str) -> None:
    """A block inside a CDATA section (WordPress schema plugins) or an HTML comment is read,
    not skipped for a later ``Last Updated`` line in the text."""
    obj = [
        {"@type": "BreadcrumbList"},
        {"@type": "NewsArticle", "datePublished": "2020-07-10T14:15:42+00:00"},
    ]
    script = f'<script type="application/ld+json">{before}{json.dumps(obj)}{after}</script>'
    assert meta_published(page(script), SHANGHAI) == (sh(2020, 7, 10, 22, 15, 42), "json-ld")


def test_broken_json_ld_is_ignored() -> None:
    tree = page(
        '<script type="application/ld+json">'
        '{"datePublished": "2001-01-01" oops</script>'
        '<script type="application/ld+json"></script>'
        '<meta name="pubdate" content="2019-09-07 13:43:45">'
    )
    assert meta_published(tree, SHANGHAI) == (
        sh(2019, 9, 7, 13, 43, 45),
        "meta:pubdate",
    )
    assert meta_title(page('<script type="application/ld+json">{"headline": </script>')) is None


def test_unparseable_value_falls_through() -> None:
    tree = page(
        ld({"@type": "NewsArticle", "datePublished": "unknown"})
        + '<meta property="article:published_time" content="">'
        + '<meta name="publishdate" content="2023-11-17">'
    )
    assert meta_published(tree, SHANGHAI) == (sh(2023, 11, 17), "meta:publishdate")


@pytest.mark.parametrize(
    ("meta", "source", "expected"),
    [
        (
            '<meta property="article:published_time" content="2019-09-07T13:43:45+08:00">',
            "meta:article:published_time",
            sh(2019, 9, 7, 13, 43, 45),
        ),
        (
            '<meta name="article:published_time" content="2019-09-07T13:43:45+08:00">',
            "meta:article:published_time",
            sh(2019, 9, 7, 13, 43, 45),
        ),
        (
            '<meta name="pubdate" content="2019-09-07 13:43">',
            "meta:pubdate",
            sh(2019, 9, 7, 13, 43),
        ),
        (
            '<meta name="PubDate" content="2022-01-28 00:00:00">',
            "meta:pubdate",
            sh(2022, 1, 28),
        ),
        (
            '<meta name="publishdate" content="2023-11-17">',
            "meta:publishdate",
            sh(2023, 11, 17),
        ),
        (
            '<meta itemprop="datePublished" content="2020-11-26 08:04">',
            "meta:datePublished",
            sh(2020, 11, 26, 8, 4),
        ),
        (
            '<meta property="og:release_date" content="2020-11-26 08:04:00">',
            "meta:og:release_date",
            sh(2020, 11, 26, 8, 4),
        ),
        (
            '<meta name="weibo: article:create_at" content="2019-09-07 13:43:45">',
            "meta:weibo: article:create_at",
            sh(2019, 9, 7, 13, 43, 45),
        ),
    ],
)
def test_meta_keys(meta: str, source: str, expected: datetime) -> None:
    assert meta_published(page(meta), SHANGHAI) == (expected, source)


def test_meta_priority_follows_the_key_order() -> None:
    tree = page(
        '<meta name="publishdate" content="2020-01-02">'
        '<meta property="article:published_time" content="2020-01-01T08:00:00+08:00">'
    )
    assert meta_published(tree, SHANGHAI) == (
        sh(2020, 1, 1, 8),
        "meta:article:published_time",
    )
    assert META_PUBLISHED_KEYS[0] == "article:published_time"


def test_apub_time_is_never_used() -> None:
    tree = page('<meta name="apub:time" content="2019-09-07 21:30:50">')
    assert meta_published(tree, SHANGHAI) is None
    assert "apub:time" not in {k.lower() for k in META_PUBLISHED_KEYS}


def test_time_element_after_meta() -> None:
    body = '<time datetime="bad">x</time><time datetime="2019-09-07T13:43:45+08:00">昨天</time>'
    assert meta_published(page(body=body), SHANGHAI) == (
        sh(2019, 9, 7, 13, 43, 45),
        "time-element",
    )
    tree = page('<meta name="pubdate" content="2018-01-01">', body=body)
    assert meta_published(tree, SHANGHAI) == (sh(2018, 1, 1), "meta:pubdate")


def test_netease_html_data_publishtime_last() -> None:
    tree = page(html_attrs=' data-publishtime="2025-01-02 03:04:05"')
    assert meta_published(tree, SHANGHAI) == (
        sh(2025, 1, 2, 3, 4, 5),
        "html:data-publishtime",
    )
    tree = page(
        body='<time datetime="2024-12-31">x</time>',
        html_attrs=' data-publishtime="2025-01-02 03:04:05"',
    )
    assert meta_published(tree, SHANGHAI)[1] == "time-element"


def test_meta_published_none() -> None:
    assert meta_published(page(), SHANGHAI) is None
    assert meta_published(page(body="<p>2019-09-07 13:43:45</p>"), SHANGHAI) is None


def test_results_are_aware_in_the_site_zone() -> None:
    tree = page('<meta name="pubdate" content="2024-01-01 09:30">')
    found, _ = meta_published(tree, SINGAPORE)
    assert found.tzinfo is SINGAPORE


def test_tree_is_not_modified() -> None:
    tree = page(
        "<title>标题_网易新闻</title>" + ld({"headline": "x", "datePublished": "2020-01-01"})
    )
    before = lxml.html.tostring(tree)
    meta_title(tree), html_title(tree), meta_published(tree, SHANGHAI)
    assert lxml.html.tostring(tree) == before


# --- real pages ----------------------------------------------------------------


def test_newspaper4k_chinadaily_page() -> None:
    folder = SHARED / "datasets" / "newspaper4k-fixtures-zh"
    if not folder.is_dir():
        pytest.skip(f"shared datasets not found at {folder}")
    with open(folder / "cases.jsonl", encoding="utf-8") as f:
        case = next(c for c in map(json.loads, f) if c["id"].endswith("_001"))
    tree = lxml.html.document_fromstring((folder / case["html_file"]).read_bytes())
    assert meta_title(tree) == (case["title"], "og:title")
    assert html_title(tree) == case["title"]
    found, source = meta_published(tree, SHANGHAI)
    assert (found.date().isoformat(), source) == (case["published"], "meta:publishdate")
