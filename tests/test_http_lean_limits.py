"""The lean HTTP/1.1 server's own limits, against :class:`LeanHttpServer` directly.

Header size and time, keep-alive timeout, bad input and a failing application, a
client leaving mid-stream; the behaviour both front ends share is in ``test_http_lean.py``.
"""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import pytest
import trio

from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.lean import LeanHttpServer
from mcp_actors.transports.http.lean_limits import LeanLimits

from conftest import read_to_eof, read_until


async def _fixed_reply(scope: Any, receive: Any, send: Any) -> None:
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"ok"})


async def _failing(scope: Any, receive: Any, send: Any) -> None:
    if scope["path"] == "/fail":
        raise RuntimeError("the application broke")
    await _fixed_reply(scope, receive, send)


@asynccontextmanager
async def _lean(app: Any, limits: LeanLimits) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        server = LeanHttpServer(app, limits)
        bound = await nursery.start(server.serve, "127.0.0.1", 0)
        yield bound[0][1]
        nursery.cancel_scope.cancel()


GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


async def test_headers_over_the_limit_get_431() -> None:
    async with (
        _lean(_fixed_reply, LeanLimits(max_header_size=1024)) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 4096 + b"\r\n\r\n")
        data = await read_to_eof(stream)
    assert data.startswith(b"HTTP/1.1 431")


async def test_a_header_that_grows_read_by_read_gets_431_near_the_limit() -> None:
    async with (
        _lean(_fixed_reply, LeanLimits(max_header_size=1024)) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
        sent = 0
        with suppress(trio.BrokenResourceError):
            while sent < 8192:  # the header never ends: the server must stop it
                await stream.send_all(b"a" * 128)
                sent += 128
                await trio.sleep(0.005)  # one read per piece
        data = await read_to_eof(stream)
    assert data.startswith(b"HTTP/1.1 431")
    assert sent < 2048  # answered within a read or so of the limit, not at the header's end


async def test_headers_that_do_not_arrive_in_time_close_the_connection() -> None:
    async with (
        _lean(_fixed_reply, LeanLimits(header_timeout=0.5)) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finished
        started = trio.current_time()
        data = await read_to_eof(stream)
        waited = trio.current_time() - started
    assert data == b""  # no request yet, so nothing to answer: h11 holds no request
    assert 0.4 < waited < 3


async def test_an_idle_keep_alive_connection_closes_after_its_timeout() -> None:
    async with (
        _lean(_fixed_reply, LeanLimits(keep_alive_timeout=0.5)) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(GET)
        first = await read_until(stream, 1, b"ok")
        started = trio.current_time()
        rest = await read_to_eof(stream)
        waited = trio.current_time() - started
    assert first.startswith(b"HTTP/1.1 200")
    assert rest == b""
    assert 0.4 < waited < 3


async def test_garbage_gets_400_and_a_failing_app_500_and_the_server_lives_on() -> None:
    async with (
        _lean(_failing, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as garbage,
    ):
        await garbage.send_all(b"NOT HTTP AT ALL\r\n\r\n")
        assert (await read_to_eof(garbage)).startswith(b"HTTP/1.1 400")
        async with await trio.open_tcp_stream("127.0.0.1", port) as failing:
            await failing.send_all(b"GET /fail HTTP/1.1\r\nHost: x\r\n\r\n")
            assert (await read_to_eof(failing)).startswith(b"HTTP/1.1 500")
        async with await trio.open_tcp_stream("127.0.0.1", port) as fine:
            await fine.send_all(GET)
            assert (await read_until(fine, 1, b"ok")).startswith(b"HTTP/1.1 200")


async def test_a_client_that_leaves_mid_stream_is_seen_as_a_disconnect() -> None:
    seen: list[str] = []

    async def streaming(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        seen.append((await receive())["type"])

    async with (
        _lean(streaming, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(GET)
        await read_until(stream, 1, b"first")
        await stream.aclose()  # the client leaves
        with trio.fail_after(5):
            while not seen:
                await trio.sleep(0.01)
    assert seen == ["http.disconnect"]


async def _unframed(scope: Any, receive: Any, send: Any) -> None:
    """Echoes the body (it must come in one message), in one piece or in two."""
    message = await receive()
    assert not message.get("more_body"), "a body that came whole is one message"
    start = {"type": "http.response.start", "status": 200, "headers": []}
    await send(start)
    if scope["path"] == "/streamed":
        await send({"type": "http.response.body", "body": message["body"], "more_body": True})
        await send({"type": "http.response.body", "body": b"!"})
    else:
        await send({"type": "http.response.body", "body": message["body"]})


async def test_a_response_in_one_message_has_a_content_length_a_streamed_one_is_chunked() -> None:
    async with (
        _lean(_unframed, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        post = b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
        await stream.send_all(post % b"/whole" + post % b"/streamed")
        data = await read_until(stream, 1, b"0\r\n\r\n")
    whole, streamed = data.split(b"HTTP/1.1 200")[1:]
    assert b"content-length: 5\r\n" in whole.lower()
    assert b"transfer-encoding" not in whole.lower()
    assert whole.endswith(b"\r\n\r\nhello")
    assert b"transfer-encoding: chunked" in streamed.lower()
    assert b"content-length" not in streamed.lower()


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="header_timeout"):
        LeanLimits(header_timeout=0)
    with pytest.raises(ValueError, match="front_end"):
        HttpConfig(front_end="nginx")  # type: ignore[arg-type]


async def _echo(scope: Any, receive: Any, send: Any) -> None:
    """Answers with the request's body, read whole; ``/slow`` first waits a little,
    watching for a disconnect meanwhile (so the server reads on: see pipelining)."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    reply = b"<" + b"".join(chunks) + b">"
    async with trio.open_nursery() as nursery:
        if scope["path"] == "/slow":
            nursery.start_soon(receive)  # returns http.disconnect once the response is done
            await trio.sleep(0.2)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": reply})


async def test_a_chunked_request_body_reaches_the_application_whole() -> None:
    async with (
        _lean(_echo, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
        )
        await trio.sleep(0.05)  # the body in two reads
        await stream.send_all(b"6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n" + GET)
        data = await read_until(stream, 1, b"<>")
    assert b"<hello world>" in data
    assert data.endswith(b"<>")  # the request behind it: the trailer was no request of its own


async def test_pipelined_requests_past_the_bound_are_all_answered_in_order() -> None:
    pad = b"." * 1000
    posts = [
        b"POST /%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%04d%s"
        % (b"slow" if n == 0 else b"fast", 4 + len(pad), n, pad)
        for n in range(200)
    ]
    async with (
        _lean(_echo, LeanLimits(max_pipelined_bytes=512)) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(stream.send_all, b"".join(posts))  # ~200 KiB, the first one slow
        data = await read_until(stream, 1, b"<0199")
    bodies = [int(body) for body in re.findall(rb"<(\d{4})\.", data)]
    assert bodies == list(range(200))


@pytest.mark.parametrize(
    "header",
    [
        (b"x-injected", b"a\r\nset-cookie: stolen=1"),
        (b"x-nul", b"a\x00b"),
        (b"bad name", b"value"),
        (b"x-split\r\nset-cookie", b"stolen=1"),
    ],
)
async def test_a_header_the_application_gets_wrong_is_never_written(
    header: tuple[bytes, bytes],
) -> None:
    async def bad_header(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [header]})
        await send({"type": "http.response.body", "body": b"ok"})

    async with (
        _lean(bad_header, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(GET)
        data = await read_to_eof(stream)
    assert data.startswith(b"HTTP/1.1 500")
    assert b"stolen" not in data
    assert b"x-nul" not in data


async def test_no_body_is_written_for_204_or_head_and_the_connection_goes_on() -> None:
    async def no_content(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        status = 204 if scope["path"] == "/empty" else 200
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"dropped"})

    async with (
        _lean(no_content, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        head = b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
        await stream.send_all(b"GET /empty HTTP/1.1\r\nHost: x\r\n\r\n" + head + GET)
        data = await read_until(stream, 1, b"dropped")
    empty, headed, full = data.split(b"HTTP/1.1 ")[1:]
    assert empty.startswith(b"204") and empty.endswith(b"\r\n\r\n")
    assert headed.startswith(b"200") and headed.endswith(b"\r\n\r\n")
    assert b"content-length: 7\r\n" in full and full.endswith(b"dropped")


async def test_an_http_1_0_request_is_answered_and_the_connection_closed() -> None:
    async with (
        _lean(_fixed_reply, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(b"GET / HTTP/1.0\r\n\r\n" + GET)
        data = await read_to_eof(stream)
    assert data.startswith(b"HTTP/1.1 200")
    assert data.count(b"HTTP/1.1") == 1  # the request behind it is not served
    assert b"connection: close\r\n" in data.lower()


async def test_an_upgrade_is_refused_with_501_after_the_requests_before_it() -> None:
    async with (
        _lean(_fixed_reply, LeanLimits()) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        upgrade = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n"
        await stream.send_all(GET + upgrade)
        data = await read_to_eof(stream)
    first, refused = data.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"200") and first.endswith(b"ok")
    assert refused.startswith(b"501")


async def test_a_non_reading_pipelining_connection_holds_its_read_ahead_and_no_more() -> None:
    """The first request is never answered; behind it the client pipelines 1 MiB of
    small requests. The server reads at most ``max_pipelined_bytes`` ahead and keeps
    them as received: parsed, each would cost several times its size."""
    limits = LeanLimits(max_pipelined_bytes=32 * 1024)
    first_seen = trio.Event()

    async def waiting(scope: Any, receive: Any, send: Any) -> None:
        first_seen.set()
        await receive()
        await receive()  # watches for a disconnect: the server reads ahead meanwhile

    request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    request += b"Accept: application/json\r\nContent-Length: 2\r\n\r\n{}"
    pipelined = request * (1024 * 1024 // len(request))
    tracemalloc.start()
    try:
        async with trio.open_nursery() as nursery:
            server = LeanHttpServer(waiting, limits)
            port = (await nursery.start(server.serve, "127.0.0.1", 0))[0][1]
            baseline = tracemalloc.get_traced_memory()[0]
            async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
                nursery.start_soon(stream.send_all, pipelined)
                with trio.fail_after(10):
                    await first_seen.wait()
                    while server.buffered_bytes < limits.max_pipelined_bytes - 2048:
                        await trio.sleep(0.01)  # until the server stops reading
                held = tracemalloc.get_traced_memory()[0] - baseline
                assert server.buffered_bytes <= limits.max_pipelined_bytes
                assert held < 128 * 1024, f"{held} bytes held"  # parsed: ~1.5 MiB
                nursery.cancel_scope.cancel()
    finally:
        tracemalloc.stop()


def test_connection_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        LeanLimits(max_connections=0)
    with pytest.raises(ValueError, match="send_timeout"):
        LeanLimits(send_timeout=-1.0)
    with pytest.raises(ValueError, match="connection_reserve"):
        LeanLimits(connection_reserve=-1)
    with pytest.raises(ValueError, match="max_connections_per_client"):
        HttpConfig(max_connections_per_client=0)
    with pytest.raises(ValueError, match="send_timeout"):
        HttpConfig(send_timeout=float("inf"))
    with pytest.raises(ValueError, match="connection_reserve"):
        HttpConfig(connection_reserve=-2)
