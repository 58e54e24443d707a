"""Where a Streamable HTTP session keeps the SSE events it sent, so a broken stream can resume.

Every message the server puts on an SSE stream is first appended to the
session's :class:`EventStore`, which names it with an event id; the connection
that carries the stream then reads the store from its cursor. A client whose
connection broke sends the last id it saw as ``Last-Event-ID``, and the server
replays what followed on *that* stream only — so an event id must tell its
stream (:meth:`EventStore.stream_of`) and be unique within the session.

The store is the only buffer between the session and its HTTP connections:
live delivery and replay are the same read. Events leave it when nothing can
need them any more:

- the client **acknowledged** them: it resumed with a ``Last-Event-ID`` at or
  past them (:meth:`EventStore.acknowledge`);
- their stream is **done**: a POST's stream whose response was written and whose
  HTTP body ended normally (:meth:`EventStore.discard`). Written is not yet
  received, so the transport waits ``HttpConfig.finished_stream_retention``
  seconds first: long enough for a client whose connection broke in that very
  last write to resume (after the ``retry`` delay it was given); a client that
  resumes later finds an empty, ended stream (and sooner once the session
  forgot the stream: past ``HttpConfig.max_finished_streams``, it cannot resume);
- the session ended.

And the store is **bounded**: :class:`InMemoryEventStore` counts each event's
payload plus :data:`EVENT_OVERHEAD` bytes against the :class:`EventMemory` it
shares with every session of the server. Past the bound of one stream, that
stream's oldest events are dropped; past the server-wide bound, the server's
oldest events are dropped, whatever their session. A reader whose cursor fell
into such a gap continues from the oldest event still held (what was dropped is
lost to it), and the gap is counted in ``statistics().gaps``. An event larger
than a bound on its own is still kept, as the newest, until it can be dropped.
A shared store (Redis, a database) implements the same methods.

Under load the in-memory store holds tens of thousands of events, so it keeps
them cheap for CPython's cycle collector, which rescans every object it tracks
at each full collection (a pause in the middle of some request): an event is
untracked data (:class:`StoredEvent`), and a stream costs one tracked object,
its log.
"""

from __future__ import annotations

import abc
import bisect
from collections import deque

import attrs
import msgspec

#: Bytes an in-memory event is counted for besides its payload (its id and bookkeeping).
EVENT_OVERHEAD = 128


class StoredEvent(msgspec.Struct, frozen=True, gc=False):
    """One event as stored: its id and the encoded message (empty for a priming event).

    Not tracked by CPython's cycle collector (``gc=False``: it holds only a ``str``
    and ``bytes``, so it cannot be part of a cycle): a store retains tens of
    thousands of events under load, and every tracked object is rescanned at each
    full collection — a pause in the server's latency.
    """

    id: str
    payload: bytes


class EventStore(abc.ABC):
    """One session's SSE events, per stream, in order."""

    @abc.abstractmethod
    async def append(self, stream: str, payload: bytes) -> str:
        """Store an event on ``stream`` and return its new id."""

    @abc.abstractmethod
    async def read(self, stream: str, after: str | None) -> list[StoredEvent]:
        """The events of ``stream`` after the one with id ``after`` (all retained if None).

        An ``after`` older than what is retained reads from the oldest retained event.
        """

    @abc.abstractmethod
    def stream_of(self, event_id: str) -> str | None:
        """The stream an event id names, or None if it cannot be an id of this store.

        The transport still checks that the stream is one of its session's.
        """

    async def acknowledge(self, stream: str, event_id: str) -> None:  # noqa: B027
        """The client has the events of ``stream`` up to ``event_id``: they may go."""

    async def flush(self) -> None:  # noqa: B027
        """Make every appended event readable by other workers sharing the store. A
        shared store may hold appends back to write them together (its own reads get
        them regardless): call this before telling another worker to read. The default
        (a store that writes at once, or is not shared) does nothing."""

    async def discard(self, stream: str) -> None:  # noqa: B027
        """No reader will want the events of ``stream`` again: they may go."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """The session ended: drop everything (the default does nothing)."""


@attrs.frozen
class EventStoreStatistics:
    events: int
    #: Payload bytes plus :data:`EVENT_OVERHEAD` per event.
    bytes: int
    streams: int
    #: Events dropped because a bound was reached.
    evicted: int
    #: Reads that wanted an event already dropped (a client fell too far behind).
    gaps: int


class _Log(deque[tuple[int, StoredEvent]]):
    """One stream's retained events, oldest first, with their server-wide sequence numbers.

    A deque of ``(sequence, event)`` pairs with the stream's bookkeeping: one object
    the cycle collector tracks per stream, none per event (a pair holds nothing
    trackable, so the collector stops tracking it at its first pass).
    """

    __slots__ = ("bytes", "dropped_upto", "key", "owner")

    def __init__(self, owner: InMemoryEventStore, key: str) -> None:
        super().__init__()
        self.owner = owner
        self.key = key
        self.bytes = 0
        #: Sequence number of the newest event of this stream dropped so far (-1: none).
        self.dropped_upto = -1

    def holds(self, sequence: int) -> bool:
        """Whether the event numbered ``sequence`` (one of ours) is still here.

        Events only ever leave a log from its oldest end.
        """
        return bool(self) and self[0][0] <= sequence


def _cost(payload: bytes) -> int:
    return len(payload) + EVENT_OVERHEAD


class EventMemory:
    """The bounded memory the in-memory event stores of one server share.

    ``max_bytes`` bounds all sessions' events together, ``max_stream_bytes`` the
    events of one stream (both count payload plus :data:`EVENT_OVERHEAD` per
    event); the oldest events go first (see the module docstring).
    """

    def __init__(
        self, max_bytes: int = 64 * 1024 * 1024, max_stream_bytes: int = 8 * 1024 * 1024
    ) -> None:
        self.max_bytes = max_bytes
        self.max_stream_bytes = max_stream_bytes
        #: Every appended event, oldest first, as two aligned deques (sequence number,
        #: log): no tracked pair per event. An entry whose event already left by another
        #: way is popped once it is the oldest (_trim) or swept out by _compact.
        self._order_sequences: deque[int] = deque()
        self._order_logs: deque[_Log] = deque()
        self._next = 0
        self._bytes = 0
        self._events = 0
        self._streams = 0
        self._evicted = 0
        self._gaps = 0

    def new_store(self, session_id: str = "") -> InMemoryEventStore:
        """A session's store drawing on this memory (an ``event_store_factory``)."""
        return InMemoryEventStore(self)

    def statistics(self) -> EventStoreStatistics:
        return EventStoreStatistics(
            events=self._events,
            bytes=self._bytes,
            streams=self._streams,
            evicted=self._evicted,
            gaps=self._gaps,
        )

    # -- what the stores call ----------------------------------------------------------

    def next_sequence(self) -> int:
        sequence = self._next
        self._next += 1
        return sequence

    def issued(self, sequence: int) -> bool:
        return sequence < self._next

    def opened(self) -> None:
        self._streams += 1

    def gap(self) -> None:
        self._gaps += 1

    def add(self, log: _Log, sequence: int, event: StoredEvent) -> None:
        """Account for a new event of ``log``, then drop old ones while over a bound."""
        log.append((sequence, event))
        cost = _cost(event.payload)
        log.bytes += cost
        self._bytes += cost
        self._events += 1
        self._order_sequences.append(sequence)
        self._order_logs.append(log)
        while log.bytes > self.max_stream_bytes and len(log) > 1:
            self.drop_oldest(log)
            self._evicted += 1
        while self._bytes > self.max_bytes and self._order_sequences[0] != sequence:
            # The oldest entry's event is still held (_trim keeps it so): drop it.
            self.drop_oldest(self._order_logs[0])
            self._evicted += 1
        if len(self._order_sequences) > 2 * self._events + 1024:
            self._compact()

    def drop_oldest(self, log: _Log) -> None:
        sequence, event = log.popleft()
        log.dropped_upto = sequence
        cost = _cost(event.payload)
        log.bytes -= cost
        self._bytes -= cost
        self._events -= 1
        if not log:
            log.owner.forget_log(log)
            self._streams -= 1
        self._trim()
        if len(self._order_sequences) > 2 * self._events + 1024:
            self._compact()  # let the forgotten logs go, not only at the next append

    def drop_log(self, log: _Log) -> None:
        """Drop every event of ``log`` at once (its stream is discarded): what
        :meth:`drop_oldest` does for each, with one trim after."""
        if not log:
            return
        log.dropped_upto = log[-1][0]
        self._bytes -= log.bytes
        self._events -= len(log)
        log.bytes = 0
        log.clear()
        log.owner.forget_log(log)
        self._streams -= 1
        self._trim()
        if len(self._order_sequences) > 2 * self._events + 1024:
            self._compact()

    def _trim(self) -> None:
        """Pop the oldest entries whose events are gone, so their logs go now.

        Events mostly leave oldest first (finished streams after their retention,
        acknowledged ones, evicted ones), so this keeps the order nearly exact;
        _compact sweeps what leaves out of order.
        """
        sequences, logs = self._order_sequences, self._order_logs
        while sequences and not logs[0].holds(sequences[0]):
            sequences.popleft()
            logs.popleft()

    def _compact(self) -> None:
        held = [
            (sequence, log)
            for sequence, log in zip(self._order_sequences, self._order_logs, strict=True)
            if log.holds(sequence)
        ]
        self._order_sequences = deque(sequence for sequence, _ in held)
        self._order_logs = deque(log for _, log in held)


class InMemoryEventStore(EventStore):
    """One session's events in an :class:`EventMemory` (by default a private one).

    Ids are ``"<stream>/<n>"`` where ``n`` is the memory's count of events so far:
    the stream is in the id, the id unique in the session. A stream left with no
    events is forgotten.
    """

    def __init__(self, memory: EventMemory | None = None) -> None:
        self.memory = memory if memory is not None else EventMemory()
        self._logs: dict[str, _Log] = {}

    async def append(self, stream: str, payload: bytes) -> str:
        log = self._logs.get(stream)
        if log is None:
            log = self._logs[stream] = _Log(self, stream)
            self.memory.opened()
        sequence = self.memory.next_sequence()
        event = StoredEvent(f"{stream}/{sequence}", payload)
        self.memory.add(log, sequence, event)
        return event.id

    async def read(self, stream: str, after: str | None) -> list[StoredEvent]:
        log = self._logs.get(stream)
        if after is None:
            return [] if log is None else [event for _, event in log]
        sequence = _sequence(after)
        if log is None:
            return []
        if sequence < log.dropped_upto:
            self.memory.gap()
        if not log or log[-1][0] <= sequence:
            return []
        start = bisect.bisect_right(log, sequence, key=_first)
        return [log[i][1] for i in range(start, len(log))]

    def stream_of(self, event_id: str) -> str | None:
        stream, slash, number = event_id.rpartition("/")
        if not slash or not number.isdigit() or not self.memory.issued(int(number)):
            return None
        return stream

    async def acknowledge(self, stream: str, event_id: str) -> None:
        sequence = _sequence(event_id)
        log = self._logs.get(stream)
        while log and log[0][0] <= sequence:
            self.memory.drop_oldest(log)
            log = self._logs.get(stream)

    async def discard(self, stream: str) -> None:
        log = self._logs.get(stream)
        if log is not None:
            self.memory.drop_log(log)

    async def aclose(self) -> None:
        for log in list(self._logs.values()):
            self.memory.drop_log(log)

    def forget_log(self, log: _Log) -> None:
        """``log`` has no events left (called by the memory)."""
        if self._logs.get(log.key) is log:
            del self._logs[log.key]

    def statistics(self) -> EventStoreStatistics:
        """The statistics of the memory this store draws on (shared or its own)."""
        return self.memory.statistics()


def _first(item: tuple[int, StoredEvent]) -> int:
    return item[0]


def _sequence(event_id: str) -> int:
    number = event_id.rpartition("/")[2]
    return int(number) if number.isdigit() else -1
