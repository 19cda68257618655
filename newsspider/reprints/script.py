"""Which shingles a text gets, by the script it is written in (docs/reprints.md).

Character ``k``-grams suit Chinese and Japanese: they have no spaces to split words on, and
two unrelated CJK texts share few 4-grams among thousands of characters. They do not suit
space-separated scripts: with the spaces dropped, two unrelated English texts share many
character 4-grams (``tion``, ``ther``, ``ofth``), so their signatures share LSH bands and
nine in ten candidates of a crawl of mixed pages were unrelated English pairs, each
checked exactly for nothing (docs/benchmarks.md). A text of a space-separated script is
therefore shingled by **words**: ``k`` consecutive tokens, lower-cased, punctuation
dropped, the way near-duplicate detection on the Web shingles English (Broder et al. 1997
§2).

The choice is made per text, cheaply (:func:`by_words`): the share of CJK characters (Han,
kana) among the text's characters that are not white space. A Chinese or Japanese text is
shingled by characters exactly as before, so its band keys do not change; any other text
(Latin, Cyrillic, Greek, Arabic, Hangul, ...) by words.

Mixed text: the threshold, :data:`CJK_SHARE`, sits at a tenth. The most Latin of the
datasets' Chinese bodies (a WeChat article on Python, half its lines code) has a CJK share
of 0.25, and the most CJK of their English bodies 0.002 (a quoted name), so either side of
a tenth is far from both, and a reprint, which adds its own language's source lines and
template, moves a text away from the threshold rather than across it. A text in between
is mostly another script with some Chinese in it: it is shingled by words, and in word
shingles every CJK character (and every character of the other scripts written without
spaces: Thai, Lao, Khmer, Myanmar) is a token on its own, so the Chinese part of a mixed
text still gives shingles of characters rather than of whole clauses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

__all__ = ["CJK_SHARE", "by_words", "cjk_share", "tokens", "word_codes", "word_shingles"]

#: The share of CJK characters among a text's non-space characters from which it is
#: shingled by characters (below it: by words). A constant, not a setting: the stored band
#: keys depend on it (a change needs ``scrapy corpus reprints --rebuild``).
CJK_SHARE = 0.1

# Han (the CJK blocks and their extensions, compatibility ideographs) and kana: what is
# counted as CJK. Hangul is not: Korean puts spaces between words.
_CJK_RANGES = (
    (0x3040, 0x3100),  # hiragana, katakana
    (0x31F0, 0x3200),  # katakana phonetic extensions
    (0x3400, 0x4DC0),  # CJK extension A
    (0x4E00, 0xA000),  # CJK unified ideographs
    (0xF900, 0xFB00),  # CJK compatibility ideographs
    (0xFF66, 0xFFA0),  # half-width katakana
    (0x20000, 0x323B0),  # CJK extensions B to H, compatibility supplement
)
# white space, not counted in the share (U+3000 is the ideographic space)
_SPACE_RANGES = ((0x09, 0x0E), (0x20, 0x21), (0xA0, 0xA1), (0x3000, 0x3001))
_CJK_CLASS = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U000323af"
)
# Scripts written without spaces between words, beside CJK: each character one token.
_UNSPACED_CLASS = _CJK_CLASS + "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
#: a token of a word-shingled text: one character of a script without spaces, or a run of
#: other letters and digits (punctuation, symbols and the low line split words)
_TOKEN = re.compile(rf"[{_UNSPACED_CLASS}]|[^\W_{_UNSPACED_CLASS}]+")
# Every range's bounds in order, and the kind of what lies between two bounds (0: white
# space, 1: CJK, 2: anything else), for one ``searchsorted`` over a text's code points.
_RANGES = sorted([(a, b, 0) for a, b in _SPACE_RANGES] + [(a, b, 1) for a, b in _CJK_RANGES])
_BOUNDS = np.array([x for a, b, _ in _RANGES for x in (a, b)], np.uint32)
_KIND = np.full(len(_BOUNDS) + 1, 2, np.int8)
_KIND[1::2] = [kind for _, _, kind in _RANGES]
#: the first character counted as CJK: a text with none at or above it has none
_FIRST_CJK = min(a for a, _ in _CJK_RANGES)


def _points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), np.uint32)


def _share(points: np.ndarray) -> float:
    if not len(points) or points.max() < _FIRST_CJK:
        return 0.0
    kinds = np.bincount(_KIND[np.searchsorted(_BOUNDS, points, side="right")], minlength=3)
    shown = len(points) - int(kinds[0])
    return int(kinds[1]) / shown if shown else 0.0


def cjk_share(text: str | None) -> float:
    """The share of CJK characters (Han, kana) among ``text``'s characters that are not
    white space; 0 for an empty text.

    numpy over the text's code points (one ``searchsorted`` among the ranges' bounds),
    not a regular expression: counting a character class of astral ranges with ``re``
    took several times as long (docs/reprints.md)."""
    if not text or text.isascii():
        return 0.0
    return _share(_points(text))


def by_words(text: str | None, share: float = CJK_SHARE) -> bool:
    """Whether ``text`` is shingled by words: its CJK share (:func:`cjk_share`) is below
    ``share`` (a text of a space-separated script, or mostly one).

    A Chinese text answers from the main Han block alone (one comparison over its code
    points): when those characters are ``share`` of all its characters, they are at least
    that share of those that are not white space."""
    if not text or text.isascii():
        return True
    points = _points(text)
    han = int(np.count_nonzero((points - np.uint32(0x4E00)) < np.uint32(0xA000 - 0x4E00)))
    if han >= share * len(points):
        return False
    return _share(points) < share


def tokens(text: str | None, *, t2s=None, fold=None) -> list[str]:
    """The tokens of a word-shingled text, in order: runs of letters and digits, lower
    case, each character of a script without spaces alone; punctuation, symbols, spaces
    and line breaks only separate them, so a reprint that changes those, or re-paragraphs
    the text, gives the same tokens.

    ``t2s`` (a ``str -> str`` conversion of traditional to simplified script) is applied
    when the text holds a CJK character, and ``fold`` (full-width to half-width) always:
    the same normalising as character shingles, for the Chinese names and full-width
    digits of a mixed text.
    """
    if not text:
        return []
    # max() of a str is its highest code point, found in C: below the first CJK block,
    # there is nothing for t2s to convert (and OpenCC is slow on long Latin text)
    if t2s is not None and not text.isascii() and max(text) >= "\u3040":
        text = t2s(text)
    text = text.lower()
    if fold is not None:
        text = fold(text)
    return _TOKEN.findall(text)


def word_shingles(toks: Sequence[str], k: int) -> list[str]:
    """The ``k``-grams of tokens, each its tokens joined by a space, in order, repeats kept
    (all the tokens as one shingle when there are ``k`` or fewer; none for none). A
    character shingle holds no space, so the two kinds never meet in one index."""
    n = len(toks)
    if n <= k:
        return [" ".join(toks)] if n else []
    if k == 4:  # the default, without a join per shingle's slice
        return [
            f"{a} {b} {c} {d}"
            for a, b, c, d in zip(toks, toks[1:], toks[2:], toks[3:], strict=False)
        ]
    return [" ".join(toks[i : i + k]) for i in range(n - k + 1)]


#: the top 16 bits of a word shingle's code: a UTF-16 low surrogate, which neither a
#: packed character shingle (a BMP code point there) nor a hashed one (a high surrogate,
#: ``reprints.shingle_codes``) has, so the codes of the two kinds never meet
_WORD_TOP = np.uint64(0xDC00 << 48)
#: odd multiplier of the polynomial that combines a shingle's token hashes
_MIX = np.uint64(0x9E3779B97F4A7C15)


def word_codes(toks: Sequence[str], k: int) -> np.ndarray:
    """The set of a token list's ``k``-grams (:func:`word_shingles`) as a sorted array of
    distinct 64-bit codes, for ``reprints.overlap``.

    A token's hash is Python's own string hash, the shingle's code the polynomial of its
    tokens' hashes (numpy, over all shingles at once), 48 bits of it kept under
    :data:`_WORD_TOP`: two different shingles share a code with a chance of about 2**-48.
    Python's string hash is salted per process; the codes are never stored, only compared
    within the process (``reprints.CodesCache``), so that is enough, and a fourteenth of
    the time of a blake2b digest per token (0.1 against 1.4 ms for an article's 391
    tokens).
    """
    n = len(toks)
    if not n:
        return np.empty(0, np.uint64)
    k = min(k, n)
    ids = np.fromiter(map(hash, toks), np.int64, n).view(np.uint64)
    m = n - k + 1
    codes = ids[:m].copy()
    for j in range(1, k):
        codes *= _MIX
        codes += ids[j : j + m]
    codes >>= np.uint64(16)
    codes |= _WORD_TOP
    codes.sort()
    if len(codes) < 2:
        return codes
    keep = np.empty(len(codes), bool)
    keep[0] = True
    np.not_equal(codes[1:], codes[:-1], out=keep[1:])
    return codes[keep]
