"""VL_PS, Jing & Zuo §2.3: regions by hand, the renderer's robustness.

The pure tests (thresholds, rules, the prepared tree) always run. The rest
render pages in headless Chromium through Playwright and are skipped when
either is missing (``apt-get install chromium``, ``pip install playwright``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from lxml import etree

from newsspider.extraction import extract_article
from newsspider.extraction.errors import ExtractionError
from newsspider.extraction.registry import get_extractor
from newsspider.extraction.render import (
    FOLDER_PREFIX,
    ID_ATTRIBUTE,
    Box,
    BrowserUnavailable,
    RenderCrash,
    Renderer,
    RenderTimeout,
    VisualError,
    chromium_processes,
    process_tree,
    sweep_stale_folders,
    unavailable_reason,
)
from newsspider.extraction.visual import (
    CSP,
    Region,
    Thresholds,
    classify,
    decode_and_parse,
    extract_visual,
    extract_visual_blockstats,
    number_elements,
    render_source,
    vl_ps,
)

REPO = Path(__file__).resolve().parents[1]
NO_BROWSER = unavailable_reason()
needs_browser = pytest.mark.skipif(NO_BROWSER is not None, reason=str(NO_BROWSER))

# --------------------------------------------------------------------------
# Pure: the rules of §2.3 c with the §3 thresholds

#: W = 1280, H = 1200: H1 = 200, H2 = 1200 - 160 = 1040, W1 = 384, W2 = 896.
T = Thresholds.of_page(1280, 1200)


def test_thresholds_of_the_paper() -> None:
    assert T == Thresholds(H1=200, H2=1040, W1=384, W2=896)
    t = Thresholds.of_page(1000, 3000, H1=150, H2_offset=300, W1=0.25, W2=0.8)
    assert t == Thresholds(H1=150, H2=2700, W1=250, W2=800)


@pytest.mark.parametrize(
    ("box", "region"),
    [
        ((0, 0, 1280, 150), Region.HEADER),  # top + height = 150 <= 200
        ((400, 160, 480, 40), Region.HEADER),  # top + height = 200 <= 200 (boundary)
        ((400, 160, 480, 41), Region.CENTER),  # 201 > 200
        ((0, 1040, 1280, 160), Region.FOOTER),  # top = 1040 >= H2 (boundary)
        ((0, 1039, 1280, 161), Region.CENTER),  # top 1039 < 1040, and wide
        ((0, 300, 384, 600), Region.LM),  # left + width = 384 <= W1 (boundary)
        ((0, 300, 385, 600), Region.CENTER),  # 385 > 384
        ((896, 300, 384, 600), Region.RM),  # left = 896 >= W2 (boundary)
        ((895, 300, 385, 600), Region.CENTER),
        ((0, 0, 100, 100), Region.HEADER),  # HEADER and LM: the paper's order decides
        ((0, 1100, 100, 50), Region.FOOTER),  # FOOTER and LM
        ((1000, 0, 100, 100), Region.HEADER),  # HEADER and RM
        ((400, 300, 480, 800), Region.CENTER),  # reaching into the footer band
    ],
)
def test_classify_rules_in_the_papers_order(
    box: tuple[float, float, float, float], region: Region
) -> None:
    assert classify(*box, T) is region


def test_number_elements_wraps_text_directly_in_body() -> None:
    root, encoding = decode_and_parse("<html><body>裸文本<p>段落</p>尾巴<!-- c --></body></html>")
    assert root is not None and encoding == "unicode"
    elements = number_elements(root)
    body = root.find("body")
    assert [(el.tag, el.text) for el in body] == [
        ("span", "裸文本"),
        ("p", "段落"),
        ("span", "尾巴"),
    ]
    assert not (body.text or "").strip() and all(not (el.tail or "").strip() for el in body)
    assert [int(el.get(ID_ATTRIBUTE)) for el in elements] == list(range(len(elements)))


def test_render_source_blocks_everything_and_leaves_the_tree_as_it_was() -> None:
    html = (
        '<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0;url=http://x/">'
        '<title>t</title></head><body><iframe src="http://x/f"></iframe><p>p</p></body></html>'
    )
    root, _ = decode_and_parse(html)
    number_elements(root)
    source = render_source(root)
    assert source.startswith("<!DOCTYPE html>")
    assert f'content="{CSP}"' in source
    assert "refresh" not in source and "http://x/f" not in source
    assert "Content-Security-Policy" not in etree.tostring(root, encoding="unicode")


def test_a_missing_browser_is_a_clear_error() -> None:
    with Renderer(executable="/nonexistent/chromium") as r, pytest.raises(BrowserUnavailable):
        r.layout("<p>x</p>")
    assert unavailable_reason("/nonexistent/chromium") is not None


# --------------------------------------------------------------------------
# Rendering


@pytest.fixture(scope="module")
def renderer() -> Iterator[Renderer]:
    if NO_BROWSER:
        pytest.skip(NO_BROWSER)
    with Renderer(timeout=20) as r:
        yield r


#: Fixed CSS geometry. Viewport 1280 wide, the lowest box (footer) ends at
#: 1200, so W = 1280, H = 1200, H1 = 200, H2 = 1040, W1 = 384, W2 = 896.
GEOMETRY = """<!DOCTYPE html>
<html><head><title>几何测试页</title>
<style>body{margin:0;font:16px/20px sans-serif} .box{position:absolute}</style></head>
<body>裸文本
<div id="header" class="box" style="left:0;top:0;width:1280px;height:150px">头部导航<div
 id="escaped" class="box" style="left:500px;top:500px;width:200px;height:40px"
 >逃逸到中部</div></div>
<div id="corner" class="box" style="left:0;top:0;width:100px;height:100px">角落</div>
<div id="header-edge" class="box" style="left:400px;top:160px;width:480px;height:40px"
 >恰在上边界</div>
<div id="below-header" class="box" style="left:400px;top:210px;width:480px;height:41px"
 >越过上边界</div>
<div id="left" class="box" style="left:0;top:300px;width:384px;height:600px">左栏<span
 id="left-span">左栏链接</span></div>
<div id="right" class="box" style="left:896px;top:300px;width:384px;height:600px">右栏</div>
<div id="center" class="box" style="left:400px;top:300px;width:480px;height:600px"><p
 id="p1">正文第一段。</p><p id="p2">正文第二段。</p></div>
<div id="almost-left" class="box" style="left:0;top:950px;width:385px;height:40px">差一像素</div>
<div id="hidden" class="box" style="display:none;left:400px;top:500px">隐藏文字</div>
<div id="invisible" class="box"
 style="visibility:hidden;left:400px;top:920px;width:100px;height:20px">看不见</div>
<div id="footer" class="box" style="left:0;top:1040px;width:1280px;height:160px">版权所有</div>
</body></html>"""

#: By hand, from the boxes in the style attributes and the rules above.
GEOMETRY_REGIONS = {
    "header": Region.HEADER,  # 0 + 150 <= 200
    "escaped": Region.CENTER,  # child of #header, but its own box is at (500, 500)
    "corner": Region.HEADER,  # also LM; HEADER is tried first
    "header-edge": Region.HEADER,  # 160 + 40 = 200 <= 200
    "below-header": Region.CENTER,  # 210 + 41 > 200, 400 + 480 > 384, 400 < 896
    "left": Region.LM,  # 0 + 384 <= 384
    "left-span": Region.LM,  # inside #left
    "right": Region.RM,  # 896 >= 896
    "center": Region.CENTER,
    "p1": Region.CENTER,
    "p2": Region.CENTER,
    "almost-left": Region.CENTER,  # 0 + 385 > 384, 950 < 1040
    "hidden": Region.NONE,  # display: none, no box
    "invisible": Region.NONE,  # visibility: hidden
    "footer": Region.FOOTER,  # 1040 >= 1040
}
#: The CENTER content: text of the CENTER elements, in document order, one block a line.
GEOMETRY_CENTER = "逃逸到中部\n越过上边界\n正文第一段。\n正文第二段。\n差一像素"


def _by_id(page, ident: str) -> etree._Element:
    (el,) = page.root.xpath(f'//*[@id="{ident}"]')
    return el


@needs_browser
def test_regions_of_a_page_with_known_geometry(renderer: Renderer) -> None:
    page = vl_ps(GEOMETRY, renderer=renderer)
    assert (page.layout.width, page.layout.height) == (1280, 1200)
    assert page.thresholds == Thresholds(H1=200, H2=1040, W1=384, W2=896)
    center = int(_by_id(page, "center").get(ID_ATTRIBUTE))
    assert page.layout.boxes[center] == Box(left=400, top=300, width=480, height=600)
    got = {ident: page.region_of(_by_id(page, ident)) for ident in GEOMETRY_REGIONS}
    assert got == GEOMETRY_REGIONS
    texts = page.texts()
    assert texts[Region.HEADER] == [
        "裸文本",
        "头部导航",
        "角落",
        "恰在上边界",
    ]  # body text: own box
    assert texts[Region.LM] == ["左栏", "左栏链接"]
    assert texts[Region.RM] == ["右栏"] and texts[Region.FOOTER] == ["版权所有"]
    assert "隐藏文字" in texts[Region.NONE] and "看不见" in texts[Region.NONE]


@needs_browser
def test_extract_visual_returns_the_center_content(renderer: Renderer) -> None:
    art = extract_visual(GEOMETRY.encode("utf-8"), "http://example.invalid/a", renderer=renderer)
    assert art.text == GEOMETRY_CENTER
    assert art.title == "几何测试页" and art.title_source == "title"
    assert art.mode == "paper" and art.encoding == "utf-8"


@needs_browser
@pytest.mark.parametrize(
    ("params", "changed"),
    [
        ({"H1": 100}, {"header": Region.CENTER, "header-edge": Region.CENTER}),
        ({"H1": 260}, {"below-header": Region.HEADER}),
        ({"H2_offset": 250}, {"almost-left": Region.FOOTER}),  # H2 = 950
        ({"W1": 0.35}, {"almost-left": Region.LM}),  # W1 = 448 >= 385
        ({"W2": 0.75}, {"right": Region.CENTER}),  # W2 = 960 > 896
        ({"W1": 0.25, "W2": 0.6}, {"left": Region.CENTER, "center": Region.CENTER}),
    ],
)
def test_thresholds_are_parameters(
    renderer: Renderer, params: dict[str, float], changed: dict[str, Region]
) -> None:
    page = vl_ps(GEOMETRY, renderer=renderer, **params)
    got = {ident: page.region_of(_by_id(page, ident)) for ident in GEOMETRY_REGIONS}
    assert got == GEOMETRY_REGIONS | changed


#: A float layout with a side column (LM), an ad column (RM) and a footer.
SMALL = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>收费公路亏损扩大_示例网</title>
<style>
body{margin:0;font:16px/24px sans-serif} #top{height:120px} #wrap{width:1280px;overflow:hidden}
#side{float:left;width:300px} #main{float:left;width:680px;margin-left:20px}
#ad{float:left;width:260px;margin-left:20px} #foot{height:160px}
</style></head>
<body>
<div id="top"><a href="/">示例网</a> <a href="/news">新闻</a> <a href="/finance">财经</a></div>
<div id="wrap">
<div id="side"><p>热门推荐：本站编辑每天精选十条要闻，涵盖国内国际财经科技，欢迎订阅我们的早报，
每天早上七点准时送达您的邮箱。</p></div>
<div id="main">
<h1>收费公路亏损扩大</h1>
<p>2015年7月2日 来源：示例网</p>
<p>第一段：今年上半年，全国收费公路的通行费收入继续增长，但支出增长更快，亏损进一步扩大，
专家认为这反映了基础设施的相对过剩。</p>
<p>第二段：交通运输部公布的数据显示，收费公路的债务余额已经超过四万亿元，偿债支出占到了总支出的
七成以上，其中利息支出增长最快。</p>
<p>第三段：专家建议，今后的公路建设应当更加注重效益，避免在车流量不足的地区继续大规模投资，
同时改革收费公路的融资方式。</p>
</div>
<div id="ad"><p>广告：本周末全场商品五折起，会员再享额外九折优惠，活动时间有限，数量有限，
先到先得，详情请咨询各门店客服。</p></div>
</div>
<div id="foot">版权所有 示例网 京ICP证000000号 联系我们 关于我们</div>
</body></html>"""


@needs_browser
def test_visual_blockstats_removes_the_margins_before_the_statistics(renderer: Renderer) -> None:
    page = vl_ps(SMALL, renderer=renderer)
    regions = {ident: page.region_of(_by_id(page, ident)) for ident in ("top", "side", "ad")}
    assert regions == {"top": Region.HEADER, "side": Region.LM, "ad": Region.RM}
    # H is the content's height (below the 800 px viewport): #foot is the bottom 160 px.
    assert page.region_of(_by_id(page, "foot")) is Region.FOOTER
    # Block statistics alone take the side and ad blurbs with the article ...
    plain = extract_article(SMALL, mode="paper").text
    assert "热门推荐" in plain and "广告" in plain
    # ... VL_PS first leaves only the article (paper and best mode).
    for name, mode in (("visual+blockstats", "paper"), ("visual+blockstats-best", "best")):
        art = get_extractor(name)(SMALL.encode("utf-8"), renderer=renderer)
        lines = art.text.splitlines()
        assert [line[:3] for line in lines if line.startswith("第")] == [
            "第一段",
            "第二段",
            "第三段",
        ]
        assert "热门推荐" not in art.text and "广告" not in art.text and "版权" not in art.text
        assert art.title == "收费公路亏损扩大" and art.mode == mode and art.encoding == "utf-8"
        assert art.published is not None and art.published.date().isoformat() == "2015-07-02"
    visual = extract_visual(SMALL, renderer=renderer)
    assert "第三段" in visual.text and "广告" not in visual.text and "版权" not in visual.text
    assert extract_visual_blockstats(SMALL, renderer=renderer).mode == "paper"


@needs_browser
def test_not_html_is_an_extraction_error(renderer: Renderer) -> None:
    with pytest.raises(ExtractionError):
        extract_visual(b"%PDF-1.4\x00\x01\x02\x03" * 20, renderer=renderer)


@needs_browser
def test_a_real_gb_page_is_rendered(renderer: Renderer) -> None:
    path = REPO.parent / "shared" / "datasets" / "cx163-zh" / "html" / "cx163-10.html"
    if not path.exists():
        pytest.skip("../shared/datasets is absent")
    art = extract_visual(path.read_bytes(), renderer=renderer)
    assert art.encoding == "gb18030" and "\ufffd" not in art.text
    assert "收费公路" in art.text and art.title


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Recorder.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/css")
        self.end_headers()
        self.wfile.write(b"p{}")

    def log_message(self, *args: object) -> None:
        pass


@needs_browser
def test_no_request_leaves_the_browser(renderer: Renderer) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    page = (
        f'<html><head><link rel="stylesheet" href="{base}/a.css"></head><body>'
        f'<img src="{base}/b.png"><iframe src="{base}/c.html"></iframe>'
        '<div style="height:300px"></div><p>正文</p><div style="height:300px"></div>'
        f"<script>fetch('{base}/d'); new Image().src = '{base}/e.png';</script></body></html>"
    )
    try:
        for js in (False, True):
            assert "正文" in extract_visual(page, renderer=renderer, javascript=js).text
            # Without the CSP of render_source: the route aborts every request.
            renderer.layout(page, javascript=js)
    finally:
        server.shutdown()
        server.server_close()
    assert _Recorder.seen == []


@needs_browser
def test_usable_inside_a_running_event_loop(renderer: Renderer) -> None:
    """Scrapy's asyncio reactor: Playwright's sync API runs in the render thread."""

    async def inside() -> str:
        return extract_visual(GEOMETRY, renderer=renderer).text

    assert asyncio.run(inside()) == GEOMETRY_CENTER


# --------------------------------------------------------------------------
# No Chromium process is ever left behind


def _stat(pid: int) -> tuple[int, int] | None:
    """(ppid, pgid) of a live process, None when it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text("latin-1")
    except OSError:
        return None
    state, ppid, pgid = stat[stat.rindex(")") + 2 :].split()[:3]
    return None if state == "Z" else (int(ppid), int(pgid))


def _of_baseline(pid: int, baseline: set[int]) -> bool:
    """Whether ``pid`` belongs to a browser that was running before the test: in the
    process group of a ``baseline`` process or descended from one. The module's shared
    renderer may start a helper process at any moment (Chromium starts some lazily),
    and that is not a process the test left behind."""
    groups = {s[1] for s in map(_stat, baseline) if s is not None}
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        stat = _stat(pid)
        if stat is None:
            return False
        if pid in baseline or stat[1] in groups:
            return True
        pid = stat[0]
    return False


def _settled(baseline: set[int], seconds: float = 10.0) -> set[int]:
    """Chromium processes beyond ``baseline`` and not of its browsers, once they have had
    time to die."""
    deadline = time.monotonic() + seconds
    while True:
        extra = {p for p in set(chromium_processes()) - baseline if not _of_baseline(p, baseline)}
        if not extra or time.monotonic() > deadline:
            return extra
        time.sleep(0.05)


def _children() -> set[int]:
    """Live child processes of this one (the Playwright driver would be one)."""
    found = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
        if int(ppid) == os.getpid() and state != "Z":
            found.add(int(d))
    return found


@pytest.fixture
def baseline() -> Iterator[set[int]]:
    if NO_BROWSER:
        pytest.skip(NO_BROWSER)
    before = set(chromium_processes())
    children = _children()
    yield before
    assert _settled(before) == set()
    assert _children() - children == set()


@needs_browser
def test_a_hanging_page_times_out_and_leaves_no_process(baseline: set[int]) -> None:
    with Renderer(timeout=2) as r:
        r.layout("<p>warm</p>")
        assert r.processes() and set(chromium_processes()) - baseline
        started = time.monotonic()
        with pytest.raises(RenderTimeout):
            r.layout("<p>x</p><script>while (true) {}</script>", javascript=True)
        assert time.monotonic() - started < 2 + 5
        assert r.processes() == set() and _settled(baseline) == set()
        # A script that hangs the measuring itself (after the page loaded):
        # the caller's own deadline kills the browser.
        with pytest.raises(RenderTimeout):
            r.layout(
                "<p>x</p><script>document.querySelectorAll = () => { while (true) {} };</script>",
                javascript=True,
                timeout=1,
            )
        assert _settled(baseline) == set()
        assert r.layout("<p data-vlps='0'>again</p>").boxes  # a new browser
    assert r.processes() == set()


@needs_browser
def test_a_renderer_crash_leaves_no_process(baseline: set[int]) -> None:
    with Renderer(timeout=10) as r:
        with pytest.raises(RenderCrash):
            r.layout("<p>x</p>", page_hook=lambda page: page.goto("chrome://crash"))
        assert _settled(baseline) == set()

        def cdp_crash(page: object) -> None:  # CDP Page.crash never answers
            page.context.new_cdp_session(page).send("Page.crash")  # type: ignore[attr-defined]

        with pytest.raises(RenderCrash):
            r.layout("<p>x</p>", page_hook=cdp_crash)
        assert _settled(baseline) == set()
        assert isinstance(RenderCrash("x"), VisualError | ExtractionError)
        assert r.layout("<p data-vlps='0'>again</p>").boxes


@needs_browser
def test_the_browser_is_recycled_after_n_pages(baseline: set[int]) -> None:
    with Renderer(recycle_after=2) as r:
        pids = []
        for _ in range(3):
            r.layout("<p>x</p>")
            pids.append(r._state.worker.browser.proc.pid)
        assert pids[0] == pids[1] != pids[2]
        assert _settled(baseline | r.processes()) == set()  # the first browser is gone


@needs_browser
def test_closed_renderer_refuses_pages(baseline: set[int]) -> None:
    r = Renderer()
    r.layout("<p>x</p>")
    r.close()
    r.close()  # twice is fine
    with pytest.raises(VisualError, match="closed"):
        r.layout("<p>x</p>")


@needs_browser
def test_a_killed_python_leaves_no_chromium(baseline: set[int]) -> None:
    """SIGKILL to the Python process: no atexit, no finalizer; the kernel's
    parent-death signal still takes the browser, and its children follow."""
    script = textwrap.dedent(
        """
        import os, sys, time
        from newsspider.extraction.render import Renderer
        r = Renderer()
        r.layout("<p>x</p>")
        browser = r._state.worker.browser
        print(os.getpid(), browser.proc.pid, browser.folder, flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        python_pid, browser_pid, folder = child.stdout.readline().split()
        browser_pid = int(browser_pid)
        assert process_tree(browser_pid) and Path(folder).is_dir()
        assert Path(folder).name.startswith(f"{FOLDER_PREFIX}{python_pid}-")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    deadline = time.monotonic() + 10
    while process_tree(browser_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_tree(browser_pid) == set()
    # Its folder stays behind until the next browser's sweep.
    assert Path(folder).is_dir()
    assert folder in sweep_stale_folders(str(Path(folder).parent))
    assert not Path(folder).exists()
