"""Anti-bot challenge pages told from pages, as a pure function of status, headers and body.

A site that suspects a crawler does not answer with its article: it answers with a page
whose only purpose is to test the client. The shapes met on Chinese news sites and the
CDNs in front of them:

- an error status with a script: 加速乐 (Knownsec) answers **521** with
  ``document.cookie=...__jsl_clearance...; location.href=location.pathname+...``; 瑞数
  (Ruishu) answers **412** with an obfuscated script that sets a cookie and reloads;
  Cloudflare answers **403** or **503** "Just a moment..." with ``_cf_chl_opt``; a
  **429** may carry a reload script or a 访问过于频繁 notice;
- a **200** that is no article: Aliyun's ``acw_sc__v2`` page (a script computing a cookie,
  then ``location.reload()``), a 滑动验证 / 安全验证 / 验证码 / 人机验证 page, a
  "verify you are human" page, a 访问过于频繁 / 请求过于频繁 notice, or a page whose
  visible text is nothing but a script shell that sets a cookie or reloads itself.

:func:`challenge_reason` names the shape (``js_cookie_521``, ``http_412_script``,
``http_403_script``, ``http_429``, ``http_503_script``, ``verify_page``, ``captcha``,
``rate_limited``, ``script_shell``) or returns None. It must never take an article for a
challenge: real pages mention 验证码 in their login boxes and ``document.cookie`` in
their analytics, so a marker alone is not enough. A challenge page is small and has
almost no visible text; an article has its text. The check is cheap on the common case:
a size gate, a few byte regexes (the Chinese markers in UTF-8 and GB18030), and only when
one of them matches is the page decoded and parsed to count its visible text.

:func:`script_cookies` reads the cookies a challenge script sets by a plain assignment
of string literals (``document.cookie="k=v; path=/"``, ``document.cookie='k='+'v'``),
so a crawler can send them back. It never evaluates JavaScript: an expression that is
anything but quoted literals joined by ``+`` is left alone.

Pure: no Scrapy, no settings; callers pass values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lxml import etree

from .encoding import decode_html
from .errors import ExtractionError

__all__ = [
    "CHALLENGE_REASONS",
    "CHALLENGE_STATUSES",
    "MAX_CHALLENGE_BYTES",
    "SHELL_TEXT_MAX",
    "VERIFY_TEXT_MAX",
    "challenge_reason",
    "script_cookies",
    "visible_text",
]

#: The error statuses anti-bot services answer with, and the reason each one gets when it
#: carries a challenge (a cookie or reload script, or a verification marker).
CHALLENGE_STATUSES: dict[int, str] = {
    403: "http_403_script",
    412: "http_412_script",
    429: "http_429",
    503: "http_503_script",
    521: "js_cookie_521",
}
#: Every reason :func:`challenge_reason` returns.
CHALLENGE_REASONS: tuple[str, ...] = (
    *CHALLENGE_STATUSES.values(), "verify_page", "captcha", "rate_limited", "script_shell",
)  # fmt: skip

#: A bigger body is not a challenge: the ones seen are 1-30 KB (Cloudflare's the largest).
MAX_CHALLENGE_BYTES = 256 * 1024
#: Visible characters of a verification, captcha or rate-limit page at most (Cloudflare's
#: "Just a moment... checking your browser..." is about 300).
VERIFY_TEXT_MAX = 400
#: Visible characters of a 2xx script shell at most.
SHELL_TEXT_MAX = 40


def _forms(words: tuple[str, ...]) -> tuple[bytes, ...]:
    """``words`` as UTF-8 and GB18030 bytes (the Chinese ones differ), for ``in`` tests on
    the raw body: literal searches, much faster than a regex alternation."""
    return tuple(dict.fromkeys(w.encode(codec) for w in words for codec in ("utf-8", "gb18030")))


#: A script that sets a cookie (searched in the lower-cased body).
_COOKIE = re.compile(rb"document\s*\.\s*cookie\s*=(?!=)")
#: A script that reloads or moves the page (an error page with one is a challenge).
_RELOAD = re.compile(
    rb"location\s*\.\s*reload\s*\(|location\s*\.\s*(?:href|replace|assign)\s*(?:=(?!=)|\()"
    rb"|(?:window|document)\s*\.\s*location\s*=(?!=)"
)
#: A script that reloads the same page (on a 2xx, a shell's mark; a redirect elsewhere is not).
_SELF_RELOAD = re.compile(
    rb"location\s*\.\s*reload\s*\("
    rb"|location\s*\.\s*(?:href|replace|assign)\s*(?:=|\()\s*(?:window\s*\.\s*|document\s*\.\s*)?"
    rb"location\s*\.\s*(?:pathname|href|search)"
)
#: Markers of the anti-bot services themselves (their cookies, scripts and form ids):
#: with little visible text, a verification page whatever the words around them.
_SERVICE = (
    b"__jsl_clearance", b"acw_sc__v2", b"acw_tc=", b"_cf_chl_opt", b"cf-challenge", b"cf_chl_",
    b"challenge-platform", b"cf-browser-verification", b"_guard/auto.js", b"waf_sc=",
    b"$_ts=window",  # 瑞数 (Ruishu): its 412 page loads the script that sets the cookie
)  # fmt: skip
#: ``(reason, Chinese words, lower-case ASCII words)``, the first that matches wins.
_MARKERS: tuple[tuple[str, tuple[bytes, ...], tuple[bytes, ...]], ...] = (
    (
        "captcha",
        _forms(("滑动验证", "拖动滑块", "向右滑动", "请按住滑块", "验证码", "点击验证",
                "拼图验证")),
        (b"captcha", b"geetest", b"nc_1_wrapper", b"slide-verify", b"slider-verify"),
    ),
    (
        "rate_limited",
        _forms(("访问过于频繁", "请求过于频繁", "操作过于频繁", "访问太频繁", "访问频率过高",
                "请求太频繁")),
        (b"too many requests", b"rate limit exceeded", b"rate limited"),
    ),
    (
        "verify_page",
        _forms(("安全验证", "人机验证", "访问验证", "身份验证", "安全检查", "环境异常",
                "请完成验证")),
        (b"verify you are human", b"verify you are a human", b"verifying you are human",
         b"are you a robot", b"just a moment", b"checking your browser",
         b"checking if the site connection is secure", b"ddos protection"),
    ),
)  # fmt: skip


def _marker(body: bytes, lowered: bytes) -> str | None:
    for reason, chinese, ascii_words in _MARKERS:
        if any(w in body for w in chinese) or any(w in lowered for w in ascii_words):
            return reason
    return None


_PARSER = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True)
_XP_TEXT = etree.XPath(
    "//text()[not(ancestor::script or ancestor::style or ancestor::noscript or ancestor::template)]"
)
_SPACE = re.compile(r"\s+")


def visible_text(body: bytes, content_type: str | None = None) -> str:
    """The text a browser without scripts shows of ``body``: script, style, noscript and
    template content left out, white space collapsed ("" for what does not parse)."""
    try:
        text, _ = decode_html(body, content_type)
        root = etree.fromstring(text.encode("utf-8"), _PARSER)
    except (ExtractionError, ValueError, etree.ParserError, etree.XMLSyntaxError):
        return ""
    if root is None:
        return ""
    return _SPACE.sub(" ", "".join(_XP_TEXT(root))).strip()


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return ""


def _is_html(content_type: str) -> bool:
    return not content_type or "html" in content_type.lower()


def challenge_reason(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    shells_expected: bool = False,
) -> str | None:
    """The reason ``(status, headers, body)`` is an anti-bot challenge, or None.

    - a status of :data:`CHALLENGE_STATUSES` with a cookie or reload script, or a
      verification, captcha or rate-limit marker, and little visible text: that status's
      reason (``js_cookie_521``, ``http_412_script``...);
    - a 2xx HTML page of at most :data:`VERIFY_TEXT_MAX` visible characters naming an
      anti-bot service (``__jsl_clearance``, ``acw_sc__v2``, Cloudflare's challenge) or a
      verification: ``verify_page``; a captcha: ``captcha``; a 访问过于频繁 notice:
      ``rate_limited``;
    - a 2xx HTML page of at most :data:`SHELL_TEXT_MAX` visible characters whose script
      sets a cookie or reloads the page: ``script_shell``, unless ``shells_expected`` (a
      site whose articles are script shells by design: a row with ``render`` or
      ``json_path``).

    ``headers`` is any mapping of header names (any case) to values.
    """
    if len(body) > MAX_CHALLENGE_BYTES or not body:
        return None
    content_type = _header(headers, "content-type")
    on_error = status in CHALLENGE_STATUSES
    if not on_error and not (200 <= status < 300 and _is_html(content_type)):
        return None
    # ASCII markers in the lower-cased body; Chinese ones in the raw bytes (lower-casing
    # could change a GBK trail byte)
    lowered = body.lower()
    service = any(w in lowered for w in _SERVICE)
    marker = _marker(body, lowered)
    cookie = b"cookie" in lowered and _COOKIE.search(lowered) is not None
    located = b"location" in lowered
    if on_error:
        scripted = cookie or (located and _RELOAD.search(lowered) is not None)
        if not (scripted or service or marker):
            return None
        text = visible_text(body, content_type or None)
        return CHALLENGE_STATUSES[status] if len(text) <= VERIFY_TEXT_MAX else None
    shell = not shells_expected and (
        cookie or (located and _SELF_RELOAD.search(lowered) is not None)
    )
    if not (service or marker or shell):
        return None
    text = visible_text(body, content_type or None)
    if (service or marker) and len(text) <= VERIFY_TEXT_MAX:
        return marker or "verify_page"
    if shell and len(text) <= SHELL_TEXT_MAX:
        return "script_shell"
    return None


# -- cookies a script sets --------------------------------------------------------------------

_ASSIGN = re.compile(r"document\s*\.\s*cookie\s*=(?!=)\s*", re.I)
_LITERAL = re.compile(r"""\s*(\(\s*)*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')(\s*\))*\s*""")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
#: What may end the assignment: a statement end, a comma, the end of the script.
_END = re.compile(r"\s*(?:;|,|</script|$|\n|\})", re.I)


def _unescape(literal: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xu" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, code)

    return _ESCAPE.sub(one, literal[1:-1])


def _literal_sum(text: str, start: int) -> str | None:
    """The value of ``'a' + ("b") + 'c'`` at ``text[start:]`` when the expression is
    nothing but string literals joined by ``+`` (parentheses allowed), else None."""
    parts: list[str] = []
    pos = start
    while True:
        m = _LITERAL.match(text, pos)
        if m is None or m.group(0).count("(") != m.group(0).count(")"):
            return None
        parts.append(_unescape(m.group(2)))
        pos = m.end()
        if pos < len(text) and text[pos] == "+":
            pos += 1
            continue
        return "".join(parts) if _END.match(text, pos) else None


def script_cookies(body: bytes | str) -> dict[str, str]:
    """``{name: value}`` of the cookies ``body``'s scripts set by a plain assignment of
    string literals; attributes (``path``, ``max-age``...) are dropped. Anything computed
    is left out, never evaluated."""
    text = body if isinstance(body, str) else body.decode("utf-8", "replace")
    cookies: dict[str, str] = {}
    for m in _ASSIGN.finditer(text):
        value = _literal_sum(text, m.end())
        if not value:
            continue
        pair = value.split(";", 1)[0].strip()
        name, sep, cookie = pair.partition("=")
        name = name.strip()
        if sep and _TOKEN.match(name):
            cookies[name] = cookie.strip()
    return cookies
