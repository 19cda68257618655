"""``site_checks``: the last ``scrapy sites check`` of each site row.

Revision ID: 0006
Revises: 0005

One row per site key (``models.SiteCheck``): ``checked_at`` (UTC), ``status`` (``ok``,
``no start page``, ``no article links``, ``patterns match nothing``, ``extraction
empty``), ``article_links`` (links its article patterns matched) and ``detail`` (the line
the check printed). ``scrapy sites list`` reads it to say when a row was last checked.

Idempotent: a table that exists is not added again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "site_checks" not in set(sa.inspect(op.get_bind()).get_table_names()):
        op.create_table(
            "site_checks",
            sa.Column("site", sa.String(64), nullable=False),
            sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("status", sa.String(32), nullable=False),
            sa.Column("article_links", sa.Integer(), nullable=False),
            sa.Column("detail", sa.Text(), nullable=True),
            sa.PrimaryKeyConstraint("site"),
        )


def downgrade() -> None:
    op.drop_table("site_checks")
