"""The crawl benchmarks run end to end at a tiny size (no timing is asserted).

``benchmarks/crawl_throughput.py`` and ``benchmarks/crawl_scale.py`` each build a replay
archive from the labelled datasets and crawl it in child processes; here with 60 pages, so
that a broken script is found by the test suite rather than after an hour of benchmark.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_archive_pages_are_distinct_and_cut_no_character(datasets: Path, tmp_path: Path) -> None:
    archive = load("crawl_archive")
    pool = archive.page_pool(datasets)
    assert len(pool) > 300  # every html file of every dataset
    gbk = next(p for p in pool if p.dataset == "cx163-zh")
    a, b = archive.variant(gbk.body, 1), archive.variant(gbk.body, 2)
    assert a != b and b"[1] " in a
    assert a.replace(b"[1] ", b"") == gbk.body  # only ASCII inserted, at tag ends
    a.decode("gb18030")  # still valid


def test_throughput_benchmark(datasets: Path, tmp_path: Path) -> None:
    bench = load("crawl_throughput")
    out = tmp_path / "throughput.json"
    report = bench.main(
        ["--pages", "60", "--per-page", "20", "--work", str(tmp_path), "--json", str(out)]
    )
    saved = json.loads(out.read_text())
    assert [a["kind"] for a in saved["archives"]] == ["mix", "copies"]
    for entry in report["archives"]:
        kind = entry["kind"]
        runs = {r["name"]: r for r in entry["runs"]}
        assert set(runs) == {"bare", "full"}
        assert runs["bare"]["pages"] == runs["full"]["pages"] == 60
        assert "newsspider/articles_new" not in runs["bare"]["stats"]  # no pipelines
        full = runs["full"]
        for field in ("pages_per_s", "seconds", "cpu_seconds", "peak_rss_mib", "ratio_to_bare"):
            assert full[field] is not None
        with sqlite3.connect(tmp_path / f"{kind}-full.db") as con:
            stored = con.execute("SELECT count(*) FROM articles").fetchone()[0]
        assert stored == full["stored"] == full["stats"]["newsspider/articles_new"] >= 50
        if kind == "mix":
            assert stored == 60  # every page of the mix is an article, and stored
        # the stages charged inside the crawl process, and the breakdown adding up
        assert {"line table", "storage", "search index", "reprints"} <= set(
            full["stage_cpu_seconds"]
        )
        b = full["breakdown"]
        assert abs(sum(b["cpu_seconds"].values()) - b["total_cpu_seconds"]) < 0.05
        assert 0 < b["share_fetch_extraction"] <= 1
        assert entry["share"] == b["share_fetch_extraction"]
    md = report["markdown"]
    assert "### mix" in md and "### copies" in md and "| reprints |" in md
    assert "fetch + extraction share" in md
    assert report["machine"]["nproc"] >= 1


def test_mix_plan_has_the_stated_distribution() -> None:
    """The realistic mix's plan: nine in ten stories once, the reprinted ones on 2 to 10
    sites by ``k^-2``, a fifth of pages repeating a story, nine in ten pages Chinese."""
    import random

    mix = load("crawl_mix")
    dist = mix.copies_distribution()
    assert set(dist) == set(range(1, 11)) and abs(sum(dist.values()) - 1) < 1e-12
    assert dist[1] == 0.9 and abs(dist[2] / dist[4] - 4) < 1e-9  # k^-2
    shares = mix.expected_shares(dist)
    assert 0.19 < shares["pages_repeating_a_story"] < 0.21
    stories = mix.plan_stories(200_000, random.Random(1))
    summary = mix.plan_summary(stories)
    assert summary["pages"] == 200_000
    assert abs(summary["stories_once"] - 0.9) < 0.005
    assert abs(summary["pages_repeating_a_story"] - shares["pages_repeating_a_story"]) < 0.01
    assert abs(summary["zh_pages"] - mix.ZH_SHARE) < 0.01
    assert max(summary["copies"]) == 10 and min(summary["copies"]) == 1
    assert mix.mix_plan(5000) == mix.mix_plan(5000)  # seeded: the same archive every run


def test_mix_shell_plants_a_body_in_its_own_encoding(datasets: Path) -> None:
    archive, mix = load("crawl_archive"), load("crawl_mix")
    pool = archive.page_pool(datasets)
    gbk = next(s for p in pool if p.dataset == "cx163-zh" and (s := mix.shell_of(p)))
    paras = ["第一段：新的句子。", "第二段 <b> 与 & 符号。", "第三段。", "第四段多余的。"]
    page = gbk.fill(paras[:3])
    text = page.decode("gb18030")
    assert "第二段 &lt;b&gt; 与 &amp; 符号。" in text and "第三段。" in text
    extra = gbk.fill(paras + ["多"] * len(gbk.slots))  # more paragraphs than slots
    assert "<br>多" in extra.decode("gb18030")


def test_scale_benchmark(datasets: Path, tmp_path: Path) -> None:
    bench = load("crawl_scale")
    out = tmp_path / "scale.json"
    report = bench.main(
        ["--pages", "60", "--sites", "2", "--every", "20", "--per-page", "10",
         "--work", str(tmp_path), "--json", str(out)]
    )  # fmt: skip
    saved = json.loads(out.read_text())
    assert saved["pages"] == report["pages"] == 60
    with sqlite3.connect(tmp_path / "scale.db") as con:
        stored = con.execute("SELECT count(*) FROM articles").fetchone()[0]
        sites = dict(con.execute("SELECT site, count(*) FROM articles GROUP BY site"))
    assert stored == report["stored"] >= 50
    assert set(sites) == {"bench0", "bench1"}
    points = [c for c in report["checkpoints"] if not c["final"]]
    assert [c["pages"] for c in points] == [20, 40, 60]
    for c in report["checkpoints"]:
        for field in ("seconds", "rss_mib", "peak_rss_mib", "db_mib", "line_rows", "articles"):
            assert field in c, field
    assert set(report["line_rows"]) == {"bench0", "bench1"}
    for field in ("rss_ratio", "rss_flat", "windows", "db_mib", "pages_per_s"):
        assert field in report
    assert "line rows bench0" in report["markdown"]


def test_batched_line_table_decides_like_page_by_page(tmp_path: Path) -> None:
    """``SqlLineTable.clean_batch`` (the crawl's path since the throughput work) gives the
    same results, counts, RC and prunings as ``clean``/``apply`` one page at a time."""
    import random

    from sqlalchemy.orm import Session

    from newsspider.storage import SqlLineTable, create_schema, engine_for

    rng = random.Random(7)
    boiler = [f"版权所有 {i}" for i in range(6)] + ["关注我们", "责任编辑：某某"]
    pages: list[tuple[str, bool]] = []
    for n in range(430):
        lines = [f"正文第{n}页第{j}行，内容各不相同。" for j in range(rng.randint(0, 6))]
        lines += rng.sample(boiler, rng.randint(0, 4))
        if rng.random() < 0.2:
            lines += lines[:2]  # a line twice on one page (paper mode counts it twice)
        rng.shuffle(lines)
        pages.append(("\n".join(lines), rng.random() > 0.15))

    def run(name: str, batched: bool, once: bool, size: int) -> tuple[list, Any]:
        engine = engine_for(f"sqlite:///{tmp_path / name}.db")
        create_schema(engine)
        out: list = []
        for start in range(0, len(pages), size):
            chunk = pages[start : start + size]
            with Session(engine) as s, s.begin():
                table = SqlLineTable(s, "x", L=5, once_per_page=once, prune_every=30)
                if batched:
                    out += table.clean_batch(chunk)
                else:
                    out += [table.clean(t) if learn else table.apply(t) for t, learn in chunk]
        with Session(engine) as s:
            snap = SqlLineTable(s, "x").snapshot()
        return out, (snap.LC, snap.RC, snap.pruned_at_RC)

    for once in (True, False):
        for size in (1, 7, 50, 200):
            expected = run(f"one-{once}-{size}", False, once, size)
            assert run(f"batch-{once}-{size}", True, once, size) == expected, (once, size)
