"""What a transport may ask about a message without decoding it itself.

Transports move encoded messages; they never give them meaning. Yet an HTTP
transport must route: which requests a POST carries (its response stream waits
for their answers), whether it opens a session (``initialize``), which era it
belongs to, which request a reply answers, which status an error reply gets.
Each question is a function here, so that every JSON-RPC decode lives in
``protocol/`` and a transport only ever holds bytes and the answers:

- an inbound POST body: :func:`inspect_post` (legacy Streamable HTTP),
  :func:`read_modern_post` (2026-07-28), :func:`check_message` (legacy HTTP+SSE);
- the era an HTTP request speaks: :func:`is_handshake_version`;
- an outbound message of ours: :func:`response_ids`, :func:`negotiated_version`,
  :func:`outgoing_request`, :func:`error_code`.

Every function is total: malformed bytes raise :class:`~.jsonrpc.InvalidMessage`
(inbound, to be answered) or give None (outbound, which we encoded ourselves).
"""

from __future__ import annotations

from typing import Any, Final

import attrs
import msgspec
from msgspec import UNSET, UnsetType

from . import errors
from .jsonrpc import UNDECODABLE, ErrorObject, RequestId, peek
from .modern import PROTOCOL_VERSION_KEY


class _Reply(msgspec.Struct):
    id: RequestId | None = None
    method: str | None = None
    error: _ErrorCode | None = None


class _ErrorCode(msgspec.Struct):
    code: int | None = None


class _InitializeResult(msgspec.Struct, rename="camel"):
    protocol_version: str | None = None


class _InitializeReply(msgspec.Struct):
    result: _InitializeResult | None = None


_reply: Final = msgspec.json.Decoder(_Reply)
_batch_reply: Final = msgspec.json.Decoder(list[_Reply])
_initialize_reply: Final = msgspec.json.Decoder(_InitializeReply)


# -- outbound (what we encoded ourselves) ----------------------------------------------


def response_ids(payload: bytes) -> list[RequestId]:
    """The request ids a response, or a batch of them, answers (empty for anything else)."""
    try:
        if payload.lstrip()[:1] == b"[":
            items = _batch_reply.decode(payload)
        else:
            items = [_reply.decode(payload)]
    except UNDECODABLE:
        return []
    return [item.id for item in items if item.id is not None and item.method is None]


def negotiated_version(payload: bytes) -> str | None:
    """The protocol version an ``initialize`` response settles (None for an error)."""
    try:
        result = _initialize_reply.decode(payload).result
    except UNDECODABLE:
        return None
    return None if result is None else result.protocol_version


# -- client side --


#: The errors only a modern (2026-07-28) server answers with: header mismatch,
#: missing client capability, unsupported protocol version.
MODERN_ERRORS: Final = frozenset(
    {errors.HEADER_MISMATCH, errors.MISSING_CLIENT_CAPABILITY, errors.UNSUPPORTED_PROTOCOL_VERSION}
)


class _SentParams(msgspec.Struct, rename="camel"):
    """What routing needs of the params of a message we send (odd values typed Any)."""

    name: Any = None
    uri: Any = None
    task_id: Any = None
    arguments: msgspec.Raw | UnsetType = UNSET
    request_id: Any = None
    meta: Any = msgspec.field(default=None, name="_meta")


class _Sent(msgspec.Struct):
    id: RequestId | None = None
    method: str | None = None
    params: msgspec.Raw | UnsetType = UNSET


_sent: Final = msgspec.json.Decoder(_Sent)
_sent_batch: Final = msgspec.json.Decoder(list[_Sent])
_sent_params: Final = msgspec.json.Decoder(_SentParams)


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
    #: ``params.name``, ``params.uri`` and ``params.taskId``, when strings (``Mcp-Name``
    #: mirrors one).
    name: str | None = None
    uri: str | None = None
    task_id: str | None = None
    #: ``params.arguments``, still encoded.
    arguments: msgspec.Raw | None = None


def outgoing(payload: bytes) -> Outgoing:
    """What a message we send (or a batch) is: its requests, method, version, routing fields."""
    try:
        if payload.lstrip()[:1] == b"[":
            items = _sent_batch.decode(payload)
        else:
            items = [_sent.decode(payload)]
    except UNDECODABLE:
        return Outgoing([])
    request_ids = [item.id for item in items if item.method is not None and item.id is not None]
    method = items[0].method if len(items) == 1 else None
    raw = items[0].params if method is not None else UNSET
    params = None if raw is UNSET else peek(_sent_params, raw)
    if method is None or params is None:
        return Outgoing(request_ids, method)
    meta = params.meta if isinstance(params.meta, dict) else {}
    version = meta.get(PROTOCOL_VERSION_KEY)
    cancels = params.request_id if method == "notifications/cancelled" else None
    return Outgoing(
        request_ids,
        method,
        cancels=cancels if isinstance(cancels, (int, str)) else None,
        protocol_version=version if isinstance(version, str) else None,
        name=params.name if isinstance(params.name, str) else None,
        uri=params.uri if isinstance(params.uri, str) else None,
        task_id=params.task_id if isinstance(params.task_id, str) else None,
        arguments=None if params.arguments is UNSET else params.arguments,
    )


def error_in_body(body: bytes) -> errors.McpError | None:
    """The JSON-RPC error an HTTP error response carries as its body, if it carries one."""
    response = peek(_error_response, body)
    if response is None:
        return None
    error = response.error
    return errors.McpError(error.code, error.message, error.data)


def is_modern_refusal(status: int, error: errors.McpError) -> bool:
    """Whether an HTTP error carrying ``error`` can only come from a modern server.

    Besides its own error codes, a modern server answers an unknown method with
    ``404`` and -32601; a legacy server on the same URL would have served the POST
    (Streamable HTTP) or refused it without a JSON-RPC error (HTTP+SSE).
    """
    return error.code in MODERN_ERRORS or (status == 404 and error.code == errors.METHOD_NOT_FOUND)


class _ErrorResponse(msgspec.Struct):
    error: ErrorObject


_error_response: Final = msgspec.json.Decoder(_ErrorResponse)
