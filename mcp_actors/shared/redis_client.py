"""Redis from Trio, natively: a coredis client whose commands are awaited in the caller's task.

coredis runs on Trio (through anyio): a command is written on a pooled connection
and its reply awaited in the calling task — no thread per command, and a Trio
cancellation cancels the command where it waits (its connection is then dropped
from the pool rather than reused half-read). :func:`open_redis` opens the client for
the duration of a block (coredis keeps its connections' reader tasks in a nursery
of its own, so the client has a lifetime like any other actor):

- ``max_connections`` bounds the pool: a command beyond it waits for a connection
  (at most ``timeout`` seconds, then fails);
- ``timeout`` bounds connecting and every reply.

Errors are :class:`coredis.exceptions.RedisError` (connection refused, timeouts,
``WATCH`` conflicts, …): :data:`RedisError` names it for callers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import coredis
from coredis.exceptions import RedisError

__all__ = ["RedisClient", "RedisError", "as_bytes", "as_text", "open_redis"]


@attrs.frozen
class RedisClient:
    """One Redis deployment, as Trio code calls it: :attr:`client` is the coredis
    client (``await redis.client.get(key)``)."""

    url: str
    client: coredis.Redis[bytes]

    async def ping(self) -> bool:
        """Whether Redis answers now (False on any connection error or timeout)."""
        try:
            await self.client.ping()
        except RedisError:
            return False
        return True


@asynccontextmanager
async def open_redis(
    url: str, *, max_connections: int = 16, timeout: float = 5.0
) -> AsyncIterator[RedisClient]:
    """A client of the Redis at ``url`` for the duration of the block (see the module
    docstring). Connections open on first use: :meth:`RedisClient.ping` tells whether
    Redis answers."""
    client: coredis.Redis[bytes] = coredis.Redis.from_url(
        url,
        decode_responses=False,
        max_connections=max_connections,
        pool_timeout=timeout,
        connect_timeout=timeout,
        stream_timeout=timeout,
    )
    async with client:
        yield RedisClient(url, client)


def as_text(value: str | bytes) -> str:
    """A reply's string (coredis types a reply as either, by the client's decoding)."""
    return value.decode() if isinstance(value, bytes) else value


def as_bytes(value: str | bytes) -> bytes:
    """A reply's bytes (the clients here never decode, but the type says either)."""
    return value if isinstance(value, bytes) else value.encode()
