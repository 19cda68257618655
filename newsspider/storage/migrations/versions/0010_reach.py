"""Reach: what kind of page an article row is, the pages it was joined from, and coverage.

Revision ID: 0010
Revises: 0009

Adds to ``articles``:

- ``kind``: the page's kind (``article``, ``gallery``, ``video``, ``live``; topic, list and
  challenge pages are never stored, docs/crawling.md "Page kinds"). NULL for rows stored
  before, read as ``article``;
- ``page_urls``: the URLs of a multi-page article's pages in order, as a JSON list, the
  first being the row's own URL; NULL for an article of one page.

And the index ``(site, kind)`` that the per-kind counts of ``scrapy corpus stats`` read
alone.

Adds ``coverage_days``: per site and local day, the article URLs the site's own news
sitemaps and feeds list (``listed``), how many of them the corpus holds (``stored``), how
many it lacked when compared (``missing``) and how many of those the gap fill then stored
(``filled``), and when the comparison ran (docs/crawling.md "Coverage").

Idempotent: a column, index or table that exists is not added again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

NEW_COLUMNS = {
    "kind": sa.String(16),
    "page_urls": sa.Text(),
}
INDEXES = {"ix_articles_site_kind": ["site", "kind"]}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    have = {c["name"] for c in inspector.get_columns("articles")}
    for name, type_ in NEW_COLUMNS.items():
        if name not in have:
            op.add_column("articles", sa.Column(name, type_, nullable=True))
    indexes = {i["name"] for i in inspector.get_indexes("articles")}
    for name, columns in INDEXES.items():
        if name not in indexes:
            op.create_index(name, "articles", columns)
    if "coverage_days" not in set(inspector.get_table_names()):
        op.create_table(
            "coverage_days",
            sa.Column("site", sa.String(64), nullable=False),
            sa.Column("day", sa.String(10), nullable=False),
            sa.Column("listed", sa.Integer(), nullable=False),
            sa.Column("stored", sa.Integer(), nullable=False),
            sa.Column("missing", sa.Integer(), nullable=False),
            sa.Column("filled", sa.Integer(), nullable=False),
            sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("site", "day"),
        )


def downgrade() -> None:
    op.drop_table("coverage_days")
    for name in reversed(list(INDEXES)):
        op.drop_index(name, table_name="articles")
    for name in reversed(list(NEW_COLUMNS)):
        op.execute(f"ALTER TABLE articles DROP COLUMN {name}")
