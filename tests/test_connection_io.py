"""How a front end's connection reads and writes: one pass of trio's run loop per request.

A read or write that needs no wait does not yield to the scheduler (see
:mod:`mcp_actors.transports.http.connection_gate`), yet a cancelled task is still
cancelled at its next read or write, and a socket that is always ready cannot keep the
other tasks from running. Counted with a trio instrument, never timed.
"""

from __future__ import annotations

import socket
from typing import Any

import trio
import trio.testing
from test_gc_policy import cyclic_garbage

from mcp_actors.transports.http.asgi import BodyTooLarge, Request, read_body
from mcp_actors.transports.http.connection_gate import UNYIELDED_LIMIT, GuardedStream
from mcp_actors.transports.http.lean import LeanHttpServer

REPLY = b'{"ok":true}'
REQUEST = b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"


async def answer(scope: dict[str, Any], receive: Any, send: Any) -> None:
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": REPLY})


class StepCounter(trio.abc.Instrument):
    """Counts the steps of the tasks whose name contains ``part``."""

    def __init__(self, part: str) -> None:
        self.part, self.steps = part, 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if self.part in task.name:
            self.steps += 1


async def read_reply(stream: trio.SocketStream) -> None:
    data = b""
    while not data.endswith(REPLY):
        chunk = await stream.receive_some()
        assert chunk, "the server closed the connection"
        data += chunk


async def test_a_lean_connection_takes_one_step_per_request() -> None:
    counter = StepCounter("ConnectionGate._run")
    async with trio.open_nursery() as nursery:
        [(host, port), *_] = await nursery.start(LeanHttpServer(answer).serve, "127.0.0.1", 0)
        client = await trio.open_tcp_stream(host, port)
        for _ in range(5):  # the connection is accepted and settles
            await client.send_all(REQUEST)
            await read_reply(client)
        trio.lowlevel.add_instrument(counter)
        for _ in range(50):
            await client.send_all(REQUEST)
            await read_reply(client)
        trio.lowlevel.remove_instrument(counter)
        await client.aclose()
        nursery.cancel_scope.cancel()
    # Woken by the request, it reads, answers, writes and waits for the next: one step
    # (trio's socket stream took two: it yields after the write that needed no wait).
    assert counter.steps <= 52, counter.steps


def connected_pair() -> tuple[GuardedStream, socket.socket]:
    ours, theirs = socket.socketpair()
    stream = GuardedStream(trio.SocketStream(trio.socket.from_stdlib_socket(ours)), None)
    return stream, theirs


async def test_an_always_readable_connection_still_lets_others_run() -> None:
    stream, peer = connected_pair()
    peer.sendall(b"x" * 1000)
    others = 0

    async def other() -> None:
        nonlocal others
        while True:
            others += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other)
        await trio.lowlevel.checkpoint()  # it starts
        others = 0
        for _ in range(10 * UNYIELDED_LIMIT):
            assert await stream.receive_some(1) == b"x"  # never waits: the data is there
        nursery.cancel_scope.cancel()
    assert others >= 5  # one run per UNYIELDED_LIMIT reads; 0 if they never yielded
    peer.close()
    await stream.aclose()


async def test_a_cancelled_task_is_cancelled_at_a_write_that_needs_no_wait() -> None:
    stream, peer = connected_pair()
    with trio.CancelScope() as scope:
        scope.cancel()
        await stream.send_all(b"never written")
        raise AssertionError("send_all returned in a cancelled scope")
    assert scope.cancelled_caught
    peer.setblocking(False)
    try:
        peer.recv(100)
        raise AssertionError("the write went out")
    except BlockingIOError:
        pass
    peer.close()
    await stream.aclose()


async def test_a_closed_peer_breaks_the_stream_and_marks_it_gone() -> None:
    stream, peer = connected_pair()
    peer.close()
    try:
        for _ in range(100):  # the first write may land in the kernel's buffer
            await stream.send_all(b"x" * 65536)
        raise AssertionError("writes to a closed peer kept succeeding")
    except trio.BrokenResourceError:
        pass
    assert stream.gone.is_set()
    await stream.aclose()


async def test_a_body_received_whole_is_handed_over_once_with_the_request() -> None:
    """The lean front end hands a body it holds whole with the request (no wait, no timer);
    the application takes it once, and ``receive()`` has no second copy to give; a body
    over the limit is refused all the same."""
    seen: list[Any] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        request = Request.from_scope(scope)
        seen.append(request.ready_body is not None)
        try:
            seen.append(await read_body(request, receive, limit=10))
        except BodyTooLarge:
            seen.append("too large")
        seen.append(await receive())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": REPLY})

    async with trio.open_nursery() as nursery:
        [(host, port), *_] = await nursery.start(LeanHttpServer(app).serve, "127.0.0.1", 0)
        async with await trio.open_tcp_stream(host, port) as client:
            await client.send_all(REQUEST)
            await read_reply(client)
            await client.send_all(REQUEST.replace(b"length: 2", b"length: 12") + b"0123456789")
            await read_reply(client)
        nursery.cancel_scope.cancel()
    empty = {"type": "http.request", "body": b"", "more_body": False}
    assert seen == [True, b"{}", empty, True, "too large", empty]


async def test_a_lean_connection_leaves_no_cyclic_garbage() -> None:
    """llhttp's parser holds the connection's callbacks object; the connection's end
    drops it, so connections are freed by reference counting (the serving GC policy runs
    the cycle collector's full pass rarely)."""
    server = LeanHttpServer(answer)
    async with trio.open_nursery() as nursery:
        [(host, port), *_] = await nursery.start(server.serve, "127.0.0.1", 0)
        with cyclic_garbage() as found:
            for _ in range(5):
                async with await trio.open_tcp_stream(host, port) as client:
                    await client.send_all(REQUEST)
                    await read_reply(client)
                await trio.testing.wait_all_tasks_blocked()
            assert server.connections == 0
        nursery.cancel_scope.cancel()
    assert found == []
