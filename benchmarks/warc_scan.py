"""Reading WARC files: FastWARC against warcio, and ``scrapy backfill --warc`` end to end.

    python benchmarks/warc_scan.py [--records 10000] [--repeat 3] [--no-backfill]
                                   [--datasets DIR] [--work DIR] [--json out.json]

Builds (or reuses, under ``--work``) a CC-NEWS-like file of ``--records`` WARC records: a
``warcinfo``, then captures as Common Crawl writes them (``request``, ``response``,
``metadata``), gzip per record (zlib level 6), a month of ``WARC-Date``s. The pages are
every saved page of the labelled datasets, in two languages, each copy made unique
(``crawl_archive.variant``): a quarter of the captures are article pages of the site
table's sites under their real URL shapes (NetEase, Sina, Guancha, iFeng, Tencent, Xinhua,
China Daily, BBC Chinese: the datasets' real URLs with a copy number in their id), the rest
pages of sites outside the table (English and Chinese) under their real URLs; besides
them non-article pages of table sites, non-HTML answers and 404s. Three files:

* ``mixed.warc.gz``: the acceptance file, with ``--corrupt`` records whose gzip member
  holds garbage and a tail cut inside the last record;
* ``clean.warc.gz``: the same records without the damage (warcio stops at the first
  corrupt record, so it is measured here);
* ``clean.warc``: the same, uncompressed.

Then, in this process (one core), each reading timed ``--repeat`` times, the readers
taking turns, the best kept:

* **read**: every record iterated and every response's body read, FastWARC (its own
  iterator on the file, and through :func:`~newsspider.backfill.warcscan.warc_responses`,
  the project's reader) against warcio, on ``.warc.gz`` and ``.warc``;
* **scan**: the backfill's filter (:class:`~newsspider.backfill.warcscan.WarcScan`: the
  table's article pages, 200, HTML, bodies decoded) with FastWARC on ``mixed.warc.gz``, and
  the same filter code fed by warcio's iterator on ``clean.warc.gz``;
* **one record** from bytes (``newsspider/backfill/records.py``'s case, a ``Range`` fetch
  of one gzip member): warcio against FastWARC, microseconds per record;
* **backfill**: ``scrapy backfill --warc mixed.warc.gz`` into a fresh SQLite database in a
  child process with the project's settings (extraction workers, line table, reprints,
  storage): records/s over the crawl's ``elapsed_time_seconds``, the articles stored, and
  whether the stored URLs are exactly the article records the file holds undamaged
  (``expected-urls.json``, written with the files), each once.

Records/s count every WARC record; MB/s are bytes of the file as stored (compressed).
``uptime`` is printed before and after: on a shared machine the figures move with load.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crawl_archive import REPO, add_output_arguments, emit, machine, variant

#: Bumped whenever the files' layout changes, so stale files are rebuilt.
VERSION = 2
MONTH = datetime(2024, 3, 1, tzinfo=UTC)
GZIP_LEVEL = 6
#: The share of captures that are article pages of the table's sites.
TABLE_SHARE = 0.25
_DIGITS = re.compile(r"\d{4,}")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


# --------------------------------------------------------------------------
# The files


def _cases(datasets: Path) -> list[tuple[str | None, bytes]]:
    """(URL or None, bytes) of every saved page of every dataset."""
    out = []
    for d in sorted(p for p in datasets.iterdir() if (p / "cases.jsonl").is_file()):
        for line in (d / "cases.jsonl").read_text("utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                out.append((case.get("url"), (d / case["html_file"]).read_bytes()))
    if not out:
        raise SystemExit(f"no dataset pages under {datasets}")
    return out


def _copy_url(url: str, n: int) -> str:
    """``url`` with copy number ``n`` in the last run of 4+ digits (same length)."""
    runs = list(_DIGITS.finditer(url))
    if not runs:
        return url
    m = runs[-1]
    digits = str(n).zfill(len(m.group()))[-len(m.group()) :]
    return url[: m.start()] + digits + url[m.end() :]


def _gz(data: bytes) -> bytes:
    c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    return c.compress(data) + c.flush()


def _warc_record(kind: str, url: str, when: datetime, block: bytes, ctype: str) -> bytes:
    head = (
        f"WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\n"
        f"WARC-Date: {when.strftime('%Y-%m-%dT%H:%M:%SZ')}\r\n"
        f"WARC-Record-ID: <urn:uuid:{random.getrandbits(128):032x}>\r\n"
        f"Content-Type: {ctype}\r\nContent-Length: {len(block)}\r\n\r\n"
    ).encode()
    return head + block + b"\r\n\r\n"


def _capture(url: str, when: datetime, body: bytes, ctype: str, status: int) -> list[bytes]:
    """request, response, metadata: three uncompressed records."""
    host = url.split("/")[2]
    request = f"GET / HTTP/1.1\r\nHost: {host}\r\nUser-Agent: CCBot/2.0\r\n\r\n".encode()
    reason = {200: "OK", 404: "Not Found"}.get(status, "OK")
    response = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
        f"Content-Length: {len(body)}\r\nServer: nginx\r\n\r\n"
    ).encode() + body
    meta = f"fetchTimeMs: {random.randint(50, 900)}\r\n".encode()
    return [
        _warc_record("request", url, when, request, "application/http; msgtype=request"),
        _warc_record("response", url, when, response, "application/http; msgtype=response"),
        _warc_record("metadata", url, when, meta, "application/warc-fields"),
    ]


def build_files(work: Path, records: int, corrupt: int, datasets: Path) -> dict[str, Any]:
    """Write (or reuse) the three files; return their description."""
    from newsspider.sites import site_for_url

    work.mkdir(parents=True, exist_ok=True)
    key = {"version": VERSION, "records": records, "corrupt": corrupt, "datasets": str(datasets)}
    manifest = work / "warc-scan.json"
    if manifest.is_file():
        found = json.loads(manifest.read_text())
        if found.get("key") == key and all((work / f).is_file() for f in found["files"]):
            return found
    rng = random.Random(7)
    random.seed(7)
    pages = _cases(datasets)
    table = [(u, b) for u, b in pages if u and (s := site_for_url(u)) and s.is_article(u)]
    others = [(u, b) for u, b in pages if not (u and site_for_url(u))]
    when = MONTH
    step = timedelta(days=30) / max(1, records // 3)
    seen: set[str] = set()
    captures: list[list[bytes]] = []
    articles: dict[int, str] = {}  # capture index -> the table's article URL it holds
    count = Counter()
    n = 0
    total = 1
    while total + 3 <= records:
        n += 1
        when += step
        roll = rng.random()
        if roll < TABLE_SHARE:
            url, body = table[n % len(table)]
            copy = _copy_url(url, n)
            site = site_for_url(copy)
            if copy in seen or site is None or not site.is_article(site.canonical_url(copy)):
                copy = url if url not in seen else None
            if copy is None:
                continue
            seen.add(copy)
            kind = rng.random()
            if kind < 0.02:
                captures.append(_capture(copy, when, b"\x89PNG\r\n\x1a\n" + bytes(2000),
                                         "image/png", 200))  # fmt: skip
                count["table_not_html"] += 1
            elif kind < 0.04:
                captures.append(_capture(copy, when, b"<html>Not Found</html>", "text/html", 404))
                count["table_404"] += 1
            else:
                captures.append(_capture(copy, when, variant(body, n), "text/html", 200))
                count["table_article"] += 1
                articles[len(captures) - 1] = copy
        elif roll < TABLE_SHARE + 0.01:
            url, body = table[n % len(table)]
            section = "/".join(url.split("/")[:3]) + f"/section{n}/"
            captures.append(_capture(section, when, variant(body, n), "text/html", 200))
            count["table_not_article"] += 1
        else:
            url, body = others[n % len(others)]
            if url is None:
                url = f"https://news{n % 97}.example.net/2024/03/story-{n}.html"
            else:
                url = url.split("#")[0] + ("&" if "?" in url else "?") + f"cc={n}"
            captures.append(_capture(url, when, variant(body, n), "text/html; charset=utf-8", 200))
            count["other_site"] += 1
        total += 3
    info = _warc_record("warcinfo", "", MONTH, b"software: newsspider benchmark\r\n",
                        "application/warc-fields")  # fmt: skip
    members = [_gz(info)] + [_gz(r) for cap in captures for r in cap]
    plain = [info] + [r for cap in captures for r in cap]
    (work / "clean.warc.gz").write_bytes(b"".join(members))
    (work / "clean.warc").write_bytes(b"".join(plain))
    # The damage: garbage inside `corrupt` response members, then a tail cut in two.
    spoiled = list(members)
    responses = [i for i in range(2, len(members) - 3, 3)]
    damaged = rng.sample(responses, corrupt)
    for i in damaged:
        m = spoiled[i]
        spoiled[i] = m[:40] + os.urandom(min(400, len(m) - 60)) + m[40 + min(400, len(m) - 60) :]
    spoiled[-2] = spoiled[-2][: len(spoiled[-2]) // 2]  # the last response, cut
    spoiled = spoiled[:-1]  # its metadata never written
    (work / "mixed.warc.gz").write_bytes(b"".join(spoiled))
    # What a backfill of mixed.warc.gz must store: every article capture but the damaged.
    lost = {(i - 2) // 3 for i in damaged} | {len(captures) - 1}
    expected = sorted(url for k, url in articles.items() if k not in lost)
    (work / "expected-urls.json").write_text(json.dumps(expected))
    found = {
        "key": key,
        "files": ["mixed.warc.gz", "clean.warc.gz", "clean.warc", "expected-urls.json"],
        "records": len(plain),
        "mixed_records": len(spoiled),
        "captures": dict(count),
        "html_mb": round(sum(len(r) for r in plain) / 1e6, 1),
        "sizes_mb": {
            f: round((work / f).stat().st_size / 1e6, 1)
            for f in ("mixed.warc.gz", "clean.warc.gz", "clean.warc")
        },
    }
    manifest.write_text(json.dumps(found, indent=1))
    return found


# --------------------------------------------------------------------------
# Readers


def read_fastwarc(path: Path) -> int:
    from fastwarc import ArchiveIterator, WarcRecordType

    n = 0
    for record in ArchiveIterator(str(path), parse_http=True):
        n += 1
        if record.record_type == WarcRecordType.response:
            record.reader.read()
    return n


def read_project(path: Path) -> int:
    from newsspider.backfill.warcscan import Tape, warc_responses

    counts: Counter[str] = Counter()
    with open(path, "rb") as fh:
        for _ in warc_responses(Tape(fh), counts):
            pass
    return counts["records"]


def read_warcio(path: Path) -> int:
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    with open(path, "rb") as fh:
        for record in ArchiveIterator(fh):
            n += 1
            if record.rec_type == "response":
                record.raw_stream.read()
    return n


def scan_fastwarc(path: Path) -> tuple[int, int]:
    from newsspider.backfill.warcscan import WarcScan

    scan = WarcScan()
    kept = sum(1 for _ in scan.scan([str(path)]))
    return scan.counts["records"], kept


def scan_warcio(path: Path) -> tuple[int, int]:
    """The same filter (WarcScan's own methods), fed by warcio's iterator."""
    from warcio.archiveiterator import ArchiveIterator

    from newsspider.backfill.warcscan import WarcResponse, WarcScan

    scan = WarcScan()
    records = kept = 0
    with open(path, "rb") as fh:
        for record in ArchiveIterator(fh):
            records += 1
            if record.rec_type != "response":
                continue
            url = record.rec_headers.get_header("WARC-Target-URI") or ""
            tag = scan._want(url, record.rec_headers.get_header("WARC-Date") or "")
            if tag is None:
                continue
            http = record.http_headers
            body = record.raw_stream.read()
            fields = tuple(
                (k.encode("latin-1", "replace"), v.encode("latin-1", "replace"))
                for k, v in http.headers
            )
            status = int(http.get_statuscode() or 0)
            response = WarcResponse(url, "", status, fields, body, False, tag)
            kept += scan._page(response, path.name) is not None
    return records, kept


def one_record(path: Path, n: int = 300) -> dict[str, float]:
    """µs per record read from one gzip member's bytes, warcio (records.py) and FastWARC."""
    from fastwarc import ArchiveIterator, WarcRecordType

    from newsspider.backfill.records import read_record

    members = []
    data = path.read_bytes()
    at = 0
    while at < len(data) and len(members) < 3 * n:
        d = zlib.decompressobj(31)
        d.decompress(data[at:])
        end = len(data) - len(d.unused_data)
        members.append(data[at:end])
        at = end
    responses = [m for i, m in enumerate(members) if i % 3 == 2][:n]

    def warcio_one() -> None:
        for m in responses:
            read_record(m)

    def fastwarc_one() -> None:
        for m in responses:
            for record in ArchiveIterator(io.BytesIO(m), record_types=WarcRecordType.response):
                record.reader.read()
                break

    return {
        "warcio_us": round(best(warcio_one, 3)[0] * 1e6 / len(responses), 1),
        "fastwarc_us": round(best(fastwarc_one, 3)[0] * 1e6 / len(responses), 1),
    }


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Fastest of ``repeat`` runs: seconds, and what the run returned."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def backfill(path: Path, work: Path) -> dict[str, Any]:
    """``scrapy backfill --warc`` into a fresh database, in a child process."""
    db = work / "warc-backfill.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "scrapy.cmdline", "backfill", "--warc", str(path),
         "-s", f"DATABASE_URL=sqlite:///{db}", "-s", "LOG_LEVEL=INFO"],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    log = done.stderr
    (work / "warc-backfill.log").write_text(log)

    def stat(name: str) -> float:
        m = re.search(rf"'{re.escape(name)}': ([\d.]+)", log)
        return float(m.group(1)) if m else 0.0

    elapsed = stat("elapsed_time_seconds")
    records = int(stat("newsspider/warc/records"))
    expected = set(json.loads((work / "expected-urls.json").read_text()))
    with sqlite3.connect(db) as conn:
        urls = [u for (u,) in conn.execute("SELECT url FROM articles")]
    lines = [ln.split("INFO: ", 1)[-1] for ln in log.splitlines() if "WARC scan:" in ln]
    scan_line = lines[0] if lines else ""
    return {
        "exit_status": done.returncode,
        "wall_seconds": round(wall, 1),
        "elapsed_seconds": round(elapsed, 1),
        "records": records,
        "kept": int(stat("newsspider/warc/kept")),
        "stored": int(stat("newsspider/articles_new")),
        "expected": len(expected),
        "exact": sorted(urls) == sorted(expected),
        "corrupt": int(stat("newsspider/warc/corrupt")),
        "truncated": int(stat("newsspider/warc/truncated")),
        "records_per_s": round(records / elapsed, 1) if elapsed else None,
        "stored_per_s": round(stat("newsspider/articles_new") / elapsed, 1) if elapsed else None,
        "scan_line": scan_line,
    }


# --------------------------------------------------------------------------
# The report


def _rate(records: int, mb: float, seconds: float) -> dict[str, float]:
    return {
        "seconds": round(seconds, 3),
        "records_per_s": round(records / seconds),
        "mb_per_s": round(mb / seconds, 1),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work)
    load_before = uptime()
    files = build_files(work, args.records, args.corrupt, Path(args.datasets))
    mixed, clean, plain = (work / f for f in files["files"][:3])
    mb = {p.name: p.stat().st_size / 1e6 for p in (mixed, clean, plain)}
    # Each round runs every reader once; the best round of each is kept (the readers take
    # turns, so a burst of load elsewhere does not fall on one of them only).
    readers = [
        (f"{path.name} {name}", fn, path)
        for path in (clean, plain)
        for name, fn in (("fastwarc", read_fastwarc), ("project", read_project),
                         ("warcio", read_warcio))
    ]  # fmt: skip
    scans = [
        ("fastwarc mixed.warc.gz", scan_fastwarc, mixed),
        ("fastwarc clean.warc.gz", scan_fastwarc, clean),
        ("warcio clean.warc.gz", scan_warcio, clean),
    ]
    times: dict[str, float] = {}
    results: dict[str, Any] = {}
    for _ in range(args.repeat):
        for label, fn, path in readers + scans:
            t0 = time.perf_counter()
            results[label] = fn(path)
            times[label] = min(times.get(label, 1e9), time.perf_counter() - t0)
    read: dict[str, Any] = {}
    for label, _, path in readers:
        records = results[label]
        read[label] = {"records": records, **_rate(records, mb[path.name], times[label])}
    scan: dict[str, Any] = {}
    for label, _, path in scans:
        records, kept = results[label]
        scan[label] = {
            "records": records,
            "kept": kept,
            **_rate(records, mb[path.name], times[label]),
        }
    report: dict[str, Any] = {
        "benchmark": "warc_scan",
        "machine": machine(),
        "files": files,
        "read": read,
        "scan": scan,
        "one_record": one_record(clean),
    }
    if not args.no_backfill:
        report["backfill"] = backfill(mixed, work)
    report["load_before"] = load_before
    report["load_after"] = uptime()
    return report


def markdown(r: dict[str, Any]) -> str:
    m, f = r["machine"], r["files"]
    lines = [
        f"Machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']}.",
        f"Load before: {r['load_before']}",
        f"Load after:  {r['load_after']}",
        "",
        f"Files: {f['records']:,} records ({f['html_mb']} MB uncompressed), captures "
        f"{f['captures']}; sizes {f['sizes_mb']} MB; mixed.warc.gz has "
        f"{f['mixed_records']:,} records, some corrupt, its tail cut.",
        "",
        "| read (every record, every response body) | records | s | records/s | MB/s |",
        "|---|---|---|---|---|",
    ]
    for name, x in r["read"].items():
        lines.append(
            f"| {name} | {x['records']:,} | {x['seconds']} | {x['records_per_s']:,} | "
            f"{x['mb_per_s']} |"
        )
    lines += ["", "| scan (the backfill's filter) | records | kept | s | records/s | MB/s |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for name, x in r["scan"].items():
        lines.append(
            f"| {name} | {x['records']:,} | {x['kept']:,} | {x['seconds']} | "
            f"{x['records_per_s']:,} | {x['mb_per_s']} |"
        )
    o = r["one_record"]
    lines += ["", f"One record from a gzip member's bytes: warcio {o['warcio_us']} µs, "
              f"FastWARC {o['fastwarc_us']} µs."]  # fmt: skip
    if "backfill" in r:
        b = r["backfill"]
        lines += [
            "",
            f"`scrapy backfill --warc mixed.warc.gz` (exit {b['exit_status']}): "
            f"{b['records']:,} records, {b['kept']:,} kept, {b['stored']:,} stored "
            f"(the {b['expected']:,} article records expected, each once: "
            f"{'yes' if b['exact'] else 'NO'}), "
            f"corrupt {b['corrupt']}, truncated {b['truncated']}, in {b['elapsed_seconds']} s "
            f"({b['wall_seconds']} s with start-up): {b['records_per_s']} records/s, "
            f"{b['stored_per_s']} articles stored/s.",
            f"Its line: {b['scan_line']}",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=10_000, help="WARC records (%(default)s)")
    parser.add_argument("--corrupt", type=int, default=12, help="corrupt records (%(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each reading, best kept")
    parser.add_argument("--no-backfill", action="store_true", help="skip the end-to-end run")
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    return emit(args, run(args), markdown)


if __name__ == "__main__":
    main()
