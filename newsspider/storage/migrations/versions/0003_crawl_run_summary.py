"""``crawl_runs.summary`` and ``crawl_runs.exit_status``: how each crawl ended, in its own words.

Revision ID: 0003
Revises: 0002

- ``summary``: the crawl's closing line (``netease: 1,234 articles stored (56 new, 12
  updated), 3 dropped (EmptyBody 2, NotHtml 1), 2 fetches failed (dns 2), 4m12s``), the
  line its log ends with (``newsspider/outcome.py``).
- ``exit_status``: the status ``scrapy crawl`` exits with for it (0 did its job, 3 nothing
  fetched, 4 the database failed, 5 every article dropped); ``status`` says the same in
  words (``finished``, ``nothing_fetched``, ``failed``, ``all_dropped``).

Rows of earlier crawls keep NULL in both. Idempotent: a column that exists is not added
again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

NEW_COLUMNS = {"summary": sa.Text(), "exit_status": sa.Integer()}


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("crawl_runs")}
    for name, type_ in NEW_COLUMNS.items():
        if name not in have:
            op.add_column("crawl_runs", sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    for name in NEW_COLUMNS:
        op.execute(f"ALTER TABLE crawl_runs DROP COLUMN {name}")
