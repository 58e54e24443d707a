"""Lean stdio MCP load generator: tools/call round trips per second against any server command.

The client side is deliberately tiny (trio + msgspec, pre-encoded request templates,
raw newline-delimited JSON over the child's stdin/stdout, no SDK) so the figures
measure the server. After ``initialize`` + ``notifications/initialized`` (or, with a
modern ``--protocol-version``, ``server/discover`` and per-request ``_meta``) it runs:

* sequential: one ``tools/call`` at a time for ``--duration`` seconds;
* pipelined: ``--concurrency`` requests kept in flight for ``--duration`` seconds.

Each phase also stops after ``--max-calls`` calls and is hard-bounded by a deadline.

Usage::

    python benchmarks/stdio_roundtrip.py --tool add --args '{"a":1,"b":2}' \\
        -- python tests/peers/sdk_lowlevel_server.py
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import msgspec
import trio

MODERN_VERSIONS = frozenset({"2026-07-28"})
CLIENT_INFO = {"name": "mcp-actors-bench", "version": "0.1.0"}


class Incoming(msgspec.Struct):
    """Just enough of a JSON-RPC message to route it; the result stays undecoded."""

    id: int | str | None = None
    method: str | None = None
    result: msgspec.Raw = msgspec.Raw()  # empty unless present (Raw cannot be in a union)
    error: dict[str, Any] | None = None


class BenchError(Exception):
    pass


class Peer:
    """A child process speaking newline-delimited JSON-RPC on its stdin/stdout."""

    def __init__(self, process: trio.Process, version: str) -> None:
        self.process = process
        self.version = version
        self.modern = version in MODERN_VERSIONS
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.decoder = msgspec.json.Decoder(Incoming)
        self.next_id = 0
        self.on_response: Callable[[Incoming, float], None] = lambda msg, now: None
        self.closed = trio.Event()
        self.write_lock = trio.Lock()  # the reader answers server requests concurrently

    async def write(self, data: bytes) -> None:
        async with self.write_lock:
            await self.stdin.send_all(data)

    def meta(self) -> dict[str, Any]:
        if not self.modern:
            return {}
        return {
            "io.modelcontextprotocol/protocolVersion": self.version,
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {},
        }

    async def reader(self) -> None:
        """Split stdout into lines and hand responses to ``on_response``."""
        buffer = b""
        try:
            while True:
                chunk = await self.stdout.receive_some(1 << 16)
                if not chunk:
                    return
                now = time.perf_counter()
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                replies = bytearray()
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        msg = self.decoder.decode(line)
                    except msgspec.DecodeError as exc:
                        raise BenchError(
                            f"server wrote a non-JSON-RPC line ({exc}): {line[:200]!r}"
                        ) from exc
                    if msg.method is not None:
                        if msg.id is not None:  # a server->client request: decline it
                            replies += msgspec.json.encode(
                                {
                                    "jsonrpc": "2.0",
                                    "id": msg.id,
                                    "error": {"code": -32601, "message": "unsupported"},
                                }
                            )
                            replies += b"\n"
                        continue  # notifications (progress, logs) are ignored
                    self.on_response(msg, now)
                if replies:
                    await self.write(bytes(replies))
        finally:
            self.closed.set()

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Incoming:
        """One request/response outside the measured phases."""
        self.next_id += 1
        rid = self.next_id
        got: list[Incoming] = []
        arrived = trio.Event()

        def on_response(msg: Incoming, now: float) -> None:
            if msg.id == rid:
                got.append(msg)
                arrived.set()

        self.on_response = on_response
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        await self.write(msgspec.json.encode(message) + b"\n")
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:

                async def closed() -> None:
                    await self.closed.wait()
                    raise BenchError(f"server closed stdout while waiting for {method}")

                nursery.start_soon(closed)
                await arrived.wait()
                nursery.cancel_scope.cancel()
        if got[0].error is not None:
            raise BenchError(f"{method} failed: {got[0].error}")
        return got[0]

    async def handshake(self) -> str:
        if self.modern:
            await self.call("server/discover", {"_meta": self.meta()})
            return self.version
        reply = await self.call(
            "initialize",
            {"protocolVersion": self.version, "capabilities": {}, "clientInfo": CLIENT_INFO},
        )
        negotiated = msgspec.json.decode(reply.result).get("protocolVersion", "?")
        await self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        return str(negotiated)


def request_template(
    tool: str, arguments: dict[str, Any], meta: dict[str, Any]
) -> tuple[bytes, bytes]:
    """Pre-encoded ``prefix`` and ``suffix``: a request is prefix + id + suffix."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    body = msgspec.json.encode({"method": "tools/call", "params": params})
    return b'{"jsonrpc":"2.0","id":', b"," + body[1:] + b"\n"


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


def summarize(
    name: str, calls: int, errors: int, elapsed: float, latencies: list[float]
) -> dict[str, Any]:
    latencies.sort()
    return {
        "mode": name,
        "calls": calls,
        "errors": errors,
        "seconds": round(elapsed, 3),
        "calls_per_s": round(calls / elapsed, 1) if elapsed > 0 else 0.0,
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
    }


async def run_phase(
    peer: Peer,
    template: tuple[bytes, bytes],
    *,
    name: str,
    in_flight: int,
    duration: float,
    max_calls: int,
) -> dict[str, Any]:
    """Keep ``in_flight`` calls outstanding until ``duration`` or ``max_calls``; then drain."""
    prefix, suffix = template
    sent_at: dict[int, float] = {}
    latencies: list[float] = []
    state = {"done": 0, "errors": 0}
    first_error: list[Any] = []
    slots = trio.Semaphore(in_flight)
    all_done = trio.Event()
    sending = True

    def on_response(msg: Incoming, now: float) -> None:
        started = sent_at.pop(msg.id, None) if isinstance(msg.id, int) else None
        if started is None:
            return
        latencies.append(now - started)
        state["done"] += 1
        if msg.error is not None:
            state["errors"] += 1
            if not first_error:
                first_error.append(msg.error)
        slots.release()
        if not sending and not sent_at:
            all_done.set()

    peer.on_response = on_response
    cpu_start = time.process_time()
    start = time.perf_counter()
    deadline = start + duration
    issued = 0
    with trio.fail_after(duration + 30):
        async with trio.open_nursery() as nursery:

            async def closed() -> None:
                await peer.closed.wait()
                raise BenchError("server closed stdout mid-run")

            nursery.start_soon(closed)
            while issued < max_calls and time.perf_counter() < deadline:
                await slots.acquire()
                peer.next_id += 1
                rid = peer.next_id
                sent_at[rid] = time.perf_counter()
                issued += 1
                await peer.write(prefix + str(rid).encode() + suffix)
            sending = False
            if sent_at:
                await all_done.wait()
            nursery.cancel_scope.cancel()
    elapsed = time.perf_counter() - start
    result = summarize(name, state["done"], state["errors"], elapsed, latencies)
    # The load generator's own CPU share: it should stay far below the server's.
    result["client_cpu_pct"] = round(100 * (time.process_time() - cpu_start) / elapsed, 1)
    if first_error:
        result["first_error"] = first_error[0]
    return result


async def bench(ns: argparse.Namespace) -> dict[str, Any]:
    command = ns.command
    stderr = subprocess.DEVNULL if ns.quiet else None
    process = await trio.lowlevel.open_process(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
    )
    peer = Peer(process, ns.protocol_version)
    report: dict[str, Any] = {
        "command": shlex.join(command),
        "tool": ns.tool,
        "arguments": ns.arguments,
        "requested_version": ns.protocol_version,
        "phases": [],
    }
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer.reader)
            t0 = time.perf_counter()
            report["protocol_version"] = await peer.handshake()
            report["startup_s"] = round(time.perf_counter() - t0, 3)
            template = request_template(ns.tool, ns.arguments, peer.meta())

            # One checked call first: fail loudly on a wrong tool/arguments.
            probe = await peer.call(
                "tools/call", {"name": ns.tool, "arguments": ns.arguments, **_meta(peer)}
            )
            sample = msgspec.json.decode(probe.result)
            if sample.get("isError"):
                raise BenchError(f"tool call returned isError: {sample}")
            report["sample_result"] = sample

            if ns.warmup > 0:
                await run_phase(
                    peer,
                    template,
                    name="warmup",
                    in_flight=1,
                    duration=ns.warmup,
                    max_calls=ns.max_calls,
                )
            phases = [("sequential", 1), (f"pipelined x{ns.concurrency}", ns.concurrency)]
            for name, in_flight in phases:
                report["phases"].append(
                    await run_phase(
                        peer,
                        template,
                        name=name,
                        in_flight=in_flight,
                        duration=ns.duration,
                        max_calls=ns.max_calls,
                    )
                )
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await shutdown(process)
    return report


def _meta(peer: Peer) -> dict[str, Any]:
    meta = peer.meta()
    return {"_meta": meta} if meta else {}


async def shutdown(process: trio.Process) -> None:
    """Close stdin (the stdio shutdown signal), then escalate: SIGTERM, SIGKILL."""
    if process.stdin is not None:
        with contextlib.suppress(trio.BrokenResourceError):
            await process.stdin.aclose()
    for action in (None, process.terminate, process.kill):
        if action is not None and process.returncode is None:
            action()
        with trio.move_on_after(3):
            await process.wait()
        if process.returncode is not None:
            break
    if process.stdout is not None:
        await process.stdout.aclose()


def render(report: dict[str, Any]) -> str:
    lines = [
        f"server:   {report['command']}",
        f"protocol: {report.get('protocol_version', '?')}   tool: {report['tool']} "
        f"{json.dumps(report['arguments'], separators=(',', ':'))}   "
        f"startup: {report.get('startup_s', '?')}s",
        "",
        f"{'mode':<16}{'calls':>9}{'seconds':>9}{'calls/s':>11}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'client cpu':>12}",
    ]
    for p in report["phases"]:
        lines.append(
            f"{p['mode']:<16}{p['calls']:>9}{p['seconds']:>9.2f}{p['calls_per_s']:>11.1f}"
            f"{p['p50_ms']:>9.2f}{p['p99_ms']:>9.2f}{p['errors']:>8}{p['client_cpu_pct']:>11.1f}%"
        )
        if "first_error" in p:
            lines.append(f"  first error: {p['first_error']}")
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        usage="%(prog)s [options] -- SERVER_COMMAND [ARGS...]",
    )
    parser.add_argument("--tool", required=True, help="tool name to call")
    parser.add_argument(
        "--args", dest="args_json", default="{}", help="tool arguments as a JSON object"
    )
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per phase (default 3)")
    parser.add_argument(
        "--concurrency", "-k", type=int, default=100, help="requests in flight when pipelined"
    )
    parser.add_argument("--max-calls", type=int, default=1_000_000, help="cap on calls per phase")
    parser.add_argument(
        "--warmup", type=float, default=0.5, help="seconds of unmeasured calls first (default 0.5)"
    )
    parser.add_argument(
        "--protocol-version", default="2025-11-25", help="version to request (2026-07-28: discover)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--quiet", action="store_true", help="discard the server's stderr")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="server command (after --)")
    ns = parser.parse_args(argv)
    if ns.command and ns.command[0] == "--":
        ns.command = ns.command[1:]
    if not ns.command:
        parser.error("missing server command (put it after --)")
    try:
        ns.arguments = json.loads(ns.args_json)
    except ValueError as exc:
        parser.error(f"--args is not JSON: {exc}")
    if not isinstance(ns.arguments, dict):
        parser.error("--args must be a JSON object")
    if ns.concurrency < 1 or ns.duration <= 0 or ns.max_calls < 1:
        parser.error("--concurrency, --duration and --max-calls must be positive")
    return ns


def main(argv: list[str] | None = None) -> int:
    ns = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        report = trio.run(bench, ns)
    except BaseException as exc:
        reason = _expected_failure(exc)
        if reason is None:
            raise
        print(f"benchmark failed: {reason}", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2) if ns.json else render(report))
    return 1 if any(p["errors"] for p in report["phases"]) else 0


def _expected_failure(exc: BaseException) -> str | None:
    """The message of a BenchError/timeout/OS error, looking inside exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (reason := _expected_failure(inner)) is not None:
                return reason
        return None
    if isinstance(exc, trio.TooSlowError):
        return "timed out waiting for the server"
    if isinstance(exc, trio.BrokenResourceError):
        return "the server closed its stdin (did it exit?)"
    if isinstance(exc, BenchError | OSError):
        return str(exc) or type(exc).__name__
    return None


if __name__ == "__main__":
    sys.exit(main())
