"""Extraction algorithms as pure functions over bytes, str and lxml trees.

No Scrapy, Twisted or SQL here (a test enforces it). The public entry point
is :func:`extract_article` (block statistics, Zou & Zhong 2011); every method
of the seed papers is reached by its name through :mod:`.registry`.

Layers, bottom up: :mod:`.encoding`, :mod:`.blocks`, :mod:`.dates`,
:mod:`.metadata`, :mod:`.names`, :mod:`.language` (pieces); :mod:`.page` (decode and
parse a page); :mod:`.title_time` and :mod:`.textnodes` (title and time choice);
:mod:`.record` (the record fields beside them: authors, origin, editor, section, image);
:mod:`.method` (the :class:`Extractor` every method is); the methods
(:mod:`.paper`, :mod:`.best`, :mod:`.article`, :mod:`.punctuation`,
:mod:`.xpathseg`, :mod:`.visual` with :mod:`.render`); :mod:`.registry`.
"""

from .article import extract_article
from .errors import ExtractionError
from .method import MODES, Extractor
from .model import ExtractedArticle

__all__ = ["MODES", "ExtractedArticle", "ExtractionError", "Extractor", "extract_article"]
