"""The HTTP routing headers of the 2026-07-28 era: body fields mirrored into headers.

A modern Streamable HTTP request repeats parts of its JSON-RPC body in headers, so
that load balancers and gateways can route without parsing the body:
``MCP-Protocol-Version`` (the ``_meta`` version), ``Mcp-Method`` (the method),
``Mcp-Name`` (``params.name`` of ``tools/call`` and ``prompts/get``, ``params.uri`` of
``resources/read``) and one ``Mcp-Param-{Name}`` per tool argument whose property in
the tool's ``inputSchema`` carries ``"x-mcp-header": "{Name}"``. The server checks
that every header agrees with the body (-32020 otherwise).

A value that is not plain visible ASCII, has whitespace at either end, or itself
looks like the sentinel travels as ``=?base64?{standard base64 of its UTF-8}?=``.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

import attrs
import msgspec

log = logging.getLogger("mcp_actors.client")

# -- client side --

#: The schema keyword that designates a tool argument to mirror into a header.
X_MCP_HEADER: Final = "x-mcp-header"
#: Prefix of the per-argument header: ``x-mcp-header: Region`` -> ``Mcp-Param-Region``.
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"

_SENTINEL = re.compile(r"=\?base64\?.*\?=", re.DOTALL)
_HEADER_SAFE = re.compile(r"[\x20-\x7e]*")
#: RFC 9110 §5.6.2 ``token``: the characters an HTTP field name may have.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})
#: JavaScript's safe integer range, which the spec imposes on mirrored integers.
_MAX_SAFE_INTEGER = 2**53 - 1

# JSON Schema 2020-12 keywords whose values are schemas (``properties`` aside, the
# only one that keeps a property statically reachable). ``$ref`` is not followed.
_ONE_SCHEMA = frozenset(
    {
        "items",
        "contains",
        "additionalItems",
        "unevaluatedItems",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_LIST_OF_SCHEMAS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP_OF_SCHEMAS = frozenset(
    {"patternProperties", "dependentSchemas", "$defs", "definitions", "dependencies"}
)

_decode_arguments = msgspec.json.Decoder()


def encode_header_value(value: str) -> str:
    """``value`` as a header value: itself when safe, else the ``=?base64?…?=`` form.

    Safe means visible ASCII and spaces only (a tab is not), no whitespace at
    either end, and not already shaped like the sentinel. The empty string is safe.
    """
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def argument_header_value(value: object) -> str | None:
    """The header form of a tool argument value, or None when it gets no header.

    Strings as they are, integers in decimal, booleans ``true``/``false`` (then
    encoded, see :func:`encode_header_value`). ``null`` and anything else (a float,
    an object, an array, an integer past ±(2^53-1)) are omitted: only the three
    primitive types may be mirrored.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return str(value) if abs(value) <= _MAX_SAFE_INTEGER else None
    if isinstance(value, str):
        return encode_header_value(value)
    return None


@attrs.frozen
class ParamHeader:
    """One ``x-mcp-header`` annotation: the header it names and the argument it mirrors."""

    #: The full header name, ``Mcp-Param-{x-mcp-header value}``.
    header: str
    #: The chain of ``properties`` keys from the schema root to the annotated property.
    path: tuple[str, ...]

    def value_in(self, arguments: object) -> str | None:
        """The header value for ``arguments`` (None: the argument is absent or null)."""
        for key in self.path:
            if not isinstance(arguments, dict) or key not in arguments:
                return None
            arguments = arguments[key]
        return argument_header_value(arguments)


class InvalidAnnotation(ValueError):
    """A tool's ``inputSchema`` carries an ``x-mcp-header`` the spec forbids."""


def param_headers(input_schema: object) -> tuple[ParamHeader, ...]:
    """The ``Mcp-Param-*`` headers a tool's ``inputSchema`` designates.

    Raises :class:`InvalidAnnotation` naming the first violation: an annotation
    that is not a non-empty RFC 9110 token, sits on a property whose ``type`` is
    not integer, string or boolean, repeats another one (case-insensitively), or
    is not reachable from the root through ``properties`` keys alone (inside
    ``items``, ``anyOf``, ``$defs``… or on the root itself).
    """
    found: list[ParamHeader] = []
    seen: dict[str, tuple[str, ...]] = {}
    for path, schema in _schema_positions(input_schema):
        if X_MCP_HEADER not in schema:
            continue
        if not path:
            raise InvalidAnnotation(
                f"{X_MCP_HEADER} is allowed only on a property reached through"
                " 'properties' alone (not the root, items, anyOf, $defs, ...)"
            )
        where = ".".join(path)
        name = schema[X_MCP_HEADER]
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            shown = repr(name) if isinstance(name, str) else f"a {type(name).__name__}"
            raise InvalidAnnotation(
                f"property {where!r}: {X_MCP_HEADER} {shown} is not an HTTP header-name token"
            )
        kind = schema.get("type")
        if not isinstance(kind, str) or kind not in _PRIMITIVE_TYPES:
            raise InvalidAnnotation(
                f"property {where!r}: {X_MCP_HEADER} needs type integer, string or boolean,"
                f" not {kind!r}"
            )
        if (other := seen.get(name.lower())) is not None:
            raise InvalidAnnotation(
                f"property {where!r}: {X_MCP_HEADER} {name!r} repeats the one of"
                f" property {'.'.join(other)!r}"
            )
        seen[name.lower()] = path
        found.append(ParamHeader(PARAM_HEADER_PREFIX + name, path))
    return tuple(found)


def _schema_positions(root: object) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema object in ``root`` with its ``properties`` path (None once off it).

    Iterative, so any finite JSON is walked without recursion; instance data
    (``default``, ``enum``, ``const``, ``examples``) is never mistaken for a schema.
    """
    stack: list[tuple[tuple[str, ...] | None, object]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                for name, schema in value.items():
                    stack.append((None if path is None else (*path, name), schema))
            elif keyword in _ONE_SCHEMA:
                stack.append((None, value))
            elif keyword in _LIST_OF_SCHEMAS and isinstance(value, list):
                stack.extend((None, schema) for schema in value)
            elif keyword in _MAP_OF_SCHEMAS and isinstance(value, dict):
                stack.extend((None, schema) for schema in value.values())


class ToolHeaders:
    """The ``Mcp-Param-*`` headers of each tool, as the last ``tools/list`` described them.

    The client teaches it every full listing (:meth:`learn`); the HTTP transport asks
    it for a ``tools/call``'s headers (:meth:`for_call`). Its size is that of the last
    listing: each one replaces the previous.
    """

    def __init__(self) -> None:
        self._by_tool: dict[str, tuple[ParamHeader, ...]] = {}

    def learn(self, tools: Iterable[tuple[str, object]]) -> set[str]:
        """Take a listing of ``(name, inputSchema)``; returns the names of invalid tools.

        A tool whose annotations are invalid must not be offered (the client drops it
        from what it lists) and is logged with the reason as a warning.
        """
        by_tool: dict[str, tuple[ParamHeader, ...]] = {}
        invalid: set[str] = set()
        for name, schema in tools:
            try:
                headers = param_headers(schema)
            except InvalidAnnotation as reason:
                log.warning("dropped tool %r from the listing: %s", name, reason)
                invalid.add(name)
                continue
            if headers:
                by_tool[name] = headers
        self._by_tool = by_tool
        return invalid

    def for_call(self, tool: str, arguments: bytes | msgspec.Raw | None) -> dict[str, str]:
        """The ``Mcp-Param-*`` headers of a call of ``tool`` with these encoded arguments."""
        designated = self._by_tool.get(tool)
        if not designated or arguments is None:
            return {}
        try:
            decoded = _decode_arguments.decode(arguments)
        except (msgspec.DecodeError, ValueError, RecursionError):
            return {}
        headers: dict[str, str] = {}
        for param in designated:
            value = param.value_in(decoded)
            if value is not None:
                headers[param.header] = value
        return headers


def modern_request_headers(
    version: str, method: str, name: str | None, params: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The routing headers of one modern request: version, method, name and parameters."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = encode_header_value(name)
    if params:
        headers.update(params)
    return headers
