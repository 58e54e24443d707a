"""The stdio transport: newline-delimited JSON-RPC over a byte stream pair.

The server side reads its own stdin and writes its own stdout with trio's
non-blocking I/O (no thread per read), and keeps stdout for MCP messages alone:
:func:`open_stdio_server_stream` points ``sys.stdout`` at stderr, so a stray
``print`` in user code cannot corrupt the stream.

The client side launches the server as a child process and, when done, shuts it
down as the lifecycle page says: close its stdin, wait; SIGTERM, wait; SIGKILL.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from subprocess import PIPE
from typing import Any

import trio

from ..protocol.framing import DEFAULT_MAX_MESSAGE_SIZE, LineFramer, Oversized
from .abc import MessageStream, MessageTooLarge, Outgoing, TransportClosed

_READ_SIZE = 65536
#: Reads in a row that found data at once before one yields to the scheduler anyway.
_EAGER_READS = 4


class StdioStream(MessageStream):
    """Newline-delimited messages over a trio receive stream and send stream.

    Over pipes (:class:`trio.lowlevel.FdStream`) it reads and writes the fd itself
    first and lets trio wait only when the fd would block: ``FdStream`` adds a
    schedule point to every call, which costs a pass of the scheduler per message
    in a request/response exchange. Cancellation is still checked at every call,
    and after :data:`_EAGER_READS` reads in a row that did not wait, a read yields
    to the scheduler, so a flood of input cannot starve the session's other tasks.
    """

    direct_writes = True
    #: Closing stdin is how a client says it has nothing more to ask; stdout stays open.
    answers_after_input_ends = True

    def __init__(
        self,
        receive_stream: trio.abc.ReceiveStream,
        send_stream: trio.abc.SendStream,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self._receive_stream = receive_stream
        self._send_stream = send_stream
        self._framer = LineFramer(max_message_size)
        self._closed = False
        self._eager_reads = 0
        self._read_fd = (
            receive_stream if isinstance(receive_stream, trio.lowlevel.FdStream) else None
        )
        self._write_fd = send_stream if isinstance(send_stream, trio.lowlevel.FdStream) else None

    async def receive(self) -> bytes:
        framer = self._framer
        while True:
            message = framer.next_message()
            if message is not None:
                if isinstance(message, Oversized):
                    raise MessageTooLarge(message.size, message.limit)
                return message
            data: bytes | bytearray
            try:
                if self._read_fd is not None:
                    data = await self._read_pipe(self._read_fd)
                else:
                    data = await self._receive_stream.receive_some(_READ_SIZE)
            except (trio.ClosedResourceError, trio.BrokenResourceError, OSError):
                data = b""
            if not data:
                raise TransportClosed("end of input")
            framer.feed(data)

    def input_ready(self) -> bool:
        return self._framer.has_message()

    async def _read_pipe(self, stream: trio.lowlevel.FdStream) -> bytes:
        await trio.lowlevel.checkpoint_if_cancelled()
        self._eager_reads += 1
        if self._eager_reads > _EAGER_READS:
            self._eager_reads = 0
            await trio.lowlevel.cancel_shielded_checkpoint()
        while True:
            try:
                return os.read(stream.fileno(), _READ_SIZE)  # fileno() is -1 once closed
            except BlockingIOError:
                self._eager_reads = 0
                await trio.lowlevel.wait_readable(stream.fileno())

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        if len(messages) == 1:
            data = messages[0].payload + b"\n"
        else:
            data = b"\n".join([m.payload for m in messages]) + b"\n"
        try:
            stream = self._write_fd
            if stream is not None:
                await trio.lowlevel.checkpoint_if_cancelled()
                try:
                    written = os.write(stream.fileno(), data)
                except BlockingIOError:
                    written = 0
                if written == len(data):
                    return
                data = data[written:]
            await self._send_stream.send_all(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError, OSError) as error:
            raise TransportClosed(f"cannot write: {error}") from None

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for stream in (self._send_stream, self._receive_stream):
            with suppress(trio.BrokenResourceError, OSError):
                await stream.aclose()


class _RegularFileStream(trio.abc.Stream):
    """Stdin or stdout redirected to a regular file, which epoll cannot watch.

    Reads and writes of a regular file never wait on a peer, so plain calls are fine.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        return os.read(self._fd, max_bytes or _READ_SIZE)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.lowlevel.checkpoint()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()
        os.close(self._fd)


def _fd_stream(fd: int) -> trio.abc.Stream:
    own = os.dup(fd)
    if stat.S_ISREG(os.fstat(own).st_mode):
        return _RegularFileStream(own)
    return trio.lowlevel.FdStream(own)


def open_stdio_server_stream(*, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> StdioStream:
    """This process's stdin/stdout as a message stream; ``sys.stdout`` is sent to stderr."""
    stream = StdioStream(_fd_stream(0), _fd_stream(1), max_message_size=max_message_size)
    sys.stdout = sys.stderr
    return stream


@asynccontextmanager
async def open_stdio_process(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stderr: Any = None,
    shutdown_timeout: float = 2.0,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[StdioStream]:
    """Launch an MCP server process and yield a message stream over its stdin/stdout.

    On exit the server is shut down as the lifecycle page says: its stdin is
    closed, then after ``shutdown_timeout`` seconds SIGTERM, then SIGKILL.
    """
    process_env = None if env is None else {**os.environ, **env}
    process = await trio.lowlevel.open_process(
        [command, *args], stdin=PIPE, stdout=PIPE, stderr=stderr, env=process_env, cwd=cwd
    )
    assert process.stdin is not None and process.stdout is not None
    stream = StdioStream(process.stdout, process.stdin, max_message_size=max_message_size)
    try:
        yield stream
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()
            await _stop(process, shutdown_timeout)


async def _stop(process: trio.Process, grace: float) -> None:
    with trio.move_on_after(grace):
        await process.wait()
        return
    process.terminate()
    with trio.move_on_after(grace):
        await process.wait()
        return
    process.kill()
    await process.wait()
