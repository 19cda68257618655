"""Provenance of stored articles and the captures of ``scrapy backfill``.

Revision ID: 0007
Revises: 0006

- ``articles.archive``: NULL for an article fetched live (every row before this revision);
  else the web archive its bytes came from: ``cc:CC-MAIN-2024-10``, ``wayback``, a CDX
  endpoint's URL, ``warc:<file name>``.
- ``articles.captured_at``: the archive's capture time (UTC); NULL for live rows.
- ``ix_articles_site_archive_published`` on ``(site, archive, published)``: articles per
  month by origin (``scrapy corpus stats --by-origin``, the dashboard) read the index
  alone, never the rows with their bodies.
- ``backfill_captures``: one row per archived capture a backfill fetched (archive, URL,
  CDX timestamp, outcome, when), the primary key on the first three, so a backfill stopped
  and started again fetches no capture twice.

Idempotent: a column, index or table that exists is not added again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

NEW_COLUMNS = {"archive": sa.String(256), "captured_at": sa.DateTime(timezone=True)}
INDEX = "ix_articles_site_archive_published"


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    have = {c["name"] for c in inspector.get_columns("articles")}
    for name, type_ in NEW_COLUMNS.items():
        if name not in have:
            op.add_column("articles", sa.Column(name, type_, nullable=True))
    if INDEX not in {i["name"] for i in inspector.get_indexes("articles")}:
        op.create_index(INDEX, "articles", ["site", "archive", "published"])
    if "backfill_captures" not in set(inspector.get_table_names()):
        op.create_table(
            "backfill_captures",
            sa.Column("archive", sa.String(256), nullable=False),
            sa.Column("url", sa.String(2048), nullable=False),
            sa.Column("timestamp", sa.String(14), nullable=False),
            sa.Column("outcome", sa.String(32), nullable=False),
            sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("archive", "url", "timestamp"),
        )


def downgrade() -> None:
    op.drop_table("backfill_captures")
    op.drop_index(INDEX, table_name="articles")
    for name in reversed(list(NEW_COLUMNS)):
        op.execute(f"ALTER TABLE articles DROP COLUMN {name}")
