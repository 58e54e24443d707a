"""The stdio wire: the bench launches the server and talks to it over its pipes.

:class:`StdioWire` reads whole chunks (many responses per read) and writes many
requests per write, raw newline-delimited JSON; it knows the server's pid for
``/proc`` readings, and keeps the end of its stderr (:mod:`.stderr_tail`) so that a
server that dies says why. :func:`stdio_connector` launches one server per session.
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import subprocess
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import trio

from .stderr_tail import StderrTail
from .wire import READ_SIZE, BenchError, Connector, Wire, WireClosed, cut_short


class StdioWire(Wire):
    """A server child process: raw pipes, chunked reads, no per-message framing objects."""

    buffered_writes = True

    pid: int

    def __init__(self, process: trio.Process, stderr: StderrTail | None = None) -> None:
        assert isinstance(process.stdin, trio.lowlevel.FdStream)
        assert isinstance(process.stdout, trio.lowlevel.FdStream)
        self.process = process
        self.pid = process.pid
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._partial: list[bytes] = []
        self._stderr = stderr

    async def explain(self, reason: str) -> str:
        """``reason``, with the server's exit status and the end of its stderr: waits a
        moment (2 s at most) for the process to exit and its stderr to end."""
        with trio.move_on_after(2):
            await self.process.wait()
        if self._stderr is not None:
            await trio.to_thread.run_sync(self._stderr.wait, 1.0)
        code = self.process.returncode
        status = "is still running" if code is None else f"exited with status {code}"
        said = self._stderr.text() if self._stderr is not None else ""
        ending = f"; its stderr ends:\n{said}" if said else ""
        return f"{reason}: the server {status}{ending}"

    def fds(self) -> tuple[int, int]:
        """The raw (read, write) pipe fds, non-blocking, for the blocking engine."""
        return self._stdout.fileno(), self._stdin.fileno()

    def take_partial(self) -> list[bytes]:
        partial = list(self._partial)
        self._partial.clear()
        return partial

    def put_back_partial(self, data: bytes) -> None:
        self._partial.insert(0, data)

    async def send(self, data: bytes) -> None:
        try:
            await self._stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            raise WireClosed(f"the server closed its stdin ({error})") from None

    async def send_stamped(self, data: bytes) -> float:
        """Write ``data`` with one ``write(2)`` of the pipe, the clock read just before it.

        The trio stream's ``send_all`` passes through the scheduler before it writes
        (a checkpoint: every ready task of the harness may run first), which is the
        harness's time, not the server's; here nothing runs between the clock and the
        write (cancellation is still checked). What the pipe cannot take at once is
        sent the usual way.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        sent = time.monotonic()
        try:
            written = os.write(self._stdin.fileno(), data)
        except BlockingIOError:
            written = 0
        except OSError as error:
            raise WireClosed(f"the server closed its stdin ({error})") from None
        if written < len(data):
            await self.send(data[written:])
        return sent

    async def receive(self) -> list[bytes]:
        partial = self._partial
        while True:
            try:
                chunk = bytes(await self._stdout.receive_some(READ_SIZE))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                chunk = b""
            if not chunk:
                raise WireClosed("the server closed its stdout")
            if b"\n" not in chunk:
                partial.append(chunk)
                continue
            if partial:
                partial.append(chunk)
                chunk = b"".join(partial)
                partial.clear()
            lines = chunk.split(b"\n")
            rest = lines.pop()
            if rest:
                partial.append(rest)
            return lines

    async def aclose(self, grace: float = 2.0) -> None:
        """Shut the server down as the stdio transport says: EOF, then SIGTERM, then
        SIGKILL, ``grace`` seconds apart (0: a session cut by a deadline goes at once)."""
        with trio.CancelScope(shield=True):
            with contextlib.suppress(trio.BrokenResourceError, OSError):
                await self._stdin.aclose()
            process = self.process
            for action in (None, process.terminate, process.kill):
                if process.returncode is not None:
                    break
                if action is not None:
                    action()
                with trio.move_on_after(grace if action is not process.kill else math.inf):
                    await process.wait()  # (after SIGKILL: until it is gone)
            with contextlib.suppress(OSError):
                await self._stdout.aclose()


def stdio_connector(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    quiet: bool = True,
) -> Connector:
    """Each call launches ``command`` and yields a :class:`StdioWire` to it."""
    if not command:
        raise BenchError("stdio: needs a command")
    process_env = None if env is None else {**os.environ, **env}

    @asynccontextmanager
    async def connect() -> AsyncIterator[Wire]:
        # quiet: the server's stderr is kept (its end) to say why it died, else it is ours
        read_end, write_end = os.pipe() if quiet else (-1, None)
        try:
            process = await trio.lowlevel.open_process(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=write_end,
                env=process_env,
                cwd=cwd,
                start_new_session=True,  # a Ctrl-C on the bench is not the server's
            )
        except OSError as error:
            if write_end is not None:
                os.close(read_end)
            raise BenchError(f"cannot start {shlex.join(command)}: {error}") from None
        finally:
            if write_end is not None:
                os.close(write_end)
        wire = StdioWire(process, StderrTail(read_end) if write_end is not None else None)
        try:
            yield wire
        except BaseException as error:
            await wire.aclose(grace=0.0 if cut_short(error) else 2.0)
            raise
        else:
            await wire.aclose()

    return connect
