"""Listen streams over HTTP: a pool of their own, bounded per client.

A 2026-07-28 ``subscriptions/listen`` stream used to hold one of the
``HttpConfig.max_modern_requests`` slots for as long as it stayed open: one client's
streams could take every slot, every other client's request got 503, and the documented
listen limit (-32000 with ``data.limit``) was never reached. Now listen streams are
bounded by the server's pool (``max_listen_streams``) and per client
(``max_listen_streams_per_client``; a client is the authenticated caller when the
server authenticates, else the peer address), and requests keep their slots. Both HTTP
front ends (``serve_http`` imported: conftest parametrizes them).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial

import httpx
import pytest
import trio
from test_auth_server_units import ISSUER, RESOURCE, Published, jwks, token, verifier_for
from test_auth_server_units import KEY as SIGNING_KEY

from mcp_actors import Client, McpError, Server, open_client
from mcp_actors.auth.server import ResourceServer
from mcp_actors.server.serve_http import HttpServerHandle, serve_http
from mcp_actors.testing.wire import WireRecorder, assert_all_valid
from mcp_actors.transports.http.client import open_streamable_http
from mcp_actors.transports.http.config import HttpConfig

MODERN = "2026-07-28"


def bounded_server(*, per_client: int = 2, total: int = 5) -> Server:
    server = Server("bounded", max_listen_streams=total, max_listen_streams_per_client=per_client)
    server.tool(lambda: "x", name="noop")
    return server


@asynccontextmanager
async def serving(
    server: Server, config: HttpConfig | None = None, auth: ResourceServer | None = None
) -> AsyncIterator[HttpServerHandle]:
    async with trio.open_nursery() as nursery:
        options = {"config": config} if config is not None else {}
        http = await nursery.start(partial(serve_http, server, port=0, auth=auth, **options))
        yield http
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def modern_client(
    url: str, *, address: str = "127.0.0.1", headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """A modern client whose connections come from ``address`` (any of 127.0.0.0/8)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with (
        httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(30, read=None)) as http,
        open_streamable_http(
            url, http_client=http, headers=headers, legacy_fallback=False
        ) as stream,
    ):
        wire = WireRecorder(stream)
        async with open_client(wire, era="modern") as client:
            yield client
    assert_all_valid(wire, MODERN)
    assert_all_valid(wire.peer(), MODERN)


async def refused_listen(client: Client) -> McpError:
    with pytest.raises(McpError) as refused:
        async with client.listen(tools_list_changed=True):
            pass  # pragma: no cover
    return refused.value


async def test_listen_streams_take_no_request_slot() -> None:
    """One request slot, three open streams: requests are still served, and more
    streams are refused by the listen bound, not by the request pool's 503."""
    server = Server("bounded", max_listen_streams=3)
    server.tool(lambda: "x", name="noop")
    config = HttpConfig(max_modern_requests=1)
    async with serving(server, config) as http, modern_client(http.url) as client:
        async with AsyncExitStack() as streams:
            for _ in range(3):
                await streams.enter_async_context(client.listen(tools_list_changed=True))
            assert server.listen_statistics().active == 3
            assert not (await client.call_tool("noop")).is_error
            async with modern_client(http.url, address="127.0.0.2") as other:
                assert not (await other.call_tool("noop")).is_error
            refused = await refused_listen(client)
        assert refused.code == -32000 and refused.data == {"limit": 3}


async def test_a_client_at_its_bound_is_refused_while_another_address_is_served() -> None:
    server = bounded_server()
    async with (
        serving(server) as http,
        modern_client(http.url) as first,
        modern_client(http.url, address="127.0.0.2") as second,
    ):
        async with first.listen(tools_list_changed=True), first.listen(tools_list_changed=True):
            refused = await refused_listen(first)
            assert refused.code == -32000 and refused.data == {"limit": 2}
            assert "from this client" in refused.message
            async with second.listen(tools_list_changed=True) as changes:
                assert not (await second.call_tool("noop")).is_error
                assert not (await first.call_tool("noop")).is_error
                server.add_tool(server.tools["noop"], replace=True)
                with trio.fail_after(10):
                    event = await changes.__anext__()
                assert event.method == "notifications/tools/list_changed"
        assert server.listen_statistics().refused == 1


async def test_with_auth_a_client_is_its_caller_not_its_address() -> None:
    """Two callers from one address each have their own bound; one caller is one client
    however many connections it opens."""
    auth = ResourceServer(
        verifier=verifier_for(Published(jwks(SIGNING_KEY))),
        authorization_servers=[ISSUER],
        resource=RESOURCE,
    )
    alice = {"authorization": f"Bearer {token(sub='alice', client_id='app')}"}
    bob = {"authorization": f"Bearer {token(sub='bob', client_id='app')}"}
    server = bounded_server()
    async with (
        serving(server, auth=auth) as http,
        modern_client(http.url, headers=alice) as first,
        modern_client(http.url, headers=alice) as again,
        modern_client(http.url, headers=bob) as other,
        first.listen(tools_list_changed=True),
        again.listen(tools_list_changed=True),
    ):
        refused = await refused_listen(first)
        assert refused.code == -32000 and refused.data == {"limit": 2}
        async with other.listen(tools_list_changed=True), other.listen(tools_list_changed=True):
            assert server.listen_statistics().active == 4
