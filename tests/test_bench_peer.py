"""The bench's peer answers the server's requests and survives notifications it cannot use.

A progress notification without params, or with params of the wrong shape, tells
the bench nothing: it is skipped, and the session goes on (it used to end the
bench with a decode error from the peer's reader).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pytest
import trio

from mcp_actors.bench import stdio_connector
from mcp_actors.bench.wire import BenchError, Peer, Wire


class ScriptedWire(Wire):
    """A server in memory: what it writes before each answer, then the answer."""

    def __init__(self, before_answer: list[dict[str, Any]]) -> None:
        self.before_answer = before_answer
        self.received: list[dict[str, Any]] = []
        self._send, self._receive = trio.open_memory_channel[bytes](100)

    async def send(self, data: bytes) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            self.received.append(message)
            if "method" not in message:
                continue  # our answer to the server's request
            for extra in self.before_answer:
                self._send.send_nowait(json.dumps(extra).encode())
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
            self._send.send_nowait(json.dumps(reply).encode())

    async def receive(self) -> list[bytes]:
        return [await self._receive.receive()]


async def test_malformed_progress_is_skipped_and_good_progress_is_reported() -> None:
    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
    wire = ScriptedWire(
        [
            progress,
            {**progress, "params": {"progressToken": "t", "progress": "half"}},
            {**progress, "params": {"progressToken": "t", "progress": 0.5}},
            {"jsonrpc": "2.0", "id": "s1", "method": "ping"},
            {"jsonrpc": "2.0", "id": "s2", "method": "roots/list"},
            {"jsonrpc": "2.0", "id": "s3", "method": "sampling/createMessage", "params": {}},
        ]
    )
    peer = Peer(wire)
    reported: list[tuple[str | int, float]] = []
    peer.on_progress = lambda params: reported.append((params.progress_token, params.progress))
    with trio.fail_after(10):  # a hang guard
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer.read_loop)
            assert bytes(await peer.call("ping")) == b"{}"
            nursery.cancel_scope.cancel()
    assert reported == [("t", 0.5)]
    answers = {message["id"]: message for message in wire.received if "method" not in message}
    assert answers["s1"] == {"jsonrpc": "2.0", "id": "s1", "result": {}}
    assert answers["s2"] == {"jsonrpc": "2.0", "id": "s2", "result": {"roots": []}}
    assert answers["s3"]["error"]["code"] == -32601


class LineWire(Wire):
    """A server that writes one given line, then nothing."""

    def __init__(self, line: bytes) -> None:
        self.line: bytes | None = line

    async def send(self, data: bytes) -> None:
        pass

    async def receive(self) -> list[bytes]:
        if self.line is None:
            await trio.sleep_forever()
        line, self.line = self.line, None
        return [line]


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"jsonrpc":"2.0","id":1' + b"0" * 5000 + b',"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"result":{}',
        b"not json",
    ],
    ids=["nested too deep", "id too large", "truncated", "not json"],
)
async def test_a_line_that_is_not_json_rpc_stops_the_bench_with_a_clear_error(
    line: bytes,
) -> None:
    with pytest.raises(BenchError, match="the server wrote a line that is not JSON-RPC"):
        await Peer(LineWire(line)).read_loop()


async def test_a_stamped_write_reads_the_clock_with_nothing_run_before_the_write() -> None:
    """The cancel workload's clock starts at the write: between reading it and writing,
    the harness does not pass through trio's scheduler (a ready task of its own would
    run there, on the measured time)."""
    echo_a_line = "import sys; sys.stdout.write(sys.stdin.readline())"
    connect = stdio_connector([sys.executable, "-c", echo_a_line])
    ran: list[float] = []

    async def ready_task() -> None:
        ran.append(time.monotonic())

    with trio.fail_after(30):  # a hang guard
        async with connect() as wire, trio.open_nursery() as nursery:
            nursery.start_soon(ready_task)
            sent = await wire.send_stamped(b"one line\n")
            assert ran == []  # written without a pass of the scheduler
            assert sent <= time.monotonic()
            assert await wire.receive() == [b"one line"]
            assert len(ran) == 1
