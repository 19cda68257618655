"""The web view's screenshots in docs/screenshots/, taken from a real corpus, not a fixture.

Not a benchmark: it crawls the demo's saved pages (``scrapy demo``; with ``--datasets``
every saved page of the evaluation datasets too, through the same replay) into a fresh
SQLite corpus, serves it with ``scrapy corpus serve``, and takes each page in Debian's
Chromium (Playwright): a search, the article with the fullest record, the dashboard over
its widest window (and every month, by origin), and the reprint stories.

    python benchmarks/screenshots.py --datasets "$DATASETS" --out docs/screenshots
"""

from __future__ import annotations

import argparse
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrapy(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "scrapy.cmdline", *args], cwd=REPO, check=True)


def fullest_article(db: Path) -> int:
    """The article whose record names the most: authors, origin, editor, section, image."""
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT id FROM articles ORDER BY (authors IS NOT NULL) + (origin IS NOT NULL)"
            " + (editor IS NOT NULL) + (section IS NOT NULL) + (image IS NOT NULL) DESC,"
            " story_id IS NULL, length(content) DESC LIMIT 1"
        ).fetchone()
        return int(row[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, help="also crawl every dataset's saved pages")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--query", default="中国", help="the search shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "corpus.db"
        url = f"sqlite:///{db}"
        demo = ["demo", "-s", f"DATABASE_URL={url}", "-s", "LOG_LEVEL=WARNING"]
        if args.datasets:
            demo += ["--datasets", str(args.datasets)]
        scrapy(*demo)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "scrapy.cmdline", "corpus", "serve", "--port", str(port),
             "-s", f"DATABASE_URL={url}"],
            cwd=REPO,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                try:
                    urllib.request.urlopen(base + "/", timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.2)
            pages = {
                "search": f"{base}/?q={quote(args.query)}",
                "article": f"{base}/article/{fullest_article(db)}",
                # the widest window; the chart by origin spans every month anyway
                "dashboard": f"{base}/dashboard?days=365",
                "reprints": f"{base}/reprints",
            }
            shoot(pages, args.out)
        finally:
            server.terminate()
            server.wait(10)


def shoot(pages: dict[str, str], out: Path) -> None:
    from playwright.sync_api import sync_playwright  # optional heavy dependency

    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-quic"]
        )
        context = browser.new_context(viewport={"width": 1200, "height": 900}, locale="zh-CN")
        page = context.new_page()
        for name, url in pages.items():
            page.goto(url)
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(500)  # the charts' animation
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(f"{name}: {url} -> {out / f'{name}.png'}")
        browser.close()


if __name__ == "__main__":
    main()
