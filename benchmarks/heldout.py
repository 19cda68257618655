"""Site-held-out evaluation of the best mode: k folds grouped by site.

Not a test. Every rule of ``newsspider.extraction.rules.RULES`` was written after looking at
some labelled pages, so its ablation gain on those pages (``benchmarks/ablation.py``) cannot
tell a general rule from one fitted to the pages that suggested it. Here the labelled pages
are split into ``--folds`` folds by site (a site's pages never sit in two folds, across
datasets too; a page without a site is a group of its own), and each fold's pages are scored
by the best mode with only the rules that earned their place on the OTHER folds' pages: a
rule is kept when switching it off alone lowers, on the training folds, the pooled mean of
body F1 plus, for a rule whose ``changes`` kind is ``title``, ``time`` or ``authors``, that
field's accuracy (titles right, dates right, exact authors) over the pages with its gold.

Printed: per dataset, the all-rules method beside the held-out one (F1 / title % / date % /
authors %); per rule, its gain on each fold's pages (a ``*`` marks the folds whose training
kept it), its gain per dataset, and its cross-site gain, the mean over folds of the gain it
brought to held-out pages where the other folds had kept it: a rule that helps only the
sites it was written for is kept for the other folds' sake and gains nothing there, so its
cross-site gain is nil or negative.

    python benchmarks/heldout.py DATASETS_DIR [--datasets cwced-zh,cx163-zh,...] [--folds 5]
        [--only rule_a,rule_b] [--json out.json]

One pass over every page with all rules, one with each rule off (the per-page rows are
kept, so any fold's training gain is a sum over rows), then each fold's pages once with its
rule set (none when it drops at most one rule: those rows are at hand): about (rules + 2)
passes, 47 over the six default sets' 589 pages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ablation import switches  # noqa: E402

from newsspider.evaluation import Case, CaseResult, evaluate, load_cases  # noqa: E402
from newsspider.extraction import extract_article  # noqa: E402
from newsspider.extraction.rules import RULES, switches_off  # noqa: E402

DEFAULT_DATASETS = "cwced-zh,cx163-zh,fundus-multi,magic-zh,scrapinghub-en,readability-all"
#: the CaseResult field each ``changes`` kind is read on, beside body F1
FIELD_OF = {"title": "title_ok", "time": "date_ok", "authors": "author_ok"}
#: gains at or below this are float noise, not a gain
EPS = 1e-9

Key = tuple[str, str]  # (dataset, case id)


def group_key(case: Case) -> str:
    """The fold group of a page: its site, else the page alone (a page of no known site
    shares nothing with the others that the folds could leak)."""
    return f"site:{case.site}" if case.site else f"page:{case.dataset}/{case.id}"


def _stable(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def assign_folds(groups: dict[str, int], k: int) -> dict[str, int]:
    """Each group (name: pages) to one of ``k`` folds, deterministic and balanced by pages:
    the largest groups first (ties in a hash order that does not follow the names, so one
    dataset's sites are not packed together), each into the fold with the fewest pages so
    far (ties to the lowest index)."""
    if k < 2:
        raise ValueError(f"folds must be at least 2, not {k}")
    sizes = [0] * k
    out: dict[str, int] = {}
    for name in sorted(groups, key=lambda g: (-groups[g], _stable(g))):
        fold = min(range(k), key=lambda i: (sizes[i], i))
        out[name] = fold
        sizes[fold] += groups[name]
    return out


def fold_of(cases: Iterable[Case], k: int) -> dict[Key, int]:
    """Every page's fold (by :func:`group_key`, :func:`assign_folds`)."""
    cases = list(cases)
    groups: dict[str, int] = {}
    for c in cases:
        groups[group_key(c)] = groups.get(group_key(c), 0) + 1
    folds = assign_folds(groups, k)
    return {(c.dataset, c.id): folds[group_key(c)] for c in cases}


def rows_of(cases_by_set: dict[str, list[Case]]) -> dict[Key, CaseResult]:
    """The best mode's per-page rows over every page, with the switches as they are now."""

    def extract(html: bytes, url: str | None) -> object:
        return extract_article(html, url, mode="best")

    out: dict[Key, CaseResult] = {}
    for name, cases in cases_by_set.items():
        if cases:
            report = evaluate(cases, extract, dataset=name)
            out.update({(name, row.id): row for row in report.cases})
    return out


def field_mean(rows: dict[Key, CaseResult], keys: Iterable[Key], attr: str) -> float | None:
    """The pooled mean of ``attr`` (``f1`` or a ``*_ok``) over the pages of ``keys`` that have
    its gold, None when none has."""
    values = [getattr(rows[key], attr) for key in keys]
    values = [float(v) for v in values if v is not None]
    return sum(values) / len(values) if values else None


def gain(
    full: dict[Key, CaseResult], off: dict[Key, CaseResult], keys: Sequence[Key], changes: str
) -> float:
    """A rule's gain on the pages ``keys``: body F1 with it minus without it, plus, for a
    title/time/authors rule, that field's accuracy with it minus without it."""
    total = 0.0
    for attr in ("f1", FIELD_OF.get(changes)):
        if attr is None:
            continue
        on, without = field_mean(full, keys, attr), field_mean(off, keys, attr)
        if on is not None and without is not None:
            total += on - without
    return total


@dataclass
class HeldOut:
    """One run: the folds, the rows, and what each fold kept."""

    k: int
    folds: dict[Key, int]
    full: dict[Key, CaseResult]
    held: dict[Key, CaseResult]
    off: dict[str, dict[Key, CaseResult]]
    #: every page's fold group (:func:`group_key`)
    groups: dict[Key, str] = field(default_factory=dict)
    #: per fold, the rules its training folds kept (of those considered)
    kept: list[set[str]] = field(default_factory=list)

    def keys(self, fold: int | None = None, dataset: str | None = None) -> list[Key]:
        return [
            key
            for key, f in self.folds.items()
            if (fold is None or f == fold) and (dataset is None or key[0] == dataset)
        ]

    def train_keys(self, fold: int) -> list[Key]:
        return [key for key, f in self.folds.items() if f != fold]

    def fold_gain(self, name: str, fold: int) -> float:
        """The rule's gain on the held-out fold's pages."""
        return gain(self.full, self.off[name], self.keys(fold), _changes(name))

    def dataset_gain(self, name: str, dataset: str) -> float:
        return gain(self.full, self.off[name], self.keys(dataset=dataset), _changes(name))

    def cross_site_gain(self, name: str) -> float:
        """The mean over folds of the gain the rule brought to held-out pages where the other
        folds had kept it (0 for a fold that dropped it)."""
        return sum(self.fold_gain(name, f) for f in range(self.k) if name in self.kept[f]) / (
            self.k
        )


def _changes(name: str) -> str:
    return next(r.changes for r in RULES if r.name == name)


def run(cases_by_set: dict[str, list[Case]], k: int, only: set[str] | None = None) -> HeldOut:
    """The site-held-out evaluation over ``cases_by_set`` (dataset name: its cases).

    ``only`` limits the rules considered; the others stay on in every fold.
    """
    everything = [c for cases in cases_by_set.values() for c in cases]
    folds = fold_of(everything, k)
    full = rows_of(cases_by_set)
    off: dict[str, dict[Key, CaseResult]] = {}
    for name, switch_off in switches().items():
        if only is not None and name not in only:
            continue
        with switch_off():
            off[name] = rows_of(cases_by_set)
    groups = {(c.dataset, c.id): group_key(c) for c in everything}
    result = HeldOut(k=k, folds=folds, full=full, held={}, off=off, groups=groups)
    for fold in range(k):
        train = result.train_keys(fold)
        kept = {n for n in off if gain(full, off[n], train, _changes(n)) > EPS}
        result.kept.append(kept)
        dropped = sorted(set(off) - kept)
        if len(dropped) <= 1:  # the rows of that rule set are already at hand
            rows = off[dropped[0]] if dropped else full
            result.held.update({key: rows[key] for key in result.keys(fold)})
            continue
        subset = {
            name: [c for c in cases if folds[(name, c.id)] == fold]
            for name, cases in cases_by_set.items()
        }
        with switches_off(*dropped):
            result.held.update(rows_of(subset))
    return result


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _cell(rows: dict[Key, CaseResult], keys: list[Key]) -> str:
    f1 = field_mean(rows, keys, "f1")
    return " / ".join(
        ["-" if f1 is None else f"{f1:.3f}"]
        + [_pct(field_mean(rows, keys, a)) for a in ("title_ok", "date_ok", "author_ok")]
    )


def report(result: HeldOut, names: list[str]) -> str:
    """The markdown tables of a run."""
    k = result.k
    lines = [
        "| dataset | pages | site groups | all rules: F1 / title % / date % / authors % "
        "| held-out: F1 / title % / date % / authors % |",
        "|---|---|---|---|---|",
    ]
    for name in [*names, "all pages"]:
        keys = result.keys(dataset=None if name == "all pages" else name)
        folds = {result.folds[key] for key in keys}
        groups = len({result.groups[key] for key in keys})
        lines.append(
            f"| {name} | {len(keys)} | {groups} (folds {len(folds)}) | "
            f"{_cell(result.full, keys)} | {_cell(result.held, keys)} |"
        )
    sizes = [len(result.keys(f)) for f in range(k)]
    lines += [
        "",
        f"Folds: {k}, pages per fold {sizes}.",
        "",
        "| rule | changes | kept by folds | "
        + " | ".join(f"gain fold {f}" for f in range(k))
        + " | "
        + " | ".join(f"gain {n}" for n in names)
        + " | cross-site gain |",
        "|---|---|---|" + "---|" * (k + len(names) + 1),
    ]
    for name in result.off:
        kept = sum(name in s for s in result.kept)
        cells = [
            f"{result.fold_gain(name, f):+.4f}" + ("*" if name in result.kept[f] else "")
            for f in range(k)
        ]
        cells += [f"{result.dataset_gain(name, n):+.4f}" for n in names]
        lines.append(
            f"| `{name}` | {_changes(name)} | {kept}/{k} | "
            + " | ".join(cells)
            + f" | {result.cross_site_gain(name):+.4f} |"
        )
    nil = [n for n in result.off if result.cross_site_gain(n) <= EPS]
    lines += ["", f"Cross-site gain nil or negative ({len(nil)}): {', '.join(nil) or 'none'}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets_dir", type=Path, help="folder holding the dataset folders")
    parser.add_argument("--datasets", default=DEFAULT_DATASETS)
    parser.add_argument("--folds", type=int, default=5, help="folds grouped by site")
    parser.add_argument(
        "--only", default=None, help="the rules to decide on, comma-separated (default: all)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the per-rule gains here")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    if only is not None and (unknown := only - {r.name for r in RULES}):
        raise SystemExit(f"no rule {', '.join(sorted(unknown))}")
    if args.folds < 2:
        raise SystemExit(f"--folds must be at least 2, not {args.folds}")
    names = args.datasets.split(",")
    missing = [n for n in names if not (args.datasets_dir / n / "cases.jsonl").is_file()]
    if missing:
        raise SystemExit(f"no cases.jsonl for {', '.join(missing)} in {args.datasets_dir}")
    cases = {n: list(load_cases(args.datasets_dir / n)) for n in names}
    result = run(cases, args.folds, only)
    print(report(result, names))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "folds": args.folds,
                    "kept": [sorted(s) for s in result.kept],
                    "rules": {
                        n: {
                            "folds": [result.fold_gain(n, f) for f in range(args.folds)],
                            "datasets": {d: result.dataset_gain(n, d) for d in names},
                            "cross_site": result.cross_site_gain(n),
                        }
                        for n in result.off
                    },
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
