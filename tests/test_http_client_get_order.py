"""The Streamable HTTP client opens its GET stream before it sends anything after
``notifications/initialized``.

A server may deliver a message on whichever stream it holds when the message is
ready (the conformance suite's ``sse-retry`` scenario delivers a pending result on
"the next GET"), so a GET that overtakes the first request changes what the client
sees. The transport waits (bounded) until the GET's request is written.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import trio

from mcp_actors import open_client
from mcp_actors.transports.http.client import open_streamable_http

URL = "http://mcp.test/mcp"
SESSION = {"mcp-session-id": "s1"}


async def test_the_get_stream_is_requested_before_the_next_request() -> None:
    seen: list[str] = []

    async def events() -> AsyncIterator[bytes]:
        yield b"id: e1\nretry: 500\ndata: \n\n"
        await trio.sleep_forever()

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            await trio.sleep(0.05)  # a GET slow to be answered still goes first
            seen.append("GET")
            return httpx.Response(
                200, headers={**SESSION, "content-type": "text/event-stream"}, content=events()
            )
        if request.method == "DELETE":
            return httpx.Response(200)
        message = json.loads(request.content)
        seen.append(message["method"])
        if "id" not in message:
            return httpx.Response(202)
        result: dict[str, object] = {"tools": []}
        if message["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mock", "version": "1"},
            }
        body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return httpx.Response(200, headers=SESSION, json=body)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as http:
        with trio.fail_after(10):
            async with (
                open_streamable_http(URL, http_client=http) as stream,
                open_client(stream, era="legacy") as client,
            ):
                assert await client.list_tools() == []
    assert seen == ["initialize", "notifications/initialized", "GET", "tools/list"]
