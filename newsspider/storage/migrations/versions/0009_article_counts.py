"""Articles per site, UTC hour and origin, kept on write.

Revision ID: 0009
Revises: 0008

Adds ``article_counts`` (``hour``, ``site``, ``archive``, ``n``; the primary key on the
first three, without a rowid on SQLite). The table is filled, and kept, by the triggers of
``storage/counts.py`` (``create_schema`` creates them after the migrations and fills the
table from ``articles`` in the same transaction when they are new), so the dashboard and
``scrapy corpus stats`` read these counts instead of scanning every article.

Idempotent: a table that exists is not added again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "article_counts" not in set(inspector.get_table_names()):
        op.create_table(
            "article_counts",
            sa.Column("hour", sa.String(13), nullable=False),
            sa.Column("site", sa.String(64), nullable=False),
            sa.Column("archive", sa.String(256), nullable=False),
            sa.Column("n", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint("hour", "site", "archive"),
            sqlite_with_rowid=False,
        )


def downgrade() -> None:
    # The triggers of storage/counts.py write into the table: they go first.
    if op.get_bind().dialect.name == "postgresql":
        for name in ("article_counts_insdel", "article_counts_upd"):
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON articles")
        op.execute("DROP FUNCTION IF EXISTS article_counts_keep()")
    else:
        for name in ("article_counts_ai", "article_counts_ad", "article_counts_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.drop_table("article_counts")
