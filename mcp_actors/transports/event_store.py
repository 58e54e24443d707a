"""Where a Streamable HTTP session keeps the SSE events it sent, so a broken stream can resume.

Every message the server puts on an SSE stream is first appended to the
session's :class:`EventStore`, which names it with an event id; the connection
that carries the stream then reads the store from its cursor. A client whose
connection broke sends the last id it saw as ``Last-Event-ID``, and the server
replays what followed on *that* stream only — so an event id must tell its
stream (:meth:`EventStore.stream_of`) and be unique within the session.

The store is the only buffer between the session and its HTTP connections:
live delivery and replay are the same read. It is bounded; when full, the oldest
events of the session are dropped (whatever their stream), and a reader whose
cursor fell behind continues from the oldest event still held, the loss counted
in ``statistics()``. :class:`InMemoryEventStore` is the default; a shared store
(Redis, a database) implements the same four methods.
"""

from __future__ import annotations

import abc
import bisect
from collections import deque

import attrs


@attrs.frozen(slots=True)
class StoredEvent:
    """One event as stored: its id and the encoded message (empty for a priming event)."""

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

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """The session ended: drop everything (the default does nothing)."""


@attrs.frozen
class EventStoreStatistics:
    events: int
    bytes: int
    streams: int
    #: Events dropped because the store was full.
    evicted: int
    #: Reads that wanted an event already dropped (a client fell too far behind).
    gaps: int


class _Log:
    """One stream's retained events, oldest first, with their session-wide sequence numbers."""

    __slots__ = ("dropped_upto", "events")

    def __init__(self) -> None:
        self.events: deque[tuple[int, StoredEvent]] = deque()
        #: Sequence number of the newest event of this stream dropped so far (-1: none).
        self.dropped_upto = -1


class InMemoryEventStore(EventStore):
    """Events in memory, at most ``max_events`` and about ``max_bytes`` per session.

    Ids are ``"<stream>/<n>"`` where ``n`` counts the session's events from 0: the
    stream is in the id, the id unique in the session. When full, the session's
    oldest event is dropped; a stream left with no events is forgotten.
    """

    def __init__(self, max_events: int = 1024, max_bytes: int = 16 * 1024 * 1024) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._logs: dict[str, _Log] = {}
        self._order: deque[str] = deque()  # the stream of every retained event, oldest first
        self._next = 0
        self._bytes = 0
        self._evicted = 0
        self._gaps = 0

    async def append(self, stream: str, payload: bytes) -> str:
        log = self._logs.get(stream)
        if log is None:
            log = self._logs[stream] = _Log()
        sequence = self._next
        self._next += 1
        event = StoredEvent(f"{stream}/{sequence}", payload)
        log.events.append((sequence, event))
        self._order.append(stream)
        self._bytes += len(payload)
        while len(self._order) > self.max_events or (
            self._bytes > self.max_bytes and len(self._order) > 1
        ):
            self._evict()
        return event.id

    def _evict(self) -> None:
        stream = self._order.popleft()
        log = self._logs[stream]
        sequence, dropped = log.events.popleft()
        log.dropped_upto = sequence
        self._bytes -= len(dropped.payload)
        self._evicted += 1
        if not log.events:
            del self._logs[stream]

    async def read(self, stream: str, after: str | None) -> list[StoredEvent]:
        log = self._logs.get(stream)
        if after is None:
            return [] if log is None else [event for _, event in log.events]
        sequence = _sequence(after)
        if log is None:
            return []
        if sequence < log.dropped_upto:
            self._gaps += 1
        events = log.events
        if not events or events[-1][0] <= sequence:
            return []
        start = bisect.bisect_right(events, sequence, key=_first)
        return [events[i][1] for i in range(start, len(events))]

    def stream_of(self, event_id: str) -> str | None:
        stream, slash, number = event_id.rpartition("/")
        if not slash or not number.isdigit() or int(number) >= self._next:
            return None
        return stream

    async def aclose(self) -> None:
        self._logs.clear()
        self._order.clear()
        self._bytes = 0

    def statistics(self) -> EventStoreStatistics:
        return EventStoreStatistics(
            events=len(self._order),
            bytes=self._bytes,
            streams=len(self._logs),
            evicted=self._evicted,
            gaps=self._gaps,
        )


def _first(item: tuple[int, StoredEvent]) -> int:
    return item[0]


def _sequence(event_id: str) -> int:
    number = event_id.rpartition("/")[2]
    return int(number) if number.isdigit() else -1
