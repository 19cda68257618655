"""Rules that take lines off the chosen body: ``title_line``, ``edge_lines``,
``leftover_lines``, ``record_lines``, ``invisible_chars``."""

from __future__ import annotations

import re
from datetime import tzinfo

from ..blocks import Blockset
from ..dates import find_date
from ..record import is_record_line, record_line_hint
from ..title_time import strip_spaces
from .common import SENTENCE

#: ``title_line``, ``edge_lines``, ``invisible_chars``: on (the ablation switches each off).
TITLE_LINE = True
EDGE_LINES = True
INVISIBLE_CHARS = True
#: ``edge_lines``: what a byline, breadcrumb, editor or share line looks like.
_EDGE_LINE = re.compile(
    r"^(?:当前位置|您的位置|您现在的位置|现在位置|位置)[:：]"
    r"|(?:首页|主页)\s*(?:[>›»/]|&gt;)"
    r"|^[(（【\[]?\s*(?:责任编辑|责编|编辑|作者|记者|来源|稿源|文章来源|本文来源)[:：]"
    r"|^(?:分享到|转发到|收藏|打印|关闭窗口|返回顶部)"
    r"|(?:来源|作者|编辑|点击|浏览|阅读|发布)(?:次数|量)?[:：]"
    # a byline without a colon: 本报记者 某某 发自北京 / 新华社记者 某某 报道
    r"|^[(（【\[]?\s*(?:本报|本刊|本台|本网|新华社|中新社|中新网)?(?:特约)?(?:记者|通讯员)"
    r"[^，。,.]{0,16}(?:发自|报道)"
)


#: ``leftover_lines``: on (the ablation switches it off).
LEFTOVER_LINES = True


#: ``leftover_lines``: what else a line at the body's ends is when it is not body: a bare
#: counter (``20,566``, ``1.2万``), a comment counter or form (``0人跟贴 | 0人参与``,
#: ``账号``, ``密码``), a "related" or "loading" heading, a promotion (扫描二维码, 点击投票).
_LEFTOVER_LINE = re.compile(
    r"^[\d,.\s]+(?:万|次|人|views?|reads?|comments?)?$"
    r"|\d+\s*人(?:跟贴|参与|评论|阅读|收藏|点赞)"
    r"|^(?:账号|帐号|密码|用户名|验证码|登录|注册|匿名发表|发表评论|发表跟贴|我要评论|网友评论"
    r"|Name|Email|Website|Password|Log ?in|Sign ?up|Leave a (?:Reply|comment))[:：*]?$"
    r"|^(?:相关新闻|相关阅读|相关文章|相关报道|相关视频|延伸阅读|推荐阅读|精彩推荐|精彩视频推荐|热门推荐"
    r"|Related (?:articles?|stories|posts?|videos?|coverage)|Read more|More from)\b"
    r"|^(?:正在加载|加载中|Loading)\s*(?:\.\.\.|…)?$|^\d{1,2}:\d{2}$"
    r"|扫描?二维码|扫码关注|关注微信|微信公众号|下载.{0,6}客户端|点击投票|【点击",
    re.IGNORECASE,
)


#: ``leftover_lines``: lines this long are never leftovers; passes over the ends.
LEFTOVER_MAX_CHARS = 80


EDGE_PASSES = 3


#: ``leftover_lines``: a line this short without sentence punctuation at the very end is a
#: scrap (an editor's name, "APP专享", "组图"); at most this many are peeled off per pass.
TAIL_SCRAP_CHARS = 6


TAIL_MAX_LINES = 6


#: ``edge_lines``: lines this long are prose, never trimmed.
EDGE_MAX_CHARS = 60


#: ``edge_lines``: how many lines at each end are looked at.
EDGE_WINDOW = 3


def drop_title_line(blockset: Blockset, body: list[int], title: str | None) -> list[int]:
    """``title_line``: the headline is the article's title, not its first paragraph.

    The smoothing of §1.2.2 often pulls the ``h1`` into the first run; the
    title is returned on its own (``ExtractedArticle.title``), so a first body line that
    is the title is dropped.
    """
    if not TITLE_LINE or not body or not title:
        return body
    first, t = strip_spaces(blockset.text[body[0]]), strip_spaces(title)
    if first and (
        first == t
        or (len(first) <= 2 * len(t) and t in first)
        # the title with the site's name after it (og:title "Headline | Site")
        or (len(t) <= 2 * len(first) and t.startswith(first))
    ):
        return body[1:]
    return body


def trim_edge_lines(blockset: Blockset, body: list[int], tz: tzinfo) -> list[int]:
    """``edge_lines``: drop byline, breadcrumb, editor and share lines at the body's ends.

    The smoothing of §1.2.2 pulls the short lines next to the first and last
    paragraphs into the runs: the date-and-source line under the headline, the
    editor line after the last paragraph. A short line at either end that
    looks like one of these (a date with 来源/作者, 责任编辑:, 当前位置:, 分享到)
    is not body, even after a first line that is not one (a deck or subtitle
    above the byline). Only the outermost ``EDGE_WINDOW`` lines at each end are
    looked at, and never a line longer than ``EDGE_MAX_CHARS``.
    """
    if not EDGE_LINES:
        return body
    text = blockset.text

    def is_edge(i: int) -> bool:
        t = text[i]
        if LEFTOVER_LINES and len(t) <= LEFTOVER_MAX_CHARS and _LEFTOVER_LINE.search(t):
            return True
        if len(t) > EDGE_MAX_CHARS:
            return False
        if _EDGE_LINE.search(t):
            return True
        found = find_date(t, tz)
        return found is not None and len(t) <= 30

    for _ in range(EDGE_PASSES if LEFTOVER_LINES else 1):
        n = len(body)
        edges = set(range(min(EDGE_WINDOW, n))) | set(range(max(0, n - EDGE_WINDOW), n))
        kept = [i for pos, i in enumerate(body) if pos not in edges or not is_edge(i)]
        if LEFTOVER_LINES:  # a tail of scraps: short lines without a sentence, or edge lines
            while len(kept) > 1 and len(body) - len(kept) < TAIL_MAX_LINES:
                t = text[kept[-1]]
                if not (
                    (len(t) <= TAIL_SCRAP_CHARS and not SENTENCE.search(t)) or is_edge(kept[-1])
                ):
                    break
                kept.pop()
        if len(kept) == n:
            break
        body = kept
    return body


#: ``record_lines``: on (the ablation switches it off). What a line must hold to be tried as
#: a byline, source or editor line (a cheap test before :func:`.record.is_record_line`).
RECORD_LINES = True


def drop_record_lines(blockset: Blockset, body: list[int]) -> tuple[list[int], list[int]]:
    """``record_lines``: a body line that is nothing but a byline, source or editor line
    (``（责任编辑：魏喆）``, ``来源：新华网``, ``本报记者 葛灵丹``) is not body, wherever it
    stands; the record fields read it (:mod:`.record`). Returns (kept, dropped)."""
    text = blockset.text
    dropped = [i for i in body if record_line_hint(text[i]) and is_record_line(text[i])]
    if not dropped:
        return body, dropped
    gone = set(dropped)
    return [i for i in body if i not in gone], dropped


def visible_text(text: str) -> str:
    """``invisible_chars``: soft hyphens and zero-width spaces taken out of the body."""
    if INVISIBLE_CHARS and _INVISIBLE.search(text):
        text = _INVISIBLE.sub("", text)
    return text


#: ``invisible_chars``: soft hyphen, zero-width space, word joiner, zero-width no-break space.
#: (Zero-width joiners and non-joiners stay: they change how Persian and Indic scripts read.)
_INVISIBLE = re.compile("[\u00ad\u200b\u2060\ufeff]")
