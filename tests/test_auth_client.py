"""The OAuth client: its pieces, and its whole flow against an authorization server.

The flow tests run :class:`OAuthClient` (an ``httpx.Auth``) against
:class:`AuthorizationServer`, an in-test OAuth 2.1 authorization server and
protected resource speaking over an ``httpx.MockTransport``: it verifies PKCE,
``resource``, client authentication and refresh tokens, and answers 401/403 with
the challenges a real MCP server sends. (The conformance suite's client scenarios,
run by ``.ci/conformance``, exercise the same client against the suite's servers.)
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import msgspec
import pytest
import trio
import trio.testing
from joserfc import jwt
from joserfc.jwk import ECKey
from trio_websocket import WebSocketRequest, serve_websocket

from mcp_actors.auth.client import (
    Authorization,
    AuthorizationFailed,
    ClientCredentialsGrant,
    ClientRegistration,
    DPoPKey,
    FileTokenStore,
    HeadlessUserAgent,
    MemoryTokenStore,
    OAuthClient,
    PrivateKeyJwt,
    RegisteredClient,
    Tokens,
)
from mcp_actors.auth.client.authorization_code import (
    AuthorizationCodeGrant,
    check_issuer,
    pkce_pair,
)
from mcp_actors.auth.client.loopback import LoopbackUserAgent
from mcp_actors.auth.client.token_endpoint import authenticate, choose_auth_method
from mcp_actors.auth.client.user_agent import redirect_parameters
from mcp_actors.auth.metadata import AuthorizationServerMetadata
from mcp_actors.transports.websocket import open_websocket_client

MCP = "http://mcp.test/mcp"
ISSUER = "https://as.test"
REDIRECT = "http://127.0.0.1:9/callback"


def b64url_sha256(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


class AuthorizationServer:
    """An authorization server and an MCP endpoint it protects (see the module docstring).

    The MCP endpoint wants scope ``read`` for everything and ``write`` too for a body
    containing ``"write"``; tokens it issued expire when ``expire_tokens()`` is called.
    """

    def __init__(
        self, *, iss_in_redirect: str | None = ISSUER, pkce: bool = True, grants_write: bool = True
    ) -> None:
        self.iss_in_redirect = iss_in_redirect
        self.grants_write = grants_write
        #: The protected resource (the MCP endpoint) its metadata names.
        self.resource = MCP
        self.pkce = pkce
        self.log: list[str] = []
        self.codes: dict[str, dict[str, str]] = {}
        self.tokens: dict[str, set[str]] = {}  # access token -> scopes
        self.refresh_tokens: dict[str, set[str]] = {}
        self.registered: dict[str, str | None] = {}  # client id -> secret
        self.counter = 0

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def _next(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}"

    def expire_tokens(self) -> None:
        self.tokens.clear()

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        self.log.append(f"{request.method} {url.host}{url.path}")
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(
                200,
                json={
                    "resource": self.resource,
                    "authorization_servers": [ISSUER],
                    "scopes_supported": ["read"],
                },
            )
        if url.host == "mcp.test":
            return self._resource(request)
        if url.path == "/.well-known/oauth-authorization-server":
            metadata: dict[str, Any] = {
                "issuer": ISSUER,
                "authorization_endpoint": f"{ISSUER}/authorize",
                "token_endpoint": f"{ISSUER}/token",
                "registration_endpoint": f"{ISSUER}/register",
                "scopes_supported": ["read", "write", "offline_access"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                "authorization_response_iss_parameter_supported": True,
            }
            if self.pkce:
                metadata["code_challenge_methods_supported"] = ["S256"]
            return httpx.Response(200, json=metadata)
        if url.path == "/register":
            body = json.loads(request.content)
            client_id = self._next("client")
            self.registered[client_id] = None
            return httpx.Response(
                201, json={"client_id": client_id, "token_endpoint_auth_method": "none", **body}
            )
        if url.path == "/authorize":
            query = dict(url.params)
            code = self._next("code")
            self.codes[code] = query
            answer = {"code": code, "state": query["state"]}
            if self.iss_in_redirect is not None:
                answer["iss"] = self.iss_in_redirect
            return httpx.Response(
                302, headers={"location": f"{query['redirect_uri']}?{urlencode(answer)}"}
            )
        if url.path == "/token":
            return self._token({k: v[0] for k, v in parse_qs(request.content.decode()).items()})
        return httpx.Response(404)

    def _token(self, form: dict[str, str]) -> httpx.Response:
        if form.get("resource") != self.resource:
            return httpx.Response(400, json={"error": "invalid_target"})
        if form["grant_type"] == "authorization_code":
            asked = self.codes.pop(form["code"], None)
            if asked is None or b64url_sha256(form["code_verifier"]) != asked["code_challenge"]:
                return httpx.Response(400, json={"error": "invalid_grant"})
            scopes = set(asked.get("scope", "").split())
        elif form["grant_type"] == "refresh_token":
            if form["refresh_token"] not in self.refresh_tokens:
                return httpx.Response(400, json={"error": "invalid_grant"})
            scopes = self.refresh_tokens.pop(form["refresh_token"])
        else:
            return httpx.Response(400, json={"error": "unsupported_grant_type"})
        if not self.grants_write:
            scopes.discard("write")
        access, refresh = self._next("access"), self._next("refresh")
        self.tokens[access] = scopes
        self.refresh_tokens[refresh] = scopes
        return httpx.Response(
            200,
            json={
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": 3600,
                "refresh_token": refresh,
                "scope": " ".join(sorted(scopes)),
            },
        )

    def _resource(self, request: httpx.Request) -> httpx.Response:
        prm = "http://mcp.test/.well-known/oauth-protected-resource/mcp"
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        needed = {"read", "write"} if b"write" in request.content else {"read"}
        if token not in self.tokens:
            challenge = f'Bearer resource_metadata="{prm}", scope="read"'
            return httpx.Response(401, headers={"www-authenticate": challenge})
        if not needed <= self.tokens[token]:
            challenge = f'Bearer error="insufficient_scope", scope="{" ".join(sorted(needed))}"'
            return httpx.Response(403, headers={"www-authenticate": challenge})
        return httpx.Response(200, json={"ok": sorted(self.tokens[token])})


def oauth_for(server: AuthorizationServer, **options: Any) -> OAuthClient:
    transport = server.transport()
    agent = HeadlessUserAgent(REDIRECT, http_transport=transport)
    return OAuthClient(grant=AuthorizationCodeGrant(agent), http_transport=transport, **options)


async def post(
    oauth: OAuthClient, server: AuthorizationServer, body: bytes = b"{}"
) -> httpx.Response:
    async with httpx.AsyncClient(auth=oauth, transport=server.transport()) as http:
        return await http.post(MCP, content=body)


async def test_the_whole_flow_then_step_up_then_refresh() -> None:
    server = AuthorizationServer()
    oauth = oauth_for(server)

    response = await post(oauth, server)
    assert response.status_code == 200
    assert response.json() == {"ok": ["offline_access", "read"]}
    assert server.log[1:7] == [
        "GET mcp.test/.well-known/oauth-protected-resource/mcp",
        "GET as.test/.well-known/oauth-authorization-server",
        "POST as.test/register",
        "GET as.test/authorize",
        "POST as.test/token",
        "POST mcp.test/mcp",
    ]

    # step-up: the union of what was granted and what the 403 names
    assert (await post(oauth, server, b'{"write": 1}')).json() == {
        "ok": ["offline_access", "read", "write"]
    }
    assert server.log.count("POST as.test/register") == 1  # registered once

    # the server forgets the tokens: the refresh token gets new ones, no new login
    server.expire_tokens()
    authorizations = server.log.count("GET as.test/authorize")
    assert (await post(oauth, server)).status_code == 200
    assert server.log.count("GET as.test/authorize") == authorizations
    record = await oauth.store.load(MCP)
    assert record is not None and record.issuer == ISSUER and record.tokens is not None
    assert record.tokens.refresh_token in server.refresh_tokens


async def test_an_expired_token_is_refreshed_before_the_request() -> None:
    """A later client (the next CLI command) finds the stored token expired: it
    refreshes it before sending, without a login."""
    server = AuthorizationServer()
    store = MemoryTokenStore()
    assert (await post(oauth_for(server, store=store), server)).status_code == 200
    record = await store.load(MCP)
    assert record is not None and record.tokens is not None
    expired = msgspec.structs.replace(record.tokens, expires_at=time.time())
    await store.save(MCP, msgspec.structs.replace(record, tokens=expired))
    before = len(server.log)
    assert (await post(oauth_for(server, store=store), server)).status_code == 200
    assert server.log[before:] == ["POST as.test/token", "POST mcp.test/mcp"]


@pytest.mark.parametrize(
    ("server", "reason"),
    [
        (AuthorizationServer(pkce=False), "does not advertise PKCE S256"),
        (AuthorizationServer(iss_in_redirect=None), "has no iss"),
        (AuthorizationServer(iss_in_redirect="https://evil.test"), "comes from issuer"),
    ],
)
async def test_refusals_happen_before_the_code_is_redeemed(
    server: AuthorizationServer, reason: str
) -> None:
    with pytest.raises(AuthorizationFailed, match=reason):
        await post(oauth_for(server), server)
    assert "POST as.test/token" not in server.log


async def test_the_step_up_loop_is_bounded() -> None:
    server = AuthorizationServer(grants_write=False)
    oauth = oauth_for(server, max_attempts=3)
    response = await post(oauth, server, b'{"write": 1}')
    assert response.status_code == 403
    assert server.log.count("GET as.test/authorize") == 3


# -- pieces ---------------------------------------------------------------------------------


def test_pkce_pair_is_s256() -> None:
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    assert challenge == b64url_sha256(verifier)
    assert pkce_pair()[0] != verifier


def test_the_iss_check() -> None:
    advertised = AuthorizationServerMetadata(
        issuer=ISSUER, authorization_response_iss_parameter_supported=True
    )
    silent = AuthorizationServerMetadata(issuer=ISSUER)
    check_issuer({"iss": ISSUER}, advertised)
    check_issuer({}, silent)
    for answer, metadata in [({}, advertised), ({"iss": ISSUER + "/"}, silent)]:
        with pytest.raises(AuthorizationFailed):
            check_issuer(answer, metadata)


def test_client_authentication_methods() -> None:
    assert choose_auth_method(False, ["client_secret_basic"]) == "none"
    assert choose_auth_method(True, None) == "client_secret_basic"
    assert choose_auth_method(True, ["client_secret_post"]) == "client_secret_post"
    form: dict[str, str] = {}
    headers: dict[str, str] = {}
    client = RegisteredClient(
        client_id="a b", client_secret="s:x", token_endpoint_auth_method="client_secret_basic"
    )
    authenticate(client, form, headers, ISSUER)
    assert base64.b64decode(headers["authorization"].removeprefix("Basic ")) == b"a+b:s%3Ax"
    assert form == {}
    form = {}
    authenticate(
        msgspec.structs.replace(client, token_endpoint_auth_method="client_secret_post"),
        form,
        {},
        ISSUER,
    )
    assert form == {"client_id": "a b", "client_secret": "s:x"}


def test_redirect_parameters_only_from_our_redirect_uri() -> None:
    assert redirect_parameters(f"{REDIRECT}?code=c&state=s", REDIRECT) == {
        "code": "c",
        "state": "s",
    }
    with pytest.raises(AuthorizationFailed, match="redirected to"):
        redirect_parameters("http://evil.test/callback?code=c", REDIRECT)


def test_private_key_jwt_and_dpop_proofs_verify() -> None:
    key = ECKey.generate_key("P-256", private=True)
    assertion = PrivateKeyJwt(key)("client-1", ISSUER)
    claims = jwt.decode(assertion, ECKey.import_key(key.as_dict(private=False))).claims
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("client-1", "client-1", ISSUER)
    assert claims["exp"] > claims["iat"]

    dpop = DPoPKey()
    assert dpop.remember_nonce(MCP, "n1") and not dpop.remember_nonce(MCP, "n1")
    proof = dpop.proof("post", MCP + "?q=1#f", access_token="tok")
    decoded = jwt.decode(proof, ECKey.import_key(dpop.public_jwk))
    assert decoded.header["typ"] == "dpop+jwt" and "d" not in decoded.header["jwk"]
    assert decoded.claims["htm"] == "POST" and decoded.claims["htu"] == MCP
    assert decoded.claims["nonce"] == "n1" and decoded.claims["ath"] == b64url_sha256("tok")


async def test_memory_store_is_bounded() -> None:
    store = MemoryTokenStore(capacity=2)
    for name in "abc":
        await store.save(name, Authorization(issuer=ISSUER))
    assert await store.load("a") is None
    assert await store.load("c") is not None


async def test_file_store_is_private_and_survives_junk(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tokens.json"
    store = FileTokenStore(path, capacity=2)
    record = Authorization(issuer=ISSUER, tokens=Tokens(access_token="t", refresh_token="r"))
    await store.save(MCP, record)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert await FileTokenStore(path).load(MCP) == record
    await store.forget(MCP)
    assert await store.load(MCP) is None
    path.write_text("{not json")
    assert await store.load(MCP) is None
    await store.save(MCP, record)
    assert await store.load(MCP) == record
    assert not [name for name in os.listdir(path.parent) if name.endswith(".tmp")]


async def test_client_credentials_with_a_secret() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.startswith("/.well-known/oauth-protected-resource"):
            return httpx.Response(200, json={"resource": MCP, "authorization_servers": [ISSUER]})
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json={"issuer": ISSUER, "token_endpoint": f"{ISSUER}/token"})
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": "cc", "token_type": "Bearer"})
        if request.headers.get("authorization") == "Bearer cc":
            return httpx.Response(200)
        return httpx.Response(401, headers={"www-authenticate": "Bearer"})

    transport = httpx.MockTransport(handle)
    oauth = OAuthClient(
        grant=ClientCredentialsGrant(),
        registration=ClientRegistration(client_id="svc", client_secret="pw"),
        http_transport=transport,
    )
    async with httpx.AsyncClient(auth=oauth, transport=transport) as http:
        assert (await http.post(MCP)).status_code == 200
    token_request = next(r for r in seen if r.url.path == "/token")
    assert parse_qs(token_request.content.decode())["grant_type"] == ["client_credentials"]
    assert token_request.headers["authorization"] == "Basic " + base64.b64encode(b"svc:pw").decode()
    assert urlsplit(str(seen[-1].url)).path == "/mcp"


async def test_the_loopback_user_agent_takes_the_callback() -> None:
    announced: list[str] = []
    agent = LoopbackUserAgent(open_browser=False, timeout=10, announce=announced.append)
    redirect = agent.redirect_uri
    assert redirect.startswith("http://127.0.0.1:") and redirect.endswith("/callback")
    assert agent.redirect_uri == redirect  # one port, bound once
    answers: list[Mapping[str, str]] = []

    async def authorize() -> None:
        answers.append(await agent.authorize("https://as.test/authorize?x=1"))

    try:
        async with trio.open_nursery() as nursery, httpx.AsyncClient() as http:
            nursery.start_soon(authorize)
            await trio.testing.wait_all_tasks_blocked()
            assert (
                await http.get(redirect.replace("/callback", "/favicon.ico"))
            ).status_code == 404
            page = await http.get(f"{redirect}?code=c1&state=s1")
            assert page.status_code == 200 and b"close this window" in page.content
    finally:
        agent.close()
    assert answers == [{"code": "c1", "state": "s1"}]
    assert "https://as.test/authorize?x=1" in announced[0]


async def test_the_loopback_user_agent_gives_up() -> None:
    agent = LoopbackUserAgent(open_browser=False, timeout=0.05, announce=lambda _: None)
    try:
        with pytest.raises(AuthorizationFailed, match="no authorization response"):
            await agent.authorize("https://as.test/authorize")
    finally:
        agent.close()


async def test_the_websocket_handshake_is_authorized() -> None:
    """A WebSocket server refusing the upgrade with 401 gets it again with a token."""
    server = AuthorizationServer()
    oauth = oauth_for(server)
    seen: list[str | None] = []

    async def handler(request: WebSocketRequest) -> None:
        headers = {name.decode().lower(): value.decode() for name, value in request.headers}
        token = headers.get("authorization", "").removeprefix("Bearer ")
        seen.append(headers.get("authorization"))
        if token not in server.tokens:
            prm = f"{server.resource.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp"
            challenge = f'Bearer resource_metadata="{prm}", scope="read"'.encode()
            await request.reject(401, extra_headers=[(b"www-authenticate", challenge)])
            return
        connection = await request.accept(subprotocol="mcp")
        await connection.aclose()

    async with trio.open_nursery() as nursery:
        ws_server = await nursery.start(partial(serve_websocket, handler, "127.0.0.1", 0, None))
        server.resource = f"http://127.0.0.1:{ws_server.port}/mcp"
        url = f"ws://127.0.0.1:{ws_server.port}/mcp"
        async with open_websocket_client(url, auth=oauth) as stream:
            assert stream is not None
        nursery.cancel_scope.cancel()
    assert seen[0] is None
    assert seen[-1] is not None and seen[-1].removeprefix("Bearer ") in server.tokens


async def test_the_token_goes_to_the_servers_origin_only() -> None:
    server = AuthorizationServer()
    oauth = oauth_for(server)
    assert (await post(oauth, server)).status_code == 200
    elsewhere: list[httpx.Request] = []

    def other_origin(request: httpx.Request) -> httpx.Response:
        elsewhere.append(request)
        return httpx.Response(401, headers={"www-authenticate": "Bearer"})

    async with httpx.AsyncClient(auth=oauth, transport=httpx.MockTransport(other_origin)) as http:
        assert (await http.post("http://evil.test/messages", content=b"{}")).status_code == 401
    assert len(elsewhere) == 1 and "authorization" not in elsewhere[0].headers
