"""The nightly run lock: one ``scrapy nightly`` per host at a time.

``flock`` on ``NIGHTLY_LOCK`` (``data/nightly.lock``), which then holds the PID. The
kernel drops a ``flock`` when its process dies, however it dies, so a stale lock cannot
exist; the file stays behind (deleting it would race with a starter that has it open)
and only says who held it last. A second start exits at once with a message naming the
holder and :data:`EXIT_LOCKED`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Self

from newsspider.outcome import EXIT_LOCKED

__all__ = ["EXIT_LOCKED", "LockHeld", "RunLock"]


class LockHeld(Exception):
    """Another process holds the nightly lock."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(f"another nightly run is in progress ({who} holds {path})")


class RunLock:
    """An exclusive, non-blocking ``flock`` on a file that records the holder's PID.

    Released by :meth:`release` or by the kernel when the process exits or is killed,
    so it never goes stale. Linux and the BSDs.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockHeld` at once (never waits)."""
        # Imported when the lock is taken, so the other commands still load on a system
        # without fcntl (Windows).
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise LockHeld(self.path, int(text) if text.isdigit() else None) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases the ``flock``)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
