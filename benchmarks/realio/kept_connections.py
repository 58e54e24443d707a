"""Keep-alive connections to one backend, for a tool that calls it on every call.

What the tools' two clients (:mod:`.api_client` for the product API, :mod:`.resp_client`
for Redis) have in common: a call writes its request on a pooled connection, may await
other work meanwhile in the same task (the other backend: both at work at once, with no
second task and no nursery), then reads the answer on that connection, in the caller's
task — no reader task, no writer task, nothing handed between tasks. A call passes
through Trio's scheduler only where it waits: taking a free connection, writing a
request the socket takes whole, and reading an answer already there are done at once
(:func:`send`, :func:`receive`; a Trio stream's ``send_all`` and ``receive_some`` would
each add a pass, about half the scheduler's work on the benchmark's load).

Bounds, and what happens at each:

- at most ``max_connections`` connections are open: a call beyond them waits for one
  to come back to the pool (within its ``timeout``);
- every call (waiting for a connection, connecting, writing, the work meanwhile, reading)
  has ``timeout`` seconds, else the client's error; a call cancelled or failed mid-way
  closes its connection instead of pooling it (the next caller would read a stale
  answer);
- a pooled connection the backend closed while idle is noticed on the write or on the
  read: the call is sent again, once, on a fresh connection when nothing of the answer
  was read.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Final, Generic, Protocol, TypeVar

import attrs
import trio

T = TypeVar("T")
R = TypeVar("R")


class _Closable(Protocol):
    async def aclose(self) -> None: ...


C = TypeVar("C", bound=_Closable)
_READ: Final = 65536


async def send(stream: trio.SocketStream, data: bytes) -> None:
    """Write ``data`` whole on ``stream``'s socket, waiting only while it takes no more;
    ``OSError`` if the connection is broken (or closed)."""
    sock, view = stream.socket, memoryview(data)
    while view:
        try:
            view = view[os.write(sock.fileno(), view) :]
        except BlockingIOError:
            await trio.lowlevel.wait_writable(sock)


async def receive(stream: trio.SocketStream) -> bytes:
    """The next bytes on ``stream``'s socket (``b""``: the peer closed it), read at once
    if they are there; ``OSError`` if the connection is broken (or closed)."""
    sock = stream.socket
    while True:
        try:
            return os.read(sock.fileno(), _READ)
        except BlockingIOError:
            await trio.lowlevel.wait_readable(sock)


class Unanswered(Exception):
    """Raised by a reader: the connection ended before any byte of the answer came (on a
    pooled connection: the backend had closed it while idle)."""


async def nothing() -> None:
    """What a call made alone does meanwhile."""


#: Reads one answer on a connection: the answer, and whether the connection may be
#: pooled for the next call.
Reader = Callable[[trio.SocketStream], Awaitable[tuple[R, bool]]]


@attrs.define(eq=False)
class KeptConnections(Generic[R]):
    """Pooled keep-alive connections to ``host:port``, read by ``read`` (see the module
    docstring). Failures raise ``error``, its message naming ``backend`` (``"Redis"``)."""

    host: str
    port: int
    backend: str
    error: type[Exception]
    read: Reader[R]
    max_connections: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))
    _idle: list[trio.SocketStream] = attrs.field(init=False, factory=list)
    _slots: trio.Semaphore = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._slots = trio.Semaphore(self.max_connections)

    @property
    def idle(self) -> int:
        """Connections open and waiting in the pool."""
        return len(self._idle)

    async def call(self, request: bytes, meanwhile: Callable[[], Awaitable[T]]) -> tuple[R, T]:
        """Write ``request``, await ``meanwhile()``, read the answer; the answer and what
        ``meanwhile`` returned. If ``meanwhile`` fails or is cancelled, the connection is
        closed (its answer is never read) and the error raised."""
        with trio.move_on_after(self.timeout):
            try:
                self._slots.acquire_nowait()
            except trio.WouldBlock:
                await self._slots.acquire()
            try:
                pooled = bool(self._idle)
                stream = self._idle.pop() if pooled else await self._connect()
                sent = await self._send(stream, request)
                try:
                    other = await meanwhile()
                except BaseException:
                    await trio.aclose_forcefully(stream)
                    raise
                if sent:
                    try:
                        return await self._answer(stream), other
                    except Unanswered as unanswered:
                        if not pooled:
                            raise self.error(str(unanswered)) from None
                elif not pooled:
                    raise self._unsent()
                stream = await self._connect()  # the pooled one had been closed: once more
                if not await self._send(stream, request):
                    raise self._unsent()
                try:
                    return await self._answer(stream), other
                except Unanswered as unanswered:
                    raise self.error(str(unanswered)) from None
            finally:
                self._slots.release()
        raise self.error(f"{self.backend} call did not finish within {self.timeout}s")

    def _unsent(self) -> Exception:
        return self.error(f"{self.backend} connection broke before the request was sent")

    async def _connect(self) -> trio.SocketStream:
        try:
            return await trio.open_tcp_stream(self.host, self.port)
        except OSError as error:
            raise self.error(
                f"cannot connect to {self.backend} at {self.host}:{self.port}: {error}"
            ) from error

    @staticmethod
    async def _send(stream: trio.SocketStream, request: bytes) -> bool:
        """Write ``request``; False (``stream`` closed) if the connection is broken."""
        try:
            await send(stream, request)
        except OSError:
            await trio.aclose_forcefully(stream)
            return False
        return True

    async def _answer(self, stream: trio.SocketStream) -> R:
        """The answer on ``stream``; ``stream`` pooled after, or closed."""
        try:
            answer, keep = await self.read(stream)
        except BaseException:
            await trio.aclose_forcefully(stream)  # half-read: never reused
            raise
        if keep:
            self._idle.append(stream)
        else:
            await stream.aclose()
        return answer

    async def aclose(self) -> None:
        """Close the pooled connections."""
        idle, self._idle = self._idle, []
        for stream in idle:
            await stream.aclose()


@asynccontextmanager
async def opened(client: C) -> AsyncIterator[C]:
    """``client`` for the duration of the block; its connections closed after, even when
    the block is cancelled."""
    try:
        yield client
    finally:
        with trio.CancelScope(shield=True):
            await client.aclose()
