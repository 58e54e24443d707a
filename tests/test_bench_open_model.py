"""Open-model load (``--rate``): percentiles from the intended send times, and ``--find-max``.

The server here is a queue in memory on trio's mock clock: it serves one call at a
time, each in exactly ``service`` seconds, and may stall once. Its latencies are
then known exactly (Lindley's recursion for a single FIFO server), so the bench's
percentiles can be checked against them within the HDR histogram's precision, on
virtual time, whatever the machine's speed.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from test_bench_defaults import REFERENCE, bench

from mcp_actors.bench import BenchConfig, parse_workloads, run_bench
from mcp_actors.bench.wire import Wire

#: The HDR histogram keeps 3 significant digits (0.1 %), and records whole µs.
PRECISION = 0.002


class QueueServer(Wire):
    """One call served at a time, each ``service`` s; from ``stall_at`` s after the
    first call the server does nothing for ``stall_for`` s."""

    def __init__(self, service: float, stall_at: float | None, stall_for: float) -> None:
        self.service = service
        self.stall_at = stall_at
        self.stall_for = stall_for
        self.first_call: float | None = None
        self._calls_send, self._calls = trio.open_memory_channel[Any](math.inf)
        self._replies_send, self._replies = trio.open_memory_channel[bytes](math.inf)

    async def send(self, data: bytes) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            if "id" not in message:
                continue
            if message["method"] == "tools/call" and message["params"]["name"] == "add":
                self._calls_send.send_nowait(message["id"])
                continue
            result: dict[str, Any] = {"content": []}
            if message["method"] == "server/discover":
                result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
            elif message["method"] == "tools/list":
                result = {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]}
            self._reply(message["id"], result)

    def _reply(self, request_id: Any, result: Any) -> None:
        reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
        self._replies_send.send_nowait(json.dumps(reply).encode())

    async def serve(self) -> None:
        async for request_id in self._calls:
            now = trio.current_time()
            if self.first_call is None:
                self.first_call = now
            if self.stall_at is not None and now >= self.first_call + self.stall_at:
                self.stall_at = None
                await trio.sleep(self.stall_for)
            await trio.sleep(self.service)
            self._reply(request_id, {"content": [{"type": "text", "text": "3"}]})

    async def receive(self) -> list[bytes]:
        return [await self._replies.receive()]


def queue_server(service: float, stall_at: float | None = None, stall_for: float = 0.0) -> Any:
    @asynccontextmanager
    async def connect() -> AsyncIterator[Wire]:
        async with trio.open_nursery() as nursery:
            wire = QueueServer(service, stall_at, stall_for)
            nursery.start_soon(wire.serve)
            yield wire
            nursery.cancel_scope.cancel()

    return connect


def expected_latencies(
    rate: float, calls: int, service: float, stall_at: float | None, stall_for: float
) -> list[float]:
    """Each call's latency from its intended time, at a single FIFO server (Lindley):
    it starts when it arrives or when the previous call ends, whichever is later."""
    latencies, free_at, stalled = [], 0.0, False
    for i in range(calls):
        arrival = i / rate
        begins = max(arrival, free_at)
        if stall_at is not None and not stalled and begins >= stall_at:
            stalled, begins = True, begins + stall_for
        free_at = begins + service
        latencies.append(free_at - arrival)
    return sorted(latencies)


def nearest_rank(values: list[float], percentile: float) -> float:
    return values[max(0, math.ceil(percentile * len(values) / 100 - 1e-9) - 1)]


def close(measured: float, expected_s: float) -> bool:
    return abs(measured / 1000 - expected_s) <= PRECISION * expected_s + 1e-6


async def test_open_model_percentiles_match_a_server_of_known_service_time_with_a_stall(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rate, duration, service, stall_at, stall_for = 1000.0, 10.0, 0.0005, 5.0, 0.2
    config = BenchConfig(rates=[rate], duration=duration, warmup=0)
    report = await run_bench(queue_server(service, stall_at, stall_for), config)
    (row,) = report["workloads"]
    assert (row["kind"], row["calls"], row["errors"]) == ("rate", 10_000, 0)
    expected = expected_latencies(rate, 10_000, service, stall_at, stall_for)
    for key, percentile in (
        ("p50_ms", 50),
        ("p99_ms", 99),
        ("p99_9_ms", 99.9),
        ("p99_99_ms", 99.99),
    ):
        assert close(row[key], nearest_rank(expected, percentile)), (key, row[key])
    assert row["p99_ms"] > 100  # the stall delayed every call intended during it
    assert sum(second["calls"] for second in row["timeline"]) == 10_000


async def test_a_closed_loop_hides_the_stall_that_the_open_model_shows(
    autojump_clock: trio.testing.MockClock,
) -> None:
    service, stall_at, stall_for = 0.0005, 2.0, 0.2
    config = BenchConfig(
        workloads=parse_workloads("sequential"), duration=3600, max_calls=10_000, warmup=0
    )
    report = await run_bench(queue_server(service, stall_at, stall_for), config)
    (closed,) = report["workloads"]
    assert closed["errors"] == 0
    assert close(closed["p99_ms"], service)  # one call of 10,000 saw the stall
    opened = await run_bench(
        queue_server(service, stall_at, stall_for),
        BenchConfig(rates=[1000.0], duration=10.0, warmup=0),
    )
    assert opened["workloads"][0]["p99_ms"] > 100 * service * 1000


@pytest.mark.parametrize("capacity", [500.0, 1000.0])
async def test_find_max_converges_on_the_capacity_of_the_server(
    autojump_clock: trio.testing.MockClock, capacity: float
) -> None:
    config = BenchConfig(
        rates=[capacity / 4, capacity * 4], find_max_p99_ms=10 / capacity * 1000, duration=2.0
    )
    report = await run_bench(queue_server(1 / capacity), config)
    search = report["find_max"]
    assert search["stopped"] == "within precision"
    assert abs(search["max_rate"] - capacity) <= 0.03 * capacity, search
    probed = [row["rate"] for row in report["workloads"]]
    assert probed[:2] == [capacity * 4, capacity / 4] and len(probed) <= 20


async def test_the_command_runs_stepped_rates_against_a_real_server() -> None:
    code, report, stderr = await bench(
        f"stdio:{sys.executable} {REFERENCE}", "--rate", "100:200:100", "-d", "0.5"
    )
    assert code == 0, stderr
    rows = report["workloads"]
    assert [(row["workload"], row["calls"], row["errors"]) for row in rows] == [
        ("rate:100", 50, 0),
        ("rate:200", 100, 0),
    ]
    assert all(row["p99_99_ms"] >= row["p99_ms"] >= row["p50_ms"] > 0 for row in rows)
    code, _, stderr = await bench(f"stdio:{sys.executable} {REFERENCE}", "--find-max", "5")
    assert code == 2
    assert "--find-max needs --rate FIRST:LAST" in stderr
