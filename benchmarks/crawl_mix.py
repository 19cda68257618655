"""The realistic mix: a replay archive that looks like what a Chinese news crawl meets.

``crawl_archive.py``'s archive reuses every saved page about ten times (5,000 pages from
about 500): a stress case for reprint detection, since every page has nine near-copies.
The web is not like that. This archive is built from the same real pages, but:

Stories and their copies
    Most stories appear once; :data:`REPRINTED_SHARE` (10 %) of them are reprinted, on
    2 to :data:`MAX_COPIES` (10) sites, the number of copies ``k`` drawn from a truncated
    power law ``P(k) ~ k^-ALPHA`` with ``ALPHA = 2`` (:func:`copies_distribution`).
    Why a power law: the sizes of clusters of near-duplicate web pages follow one
    (Fetterly, Manasse & Najork, "On the evolution of clusters of near-duplicate web
    pages", LA-WEB 2003): many pairs, few large clusters. Why these numbers: with them the
    mean is 3.5 copies per reprinted story, and a fifth of all pages are a later copy of a
    story already published elsewhere (:func:`expected_shares`), the share of reprints
    ``benchmarks/reprints_cost.py`` already assumes. A wire story picked up by ten portals
    exists, but is rare.
Languages
    :data:`ZH_SHARE` (90 %) of stories are Chinese, the rest English: a crawl of Chinese
    news sites meets mostly Chinese pages, and English ones from the English editions and
    bilingual sections of the same outlets. (The ten-copies archive is more than half
    English, because more of the saved pages are.)
Pages
    Every page is a real saved page of that language (its *shell*: markup, navigation,
    boilerplate, encoding) whose body paragraphs (``<p>`` elements holding 20+ Chinese
    characters, or 80+ characters of English) are replaced by the story's paragraphs,
    each as long as the one it replaces. A story's paragraphs are real sentences of the
    datasets' gold bodies of its language drawn at random, so no two stories share more
    than the odd sentence, every body line is new to the line table (as a real site's
    are), and the boilerplate of a shell repeats as a site's does. A reprint's copies
    carry the same paragraphs in different shells on different sites. Only shells on which
    the crawl's extraction finds the planted body and a title are used
    (:func:`usable_shells`), so every page of the archive is an article the crawl must
    store.

The plan (stories, copies, sites, shells) is drawn from one seeded ``random.Random``, so
an archive is the same on every run; :func:`plan_stories` is cheap and tested
(``tests/test_crawl_benchmarks.py``).
"""

from __future__ import annotations

import html
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_archive import (
    ARCHIVE_VERSION,
    DATASETS,
    Archive,
    ArchivePage,
    PoolPage,
    _pool_signature,
    host,
    page_pool,
    reuse_archive,
    write_archive,
)

#: Bumped whenever the mix changes, so a stale archive is rebuilt.
MIX_VERSION = 1
REPRINTED_SHARE = 0.10  # of stories
MAX_COPIES = 10
ALPHA = 2.0
ZH_SHARE = 0.90  # of stories
#: Sites of the mix: one per copy of the most reprinted story, so copies are on distinct sites.
MIX_SITES = MAX_COPIES
SEED = 29

_P = re.compile(r"<p(?:\s[^>]*)?>(.*?)</p\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_CJK = re.compile(r"[\u3400-\u9fff]")
_ZH_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]+[”」』]?")
_EN_SENTENCE = re.compile(r"(?<=[.!?])[\"”’]?\s+(?=[A-Z“\"])")


def copies_distribution(
    reprinted: float = REPRINTED_SHARE, alpha: float = ALPHA, max_copies: int = MAX_COPIES
) -> dict[int, float]:
    """``P(k)``, the share of stories with ``k`` copies: ``1 - reprinted`` for one, and
    ``reprinted`` spread over ``2..max_copies`` in proportion to ``k^-alpha``."""
    weights = {k: k**-alpha for k in range(2, max_copies + 1)}
    total = sum(weights.values())
    return {1: 1 - reprinted, **{k: reprinted * w / total for k, w in weights.items()}}


def expected_shares(dist: dict[int, float] | None = None) -> dict[str, float]:
    """What the distribution means for pages: copies per story, the share of pages in a
    reprinted story, and the share that repeat a story already published (not its first)."""
    dist = dist or copies_distribution()
    mean = sum(k * p for k, p in dist.items())
    return {
        "pages_per_story": mean,
        "pages_in_reprinted_stories": sum(k * p for k, p in dist.items() if k > 1) / mean,
        "pages_repeating_a_story": (mean - 1) / mean,
    }


@dataclass(frozen=True, slots=True)
class Story:
    """One story of the plan: its language and how many sites carry it."""

    lang: str
    copies: int


def plan_stories(pages: int, rng: random.Random, *, zh_share: float = ZH_SHARE) -> list[Story]:
    """Stories whose copies add up to exactly ``pages`` (the last one cut to fit)."""
    dist = copies_distribution()
    ks, ps = list(dist), list(dist.values())
    stories: list[Story] = []
    left = pages
    while left > 0:
        k = min(left, rng.choices(ks, ps)[0])
        stories.append(Story("zh" if rng.random() < zh_share else "en", k))
        left -= k
    return stories


def plan_summary(stories: Sequence[Story]) -> dict[str, Any]:
    """The drawn plan's figures, as the report states them."""
    copies = Counter(s.copies for s in stories)
    pages = sum(s.copies for s in stories)
    return {
        "stories": len(stories),
        "pages": pages,
        "stories_once": round(copies[1] / len(stories), 3) if stories else 0,
        "pages_repeating_a_story": round((pages - len(stories)) / pages, 3) if pages else 0,
        "zh_pages": round(sum(s.copies for s in stories if s.lang == "zh") / pages, 3)
        if pages
        else 0,
        "copies": dict(sorted(copies.items())),
    }


# --------------------------------------------------------------------------
# Sentences and shells


def sentences(pool: Sequence[PoolPage], lang: str) -> list[str]:
    """The distinct sentences of the gold bodies of ``lang`` (10-150 characters for
    Chinese, 40-400 for English)."""
    found: dict[str, None] = {}
    for page in pool:
        if page.lang != lang or not page.gold:
            continue
        for para in page.gold.split("\n"):
            para = " ".join(para.split())
            if lang == "zh":
                parts = [p.replace(" ", "") for p in _ZH_SENTENCE.findall(para)]
                found.update((p, None) for p in parts if 10 <= len(p) <= 150)
            else:
                parts = _EN_SENTENCE.split(para)
                found.update((p, None) for p in parts if 40 <= len(p) <= 400)
    return list(found)


@dataclass(slots=True)
class Shell:
    """A saved page decoded, with the spans of its body paragraphs' inner HTML."""

    page: PoolPage
    text: str
    codec: str
    slots: list[tuple[int, int]]  # (start, end) of each body paragraph's inner HTML
    lengths: list[int]  # characters of text each held

    def fill(self, paragraphs: Sequence[str]) -> bytes:
        """The page with ``paragraphs`` in its body slots, in its own encoding. Extra slots
        are emptied; extra paragraphs go into the last slot, one ``<br>`` apart."""
        n = len(self.slots)
        filled = [html.escape(p, quote=False) for p in paragraphs[:n]]
        if len(paragraphs) > n:
            filled[-1] = "<br>".join(html.escape(p, quote=False) for p in paragraphs[n - 1 :])
        filled += [""] * (n - len(filled))
        out, at = [], 0
        for (start, end), inner in zip(self.slots, filled, strict=True):
            out += [self.text[at:start], inner]
            at = end
        out.append(self.text[at:])
        return "".join(out).encode(self.codec, errors="xmlcharrefreplace")


def shell_of(page: PoolPage) -> Shell | None:
    """``page`` as a shell, or None when it holds fewer than three body paragraphs."""
    from newsspider.extraction.encoding import decode_html

    try:
        text, codec = decode_html(page.body, None)
    except Exception:  # a page that does not decode is no shell
        return None
    slots, lengths = [], []
    for m in _P.finditer(text):
        inner = " ".join(html.unescape(_TAG.sub("", m.group(1))).split())
        long = len(_CJK.findall(inner)) >= 20 if page.lang == "zh" else len(inner) >= 80
        if long:
            slots.append(m.span(1))
            lengths.append(len(inner))
    if len(slots) < 3:
        return None
    return Shell(page, text, codec, slots, lengths)


def paragraphs_for(
    lengths: Sequence[int], pool: Sequence[str], rng: random.Random, lang: str
) -> list[str]:
    """One paragraph per length: random sentences of ``pool`` until it is about as long."""
    glue = "" if lang == "zh" else " "
    out = []
    for length in lengths:
        parts: list[str] = []
        size = 0
        while not parts or size < 0.8 * length:
            s = rng.choice(pool)
            parts.append(s)
            size += len(s) + len(glue)
        out.append(glue.join(parts))
    return out


def usable_shells(pool: Sequence[PoolPage], lang: str, sents: Sequence[str]) -> list[Shell]:
    """The shells of ``lang`` on which the crawl's extraction (``EXTRACTOR``, default
    settings) finds a title and at least 80 % of a planted body's characters."""
    from newsspider import settings
    from newsspider.workers import extract_page

    rng = random.Random(SEED)
    out = []
    for page in pool:
        if page.lang != lang or page.dataset == "list-pages":
            continue
        shell = shell_of(page)
        if shell is None:
            continue
        paras = paragraphs_for(shell.lengths, sents, rng, lang)
        try:
            art = extract_page(settings.EXTRACTOR, shell.fill(paras), None, {}, "Asia/Shanghai", {})
        except Exception:  # a page extraction refuses is no shell
            continue
        got = "".join(art.text.split())
        planted = ["".join(p.split()) for p in paras]
        found = sum(len(p) for p in planted if p in got)
        if art.title and found >= 0.8 * sum(len(p) for p in planted):
            out.append(shell)
    return out


# --------------------------------------------------------------------------
# The archive


def mix_url(n: int, site: int) -> str:
    """Page ``n``'s URL on ``site`` (the bench sites' article pattern, 500 pages a day)."""
    day = (date(2024, 1, 1) + timedelta(days=n // 500)).strftime("%Y%m%d")
    return f"http://{host(site)}/news/{day}/a{n:07d}.html"


def build_mix_archive(
    directory: Path,
    pages: int,
    *,
    sites: int = MIX_SITES,
    per_page: int = 100,
    datasets: Path = DATASETS,
    rebuild: bool = False,
    log: bool = True,
) -> Archive:
    """Write (or reuse) the realistic mix of ``pages`` article pages over ``sites`` sites.

    Copy ``j`` of story ``i`` goes to site ``(i + j) % sites``: copies on distinct sites
    (``sites >= MAX_COPIES``), each site's pages in story order, so the copies of a story
    are crawled at about the same time on every site, as a wire story spreads.
    """
    key = {
        "version": ARCHIVE_VERSION,
        "mix": MIX_VERSION,
        "seed": SEED,
        "pages": pages,
        "sites": sites,
        "per_page": per_page,
        "pool": _pool_signature(datasets),
    }
    found = reuse_archive(directory, key, rebuild=rebuild)
    if found is not None:
        return found
    pool = page_pool(datasets)
    rng = random.Random(SEED)
    sents = {lang: sentences(pool, lang) for lang in ("zh", "en")}
    shells = {lang: usable_shells(pool, lang, sents[lang]) for lang in ("zh", "en")}
    for lang in shells:
        if not shells[lang] or not sents[lang]:
            raise SystemExit(f"no usable {lang} pages under {datasets}")
    stories = plan_stories(pages, rng)
    per_site: list[list[ArchivePage]] = [[] for _ in range(sites)]
    n = 0
    for i, story in enumerate(stories):
        chosen = rng.sample(shells[story.lang], min(story.copies, len(shells[story.lang])))
        paras = paragraphs_for(chosen[0].lengths, sents[story.lang], rng, story.lang)
        for j in range(story.copies):
            site = (i + j) % sites
            shell = chosen[j % len(chosen)]
            per_site[site].append(
                ArchivePage(site, mix_url(n, site), lambda s=shell, p=paras: s.fill(p))
            )
            n += 1
    # interleave the sites' lists, so the archive is written in crawl-like order
    ordered = [p for group in _interleave(per_site) for p in group]
    archive = write_archive(directory, key, ordered, sites, per_page, len(pool), log=log)
    return archive


def _interleave(per_site: list[list[ArchivePage]]) -> list[list[ArchivePage]]:
    longest = max((len(p) for p in per_site), default=0)
    return [[s[i] for s in per_site if i < len(s)] for i in range(longest)]


def mix_plan(pages: int) -> list[Story]:
    """The plan :func:`build_mix_archive` draws for ``pages`` pages (same seed, same order)."""
    return plan_stories(pages, random.Random(SEED))
