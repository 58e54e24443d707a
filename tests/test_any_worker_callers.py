"""A shared legacy session is its caller's on every worker: another caller reaches it on none.

Two workers in this process share their sessions through a real ``redis-server``, each
behind the same auth hook. Alice opens a session on A; with its id, Bob's POST, GET and
DELETE on B are answered as for a session that does not exist, while Alice's requests
on B are served (B rebuilds her session from its record, caller included).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from functools import partial

import httpx
import trio

from mcp_actors import Server
from mcp_actors.auth.server import InvalidToken, ResourceServer
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.shared.settings import SharedSettings
from mcp_actors.transports.http.auth import Principal

from deployment import HEADERS, open_legacy_session, redis_server, request

TOKENS = {"alice-token": "alice", "bob-token": "bob"}


def bearer(token: str) -> dict[str, str]:
    return {**HEADERS, "authorization": f"Bearer {token}"}


class TwoTokens:
    """Accepts Alice's and Bob's tokens."""

    async def verify(self, token: str, resource: str) -> Principal:
        if token not in TOKENS:
            raise InvalidToken("unknown token")
        return Principal(TOKENS[token])


def worker() -> Server:
    server = Server("callers", "1.0")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


async def test_a_shared_session_is_reachable_by_its_caller_only_on_every_worker() -> None:
    async with (
        redis_server() as redis_url,
        AsyncExitStack() as stack,
        trio.open_nursery() as nursery,
    ):
        shared = SharedSettings(redis_url=redis_url, share_sessions=True)
        handles: list[HttpServerHandle] = []
        for _ in range(2):
            auth = ResourceServer(
                verifier=TwoTokens(), authorization_servers=["https://as.invalid"]
            )
            serve = partial(serve_http, worker(), port=0, shared=shared, auth=auth)
            handles.append(await nursery.start(serve))
        a, b = handles
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
        session = await open_legacy_session(http, a.url, bearer("alice-token"))
        call = request(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})

        as_bob = {**bearer("bob-token"), **session}
        with trio.fail_after(30):  # a hang guard: a GET let in would stream for ever
            posted = await http.post(b.url, content=call, headers=as_bob)
            listened = await http.get(b.url, headers={**as_bob, "accept": "text/event-stream"})
            deleted = await http.delete(b.url, headers=as_bob)
        assert (posted.status_code, listened.status_code, deleted.status_code) == (404, 404, 404)

        as_alice = {**bearer("alice-token"), **session}
        served = await http.post(b.url, content=call, headers=as_alice)
        assert served.status_code == 200, served.text
        assert '"structuredContent":{"result":3}' in served.text.replace(" ", "")
        nursery.cancel_scope.cancel()
