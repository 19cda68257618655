"""extract_article end to end: modes, title/time forms, bad input, purity."""

import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from newsspider.extraction import ExtractionError, extract_article
from newsspider.extraction.registry import get_extractor

SHANGHAI = ZoneInfo("Asia/Shanghai")
PARAGRAPH = "这是新闻正文的一个段落，内容足够长，用来让块统计方法认出正文区域。" * 3


def page(head: str = "", before: str = "", after: str = "", title: str = "标题_网易新闻") -> str:
    paragraphs = "".join(f"<p>{PARAGRAPH}{k}</p>" for k in range(6))
    return (
        f"<html><head><title>{title}</title>{head}</head><body>"
        "<div class='nav'><a href='/'>首页</a> <a href='/n'>新闻</a></div>"
        f"<div id='main'>{before}{paragraphs}{after}</div>"
        "<div>版权所有 © 网易公司</div></body></html>"
    )


@pytest.mark.parametrize("mode", ["paper", "best"])
def test_body_title_and_time_line(mode):
    html = page(before="<h1>新闻标题在这里</h1><div>2015-01-02 12:34　来源: 新华社</div>")
    art = extract_article(html.encode("utf-8"), mode=mode)
    assert art.mode == mode
    assert art.title == "新闻标题在这里"
    assert art.published == datetime(2015, 1, 2, 12, 34, tzinfo=SHANGHAI)
    assert art.published.tzinfo is not None
    lines = art.text.split("\n")
    assert sum(PARAGRAPH in line for line in lines) == 6
    assert "首页" not in art.text and "版权所有" not in art.text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2015-01-02 12:34", datetime(2015, 1, 2, 12, 34)),
        ("2015年1月2日 08:00", datetime(2015, 1, 2, 8, 0)),
        ("二〇一五年一月二日", datetime(2015, 1, 2)),
        ("发布时间：2015/01/02 23:59:58", datetime(2015, 1, 2, 23, 59, 58)),
    ],
)
def test_time_forms_in_text(line, expected):
    art = extract_article(page(before=f"<h1>标题</h1><div>{line}</div>"))
    assert art.published == expected.replace(tzinfo=SHANGHAI)
    assert art.published_source == "text"


def test_iso_time_in_json_ld_and_og_title():
    head = (
        '<meta property="og:title" content="开放图谱标题">'
        '<script type="application/ld+json">{"@type": "NewsArticle", '
        '"headline": "结构化标题", "datePublished": "2015-01-02T04:34:00Z"}</script>'
    )
    art = extract_article(page(head=head))
    assert art.published == datetime(2015, 1, 2, 12, 34, tzinfo=SHANGHAI)
    assert art.published_source == "json-ld"
    assert art.title == "开放图谱标题"


def test_date_in_url_is_the_last_resort():
    art = extract_article(page(), "https://news.163.com/15/0703/15/ATJVVCJR00254TFQ.html")
    assert art.published == datetime(2015, 7, 3, 15, 0, tzinfo=SHANGHAI)
    assert art.published_source == "url"


def test_site_time_zone_is_applied():
    art = extract_article(page(before="<div>2015-01-02 12:34</div>"), tz="Asia/Singapore")
    assert art.published.utcoffset().total_seconds() == 8 * 3600
    assert str(art.published.tzinfo) == "Asia/Singapore"


def test_title_falls_back_to_title_without_site_name():
    art = extract_article(page(title="一条新闻的标题_网易新闻"))
    assert art.title == "一条新闻的标题"


def test_paper_mode_deletes_forms_best_mode_keeps_them():
    html = page().replace("<body>", "<body><form action='x'>").replace("</body>", "</form></body>")
    assert PARAGRAPH not in extract_article(html, mode="paper").text
    assert PARAGRAPH in extract_article(html, mode="best").text


@pytest.mark.parametrize("mode", ["paper", "best"])
def test_page_without_body_gives_empty_text(mode):
    art = extract_article(b"<html><body><a href='/'>nav</a></body></html>", mode=mode)
    assert art.text == ""
    art = extract_article(b"<!-- nothing -->", mode=mode)
    assert art.text == ""


def test_best_mode_never_takes_the_head_as_body():
    # Paper mode: <head> is type II, so the <title> text is a block of its own.
    html = b"<html><head><title>x</title></head><body></body></html>"
    assert extract_article(html, mode="paper").text == "x"
    assert extract_article(html, mode="best").text == ""


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   \n",
        b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 8,
        b"\xff\xd8\xff\xe0" + bytes(2000),
    ],
)
def test_not_html_raises_extraction_error(data):
    with pytest.raises(ExtractionError):
        extract_article(data)


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown mode"):
        extract_article("<p>x</p>", mode="fast")


def test_encoding_is_reported():
    art = extract_article(page().encode("gb18030"))
    assert art.encoding == "gb18030"
    assert PARAGRAPH in art.text


def test_extraction_is_pure():
    for f in Path(__file__).resolve().parents[1].joinpath("newsspider/extraction").rglob("*.py"):
        mods = re.findall(r"^\s*(?:from|import) (\w+)", f.read_text("utf-8"), re.M)
        assert not {"scrapy", "twisted", "sqlalchemy"} & set(mods), f


def test_best_mode_drops_headline_byline_and_editor_lines_at_the_ends():
    html = page(
        before="<h1>新闻标题在这里</h1><p>2015-01-02 12:34　来源: 新华社</p>",
        after="<p>（责任编辑：王晓明）</p><p>分享到：微博 微信</p>",
    )
    best = extract_article(html).text.split("\n")
    assert best[0].startswith(PARAGRAPH) and best[-1].startswith(PARAGRAPH)
    assert len(best) == 6
    # A long line that merely mentions a source stays: only short edge lines go.
    long_line = "来源：" + PARAGRAPH
    assert long_line in extract_article(page(after=f"<p>{long_line}</p>")).text


def test_extract_article_is_the_registrys_blockstats():
    html = page(before="<p>2015-07-02 05:41:43 来源：网易财经</p>")
    for mode, name in (("best", "blockstats"), ("paper", "blockstats-paper")):
        assert extract_article(html, mode=mode) == get_extractor(name)(html)


def test_inner_lines_keep_subheadings_and_table_cells_not_widgets():
    """``inner_lines``: a subheading and table cells between body paragraphs are body;
    a gallery widget nested deeper and a nav list after the body are not."""
    paragraphs = [f"<p>{PARAGRAPH}{k}</p>" for k in range(6)]
    middle = (
        "<h3>第二部分小标题</h3>"
        "<table><tr><td>项目名称</td><td>负责人</td></tr></table>"
        "<div class='gallery'><div><span>图片 1 / 9</span></div>"
        "<div><span>返回图集</span></div></div>"
    )
    html = page(before="".join(paragraphs[:3]) + middle + "".join(paragraphs[3:]))
    best = extract_article(html).text.split("\n")
    assert "第二部分小标题" in best
    assert "项目名称" in best and "负责人" in best
    assert not any("返回图集" in line or "图片 1" in line for line in best)
    paper = extract_article(html, mode="paper").text
    assert "项目名称" not in paper  # the paper's mainblockset alone


def test_byline_under_a_deck_line_is_not_body():
    """``edge_lines``: a byline without a colon, under a deck line, is trimmed; the deck stays."""
    before = "<p>研究所所长李扬说，改革一定要加快</p><p>本报记者张三发自北京</p>"
    lines = extract_article(page(before=before)).text.split("\n")
    assert "本报记者张三发自北京" not in lines
    assert lines[0] == "研究所所长李扬说，改革一定要加快"


def test_time_under_the_headline_beats_a_date_in_the_first_paragraph():
    """``time_after_headline``: the dateline under the headline, not the first date of the body,
    even when promotion lines stand between them and the body."""
    before = (
        "<div>明星挨打事件回顾</div><div>2005-04-27 14:32更新 来源：千龙新闻网</div>"
        "<div>发表评论</div><div>医疗关注</div><div>皮肤顽疾</div><div>补肾新药</div>"
        f"<p>2005年4月18日吴宗宪进棚录像，{PARAGRAPH}</p>"
    )
    art = extract_article(page(before=before, title="明星挨打事件回顾_千龙网"))
    assert art.title == "明星挨打事件回顾"
    assert art.published == datetime(2005, 4, 27, 14, 32, tzinfo=SHANGHAI)


def test_a_long_comment_thread_under_a_short_post_is_not_the_body():
    """``comment_sections``: a reader-comment section is noise even when it holds most of
    the page's text; the post, its headline and its own time are what comes out."""
    post = (
        "<h2>很高兴入住博客堂</h2>"
        "<p>承蒙邀请，很高兴入住博客堂。作为技术社区，这里是写技术文章的好地方，"
        "我的文章将集中在两个方面，希望以后和各位多多交流。</p>"
        "<div>发表于 2004年12月27日 12:40</div>"
    )
    comments = "".join(
        f"<div><h3># re: 很高兴入住博客堂</h3><div>2004-12-28 09:{k:02d}</div>"
        f"<div>读者{k}</div><div>欢迎欢迎，拜读过您翻译的那本书，很不错。{PARAGRAPH}</div></div>"
        for k in range(8)
    )
    html = (
        "<html><head><title>很高兴入住博客堂 - 博客</title></head><body>"
        f"<div id='main'>{post}<div id='comments'>{comments}</div></div></body></html>"
    )
    art = extract_article(html)
    assert art.title == "很高兴入住博客堂"
    assert art.text.startswith("承蒙邀请")
    assert "欢迎欢迎" not in art.text
    assert art.published == datetime(2004, 12, 27, 12, 40, tzinfo=SHANGHAI)


def test_an_opinion_column_marked_up_as_comment_is_kept():
    """``comment_sections``: an element named "comment" without time stamps in it (an opinion
    column, 评论) holding most of the page is the article, not a thread."""
    paragraphs = "".join(f"<p>{PARAGRAPH}{k}</p>" for k in range(6))
    html = (
        "<html><body><div class='nav'><a href='/'>首页</a> <a href='/n'>评论</a></div>"
        f"<div class='comment'><h1>评论：改革要加快</h1>{paragraphs}</div>"
        "<div>版权所有 © 网易公司</div></body></html>"
    )
    art = extract_article(html)
    assert art.title == "评论：改革要加快"
    assert art.text.count("\n") == 5 and art.text.startswith(PARAGRAPH)


def test_a_reprint_dated_only_by_its_monthly_issue():
    """``issue_dates``: with no other date, the source line's issue gives the month."""
    after = "<p>——《北京之春》1998年3月号</p>"
    art = extract_article(page(after=after))
    assert art.published == datetime(1998, 3, 1, tzinfo=SHANGHAI)
    assert art.published_source == "text:issue"
    # a full date anywhere wins over the issue month
    art = extract_article(page(before="<div>2015-01-02 12:34</div>", after=after))
    assert art.published == datetime(2015, 1, 2, 12, 34, tzinfo=SHANGHAI)
    assert art.published_source == "text"
    # the paper mode has no such rule
    assert extract_article(page(after=after), mode="paper").published is None


@pytest.mark.parametrize("mode", ["paper", "best"])
def test_a_page_nested_deeper_than_255_levels_keeps_its_body(mode):
    """libxml2 stops at depth 255 unless ``huge_tree`` is on; then the body was lost."""
    paragraphs = "".join(f"<p>{PARAGRAPH}{k}</p>" for k in range(5))
    html = "<html><body>" + "<div>" * 1000 + paragraphs + "</div>" * 1000 + "</body></html>"
    assert extract_article(html, mode=mode).text.count("\n") == 4
