"""Reprint detection over a stored corpus: place every article in its story again, and say
where the time went.

    python benchmarks/reprints_regroup.py CORPUS.db [--batch 50] [--profile out.prof] [--chars]

Copies the SQLite corpus (``crawl_throughput.py`` leaves ``full.db`` under its ``--work``
folder, ``/tmp/newsspider-bench`` by default), forgets its stories and index, and places
its articles again in id order, ``--batch`` articles per transaction, as the crawl's
pipeline does with ``NEWS_DB_BATCH`` (``scrapy corpus reprints --rebuild`` does the same
with 500). Prints the CPU time, the stories, how many candidates were checked exactly
and how many of those checks passed, and how many candidates' texts were normalised and
shingled because the cache of shingle codes (``storage.stories.CODES``) did not hold them.
``--chars`` shingles every text by characters, as the index did before texts of
space-separated scripts were shingled by words (``newsspider/reprints/script.py``).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scrapy.settings import Settings  # noqa: E402
from sqlalchemy import text  # noqa: E402

from newsspider import settings as project_settings  # noqa: E402
from newsspider.reprints import params_from_settings  # noqa: E402
from newsspider.storage import engine_for, stories  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a SQLite corpus (it is copied, not changed)")
    parser.add_argument("--batch", type=int, default=50, help="articles per transaction")
    parser.add_argument("--profile", type=Path, help="write cProfile stats here")
    parser.add_argument("--chars", action="store_true", help="every text by characters (before)")
    args = parser.parse_args()
    if not args.corpus.is_file():
        raise SystemExit(f"no such corpus: {args.corpus}")
    settings = Settings()
    settings.setmodule(project_settings)
    params = params_from_settings(settings)
    if args.chars:
        params = dataclasses.replace(params, words=0)

    checks = {"checked": 0, "passed": 0, "shingled": 0}
    overlap, shingle_codes = stories.overlap, stories.CODES.codes.__func__

    def counted_overlap(a, b):
        value = overlap(a, b)
        checks["checked"] += 1
        checks["passed"] += value >= params.threshold
        return value

    def counted_codes(cache, content, params):
        before = cache.held, len(cache)
        codes = shingle_codes(cache, content, params)
        checks["shingled"] += (cache.held, len(cache)) != before
        return codes

    stories.overlap = counted_overlap
    stories.CodesCache.codes = counted_codes
    stories.REBUILD_BATCH = args.batch
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "corpus.db"
        shutil.copy(args.corpus, copy)
        engine = engine_for(f"sqlite:///{copy}")
        profile = cProfile.Profile() if args.profile else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profile:
            profile.enable()
        placed = stories.rebuild_stories(engine, params, full=True)
        if profile:
            profile.disable()
            profile.dump_stats(args.profile)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        with engine.connect() as conn:
            n_stories = conn.scalar(text("SELECT count(DISTINCT story_id) FROM articles"))
        engine.dispose()
    print(
        f"{placed} articles placed {args.batch} a transaction: {cpu:.1f} CPU s "
        f"({wall:.1f} s wall), {1000 * cpu / max(placed, 1):.2f} ms an article; "
        f"{n_stories} stories"
    )
    print(
        f"exact checks {checks['checked']} ({checks['passed']} passed), candidates shingled "
        f"(not in the cache) {checks['shingled']}; cache holds {len(stories.CODES)} texts"
    )


if __name__ == "__main__":
    main()
