"""Reprints by the script of the text (``newsspider/reprints/script.py``): a CJK text keeps
its character shingles and band keys; a text of a space-separated script is shingled by
words, so reprints of one English story are grouped, unrelated English articles of one
site and template are not, and they stop sharing LSH bands; mixed text.

The English texts are the gold bodies of scrapinghub-en (the evaluation datasets; the
tests that need them skip without them); the Chinese ones the demo's saved pages, as in
tests/test_reprints.py.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import re
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from newsspider.reprints import (
    CJK_SHARE,
    ReprintParams,
    by_words,
    codes,
    fingerprint,
    overlap,
    params_from_settings,
    shingle_codes,
    similarity,
    text_codes,
)
from newsspider.reprints.script import cjk_share, tokens, word_codes, word_shingles
from newsspider.storage import create_schema, engine_for, rebuild_stories
from newsspider.storage.stories import stale_signatures
from tests.localserver import project_settings
from tests.test_reprints import bodies, row, store, stories_of  # noqa: F401 - a fixture

PARAMS = params_from_settings(project_settings())
CHARS = dataclasses.replace(PARAMS, words=0)  # every text by characters: the index before

#: A Chinese text with Latin names and digits; its band keys as the index made them
#: before texts were shingled by script (computed with the code of commit dd5f28d).
CHINESE = (
    "新华社北京5月1日电（记者 王晓明）国务院总理今天在人民大会堂会见了来访的外国客人，"
    "双方就进一步深化两国在经济、贸易、科技和人文等领域的务实合作深入交换了意见。会见后，"
    "两国领导人共同出席了多项合作文件的签字仪式，包括Apple与华为在5G领域的联合研究协议。"
)
CHINESE_KEYS = (117461036511630071, 6022403335665275532, -5024055161710232328)

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]+[\"'”’)]*")


@pytest.fixture(scope="module")
def english(datasets: Path) -> list[str]:
    """English gold bodies of scrapinghub-en of 300 to 1,500 words."""
    out = []
    for line in open(datasets / "scrapinghub-en" / "cases.jsonl", encoding="utf-8"):
        case = json.loads(line)
        body = case.get("body") or ""
        if case.get("lang") == "en" and 300 <= len(body.split()) <= 1500:
            out.append(body)
    assert len(out) >= 40
    return out[:40]


def template(text: str, site: str = "herald") -> str:
    """One English site's template lines around a text (navigation, share bar, newsletter
    box, related links, copyright): what every article of the site shares."""
    name = site.capitalize()
    return "\n".join([
        f"Home > News > World > {name} Daily",
        "Share this article: Facebook Twitter LinkedIn Email Print",
        f"Sign up for the {name} newsletter to get the latest news and analysis delivered "
        "to your inbox every morning.",
        text,
        "Related: The biggest stories of the week and what they mean for you",
        f"© 2024 {name} Media Group. All rights reserved. Terms of Use | Privacy Policy",
    ])  # fmt: skip


def english_reprint(text: str, rng: random.Random) -> str:
    """A wire story reprinted: trimmed (the last fifth cut), re-paragraphed (paragraphs
    joined in pairs), a credit and the reprinter's template added, one sentence in eight
    changed (two words replaced)."""
    paras = [p.strip() for p in text.splitlines() if p.strip()]
    paras = [" ".join(paras[i : i + 2]) for i in range(0, len(paras), 2)]
    body = "\n".join(paras)
    body = body[: len(body) * 4 // 5]
    sentences = _SENTENCE.findall(body)
    for s in sentences[::8]:
        words = s.split()
        if len(words) > 4:
            words[1], words[-2] = "reportedly", "officials"
            body = body.replace(s, " ".join(words), 1)
    return template("(Reuters) —\n" + body + "\n(Reporting by Jane Smith; Editing by Mark Jones)",
                    site="courier")  # fmt: skip


# -- the script of a text -------------------------------------------------------------


def test_a_chinese_text_keeps_the_band_keys_it_had_before():
    params = dataclasses.replace(PARAMS, min_chars=50)
    fp = fingerprint(CHINESE, params)
    assert not fp.words and fp.chars == 119
    assert fp.keys[:3] == CHINESE_KEYS
    assert fp == fingerprint(CHINESE, dataclasses.replace(params, words=0))


def test_chinese_bodies_are_shingled_by_characters_exactly_as_before(bodies):  # noqa: F811
    for text in bodies:
        fp = fingerprint(text, PARAMS)
        assert not fp.words
        assert fp == fingerprint(text, CHARS)
        assert list(codes(fp, PARAMS)) == list(shingle_codes(fp.norm, PARAMS.shingle))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("The Federal Reserve held interest rates steady on Wednesday.", True),
        ("“Markets rallied,” said the analyst — “a relief.”", True),  # curly quotes, dash
        ("Президент заявил в среду, что переговоры продолжатся.", True),
        ("대통령은 수요일 협상이 계속될 것이라고 말했다.", True),  # Hangul: spaces between words
        ("President Xi Jinping (习近平) met the delegation in Beijing on Monday.", True),
        ("国务院总理今天会见了来访的外国客人。", False),
        ("政府は水曜日、交渉を続けると発表した。", False),  # Japanese: kana and kanji
        # a Chinese article on Python, half its lines code (the most Latin in the datasets)
        (
            "熟悉 Golang 的同学都知道，Golang 里面有一个关键词叫做defer。\nimport json\n"
            "client = redis.Redis()\nhandler = pymongo.MongoClient().test.data",
            False,
        ),
        ("", True),
    ],
)
def test_the_script_decides_the_shingles(text, words):
    assert by_words(text) is words
    assert fingerprint(text, dataclasses.replace(PARAMS, min_chars=1)).words is words


def test_the_cjk_share_counts_cjk_among_characters_that_are_not_spaces():
    assert cjk_share("abc") == 0.0
    assert cjk_share("中文 ab") == pytest.approx(2 / 4)
    assert cjk_share("中\u3000 文\n") == 1.0
    assert cjk_share("𠀀x") == pytest.approx(0.5)  # beyond the BMP (extension B)
    assert 0.002 < CJK_SHARE < 0.25  # between the datasets' most CJK English body and
    # their most Latin Chinese one (docs/reprints.md)


def test_tokens_drop_punctuation_and_case_and_split_cjk_into_characters():
    assert tokens("Xi Jinping (習近平) met Apple's CEO, ２０２４.", t2s=None, fold=None) == [
        "xi", "jinping", "習", "近", "平", "met", "apple", "s", "ceo", "２０２４",
    ]  # fmt: skip
    fp = fingerprint(
        "Xi Jinping (習近平) met Apple's CEO, ２０２４.", dataclasses.replace(PARAMS, min_chars=1)
    )
    assert fp.tokens == ("xi", "jinping", "习", "近", "平", "met", "apple", "s", "ceo", "2024")
    assert word_shingles(["a", "b", "c", "d", "e"], 4) == ["a b c d", "b c d e"]
    assert word_shingles(["a", "b"], 4) == ["a b"]
    assert word_shingles(["a", "b", "c", "d"], 3) == ["a b c", "b c d"]


_TOKENS = st.lists(st.sampled_from(["the", "of", "fed", "rates", "习", "2024"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_TOKENS, _TOKENS, st.integers(min_value=1, max_value=5))
def test_word_codes_give_the_exact_overlap_of_the_word_shingle_sets(a, b, k):
    ca, cb = word_codes(a, k), word_codes(b, k)
    assert len(ca) == len(set(word_shingles(a, k)))
    assert list(ca) == sorted(set(ca.tolist()))
    assert overlap(ca, cb) == similarity(word_shingles(a, k), word_shingles(b, k))


def test_word_and_character_codes_never_meet():
    words = text_codes("the fed held rates steady on wednesday as expected", PARAMS)
    chars = shingle_codes("thefedheldratessteadyonwednesday", 4)
    assert len(words) and len(chars) and not set(words.tolist()) & set(chars.tolist())


# -- English reprints ------------------------------------------------------------------


def test_english_reprints_are_grouped_and_other_articles_of_one_template_are_not(english, tmp_path):
    rng = random.Random(3)
    engine = engine_for(f"sqlite:///{tmp_path / 'en.db'}")
    create_schema(engine)
    originals = english[:12]
    # every original in one site's template: they share its boilerplate and common words
    store(engine, *[row(f"https://herald.example/{k}", template(t), site="herald")
                    for k, t in enumerate(originals)])  # fmt: skip
    store(engine, *[row(f"https://courier.example/{k}", english_reprint(t, rng), site="courier",
                        hours=1) for k, t in enumerate(originals)])  # fmt: skip
    ids = stories_of(engine)
    for k in range(len(originals)):
        assert ids[f"https://courier.example/{k}"] == ids[f"https://herald.example/{k}"]
    assert len({ids[f"https://herald.example/{k}"] for k in range(len(originals))}) == len(
        originals
    )


def _shared_band_pairs(texts: list[str], params: ReprintParams) -> int:
    buckets: dict[int, set[int]] = defaultdict(set)
    for k, text in enumerate(texts):
        for key in fingerprint(text, params).keys:
            buckets[key].add(k)
    return len({p for ks in buckets.values() for p in itertools.combinations(sorted(ks), 2)})


def test_unrelated_english_articles_stop_sharing_bands(english):
    """The flood: by characters, unrelated English articles of one template share LSH
    bands by the dozen; by words, a tenth of that or less (none here)."""
    texts = [template(t) for t in english]
    before = _shared_band_pairs(texts, CHARS)
    after = _shared_band_pairs(texts, PARAMS)
    assert before >= 20
    assert after * 10 <= before


# -- mixed text ------------------------------------------------------------------------


def test_mixed_texts_are_grouped_with_their_reprints(bodies, english, tmp_path):  # noqa: F811
    rng = random.Random(5)
    engine = engine_for(f"sqlite:///{tmp_path / 'mixed.db'}")
    create_schema(engine)
    # a Chinese article quoting a paragraph of English: still characters
    zh = bodies[0] + "\n" + " ".join(english[0].split()[:60])
    # an English article quoting Chinese: words, its Chinese characters tokens of their own
    en = english[1] + "\n" + "他说：" + bodies[1][:120]
    assert not fingerprint(zh, PARAMS).words and fingerprint(en, PARAMS).words
    assert {"他", "说"} <= set(fingerprint(en, PARAMS).tokens)
    zh_reprint = "来源：新华社\n" + zh.replace("国", "國") + "\n（责任编辑：王小明）"
    store(engine, row("https://a.example/zh", zh), row("https://a.example/en", en))
    store(engine, row("https://b.example/zh", zh_reprint, hours=1),
          row("https://b.example/en", english_reprint(en, rng), hours=1))  # fmt: skip
    ids = stories_of(engine)
    assert ids["https://b.example/zh"] == ids["https://a.example/zh"]
    assert ids["https://b.example/en"] == ids["https://a.example/en"]
    assert ids["https://a.example/zh"] != ids["https://a.example/en"]


# -- a corpus indexed before ---------------------------------------------------------


def test_english_rows_indexed_by_characters_are_found_stale_until_a_rebuild(
    bodies,  # noqa: F811
    english,
    tmp_path,
):
    engine = engine_for(f"sqlite:///{tmp_path / 'old.db'}")
    create_schema(engine)
    rows = [row(f"https://a.example/zh{k}", t) for k, t in enumerate(bodies[:4])]
    rows += [row(f"https://a.example/en{k}", t) for k, t in enumerate(english[:4])]
    store(engine, *rows, params=CHARS)  # indexed as before texts were shingled by script
    assert stale_signatures(engine, CHARS) == (8, 0)
    assert stale_signatures(engine, PARAMS) == (8, 4)  # the English rows, not the Chinese
    # stored again unchanged, a row is not indexed again: stale until the rebuild
    store(engine, *rows)
    assert stale_signatures(engine, PARAMS) == (8, 4)
    # a reprint of an English row is not found through its stale keys ...
    rng = random.Random(9)
    store(engine, row("https://b.example/en0", english_reprint(english[0], rng), hours=1))
    ids = stories_of(engine)
    assert ids["https://b.example/en0"] != ids["https://a.example/en0"]
    # ... and is after the rebuild, which leaves nothing stale
    assert rebuild_stories(engine, PARAMS, full=True) == 9
    assert stale_signatures(engine, PARAMS) == (9, 0)
    ids = stories_of(engine)
    assert ids["https://b.example/en0"] == ids["https://a.example/en0"]
