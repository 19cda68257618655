"""``scrapy extract FILE_OR_URL``: run extraction on one page, offline for files.

``--method`` names the method (a name of :mod:`newsspider.extraction.registry`;
default: the ``EXTRACTOR`` setting). Prints title, time, encoding and body;
``--blocks`` prints the block table of Zou & Zhong 2011 §1.2.2 (index, blocknum,
sblocknum, in mainblockset or not, first characters) with N'min and N_cal, so
anyone can see why a page came out as it did. A URL is fetched with Scrapy's own downloader (``scrapy fetch``
does the same), so settings such as USER_AGENT apply.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import ClassVar

from scrapy import Request, Spider
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from newsspider.extraction import ExtractionError
from newsspider.extraction.encoding import decode_html
from newsspider.extraction.page import content_type_of, parse_html
from newsspider.extraction.paper import paper_blocks
from newsspider.extraction.registry import NAMES, get_extractor


class Command(ScrapyCommand):
    requires_project = True
    default_settings: ClassVar[dict] = {"LOG_LEVEL": "WARNING"}

    def syntax(self) -> str:
        return "[options] FILE_OR_URL"

    def short_desc(self) -> str:
        return "Extract title, time and body from one saved page (or URL)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--method",
            default=None,
            help=f"{', '.join(NAMES)} (default: the EXTRACTOR setting)",
        )
        parser.add_argument("--url", default=None, help="the page's address (for a file)")
        parser.add_argument("--tz", default=None, help="site time zone (Asia/Shanghai)")
        parser.add_argument("--blocks", action="store_true", help="print the block table")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give exactly one FILE_OR_URL")
        target = args[0]
        method = opts.method or self.settings.get("EXTRACTOR")
        try:
            extractor = get_extractor(method)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if target.startswith(("http://", "https://")):
            data, headers, url = self._fetch(target)
        else:
            path = Path(target)
            if not path.is_file():
                raise UsageError(f"no such file: {target}")
            data, headers, url = path.read_bytes(), None, opts.url
        try:
            article = extractor(data, url, headers=headers, tz=opts.tz)
        except ExtractionError as exc:
            print(f"error: {target}: {exc}")  # noqa: T201
            self.exitcode = 1
            return
        if opts.json:
            out = {
                "url": article.url,
                "title": article.title,
                "title_source": article.title_source,
                "published": article.published.isoformat() if article.published else None,
                "published_source": article.published_source,
                "encoding": article.encoding,
                "mode": article.mode,
                "text": article.text,
            }
            if opts.blocks:
                out["blocks"] = _block_rows(data, headers)
            print(json.dumps(out, ensure_ascii=False, indent=2))  # noqa: T201
            return
        if opts.blocks:
            print(_block_table(data, headers))  # noqa: T201
        published = article.published.isoformat() if article.published else "-"
        print(f"title:     {article.title or '-'}  [{article.title_source or '-'}]")  # noqa: T201
        print(f"published: {published}  [{article.published_source or '-'}]")  # noqa: T201
        print(f"encoding:  {article.encoding}    mode: {article.mode}")  # noqa: T201
        print()  # noqa: T201
        print(article.text)  # noqa: T201

    def _fetch(self, url: str) -> tuple[bytes, dict, str]:
        """Download one URL with Scrapy (the network is used only here)."""
        result: dict = {}

        def keep(response):
            result["response"] = response

        class _Fetch(Spider):
            name = "extract-fetch"

            async def start(self):
                yield Request(url, callback=keep, dont_filter=True)

        self.crawler_process.crawl(_Fetch)
        self.crawler_process.start()
        response = result.get("response")
        if response is None:
            raise UsageError(f"could not fetch {url}")
        headers = {k.decode("latin-1"): v[-1] for k, v in response.headers.items() if v}
        return response.body, headers, response.url


def _block_rows(data: bytes, headers: dict | None) -> dict:
    """The paper-mode block statistics of a page as plain data."""
    text, _ = decode_html(data, content_type_of(headers))
    root = parse_html(text)
    if root is None:
        return {"blocks": []}
    blockset, stats = paper_blocks(root)
    blocks = blockset.blocks
    main = set(stats.mainblockset)
    return {
        "N_min": stats.N_min,
        "N_avg": stats.N_avg,
        "N_min_prime": stats.N_min_prime,
        "N_cal": stats.N_cal,
        "block_i": stats.block_i,
        "block_j": stats.block_j,
        "blocks": [
            {
                "index": b.index,
                "blocknum": b.blocknum,
                "sblocknum": stats.sblocknum[b.index],
                "mainblockset": b.index in main,
                "text": b.text,
            }
            for b in blocks
        ],
    }


def _block_table(data: bytes, headers: dict | None) -> str:
    rows = _block_rows(data, headers)
    if not rows["blocks"]:
        return "no blocks"
    lines = [
        f"N'min = {rows['N_min_prime']:.2f}   N_cal = {rows['N_cal']:.2f}   "
        f"(N_min {rows['N_min']:.2f}, N_avg {rows['N_avg']:.2f}; "
        f"block_i {rows['block_i']}, block_j {rows['block_j']}; paper mode)",
        f"{'index':>5} {'blocknum':>8} {'sblocknum':>9}  main  text",
    ]
    for b in rows["blocks"]:
        if not b["blocknum"] and not b["mainblockset"] and not b["sblocknum"]:
            continue
        mark = " *  " if b["mainblockset"] else "    "
        lines.append(
            f"{b['index']:>5} {b['blocknum']:>8} {b['sblocknum']:>9.2f}  {mark}  {b['text'][:40]}"
        )
    return "\n".join(lines)
