"""Soak: one client holds 1,000 ``subscriptions/listen`` streams; does another get served?

A real server runs in its own process on 127.0.0.1 (``soak_listen.py serve``, Streamable
HTTP, the front end ``MCP_ACTORS_HTTP_FRONT_END`` names, lean by default) with
``Server(max_listen_streams=2 * N, max_listen_streams_per_client=N)``. Then:

1. a second client (its connections from 127.0.0.2) times ``--calls`` sequential
   2026-07-28 ``tools/call`` requests: the baseline;
2. the first client (from 127.0.0.1) opens ``--streams`` N listen streams, each read up
   to its acknowledgement, and keeps them open;
3. the second client times ``--calls`` calls again, and opens a listen stream of its own;
4. the first client's N+1st listen must get the documented limit: -32000, ``data.limit``.

Printed: the time to open the streams, the server's RSS and open fds with them open, the
second client's p50 / p99 / max per call before and during (target: p99 <= 100 ms during),
and the answers to the extra listens. Exit status 1 if a check fails.

Usage::

    python benchmarks/soak_listen.py                 # 1,000 streams, 2,000 calls
    python benchmarks/soak_listen.py --streams 200 --calls 500
    MCP_ACTORS_HTTP_FRONT_END=hypercorn python benchmarks/soak_listen.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import trio

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "soak-listen", "version": "0"},
}
ACCEPT = "application/json, text/event-stream"
#: Where the second client's connections come from (any address of 127.0.0.0/8 is ours).
OTHER_ADDRESS = "127.0.0.2"


def post(request_id: int, method: str, params: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """A 2026-07-28 request: its body and headers."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": META, **params},
    }
    headers = {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    return json.dumps(body).encode(), headers


LISTEN = {"notifications": {"toolsListChanged": True}}
#: Listen streams being opened at once (each holds its place until acknowledged).
CONNECTING = 50


# -- the server's process -------------------------------------------------------------------


def serve(streams: int) -> None:
    from mcp_actors import Server
    from mcp_actors.server.serve_http import serve_http

    server = Server(
        "soak-listen", max_listen_streams=2 * streams, max_listen_streams_per_client=streams
    )

    @server.tool(inline=True)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            http = await nursery.start(
                lambda task_status: serve_http(server, port=0, task_status=task_status)
            )
            print(http.url, flush=True)

    trio.run(main)


def server_figures(pid: int) -> tuple[float, int]:
    """The server's RSS (MiB) and open file descriptors."""
    rss_kib = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
    return rss_kib / 1024, len(os.listdir(f"/proc/{pid}/fd"))


# -- the clients ----------------------------------------------------------------------------


def http_client(address: str) -> httpx.AsyncClient:
    """A client whose connections come from ``address``, as many as it needs."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=32)
    return httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(local_address=address, limits=limits),
        timeout=httpx.Timeout(30, read=None),
    )


async def first_event(lines: AsyncIterator[str], status: int) -> dict[str, Any]:
    """The first ``data:`` line of an event stream, decoded."""
    async for line in lines:
        if line.startswith("data: "):
            message: dict[str, Any] = json.loads(line.removeprefix("data: "))
            return message
    raise RuntimeError(f"the stream ended without an event (HTTP {status})")


async def hold_listen(
    client: httpx.AsyncClient,
    url: str,
    request_id: int,
    opened: trio.MemorySendChannel[dict[str, Any]],
    connecting: trio.CapacityLimiter,
) -> None:
    """Open a listen stream, report its first message, then read it until cancelled (as
    a client does; an abandoned line iterator would close the response when collected)."""
    body, headers = post(request_id, "subscriptions/listen", LISTEN)
    await connecting.acquire_on_behalf_of(request_id)
    async with client.stream("POST", url, content=body, headers=headers) as response:
        async with opened:
            if response.status_code != 200:
                connecting.release_on_behalf_of(request_id)
                body = await response.aread()
                await opened.send({"status": response.status_code, "body": body.decode()})
                return
            lines = response.aiter_lines()
            first = await first_event(lines, response.status_code)
            connecting.release_on_behalf_of(request_id)
            await opened.send(first)
        async for _ in lines:
            pass
        raise RuntimeError(f"listen stream {request_id} ended")


async def one_listen(client: httpx.AsyncClient, url: str, request_id: int) -> dict[str, Any]:
    body, headers = post(request_id, "subscriptions/listen", LISTEN)
    async with client.stream("POST", url, content=body, headers=headers) as response:
        if response.status_code != 200:
            return {"status": response.status_code, "body": (await response.aread()).decode()}
        return await first_event(response.aiter_lines(), response.status_code)


async def timed_calls(client: httpx.AsyncClient, url: str, calls: int) -> tuple[list[float], int]:
    """Sequential ``tools/call`` requests: seconds each, and how many were not answered 200."""
    latencies: list[float] = []
    failed = 0
    for index in range(calls):
        body, headers = post(
            index, "tools/call", {"name": "add", "arguments": {"a": index, "b": 1}}
        )
        started = time.perf_counter()
        response = await client.post(url, content=body, headers=headers)
        latencies.append(time.perf_counter() - started)
        if response.status_code != 200 or "result" not in response.json():
            failed += 1
    return latencies, failed


def summary(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms,"
        f" max {ordered[-1] * 1000:.2f} ms"
    )


def p99_of(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def is_limit(answer: dict[str, Any], limit: int) -> bool:
    error = answer.get("error") or {}
    return error.get("code") == -32000 and (error.get("data") or {}).get("limit") == limit


async def soak(url: str, pid: int, streams: int, calls: int) -> bool:
    ok = True
    async with http_client("127.0.0.1") as first, http_client(OTHER_ADDRESS) as second:
        before, failed_before = await timed_calls(second, url, calls)
        print(f"second client, {calls} calls, no streams open: {summary(before)}", end="")
        print(f"; not answered: {failed_before}")
        async with trio.open_nursery() as nursery:
            send, receive = trio.open_memory_channel[dict[str, Any]](streams)
            # Connect CONNECTING at a time: a burst of 1,000 connects would overflow the
            # listen backlog (hypercorn's is 100) and the kernel would reset some.
            connecting = trio.CapacityLimiter(CONNECTING)
            started = time.perf_counter()
            async with send:
                for index in range(streams):
                    stream_id = 10_000 + index
                    nursery.start_soon(hold_listen, first, url, stream_id, send.clone(), connecting)
            acknowledged = 0
            async with receive:
                async for message in receive:
                    if message.get("method") == "notifications/subscriptions/acknowledged":
                        acknowledged += 1
                    elif ok:
                        print(f"a listen stream did not open: {message}")
                        ok = False
            took = time.perf_counter() - started
            rss, fds = server_figures(pid)
            print(
                f"first client: {acknowledged}/{streams} listen streams open in {took:.2f} s;"
                f" server RSS {rss:.1f} MiB, {fds} fds"
            )
            ok = ok and acknowledged == streams
            during, failed = await timed_calls(second, url, calls)
            print(
                f"second client, {calls} calls, {streams} streams open: {summary(during)}", end=""
            )
            print(f"; not answered: {failed}")
            ok = ok and failed == 0 and p99_of(during) <= 0.100
            own = await one_listen(second, url, 1)
            acked = own.get("method") == "notifications/subscriptions/acknowledged"
            print(f"second client's own listen: {'acknowledged' if acked else own}")
            extra = await one_listen(first, url, 2)
            limited = is_limit(extra, streams)
            print(f"first client's listen #{streams + 1}: {extra.get('error', extra)}")
            ok = ok and acked and limited
            nursery.cancel_scope.cancel()
    print("PASS" if ok else "FAIL")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("mode", nargs="?", choices=("soak", "serve"), default="soak")
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=2000)
    options = parser.parse_args()
    if options.mode == "serve":
        serve(options.streams)
        return
    command = [sys.executable, __file__, "serve", "--streams", str(options.streams)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url:
            raise SystemExit("the server did not start")
        front_end = os.environ.get("MCP_ACTORS_HTTP_FRONT_END", "lean")
        print(f"server {url} (pid {process.pid}, front end {front_end})")
        passed = trio.run(soak, url, process.pid, options.streams, options.calls)
    finally:
        process.terminate()
        process.wait(timeout=10)
    raise SystemExit(0 if passed else 1)


if __name__ == "__main__":
    main()
