"""A throwaway PostgreSQL server for the storage tests (a pytest plugin module).

Session-scoped: ``initdb`` into a fresh temporary directory, ``pg_ctl start -w`` on
127.0.0.1 and a free port, one database ``newsspider``, ``pg_ctl stop -m immediate`` at the
end. Tests skip cleanly when no server binaries (``/usr/lib/postgresql/*/bin``, Debian's
``postgresql`` package) or no psycopg are installed. ``NEWSSPIDER_TEST_POSTGRES_URL`` points
the tests at an existing server instead (e.g. a CI service container).

initdb refuses to run as root, so as root the server runs as the ``postgres`` user via
``runuser``; the data directory is created with ``tempfile`` (not pytest's ``tmp_path``,
whose parents are private to root) and handed to that user.

Fixtures: ``postgresql_server`` (a :class:`PgServer`) and ``postgresql_url`` (the SQLAlchemy
URL ``postgresql+psycopg://postgres@127.0.0.1:PORT/newsspider``).
"""

from __future__ import annotations

import logging
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

logger = logging.getLogger(__name__)

DATABASE = "newsspider"
USER = "postgres"
ENV_URL = "NEWSSPIDER_TEST_POSTGRES_URL"


@dataclass(frozen=True, slots=True)
class PgServer:
    """Where the test server listens; ``url(db)`` gives a SQLAlchemy URL for a database."""

    host: str
    port: int
    bindir: Path
    datadir: Path

    def url(self, database: str = DATABASE) -> str:
        return f"postgresql+psycopg://{USER}@{self.host}:{self.port}/{database}"


def find_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb``, if any."""

    def version(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", p.parent.name)) or (0,)

    candidates = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").is_file()]
    return max(candidates, key=version) if candidates else None


def free_port() -> int:
    """A port the kernel just handed out on 127.0.0.1 (bind to 0, read it, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user() -> list[str]:
    """Command prefix that runs the server binaries as a non-root user."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(USER)
    except KeyError:
        pytest.skip(f"running as root and no {USER!r} user to run PostgreSQL as")
    if shutil.which("runuser") is None:
        pytest.skip("running as root and no runuser to drop to the postgres user")
    return ["runuser", "-u", USER, "--"]


def _run(cmd: list[str], cwd: Path, what: str, log: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
        pytest.fail(f"{what} failed ({proc.returncode}): {proc.stdout}{proc.stderr}{tail}")


@pytest.fixture(scope="session")
def postgresql_server() -> Iterator[PgServer]:
    """Start a private PostgreSQL for the test session and remove it afterwards."""
    pytest.importorskip("psycopg", reason="psycopg (psycopg[binary]) is not installed")
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin")
    prefix = _as_server_user()
    base = Path(tempfile.mkdtemp(prefix="newsspider-pg-"))
    base.chmod(0o755)
    datadir, logfile = base / "data", base / "server.log"
    if prefix:
        shutil.chown(base, user=USER)
    started = False
    try:
        _run(
            [*prefix, str(bindir / "initdb"), "-D", str(datadir), "-U", USER, "-A", "trust",
             "-E", "UTF8", "--locale=C", "--no-sync"],
            base, "initdb",
        )  # fmt: skip
        port = free_port()
        # fsync off: the data is thrown away, and durability costs seconds per test run.
        options = f"-h 127.0.0.1 -p {port} -k {base} -c fsync=off -c full_page_writes=off"
        _run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(datadir), "-l", str(logfile),
             "-o", options, "-w", "-t", "60", "start"],
            base, "pg_ctl start", logfile,
        )  # fmt: skip
        started = True
        server = PgServer("127.0.0.1", port, bindir, datadir)
        import psycopg
        from psycopg import sql

        with psycopg.connect(
            host=server.host, port=port, user=USER, dbname="postgres", autocommit=True
        ) as conn:
            # DDL takes no bind parameters; quote the name as an identifier instead.
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
        logger.info("test PostgreSQL on port %s in %s", port, base)
        yield server
    finally:
        if started:
            subprocess.run(
                [*prefix, str(bindir / "pg_ctl"), "-D", str(datadir), "-m", "immediate",
                 "-w", "stop"],
                cwd=base, capture_output=True, timeout=60, check=False,
            )  # fmt: skip
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgresql_url(request: pytest.FixtureRequest) -> str:
    """SQLAlchemy URL of an empty ``newsspider`` database (or ``$NEWSSPIDER_TEST_POSTGRES_URL``)."""
    from_env = os.environ.get(ENV_URL)
    if from_env:
        pytest.importorskip("psycopg", reason="psycopg (psycopg[binary]) is not installed")
        return from_env
    server: PgServer = request.getfixturevalue("postgresql_server")
    return server.url()
