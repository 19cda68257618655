"""Anti-bot challenge pages: told from articles, retried, never stored.

1. The pure detector (:func:`newsspider.extraction.challenge.challenge_reason`): no real
   page of ``../shared/datasets`` is taken for a challenge, at any of the statuses
   challenges come with; synthetic pages modelled on the real ones (加速乐's 521 cookie
   script, 瑞数's 412, Aliyun's ``acw_sc__v2``, Cloudflare's "Just a moment", a 200
   访问过于频繁 notice, a 滑动验证 page, a script shell) each get their reason; the
   literal-cookie reader never evaluates anything.
2. Real crawls of a local server: a 521 cookie challenge on one article in three, cleared
   with the cookie its script sets (every article stored, challenges counted); a 200
   verification page before the article; a site whose every article is a challenge ends
   ``blocked`` (exit status 6, ``crawl_runs.status``, one summary line).
3. The verdict and the nightly report from hand-made stats.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from newsspider.extraction import extract_article
from newsspider.extraction.challenge import challenge_reason, script_cookies
from newsspider.nightly.report import (
    FAILED,
    SiteRun,
    blocked_warning,
    classify,
    exit_status,
    nightly_report,
)
from newsspider.outcome import EXIT_BLOCKED, EXIT_NOTHING_FETCHED, EXIT_OK, crawl_outcome
from tests.localserver import (
    REPO,
    Page,
    article_html,
    links_page,
    run_crawl,
    sequence,
    serve,
)

HTML = {"Content-Type": "text/html; charset=utf-8"}

# -- synthetic challenges, modelled on real ones ------------------------------------------------

#: 加速乐 (Knownsec), first answer: 521, a cookie of string literals, then a reload.
JSL_521 = (
    b"<html><body><script>document.cookie=('_')+('_')+('j')+('s')+('l')+('_')+('c')+('l')"
    b"+('e')+('a')+('r')+('a')+('n')+('c')+('e')+('_')+('s')+('=')+('1700000000.123|-1|')"
    b"+('Qx3y%2BkX0k4F1%3D')+(';max-age=3600;path=/');location.href=location.pathname"
    b"+location.search</script></body></html>"
)
#: 加速乐, second answer: the cookie computed by an obfuscated script (nothing to read).
JSL_521_OBFUSCATED = (
    b'<script>var _0x5c3a=["\\x63\\x6f\\x6f\\x6b\\x69\\x65"];function go(_0x1){var _0x2='
    b"_0x1.bts[0]+hash(_0x1.chars)+_0x1.bts[1];document.cookie=_0x1.tn+'='+_0x2+';Max-age='"
    b"+_0x1.vt+'; path = /';location.href=location.pathname+location.search}"
    b'go({"bts":["1700000000.2|0|abc","%3D"],"chars":"xyz","ct":"e1","ha":"sha1",'
    b'"tn":"__jsl_clearance_s","vt":"3600","wt":"1500"})</script>'
)
#: 瑞数 (Ruishu): 412, a meta and the loader of the script that sets the cookie.
RUISHU_412 = (
    b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">'
    b'<meta id="9DhefwqGPrzGxEp9hPaoag" content="f3Zq1sAF">'
    b"<script type=\"text/javascript\" r='m'>$_ts=window['$_ts'];if(!$_ts)$_ts={};"
    b'$_ts.nsd=12345;$_ts.cd="qDxcrAlqW1EqrGAEqqqqqq";</script>'
    b'<script type="text/javascript" src="/7hfRy0x/c.FxJzG50F.dfe1675.js" r=\'m\'></script>'
    b"</head><body></body></html>"
)
#: Aliyun WAF: 200, ``arg1`` and an obfuscated script computing ``acw_sc__v2``.
ACW_200 = (
    b"<html><script>\nvar arg1='3A6C4A7B1E2F0D9C8B7A6F5E4D3C2B1A0F9E8D7C';\n"
    b"var _0x4818=['\\x63\\x73\\x6b\\x5a','\\x72\\x65\\x6c\\x6f\\x61\\x64'];\n"
    b"var l=function(){var x=arg1.split('');return x.reverse().join('');};\n"
    b"function setCookie(name,value){var expiredate=new Date();expiredate.setTime("
    b'expiredate.getTime()+(3600*1000));document.cookie=name+"="+value+";expires="+'
    b'expiredate.toGMTString()+";max-age=3600;path=/";}\n'
    b'function reload(x){setCookie("acw_sc__v2",x);document.location.reload();}\n'
    b"reload(l());</script></html>"
)
#: Cloudflare's managed challenge ("Just a moment..."), 403 or 503.
CLOUDFLARE = (
    b'<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>'
    b'<meta http-equiv="refresh" content="390"><script>(function(){window._cf_chl_opt={'
    b"cvId: '3',cZone: \"news.example.com\",cType: 'managed',cNounce: '41425'};"
    b"var cpo=document.createElement('script');cpo.src='/cdn-cgi/challenge-platform/h/g/"
    b"orchestrate/chl_page/v1?ray=8a1b2c3d4e5f6a7b';document.getElementsByTagName('head')[0]"
    b'.appendChild(cpo);}());</script></head><body><div class="main-wrapper" role="main">'
    b'<h1 class="zone-name-title h1">news.example.com</h1><h2 class="h2" id="challenge-running">'
    b'Checking if the site connection is secure</h2><noscript><div id="challenge-error-title">'
    b'Enable JavaScript and cookies to continue</div></noscript><div id="challenge-body-text">'
    b"news.example.com needs to review the security of your connection before proceeding."
    b'</div><div class="ray-id">Ray ID: <code>8a1b2c3d4e5f6a7b</code></div><div>Performance '
    b'&amp; security by <a href="https://www.cloudflare.com">Cloudflare</a></div></div>'
    b"</body></html>"
)
#: A 200 "访问过于频繁" notice, in GBK as the portal serves it.
RATE_LIMITED = (
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gbk">'
    "<title>提示信息</title></head><body><div class='box'><h3>系统提示</h3>"
    "<p>您的访问过于频繁，请稍后再试。</p><a href='/'>返回首页</a></div></body></html>"
).encode("gbk")
#: A 200 滑动验证 page (Aliyun's slider).
SLIDER = (
    '<html><head><meta charset="utf-8"><title>安全验证</title>'
    '<script src="//g.alicdn.com/sd/nch5/index.js?t=2015052012"></script></head><body>'
    '<div class="wrap"><p>为保证您的正常访问，请进行如下验证：</p><div id="nc_1_wrapper">'
    '<span class="nc-lang-cnt">请按住滑块，拖动到最右边</span></div></div></body></html>'
).encode()
#: A 200 page that is nothing but a script setting a cookie and reloading.
SHELL = (
    b"<html><head><script>var t='a1b2';document.cookie=\"sec_token=a1b2c3; path=/\";"
    b"window.location.reload();</script></head><body></body></html>"
)

SYNTHETIC = [
    ("jsl 521", 521, JSL_521, "js_cookie_521"),
    ("jsl 521 obfuscated", 521, JSL_521_OBFUSCATED, "js_cookie_521"),
    ("ruishu 412", 412, RUISHU_412, "http_412_script"),
    ("aliyun acw_sc__v2", 200, ACW_200, "verify_page"),
    ("cloudflare 403", 403, CLOUDFLARE, "http_403_script"),
    ("cloudflare 503", 503, CLOUDFLARE, "http_503_script"),
    ("cloudflare 200", 200, CLOUDFLARE, "verify_page"),
    ("rate limited 200", 200, RATE_LIMITED, "rate_limited"),
    ("rate limited 429", 429, RATE_LIMITED, "http_429"),
    ("slider 200", 200, SLIDER, "captcha"),
    ("script shell 200", 200, SHELL, "script_shell"),
]


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [case[1:] for case in SYNTHETIC],
    ids=[case[0] for case in SYNTHETIC],
)
def test_synthetic_challenges_get_their_reason(status, body, reason):
    assert challenge_reason(status, HTML, body) == reason


def test_not_challenges():
    # plain error pages, a redirect shell off to another page, a bare 429
    assert challenge_reason(404, HTML, JSL_521) is None
    assert challenge_reason(503, HTML, b"<html><body>Service Unavailable</body></html>") is None
    assert challenge_reason(429, {}, b"") is None
    elsewhere = b"<html><script>location.href='https://m.example.com/a/1.html'</script></html>"
    assert challenge_reason(200, HTML, elsewhere) is None
    # a feed is never a challenge page, whatever it says
    assert challenge_reason(200, {"Content-Type": "application/rss+xml"}, RATE_LIMITED) is None
    # a site whose articles are script shells by design (render / json_path rows)
    assert challenge_reason(200, HTML, SHELL, shells_expected=True) is None
    # an article that has a login box with 验证码 and an analytics cookie
    paragraphs = [f"第{k}段：记者从有关部门获悉，这项工作正在有序推进，相关配套措施陆续出台。" * 3
                  for k in range(8)]  # fmt: skip
    extra = ("<form><label>验证码</label><input name='captcha'></form>"
             "<script>document.cookie='uid=1; path=/';</script>")  # fmt: skip
    page = article_html(1, paragraphs, extra=extra).encode()
    for status in (200, 403, 521):
        assert challenge_reason(status, HTML, page) is None


def test_a_body_over_the_size_gate_is_not_read():
    big = SLIDER + b"<!--" + b"x" * (300 * 1024) + b"-->"
    assert challenge_reason(200, HTML, big) is None


def test_script_cookies_reads_literals_only():
    assert script_cookies(JSL_521) == {"__jsl_clearance_s": "1700000000.123|-1|Qx3y%2BkX0k4F1%3D"}
    assert script_cookies(SHELL) == {"sec_token": "a1b2c3"}
    assert script_cookies(b"<script>document.cookie = 'k=' + \"v\\x41\";</script>") == {"k": "vA"}
    # computed values are never evaluated
    assert script_cookies(JSL_521_OBFUSCATED) == {}
    assert script_cookies(ACW_200) == {}
    assert script_cookies(b"<script>document.cookie='a=' + x + ';path=/'</script>") == {}
    assert script_cookies(b"<script>if (document.cookie=='a=b') go()</script>") == {}


def test_no_page_of_the_datasets_is_a_challenge(datasets: Path):
    pages = sorted(p for p in datasets.rglob("*") if p.suffix in (".html", ".htm"))
    assert len(pages) > 600
    flagged = []
    for path in pages:
        body = path.read_bytes()
        for status in (200, 521):
            if reason := challenge_reason(status, HTML, body):
                flagged.append((path.relative_to(datasets), status, reason))
    assert flagged == []


@pytest.mark.parametrize(
    "body",
    [ACW_200, CLOUDFLARE, RATE_LIMITED, SLIDER],
    ids=["aliyun", "cloudflare", "rate limited", "slider"],
)
def test_a_verification_page_extracted_is_of_kind_blocked(body):
    """A page that reaches extraction without the middleware (a replayed or backfilled
    capture, reextract, scrapy extract) is of kind blocked, which is never stored."""
    assert extract_article(body, "https://news.example.cn/a/1.html").kind == "blocked"


def test_no_page_of_the_datasets_is_extracted_as_blocked(datasets: Path):
    blocked = []
    for cases in sorted(datasets.glob("*/cases.jsonl")):
        for line in cases.read_text("utf-8").splitlines():
            case = json.loads(line)
            raw = (cases.parent / case["html_file"]).read_bytes()
            if extract_article(raw, case["url"]).kind == "blocked":
                blocked.append(case["id"])
    assert blocked == []


# -- real crawls --------------------------------------------------------------------------------

SUMMARY_EXTENSIONS = json.dumps(
    {"tests.localserver.StatsToFile": 0, "newsspider.extensions.CrawlSummary": 520}
)
QUICK = ("CHALLENGE_BACKOFF=0.05", f"EXTENSIONS={SUMMARY_EXTENSIONS}")


def jsl_article(n: int):
    """Article ``n`` behind a 加速乐-style 521: the page only once the cookie its script
    set (one value per article) comes back."""
    token = f"ok{n}"
    challenge = (
        f"<html><body><script>document.cookie=('__jsl_clearance_s=')+('{token}')"
        "+(';max-age=3600;path=/');location.href=location.pathname+location.search"
        "</script></body></html>"
    ).encode()

    def route(handler) -> None:
        cookies = handler.headers.get("Cookie") or ""
        if f"__jsl_clearance_s={token}" in cookies:
            handler.send_page(Page(article_html(n).encode()))
        else:
            handler.send_page(Page(challenge, 521))

    return route


def summary(log: str) -> str:
    found = re.findall(r"\[newsspider\.extensions\] \w+: (local: .*)$", log, re.M)
    assert len(found) == 1, log[-3000:]
    return found[0]


def stored_urls(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {url for (url,) in conn.execute("SELECT url FROM articles")}


def test_a_521_cookie_challenge_is_cleared_with_its_cookie(tmp_path: Path):
    n = 9
    routes = {"/": Page(links_page(*(f"/article/{k}.html" for k in range(n))))}
    for k in range(n):
        routes[f"/article/{k}.html"] = (
            jsl_article(k) if k % 3 == 0 else Page(article_html(k).encode())
        )
    db = tmp_path / "corpus.db"
    with serve(routes) as server:
        result = run_crawl(server, tmp_path, f"sqlite:///{db}", *QUICK)
    assert stored_urls(db) == {f"{server.base}/article/{k}.html" for k in range(n)}
    assert result.stat("newsspider/challenged/local") == 3
    assert result.stat("newsspider/challenge_reason/js_cookie_521") == 3
    assert result.stat("newsspider/challenge_cookies/local") == 3
    assert result.stat("newsspider/challenge_cleared/local") == 3
    assert result.stat("newsspider/challenge_gave_up/local") == 0
    assert not any(k.startswith("newsspider/fetch_failed") for k in result.stats)
    assert result.stat("newsspider/exit_status") == EXIT_OK
    # the retry carried the cookie; the first try did not
    tries = [s for s in result.seen if s.path == "/article/3.html"]
    assert len(tries) == 2 and "Cookie" not in tries[0].headers
    assert "__jsl_clearance_s=ok3" in tries[1].headers["Cookie"]
    line = summary(result.log)
    assert "9 articles stored" in line and "3 challenged (js_cookie_521 3), 0 given up" in line


def test_a_200_verification_page_then_the_article(tmp_path: Path):
    n = 4
    routes = {"/": Page(links_page(*(f"/article/{k}.html" for k in range(n))))}
    for k in range(n):
        routes[f"/article/{k}.html"] = sequence(Page(SLIDER), Page(article_html(k).encode()))
    db = tmp_path / "corpus.db"
    with serve(routes) as server:
        result = run_crawl(server, tmp_path, f"sqlite:///{db}", *QUICK)
    assert stored_urls(db) == {f"{server.base}/article/{k}.html" for k in range(n)}
    with sqlite3.connect(db) as conn:
        texts = [t for (t,) in conn.execute("SELECT title FROM articles")]
    assert all("验证" not in t for t in texts), texts
    assert result.stat("newsspider/challenge_reason/captcha") == n
    assert result.stat("newsspider/challenge_cleared/local") == n
    assert "4 challenged (captcha 4), 0 given up" in summary(result.log)


SITE_ROW = """\
[local]
source = '本地新闻'
allowed_domains = ['127.0.0.1']
start_urls = ['{base}/']
article_patterns = ['^https?://[^/]+/article/[\\w.-]+\\.html']
list_patterns = ['^https?://[^/]+/$']
"""


def test_a_site_answering_only_challenges_ends_blocked(tmp_path: Path):
    n = 6
    routes: dict = {"/": Page(links_page(*(f"/article/{k}.html" for k in range(n))))}
    for k in range(n):  # a cookie no plain script gives, and a verification page
        routes[f"/article/{k}.html"] = (
            Page(JSL_521_OBFUSCATED, 521) if k % 3 else Page(CLOUDFLARE, 200)
        )
    db = tmp_path / "corpus.db"
    sites = tmp_path / "sites.toml"
    with serve(routes) as server:
        sites.write_text(SITE_ROW.format(base=server.base), "utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy.cmdline", "crawl", "local",
             "-s", f"SITES_FILE={sites}", "-s", f"DATABASE_URL=sqlite:///{db}",
             "-s", "CHALLENGE_BACKOFF=0.05", "-s", "CHALLENGE_RETRIES=1",
             "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False",
             "-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=INFO"],
            cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        seen = server.paths()
    assert proc.returncode == EXIT_BLOCKED, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert seen.count("/article/1.html") == 2  # one retry (CHALLENGE_RETRIES=1)
    line = summary(proc.stderr)
    assert line.endswith(
        "exit status 6: blocked: 6 of 6 article fetches answered with anti-bot challenges "
        "(js_cookie_521 4, verify_page 2)"
    ), line
    gave_up = re.findall(r"WARNING: anti-bot challenge \((\w+)\) still there", proc.stderr)
    assert sorted(gave_up) == ["js_cookie_521"] * 4 + ["verify_page"] * 2
    assert "fetch failed" not in proc.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM articles").fetchone() == (0,)
        status, exit_code, text = conn.execute(
            "SELECT status, exit_status, summary FROM crawl_runs"
        ).fetchone()
    assert (status, exit_code) == ("blocked", EXIT_BLOCKED)
    assert "blocked: 6 of 6 article fetches" in text


# -- the verdict and the report from stats ------------------------------------------------------


def challenged_stats(found: int, gave_up: dict[str, int], *, articles: bool = True) -> dict:
    stats: dict = {
        "newsspider/articles_found/x": found,
        "newsspider/articles_new/x": 0,
        "newsspider/articles_new": found,
        "downloader/response_status_count/200": found + 1,
    }
    for reason, count in gave_up.items():
        stats[f"newsspider/challenge_reason/{reason}"] = count
        stats[f"newsspider/challenge_gave_up_reason/{reason}"] = count
    total = sum(gave_up.values())
    stats["newsspider/challenged/x"] = stats["newsspider/challenge_gave_up/x"] = total
    if articles:
        stats["newsspider/challenge_gave_up_articles/x"] = total
    return stats


def test_blocked_needs_most_article_fetches_challenged_and_little_stored():
    blocked = crawl_outcome("x", challenged_stats(2, {"js_cookie_521": 38, "verify_page": 2}))
    assert blocked.status == EXIT_BLOCKED
    assert blocked.meaning == (
        "blocked: 40 of 42 article fetches answered with anti-bot challenges "
        "(js_cookie_521 38, verify_page 2)"
    )
    assert crawl_outcome("x", challenged_stats(30, {"http_412_script": 10})).status == EXIT_OK
    # the start page itself challenged: no article reached
    home = crawl_outcome("x", challenged_stats(0, {"js_cookie_521": 1}, articles=False))
    assert home.status == EXIT_BLOCKED and "no article reached" in home.meaning
    assert crawl_outcome("x", {}).status == EXIT_NOTHING_FETCHED


def test_the_nightly_report_names_a_blocked_site():
    detail = crawl_outcome("x", challenged_stats(0, {"js_cookie_521": 5})).blocked_detail()
    outcome, note = classify(
        error=None, finish_reason="finished", crawl_status="blocked", pages_ok=1,
        resumed=False, blocked=detail,
    )  # fmt: skip
    assert outcome == FAILED and note == detail
    run = SiteRun(site="x", outcome=outcome, note=note, finish_reason="finished")
    assert exit_status([run]) == EXIT_BLOCKED
    warning = blocked_warning(run)
    assert warning and warning.startswith("WARNING x: blocked: 5 of 5 article fetches")
    text = nightly_report(
        [run], {}, nightly_run_id=1, host="h", started_at=None, finished_at=None,
        exit_code=EXIT_BLOCKED,
    )  # fmt: skip
    assert warning in text.splitlines()
