"""``articles.published_source`` and ``published_precision``; SQLite times with their offset.

Revision ID: 0002
Revises: 0001

- ``articles`` gets ``published_source`` (where the time was found: ``json-ld``,
  ``meta:<key>``, ``text``, ``url``, ...) and ``published_precision`` (``second``,
  ``minute``, ``hour``, ``day`` or ``month``: what the found time states). Rows stored
  before have NULL in both: what extraction said about them was not kept.
- SQLite: every time column of every table is rewritten in place from naive UTC text
  (``2024-01-16 00:30:00.000000``, which a reader of the table takes for local time) to
  the same text with its offset (``2024-01-16 00:30:00.000000+00:00``), the form
  ``UTCDateTime`` writes from now on. Fixed width, so ordering, range filters and the
  indexes on ``published`` keep working. One ``UPDATE`` per column for values in the form
  SQLAlchemy wrote; any other value (written by hand, say ``2024-01-01 00:00:00`` or
  with an offset) is parsed and rewritten row by row; a value that is no time at all is
  left alone with a warning. PostgreSQL stores ``timestamptz`` and needs no rewrite.

Idempotent: columns that exist are not added again and values already in the new form
match nothing. ``create_schema`` runs it inside one transaction.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

logger = logging.getLogger("newsspider.storage.migrations")

#: The new columns of ``articles``, nullable.
NEW_COLUMNS = {"published_source": sa.String(64), "published_precision": sa.String(16)}
#: Every time column (``UTCDateTime``) of every table at this revision.
TIME_COLUMNS = {
    "articles": ("published", "fetched_at", "updated_at"),
    "crawl_runs": ("started_at", "finished_at"),
    "site_reclean": ("reclean_at",),
    "xpath_thresholds": ("trained_at",),
    "nightly_runs": ("started_at", "finished_at"),
}
_D = "[0-9]"
#: SQLAlchemy's SQLite ``DATETIME`` text before this revision (``GLOB`` matches it whole).
NAIVE = f"{_D * 4}-{_D * 2}-{_D * 2} {_D * 2}:{_D * 2}:{_D * 2}.{_D * 6}"
OFFSET = "+00:00"
STORED = NAIVE + OFFSET
NAIVE_CHARS = len("2024-01-16 00:30:00.000000")


def upgrade() -> None:
    bind = op.get_bind()
    have = {c["name"] for c in sa.inspect(bind).get_columns("articles")}
    for name, type_ in NEW_COLUMNS.items():
        if name not in have:
            op.add_column("articles", sa.Column(name, type_))
    if bind.dialect.name != "sqlite":
        return
    present = set(sa.inspect(bind).get_table_names())
    for table, columns in TIME_COLUMNS.items():
        if table not in present:
            continue
        for column in columns:
            n = _add_offsets(bind, table, column)
            if n:
                logger.info("%s.%s: %s times rewritten with their offset", table, column, n)


def downgrade() -> None:
    bind = op.get_bind()
    for name in NEW_COLUMNS:
        op.execute(f"ALTER TABLE articles DROP COLUMN {name}")
    if bind.dialect.name != "sqlite":
        return
    for table, columns in TIME_COLUMNS.items():
        for column in columns:
            bind.execute(
                sa.text(
                    f"UPDATE {table} SET {column} = substr({column}, 1, {NAIVE_CHARS}) "
                    f"WHERE {column} GLOB :stored"
                ).bindparams(stored=STORED)
            )


def _add_offsets(bind: sa.Connection, table: str, column: str) -> int:
    """Rewrite ``table.column`` to the offset form; return how many values changed."""
    n = bind.execute(
        sa.text(
            f"UPDATE {table} SET {column} = {column} || '{OFFSET}' WHERE {column} GLOB :naive"
        ).bindparams(naive=NAIVE)
    ).rowcount
    others = bind.execute(
        sa.text(
            f"SELECT rowid, {column} FROM {table} "
            f"WHERE {column} IS NOT NULL AND NOT {column} GLOB :stored"
        ).bindparams(stored=STORED)
    ).all()
    rewritten = []
    for rowid, value in others:
        stored = _stored(value)
        if stored is None:
            logger.warning(
                "%s.%s of row %s is not a time: %r left as it is", table, column, rowid, value
            )
        else:
            rewritten.append({"rowid": rowid, "value": stored})
    if rewritten:
        update = f"UPDATE {table} SET {column} = :value WHERE rowid = :rowid"
        bind.execute(sa.text(update), rewritten)
    return n + len(rewritten)


def _stored(value: object) -> str | None:
    """``value`` (ISO 8601 text; naive means UTC) in the stored form, None if not a time."""
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    w = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return (
        f"{w.year:04d}-{w.month:02d}-{w.day:02d} "
        f"{w.hour:02d}:{w.minute:02d}:{w.second:02d}.{w.microsecond:06d}{OFFSET}"
    )
