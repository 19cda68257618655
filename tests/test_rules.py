"""The registry of the best mode's rules (``newsspider.extraction.rules``).

The registry lists every rule once, in the docs as in the code; every switch is a flag
that turns its rule off (a page whose output changes with it off, for each rule: the
rules tested in ``tests/test_open_web.py`` are shown there, the others here); the
ablation walks the registry.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from newsspider.extraction import extract_article
from newsspider.extraction.rules import RULES, rule, switches_off

REPO = Path(__file__).resolve().parents[1]
PARAGRAPH = "这是新闻正文的一个段落，内容足够长，用来让块统计方法认出正文区域。" * 3


def page(before: str = "", after: str = "", head: str = "", body_tag: str = "div") -> str:
    paragraphs = "".join(f"<p>{PARAGRAPH}{k}</p>" for k in range(6))
    return (
        f"<html><head><title>一条新闻的标题_网易新闻</title>{head}</head><body>"
        "<div class='nav'><a href='/'>首页</a> <a href='/n'>新闻</a></div>"
        f"<{body_tag} id='main'>{before}{paragraphs}{after}</{body_tag}>"
        "<div>版权所有 © 网易公司</div></body></html>"
    )


def test_every_rule_is_listed_once_with_its_switch_step_trigger_and_doc():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    for r in RULES:
        assert re.fullmatch(r"[a-z_]+", r.name)
        assert getattr(r.module, r.switch) is True, r.name  # on by default
        assert r.step and r.trigger and len(r.doc) > 80, r.name
        assert "Gain:" in r.doc, r.name  # its measured gain
        assert r.changes in ("body", "title", "time", "authors")
        for name in r.code:
            assert callable(getattr(r.module, name)), (r.name, name)
    switches = [(r.module.__name__, r.switch) for r in RULES]
    assert len(switches) == len(set(switches))  # one switch per rule


def test_improvements_md_lists_the_registry_in_its_order():
    doc = (REPO / "docs" / "improvements.md").read_text("utf-8")
    listed = re.findall(r"^\| \d+ \| `(\w+)` \|", doc, re.M)
    assert listed == [r.name for r in RULES]


def test_a_switch_turns_its_rule_off_and_back_on():
    r = rule("container")
    with r.off():
        assert not r.on
        assert getattr(r.module, r.switch) is False
    assert r.on
    with switches_off("container", "edge_lines"):
        assert not rule("container").on and not rule("edge_lines").on
    assert all(x.on for x in RULES)
    with pytest.raises(KeyError, match="the rules are"):
        rule("no_such_rule")


def test_the_ablation_walks_the_registry():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import ablation
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    assert list(ablation.switches()) == [r.name for r in RULES]


def test_every_rule_has_a_test_that_switches_it_off():
    """A rule whose switch no test turns off could be dead code: each is switched off in
    ``tests/test_open_web.py`` or here, on a page whose output it changes."""
    tested = set()
    for name in ("test_open_web.py", "test_rules.py", "test_record_fields.py"):
        text = (REPO / "tests" / name).read_text("utf-8")
        tested |= set(re.findall(r'switch_off\(\w+, "(\w+)"\)', text))
        tested |= set(re.findall(r'^    "(\w+)": \(', text, re.M))  # the table below
    assert {r.name for r in RULES} <= tested, {r.name for r in RULES} - tested


def _differs(name: str, html: str) -> tuple[object, object]:
    on = extract_article(html)
    with rule(name).off():
        off = extract_article(html)
    return on, off


COMMENTS = "".join(
    f"<div class='item'><p>网友{k} 2015-01-0{k + 1} 12:3{k}</p><p>{PARAGRAPH}{k}</p></div>"
    for k in range(9)
)
#: Rules not shown in tests/test_open_web.py: a page, and what the rule changes on it
#: (the field, its value with the rule on: a substring of the body or a value).
EXAMPLES: dict[str, tuple[str, str, object]] = {
    "head_not_body": (
        "<html><head><title>标题_网易新闻</title></head><body></body></html>",
        "text",
        "",
    ),
    "form_is_layout": (
        page().replace("<body>", "<body><form action='x'>").replace("</body>", "</form></body>"),
        "text",
        PARAGRAPH,
    ),
    "noise_containers": (
        page(after=f"<div class='sidebar'><p>侧栏推荐的内容，{PARAGRAPH}</p></div>"),
        "no text",
        "侧栏推荐",
    ),
    "comment_sections": (
        page().replace("</body>", f"<div class='comments'>{COMMENTS}</div></body>"),
        "no text",
        "网友",
    ),
    "links_kept": (
        page(before=f"<p>据<a href='/x'>新华社报道</a>，{PARAGRAPH}</p>"),
        "text",
        "据新华社报道，",
    ),
    "container": (
        page(before="<p>短导语，一句话。</p><div></div><div></div><div></div><div></div>"),
        "text",
        "短导语",
    ),
    "inner_lines": (
        page(before=f"<p>{PARAGRAPH}a</p><h3>第二部分小标题</h3><p>{PARAGRAPH}b</p>"),
        "text",
        "第二部分小标题",
    ),
    "duplicate_blocks": (
        page(after=f"<div class='print'><div><p>{PARAGRAPH}0</p><p>{PARAGRAPH}1</p></div></div>"),
        "count",
        1,
    ),
    "edge_lines": (
        page(after="<p>分享到：微博，微信</p>"),
        "no text",
        "分享到",
    ),
    "record_lines": (
        page(before=f"<p>{PARAGRAPH}x</p><p>本报记者 葛灵丹</p><p>{PARAGRAPH}y</p>"),
        "no text",
        "葛灵丹",
    ),
    "nonempty_window": (  # the headline stands three empty blocks above block_i
        page(before="<h1>新闻的真正标题在这里</h1><div></div><div></div><div></div>").replace(
            "一条新闻的标题_网易新闻", "网易新闻", 1
        ),
        "title",
        "新闻的真正标题在这里",
    ),
    "time_after_headline": (
        page(
            before="<h1>一条新闻的标题</h1><p>2015-01-02 12:34</p>"
            "<p>扫码关注我们</p><p>点击投票</p><p>下载客户端</p>"
            f"<p>2013年5月6日 08:00，{PARAGRAPH}</p>",
        ),
        "published",
        "2015-01-02T12:34:00+08:00",
    ),
    "issue_dates": (
        page(after="<p>（摘自《读者》1998年3月号）</p>"),
        "published",
        "1998-03-01T00:00:00+08:00",
    ),
    "meta_first": (
        page(
            head="<meta property='article:published_time' content='2021-06-01T10:00:00+08:00'>",
            before="<p>2015-01-02 12:34 来源：新华社</p>",
        ),
        "published",
        "2021-06-01T10:00:00+08:00",
    ),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_switching_a_rule_off_changes_its_page(name):
    html, field, value = EXAMPLES[name]
    on, off = _differs(name, html)
    if field == "text":
        assert (value in on.text) if value else on.text == value
    elif field == "no text":
        assert value not in on.text
    elif field == "count":
        assert on.text.count(PARAGRAPH + "0") == value
    elif field == "title":
        assert on.title == value
    else:
        assert on.published is not None and on.published.isoformat() == value
    assert (on.text, on.published, on.title) != (off.text, off.published, off.title), name
