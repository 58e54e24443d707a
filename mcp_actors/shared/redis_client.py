"""Redis from Trio: redis-py's synchronous client, each command in a bounded thread.

``await redis.run(fn, *args)`` runs ``fn(client, *args)`` in a worker thread, at most
``threads`` at once (more wait their turn: the limiter is the bound); the client's
connection pool holds as many connections. A Trio cancellation abandons the thread
(the command still finishes or times out there: ``socket_timeout`` bounds it), so a
stuck Redis never blocks a shutdown.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import attrs
import redis
import trio

T = TypeVar("T")


@attrs.define(eq=False)
class RedisClient:
    """One Redis server, as Trio code calls it (see the module docstring)."""

    url: str
    threads: int = 16
    #: Seconds a command (or a connection attempt) may take before it fails.
    timeout: float = 5.0
    _client: redis.Redis = attrs.field(init=False)
    _limiter: trio.CapacityLimiter = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        pool = redis.BlockingConnectionPool.from_url(
            self.url,
            max_connections=self.threads + 2,  # + the pub/sub listener's
            timeout=self.timeout,
            socket_timeout=self.timeout,
            socket_connect_timeout=self.timeout,
        )
        self._client = redis.Redis(connection_pool=pool)
        self._limiter = trio.CapacityLimiter(self.threads)

    @property
    def client(self) -> redis.Redis:
        """The synchronous client: for code already running in a thread."""
        return self._client

    async def run(self, command: Callable[..., T], *args: Any) -> T:
        """``command(client, *args)`` in a thread; its result, or its exception."""
        call = partial(command, self._client, *args)
        return await trio.to_thread.run_sync(call, limiter=self._limiter, abandon_on_cancel=True)

    async def ping(self) -> bool:
        """Whether Redis answers now (False on any connection error)."""
        try:
            return bool(await self.run(redis.Redis.ping))
        except redis.RedisError:
            return False

    def close(self) -> None:
        """Close every connection of the pool, in use or idle: a pool handed to
        ``redis.Redis`` is not closed by the client's own ``close``, and a thread
        abandoned on cancellation may still hold one (its command then fails there)."""
        self._client.close()
        self._client.connection_pool.disconnect()
