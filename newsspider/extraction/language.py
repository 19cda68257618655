"""The language of a page's body and, for Chinese, its script.

``language``: ISO 639-1 of the body text. Han text without kana or hangul is Chinese
(``zh``) by its script alone; anything else goes to py3langid (the maintained fork of
langid.py, Lui & Baldwin 2012), which was measured against lingua-language-detector on
every labelled page of the datasets (docs/evaluation.md, "Record fields"): the same
accuracy, 0.55 ms against 6 ms a page, 0.7 s against 11 s to load its model and a few
MB against 1.4 GB of memory. Only the first :data:`LANGUAGE_SAMPLE` characters are
read (no labelled page's verdict changed past 300).

``script``: ``simplified``, ``traditional`` or ``mixed``, for Chinese only. OpenCC
converts every CJK ideograph both ways, once per process: a character that the
traditional-to-simplified conversion changes is written in traditional script, one that
the simplified-to-traditional conversion changes in simplified script (most characters
are the same in both and say nothing). The share of the traditional ones among the
text's telling characters decides.

Pure: the model is loaded on first use, once per process.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

import opencc
from py3langid.langid import MODEL_FILE, LanguageIdentifier

__all__ = [
    "LANGUAGE_SAMPLE",
    "detect_language",
    "detect_script",
    "han_share",
]

#: Characters of the body the language detector reads.
LANGUAGE_SAMPLE = 300
#: Han characters the script decision reads.
SCRIPT_SAMPLE = 400
#: Below this many telling characters (written differently in the two scripts) the
#: script is not decided.
SCRIPT_MIN_EVIDENCE = 3
#: Share of traditional characters among the telling ones at or above which the text is
#: traditional, and at or below which it is simplified; between the two, mixed.
TRADITIONAL_SHARE = 0.8
SIMPLIFIED_SHARE = 0.2
#: Han text is Chinese when kana and hangul are under this share of its Han characters
#: (Japanese writes kana between its kanji, Korean hangul).
CJK_OTHER_SHARE = 0.05

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_LETTERS = re.compile(r"[^\W\d_]")

_T2S = opencc.OpenCC("t2s")
_S2T = opencc.OpenCC("s2t")


@functools.cache
def _identifier() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def han_share(text: str) -> float:
    """Han characters over all letters of ``text`` (0 for text without letters)."""
    letters = len(_LETTERS.findall(text))
    return len(_HAN.findall(text)) / letters if letters else 0.0


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of ``text``'s language, or None for text without letters.

    Han text with (almost) no kana or hangul is ``zh``; kana make it ``ja``, hangul
    ``ko``; other text goes to py3langid.
    """
    sample = text[:LANGUAGE_SAMPLE]
    letters = len(_LETTERS.findall(sample))
    if not letters:
        return None
    han = len(_HAN.findall(sample))
    kana = len(_KANA.findall(sample))
    hangul = len(_HANGUL.findall(sample))
    if han + kana + hangul > letters / 2:  # a CJK text: its script says which
        if kana > CJK_OTHER_SHARE * han and kana >= hangul:
            return "ja"
        if hangul > CJK_OTHER_SHARE * han:
            return "ko"
        return "zh"
    return _identifier().classify(sample)[0]


@functools.cache
def _telling() -> tuple[frozenset[str], frozenset[str]]:
    """(traditional, simplified): the CJK ideographs OpenCC's t2s changes, and those its s2t
    changes, each converted alone (one call over the block, a line per character)."""
    block = [chr(c) for c in range(0x4E00, 0xA000)] + [chr(c) for c in range(0x3400, 0x4DC0)]
    joined = "\n".join(block)
    out: list[frozenset[str]] = []
    for converter in (_T2S, _S2T):
        converted = converter.convert(joined).split("\n")
        if len(converted) != len(block):  # never seen: one character at a time instead
            converted = [converter.convert(c) for c in block]
        out.append(frozenset(c for c, d in zip(block, converted, strict=True) if c != d))
    return out[0], out[1]


def detect_script(text: str) -> str | None:
    """``simplified``, ``traditional`` or ``mixed`` for Chinese text; None when the text
    holds fewer than :data:`SCRIPT_MIN_EVIDENCE` characters written differently in the two
    scripts."""
    han = "".join(_HAN.findall(text[: SCRIPT_SAMPLE * 3]))[:SCRIPT_SAMPLE]
    if not han:
        return None
    traditional_chars, simplified_chars = _telling()
    counts = Counter(han)  # a few hundred distinct characters: each looked up once
    traditional = sum(n for c, n in counts.items() if c in traditional_chars)
    simplified = sum(n for c, n in counts.items() if c in simplified_chars)
    telling = traditional + simplified
    if telling < SCRIPT_MIN_EVIDENCE:
        return None
    share = traditional / telling
    if share >= TRADITIONAL_SHARE:
        return "traditional"
    if share <= SIMPLIFIED_SHARE:
        return "simplified"
    return "mixed"
