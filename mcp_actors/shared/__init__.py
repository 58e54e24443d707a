"""State that several workers share: Redis behind the runtime's store and bus interfaces.

One process serves one core; ``--workers N`` (:mod:`mcp_actors.server.workers`) and
several machines serve more. A modern-era (2026-07-28) request carries everything
it needs, so any worker can answer it — provided the state a client may come back
for is not kept in one worker's memory. This package keeps it in Redis:

- :class:`~.bus.RedisBus` — the change bus (:mod:`mcp_actors.runtime.bus`) across
  workers: an update published on one worker reaches listeners on every worker;
- :class:`~.task_store.RedisTaskStore` — task records (:mod:`mcp_actors.runtime.task_store`)
  any worker answers ``tasks/get`` from; a task whose worker died is taken over
  (run again elsewhere, or failed with the reason: durable tasks);
- :class:`~.event_store.RedisEventStore` — the resumability events of legacy SSE
  streams, so a reconnect with ``Last-Event-ID`` loses nothing;
- :class:`~.sessions.RedisSessionDirectory` and :class:`~.mailbox.RedisMailbox` —
  legacy sessions on any worker (``share_sessions``): each session's record, and a
  mailbox per worker for what must reach a live actor there (see
  :mod:`mcp_actors.transports.http.any_worker`);
- :class:`~.settings.SharedSettings` — the URL, key prefix, TTLs, bounds, and the
  ``requestState`` keys every worker must share (MRTR retries land anywhere).

Redis is reached natively from Trio through coredis (:mod:`.redis_client`): each
command is awaited in the task that needs it, over a bounded connection pool, and a
cancellation cancels the command — no thread per command.

Importing this package imports coredis; ``import mcp_actors`` does not.
"""
