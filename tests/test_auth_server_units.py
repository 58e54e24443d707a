"""The resource server's pieces one at a time: the JWT checks a real authorization server
never gets wrong (so tests/test_auth_server.py cannot show them refused), the JWKS cache's
bounds, the hook's answers, declared scopes, and the request-target probe."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import trio
import trio.testing
from joserfc import jwt
from joserfc.jwk import RSAKey

from mcp_actors import Server
from mcp_actors.auth.challenge import find_challenge
from mcp_actors.auth.server import (
    Backoff,
    HttpAnswer,
    IntrospectionVerifier,
    InvalidToken,
    JwksCache,
    JwtVerifier,
    Principal,
    ResourceServer,
)
from mcp_actors.auth.server.fetch import FetchFailed
from mcp_actors.protocol.targets import Target, request_targets

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"
KEY = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"}, private=True)


def jwks(*keys: RSAKey) -> dict[str, Any]:
    return {"keys": [key.as_dict(private=False) for key in keys]}


class Published:
    """A JWKS document as a fetch function; counts the fetches."""

    def __init__(self, document: dict[str, Any] | None) -> None:
        self.document = document
        self.fetches = 0

    async def __call__(self, url: str) -> dict[str, Any]:
        self.fetches += 1
        if self.document is None:
            raise FetchFailed("down")
        return self.document


def verifier_for(published: Published, **options: Any) -> JwtVerifier:
    cache = JwksCache("https://auth.example.com/jwks", fetch=published)
    return JwtVerifier(ISSUER, jwks=cache, **options)


def token(header: dict[str, Any] | None = None, **claims: Any) -> str:
    now = int(time.time())
    payload = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "exp": now + 60, "iat": now}
    payload.update(claims)
    payload = {name: value for name, value in payload.items() if value is not None}
    return jwt.encode(
        {"alg": "RS256", "kid": "k1", "typ": "at+jwt", **(header or {})}, payload, KEY
    )


async def test_a_well_formed_token_gives_its_caller() -> None:
    verifier = verifier_for(Published(jwks(KEY)))
    principal = await verifier.verify(
        token(scope="a b", client_id="app", aud=[RESOURCE.upper().replace("/MCP", "/mcp")]),
        RESOURCE,
    )
    assert (principal.subject, principal.client_id, principal.scopes) == (
        "alice",
        "app",
        frozenset({"a", "b"}),
    )


@pytest.mark.parametrize(
    ("forge", "reason"),
    [  # made when the test runs: a token made at collection would expire in a long run
        (lambda: token({"typ": "JWT"}), "not an access token"),
        (lambda: token(exp=int(time.time()) - 120), "expired"),
        (lambda: token(exp=None), "no expiry"),
        (lambda: token(nbf=int(time.time()) + 120), "not valid yet"),
        (lambda: token(iss="https://elsewhere.example.com"), "another authorization server"),
        (lambda: token(aud="https://mcp.example.com/other"), "not meant for this resource"),
        (lambda: token({"kid": "k9"}), "unknown key"),
        (lambda: "not.a.jwt", "not a signed JWT"),
        (lambda: "x" * 20_000, "too long"),
    ],
)
async def test_what_a_token_must_be(forge: Callable[[], str], reason: str) -> None:
    verifier = verifier_for(Published(jwks(KEY)))
    with pytest.raises(InvalidToken, match=reason):
        await verifier.verify(forge(), RESOURCE)


async def test_the_none_and_symmetric_algorithms_are_refused() -> None:
    verifier = verifier_for(Published(jwks(KEY)))
    head = "eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0"  # {"alg":"none","typ":"at+jwt"}
    with pytest.raises(InvalidToken, match="'none' is not accepted"):
        await verifier.verify(head + "." + token().split(".")[1] + ".", RESOURCE)


async def test_clock_skew_is_bounded() -> None:
    with pytest.raises(ValueError, match="leeway"):
        JwtVerifier(ISSUER, leeway=3600)
    verifier = verifier_for(Published(jwks(KEY)), leeway=30)
    await verifier.verify(token(exp=int(time.time()) - 10), RESOURCE)  # within the skew


async def test_unknown_kids_refetch_the_jwks_at_most_once_per_interval(
    mock_clock: trio.testing.MockClock,
) -> None:
    published = Published(jwks(KEY))
    cache = JwksCache("u", fetch=published, min_refetch_interval=30)
    assert await cache.key("k1") is not None
    for kid in ("made-up-1", "made-up-2"):
        assert await cache.key(kid) is None
    assert published.fetches == 1  # fetched just now: made-up kids cause no refetch
    mock_clock.jump(30)
    for kid in ("made-up-3", "made-up-4", "made-up-5"):
        assert await cache.key(kid) is None
    assert published.fetches == 2  # one refetch for all of them


async def test_a_failed_fetch_keeps_the_keys_held() -> None:
    published = Published(jwks(KEY))
    cache = JwksCache("u", fetch=published, ttl=0)
    assert await cache.key("k1") is not None
    published.document = None
    assert await cache.key("k1") is not None
    assert cache.statistics().failed_fetches == 1


async def test_the_jwks_cache_keeps_at_most_max_keys_and_no_private_keys() -> None:
    keys = [RSAKey.generate_key(2048, parameters={"kid": f"k{n}"}, private=True) for n in range(3)]
    document = {"keys": [keys[0].as_dict(private=True), *jwks(*keys[1:])["keys"]]}
    cache = JwksCache("u", fetch=Published(document), max_keys=1)
    assert await cache.key("k0") is None  # published with its private half: never used
    assert await cache.key("k1") is not None
    assert await cache.key("k2") is None  # past max_keys
    assert cache.statistics().keys == 1


class Accepting:
    """A verifier that vouches for one token (the hook's own answers are under test)."""

    async def verify(self, token: str, resource: str) -> Principal:
        if token != "good":
            raise InvalidToken("bad token")
        return Principal("alice", frozenset({"notes:read"}))


def hook(**options: Any) -> ResourceServer:
    auth = ResourceServer(verifier=Accepting(), authorization_servers=[ISSUER], **options)
    server = Server("s")

    @server.tool(scopes=["notes:write"])
    def write(text: str) -> str:
        return text

    auth.protect(server.scopes_needed, RESOURCE)
    return auth


async def test_a_malformed_authorization_header_is_400() -> None:
    answer = await hook().check_request("POST", "/mcp", {"authorization": "Bearer a b"}, "")
    assert isinstance(answer, HttpAnswer) and answer.status == 400
    challenge = find_challenge([dict(answer.headers)["www-authenticate"]])
    assert challenge is not None and challenge.get("error") == "invalid_request"


async def test_another_scheme_is_no_token() -> None:
    answer = await hook().check_request("POST", "/mcp", {"authorization": "Basic eDp5"}, "")
    assert isinstance(answer, HttpAnswer) and answer.status == 401
    challenge = find_challenge([dict(answer.headers)["www-authenticate"]])
    assert challenge is not None and challenge.get("error") is None


async def test_public_methods_pass_without_a_token_and_nothing_else_does() -> None:
    auth = hook(public_methods=frozenset({"server/discover"}))
    anonymous = await auth.check_request("POST", "/mcp", {}, "")
    assert isinstance(anonymous, Principal) and not anonymous.authenticated
    discover = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}'
    listing = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
    assert auth.check_body(anonymous, discover) is None
    refused = auth.check_body(anonymous, b"[" + discover + b"," + listing + b"]")
    assert refused is not None and refused.status == 401
    get = await auth.check_request("GET", "/mcp", {}, "")
    assert isinstance(get, HttpAnswer) and get.status == 401


async def test_a_batch_needs_the_scopes_of_all_its_calls() -> None:
    auth = hook()
    caller = await auth.check_request("POST", "/mcp", {"authorization": "Bearer good"}, "")
    assert isinstance(caller, Principal)
    call = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write"}}'
    ping = b'{"jsonrpc":"2.0","id":3,"method":"ping"}'
    assert auth.check_body(caller, ping) is None
    refused = auth.check_body(caller, b"[" + ping + b"," + call + b"]")
    assert refused is not None and refused.status == 403
    challenge = find_challenge([dict(refused.headers)["www-authenticate"]])
    assert challenge is not None and challenge.get("scope") == "notes:write"


async def test_the_metadata_document_is_get_only() -> None:
    auth = hook()
    post = await auth.check_request("POST", "/.well-known/oauth-protected-resource/mcp", {}, "")
    assert isinstance(post, HttpAnswer) and post.status == 405
    get = await auth.check_request("GET", "/.well-known/oauth-protected-resource/mcp", {}, "")
    assert isinstance(get, HttpAnswer) and get.status == 200


def test_declared_scopes_must_be_scope_tokens() -> None:
    server = Server("s")
    for bad in ("notes:read", ["two words"], ['quo"te'], [""]):
        with pytest.raises(ValueError):

            @server.tool(scopes=bad)
            def tool() -> str:
                return ""


def test_request_targets_name_what_each_request_acts_on() -> None:
    body = (
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}},'
        b'{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a://b"}},'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"},'
        b'{"jsonrpc":"2.0","id":3,"result":{}}, 7,'
        b'{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":[1]}]'
    )
    assert request_targets(body) == [
        Target("tools/call", "t"),
        Target("resources/read", "a://b"),
        Target("notifications/initialized", None, request=False),
        Target("prompts/get", None),
    ]
    assert request_targets(b"{not json") is None


async def test_the_jwks_cache_serializes_concurrent_refreshes() -> None:
    published = Published(jwks(KEY))
    cache = JwksCache("u", fetch=published)
    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(cache.key, "k1")
    assert published.fetches == 1


def test_backoff_and_introspection_settings_are_parsed_strictly() -> None:
    with pytest.raises(ValueError, match="first"):
        Backoff(first=0)
    with pytest.raises(ValueError, match="cap"):
        Backoff(first=10, cap=5)
    with pytest.raises(TypeError):
        Backoff(first="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_concurrent_calls"):
        IntrospectionVerifier("https://as.test/introspect", "rs", "s", max_concurrent_calls=0)
    with pytest.raises(ValueError, match="refusal_cache_ttl"):
        IntrospectionVerifier("https://as.test/introspect", "rs", "s", refusal_cache_ttl=-1)
