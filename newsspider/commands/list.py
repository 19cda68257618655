"""``scrapy list``: Scrapy's own command, over the whole site table (``SITES_FILE`` too),
with a bad sites file reported as one line and exit status 2."""

from __future__ import annotations

import argparse

from scrapy.commands.list import Command as ScrapyList

from newsspider.cli import OneLineErrors


class Command(OneLineErrors, ScrapyList):
    def short_desc(self) -> str:
        return "List the spiders: one per site row (scrapy sites list says more)"

    def execute(self, args: list[str], opts: argparse.Namespace) -> None:
        ScrapyList.run(self, args, opts)
