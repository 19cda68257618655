"""The one exception type for a mistake in what the user asked for.

A :class:`UserError` is not a bug: a bad argument or setting value, an unknown spider or
method, a missing file, a bad URL or time zone, a database that cannot be reached. Every
command prints its message as one line on stderr and exits with status 2
(:mod:`newsspider.cli`), without a traceback unless ``--traceback`` or ``-s
LOG_LEVEL=DEBUG`` asks for one. Anything else that escapes is a bug and keeps its
traceback.

The message says what is wrong and what is accepted (valid names listed), so the user
needs nothing else to fix the command line.
"""

from __future__ import annotations

__all__ = ["DatabaseUnreachable", "UserError"]


class UserError(Exception):
    """A mistake in the command line, a setting, a file or the database's address."""


class DatabaseUnreachable(UserError):
    """The first connection to the configured database failed (or its URL is bad)."""
