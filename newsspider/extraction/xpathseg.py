"""XPath-cluster segmentation: Hou & Yang 2011 (``xpath``).

Paper mode, step by step (section numbers are the paper's):

1. §1.1: drop the invisible elements, :data:`INVISIBLE` (``script``,
   ``style``) and comments, with their content; lxml's parser repairs the
   markup (:func:`.page.load_page`).
2. §2 (1), §3.1: number the DOM's leaf text nodes in document order
   (:func:`leaves_of`) and cluster the leaves whose tag path (the xpath
   without indices) is identical: cluster ``X_i = {x_i1, x_i2, …}``
   (:func:`cluster_leaves`).
3. §2 (1), eq. (2)-(4): per cluster the gaps ``ΔD_j = x_i(j+1) - x_ij``, the
   mean period ``ΔT_i`` (mean gap) and the variance of the gaps.
4. §2 (2), eq. (5): ``θ = ΔD_(j+1) / ΔD_j``; when ``θ ∉ [0.85, 2]`` the cluster
   is split there (:func:`split_points`).
5. §1.2, eq. (1): ``Length`` and the list-noise coefficient
   ``B_n = N1/(N1+N2) * NODE_nohref/(NODE_href+1)`` (:func:`cluster_stats`).
6. §3.1 ``WebPageSeg``: the body is the first cluster, in document order of
   its first leaf, with gap variance within the limit, more than
   ``min_leaves`` leaves, ``Length > Length_Threshold`` and
   ``B_n > B_n_Threshold``; a cluster whose variance is over the limit is
   split at its θ points and the parts are examined in turn, in document
   order (:func:`segment`). Its leaves' text, in order, is the body.
7. §3.3, eq. (6)-(11): thresholds trained per site: 1-D k-means
   (:func:`kmeans_1d`) of the ``Length`` and ``B_n`` values of all clusters
   of a page, threshold = the middle centroid; over ``M`` pages, the minimum
   (:func:`page_thresholds`, :func:`train_thresholds`). ``scrapy train``
   stores them per site (``newsspider/storage/thresholds.py``) and the
   caller passes them as ``Length_Threshold``/``B_n_Threshold``. The default
   for a site without trained thresholds is the page's own (eq. (6)/(8) with
   ``M = 1``): it follows the paper's own rule, needs no constant the paper
   does not give, and measured as well as the best fixed pair of a grid
   (``Length_Threshold`` 100-800 × ``B_n_Threshold`` 0.5-2, best 400/0.5):
   F1 0.826/0.890/0.780 against 0.808/0.873/0.795 on cwced-zh, cx163-zh,
   scrapinghub-en.

What the paper leaves open, settled here (each also said where it is used):

* A *leaf* is a DOM text node with non-whitespace text (the DOM's leaves are
  its text nodes; an element's text before its first child, and the text
  after each child, are separate nodes). Its tag path is the path of the
  element that holds it, e.g. ``/html/body/div/p``; numbers start at 0.
* ``θ`` compares two neighbouring gaps; when it is out of range, the split is
  made at the *larger* of the two (``θ > 2``: at ``ΔD_(j+1)``; ``θ < 0.85``: at
  ``ΔD_j``), so a long gap between two regular runs is cut once, not twice.
* ``Length`` is counted over the cluster's own leaves (the text that would be
  the body), a character above U+00FF counting 2 and any other 1,
  whitespace not counted (§1.2).
* ``B_n`` is counted over the *block* the cluster spans: every leaf from its
  first to its last leaf, whatever its path, so links inside body paragraphs
  count. ``N1``/``N2`` are the non-whitespace characters of those leaves
  outside/inside a link; a leaf is a node with ``href`` when it lies inside an
  element with an ``href`` attribute (``NODE_href``), else without
  (``NODE_nohref``). The paper's ``× 100%`` only prints B_n as a percentage;
  the plain ratio is used.
* The variance is the population variance of the ``n - 1`` gaps (eq. (4)).
  A cluster of one leaf has no gaps: ``ΔT = 0`` and variance 0.
* The paper's ``ΔT > PreD`` test (heuristic (2)) comes with no value; it is
  the parameter ``PreD``, default 0, which every
  cluster of two or more leaves passes. The optional template step (§3.2,
  ``Frequency_Threshold``) is not part of the body rule and is not done.
* k-means (§3.3 cites it without details): ``Clusternum = 3`` clusters,
  Lloyd's iterations from centroids spread evenly over the distinct sorted
  values, ties to the lower centroid; ``Mid`` is the middle of the sorted
  centroids (the lower middle for an even count, the only one for one).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from lxml import etree

from .method import Extractor
from .model import ExtractedArticle
from .page import Page, load_page
from .textnodes import TextNode, finish_article, read_metadata

__all__ = [
    "CLUSTERNUM",
    "INVISIBLE",
    "MIN_LEAVES",
    "VARIANCE_LIMIT",
    "Cluster",
    "ClusterStats",
    "Leaf",
    "Segmentation",
    "Thresholds",
    "XpathClusters",
    "cluster_leaves",
    "cluster_stats",
    "extract_xpath",
    "kmeans_1d",
    "leaf_thresholds",
    "leaves_of",
    "mid_centroid",
    "page_thresholds",
    "segment",
    "split_cluster",
    "split_points",
    "text_length",
    "train_thresholds",
    "θ_RANGE",
]

#: §1.1: invisible elements deleted with their content (comments too).
INVISIBLE: tuple[str, ...] = ("script", "style")
#: §2 (2): θ outside this closed range is a split point.
θ_RANGE: tuple[float, float] = (0.85, 2.0)
#: §3.1 ``size() > MAXSIZE``: a body cluster has more than this many leaves
#: (the paper gives no value). 1: at least two leaves, so it has a gap.
MIN_LEAVES = 1
#: §3.1 "var is within threshold" (no value in the paper): the largest gap
#: variance (in leaves²) of a body cluster. Measured with the default
#: thresholds: of 1, 2, 4, 8, 16 and no limit, 8 is best or equal on cwced-zh
#: (F1 0.826) and cx163-zh (0.890); no limit is 0.01 better on scrapinghub-en
#: (0.790 vs 0.780) but 0.015 worse on cwced-zh.
VARIANCE_LIMIT = 8.0
#: §3.1 ``ΔT > PreD`` (the paper gives no value; 0 keeps every cluster).
PRED = 0.0
#: §3.3 ``Clusternum`` of the k-means.
CLUSTERNUM = 3

_WS = re.compile(r"\s+")


# --------------------------------------------------------------------------
# Leaves and clusters (§2 (1), §3.1)


@dataclass(frozen=True, slots=True)
class Leaf:
    """One numbered leaf text node (§2: numbered in document order)."""

    number: int
    text: str  # output form: whitespace runs one space
    path: str  # tag path without indices, e.g. /html/body/div/p
    in_link: bool  # inside an element with an href attribute
    element: etree._Element  # the element holding the text


def leaves_of(root: etree._Element, invisible: Sequence[str] = INVISIBLE) -> list[Leaf]:
    """§1.1 and §2 (1) on a parsed page (modifies ``root``): drop the invisible
    elements and comments, then number the leaf text nodes in document order."""
    etree.strip_elements(
        root, etree.Comment, etree.ProcessingInstruction, *invisible, with_tail=False
    )
    leaves: list[Leaf] = []
    paths: list[str] = []
    links: list[bool] = []
    for event, el in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            tag = el.tag if isinstance(el.tag, str) else "?"
            path = f"{paths[-1]}/{tag}" if paths else f"/{tag}"
            in_link = (bool(links) and links[-1]) or el.get("href") is not None
            paths.append(path)
            links.append(in_link)
            text = el.text
            if text and not text.isspace():
                leaves.append(Leaf(len(leaves), _WS.sub(" ", text).strip(), path, in_link, el))
        else:
            paths.pop()
            links.pop()
            tail = el.tail
            if tail and paths and not tail.isspace():
                parent = el.getparent()
                leaves.append(
                    Leaf(len(leaves), _WS.sub(" ", tail).strip(), paths[-1], links[-1], parent)
                )
    return leaves


@dataclass(slots=True)
class Cluster:
    """One xpath cluster ``X_i``: the numbers of its leaves, ascending (§2 (1))."""

    path: str
    X: list[int] = field(default_factory=list)

    @property
    def ΔD(self) -> list[int]:
        """Eq. (2): gaps ``ΔD_j = x_i(j+1) - x_ij`` between neighbouring leaves."""
        X = self.X
        return [X[j + 1] - X[j] for j in range(len(X) - 1)]

    @property
    def ΔT(self) -> float:
        """Eq. (3): the mean period, the mean of the gaps (0 for one leaf)."""
        ΔD = self.ΔD
        return sum(ΔD) / len(ΔD) if ΔD else 0.0

    @property
    def variance(self) -> float:
        """Eq. (4): variance of the gaps around ``ΔT`` (0 for one leaf)."""
        ΔD = self.ΔD
        if not ΔD:
            return 0.0
        ΔT = sum(ΔD) / len(ΔD)
        return sum((d - ΔT) ** 2 for d in ΔD) / len(ΔD)


def cluster_leaves(leaves: Sequence[Leaf]) -> list[Cluster]:
    """§3.1 ``Cluster``: leaves with identical tag paths, clusters in order of their first leaf."""
    by_path: dict[str, Cluster] = {}
    for leaf in leaves:
        cluster = by_path.get(leaf.path)
        if cluster is None:
            cluster = by_path[leaf.path] = Cluster(leaf.path)
        cluster.X.append(leaf.number)
    return list(by_path.values())  # dicts keep insertion order: first leaf order


# --------------------------------------------------------------------------
# Split points (§2 (2), eq. (5))


def split_points(ΔD: Sequence[int], θ_range: tuple[float, float] = θ_RANGE) -> list[int]:
    """Indices ``j`` of the gaps ``ΔD_j`` at which a cluster is cut (eq. (5)).

    ``θ = ΔD_(j+1) / ΔD_j`` for each pair of neighbouring gaps; outside
    ``θ_range`` the larger gap of the pair is a split point (module docstring).
    """
    low, high = θ_range
    cuts: set[int] = set()
    for j in range(len(ΔD) - 1):
        θ = ΔD[j + 1] / ΔD[j]
        if θ > high:
            cuts.add(j + 1)
        elif θ < low:
            cuts.add(j)
    return sorted(cuts)


def split_cluster(cluster: Cluster, θ_range: tuple[float, float] = θ_RANGE) -> list[Cluster]:
    """Heuristic (1): the cluster cut at its split points (itself alone when it has none)."""
    cuts = split_points(cluster.ΔD, θ_range)
    if not cuts:
        return [cluster]
    parts = []
    start = 0
    for j in cuts:  # gap j lies between X[j] and X[j + 1]
        parts.append(Cluster(cluster.path, cluster.X[start : j + 1]))
        start = j + 1
    parts.append(Cluster(cluster.path, cluster.X[start:]))
    return parts


# --------------------------------------------------------------------------
# Length and B_n (§1.2, eq. (1))


def text_length(text: str) -> int:
    """§1.2 ``Length``: a character above U+00FF counts 2, any other 1; whitespace 0."""
    chars = "".join(text.split())
    return 2 * len(chars) - len(chars.encode("latin-1", "ignore"))


@dataclass(frozen=True, slots=True)
class ClusterStats:
    """The figures §3.1 tests a cluster on."""

    leaves: int
    ΔT: float
    variance: float
    Length: int
    N1: int
    N2: int
    NODE_href: int
    NODE_nohref: int

    @property
    def B_n(self) -> float:
        """Eq. (1): ``N1/(N1+N2) * NODE_nohref/(NODE_href+1)`` (0 for a block without text)."""
        chars = self.N1 + self.N2
        if not chars:
            return 0.0
        return self.N1 / chars * self.NODE_nohref / (self.NODE_href + 1)


class _LeafTable:
    """Per-leaf counts and their prefix sums, so a block's N1/N2/NODE counts cost O(1)."""

    def __init__(self, leaves: Sequence[Leaf]) -> None:
        self.length = [text_length(leaf.text) for leaf in leaves]
        chars = [len(leaf.text) - leaf.text.count(" ") for leaf in leaves]
        link_chars = [c if leaf.in_link else 0 for c, leaf in zip(chars, leaves, strict=True)]
        self.chars = [0, *accumulate(chars)]
        self.link_chars = [0, *accumulate(link_chars)]
        self.links = [0, *accumulate(int(leaf.in_link) for leaf in leaves)]

    def stats(self, cluster: Cluster) -> ClusterStats:
        X = cluster.X
        a, b = X[0], X[-1] + 1  # the block: leaves x_i1 … x_in
        N2 = self.link_chars[b] - self.link_chars[a]
        NODE_href = self.links[b] - self.links[a]
        return ClusterStats(
            leaves=len(X),
            ΔT=cluster.ΔT,
            variance=cluster.variance,
            Length=sum(self.length[x] for x in X),
            N1=self.chars[b] - self.chars[a] - N2,
            N2=N2,
            NODE_href=NODE_href,
            NODE_nohref=(b - a) - NODE_href,
        )


def cluster_stats(leaves: Sequence[Leaf], clusters: Sequence[Cluster]) -> list[ClusterStats]:
    """``ΔT``, variance, ``Length``, ``N1``, ``N2``, ``NODE_href``, ``NODE_nohref`` per cluster."""
    table = _LeafTable(leaves)
    return [table.stats(c) for c in clusters]


# --------------------------------------------------------------------------
# WebPageSeg (§3.1)


@dataclass(slots=True)
class Segmentation:
    """What :func:`segment` looked at: every cluster examined, in order, with its
    figures and verdict, and the chosen body cluster (None: no body)."""

    examined: list[tuple[Cluster, ClusterStats, str]] = field(default_factory=list)
    body: Cluster | None = None


def segment(
    leaves: Sequence[Leaf],
    *,
    Length_Threshold: float,
    B_n_Threshold: float,
    θ_range: tuple[float, float] = θ_RANGE,
    variance_limit: float = VARIANCE_LIMIT,
    min_leaves: int = MIN_LEAVES,
    PreD: float = PRED,
) -> Segmentation:
    """§3.1 ``WebPageSeg``: the first cluster that passes every test is the body.

    Clusters are examined in document order of their first leaf. One whose
    gap variance is within ``variance_limit`` is the body when it has more
    than ``min_leaves`` leaves, ``Length > Length_Threshold``,
    ``B_n > B_n_Threshold`` and ``ΔT > PreD``; otherwise the next is examined.
    One whose variance is over the limit is cut at its θ split points and the
    parts go back into the queue in document order (a part that cannot be cut
    again is passed over). Verdicts: ``"body"``, ``"too few leaves"``,
    ``"short"``, ``"list noise"``, ``"ΔT <= PreD"``, ``"split"``,
    ``"variance"`` (over the limit and no split point).
    """
    table = _LeafTable(leaves)
    result = Segmentation()
    queue = [(c.X[0], k, c) for k, c in enumerate(cluster_leaves(leaves))]
    heapq.heapify(queue)
    counter = len(queue)
    while queue:
        _, _, cluster = heapq.heappop(queue)
        stats = table.stats(cluster)
        if stats.variance > variance_limit:
            parts = split_cluster(cluster, θ_range)
            if len(parts) == 1:
                result.examined.append((cluster, stats, "variance"))
                continue
            result.examined.append((cluster, stats, "split"))
            for part in parts:
                heapq.heappush(queue, (part.X[0], counter, part))
                counter += 1
            continue
        if stats.leaves <= min_leaves:
            verdict = "too few leaves"
        elif stats.Length <= Length_Threshold:
            verdict = "short"
        elif stats.B_n <= B_n_Threshold:
            verdict = "list noise"
        elif stats.ΔT <= PreD:
            verdict = "ΔT <= PreD"
        else:
            result.examined.append((cluster, stats, "body"))
            result.body = cluster
            return result
        result.examined.append((cluster, stats, verdict))
    return result


# --------------------------------------------------------------------------
# Threshold training (§3.3)


def kmeans_1d(values: Iterable[float], k: int = CLUSTERNUM, max_iter: int = 100) -> list[float]:
    """1-D k-means (Lloyd) of ``values``: the centroids of the non-empty clusters, ascending.

    Starts from ``k`` centroids spread evenly over the distinct sorted values
    (``distinct[i * (n - 1) // (k - 1)]``; with ``k`` or fewer distinct
    values each is its own cluster); a value goes to the nearest centroid,
    the lower one on a tie; a centroid is the mean of its values. Stops when
    no value changes cluster.
    """
    data = sorted(values)
    distinct = sorted(set(data))
    if len(distinct) <= k:
        return [float(v) for v in distinct]
    if k == 1:
        return [sum(data) / len(data)]
    n = len(distinct)
    centroids = [float(distinct[i * (n - 1) // (k - 1)]) for i in range(k)]
    assignment: list[int] | None = None
    for _ in range(max_iter):
        new = [min(range(len(centroids)), key=lambda c: (abs(v - centroids[c]), c)) for v in data]
        if new == assignment:
            break
        assignment = new
        sums = [0.0] * len(centroids)
        counts = [0] * len(centroids)
        for v, c in zip(data, assignment, strict=True):
            sums[c] += v
            counts[c] += 1
        if 0 in counts:  # a cluster emptied: drop it, reassign against the rest
            assignment = None
        centroids = [sums[c] / counts[c] for c in range(len(centroids)) if counts[c]]
    return sorted(centroids)


def mid_centroid(values: Iterable[float], k: int = CLUSTERNUM) -> float | None:
    """§3.3 ``Mid(Kmeans(values, Clusternum))``: the middle of the sorted centroids."""
    centroids = kmeans_1d(values, k)
    return centroids[(len(centroids) - 1) // 2] if centroids else None


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Trained thresholds (§3.3) and the number of sample pages ``M`` they came from."""

    Length_Threshold: float
    B_n_Threshold: float
    pages: int = 1

    def as_params(self) -> dict[str, float]:
        """Keyword arguments for :func:`extract_xpath`."""
        return {"Length_Threshold": self.Length_Threshold, "B_n_Threshold": self.B_n_Threshold}


def leaf_thresholds(leaves: Sequence[Leaf], k: int = CLUSTERNUM) -> Thresholds | None:
    """Eq. (6) and (8) on one page's leaves: the middle k-means centroid of the
    ``Length`` and of the ``B_n`` values of all its xpath clusters (before any
    split). None when there are no leaves."""
    if not leaves:
        return None
    stats = cluster_stats(leaves, cluster_leaves(leaves))
    Length_Threshold = mid_centroid([s.Length for s in stats], k)
    B_n_Threshold = mid_centroid([s.B_n for s in stats], k)
    if Length_Threshold is None or B_n_Threshold is None:
        return None
    return Thresholds(Length_Threshold, B_n_Threshold, 1)


def page_thresholds(
    html: bytes | str,
    *,
    headers: Mapping[Any, Any] | None = None,
    Clusternum: int = CLUSTERNUM,
    invisible: Sequence[str] = INVISIBLE,
) -> Thresholds | None:
    """Eq. (6) and (8), one sample page given as bytes or str (:func:`leaf_thresholds`).

    None when the page has no leaves. Raises
    :class:`~.errors.ExtractionError` when the input is not HTML at all.
    """
    page = load_page(html, headers=headers)
    if page.root is None:
        return None
    return leaf_thresholds(leaves_of(page.root, invisible), Clusternum)


def train_thresholds(samples: Iterable[Thresholds | None]) -> Thresholds | None:
    """Eq. (9) and (11), ``M`` sample pages: the minimum of each page's thresholds.

    Pages without thresholds (None) are left out; None when none has any.
    ``pages`` of the result is ``M``, the number of pages that had thresholds.
    """
    found = [s for s in samples if s is not None]
    if not found:
        return None
    return Thresholds(
        min(s.Length_Threshold for s in found),
        min(s.B_n_Threshold for s in found),
        sum(s.pages for s in found),
    )


# --------------------------------------------------------------------------
# The method


class XpathClusters(Extractor):
    """Headline, time and body of one page by Hou & Yang 2011 (paper mode).

    ``Length_Threshold`` and ``B_n_Threshold`` are the site's trained
    thresholds (§3.3, ``scrapy train``). Either one left None falls back to
    the page's own: eq. (6)/(8) on this page alone (``M = 1``,
    :func:`leaf_thresholds` with ``Clusternum``), which is §3.3's training
    with the only sample an untrained site has. The other parameters are
    those of :func:`segment`. A page without a body cluster gives empty
    ``text``.
    """

    def extract(
        self,
        page: Page,
        url: str | None,
        *,
        Length_Threshold: float | None = None,
        B_n_Threshold: float | None = None,
        θ_range: tuple[float, float] = θ_RANGE,
        variance_limit: float = VARIANCE_LIMIT,
        min_leaves: int = MIN_LEAVES,
        PreD: float = PRED,
        Clusternum: int = CLUSTERNUM,
        invisible: Sequence[str] = INVISIBLE,
    ) -> ExtractedArticle:
        assert page.root is not None
        meta = read_metadata(page.root, page.tz)  # before <script> (JSON-LD) is deleted
        leaves = leaves_of(page.root, invisible)
        if Length_Threshold is None or B_n_Threshold is None:
            own = leaf_thresholds(leaves, Clusternum)
            if own is not None:
                Length_Threshold = (
                    own.Length_Threshold if Length_Threshold is None else Length_Threshold
                )
                B_n_Threshold = own.B_n_Threshold if B_n_Threshold is None else B_n_Threshold
        body: list[int] = []
        if Length_Threshold is not None and B_n_Threshold is not None:
            seg = segment(
                leaves,
                Length_Threshold=Length_Threshold,
                B_n_Threshold=B_n_Threshold,
                θ_range=θ_range,
                variance_limit=variance_limit,
                min_leaves=min_leaves,
                PreD=PreD,
            )
            if seg.body is not None:
                body = seg.body.X
        nodes = [TextNode(leaf.text, leaf.element) for leaf in leaves]
        return finish_article(page, meta, nodes, body, url, self.mode)


#: The method as a function, for library use (the registry's ``xpath``).
extract_xpath = XpathClusters("xpath")
