"""``scrapy corpus search|show|export|stats|reprints|migrate``: the stored corpus from the shell.

A thin shell over :class:`newsspider.storage.Corpus` on the database of the
``DATABASE_URL`` setting (else ``$DATABASE_URL``, else ``data/corpus.db``). Logging is off
so that the output is only the answer (pipe ``export`` into a file or ``jq``).

``search`` also filters by what pages state about themselves: ``--author NAME`` (one of
the article's authors, the exact name), ``--origin NAME`` (the stated source, 来源),
``--section NAME``, ``--lang CODE`` (ISO 639-1), and ``search`` and ``export`` by the
page's kind, ``--kind gallery`` (repeatable, or a comma list: ``article``, ``gallery``,
``video``, ``live``); with one of them the QUERY may be left out. ``export --format
parquet`` writes typed columns (pyarrow), ``-o FILE`` or a redirected stdout. ``migrate
--to postgresql+psycopg://...`` copies the (SQLite) corpus into PostgreSQL, resumably, and
verifies the copy (``newsspider/storage/migrate.py``).

Dates for ``--since``/``--until`` are ``YYYY-MM-DD`` or ISO 8601 times. A time without an
offset, and a bare date, are read in ``--tz`` (default Asia/Shanghai, the zone of most
sites). ``--since`` includes its instant or day; ``--until`` excludes its instant but
*includes* a bare day (``--until 2024-05-01`` ends at the next midnight).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any, ClassVar
from zoneinfo import ZoneInfo

from scrapy.exceptions import UsageError

from newsspider.cli import NewsCommand, time_zone
from newsspider.coverage.figures import coverage_table, row_json, site_coverage
from newsspider.errors import UserError
from newsspider.extraction.kinds import STORED
from newsspider.progress import progress_bar, stderr_is_terminal
from newsspider.reprints import params_from_settings
from newsspider.sites import SITES
from newsspider.storage import Article, Corpus, check_database, index_missing
from newsspider.storage.corpus import (
    DEFAULT_TZ,
    EXPORT_COLUMNS,
    EXPORT_FORMATS,
    TOP_RECORD,
    CorpusStats,
    parse_kinds,
    utc_day_bounds,
)
from newsspider.storage.fts import pending_rows, sync_search
from newsspider.storage.migrate import MigrationMismatch, plan_migration
from newsspider.storage.stories import (
    ReprintStats,
    Story,
    collapse_ids,
    list_stories,
    rebuild_stories,
    reprint_stats,
    story_of,
    unassigned_count,
)
from newsspider.web import serve

ACTIONS = ("search", "show", "export", "stats", "serve", "reprints", "migrate", "index")
#: ``--format`` of ``reprints`` (``export`` takes EXPORT_FORMATS)
REPRINT_FORMATS = ("table", "jsonl")
#: search hits fetched per hit shown with ``--collapse`` (reprints fold into one)
COLLAPSE_FETCH = 5
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_when(value: str, *, tz: str = DEFAULT_TZ, until: bool = False) -> datetime:
    """A ``--since``/``--until`` value as an aware datetime (see the module docstring).

    Raises ``UsageError`` with the accepted forms for anything else.
    """
    value = value.strip()
    if _DAY.fullmatch(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise UsageError(f"not a calendar date: {value!r}", print_help=False) from None
        start, end = utc_day_bounds(day, tz)
        return end if until else start
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"bad date {value!r}: use YYYY-MM-DD or ISO 8601 such as 2024-05-01T08:00+08:00",
            print_help=False,
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=ZoneInfo(tz))
    return when


class Command(NewsCommand):
    requires_project = True
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return (
            "search [QUERY] | show ID|URL | export | stats | serve | reprints | migrate --to URL"
            "  [options]"
        )

    def short_desc(self) -> str:
        return "Search, show, export or count the stored articles"

    def long_desc(self) -> str:
        return (
            "search QUERY: full-text search (Chinese works; any length), filtered by "
            "--author/--origin/--section/--lang/--kind too (then QUERY may be left out); "
            "show ID|URL: one article; export --format jsonl|csv|parquet [-o FILE]: every "
            "stored field, streamed (--kind too); stats: articles per site and day, newest "
            "article, per kind, line tables, top stated origins and sections (--by-origin: "
            "per month, live or each archive); "
            "serve [--host H] [--port P] [--token T]: the corpus in the browser, read-only; "
            "reprints [--format table|jsonl] [--rebuild]: stories of two or more articles; "
            "index: index the articles queued for search in batches (an upgraded corpus); "
            "migrate --to postgresql+psycopg://... [--batch N]: copy the SQLite corpus into "
            "PostgreSQL (resumable), then verify counts and content. "
            "Dates: YYYY-MM-DD or ISO 8601; without an offset they are read in --tz."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--site", default=None, help="only this site (key, e.g. netease)")
        parser.add_argument("--since", default=None, help="published at or after (date/time)")
        parser.add_argument("--until", default=None, help="published before (a date: through it)")
        parser.add_argument("--tz", default=DEFAULT_TZ, help="zone of dates without an offset")
        parser.add_argument("--limit", type=int, default=20, help="search results (20)")
        parser.add_argument(
            "--author", default=None, help="search: one of the authors is NAME (exact)"
        )
        parser.add_argument(
            "--origin", default=None, help="search: the stated source (来源) is NAME (exact)"
        )
        parser.add_argument("--section", default=None, help="search: the section is NAME")
        parser.add_argument(
            "--lang", default=None, help="search: the body's language, ISO 639-1 (zh, en)"
        )
        parser.add_argument(
            "--kind",
            action="append",
            default=None,
            help="search, export: only pages of this kind: article, gallery, video, live "
            "(repeatable, or a comma list)",
        )
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--format",
            choices=(*EXPORT_FORMATS, "table"),
            default=None,
            help="export: jsonl (default), csv or parquet; reprints: table (default) or jsonl",
        )
        parser.add_argument("-o", "--output", default=None, help="export to FILE (stdout)")
        parser.add_argument(
            "--days", type=int, default=30, help="stats: latest days listed (0: all)"
        )
        parser.add_argument(
            "--by-origin",
            action="store_true",
            help="stats: articles per UTC month, fetched live or from each archive",
        )
        parser.add_argument("--host", default=None, help="serve: bind address (WEB_HOST)")
        parser.add_argument("--port", type=int, default=None, help="serve: port (WEB_PORT)")
        parser.add_argument("--token", default=None, help="serve: access token (WEB_TOKEN)")
        parser.add_argument(
            "--collapse", action="store_true", help="search: one hit per story (reprints folded)"
        )
        parser.add_argument(
            "--rebuild", action="store_true", help="reprints: regroup every stored article"
        )
        parser.add_argument("--to", default=None, help="migrate: the PostgreSQL URL to copy into")
        parser.add_argument(
            "--batch", type=int, default=None, help="migrate: rows per transaction (MIGRATE_BATCH)"
        )

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args or args[0] not in ACTIONS:
            raise UsageError(f"give an action: {', '.join(ACTIONS)}")
        action, rest = args[0], args[1:]
        if action == "serve":
            self._serve(rest, opts)
            return
        if action == "migrate":
            self._migrate(rest, opts)
            return
        time_zone(opts.tz)
        if opts.site is not None and opts.site not in SITES:
            raise UserError(f"unknown site {opts.site!r}; the sites are: {', '.join(SITES)}")
        since = parse_when(opts.since, tz=opts.tz) if opts.since else None
        until = parse_when(opts.until, tz=opts.tz, until=True) if opts.until else None
        if since and until and since >= until:
            raise UsageError("--since must be before --until", print_help=False)
        opts.kind = parse_kinds(opts.kind) or None
        assert self.settings is not None
        engine = check_database(self.settings)
        if index_missing(engine):
            print("adding the search index to the stored articles (once)...", file=sys.stderr)  # noqa: T201
        corpus = Corpus(engine)
        if action == "search":
            filtered = any((opts.author, opts.origin, opts.section, opts.lang, opts.kind))
            if len(rest) > 1 or (rest and not rest[0].strip()) or not (rest or filtered):
                raise UsageError(
                    "search takes one QUERY (quote it if it has spaces), or none with "
                    "--author, --origin, --section, --lang or --kind"
                )
            if opts.limit < 1:
                raise UsageError("--limit must be at least 1", print_help=False)
            self._search(corpus, rest[0] if rest else "", opts, since, until)
        elif action == "show":
            if len(rest) != 1:
                raise UsageError("show takes one ID or URL")
            self._show(corpus, rest[0], opts)
        elif action == "export":
            if rest:
                raise UsageError("export takes no arguments, only options")
            opts.format = opts.format or "jsonl"
            if opts.format not in EXPORT_FORMATS:
                raise UsageError(
                    "export --format is jsonl or csv (text) or parquet (typed)", print_help=False
                )
            self._export(corpus, opts, since, until)
        elif action == "index":
            if rest:
                raise UsageError("index takes no arguments")
            self._index(corpus)
        elif action == "reprints":
            if rest:
                raise UsageError("reprints takes no arguments, only options")
            opts.format = opts.format or "table"
            if opts.format not in REPRINT_FORMATS:
                raise UsageError("reprints --format is table or jsonl", print_help=False)
            self._reprints(corpus, opts, since)
        else:
            if rest:
                raise UsageError("stats takes no arguments")
            self._stats(corpus, opts)

    # -- actions ----------------------------------------------------------------------

    def _serve(self, rest: list[str], opts: argparse.Namespace) -> None:
        """The read-only web view (``newsspider/web``); never creates or migrates tables."""
        if rest:
            raise UsageError("serve takes no arguments, only --host, --port and --token")
        assert self.settings is not None
        port = opts.port if opts.port is not None else self.settings.getint("WEB_PORT")
        if not 0 < port < 65536:
            raise UsageError(f"--port must be from 1 to 65535, not {port}", print_help=False)
        serve(
            self.settings.get("DATABASE_URL"),
            host=opts.host or self.settings.get("WEB_HOST"),
            port=port,
            token=opts.token or self.settings.get("WEB_TOKEN"),
            busy_timeout=self.settings.getfloat("NEWS_DB_BUSY_TIMEOUT"),
        )

    def _index(self, corpus: Corpus) -> None:
        """Index the rows queued for search (an upgraded corpus: all of them) in batches
        behind a bar; stopped, the next run (or crawl) goes on from the queue."""
        queued = pending_rows(corpus.engine)
        with progress_bar(queued, desc="index", unit="row") as bar:
            done = sync_search(corpus.engine, progress=bar.update)
        print(f"search index: {done} rows indexed, {pending_rows(corpus.engine)} queued")  # noqa: T201

    def _migrate(self, rest: list[str], opts: argparse.Namespace) -> None:
        """Copy the corpus into ``--to`` behind a bar; the last line says what was verified."""
        if rest or not opts.to:
            raise UsageError("migrate takes no arguments, only --to URL [--batch N]")
        assert self.settings is not None
        batch = opts.batch if opts.batch is not None else self.settings.getint("MIGRATE_BATCH")
        migration = plan_migration(check_database(self.settings), opts.to, batch=batch)
        try:
            with progress_bar(migration.work, desc="migrate", unit="row") as bar:
                report = migration.run(progress=bar.update)
        except MigrationMismatch as exc:
            print(f"scrapy corpus migrate: error: {exc}", file=sys.stderr)  # noqa: T201
            self.exitcode = 1
            return
        print(report.line())  # noqa: T201

    def _search(
        self,
        corpus: Corpus,
        query: str,
        opts: argparse.Namespace,
        since: datetime | None,
        until: datetime | None,
    ) -> None:
        fetch = opts.limit * COLLAPSE_FETCH if opts.collapse else opts.limit
        hits = corpus.search(
            query,
            site=opts.site,
            since=since,
            until=until,
            limit=fetch,
            author=opts.author,
            origin=opts.origin,
            section=opts.section,
            language=opts.lang,
            kind=opts.kind,
        )
        if opts.collapse:
            self._search_collapsed(corpus, query, hits[: fetch], opts)
            return
        if opts.json:
            print(json.dumps([h.as_dict() for h in hits], ensure_ascii=False, indent=2))  # noqa: T201
            return
        if not hits:
            print(_nothing(query, opts))  # noqa: T201
            return
        for h in hits:
            print(f"{h.id}\t{h.site}\t{_local(h.published, h.site)}\t{h.title or '-'}")  # noqa: T201
            print(f"\t{h.snippet}")  # noqa: T201

    def _show(self, corpus: Corpus, key: str, opts: argparse.Namespace) -> None:
        article = corpus.get(key)
        if article is None:
            what = "id" if key.strip().isdigit() else "URL"
            raise UsageError(f"no stored article with {what} {key!r}", print_help=False)
        record = _record(article)
        assert self.settings is not None
        story = story_of(corpus.engine, article.id, params_from_settings(self.settings))
        if opts.json:
            record["story"] = story.as_dict() if story is not None else None
            print(json.dumps(record, ensure_ascii=False, indent=2))  # noqa: T201
            return
        for name in ("id", "url", "site", "source", "title", "encoding", "content_md5"):
            print(f"{name + ':':13}{record[name] if record[name] is not None else '-'}")  # noqa: T201
        found = ", ".join(v for v in (article.published_source, article.published_precision) if v)
        for name in ("published", "fetched_at", "updated_at"):
            value = getattr(article, name)
            where = f"  [{found}]" if name == "published" and found else ""  # as scrapy extract
            print(f"{name + ':':13}{_local(value, article.site)}{where}")  # noqa: T201
        if article.archive is not None:  # fetched from a web archive (scrapy backfill)
            captured = _local(article.captured_at, article.site)
            print(f"{'archive:':13}{article.archive}, captured {captured}")  # noqa: T201
        for name, value in _stated(article):
            print(f"{name + ':':13}{value}")  # noqa: T201
        if story is None:
            print(f"{'story:':13}- (not yet grouped: scrapy corpus reprints)")  # noqa: T201
        elif len(story.members) == 1:
            print(f"{'story:':13}{story.id} (no reprint)")  # noqa: T201
        else:
            print(f"{'story:':13}{story.id} ({len(story.members)} articles)")  # noqa: T201
            print(_story_table(story, marked=article.id))  # noqa: T201
        print()  # noqa: T201
        print(article.content)  # noqa: T201

    def _search_collapsed(
        self, corpus: Corpus, query: str, hits: list[Any], opts: argparse.Namespace
    ) -> None:
        """One hit per story (its newest matching article), with the story's sites."""
        stories = collapse_ids(corpus.engine, [h.id for h in hits])
        shown: list[tuple[Any, int | None, list[str]]] = []
        seen: set[int] = set()
        for h in hits:
            story, sites = stories.get(h.id, (None, [h.site]))
            if story is not None and story in seen:
                continue
            if story is not None:
                seen.add(story)
            shown.append((h, story, sites))
            if len(shown) == opts.limit:
                break
        if opts.json:
            out = [h.as_dict() | {"story_id": sid, "sites": sites} for h, sid, sites in shown]
            print(json.dumps(out, ensure_ascii=False, indent=2))  # noqa: T201
            return
        if not shown:
            print(_nothing(query, opts))  # noqa: T201
            return
        for h, _, sites in shown:
            print(f"{h.id}\t{h.site}\t{_local(h.published, h.site)}\t{h.title or '-'}")  # noqa: T201
            print(f"\t{h.snippet}")  # noqa: T201
            if len(sites) > 1:
                print(f"\talso on: {', '.join(s for s in sites if s != h.site)}")  # noqa: T201

    def _reprints(self, corpus: Corpus, opts: argparse.Namespace, since: datetime | None) -> None:
        """Stories of two or more articles; first the articles not yet grouped (all of
        them with ``--rebuild``), behind a bar."""
        assert self.settings is not None
        params = params_from_settings(self.settings)
        engine = corpus.engine
        todo = corpus.count() if opts.rebuild else unassigned_count(engine)
        if todo:
            with progress_bar(todo, desc="reprints", unit="article") as bar:
                rebuild_stories(engine, params, full=opts.rebuild, progress=bar.update)
        stories = list_stories(engine, params, site=opts.site, since=since)
        if opts.format == "jsonl":
            for story in stories:
                print(json.dumps(story.as_dict(), ensure_ascii=False))  # noqa: T201
            return
        n = 0
        for story in stories:
            n += 1
            print(f"story {story.id}: {len(story.members)} articles, sites {', '.join(story.sites)}")  # noqa: T201
            print(_story_table(story))  # noqa: T201
            print()  # noqa: T201
        if not n:
            print("no story has two or more articles")  # noqa: T201

    def _export(
        self,
        corpus: Corpus,
        opts: argparse.Namespace,
        since: datetime | None,
        until: datetime | None,
    ) -> None:
        to_file = bool(opts.output and opts.output != "-")
        if opts.format == "parquet" and not to_file and sys.stdout.isatty():
            raise UsageError(
                "parquet is binary: give -o FILE or redirect stdout", print_help=False
            )
        # A bar on a terminal, never over the export itself (stdout on the same terminal).
        bar_on = stderr_is_terminal() and (to_file or not sys.stdout.isatty())
        where = {"site": opts.site, "since": since, "until": until, "kind": opts.kind}
        total = corpus.count(**where) if bar_on else None
        if to_file:
            path = Path(opts.output)
            if not path.parent.is_dir():
                raise UsageError(f"no such folder: {path.parent}", print_help=False)
            text = {"encoding": "utf-8", "newline": ""}
            with (
                open(path, "wb") if opts.format == "parquet" else open(path, "w", **text) as fh,
                progress_bar(total, desc="export", unit="article", enabled=bar_on) as bar,
            ):
                n = corpus.export(fh, opts.format, progress=bar.update, **where)
            print(f"exported {n} articles to {path}", file=sys.stderr)  # noqa: T201
            return
        out: IO[Any] = sys.stdout.buffer if opts.format == "parquet" else sys.stdout
        with progress_bar(total, desc="export", unit="article", enabled=bar_on) as bar:
            corpus.export(out, opts.format, progress=bar.update, **where)
        out.flush()

    def _stats(self, corpus: Corpus, opts: argparse.Namespace) -> None:
        stats = corpus.stats()
        if opts.site is not None:
            stats = stats.only(opts.site)
        reprints = reprint_stats(corpus.engine)
        assert self.settings is not None
        coverage = site_coverage(
            corpus.engine, self.settings.getint("COVERAGE_DAYS"), list(stats.sites), opts.site
        )
        if opts.json:
            out = stats.as_dict() | {"reprints": reprints.as_dict()}
            out["coverage"] = {k: [row_json(r) for r in v] for k, v in coverage.items()}
            print(json.dumps(out, ensure_ascii=False, indent=2))  # noqa: T201
            return
        if opts.by_origin:
            self._origin_tables(stats)
            return
        self._stats_tables(stats, opts)
        print("\n" + "\n".join(coverage_table(coverage)))  # noqa: T201
        self._kind_table(stats)
        self._record_tables(stats)
        self._reprint_tables(reprints, opts.site)

    def _kind_table(self, stats: CorpusStats) -> None:
        """``stats``: per site, the stored articles of each kind (a row stored before kinds
        existed counts as an article); topic and list pages are never stored."""
        shown = [k for k in STORED if any(s.kinds.get(k) for s in stats.sites.values())]
        if not shown or shown == ["article"]:
            return
        rows = [
            (s.site, *(str(s.kinds.get(k, 0)) for k in shown))
            for s in stats.sites.values()
            if s.kinds
        ]
        print("\narticles per kind (topic and list pages are followed, never stored):")  # noqa: T201
        print(_table(("site", *shown), rows))  # noqa: T201

    def _record_tables(self, stats: CorpusStats) -> None:
        """``stats``: per site, the stated origins and sections with the most articles."""
        rows = [
            (
                s.site,
                ", ".join(f"{o} {n}" for o, n in s.top_origins) or "-",
                ", ".join(f"{o} {n}" for o, n in s.top_sections) or "-",
            )
            for s in stats.sites.values()
            if s.top_origins or s.top_sections
        ]
        if not rows:
            return
        print(f"\ntop {TOP_RECORD} stated origins (来源) and sections per site (articles):")  # noqa: T201
        print(_table(("site", "origins", "sections"), rows))  # noqa: T201

    def _origin_tables(self, stats: CorpusStats) -> None:
        """``stats --by-origin``: per site, articles per UTC publication month (newest
        first) and origin, ``live`` or the archive they were fetched from."""
        if not stats.per_month:
            print("no articles")  # noqa: T201
            return
        for k, (site, months) in enumerate(stats.per_month.items()):
            origins = stats.origins(site)
            dated = sorted((m for m in months if m is not None), reverse=True)
            rows = [
                (
                    month or "no time",
                    *(str(months[month].get(o, 0)) for o in origins),
                    str(sum(months[month].values())),
                )
                for month in [*dated, *([None] if None in months else [])]
            ]
            title = f"{site}: articles per month (UTC publication month) by origin:"
            print(("\n" if k else "") + title)  # noqa: T201
            print(_table(("month", *origins, "total"), rows))  # noqa: T201

    def _reprint_tables(self, reprints: ReprintStats, site: str | None) -> None:
        """``stats``: the reprint share per site and the top source -> reprinting pairs."""
        sites = [s for s in reprints.articles if site is None or s == site]
        if not sites:
            return
        print(f"\nreprints ({reprints.stories} stories of two or more articles):")  # noqa: T201
        rows = [
            (
                s,
                str(reprints.articles[s]),
                str(reprints.originals.get(s, 0)),
                str(reprints.reprints.get(s, 0)),
                f"{reprints.share(s):.1%}",
            )
            for s in sorted(sites)
        ]
        print(_table(("site", "articles", "originals", "reprints", "reprint share"), rows))  # noqa: T201
        pairs = [p for p in reprints.pairs if site is None or site in p[:2]]
        if pairs:
            print("\ntop source -> reprinting site (stories):")  # noqa: T201
            print(_table(("source", "reprinted by", "stories"), [(a, b, str(n)) for a, b, n in pairs]))  # noqa: T201
        if reprints.unassigned:
            print(f"\n{reprints.unassigned} articles not yet grouped: scrapy corpus reprints")  # noqa: T201

    def _stats_tables(self, stats: Any, opts: argparse.Namespace) -> None:
        header = ("site", "articles", "newest (site time)", "id", "line rows", "RC", "reclean RC")
        rows = [
            (
                s.site,
                str(s.articles),
                _local(s.newest_published, s.site),
                str(s.newest_id) if s.newest_id is not None else "-",
                str(s.line_counts),
                str(s.RC),
                str(s.last_reclean_RC) if s.last_reclean_RC is not None else "-",
            )
            for s in stats.sites.values()
        ]
        rows.append(("total", str(stats.total), "", "", "", "", ""))
        print(_table(header, rows))  # noqa: T201
        days = sorted({d for per in stats.per_day.values() for d in per if d}, reverse=True)
        if opts.days > 0:
            days = days[: opts.days]
        if not days:
            return
        sites = list(stats.per_day)
        shown = "all days" if opts.days <= 0 else f"latest {len(days)} days"
        print(f"\narticles per day (site-local publication date, {shown}):")  # noqa: T201
        day_rows = [
            (d.isoformat(), *(str(stats.per_day[s].get(d, 0)) for s in sites)) for d in days
        ]
        undated = [str(stats.per_day[s].get(None, 0)) for s in sites]
        if any(n != "0" for n in undated):
            day_rows.append(("no time", *undated))
        print(_table(("day", *sites), day_rows))  # noqa: T201


def _nothing(query: str, opts: argparse.Namespace) -> str:
    """What ``search`` prints when nothing matches: the query and the filters given."""
    given = [
        f"{name} {value!r}"
        for name, value in (
            ("author", opts.author),
            ("origin", opts.origin),
            ("section", opts.section),
            ("language", opts.lang),
            ("kind", ",".join(opts.kind or ())),
        )
        if value
    ]
    what = f"contains {query!r}" if query else ""
    if given:
        what += (" with " if what else "has ") + ", ".join(given)
    return f"no article {what}"


def _stated(article: Article) -> list[tuple[str, str]]:
    """What the page states about itself, for ``show``: the fields it has, as lines."""
    out: list[tuple[str, str]] = []
    for name in ("authors", "origin", "editor", "section"):
        value = getattr(article, name)
        found = getattr(article, f"{name}_source", None)
        if value:
            out.append((name, value + (f"  [{found}]" if found else "")))
    language = "/".join(v for v in (article.language, article.script) if v)
    if language:
        out.append(("language", language))
    if article.image:
        caption = f"  ({article.image_caption})" if article.image_caption else ""
        out.append(("image", article.image + caption))
    return out


def _record(article: Article) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in EXPORT_COLUMNS:
        value = getattr(article, name)
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    return out


def _story_table(story: Story, marked: int | None = None) -> str:
    """A story's members, original first: id, site, time, similarity to the original, URL."""
    rows = [
        (
            ("* " if m.id == marked else "  ") + str(m.id),
            m.site,
            _local(m.published, m.site),
            "original" if k == 0 else f"{m.similarity:.2f}",
            m.url,
        )
        for k, m in enumerate(story.members)
    ]
    return _table(("  id", "site", "published", "similarity", "url"), rows)


def _local(value: datetime | None, site: str) -> str:
    """A stored (UTC) time in the site's zone, to the minute, with its offset."""
    if value is None:
        return "-"
    zone = SITES[site].zone if site in SITES else ZoneInfo(DEFAULT_TZ)
    return value.astimezone(zone).isoformat(sep=" ", timespec="minutes")


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [header, *rows]]  # fmt: skip
    return "\n".join(lines)
