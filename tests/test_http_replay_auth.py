"""A stream resumed on a server that does not host its session (``replay_unknown_sessions``).

Two endpoints share their events in a real Redis, as the workers of a deployment do. A client
reads a tool call's priming event on A, then resumes the stream on B with
``Last-Event-ID``. Without authentication B replays what the store holds. With an auth
hook it must not: the store does not record whose session a stream was, so B could
not check the caller against it, and answers the 404 of an unknown session.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from functools import partial

import httpx
import pytest
import trio

from mcp_actors import Server
from mcp_actors.auth.server import InvalidToken, ResourceServer
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.shared.settings import SharedSettings
from mcp_actors.transports.http.auth import Principal

from deployment import HEADERS, events_of, open_legacy_session, redis_server, request

TOKEN = "alice-token"
AUTHORIZED = {**HEADERS, "authorization": f"Bearer {TOKEN}"}


def worker() -> Server:
    """One worker's server (each shares its state through Redis on its own)."""
    server = Server("replaying", "1.0")

    @server.tool
    async def slow(seconds: float) -> str:
        """Sleep, so the call's response is an event stream with a priming event."""
        await trio.sleep(seconds)
        return f"slept {seconds}s"

    return server


class OneToken:
    """Accepts one bearer token, as Alice."""

    async def verify(self, token: str, resource: str) -> Principal:
        if token != TOKEN:
            raise InvalidToken("unknown token")
        return Principal("alice")


@pytest.mark.parametrize("authenticating", [False, True], ids=["open", "auth"])
async def test_a_stream_resumed_elsewhere_is_replayed_only_without_an_auth_hook(
    authenticating: bool,
) -> None:
    async with (
        redis_server() as redis_url,
        AsyncExitStack() as stack,
        trio.open_nursery() as nursery,
    ):
        shared = SharedSettings(redis_url=redis_url, share_events=True)
        handles: list[HttpServerHandle] = []
        for _ in range(2):
            auth = (
                ResourceServer(verifier=OneToken(), authorization_servers=["https://as.invalid"])
                if authenticating
                else None
            )
            handles.append(
                await nursery.start(partial(serve_http, worker(), port=0, shared=shared, auth=auth))
            )
        a, b = handles
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=10))
        session = await open_legacy_session(http, a.url, AUTHORIZED)
        call = request(2, "tools/call", {"name": "slow", "arguments": {"seconds": 0.2}})
        async with http.stream(
            "POST", a.url, content=call, headers={**AUTHORIZED, **session}
        ) as first:
            assert first.headers["content-type"].startswith("text/event-stream")
            seen_on_a = await events_of(first)
        primed = seen_on_a[0]
        assert primed.id and not primed.data

        resume = {
            **AUTHORIZED,
            **session,
            "accept": "text/event-stream",
            "last-event-id": primed.id,
        }
        async with http.stream("GET", b.url, headers=resume) as replay:
            if authenticating:
                assert replay.status_code == 404
            else:
                assert replay.status_code == 200
                replayed = [json.loads(e.data) for e in await events_of(replay) if e.data]
                assert [m.get("id") for m in replayed] == [2]
                assert replayed[0]["result"]["content"][0]["text"] == "slept 0.2s"
        nursery.cancel_scope.cancel()
