"""In-process microbenchmark of the server's hot path: no pipes, no syscalls, no client.

A fake transport feeds a :class:`~mcp_actors.server.app.Server` session pre-encoded
``tools/call`` requests in a closed loop (``--depth`` in flight: 1 = sequential) and
swallows the answers, so the CPU per call it prints is the session actor alone
(reader, request actor, handler, writer). Use it to profile optimizations quickly;
confirm with ``mcp-actors bench`` over stdio.

Usage::

    python benchmarks/session_micro.py --depth 100 --calls 200000
    python benchmarks/session_micro.py --depth 1 --profile     # pyinstrument, if installed
    python benchmarks/session_micro.py --cancel 200   # notifications/cancelled read -> handler
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import trio

from mcp_actors.transports.abc import MessageStream, Outgoing, TransportClosed

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))


class ClosedLoopStream(MessageStream):
    """Hands out ``calls`` requests, at most ``depth`` unanswered, and counts the answers."""

    def __init__(self, template: tuple[bytes, bytes], calls: int, depth: int) -> None:
        self.prefix, self.suffix = template
        self.calls = calls
        self.depth = depth
        self.issued = 0
        self.answered = 0
        self.pending: list[bytes] = [
            b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","capabilities":{},"clientInfo":{"name":"micro","version":"1"}}}',
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        ]
        self.wakeup = trio.Event()
        self.done = trio.Event()
        self.started = 0.0

    async def receive(self) -> bytes:
        while True:
            if self.pending:
                return self.pending.pop(0)
            if self.issued >= self.calls:
                await self.done.wait()
                raise TransportClosed("done")
            if self.issued - self.answered >= self.depth or not self.started:
                # Like a real read: the reader waits for "I/O" until answers free a slot.
                await self.wakeup.wait()
                self.wakeup = trio.Event()
                continue
            self.issued += 1
            return self.prefix + str(self.issued).encode() + self.suffix

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        for message in messages:
            if message.payload.startswith(b'{"jsonrpc":"2.0","id":"init"'):
                self.started = time.process_time()
            else:
                self.answered += 1
        if self.answered >= self.calls:
            self.done.set()
        self.wakeup.set()

    async def aclose(self) -> None:
        pass


class CancelStream(MessageStream):
    """Starts ``cancellation_probe`` calls and cancels each once it runs; times the cancel.

    The clock starts when :meth:`receive` hands the session the ``notifications/cancelled``
    bytes (the moment the notification is read) and stops when the probe records that
    it saw the cancellation (in ``benchmarks/servers/ours.py``).
    """

    _CANCELLED = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":'

    def __init__(self, rounds: int, observed: dict[str, float]) -> None:
        self.rounds = rounds
        self.observed = observed
        self.pending: list[bytes] = [
            b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","capabilities":{},"clientInfo":{"name":"micro","version":"1"}}}',
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        ]
        self.running = trio.Event()
        self.token = ""
        self.read_at: float | None = None
        self.latencies: list[float] = []

    async def receive(self) -> bytes:
        if self.read_at is not None:  # the last cancellation was read: wait for the probe
            with trio.fail_after(10):
                # the probe writes a plain dict: poll it, one scheduler pass at a time
                while self.token not in self.observed:
                    await trio.lowlevel.checkpoint()
            self.latencies.append(self.observed[self.token] - self.read_at)
            self.read_at = None
        if self.pending:
            message = self.pending.pop(0)
            if message.startswith(self._CANCELLED):
                await self.running.wait()  # the probe runs: now "read" its cancellation
                self.read_at = time.monotonic()
            return message
        if len(self.latencies) >= self.rounds:
            raise TransportClosed("done")
        request_id = str(len(self.latencies)).encode()
        self.token = f"micro-{time.monotonic_ns()}"
        token = self.token.encode()
        self.running = trio.Event()
        self.pending.append(self._CANCELLED + request_id + b"}}")
        return (
            b'{"jsonrpc":"2.0","id":' + request_id + b',"method":"tools/call","params":'
            b'{"name":"cancellation_probe","arguments":{"token":"' + token + b'"},'
            b'"_meta":{"progressToken":"' + token + b'"}}}'
        )

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        for message in messages:
            if b"notifications/progress" in message.payload:
                self.running.set()

    async def aclose(self) -> None:
        pass


async def run_cancel(rounds: int) -> list[float]:
    """Seconds from reading ``notifications/cancelled`` to the handler seeing it, per round."""
    from ours import _observed, server

    stream = CancelStream(rounds, _observed)
    with trio.fail_after(120):
        await server.serve_session(stream)
    return sorted(stream.latencies)


async def run(calls: int, depth: int, tool: str, arguments: bytes) -> float:
    from ours import server  # benchmarks/servers/ours.py

    suffix = b',"method":"tools/call","params":{"name":"' + tool.encode() + b'","arguments":'
    stream = ClosedLoopStream((b'{"jsonrpc":"2.0","id":', suffix + arguments + b"}}"), calls, depth)
    await server.serve_session(stream)
    return (time.process_time() - stream.started) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--tool", default="add")
    parser.add_argument("--args", default='{"a":1,"b":2}')
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="pyinstrument profile of one run")
    parser.add_argument(
        "--cancel",
        type=int,
        default=0,
        metavar="N",
        help="instead: N cancellations, notification read -> handler sees it",
    )
    options = parser.parse_args(argv)
    if options.cancel:
        latencies = trio.run(run_cancel, options.cancel)
        p50 = latencies[len(latencies) // 2] * 1e6
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e6
        print(
            f"cancellation, notification read -> handler saw it: p50 {p50:.0f} µs,"
            f" p99 {p99:.0f} µs, max {latencies[-1] * 1e6:.0f} µs ({len(latencies)} rounds)"
        )
        return 0
    arguments = options.args.encode()
    if options.profile:
        if importlib.util.find_spec("pyinstrument") is None:
            parser.error("pip install pyinstrument first")
        from pyinstrument import Profiler

        with Profiler(interval=0.0001) as profiler:
            trio.run(run, options.calls, options.depth, options.tool, arguments)
        profiler.print(show_all=False)
        return 0
    results = []
    for _ in range(options.repeat):
        results.append(trio.run(run, options.calls, options.depth, options.tool, arguments))
    results.sort()
    print(
        f"depth {options.depth}: {results[len(results) // 2] * 1e6:.1f} µs CPU per call"
        f" (median of {options.repeat}; runs {', '.join(f'{r * 1e6:.1f}' for r in results)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
