"""What one call costs our own client (``open_client``) compared with the harness's lean client.

Runs sequential and pipelined ``tools/call`` with ``Client.call_tool`` against a stdio
server for ``--duration`` seconds each and prints calls/s with the client's and the
server's CPU per call — the numbers behind the choice of a raw JSON-lines client as
the load generator (``mcp-actors bench`` reports the lean client's CPU per call too).

Usage::

    python benchmarks/client_overhead.py
    python benchmarks/client_overhead.py --duration 3 -- node benchmarks/servers/ts/server.mjs
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import trio

from mcp_actors import open_client
from mcp_actors.bench import procstat
from mcp_actors.transports.stdio import StdioStream

DEFAULT_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "ours.py")]


async def measure(command: list[str], duration: float, depth: int, max_calls: int) -> str:
    process = await trio.lowlevel.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None and process.stdin is not None
    stream = StdioStream(process.stdout, process.stdin)
    try:
        async with open_client(stream) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            calls = 0
            server_before = procstat.usage([process.pid])
            cpu_before = time.process_time()
            start = time.perf_counter()
            deadline = start + duration

            async def caller() -> None:
                nonlocal calls
                while time.perf_counter() < deadline and calls < max_calls:
                    calls += 1
                    await client.call_tool("add", {"a": 1, "b": 2})

            async with trio.open_nursery() as nursery:
                for _ in range(depth):
                    nursery.start_soon(caller)
            elapsed = time.perf_counter() - start
            client_cpu = time.process_time() - cpu_before
            server_after = procstat.usage([process.pid])
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
    server = "-"
    if server_before is not None and server_after is not None:
        used = server_after.cpu_seconds - server_before.cpu_seconds
        server = f"{1e6 * used / calls:,.1f}"
    return (
        f"{'open_client x' + str(depth):<18}{calls:>9,}{calls / elapsed:>11,.0f}"
        f"{1e6 * client_cpu / calls:>14,.1f}{server:>14}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-d", "--duration", type=float, default=2.0)
    parser.add_argument("--max-calls", type=int, default=1_000_000)
    parser.add_argument("command", nargs="*", help="server command (default: servers/ours.py)")
    options = parser.parse_args(argv)
    command = options.command or DEFAULT_SERVER
    print(f"server: {' '.join(command)}")
    print(f"{'client':<18}{'calls':>9}{'calls/s':>11}{'cli µs/call':>14}{'srv µs/call':>14}")
    for depth in (1, 100):
        print(trio.run(measure, command, options.duration, depth, options.max_calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
