"""Shared machinery of the crawl benchmarks: a big replay archive, and a crawl of it.

Not a test and not a command of its own; ``crawl_throughput.py`` and ``crawl_scale.py``
import it, and it runs itself as the child process of each measured crawl
(``python benchmarks/crawl_archive.py child CONFIG.json``) so every crawl gets a fresh
Twisted reactor and its own peak RSS.

The archive: ten copies of every page (``crawl_mix.py``'s realistic mix uses the same writer)
    Every HTML file of every labelled dataset under ``--datasets`` (374 pages: articles,
    list pages, English and Chinese, every encoding) is reused under distinct URLs until
    there are N article pages. Page ``n`` goes to site ``bench<n % sites>`` at
    ``http://bench<s>.example/news/<yyyymmdd>/a<n>.html``. Each copy gets ``[n] `` after
    every ``<p>`` tag (``<br>`` on the few pages without paragraphs), ASCII bytes inserted
    at tag boundaries so no multi-byte character of a GBK page is cut: its body lines are
    then unique, as a real site's are, so the line table learns and prunes (identical
    copies would all take the cheaper "duplicate page" path and teach the table nothing).
    Each site's pages are linked from a chain of list pages (``/list/<j>.html``,
    ``per_page`` links and a ``rel="next"`` link each), so the scheduler holds one list
    page of articles at a time, as a paginated section would give it. One archive file per
    site, records gzipped one by one at level 1 (warcio's level 9 takes minutes for
    gigabytes), written as a stream: building memory does not depend on N. A manifest
    beside the files lets a second run reuse them.

The crawl
    One ``NewsSpider`` per site (generated with ``spider_class`` from a ``Site`` row of the
    bench hosts, exactly as ``newsspider/spiders/sites.py`` does for the real sites), all
    in one ``CrawlerProcess`` as ``scrapy nightly`` runs them, each replaying its own
    archive file. Settings are the project's with ``DOWNLOAD_DELAY=0``, AutoThrottle off,
    robots.txt obeyed (a replay miss, so allowed), ``DEPTH_LIMIT=0`` (the list chain is
    deep) and the given concurrency. Mode ``full`` keeps the project's item pipelines
    (extraction, line table, SQL); mode ``bare`` runs the same spiders with none.

    A probe counts pages (items scraped + dropped + failed: every article page that went
    through the item path) and every ``every`` pages records the time, current and peak
    RSS (the crawl process and, separately, its child processes), line-table rows per
    site, database size, the scheduler and dupefilter sizes and the live Python objects.
    Pages/s is measured from the first ``spider_opened`` to the last ``spider_closed``
    (pipelines flushed); loading the WARC index before that is not timed. Peak RSS is the
    crawl process's own (``VmHWM``). With ``stages`` the crawl process charges its CPU by
    stage (``newsspider.workers.stage_cpu``, and the garbage collector's passes through
    ``gc.callbacks``); with ``profile`` the reactor thread and the corpus pipeline's writer
    threads run under cProfile with ``time.thread_time`` as the clock (CPU, not waits).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DATASETS = REPO.parent / "shared" / "datasets"
#: Bumped whenever the archive layout changes, so a stale archive is rebuilt.
ARCHIVE_VERSION = 1
MANIFEST = "manifest.json"
GZIP_LEVEL = 1

_P_OPEN = re.compile(rb"<p(?:\s[^>]*)?>", re.I)
_BR = re.compile(rb"<br\s*/?>", re.I)


# --------------------------------------------------------------------------
# The page pool and the URLs


@dataclass(frozen=True, slots=True)
class PoolPage:
    """One saved page of a dataset, as bytes."""

    dataset: str
    id: str
    body: bytes
    #: the case's ``lang`` (``zh``, ``en``, ...) and gold ``body``, when the dataset gives them
    lang: str | None = None
    gold: str | None = None


def page_pool(datasets: Path = DATASETS) -> list[PoolPage]:
    """Every HTML file of every dataset folder (``cases.jsonl`` order, folders sorted)."""
    pool = []
    for d in sorted(p for p in Path(datasets).iterdir() if (p / "cases.jsonl").is_file()):
        with open(d / "cases.jsonl", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    case = json.loads(line)
                    body = (d / case["html_file"]).read_bytes()
                    pool.append(
                        PoolPage(d.name, case["id"], body, case.get("lang"), case.get("body"))
                    )
    if not pool:
        raise SystemExit(f"no dataset pages under {datasets}")
    return pool


def variant(body: bytes, n: int) -> bytes:
    """Copy ``n`` of a page: ``[n] `` after every ``<p>`` (else every ``<br>``).

    The inserted bytes are ASCII and go right after a tag's ``>``, which in GBK, GB18030
    and UTF-8 alike is always a character boundary.
    """
    marker = b"[%d] " % n
    out, k = _P_OPEN.subn(lambda m: m.group(0) + marker, body)
    if k:
        return out
    return _BR.sub(lambda m: m.group(0) + marker, body)


def host(site: int) -> str:
    return f"bench{site}.example"


def article_url(n: int, sites: int) -> str:
    """Page ``n``'s URL: its site, a day (500 pages a day from 2024-01-01) and ``n``."""
    day = (date(2024, 1, 1) + timedelta(days=n // 500)).strftime("%Y%m%d")
    return f"http://{host(n % sites)}/news/{day}/a{n:07d}.html"


def list_url(site: int, page: int) -> str:
    return f"http://{host(site)}/list/{page}.html"


def bench_site(i: int) -> Any:
    """The ``Site`` row of ``bench<i>.example`` (imported lazily: the parent needs no Scrapy)."""
    from newsspider.sites import Site

    h = re.escape(host(i))
    return Site(
        key=f"bench{i}",
        source=f"Bench {i}",
        allowed_domains=(host(i),),
        start_urls=(list_url(i, 1),),
        article_patterns=(rf"^https?://{h}/news/\d{{8}}/a\d+\.html",),
        list_patterns=(rf"^https?://{h}/list/\d+\.html$",),
    )


# --------------------------------------------------------------------------
# Writing the archive


def _gzip_member(data: bytes) -> bytes:
    c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    return c.compress(data) + c.flush()


def _record(url: str, body: bytes, content_type: str) -> bytes:
    """One WARC response record, uncompressed (gzipped by the caller, one member each)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=False, warc_version="1.1")
    http = StatusAndHeaders(
        "200 OK",
        [("Content-Type", content_type), ("Content-Length", str(len(body)))],
        protocol="HTTP/1.1",
    )
    writer.write_record(
        writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http
        )
    )
    return buf.getvalue()


def _list_page(site: int, page: int, urls: list[str], last: bool) -> bytes:
    items = "\n".join(f'<li><a href="{u}">article {u.rsplit("/", 1)[1]}</a></li>' for u in urls)
    nxt = "" if last else f'<p><a rel="next" href="{list_url(site, page + 1)}">next</a></p>\n'
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>list {page}</title></head>\n'
        f"<body>\n<ul>\n{items}\n</ul>\n{nxt}</body></html>\n"
    ).encode()


@dataclass(slots=True)
class Archive:
    """What :func:`build_archive` wrote (or found): one WARC file per site."""

    directory: Path
    pages: int
    sites: int
    per_page: int
    files: list[str] = field(default_factory=list)
    bytes_raw: int = 0  # article bodies, uncompressed
    bytes_disk: int = 0
    build_seconds: float = 0.0
    reused: bool = False
    pool_pages: int = 0

    def path(self, site: int) -> Path:
        return self.directory / self.files[site]

    def summary(self) -> dict[str, Any]:
        """The archive's figures as the benchmark reports give them."""
        return {
            "pages": self.pages,
            "sites": self.sites,
            "per_page": self.per_page,
            "pool_pages": self.pool_pages,
            "article_mib": round(self.bytes_raw / 2**20, 1),
            "disk_mib": round(self.bytes_disk / 2**20, 1),
            "build_seconds": self.build_seconds,
            "reused": self.reused,
        }

    def start_url(self, site: int) -> str:
        return list_url(site, 1)


def _pool_signature(datasets: Path) -> dict[str, int]:
    """Cheap identity of the page pool: files and bytes (no need to hash 64 MB)."""
    files = total = 0
    for d in Path(datasets).iterdir():
        if (d / "html").is_dir():
            for f in (d / "html").iterdir():
                files += 1
                total += f.stat().st_size
    return {"files": files, "bytes": total}


def build_archive(
    directory: Path,
    pages: int,
    *,
    sites: int = 1,
    per_page: int = 100,
    datasets: Path = DATASETS,
    rebuild: bool = False,
    log: bool = True,
) -> Archive:
    """Write (or reuse) the archive of ``pages`` article pages over ``sites`` sites: the ten-copies
    layout (page ``n`` is copy ``n`` of pool page ``n % len(pool)`` on site ``n % sites``)."""
    key = {
        "version": ARCHIVE_VERSION,
        "pages": pages,
        "sites": sites,
        "per_page": per_page,
        "pool": _pool_signature(datasets),
    }
    found = reuse_archive(directory, key, rebuild=rebuild)
    if found is not None:
        return found
    pool = page_pool(datasets)

    def page(n: int) -> ArchivePage:
        return ArchivePage(
            n % sites, article_url(n, sites), lambda: variant(pool[n % len(pool)].body, n)
        )

    return write_archive(
        directory, key, [page(n) for n in range(pages)], sites, per_page, len(pool), log=log
    )


@dataclass(frozen=True, slots=True)
class ArchivePage:
    """One article page of an archive: its site, its URL and its bytes (made when written)."""

    site: int
    url: str
    body: Callable[[], bytes]


def reuse_archive(directory: Path, key: dict[str, Any], *, rebuild: bool = False) -> Archive | None:
    """The archive already written under ``directory`` for ``key`` (its manifest says so)."""
    directory = Path(directory)
    manifest = directory / MANIFEST
    if rebuild or not manifest.is_file():
        return None
    found = json.loads(manifest.read_text())
    if found.get("key") != key or not all((directory / f).is_file() for f in found["files"]):
        return None
    return Archive(
        directory,
        found["pages"],
        found["sites"],
        found["per_page"],
        found["files"],
        found["bytes_raw"],
        found["bytes_disk"],
        found["build_seconds"],
        True,
        found["pool_pages"],
    )


def write_archive(
    directory: Path,
    key: dict[str, Any],
    pages: list[ArchivePage],
    sites: int,
    per_page: int,
    pool_pages: int,
    *,
    log: bool = True,
) -> Archive:
    """Write ``pages`` (each site's in list order) as one WARC file per site, with each
    site's chain of list pages, and the manifest that lets :func:`reuse_archive` find it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / MANIFEST
    manifest.unlink(missing_ok=True)
    started = time.perf_counter()
    files = [f"bench{s}.warc.gz" for s in range(sites)]
    handles = [open(directory / (f + ".part"), "wb") for f in files]
    raw = 0
    try:
        per_site: list[list[str]] = [[] for _ in range(sites)]  # article URLs of the open list
        list_no = [1] * sites
        remaining = [0] * sites
        for p in pages:
            remaining[p.site] += 1
        for n, p in enumerate(pages):
            s = p.site
            body = p.body()
            raw += len(body)
            handles[s].write(_gzip_member(_record(p.url, body, "text/html")))
            per_site[s].append(p.url)
            remaining[s] -= 1
            if len(per_site[s]) == per_page or remaining[s] == 0:
                last = remaining[s] == 0
                page = _list_page(s, list_no[s], per_site[s], last)
                ctype = "text/html; charset=utf-8"
                handles[s].write(_gzip_member(_record(list_url(s, list_no[s]), page, ctype)))
                per_site[s] = []
                list_no[s] += 1
            if log and n and n % 10_000 == 0:
                print(f"  archive: {n} pages written", file=sys.stderr)
        for s in range(sites):  # a site without pages still gets its (empty) start page
            if list_no[s] == 1:
                page = _list_page(s, 1, [], True)
                handles[s].write(_gzip_member(_record(list_url(s, 1), page, "text/html")))
    finally:
        for h in handles:
            h.close()
    disk = 0
    for f in files:
        (directory / (f + ".part")).replace(directory / f)
        disk += (directory / f).stat().st_size
    archive = Archive(
        directory,
        len(pages),
        sites,
        per_page,
        files,
        raw,
        disk,
        round(time.perf_counter() - started, 1),
        False,
        pool_pages,
    )
    body = {k: v for k, v in asdict(archive).items() if k not in ("directory", "reused")}
    manifest.write_text(json.dumps({"key": key, **body}, indent=1))
    return archive


# --------------------------------------------------------------------------
# Running a crawl in a child process


def run_child(config: dict[str, Any], work: Path, timeout: float | None = None) -> dict[str, Any]:
    """Run one measured crawl in a fresh interpreter; return its result JSON."""
    work.mkdir(parents=True, exist_ok=True)
    tag = config["tag"]
    cfg_path = work / f"{tag}.config.json"
    result_path = work / f"{tag}.result.json"
    log_path = work / f"{tag}.log"
    result_path.unlink(missing_ok=True)
    cfg_path.write_text(json.dumps({**config, "result": str(result_path)}, indent=1))
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "newsspider.settings", "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    with open(log_path, "w") as log:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "child", str(cfg_path)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    if proc.returncode != 0 or not result_path.is_file():
        tail = log_path.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"crawl {tag} failed (exit {proc.returncode}), log {log_path}:\n{tail}")
    result = json.loads(result_path.read_text())
    result["log"] = str(log_path)
    return result


def crawl_config(
    tag: str,
    archive: Archive,
    mode: str,
    *,
    database: Path | None,
    concurrency: int = 16,
    every: int = 0,
    settings: dict[str, Any] | None = None,
    profile: bool = False,
    tracemalloc_frames: int = 0,
    stages: bool = False,
) -> dict[str, Any]:
    """The child's configuration for one crawl of ``archive``."""
    if mode not in ("full", "bare"):
        raise ValueError(mode)
    if database is not None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{database}{suffix}").unlink(missing_ok=True)
    return {
        "tag": tag,
        "mode": mode,
        "sites": archive.sites,
        "archives": [str(archive.path(s)) for s in range(archive.sites)],
        "database": str(database) if database else None,
        "concurrency": concurrency,
        "every": every,
        "settings": settings or {},
        "profile": profile,
        "tracemalloc": tracemalloc_frames,
        "stages": stages,
    }


def _rss_kb(pid: int | str = "self") -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def _peak_rss_kb() -> int:
    """This process's peak RSS since its ``exec`` (``VmHWM``): ``ru_maxrss`` is not reset by
    ``exec`` and would report the benchmark parent's peak at ``fork`` (building the mix's
    archive takes hundreds of MB) when that is higher than the crawl's own."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(p) for p in f.read().split())
    return out


def _descendants(pid: int) -> list[int]:
    todo, seen = _children(pid), []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(_children(p))
    return seen


def machine() -> dict[str, Any]:
    """nproc, CPU model, RAM: the figures depend on them."""
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "ram_gib": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
    }


class Probe:
    """Counts pages across every crawler of the process and takes the checkpoints."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        self.every = int(cfg.get("every") or 0)
        self.pages = 0
        self.next_mark = self.every or 0
        self.t0: float | None = None
        self.t_end: float | None = None
        self.open_spiders = 0
        self.crawlers: list[Any] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.stats: dict[str, Any] = {}
        self.cpu0 = 0.0
        self.trace_first = None

    def connect(self, crawler: Any) -> None:
        from scrapy import signals

        self.crawlers.append(crawler)
        for handler, signal in (
            (self.page, signals.item_scraped),
            (self.page, signals.item_dropped),
            (self.page, signals.item_error),
            (self.opened, signals.spider_opened),
            (self.closed, signals.spider_closed),
        ):
            crawler.signals.connect(handler, signal=signal)

    def opened(self, spider: Any = None) -> None:
        if self.t0 is None:
            self.t0 = time.perf_counter()
            self.cpu0 = _cpu_seconds()
        self.open_spiders += 1

    def closed(self, spider: Any = None, reason: str = "") -> None:
        self.open_spiders -= 1
        crawler = spider.crawler
        for k, v in crawler.stats.get_stats().items():
            if isinstance(v, int | float) and not isinstance(v, bool):
                self.stats[k] = self.stats.get(k, 0) + v
        self.stats.setdefault("finish_reasons", []).append(reason)
        if self.open_spiders == 0:
            self.t_end = time.perf_counter()
            self.checkpoint(final=True)

    def page(self, *args: Any, **kwargs: Any) -> None:
        self.pages += 1
        if self.every and self.pages >= self.next_mark:
            self.next_mark += self.every
            self.checkpoint()

    def checkpoint(self, final: bool = False) -> None:
        now = time.perf_counter()
        point: dict[str, Any] = {
            "pages": self.pages,
            "seconds": round(now - (self.t0 or now), 2),
            "cpu_seconds": round(_cpu_seconds() - self.cpu0, 2),
            "rss_mib": round(_rss_kb() / 1024, 1),
            "peak_rss_mib": round(_peak_rss_kb() / 1024, 1),
            "children_rss_mib": round(sum(_rss_kb(p) for p in _descendants(os.getpid())) / 1024, 1),
            "final": final,
        }
        queued = seen = 0
        for crawler in self.crawlers:
            scheduler = getattr(getattr(crawler, "engine", None), "scheduler", None)
            if scheduler is not None:
                with contextlib.suppress(Exception):
                    queued += len(scheduler)
                df = getattr(scheduler, "df", None)
                seen += len(getattr(df, "_fingerprints", ()))  # RFPDupeFilter's set
        point["scheduler_queue"] = queued
        point["dupefilter_fingerprints"] = seen
        point["gc_objects"] = len(gc.get_objects())
        point["thread_cpu_seconds"] = _thread_cpu()
        database = self.cfg.get("database")
        if database and self.cfg["mode"] == "full":
            point.update(_db_figures(database))
        if self.cfg.get("tracemalloc"):
            point["tracemalloc_top"] = self._trace()
        self.checkpoints.append(point)
        print(f"checkpoint {json.dumps(point)}", file=sys.stderr, flush=True)

    def _trace(self) -> list[str]:
        import tracemalloc

        snap = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        if self.trace_first is None:
            self.trace_first = snap
            return [str(s) for s in snap.statistics("lineno")[:8]]
        return [str(s) for s in snap.compare_to(self.trace_first, "lineno")[:8]]


def _thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of the process, by Python thread name."""
    import threading

    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), f"tid-{tid}")
        name = re.sub(r"_\d+$", "", name)  # pool threads: one entry per pool
        out[name] = round(out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick, 2)
    return out


def _cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _db_figures(database: str) -> dict[str, Any]:
    """Line-table rows per site, articles and file size, read through a second connection."""
    import sqlite3

    size = sum(
        Path(f"{database}{s}").stat().st_size
        for s in ("", "-wal")
        if Path(f"{database}{s}").is_file()
    )
    out: dict[str, Any] = {"db_mib": round(size / 2**20, 1)}
    try:
        con = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
        try:
            out["line_rows"] = dict(
                con.execute("SELECT site, count(*) FROM line_counts GROUP BY site ORDER BY site")
            )
            out["line_rc"] = dict(con.execute("SELECT site, rc FROM site_line_stats ORDER BY site"))
            out["articles"] = con.execute("SELECT count(*) FROM articles").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error as exc:  # tables not created yet
        out["db_error"] = str(exc)
    return out


def child_main(cfg_path: Path) -> None:
    """The crawl process: one spider per bench site in one ``CrawlerProcess``."""
    cfg = json.loads(Path(cfg_path).read_text())
    if cfg.get("tracemalloc"):
        import tracemalloc

        tracemalloc.start(int(cfg["tracemalloc"]))
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    from newsspider.spiders.news import spider_class

    base = get_project_settings()
    n = int(cfg["concurrency"])
    overrides: dict[str, Any] = {
        "DOWNLOAD_DELAY": 0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": n,
        "CONCURRENT_REQUESTS_PER_DOMAIN": n,
        "DEPTH_LIMIT": 0,
        "LOG_LEVEL": "INFO",
        "PROGRESS_LOG_INTERVAL": 30.0,
        "INCREMENTAL": False,
    }
    if cfg["mode"] == "bare":
        overrides["ITEM_PIPELINES"] = {}
        # the crawl process's garbage-collector threshold, which the extraction pipeline
        # sets in a full crawl: the bare crawl's fetching is then measured alike
        from newsspider.pipelines.extract import raise_gc_threshold

        raise_gc_threshold(base.getint("CRAWL_GC_THRESHOLD"))
    else:
        overrides["DATABASE_URL"] = f"sqlite:///{cfg['database']}"
    overrides.update(cfg.get("settings") or {})
    base.setdict(overrides, priority="cmdline")
    process = CrawlerProcess(base)
    probe = Probe(cfg)
    if cfg.get("stages"):
        import newsspider.workers

        newsspider.workers.STAGE_CPU = {}
        _charge_garbage_collection()
    for s, archive in enumerate(cfg["archives"]):
        site = register_bench_site(s)
        crawler = process.create_crawler(spider_class(site, module=__name__))
        crawler.settings.set("REPLAY_ARCHIVE", archive, priority="cmdline")  # not frozen yet
        probe.connect(crawler)
        process.crawl(crawler, start_urls=list_url(s, 1))
    profiler = None
    thread_profiles: list[Any] = []
    if cfg.get("profile"):
        import cProfile

        profiler = cProfile.Profile(time.thread_time)  # CPU, not wall: waits do not count
        thread_profiles = _profile_writer_threads()
        profiler.enable()
    process.start()
    if profiler is not None:
        profiler.disable()
    elapsed = (probe.t_end or time.perf_counter()) - (probe.t0 or time.perf_counter())
    result = {
        "tag": cfg["tag"],
        "mode": cfg["mode"],
        "sites": cfg["sites"],
        "concurrency": n,
        "settings": cfg.get("settings") or {},
        "pages": probe.pages,
        "seconds": round(elapsed, 2),
        "pages_per_s": round(probe.pages / elapsed, 1) if elapsed > 0 else None,
        "cpu_seconds": probe.checkpoints[-1]["cpu_seconds"] if probe.checkpoints else None,
        "children_cpu_seconds": round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            + resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime,
            2,
        ),
        "peak_rss_mib": round(_peak_rss_kb() / 1024, 1),
        "checkpoints": probe.checkpoints,
        "stats": {k: v for k, v in probe.stats.items() if _interesting(k)},
        "exit_ok": not process.bootstrap_failed,
    }
    if cfg.get("stages"):
        import newsspider.workers

        stages = newsspider.workers.STAGE_CPU or {}
        result["stage_cpu_seconds"] = {k: round(v, 2) for k, v in sorted(stages.items())}
    if profiler is not None:
        import pstats

        out = io.StringIO()
        for title, profiles in (
            ("reactor thread", [profiler]),
            ("writer threads", thread_profiles),
        ):
            if not profiles:
                continue
            stats = pstats.Stats(profiles[0], stream=out)
            for more in profiles[1:]:
                stats.add(more)
            out.write(f"==== {title}, CPU seconds (time.thread_time)\n")
            stats.sort_stats(cfg.get("profile_sort", "tottime")).print_stats(60)
            stats.dump_stats(Path(cfg["result"]).with_suffix(f".{title.split()[0]}.prof"))
        profile_path = Path(cfg["result"]).with_suffix(".profile.txt")
        profile_path.write_text(out.getvalue())
        result["profile"] = str(profile_path)
    Path(cfg["result"]).write_text(json.dumps(result, indent=1, default=str))


def _charge_garbage_collection() -> None:
    """Charge the cyclic garbage collector's passes to a stage of their own (taken out of
    the stage they interrupt), through ``gc.callbacks``."""
    import threading

    from newsspider.workers import stage_cpu

    local = threading.local()

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            local.stage = stage_cpu("garbage collection")
            local.stage.__enter__()
        elif getattr(local, "stage", None) is not None:
            local.stage.__exit__(None, None, None)
            local.stage = None

    gc.callbacks.append(callback)


def _profile_writer_threads() -> list[Any]:
    """Profile the corpus pipeline's writer threads (CPU time, one profiler per thread):
    ``CorpusPipeline._write_batch`` and ``_sync_search`` run under it. Returns the list the
    profilers are added to."""
    import cProfile
    import threading

    from newsspider.pipelines.corpus import CorpusPipeline

    profiles: list[Any] = []
    local = threading.local()

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            profile = getattr(local, "profile", None)
            if profile is None:
                profile = local.profile = cProfile.Profile(time.thread_time)
                profiles.append(profile)
            if getattr(local, "active", False):
                return method(*args, **kwargs)
            local.active = True
            profile.enable()
            try:
                return method(*args, **kwargs)
            finally:
                profile.disable()
                local.active = False

        return run

    CorpusPipeline._write_batch = wrap(CorpusPipeline._write_batch)  # type: ignore[method-assign]
    CorpusPipeline._sync_search = wrap(CorpusPipeline._sync_search)  # type: ignore[method-assign]
    return profiles


def _interesting(key: str) -> bool:
    return key.startswith(
        (
            "item_",
            "newsspider/articles_",
            "newsspider/duplicate_pages",
            "newsspider/no_time",
            "replay/",
            "downloader/response_count",
            "response_received_count",
            "finish_reasons",
            "log_count/ERROR",
            "scheduler/enqueued",
        )
    )


def pages_per_window(checkpoints: list[dict[str, Any]]) -> Iterator[tuple[int, int, float]]:
    """``(from_pages, to_pages, pages/s)`` between consecutive checkpoints."""
    prev_pages, prev_t = 0, 0.0
    for c in checkpoints:
        if c["pages"] > prev_pages and c["seconds"] > prev_t:
            yield prev_pages, c["pages"], (c["pages"] - prev_pages) / (c["seconds"] - prev_t)
        prev_pages, prev_t = c["pages"], c["seconds"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    child = sub.add_parser("child", help="run one crawl (used by the benchmarks)")
    child.add_argument("config", type=Path)
    build = sub.add_parser("build", help="only build an archive")
    build.add_argument("directory", type=Path)
    build.add_argument("--pages", type=int, default=5000)
    build.add_argument("--sites", type=int, default=1)
    build.add_argument("--per-page", type=int, default=100)
    args = parser.parse_args(argv)
    if args.command == "child":
        child_main(args.config)
    else:
        a = build_archive(args.directory, args.pages, sites=args.sites, per_page=args.per_page)
        print(json.dumps({k: str(v) for k, v in asdict(a).items()}, indent=1))


def add_archive_arguments(parser: argparse.ArgumentParser, *, pages: int, sites: int) -> None:
    """The archive and crawl options every crawl benchmark shares (its own defaults for size)."""
    parser.add_argument("--pages", type=int, default=pages, help="article pages (%(default)s)")
    parser.add_argument("--sites", type=int, default=sites, help="bench sites, one spider each")
    parser.add_argument("--per-page", type=int, default=100, help="links per list page")
    parser.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS")


def archive_for(args: argparse.Namespace) -> Archive:
    """The archive the options of :func:`add_archive_arguments` and
    :func:`add_output_arguments` name, built or reused under ``--work``."""
    return build_archive(
        Path(args.work) / f"archive-{args.pages}-{args.sites}",
        args.pages,
        sites=args.sites,
        per_page=args.per_page,
        datasets=Path(args.datasets),
    )


def register_bench_site(i: int) -> Any:
    """``bench<i>``'s ``Site`` row, entered in the site table as the real sites are (the
    pipeline reads a site's time zone from it); returned."""
    from newsspider.sites import SITES

    return SITES.setdefault(f"bench{i}", bench_site(i))


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every crawl benchmark shares: datasets, work folder, JSON report."""
    parser.add_argument("--datasets", default=str(DATASETS), help="the labelled datasets folder")
    parser.add_argument(
        "--work",
        default=str(Path(tempfile.gettempdir()) / "newsspider-bench"),
        help="archives, databases and logs (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")


def emit(
    args: argparse.Namespace,
    report: dict[str, Any],
    markdown: Callable[[dict[str, Any]], str],
) -> dict[str, Any]:
    """Print the report as markdown (and write it as JSON with ``--json``); return it."""
    text = markdown(report)
    report["markdown"] = text
    print(text)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str))
    return report


def setting(text: str) -> tuple[str, Any]:
    """``SETTING=VALUE`` -> (name, value); the value is read as JSON when it parses."""
    key, _, value = text.partition("=")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        return key.strip(), value


if __name__ == "__main__":
    main()
