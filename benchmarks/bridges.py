"""What the asyncio and sync fronts cost per call, against the Trio client itself.

The same in-process server (memory transport, tool ``add``) is called sequentially
``--calls`` times from Trio (``open_client``), from asyncio (``aio.open_client``)
and from blocking code (``sync.open_client``); the fronts add two thread hops per
call (``TrioToken.run_sync_soon`` there, a future settled back). Prints calls/s and
microseconds per call for each.

Usage::

    python benchmarks/bridges.py --calls 5000
"""

from __future__ import annotations

import argparse
import asyncio
import time

import trio

from mcp_actors import Server, aio, open_client, sync


def make_server() -> Server:
    server = Server("bench")

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    return server


ARGUMENTS = {"a": 1, "b": 2}


async def with_trio(calls: int) -> float:
    async with open_client(make_server()) as client:
        started = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("add", ARGUMENTS)
        return time.perf_counter() - started


async def with_asyncio(calls: int) -> float:
    async with aio.open_client(make_server()) as client:
        started = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("add", ARGUMENTS)
        return time.perf_counter() - started


def with_sync(calls: int) -> float:
    with sync.open_client(make_server()) as client:
        started = time.perf_counter()
        for _ in range(calls):
            client.call_tool("add", ARGUMENTS)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000, help="sequential calls per front")
    calls = parser.parse_args().calls
    results = {
        "trio": trio.run(with_trio, calls),
        "asyncio (aio)": asyncio.run(with_asyncio(calls)),
        "sync": with_sync(calls),
    }
    print(f"{'front':<16}{'calls/s':>10}{'µs/call':>10}")
    for front, seconds in results.items():
        print(f"{front:<16}{calls / seconds:>10,.0f}{seconds / calls * 1e6:>10.1f}")


if __name__ == "__main__":
    main()
