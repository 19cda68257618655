"""Extraction algorithms as pure functions over bytes, str and lxml trees.

No Scrapy, Twisted or SQL here (a test enforces it). The public entry point
is :func:`extract_article`.
"""

from .article import MODES, extract_article
from .errors import ExtractionError
from .model import Article

__all__ = ["MODES", "Article", "ExtractionError", "extract_article"]
