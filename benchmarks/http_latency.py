"""Latency of Streamable HTTP calls, and the garbage collector's pauses in the server.

A single 2025-11-25 session (``benchmarks/servers/ours.py --http``) answers ``--calls``
sequential ``tools/call add`` on one keep-alive connection (``http.client``), every call
timed; or (``--wrk-sessions N``) ``wrk`` drives N sessions on N connections for
``--seconds``. The server records each of CPython's collections through
``gc.callbacks``: its generation and how long it took. Printed: the tracked objects one
retained stream costs the event store; p50 / p99 / p99.9 / max per call and how many
took over 10 ms (wrk: calls/s, p50, p99); the full (generation 2) collections during the
run (count, median, max, total, each), the young ones, and the cyclic garbage freed.

Why: a server that retains many small objects (the resumability store keeps finished
response streams for ``HttpConfig.finished_stream_retention`` seconds) pays for them at
every full collection, and those pauses are the tail of its latency.

Usage::

    python benchmarks/http_latency.py                          # 30,000 calls
    python benchmarks/http_latency.py --wrk-sessions 50 --seconds 10
    python benchmarks/http_latency.py --census                 # + the types that grew
    python benchmarks/http_latency.py --stateless              # no session: JSON replies
    python benchmarks/http_latency.py --wrk-sessions 50 --seconds 30 --no-gc-policy  # before it
    python benchmarks/http_latency.py --threshold 5000         # the server's gc.set_threshold

The server applies the serving GC policy (:mod:`mcp_actors.runtime.gc_policy`: start-up
objects frozen, a full collection at most every 1,000 generation-1 collections) unless
``--no-gc-policy``: then it keeps the interpreter's thresholds (or ``--threshold``'s) and
freezes nothing. With the policy, ``--threshold``'s third value is raised to the policy's.

``--census`` counts the tracked objects (not frozen) by type at a gen-1 or gen-2
collection at most every 2 s (it costs the server milliseconds each time: the latency
figures of that run are not the ones to quote). To measure another version of
mcp_actors, put its checkout first: ``PYTHONPATH=/its/checkout python ...``. The machine
may be shared: rerun, alternate versions, and compare medians.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import http.client
import json
import os
import runpy
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from http_compare import (  # benchmarks/: the same wrk script, sessions and requests
    ACCEPT,
    INITIALIZE,
    LEGACY,
    LUA,
    open_session,
    stop_process,
)

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "ours.py"
#: What the server writes on stderr (a file: a pipe nobody reads during the run would
#: fill and stop the server) for each collection: a JSON object after it.
GC_LINE = "GC "


def serve_recording_collections(
    port: int, census: bool, policy: bool, threshold: list[int] | None, stateless: bool
) -> None:
    """Run ``ours.py --http PORT`` in this process, reporting each collection."""
    if threshold:
        gc.set_threshold(*threshold)
    started: list[float] = []
    first: list[collections.Counter[str]] = []
    last_census = [0.0]
    if not policy:  # the server without its GC policy: no freeze, these thresholds
        gc.freeze = lambda: None
        gc.set_threshold = lambda *thresholds: None

    def on_collection(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
            return
        pause = time.perf_counter() - started.pop()
        record: dict[str, Any] = {
            "generation": info["generation"],
            "at": time.time(),
            "ms": pause * 1000,
            "collected": info["collected"],
        }
        # The census: every tracked object not frozen, by type, at most every 2 s.
        if census and info["generation"] > 0 and time.monotonic() > last_census[0] + 2:
            last_census[0] = time.monotonic()
            objects = gc.get_objects()
            record["objects"] = len(objects)
            types = collections.Counter(type(o).__name__ for o in objects)
            del objects
            if not first:
                first.append(types)
            record["grew"] = (types - first[0]).most_common(8)
        sys.stderr.write(GC_LINE + json.dumps(record) + "\n")
        sys.stderr.flush()

    gc.callbacks.append(on_collection)
    sys.argv = [str(SERVER), "--http", str(port), *(["--stateless"] if stateless else [])]
    runpy.run_path(str(SERVER), run_name="__main__")


def tracked_per_retained_stream(streams: int = 10_000) -> float:
    """Objects the collector tracks per finished stream held in an in-memory event store
    (two events each, as a ``tools/call`` POST leaves: its priming event, its response)."""
    import trio

    from mcp_actors.transports.http.event_store import InMemoryEventStore

    async def fill(store: InMemoryEventStore) -> None:
        for n in range(streams):
            await store.append(f"p{n}", b"")
            await store.append(f"p{n}", b'{"jsonrpc":"2.0","id":%d,"result":{}}' % n)

    store = InMemoryEventStore()
    gc.collect()
    before = len(gc.get_objects())
    trio.run(fill, store)
    gc.collect()
    return (len(gc.get_objects()) - before) / streams


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server_process(options: list[str]) -> Iterator[tuple[int, Callable[[], str]]]:
    """The recording server on a free port, and what stops it and returns its stderr."""
    port = free_port()
    command = [sys.executable, __file__, "--serve", str(port), *options]
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)

        def stop() -> str:
            stop_process(process)
            stderr.seek(0)
            return stderr.read().decode()

        try:
            deadline = time.monotonic() + 30
            while True:
                with (
                    contextlib.suppress(OSError),
                    socket.create_connection(("127.0.0.1", port), 0.2),
                ):
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {stop()[-2000:]}")
                time.sleep(0.05)
            yield port, stop
        finally:
            stop()


def post(
    connection: http.client.HTTPConnection, body: bytes, headers: dict[str, str]
) -> http.client.HTTPResponse:
    connection.request(
        "POST", "/mcp", body, {"content-type": "application/json", "accept": ACCEPT, **headers}
    )
    response = connection.getresponse()
    response.read()
    if response.status not in (200, 202):
        raise RuntimeError(f"HTTP {response.status}")
    return response


def timed_calls(port: int, calls: int, stateless: bool) -> list[float]:
    """Seconds per call of ``calls`` sequential ``tools/call add`` in one session (or
    none, ``stateless``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"mcp-protocol-version": LEGACY}
    if not stateless:
        opened = post(connection, json.dumps(INITIALIZE).encode(), {})
        session = opened.getheader("mcp-session-id")
        if session is None:
            raise RuntimeError("initialize: no Mcp-Session-Id")
        headers["mcp-session-id"] = session
        post(connection, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers)
    template = (
        '{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
        '"params":{"name":"add","arguments":{"a":1,"b":2}}}'
    )
    durations = []
    clock = time.perf_counter
    for n in range(1, calls + 1):
        body = (template % n).encode()
        start = clock()
        post(connection, body, headers)
        durations.append(clock() - start)
    connection.close()
    return durations


def under_wrk(port: int, sessions: int, seconds: float) -> str:
    """``tools/call add`` from ``wrk`` over ``sessions`` sessions and connections for
    ``seconds``: its summary line (calls/s, p50, p99)."""
    with tempfile.TemporaryDirectory() as directory:
        script = Path(directory) / "calls.lua"
        script.write_text(LUA)
        env = {
            **os.environ,
            "MCP_SIDS": ",".join(open_session(port) for _ in range(sessions)),
            "MCP_VERSION": LEGACY,
        }
        command = ["wrk", "-t1", f"-c{sessions}", f"-d{round(seconds)}s", "-s", str(script)]
        output = subprocess.run(
            [*command, f"http://127.0.0.1:{port}/mcp"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    line = next(row for row in output.splitlines() if row.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    rate = result["requests"] / (result["duration_us"] / 1e6)
    return (
        f"wrk, {sessions} sessions: {rate:,.0f} calls/s, p50 {result['p50_us'] / 1000:.2f} ms, "
        f"p99 {result['p99_us'] / 1000:.2f} ms, errors {result['errors']}, "
        f"non-2xx {result['non2xx']}"
    )


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=30_000)
    parser.add_argument("--census", action="store_true", help="count tracked objects by type")
    parser.add_argument(
        "--wrk-sessions", type=int, metavar="N", help="instead: wrk over N sessions (Debian's wrk)"
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="how long wrk runs")
    parser.add_argument(
        "--stateless", action="store_true", help="sequential calls to a stateless JSON server"
    )
    parser.add_argument(
        "--no-gc-policy",
        action="store_true",
        help="the server keeps the interpreter's collector settings (no gc.freeze at start)",
    )
    parser.add_argument(
        "--threshold", type=int, nargs="+", help="the server's gc.set_threshold(...) (700 10 10)"
    )
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve_recording_collections(
            args.serve, args.census, not args.no_gc_policy, args.threshold, args.stateless
        )
        return 0

    options = [
        *(["--census"] if args.census else []),
        *(["--no-gc-policy"] if args.no_gc_policy else []),
    ]
    if args.threshold:
        options += ["--threshold", *map(str, args.threshold)]
    if args.stateless:
        options.append("--stateless")
    print(f"event store: {tracked_per_retained_stream():.2f} tracked objects per retained stream")
    with server_process(options) as (port, stop):
        time.sleep(1)  # past the server's start (and its collection before gc.freeze)
        began = time.time()
        if args.wrk_sessions:
            print(under_wrk(port, args.wrk_sessions, args.seconds))
            durations: list[float] = []
        else:
            started = time.perf_counter()
            durations = timed_calls(port, args.calls, args.stateless)
            elapsed = time.perf_counter() - started
        errors = stop()
    during = [  # the collections while the calls ran (not those of the server's start)
        record
        for line in errors.splitlines()
        if line.startswith(GC_LINE) and (record := json.loads(line[len(GC_LINE) :]))["at"] >= began
    ]
    collections_ = [c for c in during if c["generation"] == 2]
    young = {g: [c["ms"] for c in during if c["generation"] == g] for g in (0, 1)}

    ms = sorted(d * 1000 for d in durations)
    if ms:
        print(f"{len(ms):,} sequential calls in {elapsed:.1f} s ({len(ms) / elapsed:,.0f} calls/s)")
        print(
            f"per call: p50 {percentile(ms, 0.5):.2f} ms, p99 {percentile(ms, 0.99):.2f} ms, "
            f"p99.9 {percentile(ms, 0.999):.2f} ms, max {ms[-1]:.1f} ms; "
            f"{sum(1 for d in ms if d > 10)} calls over 10 ms"
        )
    pauses = [c["ms"] for c in collections_]
    if pauses:
        print(
            f"server full (gen-2) collections: {len(pauses)}, "
            f"median {statistics.median(pauses):.1f} ms, max {max(pauses):.1f} ms, "
            f"total {sum(pauses):.0f} ms; each: " + ", ".join(f"{p:.0f}" for p in pauses)
        )
    else:
        print("server full (gen-2) collections: none")
    for generation, pauses in young.items():
        if pauses:
            print(
                f"server gen-{generation} collections: {len(pauses)}, "
                f"median {statistics.median(pauses) * 1000:.0f} us, max {max(pauses):.1f} ms, "
                f"total {sum(pauses):.0f} ms"
            )
    garbage = sum(c["collected"] for c in during)
    print(f"  cyclic garbage the collections freed: {garbage:,} objects")
    for c in during:
        if "objects" in c:
            print(f"  census: {c['objects']:,} tracked objects; grew since the first: {c['grew']}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
