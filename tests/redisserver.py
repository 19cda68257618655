"""A throwaway Redis server for the cluster tests (a pytest plugin module, as pgserver.py).

Debian's ``redis-server`` on 127.0.0.1 and a free port, nothing saved (``--save ''
--appendonly no``) unless a test asks for the append-only file (the restart test: a
Redis restart keeps its data only with persistence, as a production set-up has it).
Tests skip only when the binary is absent (``apt-get install redis-server``).

Fixtures: ``redis_server`` (a session-wide :class:`RedisServer`) and ``redis_url`` (its
URL, the database emptied before each test). :class:`RedisServer` can also be started by
a test itself (``RedisServer.start(tmp, appendonly=True)``), stopped and restarted on the
same port.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BINARY = "/usr/bin/redis-server"


def free_port() -> int:
    """A port the kernel just handed out on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def binary() -> str:
    """The redis-server binary, or a skip when it is not installed."""
    found = BINARY if Path(BINARY).is_file() else shutil.which("redis-server")
    if not found:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return found


@dataclass
class RedisServer:
    """One redis-server process; :meth:`stop` and :meth:`restart` keep port and directory."""

    port: int
    directory: Path
    appendonly: bool = False
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @classmethod
    def start(cls, directory: Path, *, appendonly: bool = False) -> RedisServer:
        server = cls(free_port(), directory, appendonly)
        server._launch()
        return server

    def _launch(self) -> None:
        cmd = [
            binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            "--dir", str(self.directory), "--daemonize", "no", "--protected-mode", "no",
        ]  # fmt: skip
        if self.appendonly:
            cmd += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            cmd += ["--appendonly", "no"]
        log = open(self.directory / f"redis-{self.port}.log", "ab")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self, *, kill: bool = False) -> None:
        """SIGTERM (Redis writes its append-only file) or SIGKILL, and wait."""
        if self.proc is not None:
            if kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None

    def restart(self) -> None:
        self.stop()
        self._launch()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A Redis for the test session, removed afterwards."""
    binary()
    directory = Path(tempfile.mkdtemp(prefix="newsspider-redis-"))
    server = RedisServer.start(directory)
    try:
        yield server
    finally:
        server.stop(kill=True)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, its database emptied first."""
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=5) as s:
        s.sendall(b"FLUSHALL\r\n")
        assert s.recv(16).startswith(b"+OK")
    return redis_server.url
