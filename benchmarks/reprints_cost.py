"""Reprint detection's cost: added time per stored article with 100,000 articles indexed,
and the index's bytes per article (SQLite).

    python benchmarks/reprints_cost.py "$DATASETS"                 # 100,000 indexed
    python benchmarks/reprints_cost.py "$DATASETS" --indexed 20000 --new 500
    python benchmarks/reprints_cost.py "$DATASETS" --english 0.5   # half of them English

The corpus is made from real text: the sentences of the datasets' Chinese bodies
(``benchmarks/reprints.py`` loads them), 25 to 45 drawn at random per article with 3 % of
the characters replaced, so articles are as long as news (a median of about 1,500
characters) and share sentences only by chance. ``--indexed`` of them are stored and
indexed (signatures and band keys in bulk, as ``scrapy corpus reprints --rebuild`` leaves
them); then ``--new`` more are stored one batch of 50 at a time, a fifth of them reprints
of indexed articles (a source line, 15 % of sentences edited), and ``assign_stories`` is
timed per article inside each batch's transaction, as the crawl's pipeline calls it. The
time is the process's CPU time (``time.thread_time``), because the machine is shared; wall
time is printed too. The index's size comes from SQLite's ``dbstat``: the pages of
``reprint_signatures``, ``reprint_bands`` and the index on ``articles.story_id``.

``--english SHARE``: that share of the articles, indexed and new, is made the same way
from the sentences of the datasets' English bodies (``benchmarks/reprints.py`` loads
them; 3 % of the words replaced, a paragraph every three sentences), so they are shingled
by words (``newsspider/reprints/script.py``); their reprints get a credit line and 15 %
of their sentences changed. ``--chars`` shingles every text by characters and skips the
check of its script, as the index did before: the same run's cost without them.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import re
import statistics
import sys
import tempfile
import time
from array import array
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from reprints import (  # noqa: E402
    DATASETS,
    _EN_SENTENCE,
    edit_sentences,
    en_edit_sentences,
    load_bodies,
    load_english,
)
from sqlalchemy import insert, text  # noqa: E402

from newsspider.reprints import fingerprint  # noqa: E402
from newsspider.storage import (  # noqa: E402
    Article,
    Base,
    ReprintBand,
    ReprintSignature,
    assign_stories,
    engine_for,
    transaction,
    upsert_articles,
)
from newsspider.reprints import params_from_settings  # noqa: E402
from newsspider.storage.stories import stale_signatures  # noqa: E402
from scrapy.settings import Settings  # noqa: E402

_SENTENCE = re.compile(r"[^。！？\n]{6,}[。！？]")
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def sentences(datasets: Path) -> list[str]:
    pool = []
    for _, _, body in load_bodies(datasets):
        pool.extend(_SENTENCE.findall(body))
    return pool


def article(pool: list[str], chars: list[str], rng: random.Random) -> str:
    text = list("\n".join(rng.sample(pool, rng.randint(25, 45))))
    for _ in range(len(text) * 3 // 100):
        text[rng.randrange(len(text))] = rng.choice(chars)
    return "".join(text)


def en_sentences(datasets: Path) -> list[str]:
    pool = []
    for _, _, body in load_english(datasets):
        pool.extend(m.group().strip() for m in _EN_SENTENCE.finditer(body) if len(m.group().split()) >= 6)
    return pool


def en_article(pool: list[str], words: list[str], rng: random.Random) -> str:
    picked = rng.sample(pool, rng.randint(25, 45))
    tokens = " \n".join(" ".join(picked[i : i + 3]) for i in range(0, len(picked), 3)).split(" ")
    for _ in range(len(tokens) * 3 // 100):
        tokens[rng.randrange(len(tokens))] = rng.choice(words)
    return " ".join(tokens)


def row(k: int, content: str) -> dict:
    return {
        "url": f"https://bench.example/{k}",
        "site": "bench",
        "source": "bench",
        "title": None,
        "published": T0 + timedelta(minutes=k),
        "content": content,
        "raw_text": content,
        "encoding": "utf-8",
        "content_md5": f"{k:032x}",
        "fetched_at": T0,
        "updated_at": T0,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="?", type=Path, default=DATASETS)
    ap.add_argument("--indexed", type=int, default=100_000)
    ap.add_argument("--new", type=int, default=1000)
    ap.add_argument("--db", type=Path, default=None, help="keep the database here")
    ap.add_argument("--english", type=float, default=0.0, help="share of English articles")
    ap.add_argument("--chars", action="store_true", help="every text by characters (before)")
    args = ap.parse_args()
    if not (args.datasets / "README.md").is_file():
        print(f"no datasets at {args.datasets}: nothing to measure")  # noqa: T201
        return 0
    settings = Settings()
    settings.setmodule("newsspider.settings", priority="project")  # the REPRINTS_* defaults
    params = params_from_settings(settings)
    if args.chars:  # the index before texts were shingled by script: no script check
        params = dataclasses.replace(params, words=0)
    rng = random.Random(1)
    pool = sentences(args.datasets)
    chars = [c for s in pool for c in s if "\u4e00" <= c <= "\u9fff"]
    en_pool = en_sentences(args.datasets) if args.english else []
    en_words = [w for s in en_pool for w in s.split() if w.isalpha()]

    def make() -> str:
        if en_pool and rng.random() < args.english:
            return en_article(en_pool, en_words, rng)
        return article(pool, chars, rng)

    path = args.db or Path(tempfile.mkdtemp()) / "cost.db"
    engine = engine_for(f"sqlite:///{path}")
    Base.metadata.create_all(engine)  # no search index: only the reprint index is timed
    t = time.perf_counter()
    texts: list[str] = []
    lengths = []
    english = 0
    for start in range(0, args.indexed, 1000):
        arts, sigs, bands = [], [], []
        for k in range(start, min(start + 1000, args.indexed)):
            body = make()
            texts.append(body)
            fp = fingerprint(body, params)
            lengths.append(fp.chars)
            english += fp.words
            arts.append(row(k, body) | {"id": k + 1, "story_id": k + 1})
            sig = array("I", fp.signature).tobytes() if fp.signature is not None else None
            sigs.append({"article_id": k + 1, "content_md5": f"{k:032x}", "chars": fp.chars,
                         "signature": sig})  # fmt: skip
            bands.extend({"band_key": key, "article_id": k + 1} for key in set(fp.keys))
        with transaction(engine) as s:
            s.execute(insert(Article), arts)
            s.execute(insert(ReprintSignature), sigs)
            s.execute(insert(ReprintBand), bands)
    print(f"{args.indexed} articles indexed in {time.perf_counter() - t:.0f} s ({english} "  # noqa: T201
          f"English); median {statistics.median(lengths):.0f} normalised characters "
          f"(tokens, of English)")  # fmt: skip
    with engine.connect() as conn:
        sizes = dict(conn.execute(text(
            "SELECT name, sum(pgsize) FROM dbstat WHERE name IN ('reprint_signatures', "
            "'reprint_bands', 'ix_articles_story_id') GROUP BY name")).all())  # fmt: skip
    total = sum(sizes.values())
    print(f"index: {total / args.indexed:.0f} bytes per article "  # noqa: T201
          f"({', '.join(f'{k} {v / args.indexed:.0f}' for k, v in sorted(sizes.items()))})")
    cpu: list[float] = []
    wall: list[float] = []
    grouped = 0
    new_rows = []
    for k in range(args.new):
        if k % 5 == 0:
            old = texts[rng.randrange(len(texts))]
            if fingerprint(old, params).words:
                body = "(Reuters) -\n" + en_edit_sentences(old, 0.15, rng, en_words)
            else:
                body = "来源：新华社\n" + edit_sentences(old, 0.15, rng)
        else:
            body = make()
        new_rows.append(row(args.indexed + k, body))
    for start in range(0, len(new_rows), 50):
        chunk = new_rows[start : start + 50]
        with transaction(engine) as s:
            upsert_articles(s, chunk)
            c, w = time.thread_time(), time.perf_counter()
            assign_stories(s, params, urls=[r["url"] for r in chunk])  # as the pipeline does
            cpu.append((time.thread_time() - c) * 1000 / len(chunk))
            wall.append((time.perf_counter() - w) * 1000 / len(chunk))
    with engine.connect() as conn:
        grouped = conn.execute(text(
            "SELECT count(*) FROM articles WHERE id > :n AND story_id <= :n"),
            {"n": args.indexed}).scalar()  # fmt: skip
    cpu.sort()
    print(f"{args.new} articles stored on top, {grouped} joined an indexed story "  # noqa: T201
          f"(of {len(range(0, args.new, 5))} reprints)")
    print(f"added time per article (a batch's time / its articles): CPU median "  # noqa: T201
          f"{statistics.median(cpu):.2f} ms, "
          f"p90 {cpu[len(cpu) * 9 // 10]:.2f} ms; wall median {statistics.median(wall):.2f} ms")
    c, w = time.process_time(), time.perf_counter()
    checked, stale = stale_signatures(engine, params)
    print(f"stale_signatures: {stale} stale of {checked} drawn, "  # noqa: T201
          f"{time.process_time() - c:.2f} CPU s, {time.perf_counter() - w:.2f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
