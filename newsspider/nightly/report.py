"""The nightly run report and the site health checks, as pure functions.

Input is plain data: one :class:`SiteRun` per site crawl, built by
:mod:`newsspider.storage.runs` from its ``crawl_runs`` row (pages, new, updated,
dropped with reasons, errors) and its ``nightly_site_runs`` row (outcome, requests,
skipped, median body length). Output is text and :class:`HealthWarning` values; the
``scrapy nightly`` command prints and stores them. No I/O here, so every rule is
tested with hand-made runs.

Health: each site is compared with its own recent past, because sites differ too much
(Zaobao publishes a tenth of Sina's volume) for one fixed threshold. Three figures
are watched, each a symptom of a different breakage:

=====================  ==================================  ==========================
figure                 how it moves                        what it usually means
=====================  ==================================  ==========================
drop share             dropped / (stored + dropped)        a template change: pages
                                                           still come, extraction
                                                           finds no body or title
articles per run       new + updated rows                  a block, a moved section,
                                                           a dead feed
median body length     median ``len(raw_text)`` of the     extraction takes the wrong
                       stored articles                     block (nav, comments)
=====================  ==================================  ==========================

The baseline is the site's last ``window`` (7) nightly runs that ended ``ok``, and
nothing is judged with fewer than ``min_history`` (3). Runs of a plain ``scrapy
crawl`` are left out: a full re-crawl or a ``limit`` run is a different kind of
night and would blur the band. The band is a robust one, median ± k·MAD (k = 3,
MAD scaled by 1.4826 so it estimates a standard deviation), because one odd night
in the history must not widen it much, as it would a mean ± k·SD. Counts and lengths
vary by factors (weekends halve the news), so those two are compared on a
``log(1 + x)`` scale, where ± k·MAD is a ratio band. Each band has a floor, so a
site whose history happens to be nearly constant (MAD ≈ 0) does not warn on a
trivial change: ± 10 percentage points for the drop share, a factor of 2 for
articles per run, a factor of 1.5 for the median body length. A drop share is only
judged on runs with at least ``min_article_pages`` (10) article pages, since 1 of 2
is 50%.

One more WARNING needs no history: a site whose start pages and feeds were read but
gave no article link (``NOTE_NO_ARTICLE_LINKS``, from the spider's
``newsspider/article_links/<site>``), the usual sign of a redesign, is named with what to
run (``scrapy sites check KEY``, ``scrapy addsite URL``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from newsspider import settings as defaults
from newsspider.outcome import (
    DATABASE_UNAVAILABLE,
    DROPPED_DATABASE,
    EXIT_ALL_DROPPED,
    EXIT_BLOCKED,
    EXIT_BUG,
    EXIT_DATABASE,
    EXIT_NOTHING_FETCHED,
    format_duration,
    pages_ok_from_stats,
    worst_status,
)
from newsspider.sites import SITES

__all__ = [
    "Band",
    "HealthPolicy",
    "HealthWarning",
    "SiteRun",
    "blocked_warning",
    "check_health",
    "classify",
    "exit_status",
    "history_size",
    "merge_site_runs",
    "nightly_report",
    "pages_ok_from_stats",
    "redesign_warning",
    "robust_band",
    "site_report",
]

#: MAD x 1.4826 estimates the standard deviation of normally distributed values.
MAD_TO_SD = 1.4826

#: Outcomes of a site crawl, as stored in ``nightly_site_runs.outcome``.
OK, FAILED, INTERRUPTED = "ok", "failed", "interrupted"


@dataclass(frozen=True, slots=True)
class SiteRun:
    """One site's crawl, as the report and the health checks see it.

    Counts are those of ``crawl_runs`` (``pages_fetched`` includes robots.txt and
    error pages, as Scrapy's ``downloader/response_count`` does) plus the nightly
    figures: ``requests`` made, ``pages_ok`` (2xx, robots.txt excluded),
    ``skipped_stored`` (article requests not made because the URL was stored).
    Failures on the way (``crawl_runs``): ``fetch_failures`` requests that ended
    without a page after their retries, by reason in ``fetch_failure_reasons``
    (``http_404``, ``timeout``, ``connection_lost``…), ``retries`` downloads repeated by
    Scrapy's RetryMiddleware, ``db_retries`` write batches that waited for the database.
    ``bodies`` counts the stored items ``median_body_chars`` is over; ``workers`` the
    cluster workers whose crawls of the site were summed into this one
    (:func:`merge_site_runs`).
    """

    site: str
    outcome: str
    crawl_run_id: int | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    finish_reason: str | None = None
    resumed: bool = False
    requests: int = 0
    pages_fetched: int = 0
    pages_ok: int = 0
    skipped_stored: int = 0
    items_new: int = 0
    items_updated: int = 0
    items_dropped: int = 0
    drop_reasons: Mapping[str, int] = field(default_factory=dict)
    errors: int = 0
    fetch_failures: int = 0
    fetch_failure_reasons: Mapping[str, int] = field(default_factory=dict)
    retries: int = 0
    db_retries: int = 0
    median_body_chars: int | None = None
    note: str = ""
    bodies: int = 0
    workers: int = 1

    @property
    def articles(self) -> int:
        """Rows this run wrote: new plus updated articles."""
        return self.items_new + self.items_updated

    @property
    def article_pages(self) -> int:
        """Article pages that reached the pipelines: stored plus dropped."""
        return self.articles + self.items_dropped

    @property
    def drop_share(self) -> float | None:
        """Share of article pages dropped by the pipelines; None without any."""
        return self.items_dropped / self.article_pages if self.article_pages else None


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    """The knobs of :func:`check_health`; the module docstring explains each. ``window`` and
    ``k`` are the settings ``NIGHTLY_HEALTH_RUNS`` and ``NIGHTLY_HEALTH_K``."""

    window: int = defaults.NIGHTLY_HEALTH_RUNS
    min_history: int = 3
    k: float = defaults.NIGHTLY_HEALTH_K
    drop_share_floor: float = 0.10
    articles_factor: float = 2.0
    body_factor: float = 1.5
    min_article_pages: int = 10


@dataclass(frozen=True, slots=True)
class Band:
    """A recent range in the figure's own units: ``low <= x <= high`` is normal."""

    center: float
    low: float
    high: float
    n: int

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high


def robust_band(values: Sequence[float], *, k: float, floor: float, log: bool = False) -> Band:
    """median ± max(k · 1.4826 · MAD, floor), on a ``log(1 + x)`` scale when ``log``.

    With ``log`` the floor is a factor (2.0: never narrower than ÷2 … ×2 around the
    median of ``1 + x``); without, an absolute half-width. ``values`` must not be empty.
    """
    if not values:
        raise ValueError("a band needs at least one value")
    if log:
        t = [math.log1p(v) for v in values]
        half_floor = math.log(floor)
    else:
        t = list(values)
        half_floor = floor
    m = statistics.median(t)
    mad = statistics.median(abs(x - m) for x in t) * MAD_TO_SD
    half = max(k * mad, half_floor)
    if log:
        return Band(math.expm1(m), math.expm1(m - half), math.expm1(m + half), len(values))
    return Band(m, m - half, m + half, len(values))


@dataclass(frozen=True, slots=True)
class HealthWarning:
    """A site figure outside its recent range."""

    site: str
    figure: str
    value: float
    band: Band
    unit: str = ""

    @property
    def message(self) -> str:
        """``<site>: <figure> <value> is outside its recent range <low>-<high> (…)``."""
        fmt = _fmt_share if self.unit == "%" else _fmt_count
        return (
            f"{self.site}: {self.figure} {fmt(self.value)} is outside its recent range "
            f"{fmt(max(self.band.low, 0.0))}-{fmt(self.band.high)} "
            f"(median {fmt(self.band.center)} of the last {self.band.n} runs)"
        )


def _fmt_share(x: float) -> str:
    return f"{100 * x:.1f}%"


def _fmt_count(x: float) -> str:
    return f"{x:.0f}"


def _check(
    run: SiteRun,
    history: Sequence[SiteRun],
    figure: str,
    value_of: Callable[[SiteRun], float | None],
    policy: HealthPolicy,
    *,
    floor: float,
    log: bool,
    unit: str = "",
) -> HealthWarning | None:
    value = value_of(run)
    past = [v for h in history if (v := value_of(h)) is not None]
    if value is None or len(past) < policy.min_history:
        return None
    band = robust_band(past, k=policy.k, floor=floor, log=log)
    if value in band:
        return None
    return HealthWarning(run.site, figure, value, band, unit)


def check_health(
    run: SiteRun, history: Sequence[SiteRun], policy: HealthPolicy | None = None
) -> list[HealthWarning]:
    """The figures of ``run`` outside their band over ``history`` (newest first).

    Only ``ok`` runs are judged and only ``ok`` runs of the history count: a failed or
    interrupted night says nothing about the site's normal range. Empty when the
    history is too short.
    """
    policy = policy or HealthPolicy()
    if run.outcome != OK:
        return []
    past = [h for h in history if h.outcome == OK][: policy.window]
    if len(past) < policy.min_history:
        return []

    def share(r: SiteRun) -> float | None:
        return r.drop_share if r.article_pages >= policy.min_article_pages else None

    def body(r: SiteRun) -> float | None:
        return float(r.median_body_chars) if r.median_body_chars is not None else None

    checks = (
        _check(run, past, "drop share", share, policy,
               floor=policy.drop_share_floor, log=False, unit="%"),
        _check(run, past, "articles per run", lambda r: float(r.articles), policy,
               floor=policy.articles_factor, log=True),
        _check(run, past, "median body length", body, policy,
               floor=policy.body_factor, log=True),
    )  # fmt: skip
    return [w for w in checks if w is not None]


#: Outcomes from the worst to the best: a site crawled by several cluster workers takes the
#: worst of theirs (``killed``: a worker died mid-crawl; ``running``: its row never ended).
_OUTCOME_RANK = {FAILED: 0, INTERRUPTED: 1, "killed": 2, "running": 3, OK: 4}


def _weighted_median(values: Sequence[tuple[int, int]]) -> int | None:
    """The median of ``(value, weight)`` pairs: each worker's median body length weighted
    by its bodies. Exact for one worker; for several the value at the middle body when
    each worker's bodies are taken at its median (the lengths themselves are not kept)."""
    pairs = sorted((v, w) for v, w in values if w > 0)
    total = sum(w for _, w in pairs)
    if not total:
        return None
    seen = 0
    for value, weight in pairs:
        seen += weight
        if 2 * seen >= total:
            return value
    return pairs[-1][0]


def _sum_counts(maps: Sequence[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for counts in maps:
        for key, n in counts.items():
            total[key] = total.get(key, 0) + n
    return total


def _notes(parts: Sequence[SiteRun]) -> list[str]:
    """The distinct notes of a site's parts; "no article links" only when no part found an
    article (another cluster worker may have read the start pages that had them)."""
    notes = list(dict.fromkeys(r.note for r in parts if r.note))
    if any(r.article_pages or r.skipped_stored for r in parts):
        notes = [n for n in ("; ".join(_plain_notes(n)) for n in notes) if n]
    return notes


def merge_site_runs(runs: Sequence[SiteRun]) -> list[SiteRun]:
    """One :class:`SiteRun` per site, in order of first appearance.

    A nightly run on one machine has one row per site, returned as it is. A cluster run
    has one per worker and site, each worker having crawled part of the site's shared
    queue: their counts are summed, the outcome is the worst of theirs (a site where one
    worker failed failed), the times span all of them, and the notes are kept, one per
    distinct text.
    """
    by_site: dict[str, list[SiteRun]] = {}
    for run in runs:
        by_site.setdefault(run.site, []).append(run)
    merged = []
    for site, parts in by_site.items():
        if len(parts) == 1:
            merged.append(parts[0])
            continue
        worst = min(parts, key=lambda r: _OUTCOME_RANK.get(r.outcome, 0))
        starts = [r.started_at for r in parts if r.started_at is not None]
        ends = [r.finished_at for r in parts if r.finished_at is not None]
        medians = [
            (r.median_body_chars, r.bodies) for r in parts if r.median_body_chars is not None
        ]
        notes = _notes(parts)
        merged.append(
            SiteRun(
                site=site,
                outcome=worst.outcome,
                crawl_run_id=None,
                started_at=min(starts) if starts else None,
                finished_at=max(ends) if ends else None,
                finish_reason=worst.finish_reason,
                resumed=any(r.resumed for r in parts),
                requests=sum(r.requests for r in parts),
                pages_fetched=sum(r.pages_fetched for r in parts),
                pages_ok=sum(r.pages_ok for r in parts),
                skipped_stored=sum(r.skipped_stored for r in parts),
                items_new=sum(r.items_new for r in parts),
                items_updated=sum(r.items_updated for r in parts),
                items_dropped=sum(r.items_dropped for r in parts),
                drop_reasons=_sum_counts([r.drop_reasons for r in parts]),
                errors=sum(r.errors for r in parts),
                fetch_failures=sum(r.fetch_failures for r in parts),
                fetch_failure_reasons=_sum_counts([r.fetch_failure_reasons for r in parts]),
                retries=sum(r.retries for r in parts),
                db_retries=sum(r.db_retries for r in parts),
                median_body_chars=_weighted_median(medians),
                note="; ".join(notes),
                bodies=sum(r.bodies for r in parts),
                workers=sum(r.workers for r in parts),
            )
        )
    return merged


def history_size(history: Sequence[SiteRun], policy: HealthPolicy | None = None) -> int:
    """How many earlier runs the health checks use (``min_history`` needed)."""
    policy = policy or HealthPolicy()
    return len([h for h in history if h.outcome == OK][: policy.window])


# -- outcome and exit status ---------------------------------------------------------------


#: Notes of failed site crawls (``nightly_site_runs.note``), which ``site_exit_status`` reads.
NOTE_STORING_FAILED = "storing failed"
NOTE_NOTHING_FETCHED = "no page fetched"
NOTE_ALL_DROPPED = "every article was dropped (see the drop reasons)"
#: Note of a site crawl that read its start pages and feeds and found no article link on
#: them (``newsspider/article_links/<site>`` 0): the usual sign of a redesign, which moves
#: the articles to URLs the row's patterns do not match. The report turns it into a WARNING.
NOTE_NO_ARTICLE_LINKS = "no article links on its start pages and feeds"
#: Start of the note of a site crawl that anti-bot challenges blocked (exit status 6), the
#: rest being its summary's detail: ``blocked: 40 of 42 article fetches answered ...``.
NOTE_BLOCKED = "blocked: "


def classify(
    *,
    error: str | None,
    finish_reason: str | None,
    crawl_status: str | None,
    pages_ok: int,
    resumed: bool,
    all_dropped: bool = False,
    article_links: int | None = None,
    blocked: str | None = None,
) -> tuple[str, str]:
    """``(outcome, note)`` of one site crawl.

    ``failed`` (the site failed entirely, so the run's exit status is non-zero): the
    crawl raised (spider arguments, database unreachable), the pipeline could not
    finish storing (``crawl_runs.status = failed``, or the crawl closed with
    ``database_unavailable``), the spider never closed, or not
    one page came back 2xx, which is what a block or a dead domain looks like, or every
    article was dropped (``all_dropped``: pages came back, none was stored). A
    resumed job whose queue was already empty fetches nothing and is not a failure.
    ``interrupted``: stopped by SIGTERM/SIGINT (``finish_reason = shutdown``); its
    job directory is kept and the next start resumes it. Otherwise ``ok``, with the note
    :data:`NOTE_NO_ARTICLE_LINKS` when ``article_links`` (the article links found on the
    start and list pages and feeds; None when none was read) is 0. ``blocked``: the detail
    of a crawl whose article fetches were mostly answered with anti-bot challenges
    (``blocked: 40 of 42 article fetches ...``, :mod:`newsspider.outcome`), a failure.
    """
    if error:
        return FAILED, f"crawl failed: {error}"
    if finish_reason == DATABASE_UNAVAILABLE:
        return FAILED, f"{NOTE_STORING_FAILED}: the database stayed unavailable, crawl closed"
    if crawl_status == FAILED:
        return FAILED, f"{NOTE_STORING_FAILED} (crawl_runs.status = failed)"
    if finish_reason is None:
        return FAILED, "the spider never closed"
    if finish_reason == "shutdown":
        return INTERRUPTED, "stopped by a signal; the next start resumes its job directory"
    if blocked:
        return FAILED, blocked
    if pages_ok == 0 and not resumed:
        return FAILED, f"{NOTE_NOTHING_FETCHED} (finish reason: {finish_reason})"
    if all_dropped:
        return FAILED, NOTE_ALL_DROPPED
    if article_links == 0 and not resumed:
        return OK, NOTE_NO_ARTICLE_LINKS
    return OK, ""


def site_exit_status(run: SiteRun) -> int:
    """The exit status a failed site crawl stands for (:mod:`newsspider.outcome`), 0 else.

    The database failing (closed ``database_unavailable``, articles dropped as
    ``DatabaseUnavailable``, storing failed) is 4; nothing fetched 3; every article
    dropped 5; blocked by anti-bot challenges 6; a crawl that raised or never closed is a bug, 1.
    """
    if run.outcome != FAILED:
        return 0
    note = run.note or ""
    if (
        run.finish_reason == DATABASE_UNAVAILABLE
        or run.drop_reasons.get(DROPPED_DATABASE)
        or NOTE_STORING_FAILED in note
    ):
        return EXIT_DATABASE
    if _blocked_note(note):
        return EXIT_BLOCKED
    if NOTE_NOTHING_FETCHED in note:
        return EXIT_NOTHING_FETCHED
    if NOTE_ALL_DROPPED in note:
        return EXIT_ALL_DROPPED
    return EXIT_BUG


def exit_status(runs: Sequence[SiteRun], *, other_failures: int = 0) -> int:
    """The run's exit status: the most severe of its failed sites (``site_exit_status``),
    1 when another step (reclean) failed, else 0: the table of :mod:`newsspider.outcome`."""
    statuses = [site_exit_status(r) for r in runs]
    if other_failures:
        statuses.append(EXIT_BUG)
    return worst_status(statuses)


# -- text -------------------------------------------------------------------------------------

_COLUMNS = (
    ("site", 11, "<"),
    ("outcome", 12, "<"),
    ("requests", 9, ">"),
    ("pages", 7, ">"),
    ("skipped", 8, ">"),
    ("new", 6, ">"),
    ("updated", 8, ">"),
    ("dropped", 8, ">"),
    ("errors", 7, ">"),
    ("median body", 12, ">"),
)


def _row(values: Sequence[object]) -> str:
    return " ".join(f"{v!s:{a}{w}}" for v, (_, w, a) in zip(values, _COLUMNS, strict=True))


def _outcome_label(run: SiteRun) -> str:
    label = run.outcome.upper() if run.outcome == FAILED else run.outcome
    return f"{label}, resumed" if run.resumed else label


def _reasons(run: SiteRun) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(run.drop_reasons.items()) if v)


def _failures(run: SiteRun) -> str:
    """``6 fetches failed (http_404 1, timeout 5), 8 downloads retried, …``; "" when none."""
    parts = []
    if run.fetch_failures:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(run.fetch_failure_reasons.items()) if v)
        parts.append(f"{run.fetch_failures} fetches failed" + (f" ({reasons})" if reasons else ""))
    if run.retries:
        parts.append(f"{run.retries} downloads retried")
    if run.db_retries:
        parts.append(f"{run.db_retries} database writes retried")
    return ", ".join(parts)


def _plain_notes(note: str) -> list[str]:
    """The parts of a note (``"; "``-joined) other than :data:`NOTE_NO_ARTICLE_LINKS`,
    which the report prints as a WARNING instead."""
    return [part for part in note.split("; ") if part and part != NOTE_NO_ARTICLE_LINKS]


def _plain_note(run: SiteRun) -> str:
    return "; ".join(_plain_notes(run.note or ""))


def redesign_warning(run: SiteRun) -> str | None:
    """``WARNING <site>: no article links ...; run scrapy sites check <site> ...`` for a
    site whose start pages and feeds gave no article link, else None."""
    if NOTE_NO_ARTICLE_LINKS not in (run.note or "").split("; "):
        return None
    row = SITES.get(run.site)
    first = (row.start_urls or [f.url for f in row.feeds]) if row is not None else ()
    home = f"{urlsplit(first[0]).scheme}://{urlsplit(first[0]).netloc}/" if first else "URL"
    return (
        f"WARNING {run.site}: {NOTE_NO_ARTICLE_LINKS}, the usual sign of a redesign: "
        f"run scrapy sites check {run.site}, and scrapy addsite {home} to learn its new "
        "URL forms"
    )


def _blocked_note(note: str) -> str | None:
    """The part of a note that says the site was blocked (:data:`NOTE_BLOCKED`), or None."""
    return next((p for p in note.split("; ") if p.startswith(NOTE_BLOCKED)), None)


def blocked_warning(run: SiteRun) -> str | None:
    """``WARNING <site>: blocked: 40 of 42 article fetches answered with anti-bot
    challenges (...); nothing of it was stored ...`` for a blocked site, else None."""
    detail = _blocked_note(run.note or "")
    if detail is None:
        return None
    return (
        f"WARNING {run.site}: {detail}; the challenge pages were not stored: slow the site "
        "down (DOWNLOAD_DELAY) or check it by hand in a browser"
    )


def _when(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S %Z") if t else "-"


def _duration(start: datetime | None, end: datetime | None) -> str:
    return format_duration((end - start).total_seconds()) if start and end else "-"


def site_report(
    run: SiteRun,
    warnings: Sequence[HealthWarning] = (),
    *,
    history_runs: int = 0,
    policy: HealthPolicy | None = None,
    nightly_run_id: int | None = None,
) -> str:
    """The site's part of the report, as kept in its ``crawl_runs.report``."""
    policy = policy or HealthPolicy()
    body = f"{run.median_body_chars} chars" if run.median_body_chars is not None else "-"
    reasons = _reasons(run)
    lines = [
        f"{run.site}: {_outcome_label(run)} ({run.finish_reason or 'no finish reason'})"
        + (f" in nightly run {nightly_run_id}" if nightly_run_id is not None else "")
        + (f", {run.workers} cluster workers summed" if run.workers > 1 else ""),
        f"  {run.requests} requests, {run.pages_ok} pages 2xx ({run.pages_fetched} responses), "
        f"{run.skipped_stored} skipped as stored",
        f"  {run.items_new} new, {run.items_updated} updated, {run.items_dropped} dropped"
        + (f" ({reasons})" if reasons else "")
        + f", {run.errors} errors, median body {body}",
    ]
    if failures := _failures(run):
        lines.append(f"  {failures}")
    if note := _plain_note(run):
        lines.append(f"  {note}")
    lines.extend(f"WARNING {w.message}" for w in warnings)
    if redesign := redesign_warning(run):
        lines.append(redesign)
    if blocked := blocked_warning(run):
        lines.append(blocked)
    if run.outcome == OK and history_runs < policy.min_history:
        lines.append(
            f"  health not judged: {history_runs} earlier nightly runs (needs {policy.min_history})"
        )
    return "\n".join(lines)


def nightly_report(
    runs: Sequence[SiteRun],
    warnings: Mapping[str, Sequence[HealthWarning]],
    *,
    nightly_run_id: int | None,
    host: str,
    started_at: datetime | None,
    finished_at: datetime | None,
    exit_code: int,
    history_runs: Mapping[str, int] | None = None,
    policy: HealthPolicy | None = None,
    extra: Sequence[str] = (),
) -> str:
    """The whole run: a header, one table row per site, notes, WARNINGs, then ``extra``.

    ``extra`` carries what happened after the crawls (re-cleaning), one line each.
    """
    policy = policy or HealthPolicy()
    history_runs = history_runs or {}
    lines = [
        f"newsspider nightly run {nightly_run_id} on {host}: started {_when(started_at)}, "
        f"took {_duration(started_at, finished_at)}, exit status {exit_code}",
        _row([name for name, _, _ in _COLUMNS]),
    ]
    for r in runs:
        body = r.median_body_chars if r.median_body_chars is not None else "-"
        lines.append(
            _row([r.site, _outcome_label(r), r.requests, r.pages_ok, r.skipped_stored,
                  r.items_new, r.items_updated, r.items_dropped, r.errors, body])
        )  # fmt: skip
    for r in runs:
        if r.workers > 1:
            lines.append(f"  {r.site}: crawled by {r.workers} cluster workers, figures summed")
        if reasons := _reasons(r):
            lines.append(f"  {r.site} dropped: {reasons}")
        if failures := _failures(r):
            lines.append(f"  {r.site} failures: {failures}")
        if note := _plain_note(r):
            lines.append(f"  {r.site}: {note}")
    for r in runs:
        lines.extend(f"WARNING {w.message}" for w in warnings.get(r.site, ()))
    lines.extend(w for r in runs if (w := redesign_warning(r)))
    lines.extend(w for r in runs if (w := blocked_warning(r)))
    unjudged = [
        f"{r.site} ({history_runs.get(r.site, 0)})"
        for r in runs
        if r.outcome == OK and history_runs.get(r.site, 0) < policy.min_history
    ]
    if unjudged:
        lines.append(
            f"health not judged yet (earlier nightly runs, {policy.min_history} needed): "
            + ", ".join(unjudged)
        )
    lines.extend(extra)
    return "\n".join(lines)
