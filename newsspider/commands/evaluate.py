"""``scrapy evaluate DATASET_DIR...``: score extraction on labelled datasets.

Datasets are folders holding ``cases.jsonl`` (one labelled page a line) and the
saved pages (:func:`newsspider.evaluation.load_cases`). Per dataset: token
precision/recall/F1 (each CJK character one token, each run of letters/digits one
token), qualified % and excellent % as Zou & Zhong 2011 §2 define them, title and
date accuracy over the pages whose gold has them, pages/s. Fields the gold lacks
are skipped, not counted wrong.

``--method`` takes a registry name (:mod:`newsspider.extraction.registry`), several
separated by commas, or ``all``; each run is labelled with its name.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import ClassVar

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand
from newsspider.evaluation import (
    count_cases,
    evaluate,
    format_markdown,
    format_table,
    pass_count,
)
from newsspider.extraction.method import Extractor
from newsspider.extraction.registry import NAMES, get_extractor, registered
from newsspider.progress import progress_bar


class Command(NewsCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "[options] DATASET_DIR [DATASET_DIR ...]"

    def short_desc(self) -> str:
        return "Score extraction (F1, qualified/excellent, title, date, pages/s) on datasets"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--method",
            default=None,
            help=f"{', '.join(NAMES)}, several separated by commas, or all "
            "(default: the EXTRACTOR setting)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--markdown",
            action="store_true",
            help="print markdown tables per dataset and who wins where (README)",
        )
        parser.add_argument("--cases", action="store_true", help="with --json: per-page rows")
        parser.add_argument("--worst", type=int, default=0, help="list the N worst pages")

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one dataset folder")
        dirs = [Path(a) for a in args]
        for d in dirs:
            if not (d / "cases.jsonl").is_file():
                raise UsageError(f"{d} is not a dataset folder (no cases.jsonl)")
        method = opts.method or self.settings.get("EXTRACTOR")
        names = NAMES if method == "all" else tuple(method.split(","))
        try:
            for name in names:
                registered(name)
        except ValueError as exc:
            raise UsageError(f"{exc} (or all)") from None
        runs: list[Extractor] = []
        for name in names:
            try:
                runs.append(get_extractor(name))
            except ImportError as exc:
                print(f"skipping {name}: {exc}")  # noqa: T201
        # One bar: every page of every dataset, per method, warm-up pass included.
        total = sum(map(count_cases, dirs)) * len(runs) * pass_count(warmup=True)
        with progress_bar(total, desc="evaluate", unit="page") as bar:
            reports = [
                evaluate(d, extractor, name=extractor.name, warmup=True, progress=bar.update)
                for d in dirs
                for extractor in runs
            ]
        if opts.json:
            out = [r.as_dict(cases=opts.cases) for r in reports]
            print(json.dumps(out, ensure_ascii=False, indent=2, default=str))  # noqa: T201
        elif opts.markdown:
            print(format_markdown(reports))  # noqa: T201
        else:
            print(format_table(reports))  # noqa: T201
            for r in reports:
                for e in r.errors:
                    print(f"error: {r.dataset} {e.case_id}: {e.error}: {e.message}")  # noqa: T201
                if opts.worst:
                    worst = sorted((c for c in r.cases if c.f1 is not None), key=lambda c: c.f1)
                    for c in worst[: opts.worst]:
                        print(f"  {r.dataset} {r.extractor} {c.id}: F1 {c.f1:.3f}")  # noqa: T201
        if any(r.errors for r in reports):
            self.exitcode = 1
