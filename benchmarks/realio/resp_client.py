"""A small keep-alive Redis client on Trio, for tools that send Redis a command on every call.

coredis (what ``mcp_actors.shared`` uses for the runtime's own shared state) hands each
command between three tasks: the caller queues it, a writer task packs and sends it, a
reader task parses the reply and wakes the caller, each step through anyio's layers. Under
the benchmark's load that costs the calling process about 100 µs per command alone, and
about 150 µs in the whole server (the tasks' turns come in later passes of the run loop);
stubbing the one ``ZREVRANGE`` of ``search_products`` out raised that tool's sessions/s
by a third. This client does what a tool's command needs in the caller's task (see
:mod:`.kept_connections`): the command is packed into RESP's array of bulk strings
(serialization: :func:`pack`), written on a pooled connection, and the reply parsed by
hiredis (Redis's own C parser) — about 38 µs per command under the same load
(``python -m benchmarks.realio.client_cost``).

Bounds: those of :class:`~.kept_connections.KeptConnections` (``max_connections``,
``timeout`` per command, a pooled connection Redis closed replaced once), each failure
a :class:`RedisError`; and a reply over ``max_reply`` bytes fails the command. An error
reply (``-ERR ...``) raises :class:`RedisError` with Redis's message; the connection
stays pooled (the reply was read whole).

RESP2, as a connection speaks it until told ``HELLO 3``: arrays are lists, bulk strings
``bytes``, integers ``int``, nil None.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import attrs
import hiredis
import trio

from .kept_connections import KeptConnections, Unanswered, nothing, opened, receive

T = TypeVar("T")

#: What a command's arguments may be: sent as their bytes (text in UTF-8, numbers in
#: decimal).
Argument = bytes | str | int | float


class RedisError(Exception):
    """Redis answered an error, could not be reached, or timed out."""


def pack(command: tuple[Argument, ...]) -> bytes:
    """``command`` as RESP sends it: an array of bulk strings."""
    parts = [b"*%d\r\n" % len(command)]
    for argument in command:
        data = argument if isinstance(argument, bytes) else str(argument).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


@attrs.define(eq=False)
class RespClient:
    """Keep-alive Redis commands to one ``host:port`` (see the module docstring)."""

    host: str
    port: int
    max_connections: int = attrs.field(default=16, validator=attrs.validators.ge(1))
    timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))
    max_reply: int = attrs.field(default=1 << 20, validator=attrs.validators.ge(1))
    _connections: KeptConnections[Any] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._connections = KeptConnections(
            self.host,
            self.port,
            "Redis",
            RedisError,
            self._read,
            max_connections=self.max_connections,
            timeout=self.timeout,
        )

    @property
    def idle_connections(self) -> int:
        """Connections open and waiting in the pool."""
        return self._connections.idle

    async def call(self, *command: Argument) -> Any:
        """Send ``command`` (``"ZREVRANGE", key, 0, 9``, say); Redis's reply."""
        reply, _ = await self.call_alongside(command, nothing)
        return reply

    async def call_alongside(
        self, command: tuple[Argument, ...], meanwhile: Callable[[], Awaitable[T]]
    ) -> tuple[Any, T]:
        """``command``'s reply, and what ``meanwhile()`` returned: the command is written,
        ``meanwhile`` awaited in this task while Redis works on it, then the reply read."""
        reply, other = await self._connections.call(pack(command), meanwhile)
        if isinstance(reply, hiredis.ReplyError):
            raise RedisError(str(reply))
        return reply, other

    async def _read(self, stream: trio.SocketStream) -> tuple[Any, bool]:
        """One reply on ``stream`` (an error reply is returned, not raised: it was read
        whole, so the connection may serve the next command)."""
        reader = hiredis.Reader()
        received = 0
        while True:
            try:
                data = await receive(stream)
            except OSError as error:
                if received:
                    raise RedisError(f"the Redis connection broke mid-reply: {error}") from error
                raise Unanswered(f"the Redis connection broke: {error}") from error
            if not data:
                if received:
                    raise RedisError("Redis closed the connection mid-reply")
                raise Unanswered("Redis closed the connection before replying")
            received += len(data)
            if received > self.max_reply:
                raise RedisError(f"Redis's reply is over {self.max_reply} bytes")
            reader.feed(data)
            try:
                reply = reader.gets()
            except hiredis.ProtocolError as error:
                raise RedisError(f"Redis's reply is not RESP: {error}") from error
            if reply is not False:
                return reply, True

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._connections.aclose()


def open_resp(
    host: str, port: int, *, max_connections: int = 16, timeout: float = 10.0
) -> AbstractAsyncContextManager[RespClient]:
    """A :class:`RespClient` for the duration of the block (its connections closed after)."""
    return opened(RespClient(host, port, max_connections=max_connections, timeout=timeout))
