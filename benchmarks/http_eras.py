"""Streamable HTTP, one endpoint, two eras: what a ``tools/call`` costs in each.

The 2025-11-25 era serves a POST inside a long-lived session; the 2026-07-28 era
runs each request up the validation ladder and serves it with a session actor of
its own that ends with the answer. This measures sequential round trips of
``add`` over one keep-alive connection (``httpx``) against ``benchmarks/servers/ours.py``
in its own process, the eras alternating round by round; it prints the median
calls per second of each and their ratio.

Usage::

    python benchmarks/http_eras.py                 # 5 rounds of 3 s per era
    python benchmarks/http_eras.py --rounds 3 --seconds 2
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

SERVER = Path(__file__).resolve().parent / "servers" / "ours.py"
ACCEPT = "application/json, text/event-stream"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def call(request_id: int, params: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


def reply_of(response: httpx.Response) -> Any:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        return json.loads(data[-1])
    return response.json()


def legacy_session(http: httpx.Client, url: str) -> dict[str, str]:
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    opened = http.post(url, json=initialize, headers=headers)
    session = {
        **headers,
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    http.post(url, json=initialized, headers=session)
    return session


def run_round(http: httpx.Client, url: str, era: str, seconds: float) -> float:
    """Calls per second of sequential ``add`` calls in ``era`` for ``seconds``."""
    if era == "legacy":
        headers = legacy_session(http, url)
        params: dict[str, Any] = {"name": "add", "arguments": {"a": 1, "b": 2}}
    else:
        headers = {
            "accept": ACCEPT,
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "add",
        }
        params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": MODERN_META}
    calls = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline and calls < 1_000_000:
        calls += 1
        reply = reply_of(http.post(url, content=call(calls, params), headers=headers))
        if reply.get("result", {}).get("structuredContent") != {"result": 3}:
            raise SystemExit(f"{era}: unexpected reply {reply}")
    return calls / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    options = parser.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)], stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with httpx.Client(timeout=10) as http:
            for _ in range(100):
                try:
                    http.get(url)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            rates: dict[str, list[float]] = {"legacy": [], "modern": []}
            for _ in range(options.rounds):
                for era in rates:
                    rates[era].append(run_round(http, url, era, options.seconds))
        legacy, modern = (statistics.median(rates[era]) for era in ("legacy", "modern"))
        print(f"tools/call add, sequential, one keep-alive connection, {options.rounds} rounds")
        print(f"  2025-11-25 (session):     {legacy:8.0f} calls/s (median)")
        print(f"  2026-07-28 (per request): {modern:8.0f} calls/s (median)")
        print(f"  modern / legacy:          {modern / legacy:8.2f}")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
