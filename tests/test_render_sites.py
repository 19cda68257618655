"""Sites whose article text appears only after scripts run (issue 25 item 6).

Two fictional outlets in no file, replayed from WARC archives built here:

* **a Next.js-like site** (``nextdaily``): its article pages are shells (a "加载中" notice)
  with the article in ``<script id="__NEXT_DATA__" type="application/json">``;
  ``addsite`` must write ``json_path``, and the crawl store each body from that JSON;
* **an inline-script site** (``scriptdaily``): its article pages build headline, time and
  paragraphs with ``document.write`` and DOM calls from a JS string; ``addsite`` must
  write ``render = true`` (Chromium renders two samples), and the crawl render every
  article page before extracting it. Skipped without Chromium.

Both through the real commands in subprocesses. Then the crawl side in process: a render
site without Chromium drops its pages with one warning and a count; rendering waits in the
render thread, never in the loop; a row's ``encoding`` is the charset of responses that
name none; ``json_path`` is read in the page's charset. Last, the renderer's DOM reading
(``Renderer.html``): inline scripts run, nothing is fetched, a page that hangs is killed.
"""

from __future__ import annotations

import asyncio
import html as html_lib
import http.server
import json
import logging
import random
import re
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from warcio.warcwriter import WARCWriter

from newsspider.extraction.render import (
    Renderer,
    RenderTimeout,
    chromium_processes,
    unavailable_reason,
)
from newsspider.items import ArticleItem
from newsspider.pipelines import extract as ex
from newsspider.pipelines.extract import ExtractionPipeline, RenderUnavailable
from newsspider.replay import write_response_record
from newsspider.sites import SITES, Site, read_sites_file
from newsspider.storage.models import unpack_text
from newsspider.workers import extract_page, site_headers

REPO = Path(__file__).resolve().parents[1]
FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False")
HTML = (("Content-Type", "text/html; charset=utf-8"),)
ARTICLES = 10

# Sentences of the fictional outlets' reports (written for these tests); each article
# draws its own paragraphs from them, so no line repeats across a site's pages.
SENTENCES = [
    "本市今年启动的老旧小区改造工程已进入收尾阶段，居民普遍反映出行更加方便",
    "据市住房和城乡建设局介绍，全年计划改造小区一百二十个，惠及居民约三万户",
    "改造内容包括更换供水管网、加装电梯、整治停车秩序以及增设无障碍设施",
    "不少老年居民表示，加装电梯后上下楼不再是难题，生活质量明显提高",
    "施工单位在工期安排上尽量避开居民休息时间，并设立了专门的意见收集点",
    "专家认为，城市更新应当坚持以人为本，把居民的实际需求放在首位",
    "今年上半年，全市社会消费品零售总额同比增长百分之六点八，增速好于预期",
    "其中，新能源汽车、智能家电和绿色建材等商品的销售额增长尤为明显",
    "商务部门负责人表示，下半年将继续举办各类促消费活动，进一步释放消费潜力",
    "夜间经济成为拉动消费的新亮点，多个商圈的夜间客流量同比增长两成以上",
    "气象部门预计，未来一周本地将以多云天气为主，局部地区可能出现短时强降雨",
    "农业部门提醒各地做好田间排水工作，防止强降雨对夏粮收购造成不利影响",
    "在刚刚结束的全省中学生运动会上，本市代表团共获得金牌二十三枚，创历史最好成绩",
    "教练组表示，队员们平时训练刻苦，这次比赛充分展现了青少年体育的发展成果",
    "市图书馆新馆将于下月正式对外开放，馆内设有少儿阅读区和数字体验区",
    "新馆藏书规模预计达到两百万册，并将提供全天候自助借还服务",
    "文化部门还计划在新馆举办系列讲座和展览，丰富市民的精神文化生活",
    "本地一家科技企业研发的智能巡检机器人已在多个变电站投入使用",
    "该机器人可以自动识别设备异常，并将检测数据实时传回监控中心",
    "企业负责人介绍，产品研发历时三年，核心部件全部实现自主设计",
    "卫生健康部门提醒，夏季是肠道传染病高发季节，市民应注意饮食卫生",
    "医院专家建议，外出就餐要选择卫生条件良好的餐馆，生熟食品要分开存放",
    "全市已建成社区卫生服务中心八十余家，基本实现十五分钟就医圈",
    "交通部门发布消息，地铁新线路的试运行工作将于本月底启动",
    "新线路全长约二十八公里，设站二十一座，将有效缓解城市东部的交通压力",
    "试运行期间，运营单位将对列车、信号和供电等系统进行全面测试",
    "生态环境部门数据显示，今年以来全市空气质量优良天数比例持续上升",
    "河道整治工程完成后，沿岸新建的滨水步道成为市民休闲散步的好去处",
    "志愿者们利用周末时间开展垃圾分类宣传，引导居民养成良好习惯",
    "社区工作人员表示，将继续完善配套设施，让居民生活更加便利舒适",
]


@dataclass
class FakeSite:
    """One fictional outlet in a replay archive: its home page, article URLs and texts."""

    key: str
    home: str
    #: url -> (title, time, paragraphs)
    articles: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)

    @property
    def article_urls(self) -> list[str]:
        return list(self.articles)


def article_text(n: int, seed: str) -> tuple[str, list[str]]:
    """A headline and four paragraphs (300+ Chinese characters) of article ``n``."""
    rng = random.Random(f"{seed}-{n}")
    picked = rng.sample(SENTENCES, 12)
    paragraphs = [
        f"第{n}号报道：" + "，".join(picked[0:3]) + "。",
        "，".join(picked[3:6]) + "。",
        "，".join(picked[6:9]) + "。",
        "，".join(picked[9:12]) + "。",
    ]
    title = picked[0].split("，")[0][:18] + f"（{n}）"
    return title, paragraphs


def _home_page(site: FakeSite, name: str) -> bytes:
    items = "".join(
        f'<li><a href="{url}">{html_lib.escape(title)}</a></li>'
        for url, (title, _, _) in site.articles.items()
    )
    return (
        f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">'
        f"<title>{name} - 首页</title>"
        f'</head><body><h1>{name}</h1><ul class="news">{items}</ul>'
        f'<p class="foot"><a href="{site.home}about.html">关于我们</a></p></body></html>'
    ).encode()


def _script_json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def next_article(title: str, when: str, paragraphs: list[str], name: str, n: int) -> bytes:
    """A Next.js-like shell: the article only in ``__NEXT_DATA__``."""
    data = {
        "props": {
            "pageProps": {
                "article": {
                    "id": n,
                    "title": title,
                    "publishedAt": when,
                    "content": "".join(f"<p>{p}</p>" for p in paragraphs),
                }
            }
        },
        "page": "/news/[id]",
        "query": {"id": str(n)},
        "buildId": "b8f2c1",
    }
    return (
        f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">'
        f"<title>{title}_{name}</title>"
        f'<meta property="article:published_time" content="{when}">'
        f'<script src="/_next/static/chunks/main.js" defer></script></head>'
        f'<body><div id="__next"><div class="loading">加载中…</div></div>'
        f'<script id="__NEXT_DATA__" type="application/json">{_script_json(data)}</script>'
        f"</body></html>"
    ).encode()


def script_article(title: str, when: str, paragraphs: list[str], name: str, n: int) -> bytes:
    """A page whose scripts write the article: headline and time with ``document.write``,
    paragraphs with DOM calls, all from one JS string."""
    packed = _script_json("\u241e".join([title, when, *paragraphs]))
    script = (
        f"var parts = {packed}.split('\\u241e');"
        "document.write('<h1 class=\"headline\">' + parts[0] + '</h1>');"
        "document.write('<p class=\"time\">发布时间：' + parts[1] + '</p>');"
        "var box = document.createElement('div'); box.className = 'article-body';"
        "for (var i = 2; i < parts.length; i++) {"
        "  var p = document.createElement('p'); p.appendChild(document.createTextNode(parts[i]));"
        "  box.appendChild(p); }"
        "document.getElementById('main').appendChild(box);"
    )
    return (
        f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">'
        f"<title>{title}-{name}</title></head><body>"
        f'<div class="nav"><a href="/">首页</a></div><div id="main">'
        f"<script>{script}</script></div>"
        f'<div class="foot">版权所有</div></body></html>'
    ).encode()


def build_site(path: Path, kind: str, articles: int = ARTICLES) -> FakeSite:
    """A replay archive of one fictional outlet: ``next`` (JSON shells) or ``script``,
    its home page linking ``articles`` article pages (benchmarks/render_speed.py too)."""
    if kind == "next":
        site, name, build = (
            FakeSite("nextdaily", "https://www.nextdaily-demo.cn/"),
            "未来日报",
            next_article,
        )
    else:
        site, name, build = (
            FakeSite("scriptdaily", "https://www.scriptdaily-demo.cn/"),
            "脚本晚报",
            script_article,
        )
    pages: dict[str, bytes] = {}
    for n in range(1, articles + 1):
        title, paragraphs = article_text(n, kind)
        day = f"2024-05-{(n - 1) % 28 + 1:02d}"
        when = f"{day}T08:30:00+08:00" if kind == "next" else f"{day} 08:30"
        url = f"{site.home}news/{100234 + 17 * n}"
        site.articles[url] = (title, when, paragraphs)
        pages[url] = build(title, when, paragraphs, name, n)
    pages[site.home] = _home_page(site, name)
    pages[f"{site.home}about.html"] = (
        f"<html><head><title>关于我们</title></head><body><p>{name}简介。</p></body></html>"
    ).encode()
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        write_response_record(
            writer,
            f"{site.home}robots.txt",
            b"User-agent: *\nAllow: /\n",
            (("Content-Type", "text/plain"),),
        )
        for url, body in pages.items():
            write_response_record(writer, url, body, HTML)
    return site


def scrapy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def stored_bodies(db: Path, key: str) -> dict[str, tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT url, title, published, raw_text FROM articles WHERE site = ?", (key,)
        ).fetchall()
    return {url: (title, published, unpack_text(text)) for url, title, published, text in rows}


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


def addsite_then_crawl(tmp_path: Path, kind: str, *extra: str) -> tuple[FakeSite, Site, str, dict]:
    warc = tmp_path / f"{kind}.warc.gz"
    site = build_site(warc, kind)
    sites_file = tmp_path / "sites.toml"
    db = tmp_path / "corpus.db"
    common = ("-s", f"REPLAY_ARCHIVE={warc}", "-s", f"SITES_FILE={sites_file}", *FAST)
    out = scrapy(
        "addsite", site.home, "--key", site.key, "--write", *common, "-s", "EXTRACTION_WORKERS=0"
    )
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert f"wrote [{site.key}]" in out.stdout
    row = read_sites_file(sites_file)[site.key]
    assert all(row.is_article(u) for u in site.article_urls), (row.article_patterns, out.stdout)
    assert not row.is_article(f"{site.home}about.html")
    crawl = scrapy("crawl", site.key, *common, "-s", f"DATABASE_URL=sqlite:///{db}", *extra)
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    return site, row, out.stdout, stored_bodies(db, site.key)


def test_nextjs_shells_get_json_path_and_the_crawl_reads_it(tmp_path: Path) -> None:
    # one extraction worker process: the json_path travels with the job
    site, row, report, stored = addsite_then_crawl(tmp_path, "next", "-s", "EXTRACTION_WORKERS=1")
    assert row.json_path == "props.pageProps.article.content", report
    assert not row.render
    assert "script shells" in report and "json_path" in report, report
    assert re.search(r"\[article\] \d+ links", report), report
    assert set(stored) == set(site.article_urls), stored.keys()
    for url, (title, when, paragraphs) in site.articles.items():
        got_title, published, text = stored[url]
        assert got_title and title in got_title
        assert published and published.startswith(when[:10])
        for p in paragraphs:
            assert _flat(p) in _flat(text), (url, text)
        assert "加载中" not in text


@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_inline_script_pages_get_render_and_the_crawl_renders_them(tmp_path: Path) -> None:
    site, row, report, stored = addsite_then_crawl(tmp_path, "script", "-s", "EXTRACTION_WORKERS=0")
    assert row.render, report
    assert row.json_path is None
    assert "script shells" in report and "render" in report, report
    assert "rendered with JavaScript" in report, report
    assert set(stored) == set(site.article_urls), stored.keys()
    for url, (title, when, paragraphs) in site.articles.items():
        got_title, published, text = stored[url]
        assert got_title and title in got_title
        assert published and published.startswith(when[:10])
        for p in paragraphs:
            assert _flat(p) in _flat(text), (url, text)


# --------------------------------------------------------------------------
# The crawl side, in process


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count

    def set_value(self, key: str, value: Any) -> None:
        self.values[key] = value


def _row(key: str, **fields: Any) -> Site:
    return Site(
        key=key,
        source="测试",
        allowed_domains=("example-render.cn",),
        start_urls=("https://www.example-render.cn/",),
        article_patterns=(r"^https?://www\.example-render\.cn/news/\d+",),
        **fields,
    )


def _item(body: bytes, key: str, n: int = 1, headers: dict[str, str] | None = None) -> ArticleItem:
    return ArticleItem(
        url=f"https://www.example-render.cn/news/{n}",
        site=key,
        source="测试",
        html=body,
        headers={"Content-Type": "text/html; charset=utf-8"} if headers is None else headers,
        fetched_at=datetime.now(UTC),
    )


def _run(pipe: ExtractionPipeline, *items: ArticleItem) -> list[Any]:
    async def main() -> list[Any]:
        return await asyncio.gather(*(pipe.process_item(i) for i in items), return_exceptions=True)

    pipe.open_spider()
    try:
        return asyncio.run(main())
    finally:
        pipe.close_spider()


def test_render_site_without_chromium_is_dropped_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(SITES, "rendertest", _row("rendertest", render=True))
    monkeypatch.setattr(ex, "unavailable_reason", lambda: "no Chromium at /usr/bin/chromium")
    title, paragraphs = article_text(1, "script")
    body = script_article(title, "2024-05-01 08:30", paragraphs, "脚本晚报", 1)
    stats = Stats()
    pipe = ExtractionPipeline(stats, "blockstats", workers=0)
    with caplog.at_level(logging.WARNING, logger=ex.__name__):
        out = _run(pipe, *(_item(body, "rendertest", n) for n in range(3)))
    assert all(isinstance(o, RenderUnavailable) for o in out), out
    assert "no Chromium" in str(out[0]) and out[0].log_level == "DEBUG"
    assert stats.values["newsspider/render_unavailable"] == 3
    warnings = [r for r in caplog.records if "render" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "rendertest" in warnings[0].getMessage() and not warnings[0].exc_info


def test_rendering_runs_in_the_render_thread_beside_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A render site's page waits on Chromium in the render thread: the loop keeps ticking
    (downloads go on), and the method then extracts the rendered DOM."""
    title, paragraphs = article_text(2, "script")
    shell = script_article(title, "2024-05-02 08:30", paragraphs, "脚本晚报", 2)
    rendered = (
        f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
        "<p>2024-05-02 08:30</p>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</body></html>"
    )
    threads: list[str] = []

    def slow_render(html: Any, headers: Any, **kw: Any) -> tuple[str, str]:
        threads.append(threading.current_thread().name)
        time.sleep(0.5)  # what waiting on Chromium looks like to the loop
        return rendered, "utf-8"

    monkeypatch.setitem(SITES, "rendertest", _row("rendertest", render=True))
    monkeypatch.setattr(ex, "unavailable_reason", lambda: None)
    monkeypatch.setattr(ex, "render_page", slow_render)
    pipe = ExtractionPipeline(Stats(), "blockstats", workers=0)

    async def main() -> tuple[Any, int]:
        ticks = 0
        task = asyncio.ensure_future(pipe.process_item(_item(shell, "rendertest")))
        while not task.done():
            await asyncio.sleep(0.01)
            ticks += 1
        return task.result(), ticks

    pipe.open_spider()
    try:
        out, ticks = asyncio.run(main())
    finally:
        pipe.close_spider()
    assert threads and threads[0].startswith("newsspider-render")
    assert ticks >= 20  # ~50 in 0.5 s; 0 if the loop were blocked
    assert out.title == title and out.encoding == "utf-8"
    assert all(_flat(p) in _flat(out.raw_text) for p in paragraphs)


def test_site_encoding_is_the_charset_of_responses_that_name_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert site_headers({"Content-Type": "text/html"}, "big5") == {
        "Content-Type": "text/html; charset=big5"
    }
    assert site_headers({}, "gbk") == {"Content-Type": "text/html; charset=gbk"}
    named = {"Content-Type": "text/html; charset=utf-8"}
    assert site_headers(named, "gbk") is named
    assert site_headers(named, None) is named

    # Big5 bytes with no declaration anywhere, which sniffing takes for GB18030: the
    # row's encoding decides the decode
    title = "中文測試"
    page = (
        f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
        "<p>2024-05-01 08:30</p>" + f"<p>{title * 30}</p>" * 3 + "</body></html>"
    ).encode("big5")
    monkeypatch.setitem(SITES, "big5site", _row("big5site", encoding="big5"))
    monkeypatch.setitem(SITES, "nocharset", _row("nocharset"))
    plain = {"Content-Type": "text/html"}
    with_row, without = _run(
        ExtractionPipeline(Stats(), "blockstats", workers=0),
        _item(page, "big5site", 1, plain),
        _item(page, "nocharset", 2, plain),
    )
    assert with_row.encoding == "big5" and with_row.title == title
    assert title * 30 in _flat(with_row.raw_text)
    assert without.encoding != "big5" and without.title != title  # what the field fixes


def test_json_path_is_read_in_the_pages_charset_and_only_when_longer() -> None:
    title, paragraphs = article_text(3, "next")
    page = next_article(title, "2024-05-03T08:30:00+08:00", paragraphs, "未来日报", 3)
    gbk = page.decode().replace('charset="utf-8"', 'charset="gbk"').encode("gbk")
    path = "props.pageProps.article.content"
    for body, ctype in ((page, "text/html; charset=utf-8"), (gbk, "text/html; charset=gbk")):
        art = extract_page(
            "blockstats", body, "https://x.cn/news/3", {"Content-Type": ctype}, None, {}, path
        )
        assert art.title and title in art.title
        assert all(_flat(p) in _flat(art.text) for p in paragraphs), art.text
    # the method's own body, when longer, stays
    full = (
        f"<html><head><meta charset='utf-8'><title>{title}</title></head><body><h1>{title}</h1>"
        "<p>2024-05-03 08:30</p>"
        + "".join(f"<p>{p}{p}</p>" for p in paragraphs)
        + f"<script type='application/json'>{_script_json({'a': {'b': paragraphs[0]}})}</script>"
        "</body></html>"
    ).encode()
    art = extract_page("blockstats", full, None, None, None, {}, "a.b")
    assert _flat(paragraphs[3]) in _flat(art.text)


# --------------------------------------------------------------------------
# Rendering a page for its DOM: scripts run, the network stays closed, a hang is killed


@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_render_html_runs_inline_scripts_only_and_survives_a_hang() -> None:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/javascript")
            self.end_headers()
            self.wfile.write(b"document.write('<p>FROM-NETWORK</p>');")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    page = (
        "<!DOCTYPE html><html><head><title>t</title></head><body><div id='a'></div>"
        "<script>document.write('<p>写出的段落</p>');"
        "document.getElementById('a').textContent = '节点里的文字';"
        "setTimeout(function () { document.body.appendChild(document.createElement('hr')); }, 0);"
        f"</script><script src='{base}/a.js'></script><img src='{base}/b.png'>"
        f"<script>fetch('{base}/c').catch(function () {{}});</script></body></html>"
    )
    try:
        with Renderer(timeout=3) as r:
            dom = r.html(page)
            assert "<p>写出的段落</p>" in dom and "节点里的文字" in dom and "<hr>" in dom
            assert "FROM-NETWORK" not in dom and r.html("<p>x</p>", javascript=False)
            with pytest.raises(RenderTimeout):
                r.html("<p>x</p><script>while (true) {}</script>")
            assert "again" in r.html("<p>again</p>")  # a fresh browser
            browser = r.processes()
        assert not browser & set(chromium_processes())
    finally:
        server.shutdown()
        server.server_close()
    assert hits == []
