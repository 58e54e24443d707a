"""Every long-lived HTTP stream ends when the access token it was opened with expires.

A WebSocket session already lived no longer than its token; over HTTP a stream opened
with a token kept delivering after the token expired (while a fresh request with it got
401). Each kind of long-lived HTTP stream — a 2026-07-28 ``subscriptions/listen``, a
long event-stream reply to a 2026-07-28 POST, a legacy session's GET stream and a long
SSE reply to its POST, the legacy HTTP+SSE ``/sse`` stream — now ends at the token's
expiry, on both HTTP front ends (``serve_http`` imported: conftest parametrizes them).

The tokens are signed here and checked by a :class:`JwtVerifier` against an in-process
key set (as in tests/test_auth_server_units.py); the trio clock is a ``MockClock`` that
jumps whenever everything waits, so a token that lives 60 seconds expires at once, and
the time the stream ended is read off the clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from test_auth_server_units import ISSUER, RESOURCE, Published, jwks, token, verifier_for
from test_auth_server_units import KEY as SIGNING_KEY

from mcp_actors import Server
from mcp_actors.auth.server import ResourceServer
from mcp_actors.server.serve_http import HttpServerHandle, serve_http

from deployment import HEADERS, open_legacy_session, request

MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: Seconds the tokens of these tests live.
LIFETIME = 60
KINDS = ("listen", "modern-reply", "get", "post-reply", "sse")


class Waiting:
    """A server whose ``wait`` tool runs until cancelled, and says when it was."""

    def __init__(self) -> None:
        self.server = Server("waiting")
        self.cancelled = trio.Event()

        @self.server.tool
        async def wait() -> str:
            try:
                await trio.sleep_forever()
            finally:
                self.cancelled.set()
            return "never"  # pragma: no cover


@asynccontextmanager
async def protected(server: Server) -> AsyncIterator[HttpServerHandle]:
    """``server`` over HTTP, protected by tokens signed with the tests' key, checked by a
    verifier whose clock runs with trio's (a token expires on the mock clock)."""
    start = trio.current_time()

    def now() -> float:
        return time.time() + trio.current_time() - start

    auth = ResourceServer(
        verifier=verifier_for(Published(jwks(SIGNING_KEY)), leeway=0, clock=now),
        authorization_servers=[ISSUER],
        resource=RESOURCE,
    )
    async with trio.open_nursery() as nursery:
        http = await nursery.start(partial(serve_http, server, port=0, auth=auth))
        yield http
        nursery.cancel_scope.cancel()


def bearer(lifetime: int = LIFETIME) -> dict[str, str]:
    expires = int(time.time()) + lifetime
    return {"authorization": f"Bearer {token(exp=expires, client_id='app')}"}


def modern_post(
    request_id: int, method: str, params: dict[str, Any]
) -> tuple[bytes, dict[str, str]]:
    body = request(request_id, method, {"_meta": MODERN_META, **params})
    headers = {**HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    return body, headers


@asynccontextmanager
async def open_stream(
    kind: str, http: HttpServerHandle, client: httpx.AsyncClient, auth: dict[str, str]
) -> AsyncIterator[httpx.Response]:
    """Open the long-lived stream of ``kind`` with the token in ``auth``."""
    if kind in ("listen", "modern-reply"):
        if kind == "listen":
            body, headers = modern_post(7, "subscriptions/listen", {"notifications": {}})
        else:
            body, headers = modern_post(7, "tools/call", {"name": "wait", "arguments": {}})
        opened = client.stream("POST", http.url, content=body, headers={**headers, **auth})
    elif kind == "sse":
        assert http.sse_url is not None
        opened = client.stream("GET", http.sse_url, headers=auth)
    else:
        session = await open_legacy_session(client, http.url, {**HEADERS, **auth})
        headers = {**HEADERS, **session, **auth}
        if kind == "get":
            opened = client.stream("GET", http.url, headers=headers)
        else:
            call = request(2, "tools/call", {"name": "wait", "arguments": {}})
            opened = client.stream("POST", http.url, content=call, headers=headers)
    async with opened as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        yield response


@pytest.mark.parametrize("kind", KINDS)
async def test_a_stream_ends_when_its_token_expires(
    autojump_clock: trio.testing.MockClock, kind: str
) -> None:
    waiting = Waiting()
    async with protected(waiting.server) as http, httpx.AsyncClient(timeout=None) as client:
        opened_at = trio.current_time()
        auth = bearer()
        with trio.fail_after(10 * LIFETIME):  # a hang guard, on the mock clock
            async with open_stream(kind, http, client, auth) as response:
                received = b""
                async for chunk in response.aiter_bytes():
                    received += chunk
                ended_at = trio.current_time()
            # The token is now refused: the client comes back with a fresh one, at once
            # (on the same connection: nothing of the ended stream holds it up).
            body, headers = modern_post(8, "tools/list", {})
            refused = await client.post(http.url, content=body, headers={**headers, **auth})
            assert refused.status_code == 401
            assert trio.current_time() - ended_at < 1
            if kind in ("modern-reply", "post-reply"):
                await waiting.cancelled.wait()  # the request went with its stream, at once
                assert trio.current_time() - ended_at < 1
        assert LIFETIME - 2 <= ended_at - opened_at <= LIFETIME + 1
        if kind == "listen":
            first = received.split(b"\n\n")[0].decode()
            acknowledged = json.loads(first.removeprefix("data: "))
            assert acknowledged["method"] == "notifications/subscriptions/acknowledged"


async def test_a_stream_opened_with_a_token_lives_while_the_token_does(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A token that lives longer keeps its stream: the end comes from the expiry, not a
    bound of its own."""
    async with protected(Server("quiet")) as http, httpx.AsyncClient(timeout=None) as client:
        opened_at = trio.current_time()
        async with open_stream("listen", http, client, bearer(10 * LIFETIME)) as response:
            with trio.move_on_after(5 * LIFETIME) as still_open:
                async for _ in response.aiter_bytes():
                    pass
        assert still_open.cancelled_caught
        assert trio.current_time() - opened_at >= 5 * LIFETIME
