"""protocol/routing_headers.py: the 2026-07-28 routing headers, without HTTP.

The header-value codec (``=?base64?…?=`` decoded strictly), the validity rules of
``x-mcp-header`` annotations, and the two header rungs of the validation ladder.
Over real HTTP the same rules are exercised in ``test_modern_http.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_actors.protocol import errors
from mcp_actors.protocol.errors import McpError
from mcp_actors.protocol.routing_headers import (
    check_param_headers,
    check_standard_headers,
    decode_header_value,
    header_arguments,
    invalid_x_mcp_header,
    mirrored_value,
)


@pytest.mark.parametrize(
    ("value", "decoded"),
    [
        ("us-west1", "us-west1"),
        ("", ""),
        ("=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界"),
        ("=?base64?IHBhZGRlZCA=?=", " padded "),
        ("=?base64?bGluZTEKbGluZTI=?=", "line1\nline2"),
        ("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "=?base64?literal?="),
        ("=?base64??=", ""),
        # without the whole wrapper, a value is a literal
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),
        # invalid: missing padding, foreign alphabet, stray bits, not UTF-8, bad characters
        ("=?base64?SGVsbG8?=", None),
        ("=?base64?SGVs!!!bG8=?=", None),
        ("=?base64?SGVsbG9=?=", None),
        ("=?base64?SGVs bG8=?=", None),
        ("=?base64?_-8=?=", None),
        ("=?base64?/w==?=", None),
        ("caf\xe9", None),
        ("a\x00b", None),
    ],
)
def test_header_values_decode_strictly(value: str, decoded: str | None) -> None:
    assert decode_header_value(value) == decoded


def schema_with(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (schema_with(region={"type": "string", "x-mcp-header": "Region"}), None),
        (
            schema_with(
                outer={
                    "type": "object",
                    "properties": {"inner": {"type": "integer", "x-mcp-header": "Inner"}},
                }
            ),
            None,
        ),
        (schema_with(region={"type": "string"}), None),
        ({"$defs": {"x": {"type": "string"}}, "type": "object"}, None),
        (schema_with(region={"type": "string", "x-mcp-header": ""}), "token"),
        (schema_with(region={"type": "string", "x-mcp-header": "Re gion"}), "token"),
        (schema_with(region={"type": "string", "x-mcp-header": "Re\r\ngion"}), "token"),
        (schema_with(region={"type": "string", "x-mcp-header": 7}), "token"),
        (schema_with(ratio={"type": "number", "x-mcp-header": "Ratio"}), "type"),
        (schema_with(tags={"type": "array", "x-mcp-header": "Tags"}), "type"),
        (schema_with(region={"x-mcp-header": "Region"}), "type"),
        (
            schema_with(
                a={"type": "string", "x-mcp-header": "Same"},
                b={"type": "string", "x-mcp-header": "sAME"},
            ),
            "repeats",
        ),
        ({"type": "string", "x-mcp-header": "Root"}, "properties"),
        (
            schema_with(tags={"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}),
            "properties",
        ),
        (
            {"anyOf": [schema_with(region={"type": "string", "x-mcp-header": "Region"})]},
            "properties",
        ),
        (
            {
                "$defs": {"r": {"type": "string", "x-mcp-header": "Region"}},
                "properties": {"region": {"$ref": "#/$defs/r"}},
            },
            "properties",
        ),
        (
            {"if": schema_with(region={"type": "string", "x-mcp-header": "Region"})},
            "properties",
        ),
    ],
)
def test_x_mcp_header_annotations_follow_the_rules(
    schema: dict[str, Any], reason: str | None
) -> None:
    found = invalid_x_mcp_header(schema)
    if reason is None:
        assert found is None
    else:
        assert found is not None and reason in found


def test_a_deep_schema_is_walked_without_recursion() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        schema = {"type": "object", "properties": {"x": schema}}
    assert invalid_x_mcp_header(schema) is None


NESTED = schema_with(
    where={
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    },
    count={"type": "integer", "x-mcp-header": "Count"},
)


def test_header_arguments_map_property_paths_to_names() -> None:
    assert header_arguments(NESTED) == {("where", "region"): "Region", ("count",): "Count"}


def mismatch(call: Any, *args: Any) -> str:
    with pytest.raises(McpError) as raised:
        call(*args)
    assert raised.value.code == errors.HEADER_MISMATCH
    return raised.value.message


@pytest.mark.parametrize(
    ("arguments", "headers", "problem"),
    [
        (
            {"where": {"region": "eu"}, "count": 3},
            {"mcp-param-region": "eu", "mcp-param-count": "3"},
            None,
        ),
        ({"where": {"region": "eu"}}, {"mcp-param-region": "eu"}, None),
        ({"where": {"region": None}, "count": None}, {}, None),  # null: no header expected
        ({"where": "flat"}, {}, None),  # the path does not exist: no value
        ({"count": 3.0}, {"mcp-param-count": "3"}, None),
        ({"count": 3}, {"mcp-param-count": "3.00"}, None),
        ({"count": 3}, {"mcp-param-count": "3.5"}, "does not match"),
        ({"count": 3}, {"mcp-param-count": "3e0"}, "does not match"),
        ({"count": 3}, {}, "missing"),
        ({}, {"mcp-param-count": "3"}, "present"),
        ({"count": [3]}, {"mcp-param-count": "3"}, "present"),  # an array has no header form
        ({"count": [3]}, {}, None),
        ({"count": 2**53}, {}, None),  # past the safe range: a client sends no header
        ({"count": 1.5}, {"mcp-param-count": "1.5"}, "present"),
        ({"count": 3}, {"mcp-param-count": "=?base64?Mw?=", "x": "y"}, "malformed"),
        ({"count": 3}, {"mcp-param-count": "=?base64?Mw==?="}, None),
    ],
)
def test_param_headers_against_nested_and_numeric_arguments(
    arguments: dict[str, Any], headers: dict[str, str], problem: str | None
) -> None:
    if problem is None:
        check_param_headers(NESTED, arguments, headers)
    else:
        assert problem in mismatch(check_param_headers, NESTED, arguments, headers)


@pytest.mark.parametrize(
    ("value", "mirrored"),
    [
        ("eu", "eu"),
        ("", ""),
        (True, "true"),
        (False, "false"),
        (-7, "-7"),
        (42.0, "42"),
        (2**53 - 1, str(2**53 - 1)),
        (-(2**53), None),
        (1.5, None),
        (None, None),
        ({"a": 1}, None),
    ],
)
def test_what_a_client_mirrors_of_an_argument(value: object, mirrored: str | None) -> None:
    assert mirrored_value(value) == mirrored


def test_a_repeated_param_header_is_refused() -> None:
    message = mismatch(
        check_param_headers, NESTED, {"count": 3}, {"mcp-param-count": "3, 3"}, {"mcp-param-count"}
    )
    assert "more than once" in message


def test_an_invalid_schema_declares_no_headers() -> None:
    schema = schema_with(ratio={"type": "number", "x-mcp-header": "Ratio"})
    check_param_headers(schema, {"ratio": 1.5}, {})


STANDARD = {"mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/get", "mcp-name": "p"}


@pytest.mark.parametrize(
    ("headers", "params", "body_version", "problem"),
    [
        (STANDARD, {"name": "p"}, "2026-07-28", None),
        (STANDARD, {}, "2026-07-28", None),  # no name in the body: dispatch says so
        ({**STANDARD, "mcp-name": "=?base64?cA==?="}, {"name": "p"}, "2026-07-28", None),
        (STANDARD, {"name": "q"}, "2026-07-28", "does not match"),
        (STANDARD, {"name": 5}, "2026-07-28", "does not match"),
        ({**STANDARD, "mcp-name": "=?base64?cA=?="}, {"name": "p"}, "2026-07-28", "malformed"),
        (STANDARD, {"name": "p"}, "2025-11-25", "MCP-Protocol-Version"),
        (STANDARD, {"name": "p"}, None, "MCP-Protocol-Version"),
        ({"mcp-method": "prompts/get", "mcp-name": "p"}, {"name": "p"}, "2026-07-28", "required"),
        ({**STANDARD, "mcp-method": "Prompts/Get"}, {"name": "p"}, "2026-07-28", "Mcp-Method"),
    ],
)
def test_standard_headers_against_the_body(
    headers: dict[str, str], params: dict[str, Any], body_version: Any, problem: str | None
) -> None:
    if problem is None:
        check_standard_headers(headers, "prompts/get", params, body_version)
    else:
        message = mismatch(check_standard_headers, headers, "prompts/get", params, body_version)
        assert problem in message
