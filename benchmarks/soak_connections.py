"""Soak: connections that pipeline requests and never read, against each HTTP front end.

A real server process on loopback (``benchmarks/servers/ours.py``'s tools, stateless JSON
replies) is given ``--stuck`` connections (2,000) that each send ``--pipelined`` pipelined
``tools/call`` requests (``echo`` of ``--size`` bytes) and never read a byte of the
replies, from ``--sources`` loopback addresses (127.0.0.2, 127.0.0.3, ...: the per-client
connection cap is per IP address). Their client sockets have a small receive buffer, so
the replies soon fill it and the server's writes stall: the server holds them as a
hostile client would make it. Meanwhile a second client (127.0.0.1, one keep-alive
connection) runs ``tools/call`` and ``GET /healthz`` one after another; their latency is
reported (p50/p99). Reported:

- the server's RSS before, with the stuck connections held, and per stuck connection
  (the RSS delta over the connections the server actually held);
- the server's open file descriptors before, during, and after the clients go (they
  should be back to the baseline);
- how many stuck connections were refused by the connection caps (503 or closed).

The server's connection caps are ``--max-connections`` / ``--max-connections-per-client``
and its send timeout ``--send-timeout`` (defaults here hold all 2,000 connections while
they are measured; pass the server defaults, 1000, 100 and 30, to see the caps and the
timeout at work). RLIMIT_NOFILE is raised to its hard limit (the server inherits it).

Usage::

    python benchmarks/soak_connections.py                      # both front ends
    python benchmarks/soak_connections.py --front-end lean --stuck 500
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import trio

BENCHMARKS = Path(__file__).resolve().parent
FRONT_ENDS = ("lean", "hypercorn")


def call(request_id: int, size: int) -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x" * size}},
        }
    ).encode()
    return (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )


HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class ServerProcess:
    """The server under test, in a process of its own (its RSS and fds are its own)."""

    def __init__(self, front_end: str, options: argparse.Namespace) -> None:
        command = [sys.executable, __file__, "--serve"]
        command += ["--max-connections", str(options.max_connections)]
        command += ["--max-connections-per-client", str(options.max_connections_per_client)]
        command += ["--send-timeout", str(options.send_timeout)]
        env = {**os.environ, "MCP_ACTORS_HTTP_FRONT_END": front_end}
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        self.port = int(line.rsplit(":", 1)[1].split("/", 1)[0])

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


async def stuck_connection(
    port: int, source: str, payload: bytes, senders: trio.Nursery
) -> trio.SocketStream | None:
    """A connection that sends ``payload`` (in ``senders``: the send stalls once the
    server stops reading) and never reads (None: refused at once)."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    # A small segment size keeps the server's send buffer small (Linux sizes it from the
    # segment size): its writes stall after tens of KiB, without kernel memory pressure.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1024)
    await sock.bind((source, 0))
    try:
        await sock.connect(("127.0.0.1", port))
    except OSError:
        sock.close()
        return None
    stream = trio.SocketStream(sock)
    senders.start_soon(_send_quietly, stream, payload)
    return stream


async def _send_quietly(stream: trio.SocketStream, payload: bytes) -> None:
    with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        await stream.send_all(payload)


class SecondClient:
    """A well-behaved client on 127.0.0.1: one keep-alive connection, one request at a
    time, every reply read (it reconnects if the server closes the connection)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.stream: trio.SocketStream | None = None

    async def exchange(self, request: bytes) -> float:
        """Seconds until the reply to ``request`` is whole."""
        started = time.perf_counter()
        if self.stream is None:
            self.stream = await trio.open_tcp_stream("127.0.0.1", self.port)
        await self.stream.send_all(request)
        data = b""
        while b"\r\n\r\n" not in data or len(data) < _expected(data):
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                break
            data += chunk
        if not data.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"second client refused: {data[:80]!r}")
        if b"connection: close" in data.lower():
            await self.stream.aclose()
            self.stream = None
        return time.perf_counter() - started

    async def aclose(self) -> None:
        if self.stream is not None:
            await self.stream.aclose()


def _expected(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(data) + 1


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def soak(front_end: str, options: argparse.Namespace) -> None:
    server = ServerProcess(front_end, options)
    try:
        await trio.sleep(0.5)
        rss_before, fds_before = server.rss_kib(), server.fds()
        payload = b"".join(call(n, options.size) for n in range(options.pipelined))
        sources = [f"127.0.0.{2 + n % options.sources}" for n in range(options.stuck)]
        async with trio.open_nursery() as senders:
            streams = [
                await stuck_connection(server.port, source, payload, senders) for source in sources
            ]
            await settle(server, options.settle)
            await measure(server, options, streams, rss_before, fds_before, front_end)
            senders.cancel_scope.cancel()
    finally:
        server.stop()


async def settle(server: ServerProcess, quiet: float) -> None:
    """Wait until the server's open fds have not changed for ``quiet`` seconds (it may
    still be accepting the connections queued in its backlog; at most 5 minutes)."""
    last, steady_since, deadline = server.fds(), time.monotonic(), time.monotonic() + 300
    while time.monotonic() - steady_since < quiet and time.monotonic() < deadline:
        await trio.sleep(0.5)
        now = server.fds()
        if now != last:
            last, steady_since = now, time.monotonic()


async def measure(
    server: ServerProcess,
    options: argparse.Namespace,
    streams: list[trio.SocketStream | None],
    rss_before: int,
    fds_before: int,
    front_end: str,
) -> None:
    """The figures, with the stuck connections held; then they go, and the fds are counted."""
    rss_during, fds_during = server.rss_kib(), server.fds()
    held = fds_during - fds_before
    latencies: dict[str, list[float]] = {"tools/call": [], "GET /healthz": []}
    client = SecondClient(server.port)
    for n in range(options.samples):
        latencies["tools/call"].append(await client.exchange(call(10**6 + n, 16)))
        latencies["GET /healthz"].append(await client.exchange(HEALTH))
    await client.aclose()
    for stream in streams:
        if stream is not None:
            stream.socket.close()
    gone_at = time.monotonic()
    for _ in range(int(options.after * 10)):  # another process's fds: polled
        if server.fds() <= fds_before:
            break
        await trio.sleep(0.1)
    fds_after, waited = server.fds(), time.monotonic() - gone_at
    print(f"{front_end}: {options.stuck} stuck connections x {options.pipelined} pipelined")
    print(f"  server held {held} of them (the rest refused by the caps, or timed out)")
    for name, values in latencies.items():
        p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
        print(f"  second client {name:<13} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms")
    per = (rss_during - rss_before) / max(held, 1)
    print(f"  RSS {rss_before / 1024:.1f} -> {rss_during / 1024:.1f} MiB: {per:.0f} KiB per held")
    print(
        f"  fds before {fds_before}, during {fds_during}, after {fds_after}"
        f" ({waited:.1f} s after the clients went)",
        flush=True,
    )


def serve(options: argparse.Namespace) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    from mcp_actors.server.serve_http import run_http
    from mcp_actors.transports.http.config import HttpConfig

    from servers.ours import server

    config = HttpConfig(
        max_sessions=None,
        max_connections=options.max_connections,
        max_connections_per_client=options.max_connections_per_client,
        send_timeout=options.send_timeout,
    )
    run_http(server, announce="http", port=0, config=config, stateless=True, json_response=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--front-end", choices=FRONT_ENDS, action="append")
    parser.add_argument("--stuck", type=int, default=2000, help="non-reading connections")
    parser.add_argument("--pipelined", type=int, default=256, help="requests each sends")
    parser.add_argument("--size", type=int, default=2048, help="echo text bytes per request")
    parser.add_argument("--sources", type=int, default=25, help="loopback source addresses")
    parser.add_argument("--samples", type=int, default=200, help="second client's requests")
    parser.add_argument(
        "--settle", type=float, default=5.0, help="seconds of steady fds before measuring"
    )
    parser.add_argument(
        "--after", type=float, default=30.0, help="at most this long for the fds to go back"
    )
    parser.add_argument("--max-connections", type=int, default=2500)
    parser.add_argument("--max-connections-per-client", type=int, default=100)
    parser.add_argument(
        "--send-timeout",
        type=float,
        default=120.0,
        help="the server's (default here 120 s, so that all are held while measured;"
        " the server's own default, 30 s, drops the first ones while the rest connect)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        serve(options)
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    for front_end in options.front_end or FRONT_ENDS:
        trio.run(soak, front_end, options)


if __name__ == "__main__":
    main()
