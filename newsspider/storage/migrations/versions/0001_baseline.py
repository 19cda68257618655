"""Baseline: every table as newsspider made it before its schema was versioned.

Revision ID: 0001
Revises: (none)

The tables are written out here, frozen, rather than taken from ``models.py``, which moves
on with later revisions. Upgrading to this revision creates the tables a database lacks
and adds the columns and indexes an older table lacks (``add_missing_columns``: versions
before the baseline added fetch-failure counts to ``crawl_runs``, for one), so an
unversioned database made by any earlier version gets this shape before the later
revisions run. The search structures of ``fts.py`` are not part of any revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from newsspider.storage.schema import add_missing_columns, add_missing_indexes

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

#: Times: ``DATETIME`` on SQLite (naive UTC text at this revision), timestamptz on PostgreSQL.
TIME = sa.DateTime(timezone=True)

metadata = sa.MetaData()

sa.Table(
    "articles",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("url", sa.String(2048), nullable=False, unique=True, index=True),
    sa.Column("site", sa.String(64), nullable=False),
    sa.Column("source", sa.String(128), nullable=False),
    sa.Column("title", sa.Text),
    sa.Column("published", TIME),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("raw_text", sa.Text, nullable=False),
    sa.Column("encoding", sa.String(32)),
    sa.Column("content_md5", sa.String(32), nullable=False),
    sa.Column("fetched_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Index("ix_articles_site_content_md5", "site", "content_md5"),
)
sa.Table(
    "line_counts",
    metadata,
    sa.Column("site", sa.String(64), primary_key=True),
    sa.Column("md5", sa.String(32), primary_key=True),
    sa.Column("lc", sa.Integer, nullable=False),
)
sa.Table(
    "site_line_stats",
    metadata,
    sa.Column("site", sa.String(64), primary_key=True),
    sa.Column("rc", sa.Integer, nullable=False, default=0),
    sa.Column("pruned_at_rc", sa.Integer, nullable=False, default=0),
)
sa.Table(
    "crawl_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("site", sa.String(64), nullable=False, index=True),
    sa.Column("started_at", TIME, nullable=False),
    sa.Column("finished_at", TIME),
    sa.Column("status", sa.String(32), nullable=False, default="running"),
    sa.Column("pages_fetched", sa.Integer, nullable=False, default=0),
    sa.Column("items_new", sa.Integer, nullable=False, default=0),
    sa.Column("items_updated", sa.Integer, nullable=False, default=0),
    sa.Column("items_dropped", sa.Integer, nullable=False, default=0),
    sa.Column("drop_reasons", sa.Text, nullable=False, default="{}"),
    sa.Column("errors", sa.Integer, nullable=False, default=0),
    sa.Column("report", sa.Text),
    sa.Column("fetch_failures", sa.Integer, nullable=False, default=0),
    sa.Column("fetch_failure_reasons", sa.Text, nullable=False, default="{}"),
    sa.Column("retries", sa.Integer, nullable=False, default=0),
    sa.Column("db_retries", sa.Integer, nullable=False, default=0),
)
sa.Table(
    "site_reclean",
    metadata,
    sa.Column("site", sa.String(64), primary_key=True),
    sa.Column("last_reclean_rc", sa.Integer, nullable=False, default=0),
    sa.Column("reclean_at", TIME),
    sa.Column("articles", sa.Integer, nullable=False, default=0),
    sa.Column("changed", sa.Integer, nullable=False, default=0),
    sa.Column("lines_removed", sa.Integer, nullable=False, default=0),
    sa.Column("lines_restored", sa.Integer, nullable=False, default=0),
)
sa.Table(
    "xpath_thresholds",
    metadata,
    sa.Column("site", sa.String(64), primary_key=True),
    sa.Column("length_threshold", sa.Float, nullable=False),
    sa.Column("b_n_threshold", sa.Float, nullable=False),
    sa.Column("pages", sa.Integer, nullable=False),
    sa.Column("trained_at", TIME, nullable=False),
)
sa.Table(
    "nightly_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("started_at", TIME, nullable=False),
    sa.Column("finished_at", TIME),
    sa.Column("host", sa.String(255), nullable=False, index=True),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("sites", sa.Text, nullable=False),
    sa.Column("status", sa.String(32), nullable=False, default="running"),
    sa.Column("exit_code", sa.Integer),
    sa.Column("report", sa.Text),
)
sa.Table(
    "nightly_site_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column(
        "nightly_run_id", sa.Integer, sa.ForeignKey("nightly_runs.id"), nullable=False, index=True
    ),
    sa.Column("crawl_run_id", sa.Integer, sa.ForeignKey("crawl_runs.id"), unique=True, index=True),
    sa.Column("site", sa.String(64), nullable=False, index=True),
    sa.Column("outcome", sa.String(32)),
    sa.Column("finish_reason", sa.String(64)),
    sa.Column("resumed", sa.Boolean, nullable=False, default=False),
    sa.Column("requests", sa.Integer, nullable=False, default=0),
    sa.Column("pages_ok", sa.Integer, nullable=False, default=0),
    sa.Column("skipped_stored", sa.Integer, nullable=False, default=0),
    sa.Column("bodies", sa.Integer, nullable=False, default=0),
    sa.Column("median_body_chars", sa.Integer),
    sa.Column("note", sa.Text),
)


def upgrade() -> None:
    bind = op.get_bind()
    metadata.create_all(bind, checkfirst=True)
    add_missing_columns(bind, metadata)
    add_missing_indexes(bind, metadata)


def downgrade() -> None:
    raise NotImplementedError("the baseline is not undone: remove the database instead")
