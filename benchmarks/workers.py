"""Modern-era ``tools/call`` throughput with 1 and with N workers on one port (``--workers``).

The server is ``benchmarks/servers/ours.py`` (its ``add`` tool) under ``mcp-actors run
--transport http --workers N``; ``wrk`` (Debian's package, a load generator in C) posts
2026-07-28 ``tools/call add`` requests — self-contained, no session, so any worker
answers — through a Lua script with a fresh JSON-RPC id each, over ``--connections``
keep-alive connections. Rounds alternate the worker counts (1, N, 1, N... then N, 1...)
so that whatever else the machine does falls on both alike; the figures are medians
over rounds, and the ratio is median(N) / median(1).

Read the ratio with the machine in mind: wrk itself needs CPU, and on a 2-core machine
two workers plus wrk contend for the two cores (shared with anything else running).

Usage::

    python benchmarks/workers.py                      # 5 rounds x 5 s, 1 vs 2 workers
    python benchmarks/workers.py --rounds 7 --duration 8 --workers 2 --connections 64
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from http_compare import WRK_DONE  # benchmarks/: the same RESULT line

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "ours.py"

LUA = (
    r"""
local template = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add",' ..
  '"arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
  '"io.modelcontextprotocol/clientCapabilities":{}}}}'
local counter = 0
request = function()
  counter = counter + 1
  local headers = {["Content-Type"] = "application/json",
                   ["Accept"] = "application/json, text/event-stream",
                   ["MCP-Protocol-Version"] = "2026-07-28",
                   ["Mcp-Method"] = "tools/call", ["Mcp-Name"] = "add"}
  return wrk.format("POST", "/mcp", headers, string.format(template, counter))
end
"""
    + WRK_DONE
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(workers: int, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", str(SERVER)]
    command += ["--transport", "http", "--port", str(port), "--workers", str(workers)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        if b"serving" in line:
            return process
    process.kill()
    raise SystemExit(f"the server with {workers} worker(s) did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_wrk(port: int, seconds: int, connections: int, script: Path) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s"]
    command += ["-s", str(script)]
    command.append(f"http://127.0.0.1:{port}/mcp")
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    line = next(x for x in output.splitlines() if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    if result["non2xx"]:
        raise SystemExit(f"the server answered errors: {result}")
    result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
    return result  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="N to compare with 1 (default 2)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=5, help="seconds per run")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--json", type=Path, default=None, help="write the raw figures here")
    options = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    counts = [1, options.workers]
    figures: dict[int, list[dict[str, float]]] = {count: [] for count in counts}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "call.lua"
        script.write_text(LUA)
        servers = {count: (port := free_port(), start(count, port)) for count in counts}
        try:
            for port, _ in servers.values():  # warm up
                run_wrk(port, 2, options.connections, script)
            for round_number in range(options.rounds):
                order = counts if round_number % 2 == 0 else counts[::-1]
                for count in order:
                    port = servers[count][0]
                    result = run_wrk(port, options.duration, options.connections, script)
                    figures[count].append(result)
                    p50, p99 = result["p50_us"] / 1000, result["p99_us"] / 1000
                    print(
                        f"round {round_number + 1}: {count} worker(s): {result['rps']:8.0f}"
                        f" calls/s  p50 {p50:.1f} ms  p99 {p99:.1f} ms"
                        f"  socket errors {result['errors']}",
                        file=sys.stderr,
                    )
        finally:
            for _, process in servers.values():
                stop(process)
    medians = {count: statistics.median(r["rps"] for r in runs) for count, runs in figures.items()}
    print(
        f"\nmodern-era tools/call, wrk -t1 -c{options.connections}, {options.rounds} rounds"
        f" x {options.duration}s, medians (machine: {os.cpu_count()} cores, shared):"
    )
    for count in counts:
        p50 = statistics.median(r["p50_us"] for r in figures[count]) / 1000
        print(f"  {count} worker(s): {medians[count]:8.0f} calls/s   p50 {p50:.1f} ms")
    print(f"  ratio {options.workers} / 1 workers: {medians[options.workers] / medians[1]:.2f}x")
    if options.json is not None:
        options.json.write_text(json.dumps({str(k): v for k, v in figures.items()}, indent=1))


if __name__ == "__main__":
    main()
