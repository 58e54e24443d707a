"""Streamable HTTP, legacy SSE and WebSocket on the wire: every status code, sessions, resumption.

Servers run in-process on 127.0.0.1 (a free port); requests are made with raw
``httpx`` where the test is about HTTP itself, and with our client where it is
about what a client sees.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing
import trio_websocket

from mcp_actors import LATEST, ConnectionClosed, McpError, open_client, types
from mcp_actors.client.targets import UrlTarget, load_server, parse_target
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.server.serve_websocket import serve_websocket
from mcp_actors.transports.http.client import open_streamable_http
from mcp_actors.transports.http.client_base import ResponseChunks, read_events
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.sse import ServerSentEvent, SSEDecoder
from mcp_actors.transports.http.sse_client import LegacySseError, open_sse_client
from mcp_actors.transports.websocket import WebSocketRefused, open_websocket

from conftest import SAMPLE, TESTS, served_by_cli, wait_for_event

BOTH = "application/json, text/event-stream"
HEADERS = {"accept": BOTH, "content-type": "application/json"}


def initialize_message(version: str = LATEST, request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


def call(request_id: int, name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[HttpServerHandle]:
    server = load_server(SAMPLE)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(partial(serve_http, server, port=0, **options))
        yield handle
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def raw_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http:
        del http.headers["accept"]  # httpx would send "*/*", which admits anything
        yield http


async def open_session(http: httpx.AsyncClient, url: str, version: str = LATEST) -> dict[str, str]:
    """Initialize over raw HTTP; the headers every later request of the session sends."""
    response = await http.post(url, json=initialize_message(version), headers=HEADERS)
    assert response.status_code == 200
    session = {**HEADERS, "mcp-session-id": response.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = version
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=initialized, headers=session)).status_code == 202
    return session


def messages(body: bytes) -> list[Any]:
    """The JSON-RPC messages of a complete event-stream body (priming events skipped)."""
    decoder = SSEDecoder()
    return [json.loads(e.data) for e in decoder.feed(body) if e.data]


async def next_events(chunks: ResponseChunks, decoder: SSEDecoder, count: int) -> list[Any]:
    """Read until ``count`` events with data have arrived."""
    found: list[ServerSentEvent] = []
    with trio.fail_after(10):
        while len(found) < count:
            events = await read_events(chunks, decoder)
            assert events is not None, "the stream ended"
            found.extend(e for e in events if e.data)
    return [json.loads(e.data) for e in found]


# -- POST, GET, DELETE: the status codes -----------------------------------------------


async def test_post_answers_every_status_the_spec_names() -> None:
    async with serving() as server, raw_client() as http:
        url = server.url
        first = await http.post(url, json=initialize_message(), headers=HEADERS)
        assert first.status_code == 200
        assert first.headers["content-type"] == "text/event-stream"
        session_id = first.headers["mcp-session-id"]
        assert all(0x21 <= ord(c) <= 0x7E for c in session_id) and len(session_id) >= 32
        assert messages(first.content)[0]["result"]["protocolVersion"] == LATEST

        session = {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": LATEST}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        accepted = await http.post(url, json=note, headers=session)
        assert (accepted.status_code, accepted.content) == (202, b"")

        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

        async def post(body: Any = ping, **changes: str | None) -> httpx.Response:
            headers = {k: v for k, v in {**session, **changes}.items() if v is not None}
            if isinstance(body, bytes):
                return await http.post(url, content=body, headers=headers)
            return await http.post(url, json=body, headers=headers)

        assert (await post(accept=None)).status_code == 406
        assert (await post(accept="text/html")).status_code == 406
        assert (await post(**{"content-type": "text/plain"})).status_code == 415
        assert (await post(b"{}", **{"content-type": None})).status_code == 415
        bad = await post(b'{"jsonrpc": "2.0", "id": 3, "method": ')
        assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700
        not_rpc = await post({"hello": "world"})
        assert not_rpc.status_code == 400 and not_rpc.json()["error"]["code"] == -32600
        assert (await post(**{"mcp-session-id": None})).status_code == 400
        assert (await post(**{"mcp-session-id": "no-such-session"})).status_code == 404
        assert (await post(**{"mcp-protocol-version": "1999-01-01"})).status_code == 400
        # Any supported version is accepted, even if not the negotiated one (the
        # conformance suite sends 2025-03-26 on a 2025-11-25 session); none means 2025-03-26.
        for version in ("2025-03-26", None):
            ok = await post(**{"mcp-protocol-version": version})
            assert ok.status_code == 200 and messages(ok.content)[0]["id"] == 2
        only_json = await post(accept="application/json")
        assert only_json.headers["content-type"] == "application/json"
        assert only_json.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert (await http.put(url, headers=session)).status_code == 405

        assert (await http.delete(url, headers=session)).status_code == 200
        assert (await post()).status_code == 404
        assert (await http.get(url, headers=session)).status_code == 404
        assert (await http.delete(url, headers=session)).status_code == 404
        assert (await http.get(server.base_url + "/elsewhere")).status_code == 404


async def test_a_body_over_the_limit_is_413() -> None:
    async with serving(config=HttpConfig(max_body_size=1000)) as server, raw_client() as http:
        big = {**initialize_message(), "padding": "x" * 2000}
        assert (await http.post(server.url, json=big, headers=HEADERS)).status_code == 413


async def test_a_failed_initialize_leaves_no_session() -> None:
    async with serving() as server, raw_client() as http:
        broken = initialize_message()
        del broken["params"]["clientInfo"]
        response = await http.post(server.url, json=broken, headers=HEADERS)
        assert response.status_code == 200 and "mcp-session-id" not in response.headers
        assert messages(response.content)[0]["error"]["code"] == -32602
        assert server.sessions == 0


async def test_dns_rebinding_is_refused_as_the_conformance_suite_checks() -> None:
    async with serving() as server, raw_client() as http:
        host = f"127.0.0.1:{server.port}"
        evil = {**HEADERS, "host": "evil.example.com", "origin": "http://evil.example.com"}
        refused = await http.post(server.url, json=initialize_message(), headers=evil)
        assert refused.status_code == 403
        good = {**HEADERS, "host": host, "origin": f"http://{host}"}
        accepted = await http.post(server.url, json=initialize_message(), headers=good)
        assert accepted.status_code == 200
        cross = {**HEADERS, "origin": "http://evil.example.com"}
        assert (
            await http.post(server.url, json=initialize_message(), headers=cross)
        ).status_code == 403
        sse = await http.get(server.sse_url or "", headers={"origin": "http://evil.example.com"})
        assert sse.status_code == 403


async def test_concurrent_posts_each_get_their_own_stream() -> None:
    """What the conformance suite's server-sse-multiple-streams scenario does."""
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url)
        headers = {
            **session,
            "mcp-protocol-version": "2025-03-26",
            "accept": "text/event-stream, application/json",
        }
        replies: dict[int, httpx.Response] = {}

        async def list_tools(request_id: int) -> None:
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
            replies[request_id] = await http.post(server.url, json=body, headers=headers)

        async with trio.open_nursery() as nursery:
            for request_id in (1000, 1001, 1002):
                nursery.start_soon(list_tools, request_id)
        for request_id, reply in replies.items():
            assert reply.status_code == 200
            assert [m["id"] for m in messages(reply.content)] == [request_id]


async def test_the_get_stream_carries_unrelated_messages_and_only_those() -> None:
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url)
        get_headers = {**session, "accept": "text/event-stream"}
        async with http.stream("GET", server.url, headers=get_headers) as listening:
            assert listening.status_code == 200
            second = await http.get(server.url, headers=get_headers)
            assert second.status_code == 409
            assert (
                await http.get(server.url, headers=session | {"accept": "application/json"})
            ).status_code == 406
            chunks, decoder = ResponseChunks(listening), SSEDecoder()
            try:
                reply = await http.post(
                    server.url,
                    json=call(5, "toggle_extra_tool", {"present": True}),
                    headers=session,
                )
                [changed] = await next_events(chunks, decoder, 1)
            finally:
                await chunks.aclose()
            await http.post(
                server.url, json=call(6, "toggle_extra_tool", {"present": False}), headers=session
            )
        assert changed["method"] == "notifications/tools/list_changed"
        assert [m.get("method") for m in messages(reply.content)] == [None]  # the response only


async def test_a_broken_response_stream_resumes_with_last_event_id() -> None:
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url)
        body = call(7, "slow", {"steps": 6, "delay": 0.05}, progressToken="t")
        async with http.stream("POST", server.url, json=body, headers=session) as response:
            chunks, decoder = ResponseChunks(response), SSEDecoder()
            try:
                first = await next_events(chunks, decoder, 2)
            finally:
                await chunks.aclose()  # the connection breaks after two progress reports
        cursor = decoder.last_event_id
        assert cursor.startswith("p") and decoder.retry == 1000
        resumed = await http.get(
            server.url, headers={**session, "accept": "text/event-stream", "last-event-id": cursor}
        )
        assert resumed.status_code == 200
        rest = messages(resumed.content)
        progress = [m["params"]["progress"] for m in first + rest if "method" in m]
        assert progress == [1, 2, 3, 4, 5, 6]
        assert (
            rest[-1]["id"] == 7 and rest[-1]["result"]["content"][0]["text"] == "done after 6 steps"
        )
        unknown = await http.get(
            server.url, headers={**session, "accept": "text/event-stream", "last-event-id": "zz/1"}
        )
        assert unknown.status_code == 400


async def test_priming_events_only_for_clients_that_expect_them() -> None:
    async with serving() as server, raw_client() as http:
        for version, primed in (("2025-11-25", True), ("2025-06-18", False)):
            session = await open_session(http, server.url, version)
            reply = await http.post(
                server.url, json=call(2, "add", {"a": 1, "b": 2}), headers=session
            )
            first = SSEDecoder().feed(reply.content)[0]
            assert (first.data == b"") is primed, version


async def test_server_closes_streams_for_polling_and_our_client_resumes() -> None:
    config = HttpConfig(poll_after=0.1, retry_interval=20)
    async with serving(config=config) as server, open_streamable_http(server.url) as stream:
        async with open_client(stream, era="legacy") as client:
            result = await client.call_tool("slow", {"steps": 8, "delay": 0.05})
            assert result.content == [types.TextContent(text="done after 8 steps")]
        assert stream.reconnects >= 2


async def test_idle_streams_get_keep_alive_comments() -> None:
    async with serving(config=HttpConfig(keepalive_interval=0.05)) as server, raw_client() as http:
        session = await open_session(http, server.url)
        get_headers = {**session, "accept": "text/event-stream"}
        async with http.stream("GET", server.url, headers=get_headers) as response:
            chunks, received = ResponseChunks(response), b""
            try:
                with trio.fail_after(5):
                    while b": keep-alive" not in received:
                        received += await chunks.next() or b""
            finally:
                await chunks.aclose()
        # The GET stream opens with a priming event too, so it is resumable from the start.
        priming = SSEDecoder().feed(received)[0]
        assert priming.data == b"" and priming.id.startswith("g/")


async def test_batches_only_where_the_revision_allows_them() -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, call(2, "add", {"a": 1, "b": 1})]
    async with serving() as server, raw_client() as http:
        old = await open_session(http, server.url, "2025-03-26")
        reply = await http.post(server.url, json=batch, headers=old)
        answers = [
            m
            for body in messages(reply.content)
            for m in (body if isinstance(body, list) else [body])
        ]
        assert sorted(m["id"] for m in answers) == [1, 2]
        as_json = await http.post(
            server.url, json=batch, headers={**old, "accept": "application/json"}
        )
        assert sorted(m["id"] for m in as_json.json()) == [1, 2]
        new = await open_session(http, server.url, LATEST)
        assert (await http.post(server.url, json=batch, headers=new)).status_code == 400
        reused = await http.post(server.url, json=[batch[0], batch[0]], headers=old)
        assert reused.status_code == 400


async def test_json_response_mode() -> None:
    async with serving(json_response=True) as server, raw_client() as http:
        session = await open_session(http, server.url)
        reply = await http.post(server.url, json=call(3, "add", {"a": 2, "b": 2}), headers=session)
        assert reply.headers["content-type"] == "application/json"
        assert reply.json()["result"]["structuredContent"] == {"result": 4}


async def test_stateless_mode_has_no_sessions() -> None:
    async with serving(stateless=True) as server, raw_client() as http:
        init = await http.post(server.url, json=initialize_message(), headers=HEADERS)
        assert init.status_code == 200 and "mcp-session-id" not in init.headers
        headers = {**HEADERS, "mcp-protocol-version": "2025-06-18"}
        reply = await http.post(server.url, json=call(1, "add", {"a": 2, "b": 5}), headers=headers)
        assert messages(reply.content)[0]["result"]["structuredContent"] == {"result": 7}
        assert (
            await http.get(server.url, headers={**headers, "accept": "text/event-stream"})
        ).status_code == 405
        assert (await http.delete(server.url, headers=headers)).status_code == 405
        bad_version = {**headers, "mcp-protocol-version": "2000-01-01"}
        assert (
            await http.post(server.url, json=call(2, "add"), headers=bad_version)
        ).status_code == 400
        await trio.sleep(0.05)
        assert server.supervisor.statistics().sessions_active == 0


# -- session lifetime ------------------------------------------------------------------


async def test_idle_sessions_expire() -> None:
    async with serving(config=HttpConfig(session_idle_timeout=0.2)) as server, raw_client() as http:
        session = await open_session(http, server.url)
        assert server.sessions == 1
        with trio.fail_after(5):
            while server.sessions:
                await trio.sleep(0.05)
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        assert (await http.post(server.url, json=ping, headers=session)).status_code == 404
        assert server.app.registry.expired == 1


async def test_a_vanished_clients_session_is_cleaned_up(events_file: Path) -> None:
    config = HttpConfig(session_idle_timeout=0.3)
    async with serving(config=config) as server, raw_client() as http:
        session = await open_session(http, server.url)
        body = call(4, "wait_forever", {"tag": "vanished"})
        async with http.stream("POST", server.url, json=body, headers=session):
            await wait_for_event(events_file, "started vanished")
        # The client dropped the connection and never came back: not a cancellation...
        await trio.sleep(0.1)
        assert "cancelled vanished" not in events_file.read_text()
        # ...but once the session has been idle long enough it is closed, handler and all.
        await wait_for_event(events_file, "cancelled vanished", timeout=5)
        with trio.fail_after(5):
            while server.supervisor.statistics().sessions_active:
                await trio.sleep(0.05)
        assert server.sessions == 0


async def test_delete_cancels_in_flight_requests(events_file: Path) -> None:
    async with serving() as server, raw_client() as http:
        session = await open_session(http, server.url)
        body = call(4, "wait_forever", {"tag": "deleted"})
        async with http.stream("POST", server.url, json=body, headers=session) as response:
            await wait_for_event(events_file, "started deleted")
            assert (await http.delete(server.url, headers=session)).status_code == 200
            await wait_for_event(events_file, "cancelled deleted")
            with trio.fail_after(5):
                await response.aread()  # the stream ends with the session


async def test_without_renewal_our_client_sees_the_session_end() -> None:
    async with (
        serving() as server,
        open_streamable_http(server.url, renew_expired_sessions=False) as stream,
        open_client(stream, era="legacy") as client,
    ):
        await client.ping()
        server.app.registry.close_all()
        with trio.fail_after(5), pytest.raises((ConnectionClosed, McpError)):
            while True:
                await client.ping()
                await trio.sleep(0.01)


async def test_our_client_deletes_its_session_on_exit() -> None:
    async with serving() as server:
        async with open_client(server.url, era="legacy") as client:
            await client.ping()
            assert server.sessions == 1
        with trio.fail_after(5):
            while server.sessions:
                await trio.sleep(0.01)


# -- legacy SSE ------------------------------------------------------------------------


async def test_legacy_sse_endpoints() -> None:
    async with serving() as server, raw_client() as http:
        sse_url = server.sse_url or ""
        async with http.stream("GET", sse_url) as stream:
            assert stream.status_code == 200
            chunks, decoder = ResponseChunks(stream), SSEDecoder()
            try:
                with trio.fail_after(5):
                    events = await read_events(chunks, decoder)
                assert events is not None and events[0].event == "endpoint"
                endpoint = server.base_url + events[0].data.decode()
                assert endpoint.startswith(server.base_url + "/messages?session_id=")
                json_headers = {"content-type": "application/json"}
                messages_url = server.base_url + "/messages"
                assert (
                    await http.post(messages_url, json={}, headers=json_headers)
                ).status_code == 400
                unknown = await http.post(
                    messages_url + "?session_id=x", json={}, headers=json_headers
                )
                assert unknown.status_code == 404
                bad = await http.post(endpoint, content=b"{oops", headers=json_headers)
                assert bad.status_code == 400
                accepted = await http.post(
                    endpoint, json=initialize_message(), headers=json_headers
                )
                assert accepted.status_code == 202
                [answer] = await next_events(chunks, decoder, 1)
                assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "sample"
                assert server.sessions == 1
            finally:
                await chunks.aclose()
        with trio.fail_after(5):  # the stream was the session
            while server.sessions:
                await trio.sleep(0.01)


async def test_our_client_falls_back_to_legacy_sse() -> None:
    async with serving() as server, open_streamable_http(server.sse_url or "") as stream:
        async with open_client(stream, era="legacy") as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).content == [
                types.TextContent(text="3")
            ]
        assert stream.mode == "legacy"
    assert parse_target("http://h/sse") == UrlTarget("http://h/sse", "sse")
    assert parse_target("http://h/mcp") == UrlTarget("http://h/mcp", "auto")
    assert parse_target("ws://h/mcp") == UrlTarget("ws://h/mcp", "websocket")


async def test_the_legacy_client_refuses_a_non_sse_url() -> None:
    async with serving() as server:
        with pytest.raises(LegacySseError, match="not an SSE stream"):
            async with open_sse_client(server.base_url + "/nothing"):
                pass


# -- WebSocket -------------------------------------------------------------------------


@asynccontextmanager
async def websocket_server(**options: Any) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            partial(serve_websocket, load_server(SAMPLE), port=0, **options)
        )
        yield handle.url
        nursery.cancel_scope.cancel()


async def test_websocket_frames_and_close_codes() -> None:
    async with websocket_server(max_message_size=4096) as url:
        with pytest.raises(WebSocketRefused) as no_subprotocol:
            async with open_websocket(url):
                pass
        assert no_subprotocol.value.status_code == 400
        evil = {"origin": "http://evil.example.com"}
        with pytest.raises(WebSocketRefused) as forbidden:
            async with open_websocket(url, subprotocols=["mcp"], headers=evil):
                pass
        assert forbidden.value.status_code == 403

        async with open_websocket(url, subprotocols=["mcp"]) as ws:
            assert ws.subprotocol == "mcp"
            await ws.send_message("{not json")
            error = json.loads(await ws.get_message())
            assert error["error"]["code"] == -32700  # answered; the connection goes on
            await ws.send_message(json.dumps(initialize_message()))
            assert json.loads(await ws.get_message())["id"] == 1
            await ws.send_message(b"\x00binary")
            with pytest.raises(trio_websocket.ConnectionClosed) as closed:
                await ws.get_message()
            assert closed.value.reason.code == 1003

        async with open_websocket(url, subprotocols=["mcp"]) as ws:
            await ws.send_message("x" * 5000)
            with pytest.raises(trio_websocket.ConnectionClosed) as too_big:
                await ws.get_message()
            assert too_big.value.reason.code == 1009


@pytest.mark.parametrize("ending", ["normally", "by-cancellation"])
async def test_closing_a_websocket_client_completes_the_close_handshake(
    mock_clock: trio.testing.MockClock, ending: str
) -> None:
    """The client reads the server's close frame instead of waiting out a timeout.

    On a mock clock that jumps ahead whenever everything has waited for a while, a
    close that stalls on a timeout shows as that timeout's virtual seconds; one that
    completes the handshake takes (virtually) no time at all.
    """
    mock_clock.autojump_threshold = 0.5
    async with websocket_server() as url:
        with trio.CancelScope() as body:
            async with open_client(url, era="legacy") as client:
                assert (await client.call_tool("add", {"a": 1, "b": 2})).content
                started = trio.current_time()
                if ending == "by-cancellation":
                    body.cancel()  # the client's own tasks are cancelled as it closes
                    await trio.sleep_forever()
        closing_took = trio.current_time() - started
    assert closing_took < 0.5, f"the close waited {closing_took:g} s for a timeout"


# -- the command line and the import contract -----------------------------------------


@pytest.mark.parametrize("transport", ["http", "sse", "ws"])
async def test_cli_serves_and_calls_over_the_network(transport: str) -> None:
    async with served_by_cli("--transport", transport, "--port", "0") as url:
        assert url.endswith({"http": "/mcp", "sse": "/sse", "ws": "/mcp"}[transport])
        done = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "call", url, "add", "a=20", "b=22"],
            capture_stdout=True,
            capture_stderr=True,
            cwd=str(TESTS),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == b"42\n"  # the content; --raw: the result as JSON


def test_import_mcp_actors_loads_no_network_library() -> None:
    code = (
        "import sys, mcp_actors, mcp_actors.cli, mcp_actors.client.targets; "
        "print(sorted(m for m in ('hypercorn', 'httpx', 'trio_websocket') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_the_client_renews_a_session_the_server_forgot() -> None:
    async with (
        serving() as server,
        open_streamable_http(server.url) as stream,
        open_client(stream, era="legacy") as client,
    ):
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
        first_session = stream.session_id
        server.app.registry.close_all()  # as if the server had restarted
        # The next call meets a 404, renews the session with a new initialize, goes on.
        result = await client.call_tool("add", {"a": 20, "b": 22})
        assert result.structured_content == {"result": 42}
        assert stream.renewals == 1
        assert stream.session_id not in (None, first_session)
        await client.ping()
