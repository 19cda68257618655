"""Training the xpath thresholds of a site (Hou & Yang 2011 §3.3) from sample pages.

Per sample page, the middle centroid of a 1-D k-means (``Clusternum = 3``) of the
``Length`` and of the ``B_n`` values of all its xpath clusters (eq. (6), (8)); over the
``M`` pages, the minimum of each (eq. (9), (11)): :func:`train_site`. The arithmetic is
the pure :mod:`newsspider.extraction.xpathseg`; this module finds the pages.

The samples must be raw HTML, which the corpus does not keep (``articles`` stores the
extracted text), so they come from a dataset folder (:func:`dataset_samples`) or from a
WARC archive holding the responses of the site's stored articles (:func:`warc_samples`).
``scrapy train`` is the command around it, and ``storage.save_thresholds`` keeps the
result.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from newsspider.evaluation import load_cases
from newsspider.extraction.errors import ExtractionError
from newsspider.extraction.xpathseg import CLUSTERNUM, Thresholds, page_thresholds, train_thresholds
from newsspider.replay import WarcIndex
from newsspider.sites import Site

__all__ = ["Sample", "Trained", "dataset_samples", "train_site", "warc_samples"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample page: a name to print, its bytes and HTTP headers (for the charset)."""

    name: str
    html: bytes
    headers: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Trained:
    """The per-page thresholds of the samples used and their minimum (None: no usable page)."""

    result: Thresholds | None
    pages: list[tuple[str, Thresholds]]
    skipped: list[tuple[str, str]]  # (name, reason)


def train_site(
    samples: Iterator[Sample],
    pages: int,
    k: int = CLUSTERNUM,
    progress: Callable[[int], None] | None = None,
) -> Trained:
    """Eq. (6)-(11) over the first ``pages`` usable samples.

    ``progress(1)`` is called for each page used (a command's bar of ``pages``).
    """
    used: list[tuple[str, Thresholds]] = []
    skipped: list[tuple[str, str]] = []
    for sample in samples:
        if len(used) >= pages:
            break
        try:
            found = page_thresholds(sample.html, headers=sample.headers, Clusternum=k)
        except ExtractionError as exc:
            skipped.append((sample.name, f"not HTML: {exc}"))
            continue
        if found is None:
            skipped.append((sample.name, "no text"))
            continue
        used.append((sample.name, found))
        if progress is not None:
            progress(1)
    return Trained(train_thresholds(t for _, t in used), used, skipped)


def _in_domains(host: str, domains: Sequence[str]) -> bool:
    host = host.lower().strip(".")
    return any(host == d or host.endswith("." + d) for d in domains)


def dataset_samples(directory: Path, site: Site | None) -> Iterator[Sample]:
    """The pages of a dataset folder that belong to ``site`` (all of them for None)."""
    for case in load_cases(directory):
        if site is not None:
            ours = (case.site is not None and _in_domains(case.site, site.allowed_domains)) or (
                case.url is not None and site.owns(case.url)
            )
            if not ours:
                continue
        yield Sample(f"{directory.name}/{case.id}", case.html)


def _decoded_body(body: bytes, headers: Sequence[tuple[str, str]]) -> bytes | None:
    """The body without its Content-Encoding (a WARC keeps what the server sent)."""
    coding = next((v for k, v in headers if k.lower() == "content-encoding"), "").strip().lower()
    if coding in ("", "identity"):
        return body
    if coding in ("gzip", "x-gzip", "deflate"):
        try:
            return zlib.decompress(body, zlib.MAX_WBITS | 32)  # gzip or zlib header
        except zlib.error:
            try:
                return zlib.decompress(body, -zlib.MAX_WBITS)  # raw deflate
            except zlib.error:
                return None
    return None


def warc_samples(archive: Path, urls: Sequence[str]) -> Iterator[Sample]:
    """The archived responses of ``urls`` (stored articles), in the given order."""
    index = WarcIndex(archive)
    try:
        for url in urls:
            record = index.get(url)
            if record is None or not 200 <= record.status < 300:
                continue
            body = _decoded_body(record.body, record.headers)
            if body is None:
                logger.warning("train: %s has an encoding we cannot undo; skipped", url)
                continue
            headers = {k: v for k, v in record.headers if k.lower() == "content-type"}
            yield Sample(url, body, headers or None)
    finally:
        index.close()
