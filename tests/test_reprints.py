"""Reprint detection (``newsspider/reprints``, ``newsspider/storage/stories.py``): the
normaliser, short texts never grouped, stories assigned as batches are stored (stable ids,
union of pairs, the earliest published as original), storing again changing nothing, a
rebuild giving the same stories, and two PostgreSQL writers storing members of one story
at the same moment.

The texts are the article bodies of the demo's real saved pages (``newsspider/demo/pages``),
extracted once per module; reprints are made from them the way portals make them.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector
from sqlalchemy import select

from newsspider.extraction import extract_article
from newsspider.pipelines.corpus import CorpusPipeline
from newsspider.reprints import (
    CodesCache,
    ReprintParams,
    fingerprint,
    normalise,
    overlap,
    params_from_settings,
    shingle_codes,
    shingle_set,
    shingles,
    similarity,
)
from newsspider.storage import (
    Article,
    Base,
    ReprintBand,
    ReprintSignature,
    assign_stories,
    collapse_ids,
    create_schema,
    engine_for,
    list_stories,
    rebuild_stories,
    reprint_stats,
    session,
    story_of,
    transaction,
    unassigned_count,
    upsert_articles,
)
from tests.localserver import project_settings

PAGES = Path(__file__).resolve().parents[1] / "newsspider" / "demo" / "pages"
PARAMS = params_from_settings(project_settings())
T0 = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def bodies() -> list[str]:
    """The demo pages' bodies of 300+ characters (9 real articles of four sites)."""
    out = []
    for site in sorted(p.name for p in PAGES.iterdir() if p.is_dir()):
        for line in open(PAGES / site / "cases.jsonl", encoding="utf-8"):
            case = json.loads(line)
            raw = (PAGES / site / case["html_file"]).read_bytes()
            text = extract_article(raw, case["url"], headers={}, tz="Asia/Shanghai").text
            if len(text) >= 300:
                out.append(text)
    assert len(out) >= 8
    return out


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'corpus.db'}"
    else:
        url = request.getfixturevalue("postgresql_url")
        Base.metadata.drop_all(engine_for(url))
    eng = engine_for(url)
    create_schema(eng)
    return eng


def row(url: str, content: str, *, site: str = "netease", hours: float = 0) -> dict:
    return {
        "url": url,
        "site": site,
        "source": site,
        "title": content[:12],
        "published": T0 + timedelta(hours=hours),
        "content": content,
        "raw_text": content,
        "encoding": "utf-8",
    }


def store(engine, *rows: dict, params: ReprintParams = PARAMS) -> None:
    """What the corpus pipeline does with a batch: upsert, then stories, one transaction."""
    with transaction(engine) as s:
        upsert_articles(s, list(rows))
        assign_stories(s, params, urls=[r["url"] for r in rows])


def stories_of(engine) -> dict[str, int]:
    with session(engine) as s:
        return dict(s.execute(select(Article.url, Article.story_id)).all())


def reprint(text: str) -> str:
    """A portal's reprint: a source line, traditional script in part, full-width digits,
    the last paragraph cut and an editor line."""
    lines = [line for line in text.splitlines() if line.strip()]
    kept = lines[:-1] if len(lines) > 3 else lines
    body = "\n".join(kept).replace("国", "國").replace("发", "發").replace("1", "１")
    return "来源：新华社\n" + body + "\n（责任编辑：王小明）"


# -- the text side -------------------------------------------------------------------


def test_normalise_converts_script_width_and_drops_punctuation():
    assert normalise("國務院 總理，ＡＢＣ１２３　發表「講話」。\n") == "国务院总理abc123发表讲话"
    assert normalise("") == normalise(None) == ""


def test_reprint_is_similar_and_other_articles_are_not(bodies):
    a = fingerprint(bodies[0], PARAMS)
    b = fingerprint(reprint(bodies[0]), PARAMS)
    assert similarity(a.shingles, b.shingles) >= 0.9
    for other in bodies[1:]:
        assert similarity(a.shingles, fingerprint(other, PARAMS).shingles) < PARAMS.threshold
    codes = [shingle_codes(fp.norm, PARAMS.shingle) for fp in (a, b)]
    assert overlap(*codes) == similarity(a.shingles, b.shingles)


# letters of the BMP and beyond it (CJK Extension B), digits: what a normalised text holds
_NORMALISED = st.text(alphabet="ab中文字国𠀀𠀁12", max_size=14)


@settings(max_examples=300, deadline=None)
@given(_NORMALISED, _NORMALISED, st.integers(min_value=1, max_value=6))
def test_shingle_codes_give_the_exact_overlap_of_the_shingle_sets(a, b, k):
    ca, cb = shingle_codes(a, k), shingle_codes(b, k)
    assert len(ca) == len(shingle_set(a, k))  # one code per distinct shingle
    assert list(ca) == sorted(set(ca.tolist()))
    assert overlap(ca, cb) == similarity(shingle_set(a, k), shingle_set(b, k))


def test_codes_cache_is_keyed_by_text_and_bounded():
    cache = CodesCache(max_codes=100)
    first = cache.codes("新华社北京电国务院总理发表讲话", PARAMS)
    assert cache.codes("新华社北京电国务院总理发表讲话", PARAMS) is first  # held
    changed = cache.codes("新华社北京电国务院总理发表谈话", PARAMS)  # the text changed: new codes
    assert changed is not first and overlap(first, changed) < 1.0
    other_k = dataclasses.replace(PARAMS, shingle=3)
    assert cache.codes("新华社北京电国务院总理发表讲话", other_k) is not first  # another k
    for n in range(20):  # 20 texts of 11 or 12 codes each: the oldest go
        cache.codes(f"第{n}篇文章的正文内容在这里", PARAMS)
    assert cache.held <= 100 and len(cache) <= 100 // 11
    assert cache.codes("新华社北京电国务院总理发表讲话", PARAMS) is not first


def test_short_and_empty_texts_get_no_band_keys():
    short = "新华社北京5月1日电 今天是劳动节。"
    assert not fingerprint(short, PARAMS).grouped
    assert not fingerprint("", PARAMS).grouped
    assert fingerprint(short, PARAMS).keys == ()
    assert shingles("", 4) == []


# -- stories in SQL ------------------------------------------------------------------


def test_reprints_share_a_story_with_a_stable_id_and_the_earliest_is_original(engine, bodies):
    a, b, c = bodies[0], bodies[1], bodies[2]
    store(engine, row("https://news.163.com/a", a, hours=2), row("https://news.163.com/b", b))
    first = stories_of(engine)
    assert first["https://news.163.com/a"] != first["https://news.163.com/b"]
    story = first["https://news.163.com/a"]
    # a reprint on another site, later, joins the story; the story keeps its id
    store(engine, row("https://news.sina.com.cn/a", reprint(a), site="sina", hours=5))
    # an earlier copy crawled later becomes the original, the id still the same
    store(engine, row("https://new.qq.com/a", reprint(a), site="tencent", hours=-3),
          row("https://new.qq.com/c", c, site="tencent"))  # fmt: skip
    ids = stories_of(engine)
    assert ids["https://news.sina.com.cn/a"] == ids["https://new.qq.com/a"] == story
    assert ids["https://new.qq.com/c"] not in (story, ids["https://news.163.com/b"])
    listed = list(list_stories(engine, PARAMS))
    assert [s.id for s in listed] == [story]
    assert listed[0].original.url == "https://new.qq.com/a"
    assert [m.site for m in listed[0].members] == ["tencent", "netease", "sina"]
    assert all(m.similarity >= PARAMS.threshold for m in listed[0].members)
    assert [s.id for s in list_stories(engine, PARAMS, site="sina")] == [story]
    assert list(list_stories(engine, PARAMS, since=T0 + timedelta(days=1))) == []
    shown = story_of(engine, listed[0].members[1].id, PARAMS)
    assert shown is not None and shown.id == story
    stats = reprint_stats(engine)
    assert stats.reprints == {"netease": 1, "sina": 1}
    assert stats.originals == {"tencent": 1}
    assert ("tencent", "sina", 1) in stats.pairs and ("tencent", "netease", 1) in stats.pairs
    hits = collapse_ids(engine, [listed[0].members[0].id])
    assert hits[listed[0].members[0].id] == (story, ["netease", "sina", "tencent"])


def test_storing_again_changes_nothing_and_a_rebuild_gives_the_same_stories(engine, bodies):
    rows = [row(f"https://news.163.com/{k}", t) for k, t in enumerate(bodies[:4])]
    rows += [row(f"https://news.sina.com.cn/{k}", reprint(t), site="sina", hours=1)
             for k, t in enumerate(bodies[:3])]  # fmt: skip
    store(engine, *rows[:4])
    store(engine, *rows[4:])
    before = stories_of(engine)
    with session(engine) as s:
        bands = s.execute(select(ReprintBand.band_key, ReprintBand.article_id)).all()
    store(engine, *rows)
    assert stories_of(engine) == before
    with session(engine) as s:
        assert sorted(s.execute(select(ReprintBand.band_key, ReprintBand.article_id)).all()) == (
            sorted(bands)
        )
    assert len(set(before.values())) == 4
    assert rebuild_stories(engine, PARAMS, full=True) == 7
    assert stories_of(engine) == before
    assert unassigned_count(engine) == 0


def test_short_bodies_are_never_grouped(engine):
    brief = "新华社北京5月1日电 国务院今天召开常务会议。"
    store(engine, row("https://news.163.com/s", brief), row("https://news.sina.com.cn/s", brief))
    ids = stories_of(engine)
    assert len(set(ids.values())) == 2
    with session(engine) as s:
        assert s.scalars(select(ReprintSignature.signature)).all() == [None, None]
    assert list(list_stories(engine, PARAMS)) == []


def test_an_article_whose_text_changes_is_indexed_again(engine, bodies):
    store(engine, row("https://news.163.com/a", bodies[0]), row("https://news.163.com/b", bodies[1]))
    store(engine, row("https://news.sina.com.cn/x", bodies[2], site="sina"))
    story_b = stories_of(engine)["https://news.163.com/b"]
    # the sina page is re-crawled and now carries a reprint of b
    store(engine, row("https://news.sina.com.cn/x", reprint(bodies[1]), site="sina"))
    assert stories_of(engine)["https://news.sina.com.cn/x"] == story_b


def test_two_stories_joined_by_one_article_merge_into_the_older_id(engine, bodies):
    a = bodies[3]
    half = len(a) // 2
    first, second = a[: half + 60], a[half - 60 :]
    store(engine, row("https://news.163.com/1", first))
    store(engine, row("https://news.163.com/2", second))
    ids = stories_of(engine)
    assert ids["https://news.163.com/1"] != ids["https://news.163.com/2"]
    store(engine, row("https://news.sina.com.cn/whole", a, site="sina"))
    ids = stories_of(engine)
    assert len(set(ids.values())) == 1
    assert set(ids.values()) == {min(ids.values())}


def test_the_pipeline_assigns_stories_per_batch(tmp_path, bodies):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    settings = project_settings(DATABASE_URL=url, NEWS_DB_BATCH=2)
    pipe = CorpusPipeline.from_settings(settings, stats=StatsCollector(Crawler(Spider)))
    pipe.open_spider(None)
    fetched = datetime.now(UTC)
    for k, text in enumerate([bodies[0], bodies[1], reprint(bodies[0])]):
        item = row(f"https://news.163.com/p{k}", text) | {"fetched_at": fetched}
        item.pop("content")
        pipe.process_item(item)
    pipe.close_spider()
    ids = stories_of(engine_for(url))
    assert ids["https://news.163.com/p0"] == ids["https://news.163.com/p2"] != ids[
        "https://news.163.com/p1"
    ]
    off = CorpusPipeline.from_settings(project_settings(DATABASE_URL=url, REPRINTS_ENABLED=False))
    assert off.reprints is None


def test_two_postgresql_writers_storing_one_story_at_once(request, bodies):
    url = request.getfixturevalue("postgresql_url")
    Base.metadata.drop_all(engine_for(url))
    eng = engine_for(url)
    create_schema(eng)
    for round_ in range(3):
        text = bodies[round_]
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def writer(k: int, text: str = text, barrier: threading.Barrier = barrier) -> None:
            try:
                with transaction(eng) as s:
                    # two sites: writers of one site wait for each other on its row of
                    # article_counts (kept by triggers) before the reprint lock is reached
                    r = row(f"https://site{k}.example/{round_}", reprint(text) if k else text,
                            site=f"site{k}")  # fmt: skip
                    upsert_articles(s, [r])
                    barrier.wait(timeout=10)
                    assign_stories(s, PARAMS, urls=[r["url"]])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        ids = stories_of(eng)
        assert ids[f"https://site0.example/{round_}"] == ids[f"https://site1.example/{round_}"]
    assert len(list(list_stories(eng, PARAMS))) == 3
