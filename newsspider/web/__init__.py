"""The corpus in the browser: ``scrapy corpus serve``, a read-only Starlette application.

Pages (each also JSON under ``/api/``): search (``/``), one article (``/article/<id>``) and
the dashboard of articles and crawls (``/dashboard``). It reads through
``newsspider.storage`` on a read-only engine and has no SQL of its own; details in
``docs/web.md``.
"""

from .app import create_app
from .serve import is_loopback, serve

__all__ = ["create_app", "is_loopback", "serve"]
