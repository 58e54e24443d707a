"""The change bus across workers: a Redis stream behind :class:`~mcp_actors.runtime.bus.Bus`.

:meth:`RedisBus.publish` hands a change to this worker's receivers at once (as the
in-process bus does: it never blocks) and queues it for the other workers; a
sender actor appends the queue to one Redis stream (``<prefix>:bus``, ``XADD``), and
a listener actor reads that stream from the last entry it saw (``XREAD BLOCK``) and
hands what the other workers published to this worker's receivers. Each entry
names the worker it came from, so a worker skips its own.

Reading from a cursor is what makes the fan-out **at least once**: a worker that
lost Redis for a while reads on from its cursor when it is back, and gets what
was published meanwhile — as long as the stream still holds it. The stream keeps
its newest ``retention`` entries (``XADD MAXLEN``).

The queue is bounded and coalescing, like a listener's mailbox: a change whose
:attr:`~mcp_actors.runtime.bus.Change.key` is already waiting replaces it (latest
wins), and beyond ``outbox`` distinct keys a change is not sent to the other
workers (counted in :attr:`RedisBus.dropped`; this worker's listeners still got it).
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import msgspec
import trio
from coredis import PureToken

from ..protocol.methods import METHODS
from ..runtime.bus import BusStatistics, Change, MemoryBus, Receiver, Unsubscribe
from .redis_client import RedisClient, RedisError, as_bytes, as_text

log = logging.getLogger("mcp_actors.shared.bus")

#: Seconds to wait before reconnecting after a Redis error.
_RETRY_SECONDS = 1.0
#: Milliseconds one read blocks in Redis, and entries it takes at most.
_BLOCK_MS = 500
_READ_COUNT = 256
#: The field of a stream entry holding the change.
_FIELD = b"c"


class _Wire(msgspec.Struct, frozen=True):
    """One change as it crosses Redis."""

    origin: str
    method: str
    subject: str | None
    params: Any
    audience: str | None = None


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(_Wire).decode


@attrs.define(eq=False)
class RedisBus:
    """A :class:`~mcp_actors.runtime.bus.Bus` spanning workers (see the module docstring).
    Run :meth:`run` in a nursery for as long as the bus is used."""

    redis: RedisClient
    #: The Redis stream every worker appends to and reads.
    stream: str
    #: This worker's name on the bus (unique per process).
    origin: str
    outbox: int = 1024
    #: Entries the stream keeps (older ones are trimmed).
    retention: int = 10_000
    _local: MemoryBus = attrs.field(init=False, factory=MemoryBus)
    _waiting: dict[tuple[str, str | None], Change] = attrs.field(init=False, factory=dict)
    _wakeup: trio.Event = attrs.field(init=False, factory=trio.Event)
    #: Changes sent to / received from other workers, and not sent (outbox full).
    sent: int = attrs.field(init=False, default=0)
    received: int = attrs.field(init=False, default=0)
    dropped: int = attrs.field(init=False, default=0)

    def publish(self, change: Change) -> int:
        key = change.key
        if key in self._waiting or len(self._waiting) < self.outbox:
            self._waiting[key] = change
            self._wakeup.set()
        else:
            self.dropped += 1
        return self._local.publish(change)

    def subscribe(self, receiver: Receiver) -> Unsubscribe:
        return self._local.subscribe(receiver)

    def statistics(self) -> BusStatistics:
        return self._local.statistics()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Send this worker's changes and receive the others' until cancelled; started
        once subscribed (a change published after that reaches this worker)."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self._receive)
            nursery.start_soon(self._send)
            task_status.started()

    async def _send(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup = trio.Event()
            batch, self._waiting = list(self._waiting.values()), {}
            messages = [self._encode(change) for change in batch]
            try:
                async with self.redis.client.pipeline(transaction=False) as pipeline:
                    for message in messages:
                        pipeline.xadd(
                            self.stream,
                            {_FIELD: message},
                            trim_strategy=PureToken.MAXLEN,
                            threshold=self.retention,
                            trim_operator=PureToken.APPROXIMATELY,
                        )
                self.sent += len(messages)
            except RedisError as error:
                self.dropped += len(messages)
                log.warning("could not publish %d change(s) to Redis: %s", len(messages), error)

    def _encode(self, change: Change) -> bytes:
        wire = _Wire(self.origin, change.method, change.subject, change.params, change.audience)
        return _encode(wire)

    async def _receive(self, *, task_status: trio.TaskStatus[None]) -> None:
        cursor = await self._newest_entry()
        task_status.started()
        while True:
            try:
                found = await self.redis.client.xread(
                    {self.stream: cursor}, count=_READ_COUNT, block=_BLOCK_MS
                )
            except RedisError as error:
                log.warning("Redis bus listener: %s; reading on from %s", error, cursor)
                await trio.sleep(_RETRY_SECONDS)
                continue
            for entry in (found or {}).get(self.stream.encode(), ()):
                cursor = as_text(entry.identifier)
                self._deliver(as_bytes(entry.field_values.get(_FIELD, b"")))

    async def _newest_entry(self) -> str:
        """The id of the stream's newest entry (what this worker reads after)."""
        newest = await self.redis.client.xrevrange(self.stream, "+", "-", count=1)
        return as_text(newest[0].identifier) if newest else "0-0"

    def _deliver(self, data: bytes) -> None:
        try:
            wire = _decode(data)
            spec = METHODS.get(wire.method)
            params = wire.params  # JSON builtins for a change that is no MCP notification
            if params is not None and spec is not None:
                params = msgspec.convert(params, spec.params)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("ignored a malformed change on the Redis bus: %s", error)
            return
        if wire.origin == self.origin:
            return
        self.received += 1
        self._local.publish(Change(wire.method, wire.subject, params, wire.audience))
