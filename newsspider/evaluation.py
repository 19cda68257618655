"""Scoring extractors against labelled datasets, as Zou & Zhong 2011 §2 evaluate theirs.

The paper calls a page *qualified* when the extracted body covers the whole true
body and the leftover noise is at most 5% of the true body's length, *excellent*
when the noise is under 2%. Operationally, here: token recall >= 0.95 and false
positive tokens <= 5% (< 2%) of the gold token count, where each CJK character
is a token and each run of letters/digits is a token (our token rule).

Pure: the standard library and lxml only (no scrapy, no sqlalchemy), so the
benchmarks and the tests can use it without a crawler.

* :func:`tokens` splits text into those tokens: each CJK character is one
  token, each run of letters/digits is one token.
* :func:`score_body` gives bag-of-tokens precision/recall/F1 and the paper's
  *qualified* / *excellent* verdicts.
* :func:`title_matches` and :func:`date_matches` check the metadata;
  :func:`authors_match`, :func:`origin_matches` and :func:`editor_matches` the record
  fields where the gold has them (a dataset's ``author``, or a supplementary gold file
  of the repository: :data:`GOLD_DIR`), and the detected language against ``lang``.
* :func:`load_cases` reads a dataset folder (``cases.jsonl`` + ``html/``), and
  :func:`evaluate` runs an extractor over it into a :class:`DatasetReport`;
  :func:`format_table` prints reports side by side. Nothing prints progress: ``evaluate``
  reports it to an optional ``progress`` callable (the command's bar).
"""

from __future__ import annotations

import gc
import json
import re
import statistics
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from newsspider.extraction.record import normalise_origin

__all__ = [
    "GOLD_DIR",
    "BodyScore",
    "Case",
    "CaseResult",
    "DatasetReport",
    "PageError",
    "Progress",
    "author_names",
    "authors_match",
    "count_cases",
    "date_matches",
    "editor_matches",
    "evaluate",
    "format_markdown",
    "format_record_table",
    "format_table",
    "has_record_gold",
    "load_cases",
    "load_gold",
    "origin_matches",
    "pass_count",
    "score_body",
    "title_matches",
    "tokens",
]

# --------------------------------------------------------------------------
# Tokens ("each CJK character is a token and each run of letters/digits
# is a token")

# Code points that are one token each. Only letters are listed: the
# punctuation inside the kana blocks (U+30A0 ゠, U+30FB ・) and the combining
# and spacing sound marks (U+3099-U+309C) are left out, so they are not tokens.
_CJK = (
    "\u3041-\u3096\u309d-\u309f"  # Hiragana
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3005-\u3007\u3021-\u3029\u3038-\u303c"  # 々〆〇, Hangzhou numerals
    "\u3400-\u4dbf"  # CJK Unified Ideographs extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7a3"  # Hangul syllables
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0003134f"  # extensions B-G and the compatibility supplement
)
# A run of word characters minus underscore minus CJK, or one CJK character.
_TOKEN_RE = re.compile(f"[^\\W_{_CJK}]+|[{_CJK}]")


def tokens(text: str) -> list[str]:
    """Split ``text`` into tokens (module docstring).

    The text is NFKC-normalised (full-width letters and digits become ASCII,
    compatibility ideographs their unified form) and lowercased. Each CJK
    character (CJK ideographs including extension A and beyond, compatibility
    ideographs, Hiragana, Katakana, Hangul syllables) is one token; each
    maximal run of other letters and digits (Unicode ``\\w`` without the
    underscore) is one token. Punctuation, symbols and whitespace are not
    tokens.

    >>> tokens("新华Beijing 3月21日电：ＧＤＰ涨6.5%")
    ['新', '华', 'beijing', '3', '月', '21', '日', '电', 'gdp', '涨', '6', '5']
    """
    return _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower())


# --------------------------------------------------------------------------
# Body score


@dataclass(frozen=True, slots=True)
class BodyScore:
    """Bag-of-tokens comparison of an extracted body with the gold body.

    ``true_positives`` is the size of the multiset intersection;
    ``false_positives`` = extracted tokens the gold does not account for;
    ``false_negatives`` = gold tokens the extraction missed.
    """

    precision: float
    recall: float
    f1: float
    qualified: bool
    excellent: bool
    extracted_tokens: int
    gold_tokens: int
    true_positives: int
    false_positives: int
    false_negatives: int


def score_body(extracted: str, gold: str) -> BodyScore:
    """Score ``extracted`` against ``gold`` by token multiset overlap (Zou & Zhong §2).

    precision = tp / |extracted|, recall = tp / |gold|, F1 their harmonic mean,
    where tp is the size of the multiset intersection (``collections.Counter``).

    *qualified*: recall >= 0.95 and false positives <= 5% of the gold token
    count; *excellent*: recall >= 0.95 and false positives < 2% of it. The
    thresholds are checked in integer arithmetic, so a page exactly at 5%
    noise is qualified and one exactly at 2% is not excellent.

    Edge cases: empty gold and empty extraction score 1.0 everywhere (and are
    qualified and excellent); empty gold with a non-empty extraction has
    precision 0, recall 1 and F1 0 (every token is noise, so neither
    qualified nor excellent); an empty extraction of a non-empty gold has
    precision 0, recall 0 and F1 0.
    """
    ext = Counter(tokens(extracted or ""))
    ref = Counter(tokens(gold or ""))
    n_ext = ext.total()
    n_gold = ref.total()
    tp = (ext & ref).total()
    fp = n_ext - tp
    fn = n_gold - tp
    if n_gold == 0 and n_ext == 0:
        precision = recall = f1 = 1.0
    else:
        precision = tp / n_ext if n_ext else 0.0
        recall = tp / n_gold if n_gold else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    covered = 100 * tp >= 95 * n_gold
    qualified = covered and 100 * fp <= 5 * n_gold
    excellent = covered and (fp == 0 or 100 * fp < 2 * n_gold)
    return BodyScore(
        precision=precision,
        recall=recall,
        f1=f1,
        qualified=qualified,
        excellent=excellent,
        extracted_tokens=n_ext,
        gold_tokens=n_gold,
        true_positives=tp,
        false_positives=fp,
        false_negatives=fn,
    )


# --------------------------------------------------------------------------
# Title and date


def _squash(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def _strip_punctuation(text: str) -> str:
    return "".join(c for c in text if not unicodedata.category(c).startswith("P"))


def title_matches(extracted: str | None, gold: str) -> bool:
    """Whether an extracted title equals the gold headline.

    Both are NFKC-normalised (full-width letters, digits and spaces become
    ASCII) and all whitespace is removed; they match when the results are
    equal, or equal once every punctuation character (Unicode category P*:
    quotes, dashes, brackets, ``：``, ``·`` ...) is removed as well. Case is
    kept, and symbols (``|``, ``~``, ``+``) are not punctuation, so a title
    that still carries its site suffix ("标题|网易财经") does not match. A missing
    title (None) never matches.
    """
    if extracted is None:
        return False
    a, b = _squash(extracted), _squash(gold)
    return a == b or _strip_punctuation(a) == _strip_punctuation(b)


_ISO_RE = re.compile(
    r"""
    (?P<year>\d{4})
    (?:-(?P<month>\d{2})
      (?:-(?P<day>\d{2})
        (?:[T\ ](?P<hour>\d{2}):(?P<minute>\d{2})
          (?::(?P<second>\d{2})(?:[.,]\d+)?)?
        )?
      )?
    )?
    (?P<tz>Z|[+-]\d{2}(?::?\d{2})?)?
    """,
    re.X,
)
_FIELDS = ("year", "month", "day", "hour", "minute", "second")


def _parse_gold_date(gold: str) -> tuple[tuple[int, ...], timezone | None]:
    """Gold ISO 8601 -> (fields present, from year down; offset or None)."""
    m = _ISO_RE.fullmatch(gold.strip())
    if m is None:
        raise ValueError(f"not an ISO 8601 date: {gold!r}")
    parts = tuple(int(m[f]) for f in _FIELDS if m[f] is not None)
    tz = m["tz"]
    if tz is None:
        return parts, None
    if tz == "Z":
        return parts, UTC
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:4] or 0)
    return parts, timezone(sign * timedelta(minutes=minutes))


def date_matches(extracted: datetime | None, gold: str) -> bool:
    """Whether ``extracted`` agrees with the gold time at the gold's precision.

    ``gold`` is ISO 8601 at the source's precision: ``2005``, ``2005-03``,
    ``2005-03-21``, ``2005-03-21T11:21``, ``2005-03-21T11:21:08``, optionally
    with an offset (``+08:00``, ``Z``). Only the fields the gold has are
    compared (seconds only when the gold has seconds; fractions never).

    * Gold with an offset: an aware ``extracted`` is converted to that offset
      first; a naive one is taken as wall-clock time in that offset.
    * Gold without an offset: ``extracted``'s own wall-clock time (in its own
      tzinfo, naive or aware) is compared.

    A missing date (None) never matches. Raises ``ValueError`` on a gold
    string that is not ISO 8601.
    """
    if extracted is None:
        return False
    parts, tz = _parse_gold_date(gold)
    if tz is not None and extracted.tzinfo is not None:
        extracted = extracted.astimezone(tz)
    got = (
        extracted.year,
        extracted.month,
        extracted.day,
        extracted.hour,
        extracted.minute,
        extracted.second,
    )
    return got[: len(parts)] == parts


def _day_precision(gold: str) -> str:
    """The gold cut to at most day precision, keeping its offset."""
    m = _ISO_RE.fullmatch(gold.strip())
    if m is None or m["hour"] is None:
        return gold
    return m[0][: m.end("day") - m.start()] + (m["tz"] or "")


# --------------------------------------------------------------------------
# Record fields

_BRACKETED = re.compile(r"\s*[(（\[【][^)）\]】]*[)）\]】]")
_NAME_SPLIT = re.compile(r"[\s、，,;；/]+")


def author_names(value: str | Iterable[str] | None) -> frozenset[str]:
    """A set of author names as compared: NFKC, bracketed parts (a name in another
    script) dropped, cut at spaces and 、，,;；/, lower case. A gold string and an
    extracted list of names give the same set when they name the same people.

    >>> sorted(author_names("周思博 (Joel Spolsky)")) == sorted(author_names(["周思博"]))
    True
    >>> author_names("伊琳  李清芬") == author_names(["伊琳", "李清芬"])
    True
    """
    if value is None:
        return frozenset()
    text = value if isinstance(value, str) else " ".join(value)
    text = _BRACKETED.sub(" ", unicodedata.normalize("NFKC", text))
    return frozenset(w.lower() for w in _NAME_SPLIT.split(text) if w)


def authors_match(extracted: str | Iterable[str] | None, gold: str) -> bool:
    """Whether the extracted authors are exactly the gold's names (:func:`author_names`);
    a gold of ``""`` (the page names no author) matches only when none is given."""
    return author_names(extracted) == author_names(gold)


def origin_matches(extracted: str | None, gold: str) -> bool:
    """Whether the extracted origin is the gold's, both normalised as origins are stored
    (:func:`newsspider.extraction.record.normalise_origin`: the table of agencies and
    papers); a gold of ``""`` matches only when none is given."""
    want = normalise_origin(gold) if gold else None
    got = normalise_origin(extracted) if extracted else None
    return want == got


def _editor_key(value: str | None) -> str:
    return "".join(unicodedata.normalize("NFKC", value or "").split()).lower()


def editor_matches(extracted: str | None, gold: str) -> bool:
    """Whether the extracted editor is the gold's (NFKC, spaces dropped, lower case); a
    gold of ``""`` matches only when none is given."""
    return _editor_key(extracted) == _editor_key(gold)


#: The repository's supplementary gold: ``<dataset>.jsonl`` files of ``id`` and record
#: fields (``origin``, ``editor``, ``author``) for datasets whose own gold lacks them,
#: made from the pages' markup by ``benchmarks/record_gold.py``. Read by
#: :func:`load_cases` when the package runs from a checkout.
GOLD_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "gold"
#: The record fields a supplementary gold file may give.
RECORD_GOLD = ("author", "origin", "editor")


def load_gold(dataset: str, gold_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """The supplementary gold of ``dataset`` (case id -> fields), or {} when none exists."""
    path = Path(gold_dir if gold_dir is not None else GOLD_DIR) / f"{dataset}.jsonl"
    if not path.is_file():
        return {}
    out: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                out[row["id"]] = {k: row[k] for k in RECORD_GOLD if k in row}
    return out


# --------------------------------------------------------------------------
# Dataset cases


@dataclass(slots=True)
class Case:
    """One page of a dataset folder (:func:`load_cases` reads its layout).

    ``html`` holds the page's bytes exactly as stored (never decoded).
    ``title``, ``published`` and ``body`` are the gold values, None where the
    source has none.
    """

    id: str
    dataset: str
    url: str | None
    html: bytes
    title: str | None
    published: str | None
    body: str | None
    notes: str | None = None
    encoding: str | None = None
    lang: str | None = None
    site: str | None = None
    html_file: str | None = None
    #: record gold: ``""`` where the page names none, None where there is no gold
    author: str | None = None
    origin: str | None = None
    editor: str | None = None


def load_cases(dataset_dir: Path, gold_dir: Path | None = None) -> Iterator[Case]:
    """Yield the cases of one dataset folder (``cases.jsonl`` + ``html/``).

    Pages are read one at a time as the iterator advances; the dataset name is
    the folder name. Record gold (``author``, ``origin``, ``editor``) comes from the
    case's own row, else from the supplementary gold of the dataset in ``gold_dir``
    (default :data:`GOLD_DIR`, :func:`load_gold`).
    """
    dataset_dir = Path(dataset_dir)
    name = dataset_dir.name
    extra = load_gold(name, gold_dir)
    with open(dataset_dir / "cases.jsonl", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            row = {**extra.get(row["id"], {}), **{k: v for k, v in row.items() if v is not None}}
            html_file = row.get("html_file") or f"html/{row['id']}"
            yield Case(
                id=row["id"],
                dataset=name,
                url=row.get("url"),
                html=(dataset_dir / html_file).read_bytes(),
                title=row.get("title"),
                published=row.get("published"),
                body=row.get("body"),
                notes=row.get("notes"),
                encoding=row.get("encoding"),
                lang=row.get("lang"),
                site=row.get("site"),
                html_file=html_file,
                author=_author_gold(row),
                origin=row.get("origin"),
                editor=row.get("editor"),
            )


def _author_gold(row: Mapping[str, Any]) -> str | None:
    """A case's author gold as one string: its ``author``, else its ``authors`` list
    (fundus-multi: ``[]`` names none) joined by 、; None where there is none."""
    if row.get("author") is not None:
        return row["author"]
    authors = row.get("authors")
    if isinstance(authors, list):
        return "、".join(str(a) for a in authors)
    return None


def count_cases(dataset_dir: Path) -> int:
    """How many cases a dataset folder holds (its ``cases.jsonl`` lines; no page is read)."""
    with open(Path(dataset_dir) / "cases.jsonl", encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


# --------------------------------------------------------------------------
# Evaluation


@dataclass(slots=True)
class PageError:
    """An exception an extractor raised on one page (recorded, not raised)."""

    case_id: str
    error: str  # exception class name
    message: str


@dataclass(slots=True)
class CaseResult:
    """Per-page outcome, for drill-down. None where the gold lacks the field."""

    id: str
    f1: float | None = None
    precision: float | None = None
    recall: float | None = None
    qualified: bool | None = None
    excellent: bool | None = None
    title_ok: bool | None = None
    date_ok: bool | None = None
    author_ok: bool | None = None
    origin_ok: bool | None = None
    editor_ok: bool | None = None
    language_ok: bool | None = None
    seconds: float = 0.0
    error: str | None = None


@dataclass(slots=True)
class DatasetReport:
    """One extractor over one dataset.

    Means are macro averages over the body-gold pages; ``micro_*`` pool the
    token counts of all of them. Rates are fractions in [0, 1] and None when
    the dataset has no gold for them. ``seconds`` is the wall time of the
    extract calls alone (the best of the timed passes), ``seconds_median``
    the median pass.
    """

    dataset: str
    extractor: str
    pages: int = 0
    body_pages: int = 0
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    micro_precision: float | None = None
    micro_recall: float | None = None
    micro_f1: float | None = None
    qualified: float | None = None
    excellent: float | None = None
    qualified_n: int = 0
    excellent_n: int = 0
    title_accuracy: float | None = None
    title_n: int = 0
    date_accuracy: float | None = None
    date_day_accuracy: float | None = None
    date_n: int = 0
    #: authors right over the pages with author gold; of them, the pages whose gold names
    #: someone (``named``) and those whose gold is ``""`` (``none``: right when none is given)
    author_accuracy: float | None = None
    author_n: int = 0
    author_named_accuracy: float | None = None
    author_named_n: int = 0
    author_none_accuracy: float | None = None
    author_none_n: int = 0
    origin_accuracy: float | None = None
    origin_n: int = 0
    editor_accuracy: float | None = None
    editor_n: int = 0
    #: the detected language against ``lang``, over the pages that are not synthetic
    language_accuracy: float | None = None
    language_n: int = 0
    seconds: float = 0.0
    seconds_median: float = 0.0
    passes: int = 1
    errors: list[PageError] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def pages_per_s(self) -> float | None:
        """Pages per second over the extract calls (best pass)."""
        return self.pages / self.seconds if self.seconds > 0 else None

    @property
    def ms_per_page(self) -> float | None:
        """Milliseconds per page over the extract calls (best pass)."""
        return 1000 * self.seconds / self.pages if self.pages else None

    def as_dict(self, *, cases: bool = True) -> dict[str, Any]:
        """A JSON-ready dict (``cases=False`` leaves out the per-page rows)."""
        d = asdict(self)
        d["pages_per_s"] = self.pages_per_s
        d["ms_per_page"] = self.ms_per_page
        if not cases:
            del d["cases"]
        return d


def _attr(result: object, name: str) -> Any:
    if result is None:
        return None
    if isinstance(result, Mapping):
        return result.get(name)
    return getattr(result, name, None)


def _gives(result: object, name: str) -> bool:
    """Whether an extractor's result has the field ``name`` at all (a peer that reads no
    origin is not scored on origins)."""
    if result is None:
        return False
    if isinstance(result, Mapping):
        return name in result
    return hasattr(result, name)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


#: ``progress`` of the long loops: called with the number of units just done (a tqdm bar's
#: ``update``, :func:`newsspider.progress.progress_bar`); None: no report.
Progress = Callable[[int], None]


def pass_count(*, warmup: bool = False, repeat: int = 1) -> int:
    """Passes :func:`evaluate` makes over the pages: the untimed warm-up and the timed ones."""
    return int(warmup) + max(repeat, 1)


def _run_pass(
    extract: Callable[[bytes, str | None], Any],
    cases: list[Case],
    progress: Progress | None = None,
) -> tuple[list[Any], list[BaseException | None], list[float]]:
    results: list[Any] = []
    failures: list[BaseException | None] = []
    times: list[float] = []
    clock = time.perf_counter
    for case in cases:
        t0 = clock()
        try:
            result = extract(case.html, case.url)
            failure = None
        except Exception as e:  # recorded per page, never raised
            result, failure = None, e
        times.append(clock() - t0)
        results.append(result)
        failures.append(failure)
        if progress is not None:
            progress(1)  # outside the timed call
    return results, failures, times


def evaluate(
    dataset_dir: Path | str | Iterable[Case],
    extract: Callable[[bytes, str | None], Any],
    *,
    name: str = "extractor",
    dataset: str | None = None,
    repeat: int = 1,
    warmup: bool = False,
    disable_gc: bool = False,
    progress: Progress | None = None,
) -> DatasetReport:
    """Run ``extract(html_bytes, url)`` over a dataset and score it.

    ``dataset_dir`` is a dataset folder or already loaded cases (load them
    once when timing several extractors). ``extract`` returns an object (or
    mapping) with ``text``, ``title`` and ``published``; a missing attribute
    counts as None, so extractors without a title or date still run.
    ``published`` should be a ``datetime`` (anything else counts as missing).
    Record fields (``authors``, ``origin``, ``editor``, ``language``) are scored where the
    gold has them and the result has the field at all (a page that raised counts wrong).

    Quality comes from the first timed pass. Exceptions are caught per page
    and listed in ``errors``; such a page scores as an empty extraction (F1 0,
    title and date wrong). Fields the gold lacks are skipped, not counted
    wrong. Timing covers the extract calls only (``time.perf_counter``):
    ``warmup`` runs one untimed pass first, ``repeat`` passes are timed and
    the best is reported (the median too), and ``disable_gc`` switches the
    cyclic garbage collector off during the passes. ``progress(1)`` is called after each
    page of each pass (:func:`pass_count` passes), outside the timed calls.
    """
    if isinstance(dataset_dir, str | Path):
        cases = list(load_cases(Path(dataset_dir)))
        dataset = dataset or Path(dataset_dir).name
    else:
        cases = list(dataset_dir)
        dataset = dataset or (cases[0].dataset if cases else "")
    report = DatasetReport(dataset=dataset, extractor=name, pages=len(cases))

    gc_was_enabled = gc.isenabled()
    if disable_gc:
        gc.collect()
        gc.disable()
    try:
        if warmup:
            _run_pass(extract, cases, progress)
        results, failures, times = _run_pass(extract, cases, progress)
        totals = [sum(times)]
        for _ in range(max(repeat, 1) - 1):
            totals.append(sum(_run_pass(extract, cases, progress)[2]))
    finally:
        if disable_gc and gc_was_enabled:
            gc.enable()
    report.seconds = min(totals)
    report.seconds_median = statistics.median(totals)
    report.passes = len(totals)

    f1s: list[float] = []
    precisions: list[float] = []
    recalls: list[float] = []
    tp = n_ext = n_gold = 0
    titles: list[bool] = []
    dates: list[bool] = []
    dates_day: list[bool] = []
    named: list[bool] = []
    nameless: list[bool] = []
    origins: list[bool] = []
    editors: list[bool] = []
    languages: list[bool] = []
    for case, result, failure, seconds in zip(cases, results, failures, times, strict=True):
        row = CaseResult(id=case.id, seconds=seconds)
        if failure is not None:
            message = str(failure).strip().splitlines()[0] if str(failure).strip() else ""
            report.errors.append(PageError(case.id, type(failure).__name__, message[:300]))
            row.error = f"{type(failure).__name__}: {message[:300]}"
        if case.body is not None:
            text = _attr(result, "text")
            score = score_body(text if isinstance(text, str) else "", case.body)
            row.f1, row.precision, row.recall = score.f1, score.precision, score.recall
            row.qualified, row.excellent = score.qualified, score.excellent
            f1s.append(score.f1)
            precisions.append(score.precision)
            recalls.append(score.recall)
            tp += score.true_positives
            n_ext += score.extracted_tokens
            n_gold += score.gold_tokens
            report.qualified_n += score.qualified
            report.excellent_n += score.excellent
        if case.title is not None:
            title = _attr(result, "title")
            row.title_ok = title_matches(title if isinstance(title, str) else None, case.title)
            titles.append(row.title_ok)
        if case.published is not None:
            published = _attr(result, "published")
            if not isinstance(published, datetime):
                published = None
            row.date_ok = date_matches(published, case.published)
            dates.append(row.date_ok)
            dates_day.append(date_matches(published, _day_precision(case.published)))
        failed = failure is not None  # a page that raised counts wrong on every field
        gives_authors = _gives(result, "authors") or _gives(result, "author")
        if case.author is not None and (failed or gives_authors):
            authors = _attr(result, "authors")
            if isinstance(authors, str) or authors is None:
                authors = _attr(result, "author") if authors is None else authors
            row.author_ok = authors_match(authors if authors else None, case.author)
            (named if author_names(case.author) else nameless).append(row.author_ok)
        if case.origin is not None and (failed or _gives(result, "origin")):
            origin = _attr(result, "origin")
            row.origin_ok = origin_matches(origin if isinstance(origin, str) else None, case.origin)
            origins.append(row.origin_ok)
        if case.editor is not None and (failed or _gives(result, "editor")):
            editor = _attr(result, "editor")
            row.editor_ok = editor_matches(editor if isinstance(editor, str) else None, case.editor)
            editors.append(row.editor_ok)
        if case.lang and "synthetic" not in (case.notes or "") and failure is None:
            language = _attr(result, "language")
            if language is not None or _attr(result, "title") is not None or _attr(result, "text"):
                row.language_ok = isinstance(language, str) and language == case.lang
                languages.append(row.language_ok)
        report.cases.append(row)

    report.body_pages = len(f1s)
    report.f1, report.precision, report.recall = (
        _mean(f1s),
        _mean(precisions),
        _mean(recalls),
    )
    if f1s:
        report.qualified = report.qualified_n / len(f1s)
        report.excellent = report.excellent_n / len(f1s)
        report.micro_precision = tp / n_ext if n_ext else (1.0 if n_gold == 0 else 0.0)
        report.micro_recall = tp / n_gold if n_gold else 1.0
        p, r = report.micro_precision, report.micro_recall
        report.micro_f1 = 2 * p * r / (p + r) if p + r else 0.0
    report.title_n, report.title_accuracy = (
        len(titles),
        _mean([float(t) for t in titles]),
    )
    report.date_n, report.date_accuracy = len(dates), _mean([float(d) for d in dates])
    report.date_day_accuracy = _mean([float(d) for d in dates_day])
    authors_all = named + nameless
    report.author_n = len(authors_all)
    report.author_accuracy = _mean([float(a) for a in authors_all])
    report.author_named_n = len(named)
    report.author_named_accuracy = _mean([float(a) for a in named])
    report.author_none_n, report.author_none_accuracy = (
        len(nameless),
        _mean([float(a) for a in nameless]),
    )
    report.origin_n, report.origin_accuracy = len(origins), _mean([float(o) for o in origins])
    report.editor_n, report.editor_accuracy = len(editors), _mean([float(e) for e in editors])
    if any(_attr(r, "language") is not None for r in results):  # extractors that detect it
        report.language_n, report.language_accuracy = (
            len(languages),
            _mean([float(x) for x in languages]),
        )
    return report


# --------------------------------------------------------------------------
# Output


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def pooled_accuracy(reports: list[DatasetReport]) -> dict[str, tuple[int, int, int, int]]:
    """Title and date accuracy pooled over every page of every dataset with that gold.

    Per extractor that ran on more than one dataset with title or date gold:
    (titles right, pages with title gold, dates right, pages with date gold).
    """
    counts: dict[str, list[int]] = {}
    datasets: dict[str, int] = {}
    for r in reports:
        if not (r.title_n or r.date_n):
            continue
        c = counts.setdefault(r.extractor, [0, 0, 0, 0])
        datasets[r.extractor] = datasets.get(r.extractor, 0) + 1
        c[0] += round((r.title_accuracy or 0.0) * r.title_n)
        c[1] += r.title_n
        c[2] += round((r.date_accuracy or 0.0) * r.date_n)
        c[3] += r.date_n
    return {name: tuple(c) for name, c in counts.items() if datasets[name] > 1}  # type: ignore[misc]


def format_table(reports: list[DatasetReport]) -> str:
    """A plain-text table, one row per report.

    Columns: dataset, extractor, pages, body pages, macro P/R/F1, micro F1,
    qualified %, excellent %, title accuracy % (n), date accuracy % (n),
    pages/s and errors. "-" marks a metric the dataset has no gold for.
    """
    header = (
        "dataset",
        "extractor",
        "pages",
        "body",
        "P",
        "R",
        "F1",
        "microF1",
        "qual%",
        "exc%",
        "title%(n)",
        "date%(n)",
        "pages/s",
        "errors",
    )
    rows = [header]
    for r in reports:
        rows.append(
            (
                r.dataset,
                r.extractor,
                str(r.pages),
                str(r.body_pages),
                _fmt(r.precision, ".3f"),
                _fmt(r.recall, ".3f"),
                _fmt(r.f1, ".3f"),
                _fmt(r.micro_f1, ".3f"),
                _pct(r.qualified),
                _pct(r.excellent),
                f"{_pct(r.title_accuracy)} ({r.title_n})" if r.title_n else "-",
                f"{_pct(r.date_accuracy)} ({r.date_n})" if r.date_n else "-",
                _fmt(r.pages_per_s, ".1f"),
                str(len(r.errors)),
            )
        )
    for extractor, (title_ok, title_n, date_ok, date_n) in pooled_accuracy(reports).items():
        rows.append(
            (
                "(all datasets)",
                extractor,
                *("",) * 8,
                f"{_pct(title_ok / title_n)} ({title_n})" if title_n else "-",
                f"{_pct(date_ok / date_n)} ({date_n})" if date_n else "-",
                "",
                "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    left = {0, 1}
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rate(value: float | None, n: int) -> str:
    return f"{_pct(value)} ({n})" if n else "-"


def has_record_gold(report: DatasetReport) -> bool:
    """Whether a report scored any record field (author, origin, editor, language)."""
    return bool(report.author_n or report.origin_n or report.editor_n or report.language_n)


def format_record_table(reports: list[DatasetReport]) -> str:
    """A plain-text table of the record fields, one row per report that scored any:
    authors right (all pages with author gold; those naming someone; those naming no one,
    right when none is given), origin, editor and language, % (n). Empty when none did."""
    header = ("dataset", "extractor", "author%(n)", "named%(n)", "none%(n)", "origin%(n)",
              "editor%(n)", "language%(n)")
    rows = [header]
    for r in reports:
        if not has_record_gold(r):
            continue
        rows.append(
            (
                r.dataset,
                r.extractor,
                _rate(r.author_accuracy, r.author_n),
                _rate(r.author_named_accuracy, r.author_named_n),
                _rate(r.author_none_accuracy, r.author_none_n),
                _rate(r.origin_accuracy, r.origin_n),
                _rate(r.editor_accuracy, r.editor_n),
                _rate(r.language_accuracy, r.language_n),
            )
        )
    if len(rows) == 1:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


_MARKDOWN_HEADER = (
    "| method | F1 | qualified % | excellent % | title % (n) | date % (n) | pages/s |"
)


def format_markdown(reports: list[DatasetReport]) -> str:
    """A markdown comparison: one table per dataset, then who wins where.

    Made for README: every extractor of the run on every dataset side by side
    (F1, qualified %, excellent %, title and date accuracy, pages/s), and for
    each dataset the extractor with the highest F1, the highest qualified %
    and the most pages/s, plus how far each paper method is from the winner.
    Datasets without body gold get no table (there is nothing to score).
    """
    by_dataset: dict[str, list[DatasetReport]] = {}
    for r in reports:
        if r.body_pages:
            by_dataset.setdefault(r.dataset, []).append(r)
    out: list[str] = []
    wins: list[str] = []
    for dataset, rows in by_dataset.items():
        out.append(f"**{dataset}** ({rows[0].pages} pages, {rows[0].body_pages} with body gold)\n")
        out.append(_MARKDOWN_HEADER)
        out.append("|---|---|---|---|---|---|---|")
        top_f1 = max(rows, key=lambda r: r.f1 or 0.0)
        top_q = max(rows, key=lambda r: (r.qualified or 0.0, r.f1 or 0.0))
        fastest = max(rows, key=lambda r: r.pages_per_s or 0.0)
        for r in rows:
            f1 = _fmt(r.f1, ".3f")
            out.append(
                f"| {r.extractor} | {f'**{f1}**' if r is top_f1 else f1} | {_pct(r.qualified)} | "
                f"{_pct(r.excellent)} | "
                + (f"{_pct(r.title_accuracy)} ({r.title_n})" if r.title_n else "-")
                + " | "
                + (f"{_pct(r.date_accuracy)} ({r.date_n})" if r.date_n else "-")
                + f" | {_fmt(r.pages_per_s, '.1f')} |"
            )
        out.append("")
        behind = ", ".join(
            f"{r.extractor} {(r.f1 or 0.0) - (top_f1.f1 or 0.0):+.3f}"
            for r in rows
            if r is not top_f1
        )
        wins.append(
            f"- {dataset}: highest F1 {top_f1.extractor} ({_fmt(top_f1.f1, '.3f')}), "
            f"most qualified {top_q.extractor} ({_pct(top_q.qualified)} %), "
            f"fastest {fastest.extractor} ({_fmt(fastest.pages_per_s, '.1f')} pages/s); "
            f"F1 behind the winner: {behind or 'none'}"
        )
    if wins:
        out.append("Who wins where:\n")
        out.extend(wins)
    pooled = pooled_accuracy(reports)
    if pooled:
        out.append("\nTitle and date accuracy pooled over every page with that gold:\n")
        for extractor, (title_ok, title_n, date_ok, date_n) in pooled.items():
            title = f"{_pct(title_ok / title_n)} % of {title_n}" if title_n else "-"
            date = f"{_pct(date_ok / date_n)} % of {date_n}" if date_n else "-"
            out.append(f"- {extractor}: titles {title}, dates {date}")
    scored = [r for r in reports if has_record_gold(r)]
    if scored:
        out.append("\nRecord fields, % right (pages with that gold):\n")
        out.append(
            "| dataset | method | authors | authors named | no author | origin | editor "
            "| language |"
        )
        out.append("|---|---|---|---|---|---|---|---|")
        for r in scored:
            out.append(
                f"| {r.dataset} | {r.extractor} | {_rate(r.author_accuracy, r.author_n)} | "
                f"{_rate(r.author_named_accuracy, r.author_named_n)} | "
                f"{_rate(r.author_none_accuracy, r.author_none_n)} | "
                f"{_rate(r.origin_accuracy, r.origin_n)} | "
                f"{_rate(r.editor_accuracy, r.editor_n)} | "
                f"{_rate(r.language_accuracy, r.language_n)} |"
            )
    return "\n".join(out)
