"""Stories in SQL: reprint detection's index (MinHash signatures, LSH band keys) and the
``articles.story_id`` it assigns (``newsspider/reprints`` holds the text side;
docs/reprints.md the method and its figures).

:func:`assign_stories` runs inside the transaction that stored a batch of articles, so an
article is stored and placed in its story together or not at all, never by recomputing the
corpus: each article's band keys are looked up (one indexed query), candidates whose
signatures and lengths estimate an overlap below ``prefilter`` are skipped, the rest are
checked exactly on their stored text, and the article joins the stories of those that pass the
threshold (union of pairs). A story's id is the id of its first indexed article and it
keeps that id as it grows; when an article joins two stories, the younger one is merged
into the older id. The story's original is its earliest published article, decided when
read (:func:`list_stories`), so a late-crawled earlier article becomes the original without
rewriting anything; but when its articles state an origin (来源, ``articles.origin``) and
a member's own site is that outlet, the earliest such member is the original
(:func:`original_first`): a reprint published minutes before the agency's own copy was
crawled does not take its place.

On PostgreSQL the assignment takes a transaction-level advisory lock, so two workers
storing members of one story at the same moment see each other's band keys (the second
waits for the first to commit); SQLite's writers are serialised by the database itself.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, delete, func, select, text, update
from sqlalchemy.orm import Session

from newsspider.extraction.record import normalise_origin
from newsspider.reprints import (
    CodesCache,
    Fingerprint,
    ReprintParams,
    band_keys,
    codes,
    estimate,
    estimate_overlap,
    fingerprint,
    overlap,
)
from newsspider.sites import SITES

from .db import chunked, execute_in, execute_many, insert_values, select_in
from .engine import transaction
from .models import Article, ReprintBand, ReprintSignature

__all__ = [
    "REPRINT_LOCK",
    "ReprintStats",
    "Story",
    "StoryMember",
    "assign_stories",
    "collapse_ids",
    "index_size",
    "list_stories",
    "original_first",
    "outlet_names",
    "rebuild_stories",
    "reprint_stats",
    "stale_signatures",
    "story_of",
    "unassigned_count",
]

#: PostgreSQL advisory lock held while stories are assigned ("news_rep").
REPRINT_LOCK = 0x6E6577735F726570
#: Articles per transaction of a rebuild or catch-up.
REBUILD_BATCH = 500
#: The shingle codes of the texts checked lately (:class:`.reprints.CodesCache`), shared by
#: every batch of the process: at most 4 million codes (32 MB, plus the texts they key, about
#: as many characters), the texts of about a thousand recent articles. A story's members
#: are candidates of each of its new reprints.
CODES = CodesCache(max_codes=4_000_000)
ARTICLES = Article.__table__
# Driver-level statements (:func:`.db.select_in` and :func:`.db.execute_in`, ``{in_}``: the
# membership test of a batch's keys or ids; :func:`.db.insert_values`, the head of a
# multi-row insert; :func:`.db.execute_many`, ``{}``: one placeholder per column). The
# reprint index is read and written a batch at a time with thousands of band keys, where
# SQLAlchemy's compilation of each statement cost more than the database's own work.
_BY_URL = "SELECT id, content, content_md5, story_id FROM articles WHERE url {in_}"
_BY_ID = "SELECT id, content, content_md5, story_id FROM articles WHERE id {in_}"
_INDEXED = (
    "SELECT article_id, content_md5, signature FROM reprint_signatures WHERE article_id {in_}"
)
_BAND_ROWS = "SELECT band_key, article_id FROM reprint_bands WHERE band_key {in_}"
_SIGNATURE_ROWS = (
    "SELECT s.article_id, s.signature, s.chars, a.story_id FROM reprint_signatures s "
    "JOIN articles a ON a.id = s.article_id WHERE s.article_id {in_}"
)
_TEXTS = "SELECT id, content FROM articles WHERE id {in_}"
_SIGNATURES = "INSERT INTO reprint_signatures (article_id, content_md5, chars, signature)"
_BAND_INSERT = (
    "INSERT INTO reprint_bands (band_key, article_id) VALUES ({}, {}) ON CONFLICT DO NOTHING"
)
_OWN_STORY = "UPDATE articles SET story_id = id WHERE id {in_}"
_STORY = "UPDATE articles SET story_id = {} WHERE id = {}"
SIGS = ReprintSignature.__table__
BANDS = ReprintBand.__table__


@dataclass(frozen=True, slots=True)
class StoryMember:
    """One article of a story, with its similarity to the story's original and the origin
    it states (来源, ``articles.origin``)."""

    id: int
    site: str
    url: str
    published: datetime | None
    title: str | None
    similarity: float
    origin: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "site": self.site,
            "url": self.url,
            "published": self.published.isoformat() if self.published else None,
            "title": self.title,
            "similarity": round(self.similarity, 4),
            "origin": self.origin,
        }


@dataclass(frozen=True, slots=True)
class Story:
    """Articles that carry one text; ``members[0]`` is the original (earliest published, or
    the member whose own site is the stated origin: :func:`original_first`)."""

    id: int
    members: list[StoryMember]

    @property
    def original(self) -> StoryMember:
        return self.members[0]

    @property
    def sites(self) -> list[str]:
        return sorted({m.site for m in self.members})

    def as_dict(self) -> dict[str, Any]:
        return {
            "story_id": self.id,
            "original": self.original.id,
            "articles": len(self.members),
            "members": [m.as_dict() for m in self.members],
        }


@dataclass(slots=True)
class ReprintStats:
    """Per site: articles in stories, how many are reprints (in a story of two or more,
    not its original); and source site -> reprinting site pairs, most frequent first."""

    articles: dict[str, int] = field(default_factory=dict)
    reprints: dict[str, int] = field(default_factory=dict)
    originals: dict[str, int] = field(default_factory=dict)
    pairs: list[tuple[str, str, int]] = field(default_factory=list)
    stories: int = 0
    unassigned: int = 0

    def share(self, site: str) -> float:
        n = self.articles.get(site, 0)
        return self.reprints.get(site, 0) / n if n else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "stories": self.stories,
            "unassigned": self.unassigned,
            "sites": {
                s: {
                    "articles": n,
                    "reprints": self.reprints.get(s, 0),
                    "originals": self.originals.get(s, 0),
                    "reprint_share": round(self.share(s), 4),
                }
                for s, n in self.articles.items()
            },
            "pairs": [{"source": a, "reprinted_by": b, "stories": n} for a, b, n in self.pairs],
        }


# -- assignment ------------------------------------------------------------------------


def _lock(session: Session) -> None:
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": REPRINT_LOCK})


def _pack(sig: Sequence[int]) -> bytes:
    return array("I", sig).tobytes()


def _unpack(blob: bytes) -> list[int]:
    values = array("I")
    values.frombytes(blob)
    return values.tolist()


def assign_stories(
    session: Session,
    params: ReprintParams,
    *,
    urls: Iterable[str] = (),
    ids: Iterable[int] = (),
) -> int:
    """Place the articles named by ``urls`` and ``ids`` in their stories; return how many
    were (re)indexed. Runs in the caller's transaction; an article whose stored text was
    indexed already is left as it is, so storing a batch again changes nothing."""
    _lock(session)
    rows: dict[int, Any] = {}
    for r in select_in(session, _BY_URL, list(dict.fromkeys(urls))):
        rows[r.id] = r
    for r in select_in(session, _BY_ID, list(dict.fromkeys(ids))):
        rows[r.id] = r
    if not rows:
        return 0
    indexed = {r.article_id: r for r in select_in(session, _INDEXED, sorted(rows))}
    todo: list[tuple[Any, Fingerprint]] = []
    for article_id in sorted(rows):
        row = rows[article_id]
        old = indexed.get(article_id)
        if old is not None and old.content_md5 == row.content_md5 and row.story_id is not None:
            continue
        if old is not None:
            _unindex(session, article_id, old.signature, params)
        todo.append((row, fingerprint(row.content, params)))
    if todo:
        _Batch(session, params, todo).place()
    return len(todo)


def _unindex(session: Session, article_id: int, blob: bytes | None, params: ReprintParams) -> None:
    if blob is not None:
        keys = band_keys(_unpack(blob), params.bands, params.rows)
        session.execute(
            delete(BANDS).where(BANDS.c.article_id == article_id, BANDS.c.band_key.in_(keys))
        )
    session.execute(delete(SIGS).where(SIGS.c.article_id == article_id))


class _Batch:
    """One call's articles placed in their stories, in id order, with a fixed number of
    statements per batch rather than per article (``storage`` cost: the statements'
    overhead was most of an article's added time).

    The index of what is stored is read once: every indexed article sharing a band key
    with the batch, its signature, length and story. Each article of the batch is then
    placed as if it had been indexed on its own, one after the other: the batch's earlier
    articles are candidates of its later ones, a merge of two stories renames them in
    what was read and in what is still to be written. The signatures are written with one
    multi-row insert, the band keys with one ``executemany``, the story ids with one
    ``UPDATE`` for the articles that start a story and one row each for those that join
    one; a merge is written at once.
    """

    def __init__(
        self, session: Session, params: ReprintParams, todo: list[tuple[Any, Fingerprint]]
    ):
        self.session, self.params, self.todo = session, params, todo
        #: band key -> the indexed articles holding it (the batch's own, as they are placed)
        self.by_key: dict[int, set[int]] = defaultdict(set)
        #: article -> (signature, normalised length) of every candidate read or placed
        self.sigs: dict[int, tuple[list[int], int]] = {}
        #: article -> story, for candidates and the batch's placed articles
        self.story: dict[int, int] = {}
        #: the stored text of the batch's articles (the exact check of a later one)
        self.content: dict[int, str | None] = {row.id: row.content for row, _ in todo}
        #: article -> its likely indexed candidates, estimated once (:meth:`_read_texts`)
        self.prefetched: dict[int, list[tuple[float, int]]] = {}
        #: the batch's articles placed so far (candidates of its later ones)
        self.placed: set[int] = set()

    def place(self) -> None:
        session = self.session
        insert_values(
            session,
            _SIGNATURES,
            [
                (
                    row.id,
                    row.content_md5,
                    fp.chars,
                    _pack(fp.signature) if fp.signature is not None else None,
                )
                for row, fp in self.todo
            ],
        )
        self._read_index({k for _, fp in self.todo for k in fp.keys})
        self._read_texts()
        bands: list[tuple[int, int]] = []
        for row, fp in self.todo:
            stories: set[int] = {row.story_id} if row.story_id is not None else set()
            if fp.signature is not None:
                stories |= self._matching_stories(row.id, fp)
                keys = sorted(set(fp.keys))
                bands += [(k, row.id) for k in keys]
                for k in keys:
                    self.by_key[k].add(row.id)
                self.sigs[row.id] = (fp.signature, fp.chars)
            target = min(stories) if stories else row.id
            for other in stories - {target}:  # a merge: the younger story joins the older
                session.execute(
                    update(ARTICLES).where(ARTICLES.c.story_id == other).values(story_id=target)
                )
                for a, st in self.story.items():
                    if st == other:
                        self.story[a] = target
            self.story[row.id] = target
            self.placed.add(row.id)
        # An executemany: for rows of two integers it costs less than multi-row statements
        # (benchmarks/reprints_cost.py: 0.88 ms an article against 0.97).
        execute_many(session, _BAND_INSERT, bands)
        changed = [row.id for row, _ in self.todo if row.story_id != self.story[row.id]]
        # Most articles start a story of their own: one statement for them all.
        execute_in(session, _OWN_STORY, [a for a in changed if self.story[a] == a])
        execute_many(session, _STORY, [(self.story[a], a) for a in changed if self.story[a] != a])

    def _read_index(self, keys: set[int]) -> None:
        """The indexed articles sharing one of ``keys``, their signatures and stories (driver
        SQL, :func:`.db.select_in`: thousands of keys a batch)."""
        mine = {row.id for row, _ in self.todo}
        found: set[int] = set()
        by_key = self.by_key
        for band_key, article_id in select_in(self.session, _BAND_ROWS, sorted(keys)):
            if article_id not in mine:
                by_key[band_key].add(article_id)
                found.add(article_id)
        for article_id, blob, chars, story_id in select_in(
            self.session, _SIGNATURE_ROWS, sorted(found)
        ):
            if blob is not None and story_id is not None:
                self.sigs[article_id] = (_unpack(blob), chars)
                self.story[article_id] = story_id

    def _read_texts(self) -> None:
        """The stored texts of the indexed candidates likely to need the exact check (one
        query for the batch, not one per candidate)."""
        wanted: set[int] = set()
        for row, fp in self.todo:
            if fp.signature is not None:
                self.prefetched[row.id] = self._likely(row.id, fp)
                wanted.update(c for _, c in self.prefetched[row.id])
        for article_id, content in select_in(
            self.session, _TEXTS, sorted(wanted - self.content.keys())
        ):
            self.content[article_id] = content

    def _likely(
        self, article_id: int, fp: Fingerprint, among: set[int] | None = None
    ) -> list[tuple[float, int]]:
        """(estimated overlap, candidate) of the indexed articles (``among`` them only, when
        given) sharing a band key with ``fp`` whose signatures and lengths estimate at
        least ``prefilter``."""
        assert fp.signature is not None
        params = self.params
        candidates: set[int] = set()
        for k in set(fp.keys):
            candidates |= self.by_key.get(k, set())
        candidates.discard(article_id)
        if among is not None:
            candidates &= among
        likely: list[tuple[float, int]] = []
        for candidate in candidates:
            known = self.sigs.get(candidate)
            if known is None or candidate not in self.story:
                continue
            jaccard = estimate(fp.signature, known[0])
            guess = estimate_overlap(jaccard, fp.chars, known[1], params.shingle)
            if guess >= params.prefilter:
                likely.append((guess, candidate))
        return likely

    def _text(self, article_id: int) -> str | None:
        if article_id not in self.content:
            self.content[article_id] = self.session.scalar(
                select(ARTICLES.c.content).where(ARTICLES.c.id == article_id)
            )
        return self.content[article_id]

    def _matching_stories(self, article_id: int, fp: Fingerprint) -> set[int]:
        """The stories of the indexed articles that share a band key with ``fp`` and pass
        the exact check. Candidates are checked most similar first (by their signatures
        and lengths), and one match per story is enough: the other members of a story
        found are not read."""
        # the indexed candidates were estimated when their texts were prefetched; the
        # batch's own articles placed since are the only new ones
        likely = self.prefetched.get(article_id, []) + self._likely(article_id, fp, self.placed)
        if not likely:
            return set()
        likely.sort(reverse=True)
        mine = codes(fp, self.params)
        # a candidate of the reprints still to come (the stored text is the cache's key)
        CODES.put(self.content[article_id], self.params, mine)
        found: set[int] = set()
        for _, candidate in likely:
            if self.story[candidate] in found:
                continue
            theirs = CODES.codes(self._text(candidate), self.params)
            if overlap(mine, theirs) >= self.params.threshold:
                found.add(self.story[candidate])
        return found


def unassigned_count(engine: Engine) -> int:
    """Stored articles not yet placed in a story (stored before reprint detection)."""
    with engine.connect() as conn:
        return conn.scalar(select(func.count()).where(ARTICLES.c.story_id.is_(None))) or 0


def rebuild_stories(
    engine: Engine,
    params: ReprintParams,
    *,
    full: bool = False,
    progress: Callable[[int], object] | None = None,
) -> int:
    """Place every article without a story (``full``: forget the index and every story
    first, for a changed threshold or shingle size), in id order, ``REBUILD_BATCH``
    articles per transaction; return how many were placed."""
    if full:
        with transaction(engine) as s:
            _lock(s)
            s.execute(delete(BANDS))
            s.execute(delete(SIGS))
            s.execute(update(ARTICLES).values(story_id=None))
    done = 0
    last = 0
    while True:
        with transaction(engine) as s:
            ids = list(
                s.scalars(
                    select(ARTICLES.c.id)
                    .where(ARTICLES.c.story_id.is_(None), ARTICLES.c.id > last)
                    .order_by(ARTICLES.c.id)
                    .limit(REBUILD_BATCH)
                )
            )
            if not ids:
                return done
            assign_stories(s, params, ids=ids)
        last = ids[-1]
        done += len(ids)
        if progress is not None:
            progress(len(ids))


def stale_signatures(
    engine: Engine, params: ReprintParams, *, sample: int = 200
) -> tuple[int, int]:
    """(rows compared, rows stale) among ``sample`` indexed articles drawn at random: an
    indexed article is stale when the signature stored for its text is not the one the
    running code makes of that text (English texts indexed by characters before they were
    shingled by words, or a new seed, shingle size or rensa algorithm: docs/reprints.md).

    The band keys depend on the shingling, and the schema records no version of it; the
    stored signature is the version. A stale article is inert rather than wrong: its keys
    meet no new article's, so its new reprints are not found (and, for an English article
    indexed by characters, it keeps the stories the old shingling gave it) until
    ``scrapy corpus reprints --rebuild``. A sample of 200 finds stale rows that are 2 % of
    the corpus 98 times in 100; the articles are drawn from the index's ids alone, and only
    their texts are read (docs/reprints.md: the time on 100,000 indexed)."""
    with engine.connect() as conn:
        ids = list(
            conn.scalars(
                select(SIGS.c.article_id)
                .where(SIGS.c.signature.is_not(None))
                .order_by(func.random())
                .limit(sample)
            )
        )
        rows = conn.execute(
            select(SIGS.c.signature, ARTICLES.c.content)
            .join(ARTICLES, ARTICLES.c.id == SIGS.c.article_id)
            .where(SIGS.c.article_id.in_(ids), SIGS.c.content_md5 == ARTICLES.c.content_md5)
        ).all()
    stale = 0
    for blob, content in rows:
        fp = fingerprint(content, params)
        stale += fp.signature is None or _pack(fp.signature) != bytes(blob)
    return len(rows), stale


# -- reading ----------------------------------------------------------------------------


def _members(session: Session, story_ids: Sequence[int], params: ReprintParams) -> Iterator[Story]:
    """The stories ``story_ids`` with their members, original first."""
    by_story: dict[int, list[Any]] = defaultdict(list)
    for chunk in chunked(list(story_ids)):
        stmt = select(
            ARTICLES.c.id,
            ARTICLES.c.site,
            ARTICLES.c.source,
            ARTICLES.c.origin,
            ARTICLES.c.url,
            ARTICLES.c.published,
            ARTICLES.c.title,
            ARTICLES.c.content,
            ARTICLES.c.story_id,
        ).where(ARTICLES.c.story_id.in_(chunk))
        for r in session.execute(stmt):
            by_story[r.story_id].append(r)
    for sid in story_ids:
        rows = original_first(by_story.get(sid, []))
        if not rows:
            continue
        first = CODES.codes(rows[0].content, params)
        members = [
            StoryMember(
                r.id,
                r.site,
                r.url,
                r.published,
                r.title,
                1.0 if k == 0 else overlap(first, CODES.codes(r.content, params)),
                r.origin,
            )
            for k, r in enumerate(rows)
        ]
        yield Story(sid, members)


def _published_order(r: Any) -> tuple[bool, datetime | None, int]:
    return (r.published is None, r.published, r.id)


def original_first(rows: Iterable[Any]) -> list[Any]:
    """A story's members (rows with ``id``, ``site``, ``source``, ``origin``,
    ``published``), the original first, then by publication time.

    The original is the earliest published member, unless the members state an origin
    (``origin``, normalised by extraction: ``新华网``, ``新华社``) that is a member's own
    site: then the earliest published such member. A member's own site is named by its
    site row's ``source`` (``新华网`` for ``xinhua``) and its stored ``source``, normalised
    as origins are (:func:`~newsspider.extraction.record.normalise_origin`); a name with a
    parenthesis (``新民网（新民晚报）``) also answers to each part (:func:`outlet_names`).
    An agency is not its website: ``新华社`` names no site row, ``新华网`` does.
    """
    ordered = sorted(rows, key=_published_order)
    stated = {o for r in ordered if (o := _outlet(normalise_origin(r.origin)))}
    if not stated:
        return ordered
    for k, r in enumerate(ordered):
        site = SITES.get(r.site)
        names = outlet_names(r.source) | (outlet_names(site.source) if site else set())
        if names & stated:
            return [r, *ordered[:k], *ordered[k + 1 :]]
    return ordered


_PARENS = re.compile(r"[（(]([^）)]*)[）)]")


def _outlet(name: str | None) -> str:
    """An outlet's name as compared: without spaces, ASCII letters in lower case."""
    return "".join((name or "").split()).lower()


def outlet_names(source: str | None) -> set[str]:
    """The names a site's ``source`` answers to: itself, the part outside a parenthesis
    and each part inside (``新民网（新民晚报）``: ``新民网``, ``新民晚报``)."""
    if not source:
        return set()
    names = {source, _PARENS.sub("", source), *_PARENS.findall(source)}
    return {o for n in names for o in (_outlet(n), _outlet(normalise_origin(n))) if o}


def list_stories(
    engine: Engine,
    params: ReprintParams,
    *,
    site: str | None = None,
    since: datetime | None = None,
) -> Iterator[Story]:
    """Stories of two or more articles, oldest story id first; ``site``: those with a
    member on that site; ``since``: those with a member published at or after it."""
    stmt = (
        select(ARTICLES.c.story_id)
        .where(ARTICLES.c.story_id.is_not(None))
        .group_by(ARTICLES.c.story_id)
        .having(func.count() >= 2)
    )
    if site is not None or since is not None:
        having = select(ARTICLES.c.story_id).where(ARTICLES.c.story_id.is_not(None))
        if site is not None:
            having = having.where(ARTICLES.c.site == site)
        if since is not None:
            having = having.where(ARTICLES.c.published >= since)
        stmt = stmt.where(ARTICLES.c.story_id.in_(having))
    with Session(engine) as s:
        story_ids = list(s.scalars(stmt.order_by(ARTICLES.c.story_id)))
        for chunk in chunked(story_ids, 200):
            yield from _members(s, list(chunk), params)


def story_of(engine: Engine, article_id: int, params: ReprintParams) -> Story | None:
    """The story of one article, ``None`` when it has none yet."""
    with Session(engine) as s:
        sid = s.scalar(select(ARTICLES.c.story_id).where(ARTICLES.c.id == article_id))
        if sid is None:
            return None
        return next(_members(s, [sid], params), None)


def collapse_ids(engine: Engine, ids: Sequence[int]) -> dict[int, tuple[int | None, list[str]]]:
    """For article ids (search hits): each one's story id and the sites of its story."""
    out: dict[int, tuple[int | None, list[str]]] = {}
    with Session(engine) as s:
        story: dict[int, int | None] = {}
        for chunk in chunked(list(ids)):
            stmt = select(ARTICLES.c.id, ARTICLES.c.story_id, ARTICLES.c.site).where(
                ARTICLES.c.id.in_(chunk)
            )
            for r in s.execute(stmt):
                story[r.id] = r.story_id
                out[r.id] = (r.story_id, [r.site])
        sites: dict[int, set[str]] = defaultdict(set)
        sids = sorted({v for v in story.values() if v is not None})
        for chunk in chunked(sids):
            stmt = (
                select(ARTICLES.c.story_id, ARTICLES.c.site)
                .where(ARTICLES.c.story_id.in_(chunk))
                .distinct()
            )
            for r in s.execute(stmt):
                sites[r.story_id].add(r.site)
    for aid, (sid, _) in out.items():
        if sid is not None:
            out[aid] = (sid, sorted(sites[sid]))
    return out


def reprint_stats(engine: Engine, *, top: int = 10) -> ReprintStats:
    """Reprint share per site and the ``top`` source -> reprinting site pairs."""
    out = ReprintStats()
    with Session(engine) as s:
        out.unassigned = s.scalar(select(func.count()).where(ARTICLES.c.story_id.is_(None))) or 0
        per_site = select(ARTICLES.c.site, func.count()).where(ARTICLES.c.story_id.is_not(None))
        for site, n in s.execute(per_site.group_by(ARTICLES.c.site)):
            out.articles[site] = n
        multi = (
            select(ARTICLES.c.story_id)
            .where(ARTICLES.c.story_id.is_not(None))
            .group_by(ARTICLES.c.story_id)
            .having(func.count() >= 2)
        )
        stmt = select(
            ARTICLES.c.story_id,
            ARTICLES.c.id,
            ARTICLES.c.site,
            ARTICLES.c.source,
            ARTICLES.c.origin,
            ARTICLES.c.published,
        ).where(ARTICLES.c.story_id.in_(multi))
        by_story: dict[int, list[Any]] = defaultdict(list)
        for r in s.execute(stmt):
            by_story[r.story_id].append(r)
    pairs: Counter[tuple[str, str]] = Counter()
    for rows in by_story.values():
        rows[:] = original_first(rows)
        original = rows[0]
        out.originals[original.site] = out.originals.get(original.site, 0) + 1
        for r in rows[1:]:
            out.reprints[r.site] = out.reprints.get(r.site, 0) + 1
        for reprinter in {r.site for r in rows[1:]}:
            pairs[(original.site, reprinter)] += 1
    out.stories = len(by_story)
    out.pairs = [(a, b, n) for (a, b), n in pairs.most_common(top)]
    return out


def index_size(engine: Engine) -> dict[str, int]:
    """Rows of the reprint index (signatures, band keys), for the cost benchmark."""
    with engine.connect() as conn:
        return {
            "signatures": conn.scalar(select(func.count()).select_from(SIGS)) or 0,
            "bands": conn.scalar(select(func.count()).select_from(BANDS)) or 0,
        }
