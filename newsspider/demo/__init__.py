"""The offline demo: saved pages of the four paper sites, crawled through a replay archive.

``pages/`` holds a few real saved pages per site, one folder per site in the datasets'
layout (``cases.jsonl`` with each page's ``url`` and ``html_file``, then ``html/``):
NetEase money pages of 2015 (GB2312/GBK as served), Sina and Tencent pages of 2016-2019
(UTF-8). No saved page of Zaobao exists in the evaluation datasets, so its folder holds
pages *written in Zaobao's markup* for the tests (the same as ``tests/fixtures/zaobao``),
not pages saved from the site. ``pages/SOURCES.md`` names where each page came from and
its licence.

:func:`build_demo_archive` turns them into one WARC with a start page per site
(:func:`newsspider.replay.build_warc`); ``scrapy demo`` crawls each site's spider through
it (``REPLAY_ARCHIVE``: nothing touches the network) and :func:`print_report` shows what
was stored. Nothing outside the package is read unless a caller passes other page folders.
"""

from .archive import PAGES, START_PAGES, DemoArchive, build_demo_archive, page_folders
from .report import print_report

__all__ = [
    "PAGES",
    "START_PAGES",
    "DemoArchive",
    "build_demo_archive",
    "page_folders",
    "print_report",
]
