"""Alembic's migration environment for newsspider's schema: ``env.py`` and ``versions/``.

A package (with ``versions/`` one too) so that an egg built for Scrapyd carries the
revisions. Nothing imports it: :func:`newsspider.storage.schema.create_schema` points
Alembic at this folder, and Alembic loads ``env.py`` and the revisions from their files.
"""
