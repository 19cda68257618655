"""Origin, editor and author gold for cx163-zh, from NetEase's own template fields.

Not a test. cx163-zh's body, title and time gold were taken from the NetEase article
template (README of the datasets); the record fields come from the same template, the
way the page itself fills them, never by hand:

- ``origin``: the text of ``a#ne_article_source`` in the ``.ep-time-soure`` line under
  the headline (``来源: <a id="ne_article_source">21世纪经济报道</a>(广州)``), else the
  value of ``本文来源：`` in the ``.ep-source`` element under the body;
- ``editor``: the value of ``责任编辑：`` in ``span.ep-editor``; ``""`` when the template
  has no such element (the page names no editor);
- ``author``: the value of ``作者：`` in ``.ep-source``, only where it is there (elsewhere
  no author gold: the template's slot being empty does not say that the body names no
  one).

Only the standard template's pages (``h1#h1title`` and ``div#endText``: the pages with
body gold) get gold. Output: one JSON object a line, sorted by id, the supplementary gold
that ``scrapy evaluate`` reads (``newsspider.evaluation.GOLD_DIR``)::

    python benchmarks/record_gold.py DATASETS_DIR [--out tests/fixtures/gold/cx163-zh.jsonl]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parents[1]
DATASET = "cx163-zh"
OUT = REPO / "tests" / "fixtures" / "gold" / f"{DATASET}.jsonl"

_PARSER = etree.HTMLParser(encoding="utf-8")
_LABELLED = re.compile(r"(本文来源|作者|责任编辑)\s*[:：]\s*")


def _text(el: etree._Element) -> str:
    return " ".join(unicodedata.normalize("NFKC", "".join(el.itertext())).split())


def _fields(text: str) -> dict[str, str]:
    """``本文来源：X 作者：Y`` as {label: value}: each value runs to the next label."""
    marks = list(_LABELLED.finditer(text))
    out: dict[str, str] = {}
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        out[m.group(1)] = text[m.end() : nxt.start() if nxt else len(text)].strip()
    return out


def template_gold(html: bytes) -> dict[str, str] | None:
    """The record gold of one NetEase page, or None when it is not the standard template."""
    root = etree.fromstring(html.decode("gb18030").encode("utf-8"), _PARSER)
    if (
        root is None
        or not root.xpath("//h1[@id='h1title']")
        or not root.xpath("//div[@id='endText']")
    ):
        return None
    gold: dict[str, str] = {}
    source_line = root.xpath("//*[contains(concat(' ',@class,' '),' ep-source ')]")
    labelled = _fields(_text(source_line[0])) if source_line else {}
    link = root.xpath("//a[@id='ne_article_source']")
    origin = _text(link[0]) if link else labelled.get("本文来源", "")
    if origin:
        gold["origin"] = origin
    editor = root.xpath("//span[contains(concat(' ',@class,' '),' ep-editor ')]")
    gold["editor"] = _fields(_text(editor[0])).get("责任编辑", "") if editor else ""
    if labelled.get("作者"):
        gold["author"] = labelled["作者"]
    return gold


def build(datasets: Path) -> list[dict[str, str]]:
    """Every gold row of cx163-zh, sorted by id."""
    folder = datasets / DATASET
    rows = []
    with open(folder / "cases.jsonl", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            case = json.loads(line)
            gold = template_gold((folder / case["html_file"]).read_bytes())
            if gold is not None:
                rows.append({"id": case["id"], **gold})
    return sorted(rows, key=lambda r: r["id"])


def dumps(rows: list[dict[str, str]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", type=Path, help="folder holding the dataset folders")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows = build(args.datasets)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dumps(rows), encoding="utf-8")
    print(f"{len(rows)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
