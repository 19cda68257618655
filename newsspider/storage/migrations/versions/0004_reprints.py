"""Reprint detection: ``articles.story_id``, ``reprint_signatures`` and ``reprint_bands``.

Revision ID: 0004
Revises: 0003

- ``articles.story_id`` (indexed): the story (reprints of one text) an article belongs to;
  NULL for the rows stored before, until ``scrapy corpus reprints --rebuild`` indexes them
  (new articles are assigned as they are stored).
- ``reprint_signatures``: each indexed article's MinHash signature and the MD5 of the text
  it was made from.
- ``reprint_bands``: the LSH band keys, one row per (band key, article); on SQLite a
  ``WITHOUT ROWID`` table.

Idempotent: a column or table that exists is not added again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    tables = set(inspector.get_table_names())
    if "story_id" not in {c["name"] for c in inspector.get_columns("articles")}:
        op.add_column("articles", sa.Column("story_id", sa.Integer(), nullable=True))
    if "ix_articles_story_id" not in {i["name"] for i in inspector.get_indexes("articles")}:
        op.create_index("ix_articles_story_id", "articles", ["story_id"])
    if "reprint_signatures" not in tables:
        op.create_table(
            "reprint_signatures",
            sa.Column("article_id", sa.Integer(), autoincrement=False, nullable=False),
            sa.Column("content_md5", sa.String(32), nullable=False),
            sa.Column("chars", sa.Integer(), nullable=False),
            sa.Column("signature", sa.LargeBinary(), nullable=True),
            sa.PrimaryKeyConstraint("article_id"),
        )
    if "reprint_bands" not in tables:
        op.create_table(
            "reprint_bands",
            sa.Column("band_key", sa.BigInteger(), autoincrement=False, nullable=False),
            sa.Column("article_id", sa.Integer(), autoincrement=False, nullable=False),
            sa.PrimaryKeyConstraint("band_key", "article_id"),
            sqlite_with_rowid=False,
        )


def downgrade() -> None:
    op.drop_table("reprint_bands")
    op.drop_table("reprint_signatures")
    op.drop_index("ix_articles_story_id", table_name="articles")
    op.execute("ALTER TABLE articles DROP COLUMN story_id")
