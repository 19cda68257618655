"""Peer extractors wrapped as ``extract(html_bytes, url) -> object``, and a run of them
beside newsspider on the record fields.

Each adapter returns a ``PeerResult`` with ``text`` (one paragraph per line),
``title``, ``published`` (a ``datetime`` or None) and ``authors`` (the names the
library gives: trafilatura's ``author`` cut at ``;``, newspaper4k's ``authors``,
GNE's ``author``; readability-lxml gives none), the shape
``newsspider.evaluation.evaluate`` reads. Libraries are imported lazily;
:func:`load_peers` skips the missing ones with a note.

Run as a script, it scores newsspider's default method and every peer in one process
on the labelled datasets' record gold (authors, with origin and editor where gold
exists, :func:`newsspider.evaluation.evaluate`) and prints a markdown table::

    python benchmarks/peers.py DATASETS_DIR [--datasets cwced-zh,cx163-zh] [--json out.json]

Decoding: a peer gets the raw bytes when it takes bytes itself (trafilatura,
readability-lxml, both with their own charset detection); otherwise
(newspaper4k, whose ``input_html`` is a str, and gne) the bytes are decoded
as UTF-8, then GB18030, then UTF-8 with replacement characters.
``trafilatura-str`` is trafilatura given that decoded str instead of bytes.

Every library runs on its default settings, except what keeps it offline
(newspaper4k: ``fetch_images=False``, no meta-refresh following, tldextract's
bundled suffix list). newspaper4k needs jieba for Chinese (``newspaper4k[zh]``).
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

Extract = Callable[[bytes, str | None], "PeerResult"]


@dataclass(slots=True)
class PeerResult:
    text: str
    title: str | None = None
    published: datetime | None = None
    authors: tuple[str, ...] = ()


def _names(value: Any) -> tuple[str, ...]:
    """A peer's author value as names: a list as it is, a string cut at ``;`` and ``,``."""
    if not value:
        return ()
    if isinstance(value, str):
        value = re.split(r"\s*[;,]\s*", value)
    return tuple(str(v).strip() for v in value if str(v).strip())


@dataclass(slots=True)
class Peer:
    name: str
    version: str
    extract: Extract


def decode(raw: bytes) -> str:
    """UTF-8, then GB18030, then UTF-8 with U+FFFD: what a simple caller does."""
    for encoding in ("utf-8", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return raw.decode("utf-8", "replace")


_DATE_RE = re.compile(
    r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?"
    r"(?:\s*T?\s*(\d{1,2})\s*[:：时]\s*(\d{1,2})(?:\s*[:：分]\s*(\d{1,2}))?)?"
)


def parse_date(value: Any) -> datetime | None:
    """A peer's date (datetime or string) as a datetime, else None.

    ISO strings go through ``datetime.fromisoformat``; others ("2019年09月07日
    13:45", "2019/9/7") through a Y-M-D[ h:m[:s]] pattern; a date alone gives
    midnight.
    """
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        pass
    m = _DATE_RE.search(value)
    if m is None:
        return None
    try:
        return datetime(*(int(g) for g in m.groups() if g is not None))
    except ValueError:
        return None


# --------------------------------------------------------------------------
# rendering HTML fragments to text, one line per block element

_BLOCKS = frozenset(
    "address article aside blockquote body br caption center dd details dialog div "
    "dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr html "
    "li main nav ol p pre section summary table tbody td tfoot th thead tr ul".split()
)
_SKIP = frozenset("script style noscript template head".split())


def html_to_lines(fragment: str) -> str:
    """Text of an HTML fragment: a line break around every block element,
    lines stripped, whitespace runs collapsed, empty lines dropped."""
    import lxml.html

    if not fragment.strip():
        return ""
    root = lxml.html.fromstring(fragment)
    parts: list[str] = []

    def walk(el: Any) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in _SKIP:
            return
        block = tag in _BLOCKS
        if block:
            parts.append("\n")
        if tag and el.text:
            parts.append(el.text)
        for child in el:
            walk(child)
            if child.tail:
                parts.append(child.tail)
        if block:
            parts.append("\n")

    walk(root)
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def _paragraphs(text: str | None) -> str:
    if not text:
        return ""
    lines = (line.strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


# --------------------------------------------------------------------------
# adapters (each factory imports its library and returns the callable)


def _trafilatura(*, decoded: bool = False) -> Peer:
    """trafilatura on the raw bytes, or (``decoded``) on a str decoded by :func:`decode`.

    Its own bytes path ignores ``<meta charset>`` and asks charset_normalizer,
    which misreads some GB pages; the decoded variant ("trafilatura-str") shows
    what it does once the caller (Scrapy's ``response.text``, say) has decoded
    the page.
    """
    import trafilatura

    def extract(raw: bytes, url: str | None) -> PeerResult:
        doc = trafilatura.bare_extraction(
            decode(raw) if decoded else raw, url=url, with_metadata=True
        )
        if doc is None:
            return PeerResult("")
        return PeerResult(
            _paragraphs(doc.text), doc.title, parse_date(doc.date), _names(doc.author)
        )

    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    name = "trafilatura-str" if decoded else "trafilatura"
    return Peer(name, trafilatura.__version__, extract)


def _trafilatura_str() -> Peer:
    return _trafilatura(decoded=True)


def _readability() -> Peer:
    from importlib.metadata import version

    from readability import Document

    def extract(raw: bytes, url: str | None) -> PeerResult:
        doc = Document(raw, url=url)
        title = doc.short_title()  # before summary(), which rewrites the tree
        return PeerResult(html_to_lines(doc.summary(html_partial=True)), title or None)

    logging.getLogger("readability").setLevel(logging.ERROR)
    return Peer("readability-lxml", version("readability-lxml"), extract)


_HAN = re.compile(r"[\u4e00-\u9fff]")
_KANA_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7a3]")


def _newspaper() -> Peer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "nltk is not installed"
        import newspaper
    import tldextract.tldextract

    # newspaper4k looks domains up with tldextract, whose first call fetches
    # the public suffix list: use the snapshot shipped with the package
    tldextract.tldextract.TLD_EXTRACTOR.suffix_list_urls = ()

    def extract(raw: bytes, url: str | None) -> PeerResult:
        html = decode(raw)
        config = newspaper.Config()
        config.fetch_images = False  # never download anything
        config.follow_meta_refresh = False
        # language: the page's own meta language, unless the page is plainly
        # Chinese (newspaper4k's default is English stop words)
        sample = html[:200_000]
        if len(_HAN.findall(sample)) > 200 and len(_KANA_HANGUL.findall(sample)) < 20:
            config.language = "zh"
        article = newspaper.Article(url or "http://localhost/article.html", config=config)
        article.download(input_html=html)
        article.parse()
        return PeerResult(
            _paragraphs(article.text),
            article.title or None,
            parse_date(article.publish_date),
            _names(list(article.authors or ())),
        )

    logging.getLogger("newspaper").setLevel(logging.ERROR)
    return Peer("newspaper4k", newspaper.__version__, extract)


def _gne() -> Peer:
    from importlib.metadata import version

    from gne import GeneralNewsExtractor

    extractor = GeneralNewsExtractor()

    def extract(raw: bytes, url: str | None) -> PeerResult:
        result = extractor.extract(decode(raw))
        return PeerResult(
            _paragraphs(result.get("content")),
            result.get("title") or None,
            parse_date(result.get("publish_time")),
            _names(result.get("author")),
        )

    return Peer("gne", version("gne"), extract)


FACTORIES: dict[str, Callable[[], Peer]] = {
    "trafilatura": _trafilatura,
    "trafilatura-str": _trafilatura_str,
    "readability-lxml": _readability,
    "newspaper4k": _newspaper,
    "gne": _gne,
}


def load_peers(names: list[str] | None = None) -> tuple[list[Peer], list[str]]:
    """The available peers (in FACTORIES order) and notes on the skipped ones."""
    peers: list[Peer] = []
    notes: list[str] = []
    for name, factory in FACTORIES.items():
        if names is not None and name not in names:
            continue
        try:
            peers.append(factory())
        except ImportError as e:
            notes.append(f"{name}: skipped, not installed ({e})")
    return peers, notes


# --------------------------------------------------------------------------
# one run of newsspider and the peers on the record gold

RECORD_DATASETS = ("cwced-zh", "cx163-zh")


def _pct(value: float | None, n: int) -> str:
    return f"{100 * value:.1f} ({n})" if value is not None and n else "-"


def record_table(reports: list[Any]) -> str:
    """Markdown: per dataset and extractor, authors right % (pages), of them the pages
    naming someone and those naming no one, origin and editor % where gold exists, F1."""
    lines = [
        "| dataset | extractor | authors | authors named | no author | origin | editor | F1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        lines.append(
            f"| {r.dataset} | {r.extractor} | {_pct(r.author_accuracy, r.author_n)} | "
            f"{_pct(r.author_named_accuracy, r.author_named_n)} | "
            f"{_pct(r.author_none_accuracy, r.author_none_n)} | "
            f"{_pct(r.origin_accuracy, r.origin_n)} | {_pct(r.editor_accuracy, r.editor_n)} | "
            f"{r.f1:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    if str(repo) not in sys.path:
        sys.path.insert(0, str(repo))
    from newsspider.evaluation import evaluate, load_cases
    from newsspider.extraction.registry import get_extractor

    parser = argparse.ArgumentParser(description="newsspider and its peers on the record gold")
    parser.add_argument("datasets", type=Path, help="folder holding the dataset folders")
    parser.add_argument("--datasets", dest="names", default=",".join(RECORD_DATASETS))
    parser.add_argument("--peers", default=None, help="peer names, comma-separated (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="write the reports here too")
    args = parser.parse_args(argv)
    peers, notes = load_peers(args.peers.split(",") if args.peers else None)
    runs: list[tuple[str, Extract]] = [("newsspider", get_extractor("blockstats"))]
    runs += [(f"{p.name} {p.version}", p.extract) for p in peers]
    reports = []
    for name in args.names.split(","):
        cases = list(load_cases(args.datasets / name))
        for label, extract in runs:
            reports.append(evaluate(cases, extract, name=label, dataset=name))
    print(record_table(reports))
    for note in notes:
        print(f"\n{note}")
    if args.json:
        args.json.write_text(
            json.dumps([r.as_dict(cases=False) for r in reports], ensure_ascii=False, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
