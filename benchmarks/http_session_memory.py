"""What an idle Streamable HTTP session costs in memory, in all and piece by piece.

Two measurements of idle legacy (2025-11-25) sessions, each opened with
``initialize`` + ``notifications/initialized`` and then left alone:

* **RSS per session**: ``benchmarks/servers/ours.py --http`` in its own process (session
  cap raised to fit); the growth of its resident set (``/proc/PID/status`` VmRSS) from
  before the first session to after the last, divided by the number of sessions
  (``--sessions``, default 10,000): once right after the last session opened (the
  newest still awake), and once after ``--settle`` seconds (default 15: past the
  defaults ``session_rest_after`` of 5 s, ``finished_stream_retention`` of 10 s for the
  initialize reply's events, and the sweep), when every idle session sleeps.
* **Piece by piece**: the same server in this process under ``tracemalloc``; the Python
  memory still allocated after ``--traced`` sessions have fallen asleep, grouped by the
  module that allocated it (event store, session stream, session actor, engine, trio's
  channels and tasks, ...), per session.

Usage::

    python benchmarks/http_session_memory.py                      # 10,000 sessions + trace of 1,000
    python benchmarks/http_session_memory.py --sessions 2000 --traced 500
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import socket
import subprocess
import sys
import time
import tracemalloc
from functools import partial
from pathlib import Path

import httpx
import trio

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "ours.py"
ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "memory", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def open_sessions(url: str, count: int, connections: int = 8) -> list[str]:
    """Open ``count`` idle sessions at ``url`` over a few keep-alive connections."""
    sessions: list[str] = []
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:

        async def worker(share: int) -> None:
            for _ in range(share):
                opened = await http.post(url, json=INITIALIZE, headers={"accept": ACCEPT})
                opened.raise_for_status()
                session = opened.headers["mcp-session-id"]
                headers = {
                    "accept": ACCEPT,
                    "mcp-session-id": session,
                    "mcp-protocol-version": "2025-11-25",
                }
                (await http.post(url, json=INITIALIZED, headers=headers)).raise_for_status()
                sessions.append(session)

        async with trio.open_nursery() as nursery:
            for index in range(connections):
                nursery.start_soon(worker, count // connections + (index < count % connections))
    return sessions


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure_rss(count: int, settle: float) -> tuple[float, float]:
    """KiB of resident memory per idle session of a server in its own process: right
    after the last opened, and ``settle`` seconds later."""
    port = free_port()
    command = [sys.executable, str(SERVER), "--http", str(port), "--max-sessions", str(count + 10)]
    process = subprocess.Popen(command)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        trio.run(open_sessions, url, 20)  # warm: code paths, first allocations
        time.sleep(0.5)
        before = rss_kib(process.pid)
        started = time.perf_counter()
        sessions = trio.run(open_sessions, url, count)
        took = time.perf_counter() - started
        opened = rss_kib(process.pid)
        time.sleep(settle)
        after = rss_kib(process.pid)
        print(
            f"{len(sessions):,} idle sessions opened in {took:.1f} s; server RSS"
            f" {before / 1024:.1f} -> {opened / 1024:.1f} MiB, {settle:g} s later"
            f" {after / 1024:.1f} MiB",
            file=sys.stderr,
        )
        return (opened - before) / len(sessions), (after - before) / len(sessions)
    finally:
        process.terminate()
        process.wait(10)


MODULE_GROUPS = (
    ("mcp_actors/transports/event_store", "event store"),
    ("mcp_actors/transports/http/session_stream", "HTTP session stream (response streams)"),
    ("mcp_actors/transports/http/sessions", "session table"),
    ("mcp_actors/transports/", "other transport code"),
    ("mcp_actors/runtime/session", "session actor"),
    ("mcp_actors/runtime/writer", "session writer"),
    ("mcp_actors/runtime/supervisor", "supervisor"),
    ("mcp_actors/runtime/", "other runtime"),
    ("mcp_actors/protocol/", "protocol engine + lifecycle"),
    ("mcp_actors/server/", "server session (handlers, context)"),
    ("trio/_channel", "trio memory channels"),
    ("trio/_core/_run", "trio tasks, nurseries, cancel scopes"),
    ("trio/", "other trio"),
)


def group_of(filename: str) -> str:
    for fragment, name in MODULE_GROUPS:
        if fragment in filename:
            return name
    return "other (" + "/".join(Path(filename).parts[-2:]) + ")"


async def traced(count: int) -> list[tuple[str, float]]:
    """Bytes per session still allocated after ``count`` idle sessions, by module group."""
    from mcp_actors.server.serve_http import serve_http
    from mcp_actors.transports.http.config import HttpConfig

    sys.path.insert(0, str(SERVER.parent))
    from ours import server  # type: ignore[import-not-found]

    # Client and server share this process, slowed down many times by tracemalloc: a
    # stall must not look like an idle keep-alive connection to the server.
    config = HttpConfig(
        max_sessions=count + 100, max_sessions_per_client=None, keep_alive_timeout=300
    )
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, server, port=0, config=config))
        await open_sessions(handle.url, 20)
        gc.collect()
        tracemalloc.start(25)
        before = tracemalloc.take_snapshot()
        await open_sessions(handle.url, count)
        for _ in range(400):  # until they sleep (see --settle), at most 40 s
            if handle.supervisor.statistics().sessions_asleep >= count + 20:
                break
            await trio.sleep(0.1)
        asleep = handle.supervisor.statistics().sessions_asleep
        print(f"{asleep:,} of {count + 20:,} sessions asleep", file=sys.stderr)
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        nursery.cancel_scope.cancel()
    if os.environ.get("MEMORY_DETAILS"):
        details(count, (before, after))
    sizes: collections.Counter[str] = collections.Counter()
    for stat in after.compare_to(before, "traceback"):
        # Attribute each allocation to the line of ours that asked for it (the innermost
        # mcp_actors frame): "trio channel made by the session stream" counts there.
        ours = next(
            (frame for frame in reversed(stat.traceback) if "mcp_actors/" in frame.filename),
            None,
        )
        if ours is None:
            name = group_of(stat.traceback[-1].filename)
        else:
            where = ours.filename.split("mcp_actors/", 1)[1]
            name = f"{group_of(ours.filename)}  [{where}:{ours.lineno}]"
        sizes[name] += stat.size_diff
    return [(name, size / count) for name, size in sizes.most_common() if abs(size) / count >= 64]


def details(count: int, snapshot_pair: tuple[tracemalloc.Snapshot, tracemalloc.Snapshot]) -> None:
    before, after = snapshot_pair
    for stat in after.compare_to(before, "lineno")[:25]:
        frame = stat.traceback[-1]
        print(f"  {stat.size_diff / count:8.0f} B  {frame.filename}:{frame.lineno}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--traced", type=int, default=1_000)
    parser.add_argument("--settle", type=float, default=15.0)
    options = parser.parse_args(argv)
    if options.traced:
        pieces = trio.run(traced, options.traced)
        total = sum(size for _, size in pieces)
        groups: collections.Counter[str] = collections.Counter()
        for name, size in pieces:
            groups[name.split("  [", 1)[0]] += size
        print(f"Python memory per idle session, {options.traced:,} sessions (tracemalloc):")
        for name, size in groups.most_common():
            print(f"  {size:8.0f} B  {name}")
        print(f"  {total:8.0f} B  total ({total / 1024:.1f} KiB)")
        print("the largest single lines (where ours asked for the memory):")
        for name, size in pieces[:15]:
            print(f"  {size:8.0f} B  {name}")
    if options.sessions:
        opened, settled = measure_rss(options.sessions, options.settle)
        print(
            f"RSS per idle session, {options.sessions:,} sessions: {settled:.1f} KiB"
            f" ({opened:.1f} KiB right after the last opened)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
