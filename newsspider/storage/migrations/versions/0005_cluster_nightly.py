"""``nightly_runs.workers``: how many ``scrapy nightly`` workers a cluster run had.

Revision ID: 0005
Revises: 0004

NULL for a run on one machine (every row before this revision); for a cluster run
(``REDIS_URL``) the number of workers that joined it. The health history tells the two
apart by it: a cluster run has one ``nightly_site_runs`` row per worker and site, summed
into one crawl of the site (``storage/runs.py``, ``recent_site_runs``).

Idempotent: a column that exists is not added again.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("nightly_runs")}
    if "workers" not in have:
        op.add_column("nightly_runs", sa.Column("workers", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE nightly_runs DROP COLUMN workers")
