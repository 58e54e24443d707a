"""Where a stdio cancellation's time goes: the harness's write, the server's read, the handler.

``mcp-actors bench ... -w cancel`` reports ``observed - sent``: from the harness's
``write(2)`` of ``notifications/cancelled`` to ``cancellation_probe`` seeing
``trio.Cancelled``. This script runs that workload against ``servers/ours.py``, served
over a stdio stream that also reads ``time.monotonic()`` as the session's reader
receives each cancellation, and splits the median in two:

* **write -> read**: the pipe, the server process's wake-up (the kernel's scheduler,
  which a loaded machine delays), trio's pass from ``epoll_wait`` to the reader, the
  ``read(2)`` and the framing;
* **read -> handler**: the engine's decode, the cancel scope, and trio's passes until
  the probe runs (the in-process figure of ``session_micro.py --cancel``).

Each round is a fresh server; medians over rounds. The machine's load average is
printed with the figures (wake-ups are what a loaded machine delays most).

Usage::

    python benchmarks/cancel_breakdown.py                 # 5 rounds of 200 cancellations
    python benchmarks/cancel_breakdown.py --rounds 7 -n 300
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import trio

from mcp_actors.bench import BenchConfig, parse_workloads, run_bench, stdio_connector
from mcp_actors.transports.abc import MessageStream, Outgoing
from mcp_actors.transports.stdio import open_stdio_server_stream

HERE = Path(__file__).resolve().parent
CANCELLED = b'{"jsonrpc":"2.0","method":"notifications/cancelled"'


class ReadStamps(MessageStream):
    """A message stream that reads the clock whenever a cancellation is received."""

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner
        self.direct_writes = inner.direct_writes
        self.answers_after_input_ends = inner.answers_after_input_ends
        self.stamps: list[float] = []

    async def receive(self) -> bytes:
        data = await self.inner.receive()
        if data.startswith(CANCELLED):
            self.stamps.append(time.monotonic())
        return data

    def input_ready(self) -> bool:
        return self.inner.input_ready()

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        await self.inner.send_all(messages)

    async def aclose(self) -> None:
        await self.inner.aclose()


def serve(stamps_file: str) -> None:
    """The server side: ours.py over stdio; at the end, (read, observed) pairs to a file."""
    sys.path.insert(0, str(HERE / "servers"))
    import ours  # benchmarks/servers/ours.py

    stream = ReadStamps(open_stdio_server_stream())
    trio.run(ours.server.serve_session, stream)
    observed = list(ours.observed_cancellations())
    with open(stamps_file, "w") as out:
        for read, seen in zip(stream.stamps, observed, strict=False):
            out.write(f"{read} {seen}\n")


async def one_round(cancellations: int, stamps_file: str) -> float:
    """The p50 write -> handler of one fresh server, in seconds (its stamps in the file)."""
    command = [sys.executable, __file__, "--serve", stamps_file]
    config = BenchConfig(workloads=parse_workloads(f"cancel:{cancellations}"), duration=60)
    report = await run_bench(stdio_connector(command, cwd=str(HERE)), config)
    (result,) = report["workloads"]
    if result.get("errors"):
        raise SystemExit(f"the cancel workload failed: {result.get('first_error')}")
    p50_ms: float = result["p50_ms"]
    return p50_ms / 1000


def read_to_handler(stamps_file: str) -> float:
    """The p50 read -> handler of a round, in seconds, from the server's stamps."""
    pairs = [line.split() for line in Path(stamps_file).read_text().splitlines()]
    return statistics.median(float(seen) - float(read) for read, seen in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("-n", type=int, default=200, help="cancellations per round")
    parser.add_argument("--serve", metavar="STAMPS_FILE", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        serve(options.serve)
        return
    totals, servers = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for number in range(options.rounds):
            stamps_file = os.path.join(scratch, f"round-{number}")
            totals.append(trio.run(one_round, options.n, stamps_file))
            servers.append(read_to_handler(stamps_file))
    load = os.getloadavg()[0]
    total, server = statistics.median(totals), statistics.median(servers)
    print(
        f"cancel over stdio, median of {options.rounds} rounds x {options.n}"
        f" (load average {load:.2f}):\n"
        f"  write -> handler  p50 {total * 1e6:6.0f} µs  (what the bench's cancel p50 says)\n"
        f"  write -> read     p50 {(total - server) * 1e6:6.0f} µs  (pipe, wake-up, trio's pass)\n"
        f"  read -> handler   p50 {server * 1e6:6.0f} µs  (engine, cancel scope, trio's passes)"
    )


if __name__ == "__main__":
    main()
