"""The end of a stdio server's stderr, kept so that a server that dies can say why.

A server that crashes at start (an import error, a bad option) writes why on its
stderr and exits; the bench would only see its stdout close. :class:`StderrTail`
drains the pipe in a thread of its own and keeps the last ``limit`` bytes (8 KiB by
default; older bytes are dropped as new ones come, so a chatty server costs no more).

A thread, not a trio task: the blocking engine (:func:`~.loops.run_blocking`) holds
the event loop for a whole phase, and a server that logs per call would fill a pipe
nobody reads and stall. The thread ends at the pipe's end of file (the server and
every process that inherited its stderr gone); it is a daemon, so a grandchild that
keeps the pipe open never holds the bench up.
"""

from __future__ import annotations

import os
import threading

#: What is kept of a server's stderr: its last bytes.
DEFAULT_LIMIT = 8192


class StderrTail:
    """Drain ``fd`` (a pipe's read end, which this object now owns) into a bounded tail."""

    def __init__(self, fd: int, limit: int = DEFAULT_LIMIT) -> None:
        if limit < 1:
            raise ValueError(f"limit must be positive, not {limit}")
        self.limit = limit
        self._fd = fd
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="bench-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                with self._lock:
                    self._tail += chunk
                    del self._tail[: max(0, len(self._tail) - self.limit)]
        except OSError:
            pass
        finally:
            os.close(self._fd)
            self._done.set()

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for the pipe's end (everything the server
        wrote is here then); whether it came."""
        return self._done.wait(timeout)

    def text(self) -> str:
        """The kept bytes as text, stripped (invalid UTF-8 replaced)."""
        with self._lock:
            return self._tail.decode(errors="replace").strip()
