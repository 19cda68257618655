"""The schema: every table of ``models.py`` created, older tables brought up to date, and
the full-text search structures of ``fts.py``, in one idempotent :func:`create_schema`.
"""

from __future__ import annotations

import logging

from sqlalchemy import Engine, inspect

from .fts import setup_search
from .models import Base

__all__ = ["add_missing_columns", "create_schema"]

logger = logging.getLogger(__name__)


def create_schema(engine: Engine) -> None:
    """Create every missing table and index (idempotent; existing tables are left alone).

    Every table is declared in ``models.py``, so importing it is all it takes for
    ``create_all`` to know them. Columns a newer version added are then added to older
    tables (:func:`add_missing_columns`), and last come the search structures
    (``fts.py``): the FTS5 trigram table and its triggers on SQLite, pg_trgm indexes on
    PostgreSQL, backfilled when added to an existing corpus.
    """
    Base.metadata.create_all(engine)
    add_missing_columns(engine)
    setup_search(engine)


def add_missing_columns(engine: Engine) -> list[str]:
    """Add model columns that an existing table lacks; return them as ``table.column``.

    ``create_all`` creates missing tables but never alters existing ones, so a corpus made
    by an older version would fail on the first query naming a newer column (the fetch
    failure counts of ``crawl_runs``, say). Only nullable columns or columns with a scalar
    default are added (``ALTER TABLE ... ADD COLUMN``, which SQLite and PostgreSQL both
    support with a constant default); existing rows get that default.
    """
    insp = inspect(engine)
    present_tables = set(insp.get_table_names())
    added: list[str] = []
    for table in Base.metadata.sorted_tables:
        if table.name not in present_tables:
            continue
        have = {c["name"] for c in insp.get_columns(table.name)}
        for column in table.columns:
            if column.name in have:
                continue
            default = column.default.arg if column.default is not None else None
            if callable(default) or (default is None and not column.nullable):
                logger.warning(
                    "%s.%s is missing and cannot be added automatically", table.name, column.name
                )
                continue
            ddl = f"ALTER TABLE {table.name} ADD COLUMN {column.name} " + str(
                column.type.compile(dialect=engine.dialect)
            )
            if default is not None:
                ddl += " DEFAULT " + _sql_literal(default)
            with engine.begin() as conn:
                conn.exec_driver_sql(ddl)
            added.append(f"{table.name}.{column.name}")
    if added:
        logger.info("added columns to an older schema: %s", ", ".join(added))
    return added


def _sql_literal(value: object) -> str:
    """A column default as SQL: numbers as they are, text quoted (only our own constants)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"
