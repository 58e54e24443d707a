"""The modern era (2026-07-28): every request says in its ``_meta`` who sends it and how.

There is no ``initialize`` in this era. Each request carries, in ``params._meta``:

- ``io.modelcontextprotocol/protocolVersion`` (required): the revision it speaks;
- ``io.modelcontextprotocol/clientCapabilities`` (required, ``{}`` for none): what
  the client supports *for this request* — never inferred from earlier ones;
- ``io.modelcontextprotocol/clientInfo`` (optional): the client's name and version;
- ``io.modelcontextprotocol/logLevel`` (optional): the lowest level of
  ``notifications/message`` the client wants for this request; absent, it wants none.

Results carry ``_meta["io.modelcontextprotocol/serverInfo"]`` in return.

A request is checked on a fixed ladder, first failure wins (``basic/index.mdx``,
``basic/versioning.mdx``; the conformance suite probes exactly this order):

1. :func:`read_request_meta`: ``_meta`` and its two required keys are there and well
   formed, else -32602 naming what is missing;
2. (HTTP only, the transport's job) the routing headers agree with the body, else -32020;
3. :func:`check_version`: the version is one the server speaks, else -32022 with
   ``data: {supported, requested}``;
4. dispatch by the modern method table (:func:`~.methods.method_table`): unknown, -32601.

:func:`is_modern_request` is how one endpoint serves both eras: a request whose
``_meta`` carries the version or the capabilities key is modern, and so is one for a
method only the modern era has (:func:`is_modern_method`); anything else
(``initialize`` first of all) is legacy. No I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, get_args

import msgspec
from msgspec import UNSET

from . import errors
from . import types as t
from .errors import INVALID_PARAMS, McpError, method_not_found, unsupported_protocol_version
from .jsonrpc import UNDECODABLE, Envelope
from .lifecycle import SessionState
from .methods import METHODS, MethodSpec
from .versions import REVISIONS, Revision, is_modern, modern_versions

#: ``_meta`` key of the request's protocol version (required).
PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
#: ``_meta`` key of the client's capabilities for this request (required).
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
#: ``_meta`` key of the client's name and version (optional).
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
#: ``_meta`` key of the lowest log level the client wants for this request (optional).
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
#: Result ``_meta`` key of the server's name and version.
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
#: ``_meta`` key tagging every message of a ``subscriptions/listen`` stream: the listen
#: request's id.
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"

_REQUIRED_KEYS: Final = (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY)

#: The errors only a modern (2026-07-28) server answers with: header mismatch,
#: missing client capability, unsupported protocol version.
MODERN_ERRORS: Final = frozenset(
    {errors.HEADER_MISMATCH, errors.MISSING_CLIENT_CAPABILITY, errors.UNSUPPORTED_PROTOCOL_VERSION}
)


def is_modern_refusal(status: int, error: McpError) -> bool:
    """Whether an HTTP error carrying ``error`` can only come from a modern server.

    Besides its own error codes, a modern server answers an unknown method with
    ``404`` and -32601; a legacy server on the same URL would have served the POST
    (Streamable HTTP) or refused it without a JSON-RPC error (HTTP+SSE).
    """
    return error.code in MODERN_ERRORS or (status == 404 and error.code == errors.METHOD_NOT_FOUND)


#: ``find_modern_marker(raw)``: a match if the raw bytes hold what every modern ``_meta``
#: key begins with (the part before a ``/`` a JSON encoder may escape), else None. A
#: pre-check for hot paths: it searches the buffer in C, without copying it.
find_modern_marker: Final = re.compile(re.escape(b"io.modelcontextprotocol")).search
_LOG_LEVELS: Final = frozenset(get_args(t.LoggingLevel))
#: The methods only the modern era has (``server/discover``): a request for one is modern
#: whatever its ``_meta`` says, so a bare one gets the ladder's -32602.
MODERN_ONLY_METHODS: Final = frozenset(
    name for name, spec in METHODS.items() if is_modern(spec.since)
)


class _MetaOnly(msgspec.Struct):
    """``params`` decoded only as far as its ``_meta`` (other fields are skipped)."""

    meta: Any = msgspec.field(default=None, name="_meta")


_meta_decoder: Final = msgspec.json.Decoder(_MetaOnly)


class RequestMeta(msgspec.Struct, frozen=True):
    """What a modern request says about itself in ``_meta`` (a Struct: one is made per
    request, and a Struct is made in C)."""

    version: str
    client_capabilities: t.ClientCapabilities
    client_info: t.Implementation | None = None
    #: None: the client wants no ``notifications/message`` for this request.
    log_level: t.LoggingLevel | None = None


def _meta_of(raw_params: msgspec.Raw | bytes | Any) -> dict[str, Any] | None:
    """The ``_meta`` object of raw ``params`` (None if absent, not an object, or no JSON
    — invalid UTF-8 and nesting too deep included)."""
    if raw_params is UNSET or raw_params is None:
        return None
    try:
        meta = _meta_decoder.decode(raw_params).meta
    except (*UNDECODABLE, TypeError):
        return None
    return meta if isinstance(meta, dict) else None


def is_modern_request(raw_params: msgspec.Raw | bytes | Any) -> bool:
    """Whether a request's raw ``params`` mark it as modern: its ``_meta`` carries
    ``protocolVersion`` or ``clientCapabilities``.

    Cheap for legacy traffic: the bytes are only decoded when they mention
    ``io.modelcontextprotocol`` at all.
    """
    try:
        if find_modern_marker(raw_params) is None:  # searches the buffer itself: no copy
            return False
    except TypeError:  # UNSET or None: no params
        return False
    meta = _meta_of(raw_params)
    return meta is not None and any(key in meta for key in _REQUIRED_KEYS)


def is_modern_method(method: str) -> bool:
    """Whether ``method`` exists only in the modern era (``server/discover``): a request
    for it is modern whatever its ``_meta`` says, so a bare one gets the ladder's -32602."""
    return method in MODERN_ONLY_METHODS


def read_request_meta(raw_params: msgspec.Raw | bytes | Any) -> RequestMeta:
    """Rung 1 of the ladder: the request's ``_meta``, or -32602 saying what is wrong.

    Missing keys are named; so is a value of the wrong shape (a version that is not a
    string, capabilities that are not a ClientCapabilities object, an unknown log
    level). ``clientInfo`` is optional and never required.
    """
    return request_meta_of(_meta_of(raw_params))


def request_meta_of(meta: dict[str, Any] | None) -> RequestMeta:
    """:func:`read_request_meta` for a ``_meta`` decoded already (None: absent or not an
    object), as the one decode of a modern HTTP POST gives it."""
    if meta is None:
        raise McpError(
            INVALID_PARAMS,
            "Invalid params: params._meta is required in protocol revision 2026-07-28 and"
            f" must carry {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY}",
        )
    missing = [key for key in _REQUIRED_KEYS if key not in meta]
    if missing:
        raise McpError(
            INVALID_PARAMS,
            f"Invalid params: params._meta lacks {' and '.join(missing)}",
            {"missing": missing},
        )
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        raise _invalid(PROTOCOL_VERSION_KEY, "must be a string")
    capabilities = _convert(meta, CLIENT_CAPABILITIES_KEY, t.ClientCapabilities)
    client_info = (
        _convert(meta, CLIENT_INFO_KEY, t.Implementation) if CLIENT_INFO_KEY in meta else None
    )
    log_level = meta.get(LOG_LEVEL_KEY)
    unhashable = isinstance(log_level, (dict, list))  # (all JSON gives that a set cannot hold)
    if log_level is not None and (unhashable or log_level not in _LOG_LEVELS):
        raise _invalid(LOG_LEVEL_KEY, f"must be one of {', '.join(sorted(_LOG_LEVELS))}")
    return RequestMeta(version, capabilities, client_info, log_level)


def check_version(meta: RequestMeta, supported: tuple[str, ...]) -> Revision:
    """Rung 3 of the ladder: the revision the request speaks, if the server speaks it.

    Otherwise -32022 with ``data.requested`` (as sent) and ``data.supported``: the
    server's modern versions (what ``server/discover`` lists), or all its versions
    when it speaks no modern one (a legacy-only server; the client then falls back
    to ``initialize``).
    """
    if meta.version in supported and is_modern(meta.version):
        return REVISIONS[meta.version]
    listed = modern_versions(supported) or supported
    raise unsupported_protocol_version(meta.version, listed)


def _convert(meta: dict[str, Any], key: str, kind: type[msgspec.Struct]) -> Any:
    try:
        return msgspec.convert(meta[key], kind)
    except msgspec.ValidationError as error:
        raise _invalid(key, str(error)) from None


def _invalid(key: str, detail: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: params._meta {key} {detail}", {"key": key})


class AdmittedRequest(msgspec.Struct, frozen=True, gc=False):
    """A modern request whose ``_meta`` a transport has read already, checking its
    headers against it (:func:`~.routing_headers.admit_http_request`): the engine takes
    the request with that ``_meta`` rather than reading it a second time."""

    envelope: Envelope
    request_id: int | str
    method: str
    meta: RequestMeta


class ModernRequest(msgspec.Struct, frozen=True):
    """A modern request admitted through the ladder: its ``_meta`` and the state it is
    served with (a :class:`SessionState` of its own: its revision, the capabilities
    its ``_meta`` declares, no back channel)."""

    meta: RequestMeta
    state: SessionState


def admit(
    method: str,
    raw_params: msgspec.Raw | bytes | Any,
    *,
    supported: tuple[str, ...],
    local_capabilities: Callable[[Revision], t.ServerCapabilities],
    meta: RequestMeta | None = None,
) -> tuple[MethodSpec, ModernRequest]:
    """Run a modern request up the ladder (rungs 1, 3 and the dispatch rung).

    Returns the method's row and the request's own state, or raises the McpError
    to answer: -32602 (``_meta``), -32022 (version), -32601 (a method the modern
    table lacks — ``initialize``, ``ping``, ``logging/setLevel``... — or whose
    server capability ``local_capabilities(revision)`` does not declare). ``meta``: the
    request's ``_meta``, when a transport has read it already (rung 1 is then passed).
    """
    if meta is None:
        meta = read_request_meta(raw_params)
    revision = check_version(meta, supported)
    capabilities = local_capabilities(revision)
    state = SessionState.stateless("server", capabilities, revision.name, supported)
    state.peer_capabilities = meta.client_capabilities
    state.peer_info = meta.client_info
    key = (method, revision.name, id(capabilities))
    known = _admitted.get(key)
    if known is not None:
        return known[1], ModernRequest(meta, state)
    spec = state.check_inbound(method)
    if not spec.is_request:
        raise method_not_found(method)
    if len(_admitted) >= _ADMITTED_KEPT:
        _admitted.clear()
    _admitted[key] = (capabilities, spec)
    return spec, ModernRequest(meta, state)


#: The methods :func:`admit` let through, by method, revision and the server's
#: capabilities object (kept with the entry, so that its ``id`` names no other): every
#: request would check the same few again. Refused methods are not kept. At most
#: :data:`_ADMITTED_KEPT` entries, then it starts over.
_admitted: dict[tuple[str, str, int], tuple[t.ServerCapabilities, MethodSpec]] = {}
_ADMITTED_KEPT: Final = 256


# -- client side --


def request_meta(
    version: str,
    capabilities: t.ClientCapabilities,
    client_info: t.Implementation | None = None,
    log_level: t.LoggingLevel | None = None,
) -> dict[str, Any]:
    """The ``_meta`` keys a client puts on every modern request (what
    :func:`read_request_meta` reads back): version, capabilities, and when given its
    name and the log level it wants for this request."""
    meta: dict[str, Any] = {PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: capabilities}
    if client_info is not None:
        meta[CLIENT_INFO_KEY] = client_info
    if log_level is not None:
        meta[LOG_LEVEL_KEY] = log_level
    return meta
