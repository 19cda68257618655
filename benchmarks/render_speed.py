"""Pages per second of sites that need scripts: rendered, read from embedded JSON, or neither.

Not a test. Builds the replay archives of the two fictional outlets of
``tests/test_render_sites.py`` with ``--pages`` article pages each (an inline-script site
whose pages write their article with ``document.write`` and DOM calls, and a Next.js-like
site whose pages carry it in ``__NEXT_DATA__``), reads the article pages back from the
WARC files, and extracts every one the way a crawl's pipeline does
(:mod:`newsspider.workers`), one page after another in this process:

* ``script site, as served``: the method on the shell (what a row without ``render`` gets);
* ``script site, render = true``: :func:`~newsspider.workers.render_page` (decode, render
  in Chromium with JavaScript on, no network) then the method on the rendered DOM;
* ``next site, as served`` and ``next site, json_path``: the method alone, then with the
  row's ``json_path`` (:func:`~newsspider.workers.extract_page`).

The browser is started before the timed passes (its start is printed apart). A page
counts as complete when every paragraph of its article is in the extracted body.

``--crawl`` also runs ``scrapy crawl`` on each archive (replayed, no delays, SQLite in a
temporary folder) with the site's row with and without ``render`` / ``json_path``, and
prints the article pages per second of the crawl's ``elapsed_time_seconds`` and how many
were stored with their whole body: downloads,
extraction (``EXTRACTION_WORKERS``: auto), rendering in the render thread and storage
together.

    python benchmarks/render_speed.py [--pages 200] [--method blockstats] [--crawl]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from warcio.archiveiterator import ArchiveIterator  # noqa: E402

from newsspider.extraction.model import ExtractedArticle  # noqa: E402
from newsspider.extraction.render import (  # noqa: E402
    CHROMIUM,
    chromium_processes,
    close_shared_renderer,
    render_html,
    shared_renderer,
    unavailable_reason,
)
from newsspider.sites import Site  # noqa: E402
from newsspider.sites.write import add_site  # noqa: E402
from newsspider.storage.models import unpack_text  # noqa: E402
from newsspider.workers import extract_page, render_page  # noqa: E402
from tests.test_render_sites import FakeSite, build_site  # noqa: E402

JSON_PATH = "props.pageProps.article.content"
TZ = "Asia/Shanghai"


@dataclass
class Row:
    case: str
    pages: int
    complete: int
    seconds: float
    render_seconds: float = 0.0

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds else 0.0


def replayed(warc: Path, site: FakeSite) -> list[tuple[str, bytes, dict[str, str]]]:
    """The site's article pages as the archive holds them: URL, body, headers."""
    pages = []
    with open(warc, "rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type != "response":
                continue
            url = record.rec_headers.get_header("WARC-Target-URI")
            if url in site.articles:
                ctype = record.http_headers.get_header("Content-Type") or "text/html"
                pages.append((url, record.content_stream().read(), {"Content-Type": ctype}))
    return pages


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


def complete(site: FakeSite, url: str, article: ExtractedArticle) -> bool:
    body = _flat(article.text)
    return all(_flat(p) in body for p in site.articles[url][2])


def timed(
    case: str,
    site: FakeSite,
    pages: list[tuple[str, bytes, dict[str, str]]],
    extract: Callable[[str, bytes, dict[str, str]], tuple[ExtractedArticle, float]],
) -> Row:
    done = 0
    rendering = 0.0
    started = time.perf_counter()
    for url, body, headers in pages:
        article, render_seconds = extract(url, body, headers)
        rendering += render_seconds
        done += complete(site, url, article)
    return Row(case, len(pages), done, time.perf_counter() - started, rendering)


def crawl(tmp: Path, warc: Path, site: FakeSite, *, variant: str, **fields: object) -> Row:
    """``scrapy crawl`` of the archive with the site's row (``fields`` on it): articles
    stored per second of the crawl's own elapsed time."""
    key = f"{site.key}_{variant}"
    host = re.escape(re.sub(r"^https?://", "", site.home).rstrip("/"))
    row = Site(
        key=key,
        source=site.key,
        allowed_domains=(host.replace("\\", "").removeprefix("www."),),
        start_urls=(site.home,),
        article_patterns=(rf"^https?://{host}/news/\d+",),
        checked=False,
        **fields,  # type: ignore[arg-type]
    )
    sites_file = tmp / f"{key}.toml"
    add_site(sites_file, row)
    db = tmp / f"{key}.db"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy.cmdline",
            "crawl",
            key,
            "-s",
            f"REPLAY_ARCHIVE={warc}",
            "-s",
            f"SITES_FILE={sites_file}",
            "-s",
            f"DATABASE_URL=sqlite:///{db}",
            "-s",
            "DOWNLOAD_DELAY=0",
            "-s",
            "AUTOTHROTTLE_ENABLED=False",
            "-s",
            "LOG_LEVEL=INFO",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    elapsed = re.search(r"'elapsed_time_seconds': ([\d.]+)", out.stderr)
    if out.returncode not in (0, 5) or elapsed is None:  # 5: every article dropped
        raise SystemExit(f"scrapy crawl {key} failed:\n{out.stderr[-3000:]}")
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT url, raw_text FROM articles")
        stored = [(u, unpack_text(t)) for u, t in rows]
    done = sum(
        url in site.articles and all(_flat(p) in _flat(text) for p in site.articles[url][2])
        for url, text in stored
    )
    return Row(f"crawl: {site.key}, {variant}", len(site.articles), done, float(elapsed.group(1)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=200, help="article pages per site")
    ap.add_argument("--method", default="blockstats", help="a registry name (default blockstats)")
    ap.add_argument("--crawl", action="store_true", help="also time scrapy crawl per case")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    args = ap.parse_args()
    method = args.method

    with tempfile.TemporaryDirectory(prefix="render-speed-") as tmp:
        script_site = build_site(Path(tmp, "script.warc.gz"), "script", args.pages)
        next_site = build_site(Path(tmp, "next.warc.gz"), "next", args.pages)
        script_pages = replayed(Path(tmp, "script.warc.gz"), script_site)
        next_pages = replayed(Path(tmp, "next.warc.gz"), next_site)
        crawls = []
        if args.crawl:
            script_warc, next_warc = Path(tmp, "script.warc.gz"), Path(tmp, "next.warc.gz")
            crawls = [
                crawl(Path(tmp), script_warc, script_site, variant="as_served"),
                crawl(Path(tmp), next_warc, next_site, variant="as_served"),
                crawl(Path(tmp), next_warc, next_site, variant="json_path", json_path=JSON_PATH),
            ]
            if unavailable_reason() is None:
                crawls.append(
                    crawl(Path(tmp), script_warc, script_site, variant="render", render=True)
                )

    def plain(url: str, body: bytes, headers: dict[str, str]) -> tuple[ExtractedArticle, float]:
        return extract_page(method, body, url, headers, TZ, {}), 0.0

    def with_json(url: str, body: bytes, headers: dict[str, str]) -> tuple[ExtractedArticle, float]:
        return extract_page(method, body, url, headers, TZ, {}, JSON_PATH), 0.0

    def rendered(url: str, body: bytes, headers: dict[str, str]) -> tuple[ExtractedArticle, float]:
        t = time.perf_counter()
        dom, codec = render_page(body, headers)
        render_seconds = time.perf_counter() - t
        article = extract_page(method, dom, url, headers, TZ, {})
        article.encoding = codec
        return article, render_seconds

    for fn, pages in ((plain, script_pages), (plain, next_pages)):  # warm the imports
        fn(*pages[0])
    rows = [
        timed("script site, as served", script_site, script_pages, plain),
        timed("next site, as served", next_site, next_pages, plain),
        timed("next site, json_path", next_site, next_pages, with_json),
    ]
    why = unavailable_reason()
    start = None
    if why is None:
        t = time.perf_counter()
        render_html("<p>warm</p>")  # the browser start, apart from the pages
        start = time.perf_counter() - t
        rows.append(timed("script site, render = true", script_site, script_pages, rendered))
        ours = shared_renderer().processes()
        close_shared_renderer()
        left = ours & set(chromium_processes())
    else:
        left = set()
    rows += crawls

    version = ""
    if why is None:
        out = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30)
        version = out.stdout.strip()
    print(
        f"{args.pages} article pages per site, method {method}, one page at a time in one "
        f"process; {platform.python_version()}, {os.cpu_count()} cores, "
        f"{platform.machine()}; {version or why}"
    )
    if start is not None:
        print(f"browser start (once per crawl process): {start:.2f} s")
    print()
    print("| case | pages | complete bodies | seconds | pages/s | ms/page | of which rendering |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        per_page = 1000 * r.seconds / r.pages if r.pages else 0.0
        share = f"{1000 * r.render_seconds / r.pages:.0f} ms" if r.render_seconds else ""
        print(
            f"| {r.case} | {r.pages} | {r.complete} | {r.seconds:.2f} | "
            f"{r.pages_per_second:.1f} | {per_page:.1f} | {share} |"
        )
    if why is not None:
        print(f"\nrendering not measured: {why}")
    if left:
        print(f"\nChromium processes of this run still alive: {sorted(left)}")
    if args.json:
        data = [asdict(r) | {"pages_per_second": r.pages_per_second} for r in rows]
        args.json.write_text(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
