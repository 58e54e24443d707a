"""What the server's long-lived objects cost CPython's cycle collector.

Every full (generation 2) collection rescans every object the collector tracks, in
the middle of whichever request allocated last: those pauses are a server's latency
spikes (``benchmarks/http_latency.py`` measures them). So the event store, which
holds tens of thousands of events under load (the finished streams a client may
still resume), keeps them as untracked data, and the blocking entry points freeze
the objects of the server's start.
"""

from __future__ import annotations

import gc
import subprocess
import sys

from mcp_actors.transports.http.event_store import (
    EVENT_OVERHEAD,
    EventMemory,
    EventStoreStatistics,
    InMemoryEventStore,
)


def tracked_objects() -> int:
    gc.collect()
    return len(gc.get_objects())


async def test_retained_events_cost_the_cycle_collector_one_object_a_stream() -> None:
    store = InMemoryEventStore()
    streams = 1000
    before = tracked_objects()
    for n in range(streams):
        await store.append(f"p{n}", b"")
        await store.append(f"p{n}", b'{"jsonrpc":"2.0","id":%d,"result":{}}' % n)
    events = await store.read("p0", None)
    assert len(events) == 2 and not any(gc.is_tracked(event) for event in events)
    assert tracked_objects() - before <= streams + 10  # its log each
    for n in range(streams):
        await store.discard(f"p{n}")
    # The logs went at once, not at the store's next sweep.
    assert tracked_objects() - before <= 10
    assert store.statistics() == EventStoreStatistics(0, 0, 0, 0, 0)


async def test_the_bound_drops_the_oldest_event_still_held_whatever_left_before() -> None:
    memory = EventMemory(max_bytes=3 * (1 + EVENT_OVERHEAD))
    store = memory.new_store()
    for stream in "abc":
        await store.append(stream, b"x")
    await store.discard("b")  # out of order: the middle stream leaves first
    await store.append("d", b"x")
    assert memory.statistics().evicted == 0
    await store.append("e", b"x")  # one too many: "a" is the oldest still held
    assert await store.read("a", None) == []
    assert [len(await store.read(stream, None)) for stream in "cde"] == [1, 1, 1]
    assert memory.statistics().evicted == 1
    await store.acknowledge("c", (await store.read("c", None))[0].id)
    await store.append("f", b"x")
    await store.append("g", b"x")  # "d" is now the oldest held
    assert [len(await store.read(stream, None)) for stream in "defg"] == [0, 1, 1, 1]
    assert memory.statistics().evicted == 2


def test_run_stdio_freezes_the_objects_of_its_start() -> None:
    program = (
        "import gc, sys; from mcp_actors import Server, run_stdio; "
        "run_stdio(Server('frozen')); print(gc.get_freeze_count(), file=sys.stderr)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", program], input=b"", capture_output=True, timeout=60, check=True
    )
    assert int(ran.stderr) > 1000  # the modules, classes and functions of its start
