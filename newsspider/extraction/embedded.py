"""Article text a page embeds as JSON for its scripts, read without running them.

Sites built on Next.js, Nuxt or a hand-made store send an HTML shell and the article in a
JSON blob (``<script id="__NEXT_DATA__">``, an ``application/json`` script,
``window.__INITIAL_STATE__ = {...}``). A site row's ``json_path`` (a dotted path,
list items by index: ``props.pageProps.article.content``) names where the body sits;
:func:`text_at_json_path` reads it, :func:`article_json_path` finds it on a sample page
(the longest Chinese text in the blobs). Pure: bytes in, text out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lxml import html as lxml_html

__all__ = ["article_json_path", "embedded_json", "json_text_paths", "text_at_json_path"]

_CJK = re.compile(r"[\u3400-\u9fff]")
_BLOCKS = re.compile(r"</?(?:p|div|br|h[1-6]|li|section|blockquote)\b[^>]*>", re.I)

_JSON_SCRIPT = re.compile(
    r"<script[^>]*(?:id=[\"']__NEXT_DATA__[\"']|type=[\"']application/json[\"'])[^>]*>(.*?)</script>",
    re.S | re.I,
)
_STATE = re.compile(
    r"window\.(?:__INITIAL_STATE__|__NUXT__|__APOLLO_STATE__|__PRELOADED_STATE__)\s*=\s*(\{.*?\})\s*;?\s*</script>",
    re.S,
)


def embedded_json(body: bytes) -> Iterator[Any]:
    """JSON blobs a page embeds for its scripts (``__NEXT_DATA__``, ``application/json``
    scripts, ``window.__INITIAL_STATE__ = {...}``)."""
    text = body.decode("utf-8", errors="replace")
    for m in (*_JSON_SCRIPT.finditer(text), *_STATE.finditer(text)):
        try:
            yield json.loads(m.group(1))
        except ValueError:
            continue


def json_text_paths(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Every (dotted path, string) in a JSON value; list items as their index."""
    if isinstance(value, str):
        yield prefix, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from json_text_paths(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from json_text_paths(item, f"{prefix}.{i}" if prefix else str(i))


def article_json_path(body: bytes, min_chars: int = 150) -> str | None:
    """The dotted path of the longest Chinese text in the page's embedded JSON, when it is
    long enough to be an article body (HTML inside it counts by its text)."""
    best: tuple[int, str] | None = None
    for blob in embedded_json(body):
        for path, text in json_text_paths(blob):
            plain = re.sub(r"<[^>]+>", "", text)
            n = len(_CJK.findall(plain))
            if n >= min_chars and (best is None or n > best[0]):
                best = (n, path)
    return best[1] if best else None


def _lookup(value: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def text_at_json_path(body: bytes, path: str) -> str:
    """The text at ``path`` in the page's first blob that has it, as lines (HTML inside
    it reduced to its text, one line per block); "" when no blob has it."""
    for blob in embedded_json(body):
        value = _lookup(blob, path)
        if isinstance(value, list):
            value = "\n".join(v for v in value if isinstance(v, str))
        if isinstance(value, str) and value.strip():
            if "<" in value:
                value = _BLOCKS.sub("\n", value)
                value = lxml_html.fromstring(f"<div>{value}</div>").text_content()
            lines = (line.strip() for line in value.splitlines())
            return "\n".join(line for line in lines if line)
    return ""
