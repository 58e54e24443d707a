"""What one gateway hop costs per call: through ``mcp-actors run gateway.toml`` vs direct.

The upstream is the benchmark server (``benchmarks/servers/ours.py``, tool ``add``),
run as its own process. The gateway is ``mcp-actors run gateway.toml`` in another
process, mounting that upstream under the prefix ``up`` over the same transport:

- ``stdio``: client → upstream (stdio) vs client → gateway (stdio) → upstream (stdio,
  the gateway's child);
- ``http``: client → upstream (Streamable HTTP) vs client → gateway (Streamable HTTP)
  → upstream (Streamable HTTP, the same upstream process).

Our Trio client makes ``--calls`` sequential ``tools/call`` per round; rounds
alternate direct and gateway (the machine is shared: the order flips each round)
and the medians are reported: µs per call direct, through the gateway, the hop's
cost (the difference) and its ratio to the direct call (the issue's aim: below 1,
a hop costing less than the upstream call itself).

``--era`` picks the era of every hop (client → gateway and gateway → upstream).

Usage::

    python benchmarks/gateway.py --transport stdio,http --calls 1000 --rounds 5 --era legacy
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from mcp_actors import Client, open_client
from mcp_actors.client.era import Era
from mcp_actors.client.targets import StdioTarget

HERE = Path(__file__).parent
UPSTREAM = HERE / "servers" / "ours.py"
ARGUMENTS = {"a": 1, "b": 2}


def _run_command(target: str, *options: str) -> list[str]:
    return [sys.executable, "-m", "mcp_actors.cli", "run", target, *options]


@asynccontextmanager
async def _http_process(target: str) -> AsyncIterator[str]:
    """Serve ``target`` over Streamable HTTP on a free port in a child process; its URL."""
    process = await trio.lowlevel.open_process(
        _run_command(target, "--transport", "http", "--port", "0"), stderr=subprocess.PIPE
    )
    try:
        assert process.stderr is not None
        announced = b""
        with trio.fail_after(30):
            while b"\n" not in announced:
                chunk = await process.stderr.receive_some()
                if not chunk:
                    break
                announced += chunk
        line = announced.decode(errors="replace").splitlines()[0] if announced else ""
        if " at " not in line:
            raise RuntimeError(f"{target} did not start: {line!r}")
        yield line.rsplit(" at ", 1)[1].strip()
    finally:
        process.terminate()
        await process.wait()


def _gateway_file(folder: Path, upstream: str, era: str) -> Path:
    path = folder / "gateway.toml"
    path.write_text(f'name = "bench-gateway"\n\n[upstreams.up]\n{upstream}\nera = "{era}"\n')
    return path


async def _time_calls(client: Client, tool: str, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await client.call_tool(tool, ARGUMENTS)
    return (time.perf_counter() - started) / calls * 1e6


@asynccontextmanager
async def _pair(transport: str, folder: Path, era: Era) -> AsyncIterator[tuple[Client, Client]]:
    """Clients of the upstream directly and through a gateway, over ``transport``."""
    if transport == "stdio":
        command = ", ".join(f"{word!r}" for word in _run_command(str(UPSTREAM))[1:])
        upstream = f"command = {sys.executable!r}\nargs = [{command}]"
        gateway = _gateway_file(folder, upstream, era)
        direct_target = StdioTarget(sys.executable, tuple(_run_command(str(UPSTREAM))[1:]))
        gateway_target = StdioTarget(sys.executable, tuple(_run_command(str(gateway))[1:]))
        async with (
            open_client(direct_target, era=era) as direct,
            open_client(gateway_target, era=era) as through,
        ):
            yield direct, through
        return
    async with _http_process(str(UPSTREAM)) as upstream_url:
        gateway = _gateway_file(folder, f"url = {upstream_url!r}", era)
        async with (
            _http_process(str(gateway)) as gateway_url,
            open_client(upstream_url, era=era) as direct,
            open_client(gateway_url, era=era) as through,
        ):
            yield direct, through


async def measure(transport: str, calls: int, rounds: int, era: Era) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        async with _pair(transport, Path(folder), era) as (direct, through):
            await _time_calls(direct, "add", 50)  # warm up (the gateway connects upstream)
            await _time_calls(through, "up_add", 50)
            direct_us: list[float] = []
            gateway_us: list[float] = []
            for round_ in range(rounds):
                order = [(direct, "add", direct_us), (through, "up_add", gateway_us)]
                for client, tool, results in order if round_ % 2 == 0 else order[::-1]:
                    results.append(await _time_calls(client, tool, calls))
    direct_median = statistics.median(direct_us)
    gateway_median = statistics.median(gateway_us)
    return {"direct": direct_median, "gateway": gateway_median}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", default="stdio,http", help="stdio, http or both")
    parser.add_argument("--calls", type=int, default=2000, help="sequential calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (odd: median)")
    parser.add_argument(
        "--era",
        choices=["auto", "modern", "legacy"],
        default="auto",
        help="the era of every hop (auto: modern, as our servers speak it)",
    )
    options = parser.parse_args()
    print(
        f"{'transport':<10}{'direct µs/call':>16}{'gateway µs/call':>17}"
        f"{'hop µs':>9}{'hop / direct':>14}"
    )
    for transport in options.transport.split(","):
        figures = trio.run(measure, transport, options.calls, options.rounds, options.era)
        hop = figures["gateway"] - figures["direct"]
        print(
            f"{transport:<10}{figures['direct']:>16.1f}{figures['gateway']:>17.1f}"
            f"{hop:>9.1f}{hop / figures['direct']:>14.2f}"
        )


if __name__ == "__main__":
    main()
