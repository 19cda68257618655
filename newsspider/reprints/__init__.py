"""Reprint detection, pure: one story, many pages (docs/reprints.md).

Portals carry the same wire copy under their own URLs, with a source line added, the
headline changed, a paragraph cut, an editor line appended or the script converted. This
package holds the text side of finding them, as pure functions over ``str`` and arrays
(no SQL, no settings: callers pass the values of ``REPRINTS_*``):

- :func:`normalise`: traditional to simplified (OpenCC ``t2s``), full-width to half-width
  (U+FF01..FF5E and the ideographic space), lower case, every character that is not a
  letter or a digit dropped (punctuation, spaces, line breaks), so reprints that differ
  only in those are the same text;
- :func:`shingles`: the character ``k``-grams of the normalised text (CJK text has no
  spaces to split on: characters, not words); a text of a space-separated script (English,
  Russian, ...) is shingled by words instead, ``k`` consecutive tokens (:mod:`.script`:
  which texts, and why: without spaces, unrelated English texts share many character
  4-grams and flooded the index with candidates);
- :func:`signature`: the MinHash of those shingles (rensa's ``RMinHash``, Rust: 0.3 ms
  for a median body where datasketch's ``MinHash`` takes 1.8 ms, docs/reprints.md), and
  :func:`band_keys`: its LSH band keys, one
  signed 64-bit key per band (band number and its rows hashed together), the keys stored
  in SQL so every night, worker and backend share one index;
- :func:`similarity`: the exact check of a candidate pair, the overlap coefficient
  ``|A ∩ B| / min(|A|, |B|)`` of the two shingle sets, which an excerpt or a cut article
  keeps high; :func:`shingle_codes` and :func:`overlap` compute the same on sorted arrays
  of 64-bit codes (a shingle of four BMP characters packed in one code: exact, a twentieth
  of the time and a tenth of the memory of a set of strings; :func:`codes` and
  :func:`text_codes` give either kind, word shingles' codes from :mod:`.script`), and
  :class:`CodesCache`
  keeps the codes of the texts checked lately, so a story's members are not normalised and
  shingled again for every reprint that arrives; :func:`estimate`: the same pair's
  Jaccard estimated from two signatures, and
  :func:`estimate_overlap`: the overlap coefficient that Jaccard implies for the two
  texts' lengths, to skip the exact check of candidates that share a band by chance.

The choice of ``k``, bands, rows, threshold and the shortest text grouped comes from
``benchmarks/reprints.py`` (docs/reprints.md).
"""

from __future__ import annotations

import hashlib
import operator
import re
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import opencc
from rensa import RMinHash

from .script import CJK_SHARE, by_words, tokens, word_codes, word_shingles

__all__ = [
    "ALGORITHM",
    "BANDS",
    "CJK_SHARE",
    "ROWS",
    "SEED",
    "SHINGLE",
    "WORDS",
    "CodesCache",
    "Fingerprint",
    "ReprintParams",
    "band_keys",
    "by_words",
    "codes",
    "estimate",
    "estimate_overlap",
    "fingerprint",
    "normalise",
    "overlap",
    "params_from_settings",
    "shingle_codes",
    "shingle_set",
    "shingles",
    "signature",
    "similarity",
    "text_codes",
]

#: The MinHash permutations' seed: band keys made with another seed never meet, so it is
#: fixed here, not a setting (changing it needs ``scrapy corpus reprints --rebuild``).
SEED = 20261125
#: The index's shape: characters per shingle, LSH bands and signature values per band.
#: Constants, not settings, like :data:`SEED`: the stored band keys are made with them, so
#: a change needs ``scrapy corpus reprints --rebuild`` (chosen in docs/reprints.md).
SHINGLE = 4
#: Tokens per shingle of a text shingled by words (:mod:`.script`), chosen in
#: docs/reprints.md; equal to :data:`SHINGLE`, so a stored length (characters or tokens)
#: gives either kind's shingle count the same way (:func:`estimate_overlap`).
WORDS = 4
BANDS = 42
ROWS = 3
#: rensa's algorithm version the stored band keys were made with (a new one: rebuild).
ALGORITHM = RMinHash.ALGORITHM_VERSION
_T2S = opencc.OpenCC("t2s")
#: full-width ASCII (U+FF01..FF5E) and the ideographic space to their half-width forms
_HALF = {0x3000: 0x20, **{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}}
#: what a reprint changes freely: punctuation, spaces, line breaks, symbols
_NOT_WORD = re.compile(r"[\W_]+")
#: the same, with the full-width low line (a word character that becomes ``_``): removed
#: before the width is folded, so that only what is left is translated
_NOT_WORD_WIDE = re.compile(r"[\W_\uff3f]+")
#: a character :data:`_HALF` changes
_WIDE = re.compile(r"[\u3000\uff01-\uff5e]")


@dataclass(frozen=True, slots=True)
class ReprintParams:
    """The ``REPRINTS_*`` settings reprint detection runs with."""

    shingle: int  # characters per shingle
    bands: int  # LSH bands
    rows: int  # signature values per band
    threshold: float  # overlap similarity at which two texts are one story
    min_chars: int  # normalised characters below which a text is never grouped
    #: estimated overlap (:func:`estimate_overlap`) below which a candidate skips the exact
    #: check: 0.3 is about four standard errors of a 126-value signature under a 0.5 threshold
    prefilter: float = 0.3
    #: tokens per shingle of a space-separated text (:mod:`.script`); 0 shingles every text
    #: by characters, as the index did before (benchmarks compare the two)
    words: int = WORDS

    @property
    def permutations(self) -> int:
        return self.bands * self.rows


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """One text's normalised length, shingles, MinHash signature and band keys; no
    signature and no keys when the text is too short to be grouped.

    ``chars`` is the length the shingles are made from: normalised characters of a text
    shingled by characters, tokens of one shingled by words (``words``), which is what
    ``REPRINTS_MIN_CHARS`` and :func:`estimate_overlap` count."""

    chars: int
    shingles: list[str]
    signature: list[int] | None
    keys: tuple[int, ...]
    #: the normalised text (:func:`shingle_codes` of it when an exact check needs them)
    norm: str = ""
    #: shingled by words (:mod:`.script`): ``tokens`` holds them, ``norm`` is empty
    words: bool = False
    tokens: tuple[str, ...] = ()

    @property
    def grouped(self) -> bool:
        """Whether the text takes part in reprint detection (long enough)."""
        return self.signature is not None


def params_from_settings(settings: Any) -> ReprintParams:
    """The ``REPRINTS_*`` settings (defaults in ``settings.py``) and the index's shape as
    :class:`ReprintParams`."""
    return ReprintParams(
        shingle=SHINGLE,
        bands=BANDS,
        rows=ROWS,
        threshold=settings.getfloat("REPRINTS_THRESHOLD"),
        min_chars=settings.getint("REPRINTS_MIN_CHARS"),
    )


def normalise(text: str | None) -> str:
    """``text`` reduced to what survives a reprint: simplified script, half-width, lower
    case, letters and digits only (punctuation, spaces and line breaks dropped)."""
    if not text:
        return ""
    # Equal to _NOT_WORD.sub("", t2s(text).translate(_HALF).lower()): lower case and the
    # removal first (full-width punctuation is non-word either way), then the width fold
    # of the few full-width letters and digits left, skipped when there are none.
    norm = _NOT_WORD_WIDE.sub("", _T2S.convert(text).lower())
    return norm.translate(_HALF) if _WIDE.search(norm) else norm


def shingles(norm: str, k: int) -> list[str]:
    """The character ``k``-grams of a normalised text, in order, repeats kept (the whole
    text as one shingle when shorter than ``k``; none for an empty text)."""
    if len(norm) <= k:
        return [norm] if norm else []
    return [norm[i : i + k] for i in range(len(norm) - k + 1)]


def signature(grams: list[str], permutations: int) -> list[int]:
    """The MinHash signature of a shingle list (rensa ``RMinHash``, seed :data:`SEED`)."""
    mh = RMinHash(num_perm=permutations, seed=SEED)
    mh.update(grams)
    return mh.digest()


def band_keys(sig: list[int], bands: int, rows: int) -> tuple[int, ...]:
    """One signed 64-bit key per LSH band: the band's number and its ``rows`` values."""
    raw = array("I", sig).tobytes()  # the bands' bytes, sliced below
    step = 4 * rows
    return tuple(
        int.from_bytes(
            hashlib.blake2b(raw[b * step : (b + 1) * step], digest_size=8, salt=_SALTS[b]).digest(),
            "little",
            signed=True,
        )
        for b in range(bands)
    )


#: each band's number as the salt of its key (the band keys of :func:`band_keys`)
_SALTS = [b.to_bytes(2, "little") for b in range(256)]


def _fold(text: str) -> str:
    """Full-width letters, digits and the ideographic space to their half-width forms."""
    return text.translate(_HALF) if _WIDE.search(text) else text


def _tokens(text: str | None) -> tuple[str, ...]:
    """:func:`.script.tokens` with this package's script and width folding."""
    return tuple(tokens(text, t2s=_T2S.convert, fold=_fold))


def fingerprint(text: str | None, params: ReprintParams) -> Fingerprint:
    """Everything reprint detection needs of one text; too short a text (fewer than
    ``min_chars`` normalised characters, or tokens when shingled by words: a brief, a
    caption, an empty body) gets no signature and no band keys, so it is never grouped.

    A text of a space-separated script is shingled by words (:func:`.script.by_words`,
    unless ``params.words`` is 0); a CJK text by characters, exactly as before words were
    (the same shingles, signature and band keys)."""
    if params.words and by_words(text):
        toks = _tokens(text)
        grams = word_shingles(toks, params.words)
        if len(toks) < max(1, params.min_chars):
            return Fingerprint(len(toks), grams, None, (), "", True, toks)
        sig = signature(grams, params.permutations)
        keys = band_keys(sig, params.bands, params.rows)
        return Fingerprint(len(toks), grams, sig, keys, "", True, toks)
    norm = normalise(text)
    grams = shingles(norm, params.shingle)
    if len(norm) < max(1, params.min_chars):
        return Fingerprint(len(norm), grams, None, (), norm)
    sig = signature(grams, params.permutations)
    return Fingerprint(len(norm), grams, sig, band_keys(sig, params.bands, params.rows), norm)


def shingle_set(norm: str, k: int) -> set[str]:
    """:func:`shingles` as a set (what the exact check compares), built directly."""
    if len(norm) <= k:
        return {norm} if norm else set()
    return {norm[i : i + k] for i in range(len(norm) - k + 1)}


def similarity(a: list[str] | set[str], b: list[str] | set[str]) -> float:
    """The exact overlap coefficient ``|A ∩ B| / min(|A|, |B|)`` of two shingle sets."""
    sa = a if isinstance(a, set) else set(a)
    sb = b if isinstance(b, set) else set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


#: bits of one character in a packed code: a BMP code point
_UNIT = 16
#: the top unit of a hashed code: a UTF-16 surrogate, which no normalised character is,
#: so a hashed code never equals a packed one
_SURROGATE = 0xD800


def shingle_codes(norm: str, k: int) -> np.ndarray:
    """The set of a normalised text's character ``k``-grams (:func:`shingle_set`) as a
    sorted array of distinct 64-bit codes, for :func:`overlap`.

    A shingle of up to four characters of the Basic Multilingual Plane is its code points
    packed 16 bits each: one code per shingle and one shingle per code, so the overlap of
    two texts is the exact overlap of their shingle sets. A shingle holding a character
    beyond it (or a ``k`` above 4) is hashed into codes whose top 16 bits are a UTF-16
    surrogate, which no packed shingle has: only two such shingles can collide (a chance of
    2**-48 for a pair; normalised texts hardly hold any).
    """
    if not norm:
        return np.empty(0, np.uint64)
    k = min(k, len(norm))  # a text shorter than k is one shingle
    n = len(norm) - k + 1
    if k > _PACKED:
        return _hashed({norm[i : i + k] for i in range(n)})
    points = np.frombuffer(norm.encode("utf-32-le"), np.uint32)
    wide = points > 0xFFFF
    if not wide.any():
        return _distinct(_packed(points, k))
    # the windows holding a character beyond the BMP are hashed, the others packed
    seen = np.concatenate([[0], np.cumsum(wide)])
    hashed = (seen[k:] - seen[:n]) > 0
    grams = {norm[i : i + k] for i in np.flatnonzero(hashed).tolist()}
    return _distinct(np.concatenate([_packed(points, k)[~hashed], _hashed(grams)]))


#: the longest shingle packed in one code (four 16-bit units)
_PACKED = 64 // _UNIT


def _packed(points: np.ndarray, k: int) -> np.ndarray:
    """Every ``k``-gram's code (``k`` <= 4), in order, repeats kept."""
    c = points.astype(np.uint64)
    n = len(c) - k + 1
    codes = c[:n].copy()
    for j in range(1, k):
        codes <<= np.uint64(_UNIT)
        codes |= c[j : j + n]
    return codes


def _hashed(grams: set[str]) -> np.ndarray:
    """Codes of shingles that do not pack: 48 bits of a hash under a surrogate top unit."""
    if not grams:
        return np.empty(0, np.uint64)
    top = _SURROGATE << 48
    return _distinct(
        np.array(
            [
                top | int.from_bytes(hashlib.blake2b(g.encode(), digest_size=6).digest(), "big")
                for g in grams
            ],
            np.uint64,
        )
    )


def _distinct(codes: np.ndarray) -> np.ndarray:
    """Sorted distinct codes (a sort and one comparison: numpy's ``unique`` is ten times
    slower on these arrays)."""
    codes = np.sort(codes)
    if len(codes) < 2:
        return codes
    keep = np.empty(len(codes), bool)
    keep[0] = True
    np.not_equal(codes[1:], codes[:-1], out=keep[1:])
    return codes[keep]


def codes(fp: Fingerprint, params: ReprintParams) -> np.ndarray:
    """The shingle codes of a fingerprinted text, of either kind (:func:`shingle_codes`,
    :func:`.script.word_codes`), for :func:`overlap`."""
    if fp.words:
        return word_codes(fp.tokens, params.words)
    return shingle_codes(fp.norm, params.shingle)


def text_codes(text: str | None, params: ReprintParams) -> np.ndarray:
    """:func:`codes` of a text, without its MinHash (a candidate's stored text)."""
    if params.words and by_words(text):
        return word_codes(_tokens(text), params.words)
    return shingle_codes(normalise(text), params.shingle)


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    """:func:`similarity` of two texts from their :func:`shingle_codes`."""
    if not len(a) or not len(b):
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    at = np.searchsorted(b, a)
    at[at == len(b)] = 0
    return int(np.count_nonzero(b[at] == a)) / len(a)


class CodesCache:
    """The :func:`text_codes` of the texts checked lately, by text and shingle sizes (least
    recently used dropped first, at most ``max_codes`` codes held: 8 bytes each).

    A story's members are candidates of each new reprint of it; without the cache each
    check normalises and shingles the member's stored text again (0.5 ms of a 5,000
    character text). Keyed by the text itself, so a text changed by re-extraction or
    re-cleaning is never matched with its old codes. Safe to share between threads.
    """

    def __init__(self, max_codes: int) -> None:
        self.max_codes = max_codes
        self.held = 0
        self._codes: OrderedDict[tuple[int, int, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def codes(self, text: str | None, params: ReprintParams) -> np.ndarray:
        """``text_codes(text, params)``, from the cache when it holds them."""
        key = (params.shingle, params.words, text or "")
        with self._lock:
            found = self._codes.get(key)
            if found is not None:
                self._codes.move_to_end(key)
                return found
        found = text_codes(text, params)
        self.put(text, params, found)
        return found

    def put(self, text: str | None, params: ReprintParams, codes: np.ndarray) -> None:
        """Hold ``codes`` as the codes of ``text`` (the newest entry)."""
        key = (params.shingle, params.words, text or "")
        if len(codes) > self.max_codes:
            return
        with self._lock:
            old = self._codes.pop(key, None)
            if old is not None:
                self.held -= len(old)
            self._codes[key] = codes
            self.held += len(codes)
            while self.held > self.max_codes:
                _, dropped = self._codes.popitem(last=False)
                self.held -= len(dropped)

    def __len__(self) -> int:
        return len(self._codes)


def estimate(a: list[int], b: list[int]) -> float:
    """The Jaccard similarity two MinHash signatures of one length estimate."""
    if len(a) != len(b):
        raise ValueError("signatures of different lengths")
    return sum(map(operator.eq, a, b)) / len(a)


def estimate_overlap(jaccard: float, chars_a: int, chars_b: int, k: int) -> float:
    """The overlap coefficient ``|A ∩ B| / min(|A|, |B|)`` that an estimated Jaccard implies
    for two texts of ``chars_a`` and ``chars_b`` normalised characters (or tokens, for
    texts shingled by words: :data:`WORDS` equals :data:`SHINGLE`, so ``k`` is the same).

    ``|A ∩ B| = J (|A| + |B|) / (1 + J)``, the set sizes taken as the texts' shingle counts
    (an upper bound: repeats make them smaller). An excerpt of half an article has J = 0.5
    and an overlap of 1, so a Jaccard bound alone would have to sit low and let through
    many chance candidates; this bound is on the quantity the threshold is on.
    """
    if jaccard <= 0.0:
        return 0.0
    a, b = max(1, chars_a - k + 1), max(1, chars_b - k + 1)
    return min(1.0, jaccard * (a + b) / ((1.0 + jaccard) * min(a, b)))
