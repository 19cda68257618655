"""URL shapes: links grouped by the form of their address, and the regex of a group.

A news site prints every article under one or a few URL forms (``/news/2019-05-12/
123456.html``, ``/article/7812345``, ``/story/9f2c3a0b.html``) and every list, tag,
author or video page under others. Discovery groups a site's links by form, samples each
group, and writes an anchored regex for the groups whose samples are articles.

A URL is read as segments (the host, each path segment, the query when the path holds no
id) and each segment as tokens: ``W`` a slug (two or more words joined by ``-`` or
``_``), ``D`` a digit run, ``L``/``U`` a lower/upper-case letter
run, ``H`` a hex hash (8+ characters, digits and letters a-f), ``X`` an id of mixed
letters and digits (``ATJVVCJR00254TFQ``, ``20240913A06AM400``), ``P`` a run of
percent-escapes (a CJK word), and single separator characters (``-``, ``_``, ``.``).

- The *coarse* shape is the sequence of token kinds (separators literal), per segment,
  with the site's registered domain: every page of one URL form has the same one.
- The *fine* shape adds the full host and the words of the directory segments
  (``news``, ``tag``, ``video``): a coarse family splits into its sections, so a section
  of videos is sampled apart from a section of articles with the same form.

:func:`pattern` writes a group's regex, position by position over its members: a token
every member shares stays literal, a varying one becomes its class, sized as tightly as
the members allow (``\\d{4}`` for a year, ``[0-9a-f]{32}`` for a hash, ``\\d+`` for an id
that grows), and a word that varies becomes the alternation of the words seen when the
family holds pages of another kind, else ``[a-z]+``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from urllib.parse import parse_qsl, urlsplit

import tldextract

__all__ = [
    "Shape",
    "Token",
    "group_urls",
    "has_id",
    "pattern",
    "registered_domain",
    "shape_of",
    "tokens",
]

#: The Public Suffix List bundled with tldextract, never fetched (no network at runtime).
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

_ID_RUN = re.compile(r"[0-9A-Za-z]{6,}")
#: Two or more words joined by '-' or '_' (a slug: ``new-vaccine-approved``); a word
#: starts with a letter, so ``index_2`` and ``c1001-31234567`` are no slugs.
_SLUG = re.compile(
    r"[A-Za-z][A-Za-z0-9]*(?:[-_](?:[A-Za-z][A-Za-z0-9]*|\d+(?=[-_][A-Za-z])))+"
)
#: A whole segment of letters, one word or a slug (``news``, ``hong-kong``): one ``W``.
_WORDS = re.compile(r"[A-Za-z]+(?:[-_][A-Za-z]+)*")
_TOKEN = re.compile(r"(?P<D>\d+)|(?P<L>[a-z]+)|(?P<U>[A-Z]+)|(?P<P>(?:%[0-9A-Fa-f]{2})+)|(?P<S>.)")
_HEX = re.compile(r"[0-9a-f]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z_-]*")
_DATE8 = re.compile(r"(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])")
_DATE6 = re.compile(r"(?:19|20)\d{2}(?:0[1-9]|1[0-2])")

#: Characters that end a URL's prefix match after an article regex.
END = r"(?:[?#]|$)"


@dataclass(frozen=True, slots=True)
class Token:
    """One run of a segment: its kind (``D L U H X P`` or ``S`` for a separator) and text."""

    kind: str
    text: str


def _escape(text: str) -> str:
    """``re.escape`` without escaping ``-`` (a plain character outside a class)."""
    escaped = re.escape(text)
    for plain in "-&~%=:,@!":
        escaped = escaped.replace("\\" + plain, plain)
    return escaped


def _transitions(run: str) -> int:
    return sum(1 for a, b in pairwise(run) if a.isdigit() != b.isdigit())


def _id_kind(run: str) -> str | None:
    """``H`` for a hex hash, ``X`` for a mixed id, None for an ordinary run."""
    digits = sum(c.isdigit() for c in run)
    letters = len(run) - digits
    if letters and digits and len(run) >= 8 and _HEX.fullmatch(run) and _transitions(run) >= 2:
        return "H"
    if digits >= 2 and letters >= 2 and _transitions(run) >= 2:
        return "X"
    upper = sum(c.isupper() for c in run)
    if len(run) >= 8 and upper >= 2 and letters - upper >= 2 and _case_changes(run) >= 4:
        return "X"  # letters only, case mixed throughout: KdQzRfTxYbA
    return None


def _case_changes(run: str) -> int:
    return sum(1 for a, b in pairwise(run) if a.isupper() != b.isupper())


@cache
def tokens(segment: str) -> tuple[Token, ...]:
    """A segment's tokens (module docstring): slugs, then ids, then plain runs."""
    if _WORDS.fullmatch(segment):
        return (Token("W", segment),)
    out: list[Token] = []
    pos = 0
    for m in _SLUG.finditer(segment):
        out.extend(_ids(segment[pos : m.start()]))
        out.append(Token("W", m.group()))
        pos = m.end()
    out.extend(_ids(segment[pos:]))
    return tuple(out)


def _ids(text: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    for m in _ID_RUN.finditer(text):
        kind = _id_kind(m.group())
        if kind is None:
            continue
        out.extend(_plain(text[pos : m.start()]))
        out.append(Token(kind, m.group()))
        pos = m.end()
    out.extend(_plain(text[pos:]))
    return out


def _plain(text: str) -> list[Token]:
    return [Token(m.lastgroup or "S", m.group()) for m in _TOKEN.finditer(text)]


def registered_domain(host: str) -> str:
    """The domain a site registered (``huanan-daily.cn`` of ``www.huanan-daily.cn``,
    ``beicheng-times.com.tw`` of ``news.beicheng-times.com.tw``), by the Public Suffix List."""
    parts = _EXTRACT(host.lower())
    return parts.top_domain_under_public_suffix or host.lower()


def has_id(url: str, *, query: bool = True) -> bool:
    """Does the URL carry what article URLs carry: a digit run of four or more, a hash or a
    mixed id, in its path (or, with ``query``, in its query: ``content.php?id=88123``)?
    (List, tag and author pages mostly do not.)"""
    parts = urlsplit(url)
    segments = [*parts.path.split("/"), *([parts.query] if query and parts.query else [])]
    return any(
        t.kind in "HX" or (t.kind == "D" and len(t.text) >= 4)
        for segment in segments
        for t in tokens(segment)
    )


@dataclass(frozen=True, slots=True)
class Shape:
    """A URL read as segments of tokens, with its coarse and fine keys."""

    url: str
    host: str
    domain: str
    segments: tuple[tuple[Token, ...], ...]  # path segments, then the query if kept
    slash: bool  # the path ends with '/'
    query: bool  # the last segment is the query

    @property
    def coarse(self) -> tuple:
        """Token kinds per segment (separators literal); in a query, the parameter names
        and word values are literal too (``?id=`` and ``?page=`` are different forms)."""
        last = len(self.segments) - 1
        return (
            self.domain,
            self.query,
            tuple(
                tuple(
                    t.text if t.kind == "S" or (self.query and i == last and t.kind in "LUW")
                    else t.kind
                    for t in seg
                )
                for i, seg in enumerate(self.segments)
            ),
        )

    @property
    def fine(self) -> tuple:
        """The coarse key, the host, and the words of the directories (and, before a
        query, of the script's name: ``content.php`` apart from ``list.php``)."""
        last = len(self.segments) - 1
        words = []
        for i, seg in enumerate(self.segments):
            script = self.query and i == last - 1
            if i < last and len(seg) == 1 and seg[0].kind in "LUW":
                words.append(seg[0].text)
            elif script:
                words.append("".join(t.text for t in seg))
            else:
                words.append(None)
        return (self.coarse, self.host, tuple(words))


def shape_of(url: str) -> Shape:
    """The shape of an absolute http(s) URL."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path or "/"
    slash = path.endswith("/") and path != "/"
    names = [s for s in path.split("/") if s]
    segments = [tokens(s) for s in names]
    keep_query = bool(parts.query) and not has_id(url, query=False)
    if keep_query:
        segments.append(tokens("?" + parts.query))
    return Shape(url, host, registered_domain(host), tuple(segments), slash, keep_query)


@dataclass(slots=True)
class Group:
    """Links of one fine shape."""

    key: tuple
    shapes: list[Shape] = field(default_factory=list)

    @property
    def urls(self) -> list[str]:
        return [s.url for s in self.shapes]

    @property
    def coarse(self) -> tuple:
        return self.key[0]


def group_urls(urls: Iterable[str]) -> list[Group]:
    """Links grouped by fine shape, largest group first (ties: first seen)."""
    groups: dict[tuple, Group] = {}
    for url in dict.fromkeys(urls):
        shape = shape_of(url)
        groups.setdefault(shape.fine, Group(shape.fine)).shapes.append(shape)
    return sorted(groups.values(), key=lambda g: -len(g.shapes))


def _digits(values: Sequence[str], after_letters: bool) -> str:
    lengths = {len(v) for v in values}
    if len(set(values)) == 1 and after_letters and len(values[0]) <= 2:
        return _escape(values[0])  # v2, n1: part of a word
    if len(lengths) == 1:
        n = lengths.pop()
        if 2 <= n <= 4:
            return rf"\d{{{n}}}"
        if n == 8 and all(_DATE8.fullmatch(v) for v in values):
            return r"\d{8}"
        if n == 6 and all(_DATE6.fullmatch(v) for v in values):
            return r"\d{6}"
    return r"\d+"


def _sized(charset: str, values: Sequence[str]) -> str:
    lo, hi = min(map(len, values)), max(map(len, values))
    return f"[{charset}]{{{lo}}}" if lo == hi else f"[{charset}]{{{lo},{hi}}}"


def _id_class(values: Sequence[str], kind: str) -> str:
    if kind == "H":
        return _sized("0-9a-f", values)
    joined = "".join(values)
    if joined == joined.upper():
        return _sized("0-9A-Z", values)
    if joined == joined.lower():
        return _sized("0-9a-z", values)
    return _sized("0-9A-Za-z", values)


def _word(values: Sequence[str], kind: str, exclusive: bool) -> str:
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return _escape(distinct[0])
    if exclusive:
        return "(?:" + "|".join(_escape(v) for v in sorted(distinct)) + ")"
    return "[a-z]+" if kind == "L" else "[A-Z]+"


def _segment(columns: list[list[Token]], exclusive: bool) -> str:
    out = []
    for i, column in enumerate(columns):
        kind = column[0].kind
        values = [t.text for t in column]
        if kind == "S":
            out.append(_escape(values[0]))
        elif kind == "D":
            after = i > 0 and columns[i - 1][0].kind in "LU"
            out.append(_digits(values, after))
        elif kind in "HX":
            same = len(set(values)) == 1 and len(values) > 1
            out.append(_escape(values[0]) if same else _id_class(values, kind))
        elif kind == "W":
            distinct = list(dict.fromkeys(values))
            if len(distinct) == 1:
                out.append(_escape(distinct[0]))
            elif exclusive and all(len(v) <= 20 for v in distinct):
                out.append("(?:" + "|".join(_escape(v) for v in sorted(distinct)) + ")")
            else:
                out.append("[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
        elif kind == "P":
            out.append("(?:%[0-9A-Fa-f]{2})+")
        else:
            out.append(_word(values, kind, exclusive))
    return "".join(out)


def _host(shapes: Sequence[Shape], exclusive: bool) -> str:
    hosts = list(dict.fromkeys(s.host for s in shapes))
    if len(hosts) == 1:
        return _escape(hosts[0])
    domain = shapes[0].domain
    subs = [h[: -len(domain) - 1] if h.endswith("." + domain) else "" for h in hosts]
    if exclusive or "" in subs:
        return "(?:" + "|".join(_escape(h) for h in sorted(hosts)) + ")"
    return r"(?:[a-z0-9-]+\.)+" + _escape(domain)


def pattern(shapes: Sequence[Shape], *, exclusive: bool = False, whole: bool = True) -> str:
    """The anchored regex of a group of one coarse shape.

    ``exclusive``: other pages share the coarse shape, so varying words and hosts are
    written as the alternation of those seen instead of a class. ``whole``: the regex
    ends where the URL ends (before a query or fragment) instead of being a prefix.
    """
    n = len(shapes[0].segments)
    query = shapes[0].query
    path_n = n - 1 if query else n
    path = ""
    for i in range(path_n):
        columns = [list(col) for col in zip(*(s.segments[i] for s in shapes), strict=True)]
        path += "/" + _segment(columns, exclusive)
    slashes = {s.slash for s in shapes}
    if slashes == {True}:
        path += "/"
    elif len(slashes) > 1:
        path += "/?"
    if not path_n:
        path = "/"
    head = "^https?://" + _host(shapes, exclusive) + path
    if query:
        return head + r"\?" + _query(shapes, exclusive)
    return head + (END if whole else "")


def _query(shapes: Sequence[Shape], exclusive: bool) -> str:
    """One lookahead per parameter, so the regex matches the parameters in any order
    (links print ``?id=1&cid=3``; canonical URLs sort them)."""
    params = [dict(parse_qsl(urlsplit(s.url).query, keep_blank_values=True)) for s in shapes]
    out = []
    for name in sorted(params[0]):
        values = (tokens(p.get(name, "")) for p in params)
        columns = [list(col) for col in zip(*values, strict=False)]
        value = _segment(columns, exclusive) if columns else ""
        out.append(f"(?=(?:[^#]*&)?{_escape(name)}={value}(?:[&#]|$))")
    return "".join(out)


def families(groups: Iterable[Group]) -> dict[tuple, list[Group]]:
    """Groups by coarse shape."""
    out: dict[tuple, list[Group]] = defaultdict(list)
    for g in groups:
        out[g.coarse].append(g)
    return out


def is_word_segment(segment: str) -> bool:
    """A path segment that is a plain word (a section, a tag kind), no digits."""
    return bool(_WORD.fullmatch(segment))
