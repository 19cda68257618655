"""Best-mode rules for sites the method was never tuned on.

Each test builds a small synthetic page showing one behaviour, checks the rule
handles it, and checks that with the rule's switch off the behaviour is back
(so every rule is shown to be what makes the difference).
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from newsspider.extraction import extract_article
from newsspider.extraction.rules import rule

LATIN = (
    "The council met on Tuesday to discuss the new budget, and members said the plan, "
    "which has been debated for months, would finally be put to a vote next week."
)
def switch_off(patch, name: str) -> None:
    """Turn the rule called ``name`` off through its registry switch (``patch``: pytest's
    monkeypatch or one of its contexts)."""
    r = rule(name)
    patch.setattr(r.module, r.switch, False)


PARAGRAPH = "这是新闻正文的一个段落，内容足够长，用来让块统计方法认出正文区域。" * 3


def latin_page(article: str, before: str = "", after: str = "", head: str = "") -> str:
    return (
        f"<html><head><title>Budget vote - The Daily</title>{head}</head><body>"
        "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        f"{before}<div id='main'>{article}</div>{after}"
        "<div>Copyright The Daily</div></body></html>"
    )


def test_repeated_paragraphs_in_one_container_are_all_kept(monkeypatch):
    """``repeated_lines``: a paragraph repeated among its siblings is the author's (a refrain);
    a copy of the article in another container is still output once."""
    article = "".join(f"<p>{LATIN}</p>" for _ in range(4))
    lines = extract_article(latin_page(article)).text.split("\n")
    assert lines == [LATIN] * 4
    copy = f"<div class='print'>{article}</div>"
    lines = extract_article(latin_page(f"<div>{article}</div>{copy}")).text.split("\n")
    assert lines == [LATIN] * 4
    switch_off(monkeypatch, "repeated_lines")
    assert extract_article(latin_page(article)).text.split("\n") == [LATIN]


COOKIE = (
    "We use cookies and similar technologies to improve your experience, to analyse traffic, "
    "and to show you personalised content and ads. By clicking accept, you agree to this, "
    "as outlined in our privacy policy, which you can read at any time."
)


def test_consent_banners_and_dialogs_are_noise(monkeypatch):
    """``consent_dialogs``: cookie notices named by a part of a class/id token, and dialogs
    (``role=dialog``, ``aria-modal``), are not body even when they are long punctuated prose."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    for banner in (
        f"<div class='cmplz-cookiebanner'><div><p>{COOKIE}</p><p>{COOKIE}</p></div></div>",
        f"<div id='cookie-notice-wrap'><p>{COOKIE}</p><p>{COOKIE}</p></div>",
        f"<div role='dialog'><p>{COOKIE}</p><p>{COOKIE}</p></div>",
        f"<section aria-modal='true'><p>{COOKIE}</p><p>{COOKIE}</p></section>",
    ):
        html = latin_page(article, before=banner)
        text = extract_article(html).text
        assert "cookies" not in text and text.count(LATIN) == 3, banner
        with monkeypatch.context() as off:
            switch_off(off, "consent_dialogs")
            assert "cookies" in extract_article(html).text, banner


OTHER = (
    "Readers wrote in their hundreds about last week's story, and many of them, though not all, "
    "agreed that the city should have acted sooner; here is a long selection of their letters, "
    "edited for length and clarity, with the names of the writers where they asked for them. "
) * 3


def test_the_article_the_page_names_beats_a_denser_region_elsewhere(monkeypatch):
    """``article_anchor``: when the §1.2.2 runs land outside the element the page names as its
    article (``itemprop=articleBody``, the ``<article>`` holding the ``h1``), the statistics
    run again inside it."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    others = "".join(f"<div class='letter'><div>{OTHER}</div></div>" for _ in range(3))
    for named in (
        f"<div itemprop='articleBody'>{article}</div>",
        f"<article><h1>Budget vote</h1><div class='text'>{article}</div></article>",
    ):
        html = latin_page(named, after=f"<div class='more'>{others}</div>")
        text = extract_article(html).text
        assert text.count(LATIN) == 3 and "Readers wrote" not in text, named
        with monkeypatch.context() as off:
            switch_off(off, "article_anchor")
            switch_off(off, "headline_anchor")  # the h1 is the title too
            assert "Readers wrote" in extract_article(html).text


def test_the_headline_anchors_the_article_when_the_page_names_none(monkeypatch):
    """``headline_anchor``: with no ``<article>`` or ``itemprop=articleBody``, the ``h1`` that
    is the page's title anchors the article: the nearest element around it holding a peak of
    the page's text. A denser stream of teasers after it (a sibling) is not body; a headline
    whose body lies in another branch leaves the page as it is."""
    # four paragraphs long enough for rule ①, so that the runs go on from them into the stream
    article = "".join(f"<p>{' '.join([LATIN] * 5)} {k}</p>" for k in range(4))
    stream = "".join(f"<li><div>{OTHER}</div></li>" for _ in range(5))
    story = (
        "<div class='story'><div class='head'><h1>Budget vote passes after a long night</h1></div>"
        f"<div class='text'>{article}</div></div><div class='stream'><ul>{stream}</ul></div>"
    )
    head = "<meta property='og:title' content='Budget vote passes after a long night'>"
    html = latin_page(story, head=head)
    text = extract_article(html).text
    assert text.count(LATIN) == 20 and "Readers wrote" not in text
    # a deck under the headline is one sentence: the anchor goes on up to the body
    deck = f"<p class='deck'>{LATIN.replace('council', 'mayor')}</p>"
    with_deck = html.replace("</h1></div>", f"</h1>{deck}</div>")
    text = extract_article(with_deck).text
    assert text.count(LATIN) == 20 and "Readers wrote" not in text
    # only an h1 that is the title anchors: another one leaves the statistics as they were
    other_title = html.replace("content='Budget vote passes", "content='Weather turns")
    assert "Readers wrote" in extract_article(other_title).text
    with monkeypatch.context() as off:
        switch_off(off, "headline_anchor")
        assert "Readers wrote" in extract_article(html).text
    # a headline above the whole page (its nearest peak is the stream's region): unchanged
    apart = latin_page(
        f"<div class='text'>{article}</div><div class='stream'><ul>{stream}</ul></div>",
        before="<div class='top'><h1>Budget vote passes after a long night</h1></div>",
        head=head,
    )
    assert extract_article(apart).text == extract_article(
        apart.replace("<h1>", "<h2>").replace("</h1>", "</h2>")
    ).text


def test_a_list_of_linked_names_does_not_steer_the_statistics(monkeypatch):
    """``link_blocks``: a block that is mostly links is never output, so it counts 0 in §1.2.2
    (its commas and 'and' would otherwise make it the densest block and the body empty)."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    names = ", ".join(f"<a href='/u/{k}'>reader_number_{k}</a> and friends" for k in range(400))
    html = latin_page(article, after=f"<div id='likes'><p>{names}</p></div>")
    assert extract_article(html).text.count(LATIN) == 3
    switch_off(monkeypatch, "link_blocks")
    assert LATIN not in extract_article(html).text


def test_long_list_items_and_subheadings_inside_the_body_are_kept(monkeypatch):
    """``structure_lines``: list items and h2-h4 subheadings between body paragraphs are body
    at any length, without sentence punctuation."""
    step = "Whisk the eggs with the sugar until the mixture turns pale and thick"
    heading = "What the council will decide on the budget next week"
    paragraphs = [f"<p>{LATIN * 6} {k}</p>" for k in range(4)]  # the items fall under N'min
    middle = (
        f"<h3>{heading}</h3><ul><li>{step}</li><li>{step} again</li></ul>"
        "<h2>Reactions from the opposition<a href='#edit'>[edit]</a></h2>"
    )
    html = latin_page("".join(paragraphs[:2]) + middle + "".join(paragraphs[2:]))
    lines = extract_article(html).text.split("\n")
    assert heading in lines and step in lines and f"{step} again" in lines
    assert "Reactions from the opposition[edit]" in lines  # a heading may hold a link
    switch_off(monkeypatch, "structure_lines")
    lines = extract_article(html).text.split("\n")
    assert step not in lines


def test_datelines_in_english_and_german_forms(monkeypatch):
    """``date_forms``: the dateline under the headline in a month-name or day-first form is
    the publication time, with its clock time; ambiguous numbers follow ``<html lang>``."""
    body = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    cases = [
        ("en", "By Jane Doe | August 2, 2019 3:45 pm", datetime(2019, 8, 2, 15, 45)),
        ("de", "Veröffentlicht am 2. August 2019, 14:30 Uhr", datetime(2019, 8, 2, 14, 30)),
        ("en-GB", "Published 06/02/2022", datetime(2022, 2, 6)),
        ("en-US", "Published 06/02/2022", datetime(2022, 6, 2)),
    ]
    for lang, line, expected in cases:
        html = latin_page(f"<h1>Budget vote</h1><div>{line}</div>{body}").replace(
            "<html>", f"<html lang='{lang}'>"
        )
        art = extract_article(html, tz="Europe/Berlin")
        assert art.published == expected.replace(tzinfo=ZoneInfo("Europe/Berlin")), line
        with monkeypatch.context() as off:
            switch_off(off, "date_forms")
            assert extract_article(html, tz="Europe/Berlin").published is None


def test_ruby_annotations_are_not_run_into_the_text(monkeypatch):
    """``ruby_annotations``: ``rt``/``rp`` (readings above characters) are not sentence text."""
    sentence = "<ruby>子<rp>(</rp><rt>こ</rt><rp>)</rp></ruby>どもたちは、毎日学校へ歩いて通っています。" * 6
    html = latin_page("".join(f"<p>{sentence}{k}</p>" for k in range(4)))
    assert "子ども" in extract_article(html).text and "こ" not in extract_article(html).text
    switch_off(monkeypatch, "ruby_annotations")
    assert "子(こ)ども" in extract_article(html).text


def test_soft_hyphens_and_zero_width_spaces_leave_the_text(monkeypatch):
    """``invisible_chars``: U+00AD, U+200B, U+2060, U+FEFF are not output."""
    marked = LATIN.replace("council", "coun\u00adcil").replace("budget", "bud\u200bget\ufeff")
    html = latin_page("".join(f"<p>{marked} {k}</p>" for k in range(3)))
    assert extract_article(html).text.split("\n")[0] == f"{LATIN} 0"
    switch_off(monkeypatch, "invisible_chars")
    assert "\u00ad" in extract_article(html).text


def test_a_body_only_in_noscript_is_read(monkeypatch):
    """``noscript_bodies``: when the page's body comes out empty, the markup inside
    ``<noscript>`` (what readers without JavaScript see) is extracted."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    html = latin_page(f"<div id='app'></div><noscript><div class='story'>{article}</div></noscript>")
    assert extract_article(html).text.count(LATIN) == 3
    switch_off(monkeypatch, "noscript_bodies")
    assert LATIN not in extract_article(html).text


def test_an_article_split_around_an_ad_slot_is_read_whole(monkeypatch):
    """``split_bodies``: a template that cuts the article into two containers of one class
    (each in a wrapper of its own, an ad slot between) loses neither part."""
    first = f"<p>{LATIN * 2} first 0</p>"
    second = "".join(f"<p>{LATIN * 2} second {k}</p>" for k in range(6))
    article = (
        f"<div class='wrap'><div class='story-body story-body-1'>{first}</div></div>"
        "<div class='ad'><div>Advertisement</div></div>"
        f"<div class='wrap'><div class='story-body story-body-2'>{second}</div></div>"
    )
    text = extract_article(latin_page(article)).text
    assert text.count(" first ") == 1 and text.count(" second ") == 6
    switch_off(monkeypatch, "split_bodies")
    assert extract_article(latin_page(article)).text.count(" first ") == 0


def test_on_a_page_of_several_posts_the_first_post_is_the_article(monkeypatch):
    """``first_post``: a blog front page or forum thread repeats a dated post header; the
    article, its body and its time, is the first post even when a later one is longer."""
    shanghai = ZoneInfo("Asia/Shanghai")

    def post(day: int, title: str, paragraphs: int, word: str) -> str:
        body = "".join(f"<p>{word}{PARAGRAPH * (paragraphs // 2)}{k}</p>" for k in range(paragraphs))
        return (
            f"<table><tr><td class='post-name'>{title}</td>"
            f"<td class='post-time'>2005-03-{day:02d} 01:20:44</td></tr>"
            f"<tr><td class='post-body'>{body}</td></tr></table>"
        )

    posts = post(21, "昨天去金矿玩", 2, "金矿") + post(18, "长发剪了", 6, "长发") + post(15, "雪花", 2, "雪花")
    html = (
        "<html><head><title>海姑娘的博客</title></head><body>"
        f"<div class='nav'><a href='/'>首页</a></div><div id='posts'>{posts}</div></body></html>"
    )
    art = extract_article(html)
    assert art.text.count("金矿") == 2 and "长发" not in art.text
    assert art.published == datetime(2005, 3, 21, 1, 20, 44, tzinfo=shanghai)
    switch_off(monkeypatch, "first_post")
    art = extract_article(html)
    assert "长发" in art.text and art.published != datetime(2005, 3, 21, 1, 20, 44, tzinfo=shanghai)


def test_counters_comment_forms_and_promotions_at_the_ends_are_not_body(monkeypatch):
    """``leftover_lines``: a bare counter, a comment counter and form, a "related" heading, a
    promotion line and a tail of scraps at the body's ends are not body."""
    paragraphs = "".join(f"<p>{PARAGRAPH}{k}</p>" for k in range(5))
    before = "<p>相关新闻：</p><p>扫描二维码关注我们，获取更多资讯</p>"
    after = (
        "<p>0人跟贴 | 0人参与</p><p>账号</p><p>密码</p><p>20,566</p>"
        "<p>APP专享</p><p>王茜</p><p>正在加载...</p>"
    )
    html = latin_page(before + paragraphs + after)
    lines = extract_article(html).text.split("\n")
    assert lines[0].startswith(PARAGRAPH) and lines[-1] == f"{PARAGRAPH}4", lines
    switch_off(monkeypatch, "leftover_lines")
    lines = extract_article(html).text.split("\n")
    assert lines[0].startswith("扫描二维码") and lines[-4:] == ["20,566", "APP专享", "王茜", "正在加载..."]


def test_elements_no_reader_sees_are_not_body(monkeypatch):
    """``hidden_elements``: ``hidden``, ``display: none`` and ``visibility:hidden`` elements are
    noise (a page wrapper holding most of the text is still kept)."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    for hidden in ("hidden", "style='display: none'", "style='visibility:hidden;color:red'"):
        html = latin_page(f"{article}<div {hidden}><p>{OTHER[:250]}</p></div>")
        text = extract_article(html).text
        assert text.count(LATIN) == 3 and "Readers wrote" not in text, hidden
        with monkeypatch.context() as off:
            switch_off(off, "hidden_elements")
            assert "Readers wrote" in extract_article(html).text, hidden
    wrapper = latin_page(f"<div style='display:none'>{article}</div>")
    assert extract_article(wrapper).text.count(LATIN) == 3


def test_a_formulas_tex_source_is_not_read_beside_it(monkeypatch):
    """``math_sources``: MathML ``annotation`` (a formula's TeX) is type I."""
    formula = (
        "<math><semantics><mi>x</mi>"
        "<annotation encoding='application/x-tex'>{\\displaystyle x}</annotation>"
        "</semantics></math>"
    )
    html = latin_page("".join(f"<p>{LATIN} {formula} {k}</p>" for k in range(3)))
    assert "displaystyle" not in extract_article(html).text
    switch_off(monkeypatch, "math_sources")
    assert "displaystyle" in extract_article(html).text


def test_a_post_of_short_lines_above_a_longer_comment_thread(monkeypatch):
    """``comment_threads``: when block_i falls among short dated entries (reader comments),
    the article is what stands above the first of them."""
    lines = "".join(f"<p>一波波接續性低溫寒流報到 已將新竹尖石鄉後山一帶層層山巒披上嫣紅的彩衣{k}</p>" for k in range(12))
    comments = "".join(
        f"<ul><li class='post-info'>#{k} 讀者{k} 於 2013/12/28 10:{k:02d}</li>"
        f"<li class='post-text'>露營兼賞楓，好棒的生活，每每分享藍天大哥捕捉的鏡頭，總是特別的吸引目光，真得好美。</li>"
        f"<li class='post-text'>對了，我家女兒說，伯伯的露營餐點看起來好豐盛喔，下次也想一起去。</li></ul>"
        for k in range(12)
    )
    html = latin_page(f"<div class='article'>{lines}</div><div class='thread'>{comments}</div>")
    text = extract_article(html).text
    assert text.count("寒流報到") == 12 and "好棒的生活" not in text
    switch_off(monkeypatch, "comment_threads")
    assert "好棒的生活" in extract_article(html).text


def test_a_body_blanked_whole_falls_back_to_the_next_candidate(monkeypatch):
    """``next_candidate``: when the noise rules blank the whole article (a page whose posts sit
    in a section named "comments", dated), the page is read again without the blanking
    rather than coming out empty."""
    posts = "".join(
        f"<div class='entry'><div>2015-01-0{k + 1} 12:0{k}</div><p>{LATIN} {k}</p></div>"
        for k in range(4)
    )
    html = latin_page(f"<div id='comments'>{posts}</div>")
    assert extract_article(html).text.count(LATIN) >= 1
    switch_off(monkeypatch, "next_candidate")
    assert LATIN not in extract_article(html).text


def test_json_ld_article_body_anchors_the_region(monkeypatch):
    """``article_anchor``: with no element named as the article, the JSON-LD ``articleBody``
    says where the article is on the page."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    others = "".join(f"<div class='letter'><div>{OTHER}</div></div>" for _ in range(3))
    ld = (
        '<script type="application/ld+json">{"@type": "NewsArticle", '
        f'"articleBody": "{LATIN} 0 {LATIN} 1 {LATIN} 2"}}</script>'
    )
    html = latin_page(f"<div class='text'>{article}</div>", after=others, head=ld)
    text = extract_article(html).text
    assert text.count(LATIN) == 3 and "Readers wrote" not in text
    switch_off(monkeypatch, "article_anchor")
    assert "Readers wrote" in extract_article(html).text


def test_a_page_of_no_known_site_takes_its_languages_zone(monkeypatch):
    """``page_zone``: with no zone from the caller, a time without offset is read in the zone
    the page's language points to; a zone the caller names (the site's) wins; without the
    language's zone, a page with no sign of China is read in UTC, never as Beijing time."""
    body = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    html = latin_page(f"<h1>Budget vote</h1><div>2. August 2019, 14:30 Uhr</div>{body}").replace(
        "<html>", "<html lang='de-DE'>"
    )
    berlin, shanghai = ZoneInfo("Europe/Berlin"), ZoneInfo("Asia/Shanghai")
    assert extract_article(html).published == datetime(2019, 8, 2, 14, 30, tzinfo=berlin)
    assert extract_article(html, tz="Asia/Shanghai").published.tzinfo == shanghai
    switch_off(monkeypatch, "page_zone")
    assert extract_article(html).published == datetime(2019, 8, 2, 14, 30, tzinfo=UTC)


def test_a_language_the_title_contradicts_gives_no_zone():
    """``page_zone``: a Chinese page whose template says ``lang="en-US"`` (a CMS default) is
    not read in New York's zone: the claim of a language not written in Han script is
    ignored when the title is mostly Han characters."""
    para = "记者从有关部门获悉，这项改革措施将于明年起在全国范围内逐步推开，惠及数千万群众。"
    body = "".join(f"<p>{para}{k}</p>" for k in range(4))
    html = (
        "<html lang='en-US'><head><title>全国推开改革措施_网易新闻</title></head><body>"
        f"<h1>全国推开改革措施</h1><div>2015-06-19 11:20:11</div><div>{body}</div></body></html>"
    )
    shanghai = ZoneInfo("Asia/Shanghai")
    assert extract_article(html).published == datetime(2015, 6, 19, 11, 20, 11, tzinfo=shanghai)
    english = html.replace("全国推开改革措施_网易新闻", "Reform rolled out nationwide")
    new_york = ZoneInfo("America/New_York")
    assert extract_article(english).published.tzinfo == new_york


def test_video_player_controls_are_not_body(monkeypatch):
    """``player_controls``: the control bar and menus of a video player (``vjs-``, ``yvp-``...)
    are noise, however many short lines they hold."""
    player = "<div class='vjs-control-bar'>Playback Rate</div><div class='yvp-tab'>Presets</div>"
    paragraphs = [f"<p>{LATIN} {k}</p>" for k in range(4)]
    html = latin_page("".join(paragraphs[:2]) + player + "".join(paragraphs[2:]))
    text = extract_article(html).text
    assert text.count(LATIN) == 4 and "Playback Rate" not in text and "Presets" not in text
    switch_off(monkeypatch, "player_controls")
    assert "Playback Rate" in extract_article(html).text


def test_the_headline_is_not_a_body_line_when_the_title_names_the_site(monkeypatch):
    """``title_line``: the first body line is dropped when it is the title, also when the
    title is the headline with the site's name after it (``og:title`` "Headline | Site")."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    head = "<meta property='og:title' content='Budget vote passes after a long night | The Daily'>"
    html = latin_page(f"<h1>Budget vote passes after a long night</h1>{article}", head=head)
    lines = extract_article(html).text.split("\n")
    assert lines[0].startswith(LATIN) and len(lines) == 3
    switch_off(monkeypatch, "title_line")
    assert extract_article(html).text.split("\n")[0] == "Budget vote passes after a long night"


def test_related_story_lists_named_by_a_compound_token_are_not_body(monkeypatch):
    """``related_sections``: a list of related stories whose class or id only contains
    ``related`` (``jp-relatedposts``) is noise, however long its teasers are."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    teasers = "".join(
        f"<div class='jp-relatedposts-post'><p>{OTHER}</p><p>March 17, 2016</p></div>"
        for _ in range(2)
    )
    html = latin_page(f"{article}<div id='jp-relatedposts'>{teasers}</div>")
    text = extract_article(html).text
    assert text.count(LATIN) == 3 and "Readers wrote" not in text
    switch_off(monkeypatch, "related_sections")
    assert "Readers wrote" in extract_article(html).text


def test_a_slideshow_inside_the_article_is_not_body_but_a_photo_set_is(monkeypatch):
    """``slideshows``: a gallery of counted slides (``1/12``, ``2/12``...) inside the article
    is not its text, even when its captions are most of the page's text; a page that is
    the gallery (no article besides it) keeps its captions."""
    lead = "".join(f"<p>{LATIN} {k}</p>" for k in range(2))
    rest = "".join(f"<p>{LATIN} {k}</p>" for k in range(2, 4))
    slides = "".join(
        f"<li><h2><span class='counter'>{k}/12</span> Slide title {k}</h2><p>{OTHER}</p>"
        "<p class='credits'>GETTY IMAGES</p></li>"
        for k in range(1, 13)
    )
    gallery = f"<div class='full-gallery'><ul class='legends'>{slides}</ul></div>"
    html = latin_page(f"<div class='text'>{lead}{gallery}{rest}</div>")
    text = extract_article(html).text
    assert text.count(LATIN) == 4 and "Readers wrote" not in text and "1/12" not in text
    photo_set = latin_page(gallery)
    assert "Readers wrote" in extract_article(photo_set).text
    switch_off(monkeypatch, "slideshows")
    assert "Readers wrote" in extract_article(html).text


def test_the_runs_are_held_to_the_named_article(monkeypatch):
    """``anchor_trim``: with most of the runs' text in the ``<article>`` holding the ``h1``,
    the blocks they take after it (a list of dated teasers) are not body."""
    article = "".join(f"<p>{LATIN} {LATIN} {k}</p>" for k in range(4))
    teasers = "".join(f"<p>{OTHER[:300]}</p><p>November {k}, 2019</p>" for k in range(3))
    html = latin_page(
        f"<article><h1>Budget vote</h1>{article}</article>"
        f"<div class='more-news'><h2>More in News</h2>{teasers}</div>"
    )
    text = extract_article(html).text
    assert text.count(LATIN) == 8 and "Readers wrote" not in text
    switch_off(monkeypatch, "anchor_trim")
    assert "Readers wrote" in extract_article(html).text


def test_a_deck_and_a_caption_under_the_headline_do_not_anchor_the_article():
    """``headline_anchor``: when the element around the headline holds only a deck and a
    caption (under a fifth of the runs' text) and the article lies in a sibling, the
    article stays the body."""
    article = "".join(f"<p>{LATIN} {LATIN} {k}</p>" for k in range(5))
    deck = f"<p class='deck'>{LATIN.replace('council', 'mayor')}</p>"
    caption = "<p class='caption'>The council chamber before the vote. (Photo: The Daily)</p>"
    html = latin_page(
        f"<div class='head'><h1>Budget vote passes after a long night</h1>{deck}{caption}</div>"
        f"<div class='text'>{article}</div>",
        head="<meta property='og:title' content='Budget vote passes after a long night'>",
    )
    assert extract_article(html).text.count(LATIN) == 10


def test_the_site_name_after_the_headline_is_not_part_of_the_title(monkeypatch):
    """``site_suffix_titles``: an ``og:title`` that is the page's ``h1`` with the site's name
    after a separator gives the ``h1`` as the title, also when the ``h1`` stands too far
    above the body for the heading rule of §1.2.3 to see it."""
    article = "".join(f"<p>{LATIN} {k}</p>" for k in range(3))
    tools = "".join(f"<div>{word}</div>" for word in ("Share", "Tweet", "Mail", "Print", "Save"))
    page = f"<div class='top'><h1>Budget vote passes after a long night</h1></div>{tools}{article}"
    for suffix in (" | The Daily", " - The Daily", "_每日新闻"):
        head = f"<meta property='og:title' content='Budget vote passes after a long night{suffix}'>"
        html = latin_page(page, head=head)
        assert extract_article(html).title == "Budget vote passes after a long night", suffix
    # a title that only begins like the h1, without a separator, is left whole
    head = "<meta property='og:title' content='Budget vote passes after a long nightmare'>"
    assert extract_article(latin_page(page, head=head)).title.endswith("nightmare")
    switch_off(monkeypatch, "site_suffix_titles")
    head = "<meta property='og:title' content='Budget vote passes after a long night | The Daily'>"
    assert extract_article(latin_page(page, head=head)).title.endswith("| The Daily")


def test_a_lead_before_an_ad_slot_and_a_read_more_box_is_kept(monkeypatch):
    """``lead_runs``: the first paragraphs stand in the parent, the rest of the article in a
    child box after an ad slot; the lead's runs fall under N_cal, but they are body (and a
    byline above the article is not)."""
    lead = "".join(f"<p>{k}. {LATIN}</p>" for k in range(3))
    rest = "".join(f"<p>{k}. {' '.join([LATIN] * 4)}</p>" for k in range(3, 12))
    article = (
        f"<div class='articleContent'>{lead}<div class='ad'></div><hr><div class='ad'></div><hr>"
        f"<div class='toggle-group'>{rest}</div></div>"
    )
    html = latin_page(article, before="<div class='byline'>By Jane Doe, Nov. 19, 2019</div>")
    text = extract_article(html).text
    assert text.startswith(f"0. {LATIN}") and text.count(LATIN) == 3 + 9 * 4
    assert "Jane Doe" not in text
    switch_off(monkeypatch, "lead_runs")
    assert extract_article(html).text.startswith(f"3. {LATIN}")
