"""The benchmark tools' clients: pooled, bounded, timed.

The HTTP client (``benchmarks/realio/api_client.py``) and the Redis client
(``resp_client.py``), on the keep-alive pool they share (``kept_connections.py``).
Against small servers in the test's own Trio run (loopback), and the Redis client
against Debian's ``redis-server`` too; the clock is Trio's MockClock where a timeout is
what is checked, so nothing here depends on speed.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable
from functools import partial

import pytest
import trio
import trio.testing

from benchmarks.realio import processes
from benchmarks.realio.api_client import ApiError, open_api
from benchmarks.realio.resp_client import RedisError, open_resp, pack

Handler = Callable[[trio.SocketStream], Awaitable[None]]
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


async def _read_request(stream: trio.SocketStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await stream.receive_some(4096)
        if not chunk:
            return b""
        data += chunk
    return data


async def _serve(nursery: trio.Nursery, handler: Handler) -> int:
    async def tolerant(stream: trio.SocketStream) -> None:
        with contextlib.suppress(trio.BrokenResourceError):  # the client may close first
            await handler(stream)

    listeners = await nursery.start(partial(trio.serve_tcp, tolerant, 0, host="127.0.0.1"))
    port: int = listeners[0].socket.getsockname()[1]
    return port


async def test_calls_beyond_the_pool_wait_for_a_connection() -> None:
    open_now = most_open = 0
    release = trio.Event()

    async def slow(stream: trio.SocketStream) -> None:
        nonlocal open_now, most_open
        open_now += 1
        most_open = max(most_open, open_now)
        try:
            while await _read_request(stream):
                await release.wait()
                await stream.send_all(OK)
        finally:
            open_now -= 1

    async with trio.open_nursery() as nursery:
        port = await _serve(nursery, slow)
        async with open_api("127.0.0.1", port, max_connections=2) as api:
            bodies: list[bytes] = []

            async def call() -> None:
                bodies.append(await api.get("/x"))

            async with trio.open_nursery() as calls:
                for _ in range(5):
                    calls.start_soon(call)
                await trio.testing.wait_all_tasks_blocked()
                assert most_open == 2  # the other three wait for one of the two
                release.set()
            assert bodies == [b"ok"] * 5
            assert api.idle_connections == 2
        nursery.cancel_scope.cancel()


async def test_a_call_that_gets_no_answer_fails_after_its_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def silent(stream: trio.SocketStream) -> None:
        await _read_request(stream)
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        port = await _serve(nursery, silent)
        async with open_api("127.0.0.1", port, timeout=5.0) as api:
            started = trio.current_time()
            with pytest.raises(ApiError, match=r"did not finish within 5\.0s"):
                await api.get("/x")
            assert trio.current_time() - started == pytest.approx(5.0)
            assert api.idle_connections == 0  # half-used: closed, not pooled
        nursery.cancel_scope.cancel()


async def test_a_pooled_connection_the_server_closed_is_replaced_once() -> None:
    connections = 0

    async def one_answer_per_connection(stream: trio.SocketStream) -> None:
        nonlocal connections
        connections += 1
        if await _read_request(stream):
            await stream.send_all(OK)  # keep-alive by HTTP/1.1's default, then closes
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        port = await _serve(nursery, one_answer_per_connection)
        async with open_api("127.0.0.1", port) as api:
            assert await api.get("/a") == b"ok"
            await trio.testing.wait_all_tasks_blocked()  # the server has closed it
            assert await api.get("/b") == b"ok"  # the stale one failed unanswered: retried
            assert connections == 2
        nursery.cancel_scope.cancel()


async def test_an_error_status_is_an_error_naming_it() -> None:
    async def not_found(stream: trio.SocketStream) -> None:
        while await _read_request(stream):
            await stream.send_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope")

    async with trio.open_nursery() as nursery:
        port = await _serve(nursery, not_found)
        async with open_api("127.0.0.1", port) as api:
            with pytest.raises(ApiError, match=re.escape("the API answered 404: b'nope'")):
                await api.get("/products/0")
            assert api.idle_connections == 1  # the answer was read whole: the connection is reused
        nursery.cancel_scope.cancel()


async def test_nothing_listening_is_a_clear_error() -> None:
    with trio.socket.socket() as probe:
        await probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with open_api("127.0.0.1", port) as api:
        with pytest.raises(ApiError, match=f"cannot connect to the API at 127.0.0.1:{port}"):
            await api.get("/x")


async def test_a_call_alongside_other_work_overlaps_it_and_fails_cleanly() -> None:
    received = trio.Event()

    async def answers_once_told(stream: trio.SocketStream) -> None:
        while await _read_request(stream):
            received.set()
            await stream.send_all(OK)

    async with trio.open_nursery() as nursery:
        port = await _serve(nursery, answers_once_told)
        async with open_api("127.0.0.1", port) as api:

            async def meanwhile() -> str:
                await received.wait()  # the request is already at the API while we wait here
                return "redis's answer"

            assert await api.get_alongside("/x", meanwhile) == (b"ok", "redis's answer")
            assert api.idle_connections == 1

            async def failing() -> str:
                raise RuntimeError("redis is down")

            with pytest.raises(RuntimeError, match="redis is down"):
                await api.get_alongside("/x", failing)
            assert api.idle_connections == 0  # its response was never read: closed
            assert await api.get("/x") == b"ok"
        nursery.cancel_scope.cancel()


async def _read_command(stream: trio.SocketStream) -> bytes:
    """One short command as the Redis client writes it (enough for these tests)."""
    data = b""
    while not data.endswith(b"\r\n") or data.count(b"\r\n") < 1 + 2 * int(data[1:2] or b"0"):
        chunk = await stream.receive_some(4096)
        if not chunk:
            return b""
        data += chunk
    return data


def test_a_command_is_packed_as_an_array_of_bulk_strings() -> None:
    assert pack(("ZREVRANGE", "k", 0, 9)) == (
        b"*4\r\n$9\r\nZREVRANGE\r\n$1\r\nk\r\n$1\r\n0\r\n$1\r\n9\r\n"
    )
    assert (
        pack(("SET", "clé", b"\x00\r\n"))
        == b"*3\r\n$3\r\nSET\r\n$4\r\ncl\xc3\xa9\r\n$3\r\n\x00\r\n\r\n"
    )


async def test_redis_answers_each_type_and_an_error_reply_keeps_the_connection() -> None:
    port = processes.free_port()
    with processes.started(processes.redis(port), port):
        async with open_resp("127.0.0.1", port) as redis:
            assert await redis.call("SET", "k", b"v\r\n") == b"OK"
            assert await redis.call("GET", "k") == b"v\r\n"
            assert await redis.call("GET", "missing") is None
            assert await redis.call("RPUSH", "l", 1, "two") == 2
            assert await redis.call("LRANGE", "l", 0, -1) == [b"1", b"two"]
            with pytest.raises(RedisError, match="WRONGTYPE"):
                await redis.call("GET", "l")
            assert redis.idle_connections == 1  # the error was read whole: reused
            assert await redis.call("DEL", "k", "l") == 2


async def test_a_redis_reply_over_its_bound_fails_and_is_not_reused() -> None:
    port = processes.free_port()
    with processes.started(processes.redis(port), port):
        async with open_resp("127.0.0.1", port) as redis:
            redis.max_reply = 1000
            await redis.call("SET", "big", b"x" * 5000)
            with pytest.raises(RedisError, match="over 1000 bytes"):
                await redis.call("GET", "big")
            assert redis.idle_connections == 0
            assert await redis.call("STRLEN", "big") == 5000


async def test_redis_closing_a_pooled_connection_is_survived_once_and_silence_times_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    connections = 0

    async def one_reply_per_connection_then_silence(stream: trio.SocketStream) -> None:
        nonlocal connections
        connections += 1
        if connections > 2:
            await _read_command(stream)
            await trio.sleep_forever()
        if await _read_command(stream):
            await stream.send_all(b":1\r\n")
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        port = await _serve(nursery, one_reply_per_connection_then_silence)
        async with open_resp("127.0.0.1", port, timeout=5.0) as redis:
            assert await redis.call("INCR", "n") == 1
            await trio.testing.wait_all_tasks_blocked()  # the server has closed it
            assert await redis.call("INCR", "n") == 1  # the stale one failed unanswered
            assert connections == 2
            await trio.testing.wait_all_tasks_blocked()
            with pytest.raises(RedisError, match=r"Redis call did not finish within 5\.0s"):
                await redis.call("INCR", "n")
        nursery.cancel_scope.cancel()


async def test_redis_not_listening_or_not_speaking_resp_is_a_clear_error() -> None:
    with trio.socket.socket() as probe:
        await probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with open_resp("127.0.0.1", port) as redis:
        with pytest.raises(RedisError, match=f"cannot connect to Redis at 127.0.0.1:{port}"):
            await redis.call("PING")

    async def http_server(stream: trio.SocketStream) -> None:
        await _read_command(stream)
        await stream.send_all(OK)

    async with trio.open_nursery() as nursery:
        port = await _serve(nursery, http_server)
        async with open_resp("127.0.0.1", port) as redis:
            with pytest.raises(RedisError, match="not RESP"):
                await redis.call("PING")
        nursery.cancel_scope.cancel()
