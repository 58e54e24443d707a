"""In-process gateway hop: our client calling a tool directly vs through a mounted Upstream.

Everything runs in one Trio process over the in-memory transport (no pipes, no
sockets), so the work a hop adds is all Python and can be counted exactly: run it
under callgrind and subtract two call counts to drop the start-up::

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/gateway_micro.py gateway --era modern --calls 1200
    # ... and --calls 200; (Ir(1200) - Ir(200)) / 1000 = instructions per call

It also prints µs per call and the Trio task steps and spawns per call (an
instrument counts them): the scheduler passes a hop adds are most of its cost.

``--tool add`` (the default) is declared ``inline=True``: served by the upstream's reader
with no task, the cheapest call there is. ``--tool add_awaiting`` awaits once, as any
tool that does I/O does, so the upstream serves it as a request actor of its own.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import trio

from mcp_actors import Server, open_client
from mcp_actors.gateway import Upstream

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from ours import server as upstream_server

ARGUMENTS = {"a": 1, "b": 2}


@upstream_server.tool
async def add_awaiting(a: int, b: int) -> int:
    """``add`` after one checkpoint: the shape of a tool that awaits I/O."""
    await trio.lowlevel.checkpoint()
    return a + b


class _Steps(trio.abc.Instrument):
    """Counts task steps and spawns."""

    def __init__(self) -> None:
        self.steps = 0
        self.spawned = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps += 1

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1


async def measure(path: str, era: str, calls: int, tool_name: str) -> None:
    gateway = Server("gateway")
    gateway.mount(Upstream(upstream_server, era=era), prefix="up")  # type: ignore[arg-type]
    target, tool = (
        (upstream_server, tool_name) if path == "direct" else (gateway, f"up_{tool_name}")
    )
    async with open_client(target, era=era) as client:  # type: ignore[arg-type]
        for _ in range(50):  # warm up (the gateway connects upstream)
            await client.call_tool(tool, ARGUMENTS)
        steps = _Steps()
        trio.lowlevel.add_instrument(steps)
        started = time.perf_counter()
        for _ in range(calls):
            await client.call_tool(tool, ARGUMENTS)
        elapsed = time.perf_counter() - started
        trio.lowlevel.remove_instrument(steps)
    print(
        f"{path} {era} {tool_name}: {elapsed / calls * 1e6:.1f} µs/call,"
        f" {steps.steps / calls:.2f} task steps/call, {steps.spawned / calls:.2f} spawns/call"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", choices=["direct", "gateway"])
    parser.add_argument("--era", choices=["legacy", "modern"], default="modern")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--tool", choices=["add", "add_awaiting"], default="add")
    options = parser.parse_args()
    trio.run(measure, options.path, options.era, options.calls, options.tool)


if __name__ == "__main__":
    main()
