"""CPU instructions per call of the HTTP application alone: MCP's share of a request.

``http_instructions.py`` counts a whole request on the lean front end, its parsing and
socket calls included, and ``bare`` is what the front end costs with no MCP at all.
This script counts what lies between: it builds the server of
``benchmarks/servers/ours.py`` with :func:`~mcp_actors.server.serve_http.serve_http`,
then calls its ASGI application (``McpHttpApp``) in-process, ``--calls`` times, with
the scopes the lean front end hands it (the body given whole, no socket), under
``valgrind --tool=callgrind``, zeroing the counters before the calls and dumping them
after (``callgrind_control`` on its own process). It prints instructions per call.

Workloads: ``modern`` (2026-07-28 ``tools/call``, stateless server, JSON reply),
``stateless`` (2025-11-25 ``tools/call`` on a stateless server, JSON reply), ``seq``
(a 2025-11-25 session, SSE reply: the session's own task serves it, so its steps
through trio's scheduler are counted too). The same code measured twice differs by
well under 1 %.

Usage::

    python benchmarks/app_instructions.py                     # every workload, 2000 calls
    python benchmarks/app_instructions.py -w modern --calls 5000
    python benchmarks/app_instructions.py --uncounted --calls 50   # no valgrind: calls only
    python benchmarks/app_instructions.py --plain   # a plain async def tool, not inline
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from http_compare import INITIALIZE, LEGACY, MODERN  # benchmarks/: the same requests
from http_instructions import call_body

HERE = Path(__file__).resolve().parent
WORKLOADS = ("modern", "stateless", "seq")
WARMUP = 1000
PLAIN_HELP = "call add as a plain async def tool, not one declared inline (ours.py --plain-tools)"
#: The headers http.client sends with a POST, as the lean front end hands them over.
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept-encoding", b"identity"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]


def scope(headers: list[tuple[bytes, bytes]], body: bytes) -> dict[str, Any]:
    """What the lean front end hands the application for a POST received whole."""
    from mcp_actors.transports.http.asgi import BODY_EXTENSION

    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [*headers, (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "extensions": {BODY_EXTENSION: bytearray(body)},
    }


class Response:
    """The application's ``send``: keeps the status, headers and body of the latest
    response (``respond_whole`` is the lean front end's one-call response, which the
    application looks for)."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[bytes, bytes] = {}
        self.body = b""

    async def respond_whole(self, status: int, headers: Any, body: bytes) -> None:
        self.status, self.headers, self.body = status, dict(headers), body

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status, self.headers = message["status"], dict(message["headers"])
            self.body = b""
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")


async def never_disconnects() -> dict[str, Any]:
    import trio

    await trio.sleep_forever()
    raise AssertionError("unreachable")


async def open_session(app: Any, headers: list[tuple[bytes, bytes]]) -> None:
    """Initialize a session; its id and revision join ``headers``."""
    response = Response()
    await app(scope(headers, json.dumps(INITIALIZE).encode()), never_disconnects, response)
    session = response.headers[b"mcp-session-id"]
    headers += [(b"mcp-session-id", session), (b"mcp-protocol-version", LEGACY.encode())]
    initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    await app(scope(headers, initialized), never_disconnects, response)


def headers_of(workload: str) -> list[tuple[bytes, bytes]]:
    """A POST's headers (a session's id and revision join them once it is open)."""
    if workload == "modern":
        routing = [(b"mcp-method", b"tools/call"), (b"mcp-name", b"add")]
        return [*HEADERS, (b"mcp-protocol-version", MODERN.encode()), *routing]
    if workload == "stateless":
        return [*HEADERS, (b"mcp-protocol-version", LEGACY.encode())]
    return list(HEADERS)


@contextlib.asynccontextmanager
async def warmed_app(
    workload: str, plain: bool = False
) -> AsyncIterator[tuple[Any, list[tuple[bytes, bytes]]]]:
    """The application serving ``workload`` (a session open for ``seq``), after
    :data:`WARMUP` calls: the app and the headers of its POSTs. ``plain``: the tool
    called is a plain ``async def``, not one declared inline (``ours.plain_tools``)."""
    import trio

    sys.path.insert(0, str(HERE / "servers"))
    from ours import plain_tools, server  # type: ignore[import-not-found]

    from mcp_actors.server.serve_http import serve_http

    if plain:
        plain_tools()

    stateless = workload != "seq"
    headers = headers_of(workload)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            lambda task_status: serve_http(
                server,
                port=0,
                stateless=stateless,
                json_response=stateless,
                task_status=task_status,
            )
        )
        app = handle.app
        if workload == "seq":
            await open_session(app, headers)
        response = Response()
        for request_id in range(1, WARMUP + 1):
            body = call_body(request_id, workload == "modern")
            await app(scope(headers, body), never_disconnects, response)
        check_answered(workload, response)
        yield app, headers
        nursery.cancel_scope.cancel()


def call_scopes(workload: str, headers: list[tuple[bytes, bytes]], calls: int) -> list[Any]:
    """The scopes of ``calls`` calls of ``workload``, ids following the warm-up's."""
    modern = workload == "modern"
    return [scope(headers, call_body(WARMUP + n, modern)) for n in range(1, calls + 1)]


def check_answered(workload: str, response: Response) -> None:
    """Raise unless ``response`` is a result."""
    if response.status != 200 or b'"result"' not in response.body:
        raise RuntimeError(f"not a result ({workload}): {response.status} {response.body!r}")


async def _call(workload: str, calls: int, counted: bool = True, plain: bool = False) -> None:
    """The measured run, inside callgrind: warm up, zero, ``calls`` calls, dump
    (``counted=False``: no callgrind, the calls only; ``plain``: see :func:`warmed_app`)."""
    async with warmed_app(workload, plain) as (app, headers):
        scopes = call_scopes(workload, headers, calls)
        response = Response()
        if counted:
            _callgrind("--zero")
        for each in scopes:
            await app(each, never_disconnects, response)
        if counted:
            _callgrind("--dump")
        check_answered(workload, response)
        print(f"{workload}: {calls} calls answered", flush=True)


def _callgrind(option: str) -> None:
    subprocess.run(["callgrind_control", option, str(os.getpid())], check=True, capture_output=True)


def measure(workload: str, calls: int, plain: bool = False) -> float:
    """Run this script on ``workload`` under callgrind; instructions per call."""
    with tempfile.TemporaryDirectory(prefix="app-cg-") as directory:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={directory}/callgrind.out.%p",
            sys.executable,
            __file__,
            "--inside",
            workload,
            "--calls",
            str(calls),
            *(["--plain"] if plain else []),
        ]
        subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
        dumps = sorted(Path(directory).glob("callgrind.out.*.1"))
        if not dumps:
            raise RuntimeError(f"callgrind wrote no dump ({workload})")
        match = re.search(r"^(?:summary|totals): (\d+)", dumps[0].read_text(), re.MULTILINE)
        if match is None:
            raise RuntimeError(f"no totals in {dumps[0]}")
    per_call = int(match.group(1)) / calls
    name = f"{workload} (plain)" if plain else workload
    print(f"{name:17s} {per_call:12,.0f} instructions per call ({calls} calls)", flush=True)
    return per_call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-w", "--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--inside", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--uncounted", action="store_true", help="make the calls in this process, no callgrind"
    )
    parser.add_argument("--plain", action="store_true", help=PLAIN_HELP)
    options = parser.parse_args(argv)
    if options.inside is not None or options.uncounted:
        import trio

        for workload in [options.inside] if options.inside else options.workloads.split(","):
            trio.run(_call, workload, options.calls, not options.uncounted, options.plain)
        return 0
    workloads = options.workloads.split(",")
    for workload in workloads:
        if workload not in WORKLOADS:
            parser.error(f"unknown workload {workload!r}")
    for workload in workloads:
        measure(workload, options.calls, options.plain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
