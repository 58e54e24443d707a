"""Streamable HTTP, side by side: ours and the other MCP servers under wrk, with the bare limits.

Every server (``benchmarks/servers/``, the same ``add`` tool) runs in its own process on
127.0.0.1; ``wrk`` (Debian's package; an independent load generator in C) drives
``tools/call add`` through a Lua script with a fresh JSON-RPC id per request. Server CPU
comes from ``/proc/PID/stat`` (user + system, all threads) around each run.

Workloads:

* ``seq``        1 session, 1 connection, one call at a time;
* ``sessions``   50 sessions, 50 connections (request *i* goes to session *i* mod 50);
* ``stateless1`` / ``stateless50``  a stateless server answering JSON, 1 or 50 connections;
* ``modern1`` / ``modern50``  2026-07-28 per-request calls (no session), 1 or 50 connections
  (only servers that speak that revision).

Servers: ``ours`` (lean trio + httptools front end; its quick tools declared ``inline``),
``ours-plain`` (the same with plain ``async def`` tools, as the other servers have them:
``ours.py --plain-tools``), ``ours-hypercorn`` (``ours`` under hypercorn),
``sdk-low`` / ``sdk-high`` (the official Python SDK's low-level ``Server`` and
``MCPServer``, uvicorn), ``fastmcp`` (when ``--fastmcp-python`` names an interpreter that has
it), ``ts`` (the official TypeScript SDK, when ``node`` and its ``node_modules`` are there),
``bare-lean`` / ``bare-hypercorn`` (a fixed reply, no MCP: the front end's own cost).

Method: every server is started once per mode (stateful, stateless) and warmed on each
workload until two successive warm-up runs agree within 5 % (V8 and CPython's caches
warm); then ``--rounds`` rounds run every (workload, server) once, the server order rotating
each round; the figures are medians over rounds. The machine may be shared: read the
medians, and rerun with more rounds when they spread.

Usage::

    python benchmarks/http_compare.py                         # 3 rounds x 3 s
    python benchmarks/http_compare.py --rounds 5 --duration 5 --json out.json
    python benchmarks/http_compare.py --servers ours,ts -w seq,sessions
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
TS_DIR = SERVERS / "ts"
ACCEPT = "application/json, text/event-stream"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"

#: wrk's summary as one ``RESULT {json}`` line (the end of every script of ours).
WRK_DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"errors":%d,"non2xx":%d,"p50_us":%d,"p99_us":%d,"duration_us":%d}\n',
    summary.requests, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), summary.duration))
end
"""
#: The initialize request of a legacy session.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "wrk", "version": "1"},
    },
}

LUA = (
    r"""
local sids = {}
for s in string.gmatch(os.getenv("MCP_SIDS") or "", "[^,]+") do table.insert(sids, s) end
local version = os.getenv("MCP_VERSION")
local modern = version == "2026-07-28"
local meta = ""
if modern then
  meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
         '"io.modelcontextprotocol/clientCapabilities":{}}'
end
local template = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add",' ..
                 '"arguments":{"a":1,"b":2}' .. meta .. '}}'
local counter = 0
request = function()
  counter = counter + 1
  local headers = {["Content-Type"] = "application/json",
                   ["Accept"] = "application/json, text/event-stream",
                   ["MCP-Protocol-Version"] = version}
  if modern then
    headers["Mcp-Method"] = "tools/call"
    headers["Mcp-Name"] = "add"
  end
  if #sids > 0 then headers["Mcp-Session-Id"] = sids[(counter % #sids) + 1] end
  return wrk.format("POST", nil, headers, string.format(template, counter))
end
"""
    + WRK_DONE
)


@attrs.frozen
class Workload:
    name: str
    label: str
    connections: int
    sessions: int  # 0: stateless
    version: str

    @property
    def stateless(self) -> bool:
        return self.sessions == 0


WORKLOADS = {
    w.name: w
    for w in (
        Workload("seq", "1 session, sequential", 1, 1, LEGACY),
        Workload("sessions", "50 sessions", 50, 50, LEGACY),
        Workload("stateless1", "stateless JSON, 1 conn", 1, 0, LEGACY),
        Workload("stateless50", "stateless JSON, 50 conns", 50, 0, LEGACY),
        Workload("modern1", "2026-07-28, 1 conn", 1, 0, MODERN),
        Workload("modern50", "2026-07-28, 50 conns", 50, 0, MODERN),
    )
}


@attrs.frozen
class ServerSpec:
    name: str
    label: str
    command: list[str]
    env: dict[str, str] = attrs.field(factory=dict)
    #: Serves every workload with one process (a bare server ignores MCP entirely).
    bare: bool = False
    modern: bool = False


def server_specs(fastmcp_python: str | None) -> dict[str, ServerSpec]:
    py = sys.executable
    specs = [
        ServerSpec(
            "ours",
            "ours (lean)",
            [py, str(SERVERS / "ours.py")],
            {"MCP_ACTORS_HTTP_FRONT_END": "lean"},
            modern=True,
        ),
        ServerSpec(
            "ours-plain",
            "ours (lean, plain tools)",
            [py, str(SERVERS / "ours.py"), "--plain-tools"],
            {"MCP_ACTORS_HTTP_FRONT_END": "lean"},
            modern=True,
        ),
        ServerSpec(
            "ours-hypercorn",
            "ours (hypercorn)",
            [py, str(SERVERS / "ours.py")],
            {"MCP_ACTORS_HTTP_FRONT_END": "hypercorn"},
            modern=True,
        ),
        ServerSpec("sdk-low", "SDK low-level", [py, str(SERVERS / "sdk_lowlevel.py")]),
        ServerSpec("sdk-high", "SDK MCPServer", [py, str(SERVERS / "sdk_highlevel.py")]),
    ]
    if fastmcp_python:
        specs.append(
            ServerSpec("fastmcp", "FastMCP", [fastmcp_python, str(SERVERS / "fastmcp_server.py")])
        )
    node = shutil.which("node")
    if node and (TS_DIR / "node_modules").is_dir():
        specs.append(ServerSpec("ts", "TS SDK", [node, str(TS_DIR / "server.mjs")]))
    bare = [py, str(SERVERS / "bare_http.py")]
    specs += [
        ServerSpec(
            "bare-lean", "bare trio + httptools (lean)", [*bare, "--front-end", "lean"], bare=True
        ),
        ServerSpec(
            "bare-hypercorn",
            "bare hypercorn-trio",
            [*bare, "--front-end", "hypercorn"],
            bare=True,
        ),
    ]
    return {spec.name: spec for spec in specs}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@attrs.define
class Running:
    spec: ServerSpec
    stateless: bool
    process: subprocess.Popen[bytes]
    port: int
    sessions: list[str] = attrs.field(factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@contextlib.contextmanager
def started(spec: ServerSpec, stateless: bool) -> Iterator[Running]:
    port = free_port()
    command = [*spec.command, "--http", str(port), *(["--stateless"] if stateless else [])]
    env = {**os.environ, **spec.env}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                error = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(f"{spec.name} did not start: {error[-2000:]}")
            time.sleep(0.05)
        yield Running(spec, stateless, process, port)
    finally:
        stop_process(process)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server, killing it if it has not exited 5 s later."""
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def post(port: int, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, str | None]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST",
            "/mcp",
            json.dumps(body),
            {"content-type": "application/json", "accept": ACCEPT, **headers},
        )
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("mcp-session-id")
    finally:
        connection.close()


def open_session(port: int) -> str:
    status, session = post(port, INITIALIZE, {})
    if status != 200 or session is None:
        raise RuntimeError(f"initialize: HTTP {status}")
    headers = {"mcp-session-id": session, "mcp-protocol-version": LEGACY}
    post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return session


def run_wrk(
    server: Running, workload: Workload, seconds: float, script: Path
) -> dict[str, float] | None:
    if not server.spec.bare:
        while len(server.sessions) < workload.sessions:
            server.sessions.append(open_session(server.port))
    env = {
        **os.environ,
        "MCP_SIDS": ",".join(server.sessions[: workload.sessions]),
        "MCP_VERSION": workload.version,
    }
    command = [
        "wrk",
        "-t1",
        f"-c{workload.connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(script),
        server.url,
    ]
    before = cpu_seconds(server.process.pid)
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    cpu = cpu_seconds(server.process.pid) - before
    line = next((row for row in output.splitlines() if row.startswith("RESULT ")), None)
    if line is None:
        return None
    result = json.loads(line.removeprefix("RESULT "))
    requests = result["requests"]
    if requests == 0 or result["non2xx"] > requests * 0.01 or result["errors"]:
        print(f"  ! {server.spec.name} {workload.name}: {result}", file=sys.stderr)
        return None
    return {
        "calls_per_s": requests / (result["duration_us"] / 1e6),
        "cpu_us": cpu * 1e6 / requests,
        "p50_ms": result["p50_us"] / 1000,
        "p99_ms": result["p99_us"] / 1000,
    }


def warm(server: Running, workload: Workload, seconds: float, script: Path) -> None:
    """Run until two successive figures agree within 5 % (at most 10 runs)."""
    previous = None
    for _ in range(10):
        figures = run_wrk(server, workload, seconds, script)
        rate = None if figures is None else figures["calls_per_s"]
        if rate is not None and previous is not None and abs(rate - previous) <= 0.05 * previous:
            return
        previous = rate


def applies(spec: ServerSpec, workload: Workload) -> bool:
    return spec.bare or workload.version != MODERN or spec.modern


def cell(figures: dict[str, float] | None) -> str:
    if figures is None:
        return "—"
    return f"{figures['calls_per_s']:,.0f} / {figures['cpu_us']:,.0f} µs"


def ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per wrk run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds per warm-up run")
    parser.add_argument("--servers", default=None, help="comma-separated names (default: all)")
    parser.add_argument("-w", "--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--fastmcp-python", default=None, help="a Python that has fastmcp")
    parser.add_argument("--json", type=Path, default=None)
    options = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        print("wrk not found: apt-get install wrk", file=sys.stderr)
        return 2
    specs = server_specs(options.fastmcp_python)
    names = options.servers.split(",") if options.servers else list(specs)
    workloads = [WORKLOADS[name] for name in options.workloads.split(",")]
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        script = Path(tmp) / "call.lua"
        script.write_text(LUA)
        servers: dict[tuple[str, bool], Running] = {}
        for name in names:
            spec = specs[name]
            modes = {False} if spec.bare else {w.stateless for w in workloads}
            for stateless in sorted(modes):
                servers[name, stateless] = stack.enter_context(started(spec, stateless))

        def server_for(name: str, workload: Workload) -> Running:
            spec = specs[name]
            return servers[name, False if spec.bare else workload.stateless]

        for workload in workloads:
            for name in names:
                if applies(specs[name], workload):
                    print(f"warming {name} on {workload.name}", file=sys.stderr)
                    warm(server_for(name, workload), workload, options.warmup, script)
        for round_number in range(options.rounds):
            order = names[round_number % len(names) :] + names[: round_number % len(names)]
            for workload in workloads:
                for name in order:
                    if not applies(specs[name], workload):
                        continue
                    figures = run_wrk(
                        server_for(name, workload), workload, options.duration, script
                    )
                    if figures is not None:
                        runs.setdefault((name, workload.name), []).append(figures)
                        print(
                            f"round {round_number + 1} {workload.name:12s} {name:15s}"
                            f" {cell(figures)}"
                            f"  p50 {figures['p50_ms']:.2f} ms  p99 {figures['p99_ms']:.2f} ms",
                            file=sys.stderr,
                        )
    summary = {
        key: {metric: statistics.median(run[metric] for run in values) for metric in values[0]}
        for key, values in runs.items()
    }
    print(render(summary, names, workloads, specs, options))
    if options.json:
        options.json.write_text(
            json.dumps(
                {f"{name}/{workload}": v for (name, workload), v in summary.items()}, indent=2
            )
        )
    return 0


def render(
    summary: dict[tuple[str, str], dict[str, float]],
    names: list[str],
    workloads: list[Workload],
    specs: dict[str, ServerSpec],
    options: argparse.Namespace,
) -> str:
    lines = [
        f"calls/s / server CPU µs per call; medians of {options.rounds} alternating rounds of"
        f" {options.duration:g} s (wrk -t1), servers warmed until stable; {os.cpu_count()} cores",
        "",
        "| workload | " + " | ".join(specs[name].label for name in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for workload in workloads:
        cells = [cell(summary.get((name, workload.name))) for name in names]
        lines.append(f"| {workload.label} | " + " | ".join(cells) + " |")
    lines += ["", "p50 / p99 ms:", ""]
    for workload in workloads:
        cells = []
        for name in names:
            figures = summary.get((name, workload.name))
            cells.append(
                "—" if figures is None else f"{figures['p50_ms']:.1f} / {figures['p99_ms']:.1f}"
            )
        lines.append(f"| {workload.label} | " + " | ".join(cells) + " |")

    def get(name: str, workload: str, metric: str) -> float | None:
        figures = summary.get((name, workload))
        return None if figures is None else figures[metric]

    lines += ["", "ratios (ours = lean front end; ours-plain: its tools not declared inline):"]
    pairs = [
        (ours, other)
        for ours in ("ours", "ours-plain")
        for other in ("ts", "sdk-low", "ours-hypercorn", "ours-plain")
        if ours != other and not (ours == "ours-plain" and other == "ours-hypercorn")
    ]
    for ours, other in pairs:
        if other not in names or ours not in names:
            continue
        for workload in workloads:
            calls = ratio(
                get(ours, workload.name, "calls_per_s"), get(other, workload.name, "calls_per_s")
            )
            cpu = ratio(get(ours, workload.name, "cpu_us"), get(other, workload.name, "cpu_us"))
            if calls != "—" or cpu != "—":
                lines.append(
                    f"  {ours:10s} {workload.label:26s} vs {other:15s}"
                    f" calls/s {calls:>7s}   CPU/call {cpu:>7s}"
                )
    if "ours" in names and "sdk-low" in names:
        for modern, stateless in (("modern1", "stateless1"), ("modern50", "stateless50")):
            cpu = ratio(get("ours", modern, "cpu_us"), get("sdk-low", stateless, "cpu_us"))
            if cpu != "—":
                lines.append(f"  ours {modern} CPU/call vs SDK low-level {stateless}: {cpu}")
    p50, p99 = get("ours", "sessions", "p50_ms"), get("ours", "sessions", "p99_ms")
    if p50 and p99:
        lines.append(f"  ours at 50 sessions: p99 / p50 = {p99 / p50:.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
