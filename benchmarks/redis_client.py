"""Redis from Trio, two ways: redis-py's sync client in threads vs coredis awaited natively.

The runtime used to reach Redis with redis-py's synchronous client, every command
run in a worker thread (``trio.to_thread.run_sync`` under a ``CapacityLimiter(16)``,
over a ``BlockingConnectionPool``): a thread hop per command, and a cancelled
command abandoned in its thread. coredis speaks Redis from Trio itself (through
anyio): no thread, and it multiplexes concurrent commands on few connections.

This starts a throwaway ``redis-server`` on loopback and measures both clients in
the same process, round by round, alternating which goes first:

- workloads: ``get/set`` (each task alternates ``SET k v`` and ``GET k``, one command
  per round trip) and ``pipeline`` (``SET`` + ``GET`` sent together, two commands per
  round trip, no transaction);
- concurrency: 1 (sequential), 16 and 64 Trio tasks issuing commands back to back;
- figures: commands per second, and client CPU per command (this process's CPU
  time, all threads, divided by the commands; ``redis-server``'s own CPU is
  printed apart, per command, as a check that both clients asked it the same work).

It prints one plain-text row per workload, concurrency and client: the median over
the rounds and the spread (min-max), then coredis / threads ratios. redis-py is
needed by this benchmark only (``pip install redis``); the runtime uses coredis.

Usage::

    python benchmarks/redis_client.py                       # 5 rounds of 2 s per cell
    python benchmarks/redis_client.py --rounds 3 --seconds 1 --concurrency 1,16
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import coredis
import redis
import trio

#: Commands one cell may issue at most (a bound next to the duration).
MAX_COMMANDS = 5_000_000
WORKLOADS = ("get/set", "pipeline")
CLIENTS = ("threads", "coredis")
VALUE = b"x" * 64


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def server_cpu(pid: int) -> float:
    """CPU seconds ``pid`` has used (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


@attrs.define
class Cell:
    """One measurement: a client, a workload, a concurrency, one round."""

    commands: int
    seconds: float
    cpu: float
    server_cpu: float

    @property
    def rate(self) -> float:
        return self.commands / self.seconds

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.commands * 1e6

    @property
    def server_us(self) -> float:
        return self.server_cpu / self.commands * 1e6


class ThreadClient:
    """What the runtime did: redis-py's sync client, each round trip in a bounded thread."""

    def __init__(self, url: str, threads: int = 16) -> None:
        pool = redis.BlockingConnectionPool.from_url(url, max_connections=threads + 2, timeout=5)
        self.client = redis.Redis(connection_pool=pool)
        self.limiter = trio.CapacityLimiter(threads)

    async def run(self, call: Callable[[], Any]) -> Any:
        return await trio.to_thread.run_sync(call, limiter=self.limiter, abandon_on_cancel=True)

    async def set_get(self, key: str, step: int) -> None:
        if step % 2:
            await self.run(partial(self.client.get, key))
        else:
            await self.run(partial(self.client.set, key, VALUE))

    async def pipeline(self, key: str, step: int) -> None:
        def both() -> None:
            pipeline = self.client.pipeline(transaction=False)
            pipeline.set(key, VALUE)
            pipeline.get(key)
            pipeline.execute()

        await self.run(both)

    def close(self) -> None:
        self.client.close()
        self.client.connection_pool.disconnect()


class NativeClient:
    """coredis, awaited from Trio (inside ``async with client``)."""

    def __init__(self, client: coredis.Redis[bytes]) -> None:
        self.client = client

    async def set_get(self, key: str, step: int) -> None:
        if step % 2:
            await self.client.get(key)
        else:
            await self.client.set(key, VALUE)

    async def pipeline(self, key: str, step: int) -> None:
        async with self.client.pipeline(transaction=False) as pipeline:
            pipeline.set(key, VALUE)
            pipeline.get(key)


Operation = Callable[[str, int], Awaitable[None]]


async def measure(
    operation: Operation, per_call: int, concurrency: int, seconds: float, redis_pid: int
) -> Cell:
    """``concurrency`` tasks calling ``operation`` back to back for ``seconds``."""
    done = 0
    deadline = trio.current_time() + seconds

    async def worker(index: int) -> None:
        nonlocal done
        key = f"bench:{index}"
        step = 0
        while trio.current_time() < deadline and done < MAX_COMMANDS:
            await operation(key, step)
            step += 1
            done += per_call

    cpu, server, wall = time.process_time(), server_cpu(redis_pid), time.perf_counter()
    async with trio.open_nursery() as nursery:
        for index in range(concurrency):
            nursery.start_soon(worker, index)
    wall = time.perf_counter() - wall
    cpu, server = time.process_time() - cpu, server_cpu(redis_pid) - server
    return Cell(done, wall, cpu, server)


def spread(values: list[float], digits: int) -> str:
    median = statistics.median(values)
    return f"{median:,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def report(
    results: dict[tuple[str, int, str], list[Cell]], concurrencies: list[int], rounds: int
) -> None:
    print(f"Redis client from Trio: {rounds} rounds per cell, median (min-max)")
    header = f"{'workload':<9} {'tasks':>5} {'client':<8} {'commands/s':>28} "
    header += f"{'client CPU us/cmd':>24} {'server CPU us/cmd':>18}"
    print(header)
    for workload in WORKLOADS:
        for concurrency in concurrencies:
            for client in CLIENTS:
                cells = results[(workload, concurrency, client)]
                rate = spread([c.rate for c in cells], 0)
                cpu = spread([c.cpu_us for c in cells], 1)
                server = statistics.median(c.server_us for c in cells)
                row = f"{workload:<9} {concurrency:>5} {client:<8} {rate:>28} {cpu:>24}"
                print(f"{row} {server:>18.1f}")
    print()
    print("coredis / threads (medians)")
    print(f"{'workload':<9} {'tasks':>5} {'commands/s':>11} {'client CPU/cmd':>15}")
    for workload in WORKLOADS:
        for concurrency in concurrencies:
            threads, native = (results[(workload, concurrency, c)] for c in CLIENTS)
            speed = statistics.median(c.rate for c in native)
            speed /= statistics.median(c.rate for c in threads)
            cost = statistics.median(c.cpu_us for c in native)
            cost /= statistics.median(c.cpu_us for c in threads)
            print(f"{workload:<9} {concurrency:>5} {speed:>10.2f}x {cost:>14.2f}x")


async def bench(url: str, redis_pid: int, options: argparse.Namespace) -> None:
    concurrencies = [int(n) for n in options.concurrency.split(",")]
    results: dict[tuple[str, int, str], list[Cell]] = {}
    threaded = ThreadClient(url)
    try:
        async with coredis.Redis.from_url(url, max_connections=64) as client:
            native = NativeClient(client)
            operations: dict[tuple[str, str], tuple[Operation, int]] = {
                ("get/set", "threads"): (threaded.set_get, 1),
                ("get/set", "coredis"): (native.set_get, 1),
                ("pipeline", "threads"): (threaded.pipeline, 2),
                ("pipeline", "coredis"): (native.pipeline, 2),
            }
            for round_number in range(options.rounds):
                order = CLIENTS if round_number % 2 == 0 else CLIENTS[::-1]
                for workload in WORKLOADS:
                    for concurrency in concurrencies:
                        for name in order:
                            operation, per_call = operations[(workload, name)]
                            cell = await measure(
                                operation, per_call, concurrency, options.seconds, redis_pid
                            )
                            results.setdefault((workload, concurrency, name), []).append(cell)
                print(f"round {round_number + 1}/{options.rounds} done", flush=True)
    finally:
        threaded.close()
    report(results, concurrencies, options.rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per cell and round")
    parser.add_argument("--concurrency", default="1,16,64", help="comma-separated task counts")
    options = parser.parse_args()
    server = shutil.which("redis-server")
    if server is None:
        raise SystemExit("redis-server is not installed")
    port = free_port()
    command = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "no", "--loglevel", "warning"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        trio.run(bench, f"redis://127.0.0.1:{port}/0", process.pid, options)
    finally:
        process.terminate()
        process.wait(10)


if __name__ == "__main__":
    main()
