"""``scrapy evaluate DATASET_DIR...``: score extraction on labelled datasets.

Datasets are folders holding ``cases.jsonl`` (one labelled page a line) and the
saved pages (:func:`newsspider.evaluation.load_cases`). Per dataset: token
precision/recall/F1 (each CJK character one token, each run of letters/digits one
token), qualified % and excellent % as Zou & Zhong 2011 §2 define them, title and
date accuracy over the pages whose gold has them, pages/s. Fields the gold lacks
are skipped, not counted wrong. The record fields are scored where gold exists (a
second table): authors (exact on the set of names; a page whose gold is ``""`` is right
only when none is given), origin and editor (a dataset's own gold, else the repository's
supplementary gold, ``--gold``), and the detected language against each page's ``lang``.

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
    GOLD_DIR,
    count_cases,
    evaluate,
    format_markdown,
    format_record_table,
    format_table,
    load_cases,
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
        parser.add_argument(
            "--gold",
            default=None,
            help="folder of supplementary record gold, DATASET.jsonl (default: the "
            "repository's tests/fixtures/gold)",
        )

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one dataset folder")
        dirs = [Path(a) for a in args]
        for d in dirs:
            if not (d / "cases.jsonl").is_file():
                raise UsageError(f"{d} is not a dataset folder (no cases.jsonl)")
        if opts.gold and not Path(opts.gold).is_dir():
            raise UsageError(f"--gold {opts.gold} is not a folder")
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
            gold = Path(opts.gold) if opts.gold else GOLD_DIR
            reports = []
            for d in dirs:
                cases = list(load_cases(d, gold))
                for extractor in runs:
                    reports.append(
                        evaluate(
                            cases,
                            extractor,
                            name=extractor.name,
                            dataset=d.name,
                            warmup=True,
                            progress=bar.update,
                        )
                    )
        if opts.json:
            out = [r.as_dict(cases=opts.cases) for r in reports]
            print(json.dumps(out, ensure_ascii=False, indent=2, default=str))  # noqa: T201
        elif opts.markdown:
            print(format_markdown(reports))  # noqa: T201
        else:
            print(format_table(reports))  # noqa: T201
            if record := format_record_table(reports):
                print()  # noqa: T201
                print(record)  # noqa: T201
            for r in reports:
                for e in r.errors:
                    print(f"error: {r.dataset} {e.case_id}: {e.error}: {e.message}")  # noqa: T201
                if opts.worst:
                    worst = sorted((c for c in r.cases if c.f1 is not None), key=lambda c: c.f1)
                    for c in worst[: opts.worst]:
                        print(f"  {r.dataset} {r.extractor} {c.id}: F1 {c.f1:.3f}")  # noqa: T201
        if any(r.errors for r in reports):
            self.exitcode = 1
