"""The SSE events of Streamable HTTP sessions in Redis streams, so no stored event is lost.

One :class:`RedisEventStore` per session (``HttpConfig.event_store_factory``, which
:func:`redis_event_stores` makes); each SSE stream of the session is one Redis
stream, ``<prefix>:events:<session>:<stream>``, whose entries hold the payloads.
An event id is ``"<stream>/<redis entry id>"``: it names its stream, and is unique.

Bounds: each stream keeps its newest ``max_events`` entries (``XADD ... MAXLEN``:
older ones are trimmed, and a reader whose cursor fell into the gap continues from
the oldest one kept), and expires ``ttl`` seconds after its last append
(``PEXPIRE``), so an abandoned session's events leave Redis without a sweeper.
Acknowledged events are trimmed (``XTRIM MINID``), a finished stream deleted.

Every append and read is a Redis round trip: sharing the events costs latency on
every SSE message of a session, which is why it is opt-in (``[shared] share_events``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from coredis import PureToken

from ..transports.http.event_store import EventStore, StoredEvent
from .redis_client import RedisClient, as_bytes, as_text

_ENTRY_ID = re.compile(r"([0-9]{1,20})-([0-9]{1,20})")
_PAYLOAD = b"d"


class RedisEventStore(EventStore):
    """One session's SSE events in Redis (see the module docstring)."""

    def __init__(
        self, redis: RedisClient, key: str, *, max_events: int = 1000, ttl: float = 3600.0
    ) -> None:
        self.redis = redis
        #: Every stream of the session is ``<key>:<stream>``.
        self.key = key
        self.max_events = max_events
        self.ttl_ms = int(ttl * 1000)
        self._streams: set[str] = set()

    def _stream_key(self, stream: str) -> str:
        return f"{self.key}:{stream}"

    async def append(self, stream: str, payload: bytes) -> str:
        key = self._stream_key(stream)
        self._streams.add(stream)
        async with self.redis.client.pipeline(transaction=False) as pipeline:
            entry = pipeline.xadd(
                key,
                {_PAYLOAD: payload},
                trim_strategy=PureToken.MAXLEN,
                threshold=self.max_events,
                trim_operator=PureToken.EQUAL,
            )
            pipeline.pexpire(key, self.ttl_ms)
        identifier = await entry
        assert identifier is not None  # XADD without NOMKSTREAM always adds
        return f"{stream}/{as_text(identifier)}"

    async def read(self, stream: str, after: str | None) -> list[StoredEvent]:
        start = "-" if after is None else _exclusive(after)
        if start is None:
            return []
        key = self._stream_key(stream)
        entries = await self.redis.client.xrange(key, start, "+")
        return [
            StoredEvent(
                f"{stream}/{as_text(entry.identifier)}", as_bytes(entry.field_values[_PAYLOAD])
            )
            for entry in entries
        ]

    def stream_of(self, event_id: str) -> str | None:
        stream, slash, entry = event_id.rpartition("/")
        if not slash or not stream or not _ENTRY_ID.fullmatch(entry):
            return None
        return stream

    async def acknowledge(self, stream: str, event_id: str) -> None:
        start = _exclusive(event_id)
        if start is None:
            return
        key = self._stream_key(stream)
        threshold = start.removeprefix("(")
        milliseconds, sequence = threshold.split("-")
        # Trim what is <= event_id: keep entries >= its successor.
        successor = f"{milliseconds}-{int(sequence) + 1}"
        await self.redis.client.xtrim(key, PureToken.MINID, successor)  # type: ignore[arg-type]

    async def discard(self, stream: str) -> None:
        self._streams.discard(stream)
        key = self._stream_key(stream)
        await self.redis.client.delete([key])

    async def aclose(self) -> None:
        keys = [self._stream_key(stream) for stream in self._streams]
        self._streams.clear()
        if keys:
            await self.redis.client.delete(keys)


def _exclusive(event_id: str) -> str | None:
    """The XRANGE start just after ``event_id`` (None: not an id of ours)."""
    entry = event_id.rpartition("/")[2]
    return f"({entry}" if _ENTRY_ID.fullmatch(entry) else None


def redis_event_stores(
    redis: RedisClient, prefix: str, *, max_events: int, ttl: float
) -> Callable[[str], EventStore]:
    """An ``HttpConfig.event_store_factory``: each session's store, keyed by its id."""

    def new_store(session_id: str) -> EventStore:
        key = f"{prefix}:events:{session_id}"
        return RedisEventStore(redis, key, max_events=max_events, ttl=ttl)

    return new_store
