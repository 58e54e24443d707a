"""What a transport may need to know about a message, without decoding it itself.

Transports move encoded messages; the few facts they route on (which request ids a
reply answers, what an outgoing message is, which protocol version it speaks) are
read here, by partial decodes that skip everything else (``msgspec`` does not
build what a Struct does not name). Every function is total: bytes that are not a
JSON-RPC message give an empty answer, never an exception.
"""

from __future__ import annotations

from typing import Any, Final

import attrs
import msgspec

from .errors import (
    HEADER_MISMATCH,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from .jsonrpc import ErrorObject, RequestId, peek
from .modern import PROTOCOL_VERSION_KEY

# -- client side --

_NULL: Final = msgspec.Raw(b"null")


# Fields are typed Any where a peer's odd value must not spoil the whole look.
class _Params(msgspec.Struct, rename="camel"):
    name: Any = None
    uri: Any = None
    arguments: msgspec.Raw = _NULL
    request_id: Any = None
    meta: Any = msgspec.field(default=None, name="_meta")


class _Item(msgspec.Struct):
    id: RequestId | None = None
    method: str | None = None
    params: msgspec.Raw = _NULL


class _InitializeResult(msgspec.Struct, rename="camel"):
    protocol_version: str | None = None


class _InitializeResponse(msgspec.Struct):
    result: _InitializeResult | None = None


class _ErrorResponse(msgspec.Struct):
    error: ErrorObject


_one: Final = msgspec.json.Decoder(_Item)
_params: Final = msgspec.json.Decoder(_Params)
_many: Final = msgspec.json.Decoder(list[_Item])
_initialize_response: Final = msgspec.json.Decoder(_InitializeResponse)
_error_response: Final = msgspec.json.Decoder(_ErrorResponse)


def _items(data: bytes) -> list[_Item]:
    if data.lstrip()[:1] == b"[":
        return peek(_many, data) or []
    item = peek(_one, data)
    return [] if item is None else [item]


@attrs.frozen
class Outgoing:
    """What a message a client sends is, as far as an HTTP transport routes on it."""

    #: The ids of the requests it carries (several for a batch).
    request_ids: list[RequestId]
    #: The method of a single (non-batch) message.
    method: str | None = None
    #: For ``notifications/cancelled``: the request it cancels.
    cancels: RequestId | None = None
    #: The modern protocol version its ``params._meta`` declares (None: legacy).
    protocol_version: str | None = None
    #: What ``Mcp-Name`` mirrors: ``params.name`` or ``params.uri`` (by method).
    name: str | None = None
    #: ``params.arguments`` of a ``tools/call``, still encoded.
    arguments: msgspec.Raw | None = None


#: The params field ``Mcp-Name`` mirrors, by method.
_NAMED_BY: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def outgoing(data: bytes) -> Outgoing:
    """What an outgoing message (or batch) is: its requests, method, version, routing name."""
    items = _items(data)
    request_ids = [item.id for item in items if item.method is not None and item.id is not None]
    if len(items) != 1 or items[0].method is None:
        return Outgoing(request_ids)
    method = items[0].method
    params = peek(_params, items[0].params)
    if params is None:
        return Outgoing(request_ids, method)
    meta = params.meta if isinstance(params.meta, dict) else {}
    version = meta.get(PROTOCOL_VERSION_KEY)
    field = _NAMED_BY.get(method)
    name = getattr(params, field) if field is not None else None
    cancels = params.request_id if method == "notifications/cancelled" else None
    return Outgoing(
        request_ids,
        method,
        cancels=cancels if isinstance(cancels, (int, str)) else None,
        protocol_version=version if isinstance(version, str) else None,
        name=name if isinstance(name, str) else None,
        arguments=params.arguments if method == "tools/call" else None,
    )


def response_ids(data: bytes) -> list[RequestId]:
    """The request ids a received message (or batch) answers."""
    return [item.id for item in _items(data) if item.method is None and item.id is not None]


def negotiated_version(data: bytes) -> str | None:
    """``result.protocolVersion`` of an initialize response, if ``data`` is one."""
    response = peek(_initialize_response, data)
    result = None if response is None else response.result
    return None if result is None else result.protocol_version


#: The errors only a modern (2026-07-28) server answers with: header mismatch,
#: missing client capability, unsupported protocol version.
MODERN_ERRORS: Final = frozenset(
    {HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)


def is_modern_refusal(status: int, error: McpError) -> bool:
    """Whether an HTTP error carrying ``error`` can only come from a modern server.

    Besides its own error codes, a modern server answers an unknown method with
    ``404`` and -32601; a legacy server on the same URL would have served the POST
    (Streamable HTTP) or refused it without a JSON-RPC error (HTTP+SSE).
    """
    return error.code in MODERN_ERRORS or (status == 404 and error.code == METHOD_NOT_FOUND)


def error_in_body(body: bytes) -> McpError | None:
    """The JSON-RPC error an HTTP error response carries as its body, if it carries one."""
    response = peek(_error_response, body)
    if response is None:
        return None
    error = response.error
    return McpError(error.code, error.message, error.data)
