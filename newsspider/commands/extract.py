"""``scrapy extract FILE_OR_URL``: run extraction on one page, offline for files.

``--method`` names the method (a name of :mod:`newsspider.extraction.registry`;
default: the ``EXTRACTOR`` setting). Prints title, time, the record fields (authors,
origin, editor, section, language, script, image; each with its source where it has
one), encoding and body (``--json``: every field of the result);
``--blocks`` prints the method's own table, so anyone can see why a page came out as
it did: for ``blockstats`` and ``blockstats-paper`` the block table of Zou & Zhong 2011
§1.2.2 (index, blocknum, sblocknum, in mainblockset or not, first characters) with N'min
and N_cal; for ``xpath`` the clusters Hou & Yang 2011 §3.1 examined (Length, N1, N2,
NODE_href, NODE_nohref, B_n, ΔT, variance, verdict) with the page's own §3.3 thresholds. A URL is fetched with Scrapy's own downloader (``scrapy fetch``
does the same), so settings such as USER_AGENT apply.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from scrapy import Request, Spider
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES
from twisted.python.failure import Failure

from newsspider.cli import NewsCommand, time_zone
from newsspider.errors import UserError
from newsspider.extraction import ExtractedArticle, ExtractionError
from newsspider.extraction.encoding import decode_html
from newsspider.extraction.page import content_type_of, parse_html
from newsspider.extraction.paper import paper_blocks
from newsspider.extraction.registry import NAMES, get_extractor
from newsspider.extraction.xpathseg import leaf_thresholds, leaves_of, segment
from newsspider.spiders.news import failure_reason

#: Methods whose table ``--blocks`` prints (the others have no block table to show).
BLOCK_TABLES = ("blockstats", "blockstats-paper", "xpath")


class Command(NewsCommand):
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
        parser.add_argument(
            "--site-name", default=None, help="the site's own paper, for 本报讯 (人民日报)"
        )
        parser.add_argument("--blocks", action="store_true", help="print the block table")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give exactly one FILE_OR_URL")
        target = args[0]
        method = opts.method or self.settings.get("EXTRACTOR")
        try:
            extractor = get_extractor(method)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if opts.blocks and method not in BLOCK_TABLES:
            raise UserError(
                f"--blocks shows the table of {', '.join(BLOCK_TABLES)}; "
                f"{method} has none (leave out --blocks)"
            )
        tz = time_zone(opts.tz) if opts.tz else None
        if target.startswith(("http://", "https://")):
            data, headers, url = self._fetch(target)
        else:
            path = Path(target)
            if path.is_dir():
                raise UserError(f"{target} is a folder: give one saved page (an .html file)")
            if not path.is_file():
                raise UserError(f"no such file: {target}")
            data, headers, url = path.read_bytes(), None, opts.url
        table = _xpath_table if method == "xpath" else _block_table
        rows = _xpath_rows if method == "xpath" else _block_rows
        try:
            article = extractor(data, url, headers=headers, tz=tz, site_name=opts.site_name)
        except ExtractionError as exc:
            # Not HTML at all (ExtractionError): the page's fault, said in one line.
            print(f"scrapy extract: error: {target}: {exc}", file=sys.stderr)  # noqa: T201
            self.exitcode = 1
            return
        if opts.json:
            out = article_json(article)
            if opts.blocks:
                out["blocks"] = rows(data, headers)
            print(json.dumps(out, ensure_ascii=False, indent=2))  # noqa: T201
            return
        if opts.blocks:
            print(table(data, headers))  # noqa: T201
        published = article.published.isoformat() if article.published else "-"
        print(f"title:     {article.title or '-'}  [{article.title_source or '-'}]")  # noqa: T201
        print(f"published: {published}  [{article.published_source or '-'}]")  # noqa: T201
        authors = "、".join(article.authors) or "-"
        print(f"authors:   {authors}  [{article.authors_source or '-'}]")  # noqa: T201
        print(f"origin:    {article.origin or '-'}  [{article.origin_source or '-'}]")  # noqa: T201
        print(f"editor:    {article.editor or '-'}")  # noqa: T201
        print(f"section:   {article.section or '-'}  [{article.section_source or '-'}]")  # noqa: T201
        print(f"language:  {article.language or '-'}    script: {article.script or '-'}")  # noqa: T201
        if article.image:
            caption = f"  ({article.image_caption})" if article.image_caption else ""
            print(f"image:     {article.image}{caption}")  # noqa: T201
        print(f"encoding:  {article.encoding}    mode: {article.mode}    kind: {article.kind}")  # noqa: T201
        print()  # noqa: T201
        print(article.text)  # noqa: T201

    def _fetch(self, url: str) -> tuple[bytes, dict, str]:
        """Download one URL with Scrapy (the network is used only here)."""
        result: dict[str, Any] = {}

        def keep(response):
            result["response"] = response

        def failed(failure: Failure) -> None:
            result["failure"] = failure

        class _Fetch(Spider):
            name = "extract-fetch"

            async def start(self):
                yield Request(url, callback=keep, errback=failed, dont_filter=True)

        assert self.settings is not None
        if (self.settings.getpriority("LOG_LEVEL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
            # The failure is reported below in one line; Scrapy's own lines would repeat it.
            logging.getLogger("scrapy").setLevel(logging.CRITICAL)
        self.crawler_process.crawl(_Fetch)
        self.crawler_process.start()
        response = result.get("response")
        if response is None:
            raise UserError(f"could not fetch {url}: {_why(result.get('failure'))}")
        headers = {k.decode("latin-1"): v[-1] for k, v in response.headers.items() if v}
        return response.body, headers, response.url


def article_json(article: ExtractedArticle) -> dict[str, Any]:
    """Every field of an extracted article as JSON values (``published`` in ISO 8601,
    ``authors`` a list)."""
    names = [f.name for f in dataclasses.fields(article)]
    first = ["url", "title", "title_source", "published", "published_source"]
    order = [*first, *(n for n in names if n not in first and n != "text"), "text"]
    out: dict[str, Any] = {}
    for name in order:
        value = getattr(article, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out


def _why(failure: Failure | None) -> str:
    """Why a fetch failed, in a few words (``dns: DNS lookup failed: ...``)."""
    if failure is None:
        return "no response (refused by robots.txt or an offsite redirect)"
    reason = failure_reason(failure) or "refused"
    message = failure.getErrorMessage().strip().splitlines()
    return f"{reason}: {message[0]}" if message else reason


def _xpath_rows(data: bytes, headers: dict | None) -> dict:
    """The clusters Hou & Yang 2011 §3.1 examines on a page, with its §3.3 thresholds
    computed from the page alone (what ``xpath`` does for a site not yet trained)."""
    text, _ = decode_html(data, content_type_of(headers))
    root = parse_html(text)
    leaves = leaves_of(root) if root is not None else []
    own = leaf_thresholds(leaves)
    if own is None:
        return {"clusters": []}
    seg = segment(
        leaves, Length_Threshold=own.Length_Threshold, B_n_Threshold=own.B_n_Threshold
    )
    clusters = [
        {
            "first_leaf": cluster.X[0],
            "leaves": stats.leaves,
            "Length": stats.Length,
            "N1": stats.N1,
            "N2": stats.N2,
            "NODE_href": stats.NODE_href,
            "NODE_nohref": stats.NODE_nohref,
            "B_n": stats.B_n,
            "ΔT": stats.ΔT,
            "variance": stats.variance,
            "verdict": verdict,
            "text": " ".join(leaves[x].text for x in cluster.X),
        }
        for cluster, stats, verdict in seg.examined
    ]
    return {
        "Length_Threshold": own.Length_Threshold,
        "B_n_Threshold": own.B_n_Threshold,
        "clusters": clusters,
    }


def _xpath_table(data: bytes, headers: dict | None) -> str:
    rows = _xpath_rows(data, headers)
    if not rows["clusters"]:
        return "no clusters"
    lines = [
        f"Length_Threshold = {rows['Length_Threshold']:.1f}   "
        f"B_n_Threshold = {rows['B_n_Threshold']:.3f}   (this page alone, §3.3 with M = 1)",
        f"{'leaf':>5} {'leaves':>6} {'Length':>7} {'N1':>6} {'N2':>6} {'href':>5} "
        f"{'nohref':>6} {'B_n':>7} {'ΔT':>6} {'var':>7}  verdict         text",
    ]
    for c in rows["clusters"]:
        lines.append(
            f"{c['first_leaf']:>5} {c['leaves']:>6} {c['Length']:>7} {c['N1']:>6} "
            f"{c['N2']:>6} {c['NODE_href']:>5} {c['NODE_nohref']:>6} {c['B_n']:>7.3f} "
            f"{c['ΔT']:>6.2f} {c['variance']:>7.2f}  {c['verdict']:<15} {c['text'][:30]}"
        )
    return "\n".join(lines)


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
