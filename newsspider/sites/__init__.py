"""Sites as data: the :class:`Site` row (``model``), the table read from TOML (``table``),
and rows written into a user's file (``write``).

``from newsspider.sites import SITES, Site`` is what most callers need; :data:`SITES`
holds the built-in rows of ``newsspider/sites.toml`` and, once a command has called
:func:`configure_sites`, the rows of the user's ``SITES_FILE`` too.
"""

from newsspider.sites.model import FEED_KINDS, Feed, FeedKind, Site
from newsspider.sites.table import (
    BUILTIN,
    BUILTIN_FILE,
    PAPER_SITES,
    SITES,
    SitesFileError,
    configure_sites,
    load_table,
    nightly_sites,
    read_sites_file,
    site_for_url,
    sites_file,
)

__all__ = [
    "BUILTIN",
    "BUILTIN_FILE",
    "FEED_KINDS",
    "PAPER_SITES",
    "SITES",
    "Feed",
    "FeedKind",
    "Site",
    "SitesFileError",
    "configure_sites",
    "load_table",
    "nightly_sites",
    "read_sites_file",
    "site_for_url",
    "sites_file",
]
