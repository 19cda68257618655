"""SQL storage (SQLAlchemy 2): the corpus table, the line-hash state and crawl runs.

The only package that imports sqlalchemy (STYLE.md, module boundaries). Works the same on
SQLite (the default, ``data/corpus.db``) and PostgreSQL (``postgresql+psycopg://...``).
"""

from .db import (
    create_schema,
    default_database_url,
    engine_for,
    resolve_database_url,
    seen_content,
    upsert_articles,
)
from .lines import SqlLineTable
from .models import Article, Base, CrawlRun, LineCount, SiteLineStats, UTCDateTime

__all__ = [
    "Article",
    "Base",
    "CrawlRun",
    "LineCount",
    "SiteLineStats",
    "SqlLineTable",
    "UTCDateTime",
    "create_schema",
    "default_database_url",
    "engine_for",
    "resolve_database_url",
    "seen_content",
    "upsert_articles",
]
