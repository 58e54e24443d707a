"""The change bus across workers: a Redis stream behind :class:`~mcp_actors.runtime.bus.Bus`.

:meth:`RedisBus.publish` hands a change to this worker's receivers at once (as the
in-process bus does: it never blocks) and queues it for the other workers; a
sender actor appends the queue to one Redis stream (``<prefix>:bus``, ``XADD``), and
a reader actor reads that stream from the last entry it saw (``XREAD BLOCK``) and
hands what the other workers published to this worker's receivers. Each entry
names the worker it came from, so a worker skips its own.

**At least once.** Reading from a cursor is what makes the fan-out reliable: a
worker that lost Redis for a while reads on from its cursor when it is back, and
gets every change published meanwhile, in order — as long as the stream still
holds them. A sender that cannot reach Redis keeps its changes and tries again.

**Bounded retention, and the signal when it was exceeded.** The stream keeps its
newest ``retention`` entries (``XADD ... MAXLEN = retention``: exact, so the bound is
what it says). Besides its cursor (the last entry id it read) the reader keeps its
*position*: how many entries the stream had been given up to that one. Each read
takes, in one ``MULTI``, ``XINFO STREAM`` (entries ever added, entries held: the
difference is how many were trimmed, the oldest first) and the entries after the
cursor. More trimmed than the position means entries after the cursor were trimmed
unread; fewer added than the position means the stream was recreated (Redis lost
it: restarted without its data). Either way the reader cannot know what it missed:
it publishes one :data:`~mcp_actors.runtime.bus.CHANGES_MISSED` change to this
worker's receivers, which every listen stream turns into "re-list, re-read"
notifications (see :mod:`mcp_actors.server.listen`), then reads on. The same signal
goes to the other workers when this worker's own outbox overflowed (changes it
could not send): it is appended as an entry of its own once the stream takes
entries again.

**The outbox** is bounded and coalescing, like a listener's mailbox: a change whose
:attr:`~mcp_actors.runtime.bus.Change.key` is already waiting replaces it (latest
wins); beyond ``outbox`` distinct keys a change is not sent (counted in
:attr:`RedisBus.dropped`; this worker's own receivers still got it, and the other
workers get the missed-changes signal). Entries are at most ``read_count`` per read.

Costs: one ``XADD`` per change sent (pipelined per batch); per batch read, a
``XREAD BLOCK`` that waits for the next entry and the ``MULTI`` above (skipped /
repeated at once while a backlog is read, ``read_count`` entries at a time). The
stream is one key: on a Redis Cluster it lives in one slot.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import msgspec
import trio
from coredis import PureToken
from coredis.exceptions import ResponseError

from ..protocol.methods import METHODS
from ..runtime.bus import (
    CHANGES_MISSED,
    BusStatistics,
    Change,
    MemoryBus,
    Receiver,
    Unsubscribe,
)
from .redis_client import RedisClient, RedisError, as_bytes, as_text

log = logging.getLogger("mcp_actors.shared.bus")

#: Seconds to wait before trying Redis again after an error.
_RETRY_SECONDS = 1.0
#: Milliseconds one read blocks in Redis.
_BLOCK_MS = 500
#: The field of a stream entry holding the change.
_FIELD = b"c"
#: What Redis says of ``XINFO STREAM`` on a key that does not exist.
_NO_SUCH_KEY = "no such key"


class _Wire(msgspec.Struct, frozen=True):
    """One change as it crosses Redis."""

    origin: str
    method: str
    subject: str | None
    params: Any
    audience: str | None = None


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(_Wire).decode


@attrs.frozen
class _Snapshot:
    """The stream at one instant: how many entries it was ever given, how many it
    holds (the difference was trimmed: the oldest ones), and the entries after the
    reader's cursor (at most ``read_count``)."""

    added: int
    length: int
    entries: tuple[Any, ...]

    @property
    def trimmed(self) -> int:
        return self.added - self.length


@attrs.frozen
class BusCounters:
    """What a :class:`RedisBus` did so far (see its attributes)."""

    sent: int
    received: int
    dropped: int
    missed: int
    errors: int


@attrs.define(eq=False)
class RedisBus:
    """A :class:`~mcp_actors.runtime.bus.Bus` spanning workers (see the module docstring).
    Run :meth:`run` in a nursery for as long as the bus is used."""

    redis: RedisClient
    #: The Redis stream every worker appends to and reads.
    stream: str
    #: This worker's name on the bus (unique per process).
    origin: str
    outbox: int = attrs.field(default=1024, validator=attrs.validators.ge(1))
    #: Entries the stream keeps (older ones are trimmed).
    retention: int = attrs.field(default=10_000, validator=attrs.validators.ge(1))
    #: Entries one read takes at most.
    read_count: int = attrs.field(default=256, validator=attrs.validators.ge(1))
    _local: MemoryBus = attrs.field(init=False, factory=MemoryBus)
    _waiting: dict[tuple[str, str | None], Change] = attrs.field(init=False, factory=dict)
    _wakeup: trio.Event = attrs.field(init=False, factory=trio.Event)
    #: Whether changes were dropped since the last batch sent (the others are told).
    _overflowed: bool = attrs.field(init=False, default=False)
    #: The last entry read, and how many the stream had been given up to it included.
    _cursor: str = attrs.field(init=False, default="0-0")
    _position: int = attrs.field(init=False, default=0)
    #: Whether the last read took ``read_count`` entries (more may be waiting).
    _backlog: bool = attrs.field(init=False, default=False)
    #: Changes sent to / received from other workers; not sent (outbox full).
    sent: int = attrs.field(init=False, default=0)
    received: int = attrs.field(init=False, default=0)
    dropped: int = attrs.field(init=False, default=0)
    #: Times this worker found it had missed changes (and told its receivers).
    missed: int = attrs.field(init=False, default=0)
    #: Redis errors met by the sender and the reader (each followed by a retry).
    errors: int = attrs.field(init=False, default=0)

    def publish(self, change: Change) -> int:
        self._queue(change)
        return self._local.publish(change)

    def _queue(self, change: Change) -> None:
        key = change.key
        if key in self._waiting or len(self._waiting) < self.outbox:
            self._waiting[key] = change
            self._wakeup.set()
        else:
            self.dropped += 1
            self._overflowed = True

    def subscribe(self, receiver: Receiver) -> Unsubscribe:
        return self._local.subscribe(receiver)

    def statistics(self) -> BusStatistics:
        return self._local.statistics()

    def counters(self) -> BusCounters:
        """Changes sent, received, dropped; gaps found; Redis errors met."""
        return BusCounters(self.sent, self.received, self.dropped, self.missed, self.errors)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Send this worker's changes and receive the others' until cancelled; started
        once the reader has its cursor (a change published after that reaches it)."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self._receive)
            nursery.start_soon(self._send)
            task_status.started()

    async def _send(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup = trio.Event()
            batch, self._waiting = list(self._waiting.values()), {}
            if self._overflowed:
                self._overflowed = False
                batch.append(Change(CHANGES_MISSED))
            try:
                await self._append(batch)
            except RedisError as error:
                self.errors += 1
                log.warning("could not send %d change(s) to Redis: %s", len(batch), error)
                self._requeue(batch)
                await trio.sleep(_RETRY_SECONDS)
                continue
            self.sent += len(batch)

    def _requeue(self, batch: list[Change]) -> None:
        """Put a batch that was not sent back in front of what was queued since (a newer
        change with the same key takes its place), within the outbox bound."""
        merged = {change.key: change for change in batch if change.method != CHANGES_MISSED}
        merged.update(self._waiting)
        over = len(merged) - self.outbox
        if over > 0:
            for key in list(merged)[-over:]:  # the newest go
                del merged[key]
            self.dropped += over
        signalled = any(change.method == CHANGES_MISSED for change in batch)
        self._overflowed = self._overflowed or signalled or over > 0  # to be sent again
        self._waiting = merged
        self._wakeup.set()

    async def _append(self, batch: list[Change]) -> None:
        async with self.redis.client.pipeline(transaction=False) as pipeline:
            for change in batch:
                wire = _Wire(
                    self.origin, change.method, change.subject, change.params, change.audience
                )
                pipeline.xadd(
                    self.stream,
                    {_FIELD: _encode(wire)},
                    trim_strategy=PureToken.MAXLEN,
                    threshold=self.retention,
                    trim_operator=PureToken.EQUAL,
                )

    async def _receive(self, *, task_status: trio.TaskStatus[None]) -> None:
        await self._start_at_the_end()
        task_status.started()
        while True:
            try:
                await self._read()
            except RedisError as error:
                self.errors += 1
                log.warning("Redis bus reader: %s; reading on after %s", error, self._cursor)
                await trio.sleep(_RETRY_SECONDS)

    async def _start_at_the_end(self) -> None:
        """Read from the stream's newest entry on (what others publish from now on)."""
        try:
            info = await self.redis.client.xinfo_stream(self.stream)
        except ResponseError as error:
            if _NO_SUCH_KEY not in str(error):
                raise
            return  # no stream yet: read from its first entry
        self._cursor = as_text(info["last-generated-id"])
        self._position = int(info["entries-added"])

    async def _read(self) -> None:
        """Wait for entries after the cursor, then deliver them — after the
        missed-changes signal if entries after the cursor were trimmed unread."""
        if not self._backlog:
            ready = await self.redis.client.xread(
                {self.stream: self._cursor}, count=1, block=_BLOCK_MS
            )
            if not ready:  # nothing new (a stream Redis lost is found once recreated)
                return
        snapshot = await self._snapshot()
        if snapshot is None:  # gone since XREAD saw it: Redis lost it
            if self._position > 0:
                self._missed()
            self._position, self._backlog = 0, False
            return
        if snapshot.trimmed > self._position or snapshot.added < self._position:
            self._missed()  # trimmed unread; or the stream was recreated
            self._position = snapshot.trimmed
        for entry in snapshot.entries:
            self._deliver(as_bytes(entry.field_values.get(_FIELD, b"")))
        if snapshot.entries:
            self._cursor = as_text(snapshot.entries[-1].identifier)
            self._position += len(snapshot.entries)
        self._backlog = len(snapshot.entries) == self.read_count

    async def _snapshot(self) -> _Snapshot | None:
        """The stream and the entries after the cursor, in one transaction (None: no
        stream)."""
        async with self.redis.client.pipeline(transaction=True, raise_on_error=False) as pipe:
            info = pipe.xinfo_stream(self.stream)
            after = pipe.xrange(self.stream, f"({self._cursor}", "+", count=self.read_count)
        try:
            found = await info
        except ResponseError as error:
            if _NO_SUCH_KEY in str(error):
                return None
            raise
        return _Snapshot(int(found["entries-added"]), int(found["length"]), tuple(await after))

    def _missed(self) -> None:
        self.missed += 1
        log.warning("Redis bus: changes may have been lost before this worker read them")
        self._local.publish(Change(CHANGES_MISSED))

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
        if wire.method == CHANGES_MISSED:
            self.missed += 1
        self._local.publish(Change(wire.method, wire.subject, params, wire.audience))
