"""Routing headers of Streamable HTTP in the 2026-07-28 era: what a request mirrors, and the check.

From 2026-07-28 on, an HTTP client copies a few fields of each request's body
into headers, so that a load balancer or gateway can route on them without
reading the body (``streamable-http.mdx`` "Request Metadata"):

- ``MCP-Protocol-Version``: the body's ``_meta`` ``io.modelcontextprotocol/protocolVersion``;
- ``Mcp-Method``: the JSON-RPC ``method`` (values are case-sensitive);
- ``Mcp-Name``: ``params.name`` of ``tools/call`` and ``prompts/get``, ``params.taskId``
  of ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (the tasks extension),
  ``params.uri`` of ``resources/read``;
- ``Mcp-Param-<Name>``: each tool argument whose property in the tool's
  ``inputSchema`` carries ``"x-mcp-header": "<Name>"``.

Because something in front of the server may have acted on the headers, the
server must refuse a request whose headers and body disagree — a header
missing while its body value is there, a different value, a malformed one —
with ``400`` and error -32020 (header mismatch).

Values that are not plain visible ASCII, or have edge whitespace, or look
like the wrapper itself travel as ``=?base64?<base64 of the UTF-8>?=``. The
wrapper is decoded strictly: the standard alphabet with its padding, and the
canonical encoding only (the one an encoder produces: no stray bits in the last
character), so one value has one spelling and a corrupt header never matches
a body by accident. A value without the whole wrapper is a literal.

Header names reach this module lower-cased (HTTP names are case-insensitive);
``repeated`` names the headers that came more than once, which is a mismatch in
itself for a routing header (two readers could take different copies).

Nothing here does I/O: the transport hands over the headers and the decoded
parameters, and answers the :class:`~.errors.McpError` raised.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import logging
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, Final

import attrs
import msgspec
from msgspec import UNSET

from .errors import McpError, header_mismatch
from .jsonrpc import RequestId, decode, peek
from .modern import PROTOCOL_VERSION_KEY, RequestMeta, check_version, request_meta_of
from .received import ModernPost

VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
#: Prefix of the headers mirroring annotated tool arguments: ``Mcp-Param-{x-mcp-header}``.
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
#: The property annotation of a tool's input schema that names an ``Mcp-Param-*`` header.
X_MCP_HEADER: Final = "x-mcp-header"

#: Methods whose request mirrors a parameter into ``Mcp-Name``, and which parameter.
NAME_PARAMS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",  # the tasks extension (tasks.md: "Mcp-Name: <taskId>")
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

_ROUTING_HEADERS: Final = (VERSION_HEADER, METHOD_HEADER, NAME_HEADER)

_WRAPPED = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
#: What a header value may hold as it is: horizontal tab, space and visible ASCII.
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e]*")
#: An RFC 9110 token: what a header name (so an ``x-mcp-header`` value) may be.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: A decimal a header may give for an integer argument (``42``, ``-7``, ``42.0``).
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})
#: The largest integer an ``x-mcp-header`` integer may be (JavaScript's safe range).
MAX_SAFE_INTEGER: Final = 2**53 - 1

# JSON Schema 2020-12 keywords whose values are schemas. Only ``properties``
# keeps a position "statically reachable"; crossing any of these leaves the chain.
# ``$ref`` is not followed: a reference is never dereferenced.
_ONE_SCHEMA: Final = frozenset(
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
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS: Final = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})


def admit_http_request(
    post: ModernPost,
    headers: Mapping[str, str],
    repeated: Collection[str],
    supported: tuple[str, ...],
    input_schema_of: Callable[[str], Any] | None = None,
) -> RequestMeta:
    """The validation ladder of a modern request over HTTP, first failure wins:

    1. ``_meta`` carries the version and the client capabilities (-32602);
    2. the standard headers agree with the body (-32020, :func:`check_standard_headers`);
    3. the version is one of ``supported`` (-32022 with ``{supported, requested}``);
    4. a ``tools/call``'s ``Mcp-Param-*`` headers agree with its arguments, as the
       tool's input schema (``input_schema_of(name)``) declares them (-32020).

    Dispatch (an unknown method: -32601) comes after, in the session. Returns the
    request's ``_meta``; raises the :class:`~.errors.McpError` to answer.
    """
    meta = request_meta_of(post.meta)  # decoded with the body: not read again
    check_standard_headers(headers, post.method, post.routed, meta.version, repeated)
    check_version(meta, supported)
    if post.method == "tools/call" and input_schema_of is not None and post.routed is not None:
        name = post.routed.get("name")
        schema = input_schema_of(name) if isinstance(name, str) else None
        if schema is not None and header_arguments(schema):
            check_param_headers(schema, post.arguments(), headers, repeated)
    return meta


def decode_header_value(value: str) -> str | None:
    """The value a routing header carries: ``=?base64?…?=`` unwrapped, anything else as it is.

    None if the value cannot be what a client sent: characters a header value
    may not hold, or a wrapper whose base64 is invalid, not canonical, or not
    UTF-8.
    """
    if _FIELD_VALUE.fullmatch(value) is None:
        return None
    wrapped = _WRAPPED.fullmatch(value)
    if wrapped is None:
        return value
    payload = wrapped.group(1)
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(raw).decode("ascii") != payload:
        return None  # stray bits in the last character: not how an encoder writes it
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def check_standard_headers(
    headers: Mapping[str, str],
    method: str,
    params: Mapping[str, Any] | None,
    body_version: object,
    repeated: Collection[str] = (),
) -> None:
    """Rung 2 of the validation ladder: ``MCP-Protocol-Version``, ``Mcp-Method`` and
    ``Mcp-Name`` against the body; raises :func:`~.errors.header_mismatch` (-32020).

    ``body_version`` is the ``_meta`` protocol version as sent (rung 1 has made
    sure it is there). A body without the ``Mcp-Name`` field is not this rung's
    business: dispatch refuses the missing parameter.
    """
    for name in _ROUTING_HEADERS if repeated else ():
        if name in repeated:
            raise header_mismatch(f"the {_title(name)} header appears more than once")
    _require(headers, VERSION_HEADER, body_version, "_meta io.modelcontextprotocol/protocolVersion")
    _require(headers, METHOD_HEADER, method, "the method")
    field = NAME_PARAMS.get(method)
    if field is None or params is None or params.get(field) is None:
        return
    body_value = params[field]
    raw = headers.get(NAME_HEADER)
    if raw is None:
        raise header_mismatch(f"the Mcp-Name header is required for {method}")
    named = decode_header_value(raw)
    if named is None:
        raise header_mismatch("the Mcp-Name header is malformed")
    if named != body_value:
        raise header_mismatch(
            f"Mcp-Name header {named!r} does not match params.{field} {body_value!r}"
        )


def _require(headers: Mapping[str, str], name: str, body_value: object, what: str) -> None:
    """The header ``name`` is there and says exactly ``body_value`` (``what`` names it)."""
    value = headers.get(name)
    if value is None:
        raise header_mismatch(f"the {_title(name)} header is required")
    if value != body_value:
        raise header_mismatch(
            f"{_title(name)} header {value!r} does not match {what} {body_value!r}"
        )


def check_param_headers(
    input_schema: Any,
    arguments: Any,
    headers: Mapping[str, str],
    repeated: Collection[str] = (),
) -> None:
    """Rung 4: a ``tools/call``'s ``Mcp-Param-*`` headers against its arguments, as the
    tool's ``input_schema`` declares them; raises :func:`~.errors.header_mismatch` (-32020).

    For each annotated property: a value in the body (not ``null``) needs its
    header, equal after decoding to what a client mirrors of it
    (:func:`mirrored_value`; integers compare as numbers: ``42.0`` is ``42``); a
    header needs such a value; a repeated or malformed header is refused.
    Headers no annotation names are ignored, as HTTP says. A schema whose
    annotations are invalid declares nothing (a conforming client drops that tool).
    """
    if invalid_x_mcp_header(input_schema) is not None:
        return
    if not isinstance(arguments, Mapping):
        arguments = {}
    for path, name in _annotations(input_schema):
        header = PARAM_HEADER_PREFIX + name
        key = header.lower()
        raw = headers.get(key)
        if raw is not None and key in repeated:
            raise header_mismatch(f"the {header} header appears more than once")
        expected = mirrored_value(_value_at(arguments, path))
        _check_param_header(header, raw, expected, ".".join(path))


def _check_param_header(header: str, raw: str | None, expected: str | None, argument: str) -> None:
    """One ``Mcp-Param-*`` header (None: absent) against what the client mirrors of
    ``argument`` (None: nothing): both absent, or equal once decoded."""
    if expected is None:
        if raw is not None:
            raise header_mismatch(f"{header} is present but argument {argument!r} is not")
        return
    if raw is None:
        raise header_mismatch(f"{header} is missing for argument {argument!r}")
    decoded = decode_header_value(raw)
    if decoded is None:
        raise header_mismatch(f"{header} is malformed")
    if decoded != expected and not _same_integer(expected, decoded):
        raise header_mismatch(f"{header} does not match argument {argument!r}")


def mirrored_value(value: object) -> str | None:
    """What a client mirrors of a tool argument into its ``Mcp-Param-*`` header (before
    the ``=?base64?…?=`` encoding), or None when it sends no header for it: strings as
    they are, integers in decimal (an integral float as the integer), booleans
    ``true``/``false``; nothing for ``null``, other numbers, objects, arrays, or integers
    past 2**53 - 1 either way."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_SAFE_INTEGER else None
    return value if isinstance(value, str) else None


def _same_integer(expected: str, decoded: str) -> bool:
    """Integers compare as numbers: a header ``42.0`` says what an argument ``42`` says."""
    if _DECIMAL.fullmatch(decoded) is None or _DECIMAL.fullmatch(expected) is None:
        return False
    return decimal.Decimal(decoded) == decimal.Decimal(expected)


def invalid_x_mcp_header(input_schema: Any) -> str | None:
    """Why the ``x-mcp-header`` annotations of a tool's ``input_schema`` are invalid, or None.

    An annotation must be a non-empty RFC 9110 token, unique (ignoring case)
    within the schema, on a property of type ``string``, ``integer`` or
    ``boolean``, reached from the root through ``properties`` keys only (not
    through ``items``, ``anyOf``, ``$ref``, …). A tool with an invalid one is
    dropped by conforming HTTP clients.
    """
    seen: dict[str, str] = {}
    for path, schema in _positions(input_schema):
        if X_MCP_HEADER not in schema:
            continue
        if not path:
            return f"{X_MCP_HEADER} is only allowed on a property reached through 'properties'"
        where = ".".join(path)
        name = schema[X_MCP_HEADER]
        if not isinstance(name, str) or _TOKEN.fullmatch(name) is None:
            return f"property {where!r}: {X_MCP_HEADER} must be a header-name token"
        prop_type = schema.get("type")
        if not isinstance(prop_type, str) or prop_type not in _HEADER_TYPES:
            return f"property {where!r}: {X_MCP_HEADER} needs type string, integer or boolean"
        folded = name.lower()
        if folded in seen:
            return f"property {where!r}: {X_MCP_HEADER} {name!r} repeats {seen[folded]!r}'s"
        seen[folded] = where
    return None


def header_arguments(input_schema: Any) -> dict[tuple[str, ...], str]:
    """The annotated properties of a valid ``input_schema``: property path → header name
    (``Mcp-Param-`` plus it). Check :func:`invalid_x_mcp_header` first."""
    return dict(_annotations(input_schema))


def _annotations(input_schema: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    for path, schema in _positions(input_schema):
        name = schema.get(X_MCP_HEADER)
        if path and isinstance(name, str):
            yield path, name


def _positions(root: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema position in ``root`` with its chain of ``properties`` keys (None once
    off that chain). Iterative, so a schema of any depth is walked without recursion."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for keyword, value in node.items():
            stack.extend(_subschemas(path, keyword, value))


def _subschemas(
    path: tuple[str, ...] | None, keyword: str, value: Any
) -> Iterable[tuple[tuple[str, ...] | None, Any]]:
    """The schemas one keyword of a schema at ``path`` holds, each with its path: a
    property stays on the ``properties`` chain, every other subschema is off it."""
    if keyword == "properties" and isinstance(value, dict):
        return [(None if path is None else (*path, name), sub) for name, sub in value.items()]
    if keyword in _ONE_SCHEMA:
        return [(None, value)]
    if keyword in _SCHEMA_LISTS and isinstance(value, list):
        return [(None, sub) for sub in value]
    if keyword in _SCHEMA_MAPS and isinstance(value, dict):
        return [(None, sub) for sub in value.values()]
    return []


def _value_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _title(name: str) -> str:
    return (
        "MCP-Protocol-Version"
        if name == VERSION_HEADER
        else "-".join(part.capitalize() for part in name.split("-"))
    )


# -- client side --

log = logging.getLogger("mcp_actors.client")
_any_json: Final = msgspec.json.Decoder()


#: What a client may send as it is: visible ASCII and spaces (a tab is encoded).
_HEADER_SAFE = re.compile(r"[\x20-\x7e]*")


def encode_header_value(value: str) -> str:
    """``value`` as a client sends it in a header: itself when safe, else ``=?base64?…?=``.

    Safe means visible ASCII and spaces only, no whitespace at either end, and not
    already shaped like the wrapper. The empty string is safe.
    """
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _WRAPPED.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


class ToolHeaders:
    """The ``Mcp-Param-*`` headers of each tool, as the last ``tools/list`` described them.

    The client teaches it every full listing (:meth:`learn`); the HTTP transport asks
    it for a ``tools/call``'s headers (:meth:`for_call`). Its size is that of the last
    listing: each one replaces the previous.
    """

    def __init__(self) -> None:
        self._by_tool: dict[str, dict[tuple[str, ...], str]] = {}

    def learn(self, tools: Iterable[tuple[str, Any]]) -> set[str]:
        """Take a listing of ``(name, inputSchema)``; returns the names of invalid tools.

        A tool whose annotations are invalid (:func:`invalid_x_mcp_header`) must not be
        offered: the client drops it from what it lists, and it is logged as a warning
        with the reason.
        """
        by_tool: dict[str, dict[tuple[str, ...], str]] = {}
        invalid: set[str] = set()
        for name, schema in tools:
            reason = invalid_x_mcp_header(schema)
            if reason is not None:
                log.warning("dropped tool %r from the listing: %s", name, reason)
                invalid.add(name)
            elif annotated := header_arguments(schema):
                by_tool[name] = annotated
        self._by_tool = by_tool
        return invalid

    def for_call(self, tool: str, arguments: Any) -> dict[str, str]:
        """The ``Mcp-Param-*`` headers of a call of ``tool`` with these arguments (as the
        caller passed them, or encoded): one per annotated argument present and not
        null, its value encoded."""
        annotated = self._by_tool.get(tool)
        if not annotated or arguments is None:
            return {}
        if isinstance(arguments, (bytes, msgspec.Raw)):
            decoded = peek(_any_json, arguments)
        else:  # what will be encoded, as JSON values: no decode needed
            decoded = msgspec.to_builtins(arguments)
        if not isinstance(decoded, dict):
            return {}
        headers: dict[str, str] = {}
        for path, name in annotated.items():
            value = mirrored_value(_value_at(decoded, path))
            if value is not None:
                headers[PARAM_HEADER_PREFIX + name] = encode_header_value(value)
        return headers


@attrs.frozen
class Sent:
    """What a message a client sends is, as far as an HTTP transport routes on it."""

    #: The ids of the requests it carries.
    request_ids: tuple[RequestId, ...] = ()
    #: Its method (None: a response of ours).
    method: str | None = None
    #: For ``notifications/cancelled``: the request it cancels.
    cancels: RequestId | None = None
    #: The modern protocol version its ``params._meta`` declares (None: legacy).
    protocol_version: str | None = None
    #: ``params.name``, ``params.uri`` and ``params.taskId``, when strings (``Mcp-Name``
    #: mirrors one).
    name: str | None = None
    uri: str | None = None
    task_id: str | None = None
    #: ``params.arguments`` of a ``tools/call``, as the caller passed them.
    arguments: Any = None


def sent(method: str | None, request_id: RequestId | None, params: Any) -> Sent:
    """What a message we send is, read from what the runtime handed the engine (its
    method, a request's id, its params: a Struct or a dict), so that nothing we encoded
    is decoded again to route it."""
    if method is None:
        return Sent()
    meta = _param(params, "meta", "_meta")
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    cancels = (
        _param(params, "request_id", "requestId") if method == "notifications/cancelled" else None
    )
    return Sent(
        () if request_id is None else (request_id,),
        method,
        cancels=cancels if isinstance(cancels, (int, str)) else None,
        protocol_version=version if isinstance(version, str) else None,
        name=_text(_param(params, "name", "name")),
        uri=_text(_param(params, "uri", "uri")),
        task_id=_text(_param(params, "task_id", "taskId")),
        arguments=_param(params, "arguments", "arguments") if method == "tools/call" else None,
    )


def sent_as_written(payload: bytes) -> Sent:
    """:func:`sent` for a message handed to a transport as bytes alone (written by its
    caller, not encoded by our engine, which says what it sends): read from the bytes."""
    try:
        message = decode(payload)
    except McpError:
        return Sent()
    if isinstance(message, list):  # a batch: its requests, nothing to mirror
        ids = (m.id for m in message if not isinstance(m, McpError) and m.method is not UNSET)
        return Sent(tuple(i for i in ids if isinstance(i, (int, str))))
    if message.method is UNSET:
        return Sent()
    params = None if message.params is UNSET else peek(_any_json, message.params)
    request_id = message.id if isinstance(message.id, (int, str)) else None
    return sent(message.method, request_id, params)


def _param(params: Any, attribute: str, key: str) -> Any:
    """``params``' field: a dict's ``key``, a Struct's ``attribute`` (None if unset)."""
    value = params.get(key) if isinstance(params, dict) else getattr(params, attribute, None)
    return None if value is UNSET else value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def client_headers(sent: Sent, version: str, tools: ToolHeaders | None) -> dict[str, str]:
    """The routing headers of one message a modern client POSTs: version and method,
    and for a request its ``Mcp-Name`` and (``tools/call``) ``Mcp-Param-*`` headers."""
    assert sent.method is not None
    headers = {_title(VERSION_HEADER): version, _title(METHOD_HEADER): sent.method}
    field = NAME_PARAMS.get(sent.method) if sent.request_ids else None
    name = {"name": sent.name, "uri": sent.uri, "taskId": sent.task_id}.get(field or "")
    if name is not None:
        headers[_title(NAME_HEADER)] = encode_header_value(name)
        if sent.method == "tools/call" and tools is not None:
            headers.update(tools.for_call(name, sent.arguments))
    return headers
