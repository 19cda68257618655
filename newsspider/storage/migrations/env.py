"""Alembic's environment: run the revisions on one connection, in one transaction.

:func:`newsspider.storage.schema.create_schema` runs it with its own connection, already in
a transaction that holds the database's write lock, in ``config.attributes["connection"]``;
Alembic then leaves the transaction to it. Run by hand (``alembic -c
newsspider/storage/migrations/alembic.ini ...``) it connects to ``-x url=...``, else
``$DATABASE_URL``, else ``data/corpus.db``, and takes the same lock. Online only: the
revisions read the data they rewrite.

The search structures of ``fts.py`` (FTS5 tables, the tail table, the ``published`` and
trigram indexes) are made by ``setup_search``, not by revisions, and autogenerate leaves
them alone.
"""

from __future__ import annotations

import logging.config

from alembic import context
from sqlalchemy import Connection

from newsspider.storage.engine import engine_for, resolve_database_url
from newsspider.storage.models import Base
from newsspider.storage.schema import include_object, lock_for_migration

config = context.config


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        include_object=include_object,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run() -> None:
    if context.is_offline_mode():
        raise SystemExit("newsspider's revisions run online only (no --sql)")
    connection = config.attributes.get("connection")
    if connection is not None:
        run_migrations(connection)
        return
    if config.config_file_name is not None:
        logging.config.fileConfig(config.config_file_name, disable_existing_loggers=False)
    url = context.get_x_argument(as_dictionary=True).get("url") or resolve_database_url(None)
    with engine_for(url).connect() as connection, connection.begin():
        lock_for_migration(connection)
        run_migrations(connection)


run()
