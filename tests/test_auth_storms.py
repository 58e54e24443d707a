"""Garbage tokens against a resource server must not become a storm of requests to its
authorization server — least of all while that server fails.

The authorization server here is a small one of our own on loopback (an ASGI app on the
lean HTTP server) that counts every request it gets, by path, and while ``failing``
answers 500 or hangs up without an answer (as a crashing server does), else answers the
JSON documents it was given. The protected MCP server runs on each
HTTP front end (``serve_http``: the module is parametrized over them), and every burst of
tokens is sent at once, as many clients would. Time is trio's ``MockClock`` running at the
real rate; backoff windows are long (100 s) so that no burst outlasts one, whatever the
machine's speed, and ``jump`` moves past them.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import attrs
import httpx
import msgspec
import pytest
import trio
import trio.testing
from joserfc import jwt
from joserfc.jwk import RSAKey

from mcp_actors import Server
from mcp_actors.auth.server import Backoff, IntrospectionVerifier, JwtVerifier, ResourceServer
from mcp_actors.server.serve_http import serve_http
from mcp_actors.transports.http.config import HttpConfig
from mcp_actors.transports.http.lean import LeanHttpServer

#: Backoff windows of 100 s, then 200 s, then 400 s at most.
BACKOFF = Backoff(first=100, cap=400)
KEY = RSAKey.generate_key(2048, parameters={"kid": "real", "use": "sig"}, private=True)
FORGER = RSAKey.generate_key(2048, private=True)
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
OAUTH_METADATA = "/.well-known/oauth-authorization-server"
OPENID_METADATA = "/.well-known/openid-configuration"
#: How the authorization server fails (:class:`CountingAuthorizationServer`).
FAILURES = ("500", "hang-up")


@pytest.fixture
def clock(mock_clock: trio.testing.MockClock) -> trio.testing.MockClock:
    mock_clock.rate = 1  # real time runs on (timeouts still guard against hangs)
    return mock_clock


@attrs.define(eq=False)
class CountingAuthorizationServer:
    """An ASGI authorization server that counts the requests it gets (module docstring)."""

    #: How it fails: "500", or "hang-up" (the connection closes, no response).
    failure: str = "500"
    origin: str = ""
    failing: bool = True
    documents: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    hits: Counter[str] = attrs.field(factory=Counter)

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        while (await receive()).get("more_body"):
            pass
        self.hits[scope["path"]] += 1
        document = None if self.failing else self.documents.get(scope["path"])
        if document is None and self.failure == "hang-up":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            return  # a response begun and never finished: the server closes the connection
        status, body = (500, b"down") if document is None else (200, msgspec.json.encode(document))
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def authorization_server(failure: str = "500") -> AsyncIterator[CountingAuthorizationServer]:
    server = CountingAuthorizationServer(failure)
    async with trio.open_nursery() as nursery:
        [(host, port), *_] = await nursery.start(LeanHttpServer(server).serve, "127.0.0.1", 0)
        server.origin = f"http://{host}:{port}"
        yield server
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def protected(verifier: Any, issuer: str) -> AsyncIterator[tuple[str, str]]:
    """An MCP server behind ``verifier``: its URL, and the resource its tokens name."""
    auth = ResourceServer(verifier=verifier, authorization_servers=[issuer])
    # A burst is up to 200 connections from one address: past the default per-client cap
    # (which tests/test_http_hostile_peers.py covers) they would get 503, not the verifier.
    config = HttpConfig(max_connections_per_client=None)
    async with trio.open_nursery() as nursery:
        http = await nursery.start(
            partial(serve_http, Server("s"), port=0, auth=auth, stateless=True, config=config)
        )
        assert auth.resource is not None
        yield http.url, auth.resource
        nursery.cancel_scope.cancel()


async def send_all(url: str, tokens: list[str]) -> list[httpx.Response]:
    """POST a ping with each token, all at once; the responses in order."""
    responses: list[httpx.Response | None] = [None] * len(tokens)
    limits = httpx.Limits(max_connections=len(tokens))
    async with httpx.AsyncClient(timeout=30, limits=limits) as http:

        async def post(index: int, token: str) -> None:
            headers = {**HEADERS, "authorization": f"Bearer {token}"}
            responses[index] = await http.post(url, json=PING, headers=headers)

        async with trio.open_nursery() as nursery:
            for index, token in enumerate(tokens):
                nursery.start_soon(post, index, token)
    return [response for response in responses if response is not None]


def statuses(responses: list[httpx.Response]) -> set[int]:
    return {response.status_code for response in responses}


def signed(issuer: str, resource: str, key: RSAKey = KEY, **header: Any) -> str:
    """A JWT access token of ``issuer`` for ``resource``; ``key`` signs it."""
    now = int(time.time())
    claims = {"iss": issuer, "aud": resource, "sub": "alice", "exp": now + 300, "iat": now}
    return jwt.encode({"alg": "RS256", "typ": "at+jwt", "kid": "real", **header}, claims, key)


def forged(issuer: str, resource: str, count: int) -> list[str]:
    """Tokens with every claim right, each naming a made-up key and signed by a forger."""
    return [signed(issuer, resource, FORGER, kid=secrets.token_urlsafe(8)) for _ in range(count)]


# -- JWT access tokens: the JWKS and the issuer's metadata -------------------------------


@pytest.mark.parametrize("failure", FAILURES)
async def test_a_failing_jwks_is_fetched_at_most_once_per_backoff_window(
    clock: trio.testing.MockClock, failure: str
) -> None:
    async with authorization_server(failure) as issuer:
        jwks_url = issuer.origin + "/jwks"
        verifier = JwtVerifier(issuer.origin, jwks_url=jwks_url, backoff=BACKOFF)
        async with protected(verifier, issuer.origin) as (url, resource):
            fetches = []
            for jump in (0, 100, 100, 100):  # windows of 100 s, then 200 s
                clock.jump(jump)
                responses = await send_all(url, forged(issuer.origin, resource, 60))
                assert statuses(responses) == {401}
                fetches.append(issuer.hits["/jwks"])
            assert fetches == [1, 2, 2, 3]
            issuer.failing = False  # it is back: the next window fetches the keys
            issuer.documents["/jwks"] = {"keys": [KEY.as_dict(private=False)]}
            clock.jump(400)
            good = await send_all(url, [signed(issuer.origin, resource)] * 10)
            assert statuses(good) == {200}
            assert issuer.hits["/jwks"] == 4
    statistics = verifier.jwks_statistics()
    assert statistics is not None and (statistics.fetches, statistics.failed_fetches) == (4, 3)


@pytest.mark.parametrize("failure", FAILURES)
async def test_a_failing_discovery_is_tried_at_most_once_per_backoff_window(
    clock: trio.testing.MockClock, failure: str
) -> None:
    async with authorization_server(failure) as issuer:
        verifier = JwtVerifier(issuer.origin, backoff=BACKOFF)
        async with protected(verifier, issuer.origin) as (url, resource):
            for jump in (0, 50):  # both within the first window
                clock.jump(jump)
                responses = await send_all(url, forged(issuer.origin, resource, 60))
                assert statuses(responses) == {401}
            assert issuer.hits == {OAUTH_METADATA: 1, OPENID_METADATA: 1}
            clock.jump(50)
            await send_all(url, forged(issuer.origin, resource, 60))
            assert issuer.hits == {OAUTH_METADATA: 2, OPENID_METADATA: 2}


async def test_made_up_kids_fetch_a_healthy_jwks_once_per_refetch_interval(
    clock: trio.testing.MockClock,
) -> None:
    async with authorization_server() as issuer:
        issuer.failing = False
        issuer.documents["/jwks"] = {"keys": [KEY.as_dict(private=False)]}
        jwks_url = issuer.origin + "/jwks"
        verifier = JwtVerifier(issuer.origin, jwks_url=jwks_url, jwks_min_refetch_interval=100)
        async with protected(verifier, issuer.origin) as (url, resource):
            for _ in range(2):
                responses = await send_all(url, forged(issuer.origin, resource, 60))
                assert statuses(responses) == {401}
            assert issuer.hits["/jwks"] == 1
            clock.jump(100)
            await send_all(url, forged(issuer.origin, resource, 60))
            assert issuer.hits["/jwks"] == 2


async def test_tokens_that_cannot_be_valid_here_cost_no_request() -> None:
    async with authorization_server() as issuer:
        verifier = JwtVerifier(issuer.origin, jwks_url=issuer.origin + "/jwks")
        async with protected(verifier, issuer.origin) as (url, resource):
            head = signed(issuer.origin, resource).split(".")[0]
            cannot = [
                "garbage",
                signed("https://elsewhere.example.com", resource, FORGER, kid="k2"),
                signed(issuer.origin, "https://elsewhere.example.com/mcp", FORGER, kid="k3"),
                jwt.encode(
                    {"alg": "RS256", "typ": "at+jwt", "kid": "k4"},
                    {"iss": issuer.origin, "aud": resource, "exp": int(time.time()) - 3600},
                    FORGER,
                ),
                f"{head}.bm90IGpzb24.c2ln",  # claims: "not json"
                f"{head}.WzFd.c2ln",  # claims: [1]
            ]
            responses = await send_all(url, cannot * 10)
    assert statuses(responses) == {401}
    assert issuer.hits == {}


# -- opaque tokens: the introspection endpoint -------------------------------------------


def introspection(issuer: CountingAuthorizationServer, **options: Any) -> IntrospectionVerifier:
    return IntrospectionVerifier(issuer.origin + "/introspect", "rs", "rs-secret", **options)


@pytest.mark.parametrize("failure", FAILURES)
async def test_a_failing_introspection_endpoint_is_called_at_most_once_per_backoff_window(
    clock: trio.testing.MockClock, failure: str
) -> None:
    async with authorization_server(failure) as issuer:
        verifier = introspection(issuer, backoff=BACKOFF)
        async with protected(verifier, issuer.origin) as (url, _):
            calls = []
            # windows of 100 s, then 200 s; 200 tokens at first, then 50 a time
            for jump, count in [(0, 200), (50, 50), (50, 50), (100, 50), (100, 50)]:
                clock.jump(jump)
                garbage = [secrets.token_urlsafe(24) for _ in range(count)]
                assert statuses(await send_all(url, garbage)) == {401}
                calls.append(issuer.hits["/introspect"])
            assert calls == [1, 1, 2, 2, 3]
            issuer.failing = False  # back, and it knows one token
            issuer.documents["/introspect"] = {"active": False}
            clock.jump(400)
            assert statuses(await send_all(url, ["some-token"])) == {401}
            assert issuer.hits["/introspect"] == 4


async def test_a_refused_opaque_token_is_remembered_for_a_while(
    clock: trio.testing.MockClock,
) -> None:
    async with authorization_server() as issuer:
        issuer.failing = False
        issuer.documents["/introspect"] = {"active": False}
        verifier = introspection(issuer, refusal_cache_ttl=100)
        async with protected(verifier, issuer.origin) as (url, _):
            for _ in range(2):
                responses = await send_all(url, ["the-same-garbage"] * 50)
                assert statuses(responses) == {401}
                assert "not active" in responses[-1].headers["www-authenticate"]
            assert issuer.hits["/introspect"] == 1  # one call for them all
            clock.jump(100)
            await send_all(url, ["the-same-garbage"] * 50)
            assert issuer.hits["/introspect"] == 2


async def test_what_cannot_be_a_bearer_token_is_refused_without_a_call() -> None:
    not_tokens = ["a,b", "=abc", "tok=en", "to%ken", '"quoted"', "a\tb", "a:b"]
    async with authorization_server() as issuer:
        verifier = introspection(issuer)
        async with protected(verifier, issuer.origin) as (url, _):
            responses = await send_all(url, not_tokens)
    assert statuses(responses) == {400}
    assert issuer.hits == {}
