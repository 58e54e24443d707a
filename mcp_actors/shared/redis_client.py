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

The URL says what to reach (its forms: :mod:`.redis_urls`): one server
(``coredis.Redis``), a Redis Cluster (``coredis.RedisCluster``: commands go to the
node owning their key's hash slot; ``max_connections`` is then per node), or the
primary a set of Sentinels names (``coredis.Sentinel``: the client asks them for the
primary, and again after a failover). Code using :attr:`RedisClient.client` is the
same for all three, with one rule for a Cluster: the keys of one ``MULTI`` or one
multi-key command must share a hash slot — put the part they share in braces
(``{...}``), as :mod:`.bus` needs not (one key) and the event and task stores do.

Errors are :class:`coredis.exceptions.RedisError` (connection refused, timeouts,
``WATCH`` conflicts, …): :data:`RedisError` names it for callers.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs
import coredis
import trio
from coredis.connection import TCPLocation
from coredis.exceptions import RedisError

from .redis_urls import ClusterNodes, SentinelService, parse_redis_url

__all__ = ["RedisClient", "RedisError", "as_bytes", "as_text", "open_redis"]


#: A client of one server, of the Sentinel-managed primary, or of a Cluster.
AnyRedis = coredis.Redis[bytes] | coredis.RedisCluster[bytes]


@attrs.frozen
class RedisClient:
    """One Redis deployment, as Trio code calls it: :attr:`client` is the coredis
    client (``await redis.client.get(key)``)."""

    url: str
    client: AnyRedis

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
    """A client of the Redis deployment at ``url`` for the duration of the block (see
    the module docstring; raises :class:`~.redis_urls.RedisUrlError` for a URL of no
    known form). Connections open on first use: :meth:`RedisClient.ping` tells whether
    Redis answers.

    The client outlives whatever uses it in the block: coredis runs each connection in
    tasks of its own, which are held here in a task shielded from cancellation from
    outside and stopped when the block is over — so that an actor cancelled with the
    rest of the server can still write its last word (a task's final state), shielded,
    rather than find its connection gone with it."""
    parse_redis_url(url)  # a bad URL fails here, plainly
    async with trio.open_nursery() as nursery:
        client, holder = await nursery.start(_hold, url, max_connections, timeout)
        try:
            yield RedisClient(url, client)
        finally:
            holder.cancel()


async def _hold(
    url: str,
    max_connections: int,
    timeout: float,
    *,
    task_status: trio.TaskStatus[tuple[AnyRedis, trio.CancelScope]],
) -> None:
    """Keep a client open until the scope it hands over is cancelled (see open_redis)."""
    with trio.CancelScope(shield=True) as holder:
        async with _connected(url, max_connections, timeout) as client:
            task_status.started((client, holder))
            await trio.sleep_forever()


@asynccontextmanager
async def _connected(url: str, max_connections: int, timeout: float) -> AsyncIterator[AnyRedis]:
    """The coredis client of ``url``'s kind, open for the block."""
    target = parse_redis_url(url)
    if isinstance(target, ClusterNodes):
        cluster: coredis.RedisCluster[bytes] = coredis.RedisCluster(
            startup_nodes=[TCPLocation(host, port) for host, port in target.nodes],
            username=target.credentials.username,
            password=target.credentials.password,
            ssl=target.tls,
            decode_responses=False,
            max_connections=max_connections,
            max_connections_per_node=True,
            pool_timeout=timeout,
            connect_timeout=timeout,
            stream_timeout=timeout,
        )
        async with cluster:
            yield cluster
    elif isinstance(target, SentinelService):
        async with _sentinel_primary(target, max_connections, timeout) as primary:
            yield primary
    else:
        client: coredis.Redis[bytes] = coredis.Redis.from_url(
            url,
            decode_responses=False,
            max_connections=max_connections,
            pool_timeout=timeout,
            connect_timeout=timeout,
            stream_timeout=timeout,
        )
        async with client:
            yield client


@asynccontextmanager
async def _sentinel_primary(
    target: SentinelService, max_connections: int, timeout: float
) -> AsyncIterator[coredis.Redis[bytes]]:
    """The primary ``target``'s Sentinels name (asked again after a failover)."""
    sentinels: coredis.Sentinel[bytes] = coredis.Sentinel(
        [TCPLocation(host, port) for host, port in target.sentinels],
        sentinel_kwargs={"connect_timeout": timeout, "stream_timeout": timeout},
        decode_responses=False,
    )
    async with sentinels:
        primary = sentinels.primary_for(
            target.service,
            db=target.db,
            username=target.credentials.username,
            password=target.credentials.password,
            ssl_context=ssl.create_default_context() if target.tls else None,
            max_connections=max_connections,
            connect_timeout=timeout,
            stream_timeout=timeout,
            timeout=timeout,  # the pool's wait for a connection
        )
        async with primary:
            yield primary


def as_text(value: str | bytes) -> str:
    """A reply's string (coredis types a reply as either, by the client's decoding)."""
    return value.decode() if isinstance(value, bytes) else value


def as_bytes(value: str | bytes) -> bytes:
    """A reply's bytes (the clients here never decode, but the type says either)."""
    return value if isinstance(value, bytes) else value.encode()
