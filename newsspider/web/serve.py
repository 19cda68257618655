"""Running the web view: the read-only engine, the bind address check, uvicorn.

:func:`serve` is what ``scrapy corpus serve`` calls. It binds to 127.0.0.1 unless told
otherwise; any other address (the corpus would be visible to the network) is allowed with a
warning, and more so without a token.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import sys

import uvicorn

from newsspider.storage import display_url, resolve_database_url
from newsspider.storage.web_queries import readonly_engine

from .app import create_app

logger = logging.getLogger(__name__)

#: Environment variable read for the token when neither ``--token`` nor ``WEB_TOKEN`` gives
#: one (a token on the command line is visible to every user of the machine in ``ps``).
TOKEN_ENV = "NEWSSPIDER_WEB_TOKEN"


def is_loopback(host: str) -> bool:
    """Is ``host`` an address only this machine reaches (127.0.0.0/8, ::1, localhost)?"""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_warning(host: str, token: str | None) -> str | None:
    """The warning for a bind address other than loopback, None for loopback."""
    if is_loopback(host):
        return None
    extra = "" if token else " and no access token is set (--token): anyone who reaches it reads the corpus"
    return f"WARNING: serving on {host}, reachable from other machines{extra}"


def serve(
    database_url: str | None,
    *,
    host: str,
    port: int,
    token: str | None,
    busy_timeout: float,
) -> None:
    """Open the corpus read-only and serve it until interrupted (Ctrl-C)."""
    token = token or os.environ.get(TOKEN_ENV) or None
    url = resolve_database_url(database_url)
    engine = readonly_engine(url, busy_timeout=busy_timeout)
    app = create_app(engine, token=token)
    warning = bind_warning(host, token)
    if warning:
        print(warning, file=sys.stderr)  # noqa: T201
    shown = f"[{host}]" if ":" in host else host
    print(  # noqa: T201
        f"serving {display_url(engine)} read-only on http://{shown}:{port}/"
        + ("?token=<token>" if token else ""),
        file=sys.stderr,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)
