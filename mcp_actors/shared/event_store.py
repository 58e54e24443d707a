"""The SSE events of Streamable HTTP sessions in Redis streams, so no stored event is lost.

One :class:`RedisEventStore` per session (``HttpConfig.event_store_factory``, which
:func:`redis_event_stores` makes); each SSE stream of the session is one Redis
stream, ``<prefix>:events:{<session>}:<stream>`` (one hash tag per session: a write
touching several of its streams is one script, which a Redis Cluster runs in one
slot), whose entries hold the payloads. An event id is ``"<stream>/<entry id>"``: it
names its stream, and is unique.

**Round trips.** Redis is a round trip away, and a plain legacy ``tools/call`` has
two events on its stream (the priming event, the answer) read back by the connection
carrying it. So the store does the work without waiting on Redis where it can:

- **Ids are made here**, not by Redis: ``<ms>-<n>``, the milliseconds the worker's
  factory was made at and a counter of the worker's events (:class:`EntryIds`), so
  ids increase on every stream the worker writes (``XADD`` takes an explicit id
  greater than the stream's newest) and an append needs no reply to name its event.
- **The tail is cached**: a stream's events appended here and not yet read stay in
  memory too, so the connection carrying the stream reads them from here
  (:meth:`RedisEventStore.read` asks Redis only for a cursor behind the cache, a
  resumption say, or for a stream another worker writes).
- **Writes are held back** (``hold_back``, for shared sessions): appends stay in
  memory until something reads the stream, :meth:`RedisEventStore.flush` is called
  (the transport does before telling another worker to read, see
  :mod:`~mcp_actors.transports.http.any_worker`, and when a client leaves a stream it
  may resume elsewhere) or the bound below is reached; then every held event of the
  session goes in one script — ``XADD`` each, ``PEXPIRE`` each stream, and the
  ``DEL`` of the streams discarded meanwhile — which, once sent, is finished even if
  its caller is cancelled (``redis_timeout`` bounds it). A priming event
  (no data) is never written: its id is all it is for, and a read after it works
  the same without it. Without ``hold_back`` (``share_events``: another worker
  replays the store without asking this one) each append is written at once.

So a plain call costs one round trip here (the session's record read is the other:
:mod:`.sessions`). What is held back is lost if the worker dies before writing it,
as the request running there is.

**Bounds.** Each stream keeps its newest ``max_events`` entries in Redis (``XADD ...
MAXLEN``: older ones are trimmed, and a reader whose cursor fell into the gap
continues from the oldest one kept), and expires ``ttl`` seconds after its last
write (``PEXPIRE``), so an abandoned session's events leave Redis without a sweeper.
The memory a store keeps is at most :data:`CACHED_EVENTS` events (and ``max_events``)
or :data:`CACHED_BYTES` bytes: past either, the held events are written and the cache
is dropped (its readers then read Redis). Acknowledged events are trimmed (``XTRIM
MINID``); a discarded stream is deleted with the next write (or by its TTL). A store
tracks at most :data:`TAILS` streams with a cache (past it, it forgets those with
nothing cached) and :data:`WRITTEN` written ones (past it, the oldest is left to its
TTL).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import trio
from coredis import PureToken

from ..transports.http.event_store import EventStore, StoredEvent
from .redis_client import RedisClient, as_bytes, as_text

_ENTRY_ID = re.compile(r"([0-9]{1,20})-([0-9]{1,20})")
_PAYLOAD = b"d"

#: Events (and their payload bytes) a store keeps in memory at most: held back, or
#: cached for the connection that reads them next.
CACHED_EVENTS = 64
CACHED_BYTES = 1024 * 1024

#: Streams a store keeps track of at most: those with a cache (see
#: :meth:`RedisEventStore.append`), and those written to Redis. A session's streams
#: come and go (the finished ones are discarded), but one whose client left is never
#: discarded (its events go by their TTL). Written ones are tracked further than a
#: session remembers finished streams (``HttpConfig.max_finished_streams``, 256), so
#: those are deleted, not left to their TTL.
TAILS = 256
WRITTEN = 1024

#: KEYS: the streams written (ARGV[3] of them), then the streams to delete. ARGV:
#: max events, ttl ms, the count of streams written, then for each: its count of
#: events, and each event's id and payload.
_WRITE = """
local at = 4
local written = tonumber(ARGV[3])
for k = 1, written do
  local count = tonumber(ARGV[at])
  at = at + 1
  for _ = 1, count do
    redis.call('XADD', KEYS[k], 'MAXLEN', ARGV[1], ARGV[at], 'd', ARGV[at + 1])
    at = at + 2
  end
  redis.call('PEXPIRE', KEYS[k], ARGV[2])
end
for k = written + 1, #KEYS do redis.call('DEL', KEYS[k]) end
return 0
"""


class EntryIds:
    """Redis stream entry ids for one worker's events (see the module docstring)."""

    def __init__(self) -> None:
        self._milliseconds = int(time.time() * 1000)
        self._count = 0

    def next(self) -> str:
        self._count += 1
        return f"{self._milliseconds}-{self._count}"


class _Tail:
    """The events of one stream appended here that its reader has not read yet."""

    __slots__ = ("after", "events", "held")

    def __init__(self) -> None:
        #: The id the cached events follow (None: the stream's start).
        self.after: str | None = None
        self.events: list[StoredEvent] = []
        #: How many of the newest events are not written to Redis yet.
        self.held = 0

    def take(self, after: str | None) -> list[StoredEvent] | None:
        """The cached events after ``after`` (None: ``after`` is not in the cache); the
        reader has every cached event then, so the cache is emptied."""
        events = self.events
        if after == self.after:
            start = 0
        else:
            start = next((i + 1 for i, event in enumerate(events) if event.id == after), -1)
            if start < 0:
                return None
        taken = events[start:]
        if taken:
            self.after, self.events = taken[-1].id, []
        return taken

    def drop(self) -> None:
        """Forget the cached events (written already): their reader reads Redis."""
        if self.events:
            self.after, self.events = self.events[-1].id, []


class RedisEventStore(EventStore):
    """One session's SSE events in Redis (see the module docstring)."""

    def __init__(
        self,
        redis: RedisClient,
        key: str,
        *,
        max_events: int = 1000,
        ttl: float = 3600.0,
        ids: EntryIds | None = None,
        hold_back: bool = False,
    ) -> None:
        self.redis = redis
        #: Every stream of the session is ``<key>:<stream>``.
        self.key = key
        self.max_events = max_events
        self.ttl_ms = int(ttl * 1000)
        self.hold_back = hold_back
        self._ids = EntryIds() if ids is None else ids
        self._tails: dict[str, _Tail] = {}
        #: Events held back, of every stream; the write in flight, if any.
        self._held = 0
        self._writing: trio.Event | None = None
        self._cached = 0
        self._cached_bytes = 0
        #: Streams written to Redis, oldest first (deleted when the session ends).
        self._written: dict[str, None] = {}
        #: Streams discarded since the last write (deleted with the next one).
        self._discarded: list[str] = []

    def _stream_key(self, stream: str) -> str:
        return f"{self.key}:{stream}"

    async def append(self, stream: str, payload: bytes) -> str:
        tail = self._tails.get(stream)
        if tail is None:
            if len(self._tails) >= TAILS:
                self._forget_idle_tails()
            tail = self._tails[stream] = _Tail()
        event = StoredEvent(f"{stream}/{self._ids.next()}", payload)
        tail.events.append(event)
        tail.held += 1
        self._held += 1
        self._cached += 1
        self._cached_bytes += len(payload)
        full = self._cached > min(CACHED_EVENTS, self.max_events)
        if full or self._cached_bytes > CACHED_BYTES:
            await self.flush()
            self._drop_cache()
        elif not self.hold_back:
            await self.flush()
        return event.id

    async def read(self, stream: str, after: str | None) -> list[StoredEvent]:
        await self.flush()  # what a reader gets must be in Redis: it may resume elsewhere
        tail = self._tails.get(stream)
        if tail is not None:
            cached = tail.events
            taken = tail.take(after)
            if taken is not None:
                if taken:
                    self._uncache(cached)  # the reader has them, or passed them
                return taken
        start = "-" if after is None else _exclusive(after)
        if start is None:
            return []
        entries = await self.redis.client.xrange(self._stream_key(stream), start, "+")
        return [
            StoredEvent(
                f"{stream}/{as_text(entry.identifier)}", as_bytes(entry.field_values[_PAYLOAD])
            )
            for entry in entries
        ]

    async def flush(self) -> None:
        """Write every held event of the session, and delete the streams discarded
        since the last write, in one script; return once they are written (nothing
        held: at once, or once the write in flight is done)."""
        while self._writing is not None:
            await self._writing.wait()  # it may carry the events the caller wants written
        if not self._held:
            return
        keys, args = self._take_held()
        if not keys:
            return  # priming events only: nothing to write
        keys += self._discarded
        self._discarded = []
        self._writing = written = trio.Event()
        try:
            # Shielded: the events are no longer held, so a write cancelled midway (its
            # reader's client left) would lose them; the client's timeout bounds it.
            with trio.CancelScope(shield=True):
                await self.redis.client.eval(_WRITE, keys=keys, args=args)
        finally:
            self._writing = None
            written.set()

    def _take_held(self) -> tuple[list[str], list[Any]]:
        """The keys and arguments of :data:`_WRITE` for the held events (no longer held)."""
        self._held = 0
        keys: list[str] = []
        args: list[Any] = [self.max_events, self.ttl_ms, 0]
        for stream, tail in self._tails.items():
            held, tail.held = tail.held, 0
            events = [event for event in tail.events[len(tail.events) - held :] if event.payload]
            if events:
                keys.append(self._stream_key(stream))
                self._written[stream] = None
                if len(self._written) > WRITTEN:  # the oldest goes by its TTL
                    del self._written[next(iter(self._written))]
                args.append(len(events))
                for event in events:
                    args += [event.id.rpartition("/")[2], event.payload]
        args[2] = len(keys)
        return keys, args

    def _forget_idle_tails(self) -> None:
        """Forget the tails caching nothing (their readers, if any, then read Redis)."""
        idle = [stream for stream, tail in self._tails.items() if not tail.events]
        for stream in idle:
            del self._tails[stream]

    def _uncache(self, events: list[StoredEvent]) -> None:
        self._cached -= len(events)
        self._cached_bytes -= sum(len(event.payload) for event in events)

    def _drop_cache(self) -> None:
        for tail in self._tails.values():
            tail.drop()
        self._cached = self._cached_bytes = 0

    def stream_of(self, event_id: str) -> str | None:
        stream, slash, entry = event_id.rpartition("/")
        if not slash or not stream or not _ENTRY_ID.fullmatch(entry):
            return None
        return stream

    async def acknowledge(self, stream: str, event_id: str) -> None:
        start = _exclusive(event_id)
        if start is None or (stream in self._tails and stream not in self._written):
            return  # nothing of a stream written here alone is in Redis
        key = self._stream_key(stream)
        threshold = start.removeprefix("(")
        milliseconds, sequence = threshold.split("-")
        # Trim what is <= event_id: keep entries >= its successor.
        successor = f"{milliseconds}-{int(sequence) + 1}"
        await self.redis.client.xtrim(key, PureToken.MINID, successor)  # type: ignore[arg-type]

    async def discard(self, stream: str) -> None:
        tail = self._tails.pop(stream, None)
        if tail is not None:
            self._held -= tail.held
            self._uncache(tail.events)
        if stream in self._written:
            del self._written[stream]
            self._discarded.append(self._stream_key(stream))

    async def aclose(self) -> None:
        keys = [self._stream_key(stream) for stream in self._written] + self._discarded
        self._tails.clear()
        self._held = 0
        self._written.clear()
        self._discarded = []
        self._cached = self._cached_bytes = 0
        if keys:
            await self.redis.client.delete(keys)


def _exclusive(event_id: str) -> str | None:
    """The XRANGE start just after ``event_id`` (None: not an id of ours)."""
    entry = event_id.rpartition("/")[2]
    return f"({entry}" if _ENTRY_ID.fullmatch(entry) else None


def redis_event_stores(
    redis: RedisClient, prefix: str, *, max_events: int, ttl: float, hold_back: bool = False
) -> Callable[[str], EventStore]:
    """An ``HttpConfig.event_store_factory``: each session's store, keyed by its id, all
    numbering their events with one :class:`EntryIds`; ``hold_back``: see the module
    docstring."""
    ids = EntryIds()

    def new_store(session_id: str) -> EventStore:
        key = f"{prefix}:events:{{{session_id}}}"
        return RedisEventStore(
            redis, key, max_events=max_events, ttl=ttl, ids=ids, hold_back=hold_back
        )

    return new_store
