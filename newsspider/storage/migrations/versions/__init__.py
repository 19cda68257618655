"""The revisions, oldest first: ``0001`` the baseline, ``0002`` times with their offset and
the precision of ``published``. Loaded by Alembic from their files, never imported."""
