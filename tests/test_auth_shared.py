"""The sans-IO pieces both halves of OAuth share: challenges, metadata, scopes."""

from __future__ import annotations

import pytest

from mcp_actors.auth.challenge import (
    Challenge,
    bearer_challenge,
    build_challenge,
    find_challenge,
    parse_challenges,
)
from mcp_actors.auth.metadata import (
    MetadataError,
    authorization_server_metadata_urls,
    canonical_uri,
    check_authorization_server,
    check_protected_resource,
    decode_authorization_server,
    decode_protected_resource,
    protected_resource_metadata_urls,
    resource_covers,
    supports_pkce_s256,
)
from mcp_actors.auth.scopes import format_scope, missing, parse_scope, union


def test_a_bearer_challenge_with_resource_metadata_and_scope() -> None:
    header = (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",'
        ' scope="files:read files:write"'
    )
    found = find_challenge([header])
    assert found is not None
    assert found.get("resource_metadata") == (
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    )
    assert found.get("SCOPE") == "files:read files:write"


def test_several_challenges_token68_and_escapes() -> None:
    header = (
        'Basic realm="x", Negotiate abc==, bearer error=invalid_token,'
        ' error_description="a \\"b\\""'
    )
    assert parse_challenges([header]) == [
        Challenge("basic", {"realm": "x"}),
        Challenge("negotiate", token68="abc=="),
        Challenge("bearer", {"error": "invalid_token", "error_description": 'a "b"'}),
    ]
    assert parse_challenges(['DPoP algs="ES256"', "Bearer"]) == [
        Challenge("dpop", {"algs": "ES256"}),
        Challenge("bearer"),
    ]


@pytest.mark.parametrize("junk", ["", ",,", '"', "=", "Bearer ===", 'Bearer scope="unterminated'])
def test_junk_never_raises(junk: str) -> None:
    parse_challenges([junk])


def test_building_quotes_and_refuses_control_characters() -> None:
    assert bearer_challenge(scope="a b", error="insufficient_scope") == (
        'Bearer error="insufficient_scope", scope="a b"'
    )
    assert build_challenge("Bearer", {"x": 'q"\\'}) == 'Bearer x="q\\"\\\\"'
    with pytest.raises(ValueError, match="control"):
        build_challenge("Bearer", {"x": "a\r\nInjected: 1"})
    with pytest.raises(ValueError):
        build_challenge("Bad Scheme")


@pytest.mark.parametrize(
    "value", ["", "plain", "a b", 'quo"te', "back\\slash", "comma, x=y", "=", 'x\\"']
)
def test_what_is_built_parses_back(value: str) -> None:
    params = {"scope": value, "error": "insufficient_scope"}
    header = build_challenge("Bearer", params)
    assert parse_challenges([header + ', Basic realm="r"']) == [
        Challenge("bearer", params),
        Challenge("basic", {"realm": "r"}),
    ]


def test_protected_resource_metadata_urls_in_the_spec_order() -> None:
    assert protected_resource_metadata_urls("https://example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("http://127.0.0.1:8000/") == [
        "http://127.0.0.1:8000/.well-known/oauth-protected-resource",
    ]


def test_authorization_server_metadata_urls_in_the_spec_order() -> None:
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com/") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_canonical_uri_and_resource_coverage() -> None:
    assert canonical_uri("HTTPS://MCP.Example.com:443/mcp#frag") == "https://mcp.example.com/mcp"
    assert canonical_uri("http://example.com/") == "http://example.com"
    with pytest.raises(MetadataError):
        canonical_uri("/relative")
    assert resource_covers("https://example.com", "https://example.com/mcp")
    assert resource_covers("https://example.com/mcp", "https://EXAMPLE.com:443/mcp")
    assert not resource_covers("https://example.com/mc", "https://example.com/mcp")
    assert not resource_covers("https://example.com/mcp", "https://evil.example/mcp")
    assert not resource_covers("http://example.com/mcp", "https://example.com/mcp")


def test_protected_resource_metadata_is_checked_against_the_server() -> None:
    metadata = decode_protected_resource(
        b'{"resource": "https://example.com/mcp", "authorization_servers": ["https://as"],'
        b' "unknown": 1}'
    )
    check_protected_resource(metadata, "https://example.com/mcp")
    with pytest.raises(MetadataError, match="not for the server"):
        check_protected_resource(metadata, "https://example.com/other")
    with pytest.raises(MetadataError, match="malformed"):
        decode_protected_resource(b'{"resource": 3}')
    with pytest.raises(MetadataError, match="no authorization server"):
        check_protected_resource(
            decode_protected_resource(b'{"resource": "https://example.com"}'),
            "https://example.com/mcp",
        )


def test_authorization_server_metadata_issuer_and_pkce() -> None:
    metadata = decode_authorization_server(
        b'{"issuer": "https://auth.example.com/t1", "code_challenge_methods_supported": ["S256"]}'
    )
    check_authorization_server(metadata, "https://auth.example.com/t1")
    assert supports_pkce_s256(metadata)
    with pytest.raises(MetadataError, match="not 'https://evil"):
        check_authorization_server(metadata, "https://evil.example.com/t1")
    assert not supports_pkce_s256(decode_authorization_server(b'{"issuer": "https://a"}'))


def test_scopes() -> None:
    assert parse_scope("a  b a") == ("a", "b")
    assert parse_scope(None) == ()
    assert format_scope([]) is None
    assert format_scope(["b", "a", "b"]) == "b a"
    assert union("a b", None, ["c a"]) == ("a", "b", "c")
    assert missing("a b c", "b") == ("a", "c")
