"""SQL storage (SQLAlchemy 2): the corpus table, the line-hash state and crawl runs.

The only package that imports sqlalchemy (STYLE.md, module boundaries). Works the same on
SQLite (the default, ``data/corpus.db``) and PostgreSQL (``postgresql+psycopg://...``).
"""

from .corpus import Corpus, CorpusStats, SearchHit, SiteStats, read_export
from .db import (
    create_schema,
    default_database_url,
    engine_for,
    resolve_database_url,
    seen_content,
    upsert_articles,
)
from .fts import setup_search
from .lines import SqlLineTable
from .models import Article, Base, CrawlRun, LineCount, SiteLineStats, UTCDateTime
from .reclean import RecleanReport, SiteReclean, reclean, reclean_due, run_reclean

__all__ = [
    "Article",
    "Base",
    "Corpus",
    "CorpusStats",
    "CrawlRun",
    "LineCount",
    "RecleanReport",
    "SearchHit",
    "SiteLineStats",
    "SiteReclean",
    "SiteStats",
    "SqlLineTable",
    "UTCDateTime",
    "create_schema",
    "default_database_url",
    "engine_for",
    "read_export",
    "reclean",
    "reclean_due",
    "resolve_database_url",
    "run_reclean",
    "seen_content",
    "setup_search",
    "upsert_articles",
]
