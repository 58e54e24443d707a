"""A protected server against a real authorization server (oidc-provider, see
tests/servers/authorization_server.py), over every HTTP transport.

Each case serves a fresh protected server on a free loopback port — Streamable HTTP in
the legacy era (a session) and in the 2026-07-28 era (one POST per request), legacy
HTTP+SSE, and WebSocket (the token at the upgrade) — and mints real tokens for its URL
from the authorization server: client credentials with the RFC 8707 ``resource``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import pytest
import trio

from mcp_actors import ConnectionClosed, Context, Server, UrlTarget, open_client
from mcp_actors.auth.challenge import Challenge, find_challenge
from mcp_actors.auth.server import IntrospectionVerifier, JwtVerifier, ResourceServer
from mcp_actors.protocol.errors import McpError
from mcp_actors.server.serve_http import serve_http
from mcp_actors.server.serve_websocket import serve_websocket
from mcp_actors.transports.http.client_base import ResponseChunks, read_events
from mcp_actors.transports.http.sse import SSEDecoder
from mcp_actors.transports.websocket import WebSocketRefused, open_websocket

from servers.authorization_server import AuthorizationServer

TRANSPORTS = ("streamable", "modern", "sse", "websocket")
ACCEPT = "application/json, text/event-stream"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}


def notes_server() -> Server:
    server = Server("notes")

    @server.tool
    async def whoami(ctx: Context) -> str:
        principal = ctx.principal
        assert principal is not None
        return f"{principal.subject} {principal.client_id} {' '.join(sorted(principal.scopes))}"

    @server.tool(scopes=["notes:write"])
    async def write_note(text: str) -> str:
        return f"saved {text}"

    @server.resource("notes://all", scopes=["notes:read"])
    async def all_notes() -> str:
        return "every note"

    @server.prompt(scopes=["admin"])
    async def audit() -> str:
        return "audit everything"

    return server


@asynccontextmanager
async def protected(
    transport: str, auth: ResourceServer, server: Server | None = None
) -> AsyncIterator[str]:
    """Serve the notes server over ``transport`` with ``auth``; yields the URL a client
    of that transport connects to (``auth.resource`` is the server's endpoint URL)."""
    server = server or notes_server()
    async with trio.open_nursery() as nursery:
        if transport == "websocket":
            ws = await nursery.start(partial(serve_websocket, server, port=0, auth=auth))
            yield ws.url
        else:
            stateless = transport == "stateless"
            http = await nursery.start(
                partial(serve_http, server, port=0, auth=auth, stateless=stateless)
            )
            yield http.sse_url if transport == "sse" else http.url
        nursery.cancel_scope.cancel()


def jwt_auth(oauth: AuthorizationServer, **verifier: Any) -> ResourceServer:
    return ResourceServer(
        verifier=JwtVerifier(oauth.issuer(), **verifier),
        authorization_servers=[oauth.issuer()],
        scopes_supported=["notes:read"],
    )


def resource_of(auth: ResourceServer) -> str:
    assert auth.resource is not None
    return auth.resource


async def first_exchange(
    transport: str, url: str, headers: dict[str, str], query: str = ""
) -> tuple[int, Challenge | None]:
    """The status of the first request a client of ``transport`` makes, and the
    ``Bearer`` challenge of its ``WWW-Authenticate`` header (None: none)."""
    if transport == "websocket":
        try:
            async with open_websocket(url + query, subprotocols=["mcp"], headers=headers):
                return 101, None
        except WebSocketRefused as refused:
            assert refused.status_code is not None
            values = [
                value for name, value in refused.headers if name.lower() == "www-authenticate"
            ]
            return refused.status_code, find_challenge(values)
    async with httpx.AsyncClient(timeout=10) as http:
        if transport == "sse":
            async with http.stream("GET", url + query, headers=headers) as response:
                status, values = response.status_code, response.headers.get_list("www-authenticate")
        else:
            response = await http.post(
                url + query, json=first_message(transport), headers=post_headers(transport, headers)
            )
            status, values = response.status_code, response.headers.get_list("www-authenticate")
    return status, find_challenge(values)


def first_message(transport: str) -> dict[str, Any]:
    if transport == "modern":
        params = {"_meta": MODERN_META, "name": "whoami", "arguments": {}}
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def post_headers(transport: str, headers: dict[str, str]) -> dict[str, str]:
    if transport == "modern":
        return {
            "accept": ACCEPT,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "whoami",
            **headers,
        }
    return {"accept": ACCEPT, **headers}


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def tamper(token: str) -> str:
    """``token`` with one character of its signature changed."""
    head, payload, signature = token.split(".")
    middle = len(signature) // 2
    swapped = "A" if signature[middle] != "A" else "B"
    return f"{head}.{payload}.{signature[:middle]}{swapped}{signature[middle + 1 :]}"


# -- a valid token ---------------------------------------------------------------------


@pytest.mark.parametrize("transport", (*TRANSPORTS, "stateless"))
async def test_a_valid_token_is_served_and_the_handler_sees_the_caller(
    oauth: AuthorizationServer, transport: str
) -> None:
    auth = jwt_auth(oauth)
    async with protected(transport, auth) as url:
        token = await oauth.token(resource_of(auth), "notes:read")
        status, challenge = await first_exchange(transport, url, bearer(token))
        assert (status, challenge) == (101 if transport == "websocket" else 200, None)
        kind = {"modern": "streamable", "stateless": "streamable"}.get(transport, transport)
        era = "modern" if transport == "modern" else "legacy"
        target = UrlTarget(url, kind, headers=bearer(token))  # type: ignore[arg-type]
        async with open_client(target, era=era) as client:
            result = await client.call_tool("whoami", {})
            assert result.content[0].text == "svc svc notes:read"  # type: ignore[union-attr]
            read = await client.read_resource("notes://all")
            assert read.contents[0].text == "every note"  # type: ignore[union-attr]


# -- refused tokens: 401 with the challenge ------------------------------------------------


REFUSALS = ("missing", "expired", "wrong audience", "wrong issuer", "bad signature", "query")


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", REFUSALS)
async def test_a_refused_token_gets_401_with_the_challenge(
    oauth: AuthorizationServer, transport: str, case: str
) -> None:
    # "expired": the verifier's clock runs an hour ahead of the token's real expiry.
    clock = (lambda: time.time() + 3600) if case == "expired" else time.time
    auth = jwt_auth(oauth, clock=clock)
    async with protected(transport, auth) as url:
        resource = resource_of(auth)
        token = await oauth.token(resource)
        headers, query = bearer(token), ""
        if case == "missing":
            headers = {}
        elif case == "wrong audience":
            headers = bearer(await oauth.token("http://127.0.0.1:9/another-server"))
        elif case == "wrong issuer":
            headers = bearer(await oauth.token(resource, tenant="rogue"))
        elif case == "bad signature":
            headers = bearer(tamper(token))
        elif case == "query":
            headers, query = {}, f"?access_token={token}"
        status, challenge = await first_exchange(transport, url, headers, query)
    assert status == 401
    assert challenge is not None
    assert challenge.get("resource_metadata") == auth.metadata_url()
    assert challenge.get("scope") == "notes:read"
    expected = {"missing": None, "query": "invalid_request"}.get(case, "invalid_token")
    assert challenge.get("error") == expected


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_token_signed_with_a_rotated_out_key_gets_401(
    oauth: AuthorizationServer, transport: str
) -> None:
    """The issuer rotated its key: a token signed with the old one names a ``kid`` its
    JWKS no longer has; the verifier refetches the JWKS, still does not find it, refuses."""
    auth = ResourceServer(
        verifier=JwtVerifier(oauth.issuer("rotating"), jwks_url=oauth.jwks_url("rotating")),
        authorization_servers=[oauth.issuer("rotating")],
    )
    async with protected(transport, auth) as url:
        old = await oauth.token(resource_of(auth), tenant="rotating")
        await oauth.rotate("rotating")
        status, challenge = await first_exchange(transport, url, bearer(old))
    assert status == 401
    assert challenge is not None and challenge.get("error") == "invalid_token"
    assert "unknown key" in (challenge.get("error_description") or "")


async def test_a_key_rotation_is_picked_up_by_refetching_the_jwks(
    oauth: AuthorizationServer,
) -> None:
    verifier = JwtVerifier(
        oauth.issuer("rotating"), jwks_url=oauth.jwks_url("rotating"), jwks_min_refetch_interval=0
    )
    auth = ResourceServer(verifier=verifier, authorization_servers=[oauth.issuer("rotating")])
    async with protected("streamable", auth) as url:
        before = await oauth.token(resource_of(auth), tenant="rotating")
        assert (await first_exchange("streamable", url, bearer(before)))[0] == 200
        await oauth.rotate("rotating")
        after = await oauth.token(resource_of(auth), tenant="rotating")
        assert (await first_exchange("streamable", url, bearer(after)))[0] == 200
    statistics = verifier.jwks_statistics()
    assert statistics is not None and statistics.fetches == 2


# -- missing scopes: 403 insufficient_scope ------------------------------------------------


@pytest.mark.parametrize("transport", ("streamable", "modern", "sse", "stateless"))
async def test_a_call_needing_a_scope_the_token_lacks_gets_403_with_the_scope(
    oauth: AuthorizationServer, transport: str
) -> None:
    auth = jwt_auth(oauth)
    async with protected(transport, auth) as url, httpx.AsyncClient(timeout=10) as http:
        headers = bearer(await oauth.token(resource_of(auth), "notes:read"))
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "write_note", "arguments": {"text": "hi"}},
        }
        if transport == "modern":
            call["params"]["_meta"] = MODERN_META
            response = await http.post(
                url,
                json=call,
                headers={**post_headers("modern", headers), "mcp-name": "write_note"},
            )
        elif transport == "streamable":
            opened = await http.post(
                url, json=first_message(transport), headers=post_headers(transport, headers)
            )
            session = {"mcp-session-id": opened.headers["mcp-session-id"]}
            response = await http.post(
                url, json=call, headers={**post_headers(transport, headers), **session}
            )
        elif transport == "stateless":
            stateless = {**post_headers(transport, headers), "mcp-protocol-version": "2025-11-25"}
            response = await http.post(url, json=call, headers=stateless)
        else:
            response = await _legacy_sse_post(http, url, headers, call)
    assert response.status_code == 403
    challenge = find_challenge(response.headers.get_list("www-authenticate"))
    assert challenge is not None
    assert challenge.get("error") == "insufficient_scope"
    assert challenge.get("scope") == "notes:write"
    assert challenge.get("resource_metadata") == auth.metadata_url()


async def _legacy_sse_post(
    http: httpx.AsyncClient, sse_url: str, headers: dict[str, str], message: dict[str, Any]
) -> httpx.Response:
    """POST ``message`` to the session a legacy SSE stream opens, the stream still open."""
    async with http.stream("GET", sse_url, headers=headers) as stream:
        assert stream.status_code == 200
        chunks = ResponseChunks(stream)
        try:
            with trio.fail_after(5):
                events = await read_events(chunks, SSEDecoder())
            assert events is not None and events[0].event == "endpoint"
            base = sse_url.rsplit("/", 1)[0]
            return await http.post(base + events[0].data.decode(), json=message, headers=headers)
        finally:
            await chunks.aclose()


async def test_over_websocket_a_call_needing_a_missing_scope_is_refused_in_band(
    oauth: AuthorizationServer,
) -> None:
    """WebSocket has no HTTP status per message: the call gets a JSON-RPC error naming
    ``insufficient_scope`` and the scope; the connection stays usable."""
    auth = jwt_auth(oauth)
    async with protected("websocket", auth) as url:
        headers = bearer(await oauth.token(resource_of(auth), "notes:read"))
        async with open_client(UrlTarget(url, "websocket", headers=headers)) as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool("write_note", {"text": "hi"})
            assert refused.value.data == {"error": "insufficient_scope", "scope": "notes:write"}
            with pytest.raises(McpError) as refused_prompt:
                await client.get_prompt("audit")
            assert refused_prompt.value.data == {"error": "insufficient_scope", "scope": "admin"}
            result = await client.call_tool("whoami", {})
            assert result.content[0].text == "svc svc notes:read"  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_token_without_the_servers_required_scopes_gets_403(
    oauth: AuthorizationServer, transport: str
) -> None:
    auth = ResourceServer(
        verifier=JwtVerifier(oauth.issuer()),
        authorization_servers=[oauth.issuer()],
        required_scopes=["notes:read"],
    )
    async with protected(transport, auth) as url:
        token = await oauth.token(resource_of(auth), "admin")
        status, challenge = await first_exchange(transport, url, bearer(token))
    assert status == 403
    assert challenge is not None
    assert (challenge.get("error"), challenge.get("scope")) == ("insufficient_scope", "notes:read")


# -- the protected resource metadata -------------------------------------------------------


async def test_the_metadata_document_names_the_authorization_server(
    oauth: AuthorizationServer,
) -> None:
    auth = jwt_auth(oauth)
    async with protected("streamable", auth) as url, httpx.AsyncClient() as http:
        origin = url.rsplit("/", 1)[0]
        documents = [
            (await http.get(origin + path)).json()
            for path in (
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource",
            )
        ]
    for document in documents:
        assert document == {
            "resource": url,
            "authorization_servers": [oauth.issuer()],
            "scopes_supported": ["notes:read"],
            "bearer_methods_supported": ["header"],
        }


# -- sessions are bound to their caller ----------------------------------------------------


async def test_another_callers_token_cannot_use_a_session(oauth: AuthorizationServer) -> None:
    auth = jwt_auth(oauth)
    async with protected("streamable", auth) as url, httpx.AsyncClient(timeout=10) as http:
        resource = resource_of(auth)
        mine = bearer(await oauth.token(resource))
        theirs = bearer(await oauth.token(resource, client_id="svc-short"))
        opened = await http.post(
            url, json=first_message("streamable"), headers=post_headers("streamable", mine)
        )
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        hijack = await http.post(
            url, json=ping, headers={**post_headers("streamable", theirs), **session}
        )
        own = await http.post(
            url, json=ping, headers={**post_headers("streamable", mine), **session}
        )
    assert hijack.status_code == 404
    assert own.status_code == 200


# -- introspection (RFC 7662) --------------------------------------------------------------


@pytest.mark.parametrize("transport", ("streamable", "websocket"))
async def test_opaque_tokens_are_checked_by_introspection(
    oauth: AuthorizationServer, transport: str
) -> None:
    verifier = IntrospectionVerifier(
        oauth.introspection_url(), "rs", "rs-secret", issuer=oauth.issuer()
    )
    auth = ResourceServer(verifier=verifier, authorization_servers=[oauth.issuer()])
    async with protected(transport, auth) as url:
        resource = resource_of(auth)
        good = await oauth.token(resource, client_id="svc-opaque")
        elsewhere = await oauth.token("http://127.0.0.1:9/another-server", client_id="svc-opaque")
        assert (await first_exchange(transport, url, bearer(good)))[0] in (200, 101)
        status, challenge = await first_exchange(transport, url, bearer(elsewhere))
        assert status == 401 and challenge is not None
        assert challenge.get("error") == "invalid_token"
        status, _ = await first_exchange(transport, url, bearer(good + "x"))
        assert status == 401


# -- a multi round-trip request belongs to its caller --------------------------------------


async def test_a_request_state_is_refused_to_another_caller(oauth: AuthorizationServer) -> None:
    """A modern ``requestState`` is sealed to the caller it was issued to: replayed with
    another caller's token it is -32602, while its own caller completes the request."""
    server = Server("booking")

    @server.tool
    async def book(ctx: Context, room: str) -> str:
        answer = await ctx.elicit("Book?", {"type": "object", "properties": {}}, key="confirm")
        return f"{room}: {answer.action}"

    auth = jwt_auth(oauth)
    async with protected("modern", auth, server) as url, httpx.AsyncClient(timeout=10) as http:
        resource = resource_of(auth)
        mine = bearer(await oauth.token(resource))
        theirs = bearer(await oauth.token(resource, client_id="svc-short"))
        capabilities = {"elicitation": {"form": {}}}
        meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}

        async def call(headers: dict[str, str], **extra: Any) -> dict[str, Any]:
            params = {"_meta": meta, "name": "book", "arguments": {"room": "a"}, **extra}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            response = await http.post(
                url, json=body, headers={**post_headers("modern", headers), "mcp-name": "book"}
            )
            answer: dict[str, Any] = response.json()
            return answer

        first = await call(mine)
        state = first["result"]["requestState"]
        answers = {"confirm": {"action": "accept", "content": {}}}
        stolen = await call(theirs, inputResponses=answers, requestState=state)
        assert stolen["error"]["code"] == -32602
        assert "another caller" in stolen["error"]["message"]
        honest = await call(mine, inputResponses=answers, requestState=state)
        assert honest["result"]["content"][0]["text"] == "a: accept"


async def test_a_websocket_connection_ends_when_its_token_expires(
    oauth: AuthorizationServer,
) -> None:
    auth = jwt_auth(oauth, leeway=0)
    async with protected("websocket", auth) as url:
        # svc-short's tokens live 2 seconds.
        headers = bearer(await oauth.token(resource_of(auth), client_id="svc-short"))
        async with open_client(UrlTarget(url, "websocket", headers=headers)) as client:
            await client.call_tool("whoami", {})
            with trio.fail_after(10), pytest.raises(ConnectionClosed):
                while True:
                    await client.call_tool("whoami", {})
                    await trio.sleep(0.2)


@pytest.mark.parametrize("cache_ttl", [0, 60])
async def test_a_revoked_opaque_token_is_refused_unless_its_answer_is_cached(
    oauth: AuthorizationServer, cache_ttl: float
) -> None:
    verifier = IntrospectionVerifier(
        oauth.introspection_url(), "rs", "rs-secret", issuer=oauth.issuer(), cache_ttl=cache_ttl
    )
    auth = ResourceServer(verifier=verifier, authorization_servers=[oauth.issuer()])
    async with protected("streamable", auth) as url:
        token = await oauth.token(resource_of(auth), client_id="svc-opaque")
        assert (await first_exchange("streamable", url, bearer(token)))[0] == 200
        async with httpx.AsyncClient() as http:
            revoked = await http.post(
                f"{oauth.issuer()}/token/revocation",
                data={"token": token},
                auth=("svc-opaque", "svc-secret"),
            )
            assert revoked.status_code == 200
        status, _ = await first_exchange("streamable", url, bearer(token))
    assert status == (401 if cache_ttl == 0 else 200)
