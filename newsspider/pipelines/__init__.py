"""Item pipelines: glue between the spiders, ``extraction/`` and ``storage/``.

``ExtractionPipeline`` (extract title, time and body; drop pages without
them) runs first, then ``CorpusPipeline`` (line-hash cleaning per site and
the SQL upsert, in one transaction per batch). Both are configured by
settings read in ``from_crawler``; see README "Settings".
"""

from .corpus import CorpusPipeline
from .extract import EmptyBody, ExtractionPipeline, NotHtml, NoTitle

__all__ = ["CorpusPipeline", "EmptyBody", "ExtractionPipeline", "NoTitle", "NotHtml"]
