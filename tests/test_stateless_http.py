"""Stateless Streamable HTTP says plainly what a mode without a back channel cannot do.

Each POST is served by a fresh session that ends with its reply: the client can
answer no request of ours, nothing reaches it outside that reply, and nothing is
remembered between its requests. So server-to-client requests (sampling,
elicitation, roots, ping), subscriptions and ``logging/setLevel`` each get a clear,
specific error instead of a misleading one or a silent ``{}``; the capabilities do
not promise subscriptions or list-change notifications; and a request is cancelled
by closing its connection (see ``test_peer_gone.py``), since a
``notifications/cancelled`` POSTed later reaches another session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio
from msgspec import UNSET

from mcp_actors import ClientHandlers, McpError
from mcp_actors.client.targets import load_server
from mcp_actors.protocol import errors
from mcp_actors.server.serve_http import serve_http
from mcp_actors.transports.http.sse import SSEDecoder

from conftest import connect

FEATURES = "servers.features:server"
NO_CHANNEL = "no channel for server-to-client requests"


def _refuse(params: Any) -> Any:
    raise AssertionError("the stateless server must not reach the client")


@pytest.mark.parametrize(
    ("tool", "arguments"), [("ask_user", {}), ("ask_model", {"question": "?"}), ("roots", {})]
)
async def test_asking_the_client_fails_with_the_reason(tool: str, arguments: Any) -> None:
    handlers = ClientHandlers(sampling=_refuse, elicitation=_refuse, roots=["file:///tmp"])
    async with connect("http-stateless", FEATURES, handlers=handlers) as client:
        with pytest.raises(McpError) as raised:
            await client.call_tool(tool, arguments)
    assert NO_CHANNEL in raised.value.message
    assert "did not declare" not in raised.value.message


async def test_the_capabilities_promise_no_subscription_and_no_list_changes() -> None:
    async with connect("http", FEATURES) as client:
        stateful = client.server_capabilities
    async with connect("http-stateless", FEATURES) as client:
        stateless = client.server_capabilities
    assert stateful.resources is not UNSET and stateful.resources.subscribe is True
    assert stateless.resources is not UNSET and stateless.resources.subscribe is UNSET
    for capabilities in (stateless.resources, stateless.tools, stateless.prompts):
        assert capabilities is not UNSET and capabilities.list_changed is UNSET
    assert stateless.logging == {}  # log messages of a request still travel in its reply


@asynccontextmanager
async def stateless_endpoint() -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            partial(serve_http, load_server(FEATURES), port=0, stateless=True)
        )
        async with httpx.AsyncClient(timeout=10) as http:
            yield http, handle.url
        nursery.cancel_scope.cancel()


async def post(http: httpx.AsyncClient, url: str, method: str, params: Any) -> Any:
    message = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    reply = await http.post(url, json=message, headers=headers)
    assert reply.status_code == 200, reply.text
    events = [event for event in SSEDecoder().feed(reply.content) if event.data]
    assert len(events) == 1
    return httpx.Response(200, content=events[0].data).json()


@pytest.mark.parametrize(
    ("method", "params", "needs"),
    [
        ("resources/subscribe", {"uri": "counter://value"}, "subscriptions need a session"),
        ("resources/unsubscribe", {"uri": "counter://value"}, "subscriptions need a session"),
        ("logging/setLevel", {"level": "debug"}, "the log level needs a session"),
    ],
)
async def test_what_needs_a_session_is_refused_with_the_reason(
    method: str, params: Any, needs: str
) -> None:
    async with stateless_endpoint() as (http, url):
        reply = await post(http, url, method, params)
    assert "result" not in reply, f"{method} pretended to work: {reply}"
    assert reply["error"]["code"] == errors.METHOD_NOT_FOUND
    assert needs in reply["error"]["message"]
    assert "stateless" in reply["error"]["message"]
