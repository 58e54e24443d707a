"""What a tool's call costs the caller: each backend's general client vs the tools' own.

- the API: httpx on Trio vs :class:`.api_client.ApiClient`, both ``GET /products/42``
  to our API service;
- Redis: coredis (as :mod:`mcp_actors.shared.redis_client` opens it) vs
  :class:`.resp_client.RespClient`, both ``ZREVRANGE`` of a ten-member sorted set, as
  ``search_products`` sends it, to Debian's ``redis-server``.

Keep-alive, from ``--concurrency`` tasks, each backend in another process; the figure is
this process's CPU time per call (``os.times``: user + system), which is what a tool
pays on every call, and which neither the backend's speed nor the machine's load moves
much. Alternating rounds, medians.

Run: ``python -m benchmarks.realio.client_cost --calls 5000 --rounds 3``.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Final

import httpx
import trio

from mcp_actors.shared.redis_client import open_redis

from . import processes
from .api_client import open_api
from .resp_client import open_resp

Call = Callable[[], Awaitable[object]]
#: The sorted set the Redis clients read, and the command.
POPULAR: Final = "cost:popular"
ZREVRANGE: Final = ("ZREVRANGE", POPULAR, 0, 9)


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


async def _drive(call: Call, calls: int, concurrency: int) -> float:
    """CPU µs per call of ``calls`` calls from ``concurrency`` tasks."""
    left = calls

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await call()

    await call()  # connect outside the measurement
    started = _cpu()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    return (_cpu() - started) / calls * 1e6


async def with_httpx(port: int, calls: int, concurrency: int) -> float:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits) as client:

        async def get() -> bytes:
            response = await client.get("/products/42")
            response.raise_for_status()
            return response.content

        return await _drive(get, calls, concurrency)


async def with_api_client(port: int, calls: int, concurrency: int) -> float:
    async with open_api("127.0.0.1", port, max_connections=64) as api:
        return await _drive(partial(api.get, "/products/42"), calls, concurrency)


async def with_coredis(port: int, calls: int, concurrency: int) -> float:
    async with open_redis(f"redis://127.0.0.1:{port}/0", max_connections=16) as redis:
        client = redis.client
        await client.zadd(POPULAR, {f"product:{n}": n for n in range(10)})
        return await _drive(partial(client.zrange, POPULAR, 0, 9, rev=True), calls, concurrency)


async def with_resp_client(port: int, calls: int, concurrency: int) -> float:
    async with open_resp("127.0.0.1", port, max_connections=16) as redis:
        return await _drive(partial(redis.call, *ZREVRANGE), calls, concurrency)


#: What is measured: (name, backend, how), in the order of each round.
MEASURED: Final = (
    ("httpx", "api", with_httpx),
    ("ApiClient", "api", with_api_client),
    ("coredis", "redis", with_coredis),
    ("RespClient", "redis", with_resp_client),
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1)
    options = parser.parse_args(argv)
    ports = {"api": processes.free_port(), "redis": processes.free_port()}
    results: dict[str, list[float]] = {name: [] for name, _, _ in MEASURED}
    with (
        processes.started(processes.api_service(ports["api"]), ports["api"]),
        processes.started(processes.redis(ports["redis"]), ports["redis"]),
    ):
        for _ in range(options.rounds):
            for name, backend, measure in MEASURED:
                cost = trio.run(measure, ports[backend], options.calls, options.concurrency)
                results[name].append(cost)
    for name, costs in results.items():
        print(f"{name}: {statistics.median(costs):.0f} µs CPU per call (rounds: {costs})")


if __name__ == "__main__":
    main()
