"""The one exception extraction raises."""


class ExtractionError(ValueError):
    """The input is not an HTML page at all (empty, binary, undecodable).

    A page that is HTML but has no article is *not* an error: it gives an
    `ExtractedArticle` with empty text.
    """
