"""CPU instructions per Streamable HTTP request, counted by callgrind: a figure load does not move.

Wall-clock CPU per call (``http_compare.py``) moves with whatever else the machine
runs. This script counts instead: it starts ``benchmarks/servers/ours.py --http``
under ``valgrind --tool=callgrind``, warms it with ``--warmup`` requests, zeroes
the counters (``callgrind_control --zero``), sends ``--requests`` keep-alive POSTs
of ``tools/call add`` one at a time on one connection, dumps the counters
(``callgrind_control --dump``) and prints the server's instructions per request.
The dump (``--keep DIR``) can be read by function with ``callgrind_annotate
--inclusive=yes``.

Workloads: ``seq`` (a 2025-11-25 session, SSE replies), ``stateless`` (a stateless
server answering JSON), ``modern`` (2026-07-28 per-request calls, stateless server),
``bare`` (``bare_http.py``: the lean front end with a fixed reply, no MCP).

``--servers ours,sdk-low`` also counts the official Python SDK's low-level server
(``sdk_lowlevel.py``, under uvicorn) on ``seq`` and ``stateless``, and prints the
ratio: the CPU comparison of ``http_compare.py``, free of the machine's noise.

Usage::

    python benchmarks/http_instructions.py                       # every workload, 2000 requests
    python benchmarks/http_instructions.py -w seq --requests 500 --keep /tmp/cg
    python benchmarks/http_instructions.py -w stateless,modern --servers ours,sdk-low
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from http_compare import ACCEPT, INITIALIZE, LEGACY, MODERN  # benchmarks/: the same requests

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
WORKLOADS = ("seq", "stateless", "modern", "bare")
SERVERS_SCRIPTS = {"ours": "ours.py", "sdk-low": "sdk_lowlevel.py"}
#: What each server is measured on (the SDK speaks no 2026-07-28; "bare" is ours alone).
SERVES = {"ours": WORKLOADS, "sdk-low": ("seq", "stateless")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def call_body(request_id: int, modern: bool) -> bytes:
    params: dict[str, object] = {"name": "add", "arguments": {"a": 1, "b": 2}}
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


class Client:
    """One keep-alive connection posting to ``/mcp``."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.headers = {"content-type": "application/json", "accept": ACCEPT}

    def post(self, body: bytes, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
        self.connection.request("POST", "/mcp", body, {**self.headers, **(headers or {})})
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"HTTP {response.status}: {data[:300]!r}")
        if b'"result"' not in data and response.status == 200:
            raise RuntimeError(f"no result: {data[:300]!r}")
        return response


def setup(client: Client, workload: str) -> None:
    if workload == "seq":
        response = client.post(json.dumps(INITIALIZE).encode())
        session = response.getheader("mcp-session-id")
        assert session is not None
        client.headers.update({"mcp-session-id": session, "mcp-protocol-version": LEGACY})
        client.post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    elif workload == "stateless":
        client.headers["mcp-protocol-version"] = LEGACY
    elif workload == "modern":
        client.headers.update(
            {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "add"}
        )


def send(client: Client, workload: str, start: int, count: int) -> None:
    modern = workload == "modern"
    for request_id in range(start, start + count):
        client.post(call_body(request_id, modern))


def control(pid: int, option: str) -> None:
    subprocess.run(["callgrind_control", option, str(pid)], check=True, capture_output=True)


def total_instructions(directory: Path, pid: int) -> tuple[int, Path]:
    """The instructions of the newest dump (the one after the zero)."""
    dumps = sorted(directory.glob(f"callgrind.out.{pid}.*"), key=lambda path: int(path.suffix[1:]))
    newest = dumps[-1]
    text = newest.read_text(errors="replace")
    match = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no totals in {newest}")
    return int(match.group(1)), newest


def measure(
    workload: str, requests: int, warmup: int, keep: Path | None, name: str = "ours"
) -> float:
    port = free_port()
    directory = Path(tempfile.mkdtemp(prefix="cg-")) if keep is None else keep
    directory.mkdir(parents=True, exist_ok=True)
    if workload == "bare":
        server = [str(SERVERS / "bare_http.py"), "--http", str(port), "--front-end", "lean"]
    else:
        server = [str(SERVERS / SERVERS_SCRIPTS[name]), "--http", str(port)]
        if workload != "seq":
            server.append("--stateless")
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={directory}/callgrind.out.%p",
        sys.executable,
        *server,
    ]
    env = {**os.environ, "MCP_ACTORS_HTTP_FRONT_END": "lean"}
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start ({workload})")
            time.sleep(0.5)
        client = Client(port)
        setup(client, workload)
        send(client, workload, 1, warmup)
        control(process.pid, "--zero")
        send(client, workload, warmup + 1, requests)
        control(process.pid, "--dump")
        instructions, dump = total_instructions(directory, process.pid)
        client.connection.close()
    finally:
        process.terminate()
        process.wait(60)
    per_request = instructions / requests
    print(
        f"{name:8s} {workload:10s} {per_request:12,.0f} instructions per request"
        f" ({requests} requests; dump {dump})",
        flush=True,
    )
    return per_request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-w", "--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="write the dumps here")
    parser.add_argument("--servers", default="ours", help="comma-separated: ours, sdk-low")
    options = parser.parse_args(argv)
    workloads, names = options.workloads.split(","), options.servers.split(",")
    for workload in workloads:
        if workload not in WORKLOADS:
            parser.error(f"unknown workload {workload!r}")
    for name in names:
        if name not in SERVERS_SCRIPTS:
            parser.error(f"unknown server {name!r}")
    counts: dict[tuple[str, str], float] = {}
    for workload in workloads:
        for name in names:
            if workload in SERVES[name]:
                counts[name, workload] = measure(
                    workload, options.requests, options.warmup, options.keep, name
                )
    for workload in workloads:
        ours, sdk = counts.get(("ours", workload)), counts.get(("sdk-low", workload))
        if ours is not None and sdk is not None:
            print(f"{workload:10s} ours / sdk-low = {ours / sdk:.2f}")
    if ("sdk-low", "stateless") in counts and ("ours", "modern") in counts:
        ratio = counts["ours", "modern"] / counts["sdk-low", "stateless"]
        print(f"modern     ours (2026-07-28) / sdk-low (stateless) = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
