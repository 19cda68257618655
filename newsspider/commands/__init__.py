"""Scrapy custom commands (COMMANDS_MODULE): extract, evaluate."""
