"""Speed and quality of newsspider's extractor against a bare-lxml floor and peers.

Usage::

    python benchmarks/extraction_speed.py DATASETS_DIR [--repeat 3] [--json out.json]
        [--datasets cwced-zh,cx163-zh] [--extractors lxml-floor,newsspider-best,trafilatura]

DATASETS_DIR is the folder holding the dataset folders (each with ``cases.jsonl``).
Every extractor runs in this one process over the same raw bytes (read once): a
warm-up pass, then ``--repeat`` timed passes with the garbage collector off; the
best pass is reported. ``newsspider-best`` and ``newsspider-paper`` are the
registry's ``blockstats`` and ``blockstats-paper``. Quality comes from
``newsspider.evaluation`` (Zou & Zhong §2 token scores) on the datasets that have
gold. Output is markdown.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
for _p in (REPO_ROOT, REPO_ROOT / "benchmarks"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from peers import load_peers  # noqa: E402

from newsspider.evaluation import DatasetReport, evaluate, load_cases  # noqa: E402
from newsspider.extraction.registry import get_extractor  # noqa: E402

FLOOR = "lxml-floor"


@dataclass(slots=True)
class _Text:
    text: str
    title: str | None = None
    published: None = None


def floor_extract(raw: bytes, url: str | None) -> _Text:
    """The floor: parse the bytes with lxml and take all their text."""
    import lxml.html

    return _Text(lxml.html.document_fromstring(raw).text_content())


def newsspider_extractors() -> list[tuple[str, str, Callable[[bytes, str | None], Any]]]:
    """Block statistics in both modes, labelled as in the tables of earlier runs."""
    return [
        ("newsspider-best", "", get_extractor("blockstats")),
        ("newsspider-paper", "", get_extractor("blockstats-paper")),
    ]


# --------------------------------------------------------------------------
# markdown


def _f(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _pct(value: float | None, n: int | None = None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" + (f" ({n})" if n is not None else "")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def dataset_table(reports: list[DatasetReport], floor: DatasetReport | None) -> str:
    labelled = any(r.body_pages or r.title_n or r.date_n for r in reports)
    header = ["extractor", "pages/s", "ms/page", "× floor time"]
    if labelled:
        header += [
            "F1",
            "micro F1",
            "P",
            "R",
            "qualified %",
            "excellent %",
            "title % (n)",
            "date % (n)",
            "date day %",
        ]
    header.append("errors")
    rows = []
    for r in reports:
        ratio = r.seconds / floor.seconds if floor and floor.seconds else None
        row = [
            r.extractor,
            _f(r.pages_per_s, ".1f"),
            _f(r.ms_per_page, ".2f"),
            _f(ratio, ".1f"),
        ]
        if labelled:
            row += [
                _f(r.f1),
                _f(r.micro_f1),
                _f(r.precision),
                _f(r.recall),
                _pct(r.qualified),
                _pct(r.excellent),
                _pct(r.title_accuracy, r.title_n) if r.title_n else "-",
                _pct(r.date_accuracy, r.date_n) if r.date_n else "-",
                _pct(r.date_day_accuracy) if r.date_n else "-",
            ]
        row.append(str(len(r.errors)))
        rows.append(row)
    return _table(header, rows)


def summary_tables(by_dataset: dict[str, list[DatasetReport]], extractors: list[str]) -> str:
    datasets = list(by_dataset)
    find = {(r.dataset, r.extractor): r for rs in by_dataset.values() for r in rs}

    # time per page relative to the floor, per dataset and overall
    header = ["extractor", *datasets, "all pages/s", "all × floor time"]
    rows = []
    floor_total = sum(find[(d, FLOOR)].seconds for d in datasets if (d, FLOOR) in find)
    for name in extractors:
        cells = []
        total_s = total_pages = 0.0
        for d in datasets:
            r, fl = find.get((d, name)), find.get((d, FLOOR))
            cells.append(_f(r.seconds / fl.seconds, ".1f") if r and fl and fl.seconds else "-")
            if r:
                total_s += r.seconds
                total_pages += r.pages
        cells.append(_f(total_pages / total_s if total_s else None, ".1f"))
        cells.append(_f(total_s / floor_total if floor_total else None, ".1f"))
        rows.append([name, *cells])
    out = [
        "Time per page as a multiple of the bare-lxml floor "
        "(parse + text_content of the same bytes):",
        "",
    ]
    out.append(_table(header, rows))

    if "newsspider-best" in extractors and "trafilatura" in extractors:
        rows = []
        for d in datasets:
            b, t = find.get((d, "newsspider-best")), find.get((d, "trafilatura"))
            if b and t and b.pages_per_s and t.pages_per_s:
                rows.append(
                    [
                        d,
                        _f(b.pages_per_s, ".1f"),
                        _f(t.pages_per_s, ".1f"),
                        _f(b.pages_per_s / t.pages_per_s, ".2f"),
                    ]
                )
        out += [
            "",
            "newsspider best mode vs trafilatura (speed ratio > 1: best is faster):",
            "",
        ]
        out.append(
            _table(
                [
                    "dataset",
                    "best pages/s",
                    "trafilatura pages/s",
                    "best / trafilatura",
                ],
                rows,
            )
        )
    return "\n".join(out)


def quality_summary(by_dataset: dict[str, list[DatasetReport]]) -> str:
    rows = []
    for d, reports in by_dataset.items():
        if not any(r.body_pages for r in reports):
            continue
        for r in reports:
            rows.append(
                [
                    d,
                    r.extractor,
                    _f(r.f1),
                    _pct(r.qualified),
                    _pct(r.excellent),
                    _pct(r.title_accuracy, r.title_n) if r.title_n else "-",
                    _pct(r.date_accuracy, r.date_n) if r.date_n else "-",
                    _f(r.pages_per_s, ".1f"),
                ]
            )
    header = [
        "dataset",
        "extractor",
        "F1",
        "qualified %",
        "excellent %",
        "title % (n)",
        "date % (n)",
        "pages/s",
    ]
    return _table(header, rows)


# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("datasets_dir", type=Path, help="folder holding the dataset folders")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="timed passes per extractor (best is reported)",
    )
    parser.add_argument(
        "--json", type=Path, help="also write every report (with per-page rows) here"
    )
    parser.add_argument("--datasets", help="comma-separated dataset folder names (default: all)")
    parser.add_argument(
        "--extractors", help="comma-separated extractor names (default: all available)"
    )
    args = parser.parse_args(argv)

    dirs = sorted(p for p in args.datasets_dir.iterdir() if (p / "cases.jsonl").is_file())
    if args.datasets:
        wanted = set(args.datasets.split(","))
        dirs = [p for p in dirs if p.name in wanted]
    if not dirs:
        print(f"no dataset folders under {args.datasets_dir}", file=sys.stderr)
        return 2

    notes: list[str] = []
    extractors: list[tuple[str, str, Callable[[bytes, str | None], Any]]] = [
        (FLOOR, "", floor_extract)
    ]
    extractors += newsspider_extractors()
    peers, peer_notes = load_peers()
    notes += peer_notes
    extractors += [(p.name, p.version, p.extract) for p in peers]
    if args.extractors:
        wanted = set(args.extractors.split(","))
        extractors = [
            e for e in extractors if e[0] in wanted or (e[0] == FLOOR and "floor" in wanted)
        ]
    names = [name for name, _, _ in extractors]

    print("# Extraction speed and quality\n")
    print(
        f"Python {platform.python_version()} on {platform.machine()}; "
        f"{args.repeat} timed passes after one warm-up,"
    )
    print(
        "garbage collector off while timing, best pass reported; "
        "times cover the extract calls only.\n"
    )
    versions = ", ".join(f"{n} {v}" for n, v, _ in extractors if v)
    if versions:
        print(f"Peers: {versions}.\n")
    for note in notes:
        print(f"- note: {note}")
    if notes:
        print()

    by_dataset: dict[str, list[DatasetReport]] = {}
    for d in dirs:
        cases = list(load_cases(d))
        size_mb = sum(len(c.html) for c in cases) / 1e6
        reports = []
        for name, _, fn in extractors:
            print(f"  running {name} on {d.name} ...", file=sys.stderr, flush=True)
            reports.append(
                evaluate(
                    cases,
                    fn,
                    name=name,
                    repeat=args.repeat,
                    warmup=True,
                    disable_gc=True,
                )
            )
        by_dataset[d.name] = reports
        floor = next((r for r in reports if r.extractor == FLOOR), None)
        labelled = sum(c.body is not None for c in cases)
        size = f"{len(cases)} pages, {size_mb:.1f} MB, body gold {labelled}"
        print(f"## {d.name} ({size})\n")
        print(dataset_table(reports, floor))
        failures = [(r.extractor, e) for r in reports for e in r.errors]
        if failures:
            print()
            for name, e in failures[:20]:
                print(f"- {name} error on {e.case_id}: {e.error}: {e.message}")
            if len(failures) > 20:
                print(f"- ... {len(failures) - 20} more errors (see --json)")
        print()

    print("## Summary\n")
    print(quality_summary(by_dataset))
    print()
    print(summary_tables(by_dataset, names))

    if args.json:
        data = {
            "python": platform.python_version(),
            "repeat": args.repeat,
            "timing": "best of the timed passes, after one warm-up pass, gc disabled",
            "extractors": {n: v for n, v, _ in extractors},
            "notes": notes,
            "reports": [r.as_dict() for rs in by_dataset.values() for r in rs],
        }
        args.json.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
