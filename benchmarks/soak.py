"""Soak an MCP server: do the same thing many times and watch memory and descriptors.

    python benchmarks/soak.py churn --sessions 100000 --transport memory
    python benchmarks/soak.py churn --sessions 100000 --transport http --concurrency 8
    python benchmarks/soak.py abandoned --sessions 2000 --transport http|ws
    python benchmarks/soak.py slow-consumer --clients 50 --reply-bytes 1000000

- **churn**: create a session (``initialize``, ``notifications/initialized``), make
  one call (``tools/call add``), delete it (HTTP ``DELETE``, a WebSocket close, the
  client leaving the in-process server), ``--sessions`` times. Memory and open
  fds of the server are read after ``--warmup`` sessions and at the end: once
  warm, they should stay flat (the growth column).
- **abandoned**: connect, initialize, and vanish without closing anything (HTTP:
  no ``DELETE``, the connection dropped; WebSocket: the TCP stream dropped with no
  close frame). Then: can a new client still get a session, and what the server
  holds now and after ``--linger`` seconds.
- **slow-consumer**: ``--clients`` clients each call ``echo`` with ``--reply-bytes``
  of text over Streamable HTTP and never read the response stream; the server's
  memory while they hang, and after they are gone.

Servers are the ``everything`` plugin: in this process (``memory``) or a child
process ``mcp-actors run everything --transport http|ws`` on 127.0.0.1, a free
port, measured through ``/proc/PID`` (Linux). Loops are bounded by their counts
and ``--time-limit``. Figures only, never a verdict: exit status 0 unless the
soak could not run (2).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import trio

from mcp_actors import open_client
from mcp_actors.bench.procstat import rss_kb
from mcp_actors.transports.websocket import open_websocket

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
REVISION = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": REVISION,
        "capabilities": {},
        "clientInfo": {"name": "soak", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
ADD = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}


@dataclass(frozen=True)
class Reading:
    """What the server process holds at one moment."""

    rss_mb: float
    fds: int

    @classmethod
    def of(cls, pid: int) -> Reading:
        if pid == os.getpid():
            gc.collect()
        kb = rss_kb(pid) or 0
        try:
            fds = len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            fds = -1
        return cls(kb / 1024, fds)

    def __str__(self) -> str:
        return f"RSS {self.rss_mb:8.1f} MB   fds {self.fds:6d}"


def growth(start: Reading, end: Reading) -> str:
    rss = (end.rss_mb - start.rss_mb) / start.rss_mb * 100 if start.rss_mb else 0.0
    return f"RSS {rss:+.1f} %   fds {end.fds - start.fds:+d}"


# ---------------------------------------------------------------------------- servers


@asynccontextmanager
async def server_process(transport: str) -> AsyncIterator[tuple[int, str]]:
    """``mcp-actors run everything --transport TRANSPORT --port 0``: (pid, url)."""
    command = [sys.executable, "-m", "mcp_actors.cli", "run", "everything"]
    command += ["--transport", transport, "--port", "0"]
    process = await trio.lowlevel.open_process(command, stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        seen = b""
        with trio.fail_after(30):
            while b" at " not in seen.split(b"\n")[0] or b"\n" not in seen:
                chunk = await process.stderr.receive_some()
                if not chunk:
                    raise RuntimeError(f"the server did not start: {seen.decode()}")
                seen += chunk
        url = seen.split(b"\n")[0].rsplit(b" at ", 1)[1].decode().strip()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_drain, process.stderr)
            yield process.pid, url
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            process.terminate()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _drain(stream: trio.abc.ReceiveStream) -> None:
    async for _ in stream:
        pass


class HttpSession:
    """A raw Streamable HTTP session: POSTs of JSON-RPC with the session's headers."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = url
        self.headers = dict(ACCEPT)

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        response = await self.client.post(
            self.url, content=json.dumps(message), headers=self.headers
        )
        if message.get("method") == "initialize":
            if response.status_code != 200:
                raise RuntimeError(f"initialize: HTTP {response.status_code} {response.text[:200]}")
            self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
            self.headers["mcp-protocol-version"] = REVISION
        return response

    async def open(self) -> None:
        await self.post(INITIALIZE)
        await self.post(INITIALIZED)

    async def delete(self) -> None:
        await self.client.delete(self.url, headers=self.headers)


async def _add(session: HttpSession, a: int) -> None:
    call = {**ADD, "params": {"name": "add", "arguments": {"a": a, "b": 1}}}
    response = await session.post(call)
    if str(a + 1) not in response.text:
        raise RuntimeError(f"add answered HTTP {response.status_code}: {response.text[:200]}")


# ---------------------------------------------------------------------------- churn


async def _repeat(
    count: int, concurrency: int, time_limit: float, one: Callable[[int], Awaitable[None]]
) -> int:
    """Run ``one(i)`` for i in range(count) on ``concurrency`` workers; how many ran."""
    done = 0
    next_index = 0

    async def worker() -> None:
        nonlocal done, next_index
        while next_index < count:
            index = next_index
            next_index += 1
            await one(index)
            done += 1

    with trio.move_on_after(time_limit):
        async with trio.open_nursery() as nursery:
            for _ in range(concurrency):
                nursery.start_soon(worker)
    return done


async def churn(options: argparse.Namespace) -> None:
    transport = options.transport
    if transport == "memory":
        from mcp_actors_everything import create

        server = create()

        async def one_memory(index: int) -> None:
            async with open_client(server) as client:
                await client.call_tool("add", {"a": index, "b": 1})

        await _churn_rounds(options, os.getpid(), one_memory)
        return
    async with server_process(transport) as (pid, url):
        if transport == "http":
            async with httpx.AsyncClient(timeout=30) as client:

                async def one_http(index: int) -> None:
                    session = HttpSession(client, url)
                    await session.open()
                    await _add(session, index)
                    await session.delete()

                await _churn_rounds(options, pid, one_http)
        else:

            async def one_ws(index: int) -> None:
                async with open_websocket(url, subprotocols=["mcp"]) as socket:
                    for message in (INITIALIZE, INITIALIZED):
                        await socket.send_message(json.dumps(message))
                    await socket.get_message()
                    await socket.send_message(
                        json.dumps(
                            {**ADD, "params": {"name": "add", "arguments": {"a": 1, "b": 1}}}
                        )
                    )
                    await socket.get_message()

            await _churn_rounds(options, pid, one_ws)


async def _churn_rounds(
    options: argparse.Namespace, pid: int, one: Callable[[int], Awaitable[None]]
) -> None:
    warmup = min(options.warmup, options.sessions)
    started = time.monotonic()
    await _repeat(warmup, options.concurrency, options.time_limit, one)
    warm = Reading.of(pid)
    print(f"after {warmup:>9,} sessions (warm-up): {warm}")
    rest = options.sessions - warmup
    step = max(rest // 5, 1)
    total = warmup
    while total < options.sessions and time.monotonic() - started < options.time_limit:
        left = options.time_limit - (time.monotonic() - started)
        total += await _repeat(min(step, options.sessions - total), options.concurrency, left, one)
        print(f"after {total:>9,} sessions:           {Reading.of(pid)}")
    end = Reading.of(pid)
    elapsed = time.monotonic() - started
    rate = total / elapsed
    print(f"churn {options.transport}: {total:,} sessions in {elapsed:.1f} s ({rate:,.0f}/s)")
    print(f"growth after warm-up: {growth(warm, end)}")


# ---------------------------------------------------------------------------- abandoned


async def abandoned(options: argparse.Namespace) -> None:
    async with server_process(options.transport) as (pid, url):
        before = Reading.of(pid)
        print(f"before:                        {before}")
        held: list[Any] = []
        refused = 0
        async with trio.open_nursery() as nursery:
            for index in range(options.sessions):
                try:
                    if options.transport == "http":
                        # A client of its own, never closed: its connection stays open.
                        client = httpx.AsyncClient(timeout=30)
                        held.append(client)
                        await HttpSession(client, url).open()
                    else:
                        stream = await _ws_initialize_and_vanish(url)
                        held.append(stream)
                except (RuntimeError, httpx.HTTPError, OSError) as error:
                    refused += 1
                    if refused == 1:
                        print(f"session {index}: refused: {error}")
            nursery.cancel_scope.cancel()
        opened = Reading.of(pid)
        print(f"{options.sessions:,} abandoned ({refused:,} refused):  {opened}")
        for item in held:  # the clients vanish: their sockets close
            with trio.CancelScope(shield=True):
                await item.aclose()
        await trio.sleep(options.linger)
        print(f"{options.linger:g} s after they vanished:    {Reading.of(pid)}")
        print(f"a new client: {await _fresh_client_works(options.transport, url)}")
        print(f"growth: {growth(before, Reading.of(pid))}")


async def _ws_initialize_and_vanish(url: str) -> trio.SocketStream:
    """Handshake, ``initialize``, then keep only the TCP stream (no close frame ever)."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    stream = await trio.open_tcp_stream(host, int(port))
    import trio_websocket

    async with trio.open_nursery() as nursery:
        connection = await trio_websocket.wrap_client_stream(
            nursery, stream, f"{host}:{port}", "/mcp", subprotocols=["mcp"]
        )
        await connection.send_message(json.dumps(INITIALIZE))
        await connection.get_message()
        nursery.cancel_scope.cancel()  # stop the reader; the socket stays open
    return stream


async def _fresh_client_works(transport: str, url: str) -> str:
    try:
        with trio.fail_after(30):
            if transport == "http":
                async with httpx.AsyncClient(timeout=30) as client:
                    session = HttpSession(client, url)
                    await session.open()
                    await _add(session, 1)
                    await session.delete()
            else:
                async with open_client(url) as mcp:
                    await mcp.call_tool("add", {"a": 1, "b": 1})
    except Exception as error:  # the figure to print, whatever it is
        return f"FAILED ({type(error).__name__}: {error})"
    return "works"


# ---------------------------------------------------------------------------- slow consumer


async def slow_consumer(options: argparse.Namespace) -> None:
    async with server_process("http") as (pid, url):
        before = Reading.of(pid)
        print(f"before:                           {before}")
        text = "x" * options.reply_bytes
        clients: list[httpx.AsyncClient] = []
        responses: list[httpx.Response] = []
        for index in range(options.clients):
            client = httpx.AsyncClient(timeout=30)
            clients.append(client)
            session = HttpSession(client, url)
            await session.open()
            call = {
                "jsonrpc": "2.0",
                "id": 10 + index,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}},
            }
            request = client.build_request(
                "POST", url, content=json.dumps(call), headers=session.headers
            )
            responses.append(await client.send(request, stream=True))  # headers only, body unread
        await trio.sleep(options.linger)
        hanging = Reading.of(pid)
        print(f"{options.clients} unread {options.reply_bytes:,}-byte replies: {hanging}")
        with trio.CancelScope(shield=True):
            for response in responses:
                await response.aclose()
            for client in clients:
                await client.aclose()
        await trio.sleep(options.linger)
        print(f"{options.linger:g} s after the clients left:     {Reading.of(pid)}")
        print(f"growth while hanging: {growth(before, hanging)}")
        print(f"growth after:         {growth(before, Reading.of(pid))}")


# ---------------------------------------------------------------------------- command


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(required=True, dest="command")
    churn_parser = commands.add_parser("churn", help="create and delete sessions")
    churn_parser.add_argument("--sessions", type=int, default=100_000)
    churn_parser.add_argument("--transport", choices=["memory", "http", "ws"], default="memory")
    churn_parser.add_argument(
        "--warmup", type=int, default=2_000, help="sessions before the baseline"
    )
    churn_parser.add_argument("--concurrency", type=int, default=4)
    churn_parser.add_argument("--time-limit", type=float, default=1800.0, help="seconds")
    churn_parser.set_defaults(run=churn)
    gone = commands.add_parser("abandoned", help="initialize, then vanish")
    gone.add_argument("--sessions", type=int, default=1_000)
    gone.add_argument("--transport", choices=["http", "ws"], default="http")
    gone.add_argument("--linger", type=float, default=5.0, help="seconds to wait after")
    gone.set_defaults(run=abandoned)
    slow = commands.add_parser("slow-consumer", help="clients that never read their replies")
    slow.add_argument("--clients", type=int, default=50)
    slow.add_argument("--reply-bytes", type=int, default=1_000_000)
    slow.add_argument("--linger", type=float, default=3.0, help="seconds to wait")
    slow.set_defaults(run=slow_consumer)
    return parser


def main() -> int:
    options = _parser().parse_args()
    # Terminated like Ctrl-C, so the server processes we started are stopped too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        trio.run(options.run, options)
    except (RuntimeError, OSError) as error:
        print(f"soak: could not run: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("soak: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
