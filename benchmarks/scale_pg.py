"""A PostgreSQL server for ``benchmarks/scale.py``: initdb with a UTF-8 ctype, tuned for a
24 GiB, 2-core machine, started on 127.0.0.1 and a free port (as ``tests/pgserver.py``
does: as root the binaries run as ``postgres`` through ``runuser``).

    python benchmarks/scale_pg.py start DIR     # prints the SQLAlchemy URL; the server keeps running
    python benchmarks/scale_pg.py stop DIR

``C.UTF-8`` (not ``C``): pg_trgm only takes trigrams of word characters, and under a ``C``
ctype the CJK characters are not alphanumeric (``storage/fts.py``).
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

USER = "postgres"
DATABASE = "newsspider"
#: Server settings for a 24 GiB, 2-core machine that other work shares: a sixth of the
#: memory as shared buffers, the OS cache counted in effective_cache_size, enough
#: maintenance memory for a trigram GIN build, and a WAL large enough that a bulk load
#: does not checkpoint every few seconds. JIT off: it costs short queries tens of ms.
SETTINGS = {
    "shared_buffers": "4GB",
    "effective_cache_size": "12GB",
    "work_mem": "32MB",
    "maintenance_work_mem": "2GB",
    "max_wal_size": "16GB",
    "checkpoint_timeout": "30min",
    "random_page_cost": "1.1",
    "effective_io_concurrency": "200",
    "max_parallel_workers_per_gather": "1",
    "max_parallel_maintenance_workers": "1",
    "default_toast_compression": "lz4",
    "jit": "off",
    "max_connections": "50",
    "log_connections": "on",  # benchmarks/scale.py counts the web view's connections
}


def bindir() -> Path:
    def version(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", p.parent.name)) or (0,)

    found = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").is_file()]
    if not found:
        sys.exit("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    return max(found, key=version)


def _prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    pwd.getpwnam(USER)
    return ["runuser", "-u", USER, "--"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def url_of(base: Path) -> str:
    port = (base / "port").read_text().strip()
    return f"postgresql+psycopg://{USER}@127.0.0.1:{port}/{DATABASE}"


def start(base: Path) -> str:
    """Start (creating it first if needed) the server whose files live under ``base``."""
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o755)
    prefix = _prefix()
    if prefix:
        shutil.chown(base, user=USER)
    data, log = base / "data", base / "server.log"
    fresh = not data.exists()
    if fresh:
        subprocess.run(
            [*prefix, str(bindir() / "initdb"), "-D", str(data), "-U", USER, "-A", "trust",
             "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
            check=True, capture_output=True,
        )  # fmt: skip
    port = free_port()
    (base / "port").write_text(str(port))
    opts = " ".join(f"-c {k}={v}" for k, v in SETTINGS.items())
    subprocess.run(
        [*prefix, str(bindir() / "pg_ctl"), "-D", str(data), "-l", str(log),
         "-o", f"-h 127.0.0.1 -p {port} -k {base} {opts}", "-w", "-t", "120", "start"],
        check=True, capture_output=True,
    )  # fmt: skip
    if fresh:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=port, user=USER, dbname="postgres",
                             autocommit=True) as conn:  # fmt: skip
            conn.execute(f"CREATE DATABASE {DATABASE}")
    return url_of(base)


def stop(base: Path, *, remove: bool = False) -> None:
    data = base / "data"
    if data.exists():
        subprocess.run(
            [*_prefix(), str(bindir() / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True, check=False, timeout=300,
        )  # fmt: skip
    if remove:
        shutil.rmtree(base, ignore_errors=True)


def server_pid(base: Path) -> int:
    return int((base / "data" / "postmaster.pid").read_text().split()[0])


def wait_ready(url: str, seconds: float = 60) -> None:
    import psycopg

    m = re.search(r"@([^:]+):(\d+)/(\w+)", url)
    assert m
    end = time.monotonic() + seconds
    while True:
        try:
            psycopg.connect(host=m[1], port=int(m[2]), user=USER, dbname=m[3]).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > end:
                raise
            time.sleep(0.5)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        sys.exit(__doc__)
    where = Path(sys.argv[2]).resolve()
    if sys.argv[1] == "start":
        print(start(where))  # noqa: T201
    else:
        stop(where)
