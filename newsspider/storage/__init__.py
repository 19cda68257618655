"""SQL storage (SQLAlchemy 2): the corpus, the line-hash state, crawl and nightly runs.

The only package that imports sqlalchemy; ``tests/test_layout_storage.py`` holds every
other module to it. Pipelines, middlewares and commands get an engine from
:func:`engine_from_settings`, open a session with :func:`transaction` (or
:func:`session`) and call the functions here; they never build a query. Works the same
on SQLite (the default, ``data/corpus.db``) and PostgreSQL (``postgresql+psycopg://...``).

Modules, each named for what it holds:

- ``models``: every table; ``schema``: :func:`create_schema`, the one call that creates
  them all (search structures included, from ``fts``);
- ``engine``: URLs, engines and sessions;
- ``db``: article upserts and look-ups, transient-failure handling;
- ``lines``: the line-hash table of Li & Jiang 2012 §2.2; ``reclean``: re-cleaning stored
  articles with it;
- ``runs``: crawl and nightly run rows; ``thresholds``: trained xpath thresholds (Hou &
  Yang 2011 §3.3); ``corpus`` and ``fts``: querying the corpus;
- ``stories``: reprint detection's index and story ids (``newsspider/reprints``).
"""

from .corpus import Corpus, CorpusStats, SearchHit, SiteStats, read_export
from .db import Backoff, is_transient, seen_content, seen_contents, stored_urls, upsert_articles
from .engine import (
    Engine,
    Session,
    SettingsLike,
    check_database,
    default_database_url,
    display_url,
    engine_for,
    engine_from_settings,
    resolve_database_url,
    session,
    short_error,
    transaction,
)
from .fts import index_missing, setup_search
from .lines import SqlLineTable
from .models import (
    Article,
    Base,
    CrawlRun,
    LineCount,
    NightlyRun,
    NightlySiteRun,
    ReprintBand,
    ReprintSignature,
    SiteLineStats,
    SiteReclean,
    UTCDateTime,
    XpathThresholds,
)
from .reclean import (
    RecleanReport,
    reclean,
    reclean_due,
    reclean_if_due,
    reclean_plan,
    reclean_sites,
    run_reclean,
)
from .schema import create_schema
from .stories import (
    ReprintStats,
    Story,
    StoryMember,
    assign_stories,
    collapse_ids,
    list_stories,
    rebuild_stories,
    reprint_stats,
    story_of,
    unassigned_count,
)
from .thresholds import load_all_thresholds, save_thresholds

__all__ = [
    "Article",
    "Backoff",
    "Base",
    "Corpus",
    "CorpusStats",
    "CrawlRun",
    "Engine",
    "LineCount",
    "NightlyRun",
    "NightlySiteRun",
    "RecleanReport",
    "ReprintBand",
    "ReprintSignature",
    "ReprintStats",
    "SearchHit",
    "Session",
    "SettingsLike",
    "SiteLineStats",
    "SiteReclean",
    "SiteStats",
    "SqlLineTable",
    "Story",
    "StoryMember",
    "UTCDateTime",
    "XpathThresholds",
    "assign_stories",
    "check_database",
    "collapse_ids",
    "create_schema",
    "default_database_url",
    "display_url",
    "engine_for",
    "engine_from_settings",
    "index_missing",
    "is_transient",
    "list_stories",
    "load_all_thresholds",
    "read_export",
    "rebuild_stories",
    "reclean",
    "reclean_due",
    "reclean_if_due",
    "reclean_plan",
    "reclean_sites",
    "reprint_stats",
    "resolve_database_url",
    "run_reclean",
    "save_thresholds",
    "seen_content",
    "seen_contents",
    "session",
    "setup_search",
    "short_error",
    "stored_urls",
    "story_of",
    "transaction",
    "unassigned_count",
    "upsert_articles",
]
