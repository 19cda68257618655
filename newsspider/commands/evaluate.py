"""``scrapy evaluate DATASET_DIR...``: score extraction on labelled datasets.

Datasets are folders in the layout of ../shared/datasets (``cases.jsonl`` and
``html/``). Per dataset: token precision/recall/F1 (each CJK character one
token, each run of letters/digits one token), qualified % and excellent % as
ALGORITHMS.md §A4 defines them, title and date accuracy over the pages whose
gold has them, pages/s. Fields the gold lacks are skipped, not counted wrong.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from newsspider.evaluation import evaluate, format_markdown, format_table
from newsspider.extraction import MODES
from newsspider.extraction.methods import DEFAULT_METHOD, METHOD_MODES, METHODS, get_method


class Command(ScrapyCommand):
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
            "--mode", choices=(*MODES, "all"), default="best", help="paper, best or all"
        )
        parser.add_argument(
            "--method",
            default=None,
            help=f"extraction method: {', '.join(METHODS)} or all (default: EXTRACTOR setting)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--markdown",
            action="store_true",
            help="print markdown tables per dataset and who wins where (README)",
        )
        parser.add_argument("--cases", action="store_true", help="with --json: per-page rows")
        parser.add_argument("--worst", type=int, default=0, help="list the N worst pages")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one dataset folder")
        dirs = [Path(a) for a in args]
        for d in dirs:
            if not (d / "cases.jsonl").is_file():
                raise UsageError(f"{d} is not a dataset folder (no cases.jsonl)")
        modes = MODES if opts.mode == "all" else (opts.mode,)
        method = opts.method or self.settings.get("EXTRACTOR", DEFAULT_METHOD)
        if method != "all" and method not in METHODS:
            raise UsageError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
        runs: list[tuple[str, Callable]] = []
        for name in METHODS if method == "all" else (method,):
            try:
                fn = get_method(name)
            except ImportError as exc:
                print(f"skipping {name}: {exc}")  # noqa: T201
                continue
            accepted = METHOD_MODES.get(name, ())
            if len(accepted) > 1:  # blockstats, visual+blockstats: one run per mode
                for mode in (m for m in modes if m in accepted):
                    runs.append((f"{name}-{mode}", partial(fn, mode=mode)))
            else:
                runs.append((name, fn))
        reports = []
        for d in dirs:
            for label, fn in runs:

                def extract(raw: bytes, url: str | None, fn: Callable = fn):
                    return fn(raw, url)

                reports.append(evaluate(d, extract, name=label, warmup=True))
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
