"""Starting and stopping the benchmark's processes on loopback: Redis, the API, the servers.

Every process is started by :func:`started` (a context manager: it is stopped on the
way out, SIGTERM then SIGKILL after ``stop_timeout`` seconds, its whole process group),
binds 127.0.0.1 only, and is waited for until its port accepts connections (at most
``start_timeout`` seconds, else :class:`StartFailed` with the end of its output).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

import attrs

from .references import Launch

ROOT: Final = Path(__file__).resolve().parents[2]


class StartFailed(Exception):
    """A process exited or did not listen in time."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


@attrs.frozen
class Running:
    """A started process: its pid (the root of its tree) and port."""

    pid: int
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _tail(log: IO[bytes]) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-2000:]


@contextlib.contextmanager
def started(
    launch: Launch, port: int, *, start_timeout: float = 60.0, stop_timeout: float = 10.0
) -> Iterator[Running]:
    """Run ``launch`` until the block ends; it must listen on ``port`` (module docstring)."""
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            launch.argv,
            cwd=launch.cwd,
            env=launch.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + start_timeout
            while not _accepts(port):
                if process.poll() is not None:
                    raise StartFailed(
                        f"{launch.argv[0]} exited ({process.returncode}):\n{_tail(log)}"
                    )
                if time.monotonic() > deadline:
                    raise StartFailed(
                        f"{launch.argv[0]} did not listen in {start_timeout}s:\n{_tail(log)}"
                    )
                time.sleep(0.05)
            yield Running(process.pid, port)
        finally:
            _stop(process, stop_timeout)


def _stop(process: subprocess.Popen[bytes], timeout: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    with contextlib.suppress(ProcessLookupError):  # stragglers of the group (cluster workers)
        os.killpg(process.pid, signal.SIGKILL)


def _python(module: str, *arguments: str) -> Launch:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return Launch([sys.executable, "-m", module, *arguments], ROOT, env)


def redis(port: int) -> Launch:
    """A private Redis (Debian's ``redis-server``), nothing saved to disk."""
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    argv += ["--appendonly", "no", "--protected-mode", "yes"]
    return Launch(argv, Path(tempfile.gettempdir()), dict(os.environ))


def api_service(port: int) -> Launch:
    """Our product API (:mod:`.api_service`)."""
    return _python("benchmarks.realio.api_service", "--port", str(port))


def ours(port: int, redis_url: str, api_url: str, *, workers: int = 2) -> Launch:
    """Our server (:mod:`.server`) with ``workers`` workers."""
    arguments = ["--port", str(port), "--workers", str(workers)]
    arguments += ["--redis-url", redis_url, "--api-url", api_url]
    return _python("benchmarks.realio.server", *arguments)
