"""What an API call costs the caller: httpx on Trio vs :class:`.api_client.ApiClient`.

Both clients make the same calls (``GET /products/42``, keep-alive, from ``--concurrency``
tasks) to our API service in another process; the figure is this process's CPU time
per call (``os.times``: user + system), which is what a tool pays on every call, and
which neither the API's speed nor the machine's load moves much. Alternating rounds,
medians.

Run: ``python -m benchmarks.realio.client_cost --calls 5000 --rounds 3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Awaitable, Callable

import httpx
import trio

from . import processes
from .api_client import open_api

Get = Callable[[str], Awaitable[bytes]]


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


async def _drive(get: Get, calls: int, concurrency: int) -> float:
    """CPU µs per call of ``calls`` calls from ``concurrency`` tasks."""
    left = calls

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await get("/products/42")

    await get("/products/42")  # connect outside the measurement
    started = _cpu()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    return (_cpu() - started) / calls * 1e6


async def with_httpx(port: int, calls: int, concurrency: int) -> float:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits) as client:

        async def get(target: str) -> bytes:
            response = await client.get(target)
            response.raise_for_status()
            return response.content

        return await _drive(get, calls, concurrency)


async def with_api_client(port: int, calls: int, concurrency: int) -> float:
    async with open_api("127.0.0.1", port, max_connections=64) as api:
        return await _drive(api.get, calls, concurrency)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1)
    options = parser.parse_args(argv)
    port = processes.free_port()
    results: dict[str, list[float]] = {"httpx": [], "ApiClient": []}
    with processes.started(processes.api_service(port), port):
        for _ in range(options.rounds):
            for name, measure in (("httpx", with_httpx), ("ApiClient", with_api_client)):
                cost = trio.run(measure, port, options.calls, options.concurrency)
                results[name].append(cost)
    for name, costs in results.items():
        print(f"{name}: {statistics.median(costs):.0f} µs CPU per call (rounds: {costs})")


if __name__ == "__main__":
    main()
