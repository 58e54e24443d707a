"""CPU instructions per stdio ``tools/call``, counted by callgrind: a figure load does not move.

The stdio counterpart of ``http_instructions.py``. It starts
``benchmarks/servers/ours.py`` (stdio) under ``valgrind --tool=callgrind``, completes
the handshake, then sends ``tools/call add`` requests one at a time, each
``--gap`` seconds after the previous answer (so that every call is read, served and
written on its own, as an interactive client's are, not batched), zeroing the
counters after ``--warmup`` calls and dumping them after ``--requests`` more. It
prints the server's instructions per call. ``--era modern`` sends 2026-07-28
requests (``_meta`` per request, no handshake).

Usage::

    python benchmarks/stdio_instructions.py                     # 1000 calls, 2025-11-25
    python benchmarks/stdio_instructions.py --era modern --requests 500
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "ours.py"
LEGACY, MODERN = "2025-11-25", "2026-07-28"


def message(request_id: int | None, method: str, params: dict[str, object]) -> bytes:
    body: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        body["id"] = request_id
    return json.dumps(body).encode() + b"\n"


def call(request_id: int, era: str) -> bytes:
    params: dict[str, object] = {"name": "add", "arguments": {"a": 1, "b": 2}}
    if era == "modern":
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return message(request_id, "tools/call", params)


class Server:
    """The server under callgrind, spoken to over its stdin and stdout."""

    def __init__(self, directory: Path) -> None:
        self.process = subprocess.Popen(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={directory}/callgrind.out.%p",
                sys.executable,
                str(SERVER),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def ask(self, data: bytes) -> bytes:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()
        return self.process.stdout.readline()

    def tell(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def control(self, option: str) -> None:
        subprocess.run(
            ["callgrind_control", option, str(self.process.pid)], check=True, capture_output=True
        )


def calls(server: Server, era: str, first: int, count: int, gap: float) -> None:
    for request_id in range(first, first + count):
        answer = server.ask(call(request_id, era))
        if b'"result"' not in answer:
            raise RuntimeError(f"no result: {answer[:300]!r}")
        time.sleep(gap)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--era", choices=("legacy", "modern"), default="legacy")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--gap", type=float, default=0.03, help="seconds between calls")
    options = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="cg-stdio-"))
    server = Server(directory)
    try:
        if options.era == "legacy":
            initialize = {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "stdio-instructions", "version": "1"},
            }
            answer = server.ask(message(0, "initialize", initialize))
            if b'"result"' not in answer:
                raise RuntimeError(f"initialize failed: {answer[:300]!r}")
            server.tell(message(None, "notifications/initialized", {}))
        calls(server, options.era, 1, options.warmup, options.gap)
        server.control("--zero")
        calls(server, options.era, options.warmup + 1, options.requests, options.gap)
        server.control("--dump")
    finally:
        assert server.process.stdin is not None
        server.process.stdin.close()
        server.process.wait(120)
    dumps = sorted(directory.glob("callgrind.out.*.*"), key=lambda path: int(path.suffix[1:]))
    text = dumps[-1].read_text(errors="replace")
    found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no totals in {dumps[-1]}")
    per_call = int(found.group(1)) / options.requests
    print(
        f"stdio {options.era:7s} {per_call:12,.0f} instructions per tools/call"
        f" ({options.requests} calls)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
