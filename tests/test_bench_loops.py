"""The bench's closed loop ends when its budget is spent and its last call answered.

Over network wires a writer task issues the next requests after each read. If the
deadline passed between a read (nothing in flight, time left) and the writer's
turn (time up, nothing issued), no read was left to notice the end and the loop
waited out its whole drain timeout: the 30 s stall of the HTTP bench smoke test.
"""

from __future__ import annotations

import json

import trio
import trio.testing

from mcp_actors.bench.loops import Budget, ClosedLoop, Tally
from mcp_actors.bench.wire import Peer, Wire, request_template


class EchoWire(Wire):
    """An in-memory server answering every request at once with an empty result.

    After ``answers`` responses it makes the budget run out at the worst moment: when
    the reader next waits for input, before the writer has issued the next request.
    """

    def __init__(self, budget: Budget, answers: int) -> None:
        self.budget = budget
        self.answers = answers
        self.sent = 0
        self._send, self._receive = trio.open_memory_channel[bytes](100)

    async def send(self, data: bytes) -> None:
        for line in data.splitlines():
            request = json.loads(line)
            self.sent += 1
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": {}}
            self._send.send_nowait(json.dumps(reply).encode())

    async def receive(self) -> list[bytes]:
        if self.sent >= self.answers and not self._receive.statistics().current_buffer_used:
            self.budget.deadline = 0.0  # time is up, and the writer has not run yet
        return [await self._receive.receive()]


async def test_the_loop_ends_with_its_last_answer_not_with_the_drain_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    budget = Budget(duration=3600, max_calls=1_000_000)
    wire = EchoWire(budget, answers=5)
    peer = Peer(wire)
    tally = Tally()
    loop = ClosedLoop(peer, request_template("ping"), 1, budget, tally)
    assert not loop.direct  # the writer-task path, as over HTTP
    async with trio.open_nursery() as nursery:
        nursery.start_soon(peer.read_loop)
        started = trio.current_time()
        await loop.run(drain_timeout=30.0)
        waited = trio.current_time() - started
        nursery.cancel_scope.cancel()
    assert (tally.done, tally.errors) == (wire.sent, 0)
    assert waited < 30.0, f"the loop waited out its drain timeout ({waited:g} s)"
