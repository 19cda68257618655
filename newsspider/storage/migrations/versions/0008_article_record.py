"""What a page states about itself: authors, origin, editor, section, language, image.

Revision ID: 0008
Revises: 0007

Adds to ``articles`` (all NULL for rows stored before: ``scrapy reextract`` fills them from
archived pages, a re-crawl of the URL too; docs/fields.md says what each holds):

- ``authors`` (the names joined by ``、``) and ``authors_source``;
- ``origin`` (the stated source, 来源, normalised: ``新华社``) and ``origin_source``;
- ``editor`` (责任编辑);
- ``section`` (``国内``, ``财经``...) and ``section_source``;
- ``language`` (ISO 639-1) and ``script`` (``simplified``, ``traditional``, ``mixed``);
- ``image`` (the lead image's URL) and ``image_caption``.

And three indexes: ``(site, origin)`` and ``(site, section)``, which the top origins and
sections per site (``scrapy corpus stats``) read alone, and ``(language)`` for the
language filter. On SQLite and PostgreSQL alike, ``ADD COLUMN`` of nullable columns writes
no row. Idempotent: a column or index that exists is not added again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

NEW_COLUMNS = {
    "authors": sa.Text(),
    "authors_source": sa.String(64),
    "origin": sa.String(128),
    "origin_source": sa.String(64),
    "editor": sa.String(128),
    "section": sa.String(128),
    "section_source": sa.String(64),
    "language": sa.String(16),
    "script": sa.String(16),
    "image": sa.String(2048),
    "image_caption": sa.Text(),
}
INDEXES = {
    "ix_articles_site_origin": ["site", "origin"],
    "ix_articles_site_section": ["site", "section"],
    "ix_articles_language": ["language"],
}


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


def downgrade() -> None:
    for name in reversed(list(INDEXES)):
        op.drop_index(name, table_name="articles")
    for name in reversed(list(NEW_COLUMNS)):
        op.execute(f"ALTER TABLE articles DROP COLUMN {name}")
