"""The sans-IO pieces of the HTTP transports: the SSE codec, the event store, the Host/Origin
policy and the session table."""

from __future__ import annotations

import pytest
import trio

from mcp_actors.transports.http.event_store import (
    EVENT_OVERHEAD,
    EventMemory,
    EventStoreStatistics,
    InMemoryEventStore,
)
from mcp_actors.transports.http.security import AllowedHostsRequired, HostPolicy, is_loopback
from mcp_actors.transports.http.sessions import SessionRegistry, mint_session_id
from mcp_actors.transports.http.sse import (
    EventTooLarge,
    ServerSentEvent,
    SSEDecoder,
    encode_comment,
    encode_event,
)

# -- SSE codec ---------------------------------------------------------------------


def test_encode_event_fields_in_order() -> None:
    assert encode_event(b"{}", id="p1/2", event="message", retry=500) == (
        b"id: p1/2\nevent: message\nretry: 500\ndata: {}\n\n"
    )
    assert encode_event(b"a\nb\r\nc") == b"data: a\ndata: b\ndata: c\n\n"
    assert encode_comment("keep-alive") == b": keep-alive\n\n"


def test_decoder_round_trips_whatever_the_chunking() -> None:
    stream = (
        encode_event(b'{"a":1}', id="s/0")
        + encode_comment("ping")
        + encode_event(b"x\ny", id="s/1", event="other")
        + b"data: crlf\r\n\r\n"
        + b"data: cr\r\r"
    )
    expected = [
        ServerSentEvent(b'{"a":1}', "message", "s/0"),
        ServerSentEvent(b"x\ny", "other", "s/1"),
        ServerSentEvent(b"crlf", "message", "s/1"),
        ServerSentEvent(b"cr", "message", "s/1"),
    ]
    for size in (1, 2, 3, 7, len(stream)):
        decoder = SSEDecoder()
        events = []
        for start in range(0, len(stream), size):
            events.extend(decoder.feed(stream[start : start + size]))
        assert events == expected, size


def test_an_id_counts_only_once_its_event_is_complete() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\ndata: one\n\nid: 2\ndata: tw") == [
        ServerSentEvent(b"one", "message", "1")
    ]
    # The connection breaks here: resuming must ask for what follows event 1, not 2.
    assert decoder.last_event_id == "1"


def test_priming_event_sets_the_id_and_retry_with_empty_data() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: p1/0\nretry: 250\ndata: \n\n") == [
        ServerSentEvent(b"", "message", "p1/0")
    ]
    assert decoder.retry == 250
    assert decoder.feed(b"id: p1/1\n\n") == []  # no data line: not dispatched...
    assert decoder.last_event_id == "p1/1"  # ...but the cursor moves
    assert decoder.feed(b"retry: soon\n\n") == [] and decoder.retry == 250


def test_an_endless_event_is_refused() -> None:
    decoder = SSEDecoder(max_event_size=64)
    with pytest.raises(EventTooLarge):
        decoder.feed(b"data: " + b"x" * 100)
    decoder = SSEDecoder(max_event_size=64)
    with pytest.raises(EventTooLarge):
        for _ in range(20):
            decoder.feed(b"data: 12345\n")


# -- event store -------------------------------------------------------------------


async def test_event_store_reads_after_a_cursor_per_stream() -> None:
    store = InMemoryEventStore()
    a0 = await store.append("a", b"0")
    b0 = await store.append("b", b"x")
    a1 = await store.append("a", b"1")
    assert len({a0, a1, b0}) == 3
    assert store.stream_of(a1) == "a" and store.stream_of(b0) == "b"
    assert store.stream_of("a/99") is None and store.stream_of("nonsense") is None
    assert [e.payload for e in await store.read("a", None)] == [b"0", b"1"]
    assert [e.payload for e in await store.read("a", a0)] == [b"1"]
    assert await store.read("a", a1) == []
    assert [e.payload for e in await store.read("b", None)] == [b"x"]


async def test_event_memory_is_bounded_per_stream_and_across_sessions() -> None:
    overhead = EVENT_OVERHEAD
    memory = EventMemory(max_bytes=6 * (10 + overhead), max_stream_bytes=4 * (10 + overhead))
    one, two = memory.new_store(), memory.new_store()
    ids = [await one.append("s", b"%010d" % n) for n in range(6)]
    # The stream's bound: its two oldest went; a reader that fell behind skips the gap.
    assert [e.payload for e in await one.read("s", ids[0])] == [b"%010d" % n for n in range(2, 6)]
    assert memory.statistics().gaps == 1
    for n in range(4):
        await two.append("t", b"%010d" % n)
    # The global bound: the server's oldest events went, whatever their session.
    stats = memory.statistics()
    assert stats.bytes <= memory.max_bytes and stats.events == 6 and stats.evicted == 4
    assert [e.payload for e in await one.read("s", None)] == [b"0000000004", b"0000000005"]
    huge = await two.append("big", b"x" * 10 * memory.max_bytes)  # kept alone, as the newest
    assert [e.id for e in await two.read("big", None)] == [huge]
    assert memory.statistics().events == 1 and await one.read("s", None) == []


async def test_event_store_drops_what_was_acknowledged_or_written_out() -> None:
    memory = EventMemory()
    store = memory.new_store()
    ids = [await store.append("s", b"%d" % n) for n in range(5)]
    await store.append("t", b"other")
    await store.acknowledge("s", ids[2])  # the client resumed after ids[2]
    assert [e.payload for e in await store.read("s", ids[2])] == [b"3", b"4"]
    assert memory.statistics().events == 3
    await store.discard("s")
    assert await store.read("s", None) == [] and memory.statistics().streams == 1
    left = memory.statistics()  # what a discarded stream held is no longer counted
    assert (left.events, left.bytes) == (1, len(b"other") + EVENT_OVERHEAD)
    await store.aclose()
    assert memory.statistics() == EventStoreStatistics(0, 0, 0, 0, 0)


# -- Host and Origin ---------------------------------------------------------------


def test_loopback_binds_accept_loopback_names_only() -> None:
    policy = HostPolicy.for_bind("127.0.0.1")
    assert policy.check("127.0.0.1:8000", None) is None
    assert policy.check("localhost:8000", "http://localhost:8000") is None
    assert policy.check("[::1]:8000", None) is None
    assert policy.check("evil.example.com", "http://evil.example.com") is not None
    assert policy.check("127.0.0.1:8000", "http://evil.example.com") is not None
    assert policy.check(None, None) is not None
    assert is_loopback("::1") and is_loopback("localhost") and not is_loopback("0.0.0.0")


def test_public_binds_check_origin_against_the_list_or_same_origin() -> None:
    policy = HostPolicy.for_bind(
        "0.0.0.0", allowed_hosts=["mcp.example"], allowed_origins=["https://app.example:*"]
    )
    assert policy.check("mcp.example", None) is None
    assert policy.check("mcp.example", "http://mcp.example") is None  # same origin
    assert policy.check("mcp.example", "https://app.example:4443") is None
    assert policy.check("mcp.example", "https://other.example") is not None


def test_public_binds_need_a_host_allow_list() -> None:
    with pytest.raises(AllowedHostsRequired, match="--allowed-host"):
        HostPolicy.for_bind("0.0.0.0")
    policy = HostPolicy.for_bind("0.0.0.0", allowed_hosts=["mcp.example:*"])
    # DNS rebinding: a same-origin request under the rebound name.
    assert policy.check("evil.example:80", "http://evil.example:80") is not None
    assert policy.check("mcp.example:8000", "http://mcp.example:8000") is None
    anything = HostPolicy.for_bind("0.0.0.0", allowed_hosts=["*"])  # explicitly: any Host
    assert anything.check("whatever.example", None) is None
    # WebSocket cannot see Host: its Origin-only policy never treats a request as same-origin.
    websocket = HostPolicy.origins_for_bind("0.0.0.0")
    assert websocket.check(None, "http://evil.example") is not None
    assert websocket.check(None, None) is None


def test_a_host_checked_before_gets_the_same_answer() -> None:
    """The answers a policy remembers (a client sends one Host on every request) are the
    answers it gives first; past its bound it still answers every Host."""
    policy = HostPolicy.for_bind("127.0.0.1")
    for _ in range(2):
        assert policy.check("evil.example", None) is not None
        assert policy.check("LOCALHOST:8000", None) is None
    for port in range(200):  # past what it remembers: it starts over, and stays right
        assert policy.check(f"evil{port}.example", None) is not None
        assert policy.check(f"127.0.0.1:{port}", None) is None
    assert policy.check("evil.example", None) is not None
    long = "127.0.0.1:" + "9" * 300  # longer than any Host: answered, not remembered
    assert policy.check(long, None) is None and policy.check(long, None) is None


# -- session table -----------------------------------------------------------------


class _Activity:
    def __init__(self, busy: bool = False, in_flight: bool = False) -> None:
        self.last_activity = trio.current_time()
        self.busy = busy
        self.evictable = not (busy or in_flight)


def _add(
    registry: SessionRegistry, name: str, closed: list[str], client: str = "a", **state: bool
) -> bool:
    admitted = registry.admit(name, _Activity(**state), client)
    if admitted:
        registry.started(name, lambda: closed.append(name))
    return admitted


async def test_registry_caps_and_expires_idle_sessions() -> None:
    closed: list[str] = []
    registry = SessionRegistry(max_sessions=2, idle_timeout=10)
    assert _add(registry, "idle", closed, in_flight=True)
    assert _add(registry, "streaming", closed, busy=True)
    assert not _add(registry, "refused", closed)  # full of sessions that are not idle
    now = trio.current_time()
    assert registry.expire(now + 5) == 0
    assert registry.expire(now + 11) == 1
    assert closed == ["idle"] and len(registry) == 1 and registry.expired == 1
    assert registry.close("streaming") and not registry.close("streaming")
    ids = {mint_session_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(0x21 <= ord(c) <= 0x7E for i in ids for c in i)


async def test_registry_evicts_the_least_recently_used_idle_session_when_full() -> None:
    closed: list[str] = []
    registry = SessionRegistry(max_sessions=3, max_sessions_per_client=2)
    assert _add(registry, "a1", closed, "a")
    assert _add(registry, "a2", closed, "a")
    assert _add(registry, "a3", closed, "a")  # a's cap: a1, the least recently used, goes
    assert closed == ["a1"] and registry.sessions_of("a") == 2
    assert _add(registry, "b1", closed, "b", busy=True)
    registry.get("a2")  # used: a3 is now the least recently used
    assert _add(registry, "c1", closed, "c")  # the global cap: anyone's idle session goes
    assert closed == ["a1", "a3"] and len(registry) == 3 and registry.evicted == 2
    assert _add(registry, "b2", closed, "b", in_flight=True)  # evicts a2
    assert not _add(registry, "b3", closed, "b")  # b's two sessions are busy: refused
    assert registry.sessions_of("b") == 2 and closed == ["a1", "a3", "a2"]
    assert registry.admit("pending", _Activity(), "d")  # c1 goes
    assert closed[-1] == "c1"
    # A session whose actor has not started yet is never evicted.
    assert not _add(registry, "e1", closed, "e")
    registry.close_all()
    registry.started("pending", lambda: closed.append("pending"))  # closed at once
    assert closed[-1] == "pending" and len(registry) == 0 and registry.sessions_of("b") == 0
