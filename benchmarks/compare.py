"""Ours against the official SDKs: the same workloads, same client, same machine, alternating.

Servers (``benchmarks/servers/``, identical tools: add, echo, cancellation_probe,
last_cancellation):

* ``ours``          ``ours.py`` — mcp_actors;
* ``sdk-low``       ``sdk_lowlevel.py`` — the official Python SDK's low-level ``Server``;
* ``sdk-high``      ``sdk_highlevel.py`` — the official Python SDK's ``MCPServer``;
* ``ts``            ``ts/server.mjs`` — the official TypeScript SDK's ``McpServer``, when
  ``node`` is on PATH (``npm install`` into ``benchmarks/servers/ts/node_modules`` on first use).

``--transport http`` starts each server with ``--http PORT`` on loopback instead and
drives it with the lean HTTP client (``mcp_actors/bench/http.py``); per-session memory
(``idle:N``) is then the growth of the one server process divided by N.

Each round runs every server once, in order (ours, sdk-low, sdk-high, ts, ours, ...),
each a fresh process; the figures are medians over rounds. Ratios say how many
times better ours is (throughput: ours/theirs; latency, CPU, memory: theirs/ours).

Usage::

    python benchmarks/compare.py                        # 3 rounds x 2 s per workload
    python benchmarks/compare.py --rounds 5 --duration 3 --json results.json
    python benchmarks/compare.py --servers ours,sdk-low -w sequential,pipelined:100
    python benchmarks/compare.py \
        --servers "ours,before=env PYTHONPATH=/tmp/old python benchmarks/servers/ours.py"

``--servers`` takes names from the list above and ``NAME=COMMAND`` for any other stdio
server (separated by commas, so a command cannot contain one).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import trio
from http_compare import stop_process  # benchmarks/: how a server is stopped

from mcp_actors.bench import BenchConfig, BenchError, parse_workloads, run_bench, stdio_connector
from mcp_actors.bench.http import http_connector

HERE = Path(__file__).resolve().parent
SERVERS_DIR = HERE / "servers"
TS_DIR = SERVERS_DIR / "ts"
DEFAULT_WORKLOADS = "sequential,pipelined:100,concurrent:8,ping,large,churn:10,idle:10,cancel:20"

#: (metric key, label, higher is better; None: no ratio, e.g. the shared client's CPU)
LOAD_METRICS: tuple[tuple[str, str, bool | None], ...] = (
    ("calls_per_s", "calls/s", True),
    ("p50_ms", "p50 ms", False),
    ("p99_ms", "p99 ms", False),
    ("server_cpu_us_per_call", "srv µs/call", False),
    ("client_cpu_us_per_call", "cli µs/call", None),
)
METRICS: dict[str, tuple[tuple[str, str, bool | None], ...]] = {
    "sequential": LOAD_METRICS,
    "pipelined": LOAD_METRICS,
    "concurrent": LOAD_METRICS,
    "ping": LOAD_METRICS,
    "large": LOAD_METRICS,
    "churn": (
        ("calls_per_s", "sessions/s", True),
        ("p50_ms", "p50 ms", False),
        ("server_cpu_us_per_call", "srv µs/session", False),
    ),
    "idle": (("rss_per_session_kb", "RSS KB/session", False),),
    "cancel": (("p50_ms", "p50 ms", False), ("p99_ms", "p99 ms", False)),
}


def server_commands(names: list[str], install_ts: bool) -> dict[str, list[str]]:
    python = sys.executable
    known = {
        "ours": [python, str(SERVERS_DIR / "ours.py")],
        "sdk-low": [python, str(SERVERS_DIR / "sdk_lowlevel.py")],
        "sdk-high": [python, str(SERVERS_DIR / "sdk_highlevel.py")],
    }
    commands = {}
    for name in names:
        if "=" in name:  # NAME=COMMAND: any other server, e.g. an older checkout of ours
            label, _, command = name.partition("=")
            commands[label] = shlex.split(command)
        elif name == "ts":
            node = ts_server(install_ts)
            if node is not None:
                commands[name] = node
        elif name in known:
            commands[name] = known[name]
        else:
            raise SystemExit(f"unknown server {name!r}; known: ours, sdk-low, sdk-high, ts")
    return commands


def ts_server(install: bool) -> list[str] | None:
    """The TypeScript SDK server's command, installing its package on first use."""
    node = shutil.which("node")
    if node is None:
        print("compare: no node on PATH: skipping the TypeScript SDK server", file=sys.stderr)
        return None
    if not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        npm = shutil.which("npm")
        if not install or npm is None:
            print(
                "compare: TypeScript SDK not installed (run npm install --prefix"
                f" {TS_DIR}): skipping it",
                file=sys.stderr,
            )
            return None
        print(f"compare: npm install in {TS_DIR} ...", file=sys.stderr)
        try:
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(TS_DIR)],
                check=True,
                timeout=600,
                stdout=subprocess.DEVNULL,
            )
        except (subprocess.SubprocessError, OSError) as error:
            print(f"compare: npm install failed ({error}): skipping TypeScript", file=sys.stderr)
            return None
    return [node, str(TS_DIR / "server.mjs")]


def run_once(
    command: list[str], config: BenchConfig, label: str, quiet: bool, transport: str
) -> dict[str, Any]:
    progress = None
    if not quiet:

        def progress(text: str) -> None:
            if sys.stderr.isatty():
                sys.stderr.write(text.replace("  ", f"  [{label}] ", 1) if text.strip() else text)
                sys.stderr.flush()

    gc.collect()
    if transport == "stdio":
        target = "stdio:" + " ".join(command)
        return trio.run(
            lambda: run_bench(stdio_connector(command), config, progress=progress, target=target)
        )
    with http_server(command) as (url, pid):
        config = attrs.evolve(config, server_pid=pid)
        connect = http_connector(url, pid=pid)
        return trio.run(lambda: run_bench(connect, config, progress=progress, target=url))


@contextlib.contextmanager
def http_server(command: list[str]) -> Iterator[tuple[str, int]]:
    """Start ``command --http PORT`` on a free loopback port; stop it afterwards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [*command, "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise BenchError(f"{' '.join(command)} --http {port} exited ({process.returncode})")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise BenchError(f"{' '.join(command)} is not listening after 60 s") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        stop_process(process)


def median_of(values: list[Any]) -> float | None:
    numbers = [v for v in values if isinstance(v, int | float)]
    return statistics.median(numbers) if numbers else None


def summarize(runs: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """server -> workload -> metric -> median (plus the raw values)."""
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    for server, reports in runs.items():
        per_workload: dict[str, dict[str, Any]] = {}
        for report in reports:
            for row in report["workloads"]:
                slot = per_workload.setdefault(row["workload"], {"kind": row["kind"], "rows": []})
                slot["rows"].append(row)
        for slot in per_workload.values():
            rows = slot.pop("rows")
            slot["errors"] = sum(row.get("errors") or 0 for row in rows)
            slot["notes"] = sorted(
                {row.get("skipped") or row.get("failed") or "" for row in rows} - {""}
            )
            for key, _, _ in METRICS.get(slot["kind"], ()):
                values = [row.get(key) for row in rows]
                slot[key] = median_of(values)
                slot[key + "_runs"] = values
        summary[server] = per_workload
    return summary


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}"


def render(summary: dict[str, dict[str, dict[str, Any]]], workloads: list[str]) -> str:
    servers = list(summary)
    base = servers[0]
    others = servers[1:]
    header = f"{'workload':<15}{'metric':<16}" + "".join(f"{s:>12}" for s in servers)
    header += "".join(f"{base + ' vs ' + s:>18}" for s in others)
    lines = [header, "-" * len(header)]
    for workload in workloads:
        kind = next((summary[s][workload]["kind"] for s in servers if workload in summary[s]), None)
        if kind is None:
            continue
        for i, (key, label, higher) in enumerate(METRICS.get(kind, ())):
            values = [summary[s].get(workload, {}).get(key) for s in servers]
            row = f"{workload if i == 0 else '':<15}{label:<16}" + "".join(
                f"{_fmt(v):>12}" for v in values
            )
            ours = values[0]
            for theirs in values[1:]:
                if ours and theirs and higher is not None:
                    ratio = ours / theirs if higher else theirs / ours
                    row += f"{f'{ratio:.2f}x':>18}"
                else:
                    row += f"{'-':>18}"
            lines.append(row)
        for s in servers:
            slot = summary[s].get(workload, {})
            if slot.get("errors") or slot.get("notes"):
                notes = "; ".join(slot.get("notes", []))
                lines.append(f"{'':<15}({s}: errors {slot.get('errors')}; {notes})")
    lines.append(
        "ratios: how many times better the first server is (throughput ours/theirs;"
        " latency, CPU, memory theirs/ours)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--servers",
        default="ours,sdk-low,sdk-high,ts",
        help="names or NAME=COMMAND, comma-separated",
    )
    parser.add_argument("-w", "--workloads", default=DEFAULT_WORKLOADS)
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="http: each server runs with --http PORT; the lean HTTP client drives it",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-d", "--duration", type=float, default=2.0)
    parser.add_argument("--max-calls", type=int, default=1_000_000)
    parser.add_argument(
        "--warmup", type=float, default=3.0, help="unmeasured seconds first (V8 takes seconds)"
    )
    parser.add_argument("--no-install", action="store_true", help="never run npm install")
    parser.add_argument(
        "--json", type=Path, default=None, help="write every run and the medians here"
    )
    parser.add_argument("--quiet", action="store_true")
    options = parser.parse_args(argv)
    try:
        workloads = parse_workloads(options.workloads)
    except BenchError as error:
        parser.error(str(error))
    config = BenchConfig(
        workloads=workloads,
        duration=options.duration,
        max_calls=options.max_calls,
        warmup=options.warmup,
    )
    commands = server_commands(options.servers.split(","), install_ts=not options.no_install)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in commands}
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    for round_number in range(1, options.rounds + 1):
        for name, command in commands.items():
            if not options.quiet:
                print(f"round {round_number}/{options.rounds}: {name}", file=sys.stderr)
            try:
                runs[name].append(run_once(command, config, name, options.quiet, options.transport))
            except BaseException as error:
                if isinstance(error, KeyboardInterrupt):
                    raise
                print(f"compare: {name} failed: {error!r}", file=sys.stderr)
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
    summary = summarize({name: reports for name, reports in runs.items() if reports})
    names = [w.name for w in workloads]
    print(
        f"{started}  {options.transport}  rounds {options.rounds}"
        f"  {options.duration:g} s per workload"
        f"  load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}"
        f"  ({os.cpu_count()} CPUs)"
    )
    for name, command in commands.items():
        print(f"  {name:<9} {' '.join(command)}")
    print()
    print(render(summary, names))
    if options.json is not None:
        options.json.write_text(
            json.dumps(
                {
                    "date": started,
                    "rounds": options.rounds,
                    "duration": options.duration,
                    "servers": commands,
                    "medians": summary,
                    "runs": runs,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
