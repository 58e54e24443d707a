"""Opening the shared state of one worker: a Redis client, the bus, the task store.

:func:`open_shared_state` connects (failing at once, with the URL, when Redis does
not answer), starts the bus's sender and listener, the task store's heartbeat and
the fleet reporter (:mod:`.fleet`: what ``mcp-actors status`` shows) as actors, and
stops them when the block ends. :func:`mcp_actors.server.serve_http.serve_http`
opens it for its server when given :class:`~.settings.SharedSettings` with a
``redis_url``.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import attrs
import trio

from ..transports.http.event_store import EventStore
from .bus import RedisBus
from .event_store import redis_event_stores
from .fleet import FleetReporter, Observed, server_counters
from .redis_client import RedisClient, open_redis
from .settings import SharedSettings, SharedStateUnavailable
from .task_store import RedisTaskStore


@attrs.frozen
class SharedState:
    """One worker's view of the state it shares with the others."""

    settings: SharedSettings
    #: This worker's name in Redis (host, pid and a random part: unique per process).
    worker: str
    redis: RedisClient
    bus: RedisBus
    task_store: RedisTaskStore

    def event_stores(self) -> Callable[[str], EventStore]:
        """An ``HttpConfig.event_store_factory`` keeping each session's events in Redis
        (held back until read with ``share_sessions``: the workers then ask each other
        for them, see :mod:`.event_store`)."""
        settings = self.settings
        return redis_event_stores(
            self.redis,
            settings.key_prefix,
            max_events=settings.event_stream_max,
            ttl=settings.event_ttl_seconds,
            hold_back=settings.share_sessions,
        )

    async def unhealthy(self) -> str | None:
        """Why this worker cannot serve now (None: it can): the health endpoint's question."""
        if await self.redis.ping():
            return None
        return "the shared Redis does not answer"


def worker_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


@asynccontextmanager
async def open_shared_state(
    settings: SharedSettings, *, max_tasks: int, observed: Observed | None = None
) -> AsyncIterator[SharedState]:
    """The shared state of this worker for the duration of the block (see the module
    docstring). ``max_tasks``: unfinished tasks this worker may run at once;
    ``observed``: the server whose counters the fleet report carries (None: the bus's
    only)."""
    if settings.redis_url is None:
        raise ValueError("shared state needs a redis_url")
    answered = False
    async with open_redis(
        settings.redis_url,
        max_connections=settings.redis_connections,
        timeout=settings.redis_timeout,
    ) as client:
        # coredis wraps what leaves its block in an exception group: the refusal is
        # raised outside it, plain.
        answered = await client.ping()
        if answered:
            async with _sharing(settings, client, max_tasks, observed) as state:
                yield state
    if not answered:
        raise SharedStateUnavailable(f"Redis does not answer at {settings.redis_url}")


@asynccontextmanager
async def _sharing(
    settings: SharedSettings, client: RedisClient, max_tasks: int, observed: Observed | None
) -> AsyncIterator[SharedState]:
    """The bus, task store and fleet reporter of this worker, their actors running,
    for the block."""
    worker = worker_name()
    bus = RedisBus(client, settings.key("bus"), worker, settings.bus_outbox, settings.bus_retention)
    store = RedisTaskStore(
        client,
        settings.key_prefix,
        worker,
        max_tasks=max_tasks,
        default_ttl=settings.task_ttl_seconds,
        heartbeat=settings.heartbeat_seconds,
        lease=settings.task_lease_seconds,
        max_attempts=settings.task_max_attempts,
    )

    def counters() -> dict[str, int]:
        found = bus.counters()
        mine = {
            "bus_sent": found.sent,
            "bus_received": found.received,
            "bus_dropped": found.dropped,
            "bus_missed": found.missed,
            "redis_errors": found.errors,
        }
        return mine if observed is None else {**server_counters(observed), **mine}

    reporter = FleetReporter(
        client, settings.key("fleet"), worker, counters, settings.heartbeat_seconds
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(bus.run)
        await nursery.start(store.run)
        await nursery.start(reporter.run)
        yield SharedState(settings, worker, client, bus, store)
        nursery.cancel_scope.cancel()
    await store.retire()
    await reporter.retire()
