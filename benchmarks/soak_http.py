"""Soak the Streamable HTTP server and print its RSS and open file descriptors before and after.

The server runs in its own process (``mcp-actors run servers.ours:server --transport http``)
so that its figures are its own; clients are raw ``h11`` connections and ``httpx``.

Scenarios (``--scenario``, default all):

- ``connections``: N connections each get an SSE reply (an ``initialize``), half with
  ``Connection: close``; fds right after, then once the keep-alive timeout has passed
  (hypercorn's default, 5 s). Every connection should be closed by the server.
- ``delivered``: S sessions each read R replies of M bytes; RSS after, then again once the
  finished streams' retention has passed and each session has made one more request.
- ``unread``: U replies of M bytes that the client never reads; RSS after.

Usage::

    python benchmarks/soak_http.py
    python benchmarks/soak_http.py --python /path/to/other/venv/bin/python   # compare
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import h11
import httpx
import trio

BENCHMARKS = Path(__file__).resolve().parent
ACCEPT = [("accept", "application/json, text/event-stream"), ("content-type", "application/json")]


def rpc(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


INITIALIZE = rpc(
    1,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "soak", "version": "0"},
    },
)


def echo(request_id: int, size: int) -> bytes:
    return rpc(request_id, "tools/call", {"name": "echo", "arguments": {"text": "x" * size}})


class Server:
    def __init__(self, python: str) -> None:
        command = [python, "-m", "mcp_actors.cli", "run", "servers.ours:server"]
        command += ["--transport", "http", "--port", "0"]
        self.process = subprocess.Popen(command, cwd=BENCHMARKS, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        self.url = line.split(" at ", 1)[1].split()[0]
        self.host, port = self.url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
        self.port = int(port)

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def figures(self, label: str) -> None:
        print(f"  {label:<52} RSS {self.rss_mb():7.1f} MB   fds {self.fds():5d}", flush=True)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


async def post_raw(server: Server, body: bytes, extra: list[tuple[str, str]]) -> trio.SocketStream:
    """Send a POST on a new connection and return the connection, unread."""
    stream = await trio.open_tcp_stream(server.host, server.port)
    connection = h11.Connection(h11.CLIENT)
    head = h11.Request(
        method="POST",
        target="/mcp",
        headers=[
            ("host", f"{server.host}:{server.port}"),
            ("content-length", str(len(body))),
            *ACCEPT,
            *extra,
        ],
    )
    data = connection.send(head) or b""
    data += connection.send(h11.Data(data=body)) or b""
    data += connection.send(h11.EndOfMessage()) or b""
    await stream.send_all(data)
    return stream


async def read_response(stream: trio.SocketStream) -> None:
    connection = h11.Connection(h11.CLIENT)
    while True:
        event = connection.next_event()
        if isinstance(event, h11.EndOfMessage):
            return
        if event is h11.NEED_DATA:
            connection.receive_data(await stream.receive_some(65536))


async def connections(server: Server, count: int) -> None:
    print(f"connections: {count} SSE replies, half with Connection: close")
    server.figures("before")
    streams = []
    for n in range(count):
        extra = [("connection", "close")] if n % 2 else []
        stream = await post_raw(server, INITIALIZE, extra)
        await read_response(stream)
        streams.append(stream)
    await trio.sleep(0.5)
    server.figures("replies read, client connections still open")
    await trio.sleep(6)
    server.figures("after the 5 s keep-alive timeout")
    for stream in streams:
        await stream.aclose()


async def new_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    response = await http.post(url, content=INITIALIZE, headers=dict(ACCEPT))
    session = {**dict(ACCEPT), "mcp-session-id": response.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = "2025-11-25"
    note = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
    await http.post(url, content=note, headers=session)
    return session


async def delivered(server: Server, sessions: int, replies: int, size: int) -> None:
    print(f"delivered: {sessions} sessions x {replies} replies of {size:,} bytes, all read")
    server.figures("before")
    async with httpx.AsyncClient(timeout=60) as http:
        headers = [await new_session(http, server.url) for _ in range(sessions)]
        for round_ in range(replies):
            for session in headers:
                reply = await http.post(
                    server.url, content=echo(100 + round_, size), headers=session
                )
                assert reply.status_code == 200 and len(reply.content) > size
        server.figures("after")
        await trio.sleep(11)
        for session in headers:
            await http.post(server.url, content=rpc(99, "ping", {}), headers=session)
        server.figures("after the retention window and one more request each")


async def unread(server: Server, count: int, size: int) -> None:
    print(f"unread: {count} replies of {size:,} bytes never read")
    server.figures("before")
    async with httpx.AsyncClient(timeout=60) as http:
        session = await new_session(http, server.url)
    extra = [(k, v) for k, v in session.items() if k.startswith("mcp-")]
    streams = [await post_raw(server, echo(1000 + n, size), extra) for n in range(count)]
    await trio.sleep(3)
    server.figures("after")
    for stream in streams:
        await stream.aclose()


async def main(options: argparse.Namespace) -> None:
    scenarios = options.scenario or ["connections", "delivered", "unread"]
    for scenario in scenarios:
        server = Server(options.python)
        try:
            if scenario == "connections":
                await connections(server, options.connections)
            elif scenario == "delivered":
                await delivered(server, options.sessions, options.replies, options.size)
            else:
                await unread(server, options.unread, options.size)
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the server's interpreter")
    parser.add_argument(
        "--scenario", action="append", choices=["connections", "delivered", "unread"]
    )
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--replies", type=int, default=20)
    parser.add_argument("--unread", type=int, default=100)
    parser.add_argument("--size", type=int, default=1_000_000)
    trio.run(main, parser.parse_args())
