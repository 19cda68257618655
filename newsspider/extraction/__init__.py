"""Extraction algorithms as pure functions over bytes, str and lxml trees.

No Scrapy, Twisted or SQL here (a test enforces it). The public entry point
is :func:`extract_article`.
"""

from .article import MODES, extract_article
from .errors import ExtractionError
from .model import ExtractedArticle

__all__ = ["MODES", "ExtractedArticle", "ExtractionError", "extract_article"]
