"""``scrapy demo`` from a bare copy of the repository: no datasets beside it, no network.

The copy holds the working tree without ``.git`` and ``data/``, in a temporary folder with
nothing beside it, so a demo that still read ``../shared`` (or anything outside the repo)
would find nothing there and fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from newsspider.demo import PAGES, START_PAGES, build_demo_archive, page_folders
from newsspider.replay import WarcIndex, replay_key
from newsspider.sites import PAPER_SITES, SITES
from newsspider.storage import Corpus

REPO = Path(__file__).resolve().parents[1]
#: Left out of the copy: history, local databases and caches are not part of a clone.
NOT_CLONED = shutil.ignore_patterns(
    ".git", "data", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "*.pyc"
)
#: The shipped pages stay "a few MB at most".
MAX_PAGES_BYTES = 3_000_000


def shipped_cases() -> dict[str, list[dict]]:
    """site folder -> its cases, as written in ``cases.jsonl``."""
    return {
        folder.name: [
            json.loads(line) for line in (folder / "cases.jsonl").read_text("utf-8").splitlines()
        ]
        for folder in page_folders(PAGES)
    }


def test_every_paper_site_has_saved_pages_on_its_own_hosts():
    cases = shipped_cases()
    assert sorted(cases) == sorted(PAPER_SITES)
    for site, site_cases in cases.items():
        assert len(site_cases) >= 2, site
        for case in site_cases:
            assert SITES[site].is_article(case["url"]), case["url"]
            assert (PAGES / site / case["html_file"]).is_file()


def test_pages_are_small_and_their_sources_are_named():
    size = sum(p.stat().st_size for p in PAGES.rglob("*") if p.is_file())
    assert size <= MAX_PAGES_BYTES
    sources = (PAGES / "SOURCES.md").read_text("utf-8")
    for site_cases in shipped_cases().values():
        for case in site_cases:
            assert case["id"] in sources or case["dataset"] in sources, case["id"]


def test_archive_holds_every_page_behind_its_sites_start_page(tmp_path):
    archive = build_demo_archive(tmp_path / "demo.warc.gz")
    cases = shipped_cases()
    assert archive.start_urls == {site: START_PAGES[site] for site in cases}
    index = WarcIndex(archive.path)
    for site, site_cases in cases.items():
        assert sorted(archive.urls[site]) == sorted(c["url"] for c in site_cases)
        for url in (*archive.urls[site], START_PAGES[site]):
            assert replay_key(url) in index.offsets, url
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.warc.gz"]


def bare_copy(parent: Path) -> Path:
    """The working tree copied alone into ``parent`` (an empty temporary folder)."""
    root = parent / "newsspider"
    shutil.copytree(REPO, root, ignore=NOT_CLONED)
    assert not (root.parent / "shared").exists()
    return root


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    return bare_copy(tmp_path_factory.mktemp("bare"))


def run_demo(clone: Path, database_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(clone)}
    return subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", "demo"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_demo_stores_and_prints_all_four_paper_sites_from_a_bare_clone(clone, tmp_path):
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    done = run_demo(clone, url)
    assert done.returncode == 0, done.stderr[-3000:]
    stats = Corpus(url).stats()
    cases = shipped_cases()
    for site in PAPER_SITES:
        assert stats.sites[site].articles == len(cases[site]), site
        assert f"[{site}]" in done.stdout
        for case in cases[site]:
            assert Corpus(url).get(case["url"]) is not None, case["url"]
    assert "not stored" not in done.stdout
    assert "shared" not in done.stdout + done.stderr

    again = run_demo(clone, url)  # re-crawled URLs update their rows
    assert again.returncode == 0, again.stderr[-3000:]
    assert Corpus(url).stats().total == stats.total
