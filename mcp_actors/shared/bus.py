"""The change bus across workers: Redis pub/sub behind :class:`~mcp_actors.runtime.bus.Bus`.

:meth:`RedisBus.publish` hands a change to this worker's receivers at once (as the
in-process bus does: it never blocks) and queues it for the other workers; a
sender actor publishes the queue on one Redis channel (``<prefix>:bus``), and a
listener actor hands what the other workers published to this worker's receivers.
Each message names the worker it came from, so a worker skips its own.

The queue is bounded and coalescing, like a listener's mailbox: a change whose
:attr:`~mcp_actors.runtime.bus.Change.key` is already waiting replaces it (latest
wins), and beyond ``outbox`` distinct keys a change is not sent to the other
workers (counted in :attr:`RedisBus.dropped`; this worker's listeners still got it).
Redis pub/sub delivers to the workers connected at that moment, at most once: a
listener on a worker that lost its Redis connection misses what was published
meanwhile (it re-subscribes; the listen stream itself stays open). That matches
what listen promises (notifications, not a log); task *records* are in the task
store, so a client polling ``tasks/get`` never misses a final state.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import msgspec
import redis
import trio

from ..protocol.methods import METHODS
from ..runtime.bus import BusStatistics, Change, MemoryBus, Receiver, Unsubscribe
from .redis_client import RedisClient

log = logging.getLogger("mcp_actors.shared.bus")

#: Seconds the listener blocks in Redis per read (bounds how long a stop waits on it).
_READ_SECONDS = 0.5
#: Seconds to wait before reconnecting after a Redis error.
_RETRY_SECONDS = 1.0


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
    channel: str
    #: This worker's name on the bus (unique per process).
    origin: str
    outbox: int = 1024
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
                await self.redis.run(_publish_all, self.channel, messages)
                self.sent += len(messages)
            except redis.RedisError as error:
                self.dropped += len(messages)
                log.warning("could not publish %d change(s) to Redis: %s", len(messages), error)

    def _encode(self, change: Change) -> bytes:
        wire = _Wire(self.origin, change.method, change.subject, change.params, change.audience)
        return _encode(wire)

    async def _receive(self, *, task_status: trio.TaskStatus[None]) -> None:
        started = False
        while True:
            pubsub: Any = self.redis.client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
            try:
                await self.redis.run(_subscribe, pubsub, self.channel)
                if not started:
                    task_status.started()
                    started = True
                while True:
                    message = await self.redis.run(_next_message, pubsub)
                    if message is not None and message.get("type") == "message":
                        self._deliver(message["data"])
            except redis.RedisError as error:
                log.warning("Redis bus listener: %s; reconnecting", error)
            finally:
                pubsub.close()
            await trio.sleep(_RETRY_SECONDS)

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


def _publish_all(client: redis.Redis, channel: str, messages: list[bytes]) -> None:
    pipeline = client.pipeline(transaction=False)
    for message in messages:
        pipeline.publish(channel, message)
    pipeline.execute()


def _subscribe(client: redis.Redis, pubsub: Any, channel: str) -> None:
    pubsub.subscribe(channel)


def _next_message(client: redis.Redis, pubsub: Any) -> dict[str, Any] | None:
    message: dict[str, Any] | None = pubsub.get_message(timeout=_READ_SECONDS)
    return message
