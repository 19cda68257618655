"""Reprint benchmark: real article bodies reprinted the way portals reprint, plus hard
negatives; precision and recall per variant, the threshold curve, and short texts.

    python benchmarks/reprints.py "$DATASETS"       # the tables of docs/reprints.md
    python benchmarks/reprints.py "$DATASETS" --threshold 0.5 --min-chars 150 --seed 1

Originals are the Chinese bodies of the evaluation datasets (``DATASETS``, by default the
``shared/datasets`` folder beside the repository: the gold bodies of cwced-zh, cx163-zh, readability-fixtures-zh and
newspaper4k-fixtures-zh, and the bodies ``extract_article`` finds in gne-unlabelled-zh).
Without them the script says so and exits 0. Half of them (set A) are stored with their
reprints; the other half (set B) only serve as the body of hard negatives.

Reprint variants of each original (seeded, so every run builds the same ones):
``source_lines`` (a source line before, editor and copyright lines after), ``headline``
(a new headline line), ``paragraph_dropped`` (one paragraph of three or more cut),
``reordered`` (paragraphs shuffled), ``excerpt_half`` (the first half), ``edits_5``,
``edits_15``, ``edits_30``, ``edits_50`` (that share of sentences edited: characters
replaced, a phrase inserted or a few characters cut), ``traditional`` (OpenCC ``s2t``,
full-width digits), ``template`` (the site's template lines around it), ``combined``
(source line, headline, traditional and 15% edits together).

Hard negatives, each a different story from everything stored: ``same_site_template``
(two different articles of one site wrapped in the same template lines: both stored, they
must not group), ``same_event`` (a set B body carrying the lead and one more sentence of a
set A article, as a second agency's report of the same event shares the facts it quotes,
and the same dateline). Every other pair of stored articles counts for precision too.

English (shingled by words, ``newsspider/reprints/script.py``): the gold bodies of 200+
words of the English pages of scrapinghub-en and readability-all (Readability's synthetic
test pages left out), set A and set B as above. Variants: ``source_lines`` (a wire credit
before, a reporting/editing line and a copyright line after), ``headline``,
``paragraph_dropped``, ``reordered``, ``excerpt_half`` (trimmed to its first half),
``reparagraphed`` (paragraphs joined in pairs and long ones split at a sentence),
``edits_5`` ... ``edits_50`` (that share of sentences changed: two words replaced by words
of other articles, a phrase inserted or a few words cut), ``template`` (a site's
navigation, share bar, newsletter box, related links and copyright around it),
``combined`` (credit, headline, re-paragraphed, 15 % edits and template together). Hard
negatives: ``same_site_template`` (different articles under one site's template, ten
sites; English boilerplate and common words shared) and ``same_event`` (a set B body with
the lead and one more sentence of a set A article under a wire dateline). The English
corpus is stored on its own, so the Chinese figures are those of the Chinese corpus alone.
Candidates before and after: the pairs of stored documents that share an LSH band key,
and those of them whose signatures also pass the prefilter (the pairs checked exactly),
with every text shingled by characters (the index before word shingles) and with the
shingles chosen by script; and the exact checks ``assign_stories`` made.

Everything goes through the real thing: an in-memory SQLite corpus, ``upsert_articles``
and ``assign_stories`` batch by batch as a crawl stores them, and the story ids read back.
A pair is found when both articles end in one story; precision counts every pair of one
story whose texts are of different originals.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import opencc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsspider.extraction import extract_article  # noqa: E402
from newsspider.reprints import (  # noqa: E402
    BANDS,
    ROWS,
    SHINGLE,
    ReprintParams,
    estimate,
    estimate_overlap,
    fingerprint,
    similarity,
)
from newsspider.storage import stories as stories_module  # noqa: E402
from newsspider.storage import (  # noqa: E402
    Article,
    assign_stories,
    create_schema,
    engine_for,
    session,
    transaction,
    upsert_articles,
)

DATASETS = REPO.parent / "shared" / "datasets"
GOLD = ("cwced-zh", "cx163-zh", "readability-fixtures-zh", "newspaper4k-fixtures-zh")
EXTRACTED = ("gne-unlabelled-zh",)
VARIANTS = (
    "source_lines", "headline", "paragraph_dropped", "reordered", "excerpt_half",
    "edits_5", "edits_15", "edits_30", "edits_50", "traditional", "template", "combined",
)  # fmt: skip
SOURCES = ("来源：新华社", "来源：中国新闻网", "本文来源：人民日报客户端", "来源：央视新闻")
EDITORS = ("（责任编辑：王晓明）", "责任编辑：李娜 校对：张伟", "（编辑：陈静）")
COPYRIGHT = "版权声明：本文系转载，转载请注明出处，如有侵权请联系删除。"
INSERTS = ("据悉，", "记者了解到，", "与此同时，", "值得注意的是，", "另据报道，")
DATELINES = ("新华社北京电", "中新网电", "本报讯")
_S2T = opencc.OpenCC("s2t")
_SENTENCE = re.compile(r"[^。！？!?；\n]+[。！？!?；]?")
_FULL_DIGITS = str.maketrans("0123456789", "０１２３４５６７８９")
EN_SETS = ("scrapinghub-en", "readability-all")
EN_VARIANTS = (
    "source_lines", "headline", "paragraph_dropped", "reordered", "excerpt_half",
    "reparagraphed", "edits_5", "edits_15", "edits_30", "edits_50", "template", "combined",
)  # fmt: skip
EN_SOURCES = ("Source: Reuters", "(AP) —", "By Agence France-Presse", "Originally published by The Conversation")
EN_CREDITS = (
    "(Reporting by Jane Smith; Editing by Mark Jones)",
    "Additional reporting by the Associated Press.",
    "This story has been updated with additional information.",
)
EN_COPYRIGHT = "Copyright 2024 The Associated Press. All rights reserved. This material may not be published, broadcast, rewritten or redistributed."
EN_INSERTS = ("According to officials, ", "Meanwhile, ", "It is worth noting that ", "Reports said that ", "In addition, ")
EN_DATELINES = ("WASHINGTON (Reuters) -", "NEW YORK (AP) —", "LONDON (AFP) -")
_EN_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+[\"'”’)]*|$)")


def load_bodies(datasets: Path) -> list[tuple[str, str, str]]:
    """(dataset:id, site, body) of every Chinese body of 200+ characters."""
    out = []
    for name in GOLD:
        for case in _cases(datasets, name):
            if case.get("lang") == "zh" and case.get("body") and len(case["body"]) >= 200:
                out.append((f"{name}:{case['id']}", case.get("site") or name, case["body"]))
    for name in EXTRACTED:
        for case in _cases(datasets, name):
            raw = (datasets / name / case["html_file"]).read_bytes()
            try:
                text = extract_article(raw, case.get("url"), headers={}, tz="Asia/Shanghai").text
            except Exception:  # noqa: BLE001 - a page that is no article is left out
                continue
            if len(text) >= 200:
                out.append((f"{name}:{case['id']}", case.get("site") or name, text))
    # The datasets hold a few pages twice (one article, two captures): one of each.
    seen: set[str] = set()
    unique = []
    for key, site, body in out:
        head = re.sub(r"\s+", "", body)[:80]
        if head not in seen:
            seen.add(head)
            unique.append((key, site, body))
    return unique


def load_english(datasets: Path) -> list[tuple[str, str, str]]:
    """(dataset:id, site, body) of every English gold body of 200+ words (Readability's
    synthetic test pages left out), one of each text saved twice."""
    out = []
    seen: set[str] = set()
    for name in EN_SETS:
        for case in _cases(datasets, name):
            body = case.get("body") or ""
            if case.get("lang") != "en" or "synthetic" in (case.get("notes") or ""):
                continue
            if len(re.findall(r"\w+", body)) < 200:
                continue
            head = re.sub(r"\W+", "", body)[:80].lower()
            if head not in seen:
                seen.add(head)
                out.append((f"{name}:{case['id']}", case.get("site") or name, body))
    return out


def _cases(datasets: Path, name: str) -> list[dict]:
    path = datasets / name / "cases.jsonl"
    return [json.loads(line) for line in open(path, encoding="utf-8")] if path.is_file() else []


# -- reprint variants --------------------------------------------------------------------


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.splitlines() if p.strip()]


def edit_sentences(text: str, share: float, rng: random.Random) -> str:
    """``share`` of the sentences edited once each: characters replaced, a phrase
    inserted, or a few characters cut (what an editor's pen does to wire copy)."""
    pieces = _SENTENCE.findall(text)
    if not pieces:
        return text
    pool = [c for c in text if "\u4e00" <= c <= "\u9fff"] or ["的"]
    chosen = rng.sample(range(len(pieces)), max(1, round(share * len(pieces))))
    for k in chosen:
        s = pieces[k]
        op = rng.choice(("replace", "insert", "cut"))
        if op == "replace" and len(s) > 4:
            for _ in range(2):
                i = rng.randrange(len(s) - 1)
                s = s[:i] + rng.choice(pool) + s[i + 1 :]
        elif op == "cut" and len(s) > 10:
            i = rng.randrange(len(s) - 6)
            s = s[:i] + s[i + rng.randint(2, 6) :]
        else:
            s = rng.choice(INSERTS) + s
        pieces[k] = s
    return "".join(pieces)


def template_lines(site: str) -> list[str]:
    """A site's recurring lines (navigation, share bar, related links, copyright), the
    same for every article of the site."""
    name = site.split(".")[0]
    return [
        f"{name}首页 > 新闻中心 > 滚动新闻 > 正文",
        "分享到：微信 微博 QQ空间 手机看",
        f"扫描二维码关注{name}官方微信，获取更多新闻资讯",
        "相关阅读：国务院常务会议部署稳就业保民生工作措施",
        "相关阅读：多地出台新政支持新能源汽车消费",
        f"Copyright © 1997-2024 {name}.com 版权所有 未经授权禁止转载",
    ]


def variant(kind: str, body: str, site: str, rng: random.Random) -> str:
    paras = paragraphs(body)
    if kind == "source_lines":
        return "\n".join([rng.choice(SOURCES), *paras, rng.choice(EDITORS), COPYRIGHT])
    if kind == "headline":
        lead = _SENTENCE.findall(paras[0])[0][:18] if paras else ""
        return "\n".join([f"【关注】{lead}……", *paras])
    if kind == "paragraph_dropped":
        if len(paras) >= 3:
            paras = paras.copy()
            del paras[rng.randrange(1, len(paras))]
        return "\n".join(paras)
    if kind == "reordered":
        paras = paras.copy()
        rng.shuffle(paras)
        return "\n".join(paras)
    if kind == "excerpt_half":
        text = "\n".join(paras)
        cut = len(text) // 2
        end = max(text.rfind(p, 0, cut + 1) for p in "。！？\n")
        return text[: end + 1 if end > cut // 2 else cut]
    if kind.startswith("edits_"):
        return edit_sentences("\n".join(paras), int(kind.split("_")[1]) / 100, rng)
    if kind == "traditional":
        return _S2T.convert("\n".join(paras)).translate(_FULL_DIGITS)
    if kind == "template":
        lines = template_lines(site)
        return "\n".join([*lines[:3], *paras, *lines[3:]])
    if kind == "combined":
        text = edit_sentences("\n".join(paras), 0.15, rng)
        return _S2T.convert(f"{rng.choice(SOURCES)}\n【独家】{text[:16]}\n{text}")
    raise ValueError(kind)


def same_event(a: str, b: str, rng: random.Random) -> str:
    """A second agency's report of A's event: B's text with A's lead and one more of its
    sentences, under the same kind of dateline."""
    sa = [s for s in _SENTENCE.findall(a) if len(s) > 8]
    taken = [sa[0]] + ([rng.choice(sa[1:])] if len(sa) > 1 else [])
    pb = paragraphs(b)
    mid = len(pb) // 2
    return "\n".join([rng.choice(DATELINES) + " " + taken[0], *pb[:mid], *taken[1:], *pb[mid:]])


# -- English reprint variants -------------------------------------------------------------


def en_edit_sentences(text: str, share: float, rng: random.Random, pool: list[str]) -> str:
    """``share`` of the English sentences changed once each: two words replaced by words of
    other articles, a phrase inserted, or a few words cut."""
    lines = []
    sentences = [(n, m.group()) for n, line in enumerate(text.split("\n"))
                 for m in _EN_SENTENCE.finditer(line) if m.group().strip()]  # fmt: skip
    if not sentences:
        return text
    chosen = set(rng.sample(range(len(sentences)), max(1, round(share * len(sentences)))))
    by_line: dict[int, list[str]] = defaultdict(list)
    for k, (n, sentence) in enumerate(sentences):
        if k in chosen:
            words = sentence.split()
            op = rng.choice(("replace", "insert", "cut"))
            if op == "replace" and len(words) > 4:
                for _ in range(2):
                    words[rng.randrange(len(words))] = rng.choice(pool)
            elif op == "cut" and len(words) > 8:
                i = rng.randrange(len(words) - 4)
                del words[i : i + rng.randint(1, 3)]
            else:
                words = [*rng.choice(EN_INSERTS).split(), *words]
            sentence = " " + " ".join(words)
        by_line[n].append(sentence)
    for n in range(text.count("\n") + 1):
        if by_line.get(n):
            lines.append("".join(by_line[n]).strip())
    return "\n".join(lines)


def en_template_lines(site: str) -> list[str]:
    """An English site's recurring lines, the same for every article of the site."""
    name = site.split(".")[0].capitalize()
    return [
        f"Home > News > World > {name} Daily",
        "Share this article: Facebook Twitter LinkedIn Email Print",
        f"Sign up for the {name} newsletter to get the latest news and analysis delivered to your inbox every morning.",
        "Related: The biggest stories of the week and what they mean for you",
        "Related: Opinion: what the latest economic data tells us about the year ahead",
        f"© 2024 {name} Media Group. All rights reserved. Terms of Use | Privacy Policy | Cookie Settings | Contact Us",
    ]


def reparagraph(paras: list[str]) -> list[str]:
    """Paragraphs joined in pairs, and a long one split at a sentence boundary."""
    joined = [" ".join(paras[i : i + 2]) for i in range(0, len(paras), 2)]
    out = []
    for p in joined:
        pieces = [m.group().strip() for m in _EN_SENTENCE.finditer(p) if m.group().strip()]
        half = len(pieces) // 2
        out += [" ".join(pieces[:half]), " ".join(pieces[half:])] if len(pieces) > 5 else [p]
    return [p for p in out if p]


def en_variant(kind: str, body: str, site: str, rng: random.Random, pool: list[str]) -> str:
    paras = paragraphs(body)
    if kind == "source_lines":
        return "\n".join([rng.choice(EN_SOURCES), *paras, rng.choice(EN_CREDITS), EN_COPYRIGHT])
    if kind == "headline":
        lead = " ".join(paras[0].split()[:9]) if paras else ""
        return "\n".join([f"EXCLUSIVE: {lead}...", *paras])
    if kind == "paragraph_dropped":
        if len(paras) >= 3:
            paras = paras.copy()
            del paras[rng.randrange(1, len(paras))]
        return "\n".join(paras)
    if kind == "reordered":
        paras = paras.copy()
        rng.shuffle(paras)
        return "\n".join(paras)
    if kind == "excerpt_half":
        text = "\n".join(paras)
        cut = len(text) // 2
        end = max(text.rfind(p, 0, cut + 1) for p in ".!?\n")
        return text[: end + 1 if end > cut // 2 else cut]
    if kind == "reparagraphed":
        return "\n".join(reparagraph(paras))
    if kind.startswith("edits_"):
        return en_edit_sentences("\n".join(paras), int(kind.split("_")[1]) / 100, rng, pool)
    if kind == "template":
        lines = en_template_lines(site)
        return "\n".join([*lines[:3], *paras, *lines[3:]])
    if kind == "combined":
        lines = en_template_lines(site)
        text = en_edit_sentences("\n".join(reparagraph(paras)), 0.15, rng, pool)
        head = " ".join(text.split()[:8])
        return "\n".join([*lines[:3], rng.choice(EN_SOURCES), f"UPDATE: {head}", text, *lines[3:]])
    raise ValueError(kind)


def en_same_event(a: str, b: str, rng: random.Random) -> str:
    """Another wire's report of A's event: B's text with A's lead and one more of its
    sentences, under a wire dateline."""
    sa = [m.group().strip() for m in _EN_SENTENCE.finditer(a) if len(m.group().split()) > 5]
    taken = [sa[0]] + ([rng.choice(sa[1:])] if len(sa) > 1 else [])
    pb = paragraphs(b)
    mid = len(pb) // 2
    return "\n".join([rng.choice(EN_DATELINES) + " " + taken[0], *pb[:mid], *taken[1:], *pb[mid:]])


#: the template sites the English originals are spread over (same-site hard negatives)
EN_SITES = ("herald", "courier", "gazette", "tribune", "chronicle", "observer", "sentinel", "ledger", "times", "post")


def build_english(bodies: list[tuple[str, str, str]], seed: int) -> list[dict]:
    """The English documents, as :func:`build` makes the Chinese ones; each original of set
    A is published by one of :data:`EN_SITES`, whose template its ``template`` variant
    carries, so the ``template`` variants of one site are the same-site hard negatives."""
    rng = random.Random(seed)
    a_set, b_set = bodies[0::2], bodies[1::2]
    pool = [w for _, _, b in bodies for w in re.findall(r"[A-Za-z]{4,}", b)]
    docs: list[dict] = []
    for k, (key, _, body) in enumerate(a_set):
        site = EN_SITES[k % len(EN_SITES)]
        docs.append({"truth": key, "kind": "original", "site": site, "text": body, "hours": 0})
        for n, kind in enumerate(EN_VARIANTS):
            docs.append(
                {"truth": key, "kind": kind, "site": f"reprinter{n}", "hours": 1 + n,
                 "text": en_variant(kind, body, site, rng, pool)}
            )  # fmt: skip
        if k >= len(b_set):
            continue
        b_key, _, b_body = b_set[k]
        docs.append(
            {"truth": f"{b_key}+event", "kind": "same_event", "site": "agency", "hours": 2,
             "text": en_same_event(body, b_body, rng)}
        )  # fmt: skip
    return docs


def candidates(docs: list[dict], params: ReprintParams) -> tuple[int, int, int]:
    """(pairs sharing a band key, of them those the prefilter lets through to the exact
    check, of those the pairs of different stories): every pair of ``docs`` once."""
    fps = [fingerprint(d["text"], params) for d in docs]
    buckets: dict[int, set[int]] = defaultdict(set)
    for k, fp in enumerate(fps):
        for key in fp.keys:
            buckets[key].add(k)
    pairs: set[tuple[int, int]] = set()
    for ks in buckets.values():
        pairs.update(itertools.combinations(sorted(ks), 2))
    checked = false = 0
    for i, j in pairs:
        a, b = fps[i], fps[j]
        guess = estimate_overlap(estimate(a.signature, b.signature), a.chars, b.chars, params.shingle)
        if guess >= params.prefilter:
            checked += 1
            false += docs[i]["truth"] != docs[j]["truth"]
    return len(pairs), checked, false


# -- the run -------------------------------------------------------------------------------


def build(bodies: list[tuple[str, str, str]], seed: int) -> list[dict]:
    """Every document: text, site, its true story (``truth``) and what it is (``kind``)."""
    rng = random.Random(seed)
    a_set, b_set = bodies[0::2], bodies[1::2]
    docs: list[dict] = []
    for k, (key, site, body) in enumerate(a_set):
        docs.append({"truth": key, "kind": "original", "site": site, "text": body, "hours": 0})
        for n, kind in enumerate(VARIANTS):
            docs.append(
                {"truth": key, "kind": kind, "site": f"reprinter{n}", "hours": 1 + n,
                 "text": variant(kind, body, site, rng)}
            )  # fmt: skip
        if k >= len(b_set):
            continue
        b_key, _, b_body = b_set[k]
        docs.append(
            {"truth": f"{b_key}+event", "kind": "same_event", "site": "agency", "hours": 2,
             "text": same_event(body, b_body, rng)}
        )  # fmt: skip
    return docs


def run(docs: list[dict], params: ReprintParams, batch: int = 50) -> tuple[list[int], float, int]:
    """Store ``docs`` through ``assign_stories`` batch by batch; their story ids, the
    median milliseconds per article and the exact checks made."""
    checks = 0
    exact = stories_module.overlap

    def counted(a, b):  # noqa: ANN001, ANN202 - the exact check, counted
        nonlocal checks
        checks += 1
        return exact(a, b)

    stories_module.overlap = counted
    # a new database each run (engine_for caches an engine per URL: "sqlite://" would be
    # one in-memory database shared by every run of the process)
    engine = engine_for(f"sqlite:///{tempfile.mkdtemp(prefix='reprints-')}/corpus.db")
    create_schema(engine)
    t0 = datetime(2024, 5, 1, tzinfo=UTC)
    rows = [
        {
            "url": f"https://{d['site']}.example/{k}",
            "site": "bench",
            "source": d["site"],
            "title": None,
            "published": t0 + timedelta(hours=d["hours"], seconds=k),
            "content": d["text"],
            "raw_text": d["text"],
        }
        for k, d in enumerate(docs)
    ]
    order = list(range(len(rows)))
    random.Random(7).shuffle(order)  # crawls store reprints before or after their originals
    per_article = []
    for start in range(0, len(order), batch):
        chunk = [rows[k] for k in order[start : start + batch]]
        with transaction(engine) as s:
            upsert_articles(s, chunk)
            t = time.thread_time()
            assign_stories(s, params, urls=[r["url"] for r in chunk])
            per_article.append((time.thread_time() - t) * 1000 / len(chunk))
    with session(engine) as s:
        story = dict(s.execute(Article.__table__.select().with_only_columns(
            Article.url, Article.story_id)).all())  # fmt: skip
    stories_module.overlap = exact
    per_article.sort()
    return [story[r["url"]] for r in rows], per_article[len(per_article) // 2], checks


def evaluate(
    docs: list[dict], stories: list[int], variants: tuple[str, ...] = VARIANTS
) -> dict[str, dict[str, float]]:
    """Recall per variant, false pairs per hard negative kind, pair precision overall."""
    original = {d["truth"]: k for k, d in enumerate(docs) if d["kind"] == "original"}
    found: dict[str, list[bool]] = defaultdict(list)
    for k, d in enumerate(docs):
        if d["kind"] in variants:
            found[d["kind"]].append(stories[k] == stories[original[d["truth"]]])
    members: dict[int, list[int]] = defaultdict(list)
    for k, s in enumerate(stories):
        members[s].append(k)
    true_pairs = false_pairs = 0
    false_by_kind: dict[str, int] = defaultdict(int)
    for ks in members.values():
        for i, j in itertools.combinations(ks, 2):
            if docs[i]["truth"] == docs[j]["truth"]:
                true_pairs += 1
            else:
                false_pairs += 1
                for d in (docs[i], docs[j]):
                    false_by_kind[d["kind"]] += 1
    # same_site_template: different originals of one site, each in its site's template
    # (the ``template`` variants): a pair of them in one story is a false pair.
    template_pairs = template_false = 0
    by_site: dict[str, list[int]] = defaultdict(list)
    for k, d in enumerate(docs):
        if d["kind"] == "template":
            by_site[docs[original[d["truth"]]]["site"]].append(k)
    for ks in by_site.values():
        for i, j in itertools.combinations(ks, 2):
            template_pairs += 1
            template_false += stories[i] == stories[j]
    events = [k for k, d in enumerate(docs) if d["kind"] == "same_event"]
    return {
        "recall": {kind: sum(v) / len(v) for kind, v in found.items()},
        "counts": {kind: len(v) for kind, v in found.items()},
        "precision": true_pairs / (true_pairs + false_pairs) if true_pairs else 1.0,
        "false_pairs": false_pairs,
        "false_by_kind": dict(false_by_kind),
        "template_pairs": template_pairs,
        "template_false": template_false,
        "event_docs": len(events),
        "event_false": sum(1 for k in events if len(members[stories[k]]) > 1),
    }


def curve(
    docs: list[dict], params: ReprintParams, variants: tuple[str, ...] = VARIANTS
) -> list[tuple[float, float, float, int]]:
    """(threshold, worst recall up to 30 % edits, excerpt recall, false pairs) per
    threshold, from the exact similarity of every candidate pair (LSH band key shared)."""
    fps = [fingerprint(d["text"], params) for d in docs]
    buckets: dict[int, set[int]] = defaultdict(set)
    for k, fp in enumerate(fps):
        for key in fp.keys:
            buckets[key].add(k)
    candidates: set[tuple[int, int]] = set()
    for ks in buckets.values():
        candidates.update(itertools.combinations(sorted(ks), 2))
    sets = [set(fp.shingles) for fp in fps]
    sims = {p: similarity(sets[p[0]], sets[p[1]]) for p in candidates}
    original = {d["truth"]: k for k, d in enumerate(docs) if d["kind"] == "original"}
    hard = [k for k in variants if k not in ("edits_50", "excerpt_half")]
    rows = []
    for t in (0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9):
        recall: dict[str, list[bool]] = defaultdict(list)
        for k, d in enumerate(docs):
            if d["kind"] in variants:
                pair = tuple(sorted((k, original[d["truth"]])))
                recall[d["kind"]].append(sims.get(pair, 0.0) >= t)
        false = sum(1 for (i, j), s in sims.items() if s >= t and docs[i]["truth"] != docs[j]["truth"])
        worst = min(sum(recall[k]) / len(recall[k]) for k in hard)
        excerpt = sum(recall["excerpt_half"]) / len(recall["excerpt_half"])
        rows.append((t, worst, excerpt, false))
    return rows


def short_texts(bodies: list[tuple[str, str, str]], params: ReprintParams, seed: int) -> list[tuple[int, int, int, float]]:
    """Briefs and captions: the leads of different articles under one dateline, cut to
    each length; (length, pairs, pairs at or above the threshold, the highest overlap)."""
    rng = random.Random(seed)
    out = []
    for length in (30, 60, 100, 150, 200, 300):
        texts = []
        for _, _, body in bodies:
            lead = re.sub(r"\s+", "", body)
            # shared lines of briefs and photo captions: dateline, reporters, photo credit
            texts.append(f"{rng.choice(DATELINES)}（记者 王晓明 李娜）新华社记者 张伟 摄 {lead}"[:length])
        sets = [set(fingerprint(t, params).shingles) for t in texts]
        sims = [similarity(a, b) for a, b in itertools.combinations(sets, 2)]
        out.append((length, len(sims), sum(s >= params.threshold for s in sims), max(sims)))
    return out


def en_short_texts(bodies: list[tuple[str, str, str]], params: ReprintParams, seed: int) -> list[tuple[int, int, int, float]]:
    """:func:`short_texts` in English: the leads of different articles behind one wire
    dateline, byline and photo credit, cut to each number of words."""
    rng = random.Random(seed)
    out = []
    for length in (30, 60, 100, 150, 200, 300):
        texts = []
        for _, _, body in bodies:
            lead = f"{rng.choice(EN_DATELINES)} By John Smith and Jane Doe, Associated Press Writers. Photo: Getty Images. {body}"
            texts.append(" ".join(lead.split()[:length]))
        sets = [set(fingerprint(t, params).shingles) for t in texts]
        sims = [similarity(a, b) for a, b in itertools.combinations(sets, 2)]
        out.append((length, len(sims), sum(s >= params.threshold for s in sims), max(sims)))
    return out


def report(docs: list[dict], params: ReprintParams, variants: tuple[str, ...]) -> tuple[int, int]:
    """Print the threshold curve and the table through ``assign_stories``; the exact
    checks made and the documents."""
    print("threshold curve (exact overlap of LSH candidates):")  # noqa: T201
    print("| threshold | worst recall, variants up to 30% edits | excerpt_half recall | false pairs |")  # noqa: T201
    print("|---|---|---|---|")  # noqa: T201
    for t, worst, excerpt, false in curve(docs, params, variants):
        print(f"| {t:.2f} | {worst:.3f} | {excerpt:.3f} | {false} |")  # noqa: T201
    stories, ms, checks = run(docs, params)
    result = evaluate(docs, stories, variants)
    print("\nthrough assign_stories (SQLite, batches of 50):")  # noqa: T201
    print("| variant | pairs | recall |")  # noqa: T201
    print("|---|---|---|")  # noqa: T201
    for kind in variants:
        print(f"| {kind} | {result['counts'][kind]} | {result['recall'][kind]:.3f} |")  # noqa: T201
    print(f"\nprecision (pairs of one story from one original): {result['precision']:.4f}, "  # noqa: T201
          f"false pairs {result['false_pairs']} {result['false_by_kind']}")  # fmt: skip
    print(f"hard negatives: same_site_template {result['template_false']} of "  # noqa: T201
          f"{result['template_pairs']} pairs grouped; same_event {result['event_false']} of "
          f"{result['event_docs']} grouped")  # fmt: skip
    print(f"median assign_stories CPU time: {ms:.2f} ms per article of a batch "  # noqa: T201
          f"(13 reprints a story); exact checks {checks}")
    return checks, len(docs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="?", type=Path, default=DATASETS)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--min-chars", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--words", type=int, default=None, help="tokens per word shingle (default: WORDS)")
    ap.add_argument("--only", choices=("zh", "en"), default=None, help="one language's corpus only")
    args = ap.parse_args()
    if not (args.datasets / "README.md").is_file():
        print(f"no datasets at {args.datasets}: nothing to measure")  # noqa: T201
        return 0
    params = ReprintParams(SHINGLE, BANDS, ROWS, args.threshold, args.min_chars)
    if args.words is not None:
        params = dataclasses.replace(params, words=args.words)
    if args.only != "en":
        bodies = load_bodies(args.datasets)
        docs = build(bodies, args.seed)
        print(f"Chinese: {len(bodies)} originals ({len(bodies[0::2])} stored with their reprints), "  # noqa: T201
              f"{len(docs)} documents; shingle {SHINGLE}, {BANDS} bands x {ROWS} rows, "
              f"threshold {args.threshold}, min chars {args.min_chars}\n")  # fmt: skip
        report(docs, params, VARIANTS)
        print("\nshort texts (leads under one dateline, cut to a length):")  # noqa: T201
        print("| length | pairs | pairs >= threshold | highest overlap |")  # noqa: T201
        print("|---|---|---|---|")  # noqa: T201
        for length, pairs, over, top in short_texts(bodies, params, args.seed):
            print(f"| {length} | {pairs} | {over} | {top:.3f} |")  # noqa: T201
    if args.only == "zh":
        return 0
    en = load_english(args.datasets)
    if not en:
        print("\nno English bodies in the datasets: English skipped")  # noqa: T201
        return 0
    docs = build_english(en, args.seed)
    print(f"\nEnglish: {len(en)} originals ({len(en[0::2])} stored with their reprints), "  # noqa: T201
          f"{len(docs)} documents; word shingles of {params.words} tokens\n")
    after, n = report(docs, params, EN_VARIANTS)
    chars = dataclasses.replace(params, words=0)
    print("\nthe same English documents with every text shingled by characters (the index before):")  # noqa: T201
    before, _ = report(docs, chars, EN_VARIANTS)
    print(f"\ncandidates among the {n} English documents (every pair once):")  # noqa: T201
    print("| shingles | pairs sharing a band key | checked exactly (past the prefilter) | of them different stories | exact checks in assign_stories |")  # noqa: T201
    print("|---|---|---|---|---|")  # noqa: T201
    for name, p, checks in (("characters (before)", chars, before), ("by script: words (after)", params, after)):
        shared, checked, false = candidates(docs, p)
        print(f"| {name} | {shared} | {checked} | {false} | {checks} |")  # noqa: T201
    unrelated = [{"truth": key, "text": body} for key, _, body in en]
    pairs = len(unrelated) * (len(unrelated) - 1) // 2
    print(f"\ncandidates among the {len(en)} English originals alone ({pairs} pairs, all unrelated):")  # noqa: T201
    print("| shingles | pairs sharing a band key | checked exactly (past the prefilter) |")  # noqa: T201
    print("|---|---|---|")  # noqa: T201
    for name, p in (("characters (before)", chars), ("by script: words (after)", params)):
        shared, checked, _ = candidates(unrelated, p)
        print(f"| {name} | {shared} | {checked} |")  # noqa: T201
    print("\nEnglish short texts (leads behind one dateline, byline and credit, cut to words):")  # noqa: T201
    print("| words | pairs | pairs >= threshold | highest overlap |")  # noqa: T201
    print("|---|---|---|---|")  # noqa: T201
    for length, pairs, over, top in en_short_texts(en, params, args.seed):
        print(f"| {length} | {pairs} | {over} | {top:.3f} |")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
