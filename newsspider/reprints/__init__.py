"""Reprint detection, pure: one story, many pages (docs/reprints.md).

Portals carry the same wire copy under their own URLs, with a source line added, the
headline changed, a paragraph cut, an editor line appended or the script converted. This
package holds the text side of finding them, as pure functions over ``str`` and arrays
(no SQL, no settings: callers pass the values of ``REPRINTS_*``):

- :func:`normalise`: traditional to simplified (OpenCC ``t2s``), full-width to half-width
  (U+FF01..FF5E and the ideographic space), lower case, every character that is not a letter or a digit dropped (punctuation,
  spaces, line breaks), so reprints that differ only in those are the same text;
- :func:`shingles`: the character ``k``-grams of the normalised text (CJK text has no
  spaces to split on: characters, not words);
- :func:`signature`: the MinHash of those shingles (rensa's ``RMinHash``, Rust: 0.3 ms
  for a median body where datasketch's ``MinHash`` takes 1.8 ms, docs/reprints.md), and
  :func:`band_keys`: its LSH band keys, one
  signed 64-bit key per band (band number and its rows hashed together), the keys stored
  in SQL so every night, worker and backend share one index;
- :func:`similarity`: the exact check of a candidate pair, the overlap coefficient
  ``|A ∩ B| / min(|A|, |B|)`` of the two shingle sets, which an excerpt or a cut article
  keeps high; :func:`estimate`: the same pair's Jaccard estimated from two signatures,
  to skip the exact check of candidates that share a band by chance.

The choice of ``k``, bands, rows, threshold and the shortest text grouped comes from
``benchmarks/reprints.py`` (docs/reprints.md).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from dataclasses import dataclass
from typing import Any

import opencc
from rensa import RMinHash

__all__ = [
    "ALGORITHM",
    "BANDS",
    "ROWS",
    "SHINGLE",
    "SEED",
    "Fingerprint",
    "ReprintParams",
    "band_keys",
    "estimate",
    "fingerprint",
    "normalise",
    "params_from_settings",
    "shingles",
    "signature",
    "similarity",
]

#: The MinHash permutations' seed: band keys made with another seed never meet, so it is
#: fixed here, not a setting (changing it needs ``scrapy corpus reprints --rebuild``).
SEED = 20261125
#: The index's shape: characters per shingle, LSH bands and signature values per band.
#: Constants, not settings, like :data:`SEED`: the stored band keys are made with them, so
#: a change needs ``scrapy corpus reprints --rebuild`` (chosen in docs/reprints.md).
SHINGLE = 4
BANDS = 42
ROWS = 3
#: rensa's algorithm version the stored band keys were made with (a new one: rebuild).
ALGORITHM = RMinHash.ALGORITHM_VERSION
_T2S = opencc.OpenCC("t2s")
#: full-width ASCII (U+FF01..FF5E) and the ideographic space to their half-width forms
_HALF = {0x3000: 0x20, **{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}}
#: what a reprint changes freely: punctuation, spaces, line breaks, symbols
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class ReprintParams:
    """The ``REPRINTS_*`` settings reprint detection runs with."""

    shingle: int  # characters per shingle
    bands: int  # LSH bands
    rows: int  # signature values per band
    threshold: float  # overlap similarity at which two texts are one story
    min_chars: int  # normalised characters below which a text is never grouped
    #: estimated Jaccard below which a candidate skips the exact check
    prefilter: float = 0.1

    @property
    def permutations(self) -> int:
        return self.bands * self.rows


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """One text's normalised length, shingles, MinHash signature and band keys; no
    signature and no keys when the text is too short to be grouped."""

    chars: int
    shingles: list[str]
    signature: list[int] | None
    keys: tuple[int, ...]

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
    return _NOT_WORD.sub("", _T2S.convert(text).translate(_HALF).lower())


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
    keys = []
    for b in range(bands):
        chunk = array("I", sig[b * rows : (b + 1) * rows]).tobytes()
        digest = hashlib.blake2b(chunk, digest_size=8, salt=b.to_bytes(2, "little")).digest()
        keys.append(int.from_bytes(digest, "little", signed=True))
    return tuple(keys)


def fingerprint(text: str | None, params: ReprintParams) -> Fingerprint:
    """Everything reprint detection needs of one text; too short a text (fewer than
    ``min_chars`` normalised characters: a brief, a caption, an empty body) gets no
    signature and no band keys, so it is never grouped."""
    norm = normalise(text)
    grams = shingles(norm, params.shingle)
    if len(norm) < max(1, params.min_chars):
        return Fingerprint(len(norm), grams, None, ())
    sig = signature(grams, params.permutations)
    return Fingerprint(len(norm), grams, sig, band_keys(sig, params.bands, params.rows))


def similarity(a: list[str] | set[str], b: list[str] | set[str]) -> float:
    """The exact overlap coefficient ``|A ∩ B| / min(|A|, |B|)`` of two shingle sets."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


def estimate(a: list[int], b: list[int]) -> float:
    """The Jaccard similarity two MinHash signatures of one length estimate."""
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
