"""``benchmarks/scale.py``'s builder at a tiny size: the corpus it loads in the storage
layer's own format is one ``Corpus.search`` answers correctly (the same ids as a ``LIKE``
scan), with every row's reprint signature, band keys and story, a line table and nightly
runs; so the benchmark cannot rot silently between its runs of an hour. No timing is
asserted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from sqlalchemy import text

from newsspider.storage import Corpus, engine_for
from newsspider.storage.fts import like_pattern

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_built_corpus_answers_search_like_a_scan(datasets: Path, tmp_path: Path) -> None:
    scale = load("scale")
    url = f"sqlite:///{tmp_path / 'corpus.db'}"
    phases = scale.build(url, 2000, window=100, batch=500)
    assert any(name.startswith("FTS5 index (sync_search, 2,000 rows)") for name in phases)
    engine = engine_for(url)
    corpus = Corpus(engine, setup=False)
    scan = (
        "SELECT id FROM articles WHERE title LIKE :p ESCAPE '\\' OR content LIKE :p ESCAPE '\\' "
        "ORDER BY published DESC, id DESC LIMIT 20"
    )
    with engine.connect() as conn:
        n, stories, sigs, bands, lines, runs = conn.execute(text(
            "SELECT (SELECT count(*) FROM articles), "
            "(SELECT count(*) FROM articles WHERE story_id <> id), "
            "(SELECT count(*) FROM reprint_signatures), (SELECT count(*) FROM reprint_bands), "
            "(SELECT count(*) FROM line_counts), (SELECT count(*) FROM crawl_runs)"
        )).one()  # fmt: skip
        assert n == sigs == 2000
        assert bands >= 2000 * 40  # 42 keys an article, a few shared by reprints
        assert 100 < stories < 600  # about 15 % of the synthetic rows are reprints
        assert lines and runs
        for q, _, _ in scale.QUERIES:
            expected = list(conn.scalars(text(scan), {"p": like_pattern(q)}))
            assert [h.id for h in corpus.search(q, limit=20)] == expected, q
        # the newest rows carry real fingerprints (the write path's reprints are of them)
        assert conn.scalar(text("SELECT count(*) FROM articles WHERE id > 1900 AND story_id = id")) == 100
    hits = corpus.search("中国", site="sina", limit=5)
    assert hits and all(h.site == "sina" for h in hits)
    engine.dispose()
