"""benchmarks/heldout.py: folds grouped by site, and one run on a few real pages."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from newsspider.evaluation import Case, load_cases

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


heldout = load("heldout")


def case(dataset: str, i: int, site: str | None) -> Case:
    return Case(
        id=f"{dataset}-{i}", dataset=dataset, url=None, html=b"", title=None, published=None,
        body="x", site=site,
    )  # fmt: skip


def pages() -> list[Case]:
    """Two datasets sharing a site, sites of many sizes, and pages of no site."""
    out = [case("a", i, f"site{i % 7}.cn") for i in range(40)]
    out += [case("b", i, "site0.cn" if i < 5 else None) for i in range(20)]
    out += [case("c", i, f"big{i % 2}.com") for i in range(30)]
    return out


def test_a_site_never_sits_in_two_folds_across_datasets() -> None:
    cases = pages()
    folds = heldout.fold_of(cases, 5)
    by_site: dict[str, set[int]] = {}
    for c in cases:
        if c.site:
            by_site.setdefault(c.site, set()).add(folds[(c.dataset, c.id)])
    assert all(len(f) == 1 for f in by_site.values()), by_site
    # site0.cn's pages of dataset b follow its pages of dataset a
    assert folds[("b", "b-0")] == folds[("a", "a-0")]


def test_every_page_is_in_exactly_one_fold_and_siteless_pages_spread() -> None:
    cases = pages()
    folds = heldout.fold_of(cases, 5)
    assert set(folds) == {(c.dataset, c.id) for c in cases}
    assert set(folds.values()) == set(range(5))
    siteless = {folds[("b", f"b-{i}")] for i in range(5, 20)}
    assert len(siteless) > 1  # each is a group of its own, not one block
    sizes = [list(folds.values()).count(f) for f in range(5)]
    assert max(sizes) - min(sizes) <= 15  # the largest group (15 pages) bounds the imbalance


def test_folds_are_deterministic_whatever_the_order() -> None:
    cases = pages()
    assert heldout.fold_of(cases, 5) == heldout.fold_of(list(reversed(cases)), 5)
    assert heldout.fold_of(cases, 3) != heldout.fold_of(cases, 5)


def test_fewer_than_two_folds_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        heldout.assign_folds({"site:x": 1}, 1)


def test_a_run_scores_every_page_once_with_rules_chosen_elsewhere(datasets: Path) -> None:
    cases = {
        "cwced-zh": list(load_cases(datasets / "cwced-zh"))[:8],
        "magic-zh": list(load_cases(datasets / "magic-zh"))[:6],
    }
    rules = {"form_is_layout", "blog_owner"}
    result = heldout.run(cases, 2, rules)
    keys = {(n, c.id) for n, cs in cases.items() for c in cs}
    assert set(result.held) == keys == set(result.full)
    assert set(result.off) == rules and len(result.kept) == 2
    for fold in range(2):
        train = result.train_keys(fold)
        assert not set(train) & set(result.keys(fold))
        for name in rules:  # kept exactly when it gained on the other fold's pages
            gained = heldout.gain(result.full, result.off[name], train, heldout._changes(name))
            assert (name in result.kept[fold]) == (gained > heldout.EPS)
    table = heldout.report(result, list(cases))
    assert "| cwced-zh | 8 |" in table and "`blog_owner` | authors" in table
