"""State that several workers share: Redis behind the runtime's store and bus interfaces.

One process serves one core; ``--workers N`` (:mod:`mcp_actors.server.workers`) and
several machines serve more. A modern-era (2026-07-28) request carries everything
it needs, so any worker can answer it — provided the state a client may come back
for is not kept in one worker's memory. This package keeps it in Redis:

- :class:`~.bus.RedisBus` — the change bus (:mod:`mcp_actors.runtime.bus`) across
  workers: an update published on one worker reaches listeners on every worker;
- :class:`~.task_store.RedisTaskStore` — task records (:mod:`mcp_actors.runtime.task_store`)
  any worker answers ``tasks/get`` from; a task whose worker died is reported failed;
- :class:`~.event_store.RedisEventStore` — the resumability events of legacy SSE
  streams, so a reconnect with ``Last-Event-ID`` loses nothing;
- :class:`~.settings.SharedSettings` — the URL, key prefix, TTLs, bounds, and the
  ``requestState`` keys every worker must share (MRTR retries land anywhere).

Redis is reached with redis-py's **synchronous** client, each command run in a
worker thread (``trio.to_thread.run_sync``) under a bounded
:class:`trio.CapacityLimiter` (:mod:`.redis_client`): redis-py is the maintained
client and parser, its sync client is thread-safe over a connection pool, and its
asyncio client would need an asyncio loop, which this Trio runtime does not run.
A command costs a thread hop (tens of microseconds) next to its network round trip.

Importing this package imports redis-py; ``import mcp_actors`` does not.
"""
