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

from collections.abc import Sequence
from typing import Any, Final

import attrs
import msgspec
from msgspec import UNSET, UnsetType

from . import errors
from .jsonrpc import UNDECODABLE, Envelope, ErrorObject, InvalidMessage, RequestId, decode, peek
from .modern import PROTOCOL_VERSION_KEY, is_modern_request
from .versions import REVISIONS


class _CancelledParams(msgspec.Struct, rename="camel"):
    request_id: RequestId | None = None


class _RoutedParams(msgspec.Struct):
    """The parameters a modern HTTP request mirrors in headers (arguments left encoded)."""

    meta: Any = msgspec.field(default=None, name="_meta")
    name: Any = None
    uri: Any = None
    task_id: Any = msgspec.field(default=None, name="taskId")
    arguments: msgspec.Raw | UnsetType = UNSET


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


_cancelled_params: Final = msgspec.json.Decoder(_CancelledParams)
_routed_params: Final = msgspec.json.Decoder(_RoutedParams)
_any: Final = msgspec.json.Decoder()
_reply: Final = msgspec.json.Decoder(_Reply)
_batch_reply: Final = msgspec.json.Decoder(list[_Reply])
_initialize_reply: Final = msgspec.json.Decoder(_InitializeReply)


# -- inbound ---------------------------------------------------------------------------


@attrs.frozen
class PostBody:
    """What a legacy Streamable HTTP endpoint needs to know about one POST body."""

    #: The body is a JSON-RPC batch.
    batch: bool
    #: The ids of the requests it carries (their answers make its reply).
    request_ids: tuple[RequestId, ...]
    #: The requests its ``notifications/cancelled`` cancel.
    cancelled: tuple[RequestId, ...]
    #: It is one ``initialize`` request (which opens a session).
    initialize: bool
    #: It is one request whose ``_meta`` carries the 2026-07-28 per-request fields.
    modern: bool


def inspect_post(body: bytes) -> PostBody:
    """Classify a POST body; raises :class:`InvalidMessage` for anything malformed
    (duplicate request ids in a batch included)."""
    parsed = decode(body)
    items: Sequence[Envelope | InvalidMessage] = parsed if isinstance(parsed, list) else [parsed]
    request_ids: list[RequestId] = []
    cancelled: list[RequestId] = []
    methods: list[str] = []
    for item in items:
        if isinstance(item, InvalidMessage):
            raise item
        method = item.method
        if method is UNSET:
            continue
        if item.id is UNSET or item.id is None:
            if method == "notifications/cancelled" and item.params is not UNSET:
                params = peek(_cancelled_params, item.params)
                if params is not None and params.request_id is not None:
                    cancelled.append(params.request_id)
            continue
        request_ids.append(item.id)
        methods.append(method)
    if len(set(request_ids)) != len(request_ids):
        raise InvalidMessage(errors.INVALID_REQUEST, "Invalid request: duplicate request ids")
    single = not isinstance(parsed, list)
    modern = single and len(request_ids) == 1 and _carries_modern_meta(items[0])
    return PostBody(
        not single,
        tuple(request_ids),
        tuple(cancelled),
        single and methods == ["initialize"],
        modern,
    )


def _carries_modern_meta(envelope: Envelope | InvalidMessage) -> bool:
    return not isinstance(envelope, InvalidMessage) and is_modern_request(envelope.params)


def check_message(body: bytes) -> None:
    """Raise :class:`InvalidMessage` unless ``body`` is a JSON-RPC message or batch."""
    decode(body)


def is_handshake_version(version: str) -> bool:
    """Whether ``version`` names a revision opened by ``initialize`` (2024-11-05 …
    2025-11-25). Any other value — 2026-07-28, or one we have never heard of — asks
    for the per-request era, whose ladder then accepts it or says which versions it
    serves."""
    revision = REVISIONS.get(version)
    return revision is not None and revision.handshake


@attrs.frozen
class ModernPost:
    """One JSON-RPC request or notification POSTed in the 2026-07-28 era."""

    #: None for a notification.
    request_id: RequestId | None
    method: str
    #: ``params`` as sent (``UNSET``: none), for the session to decode.
    raw_params: msgspec.Raw | UnsetType
    #: ``params._meta`` decoded (None if absent or not an object).
    meta: dict[str, Any] | None
    #: The parameters the routing headers mirror: ``{"name": …}`` or ``{"uri": …}``, or None
    #: when ``params`` is not an object.
    routed: dict[str, Any] | None
    _arguments: msgspec.Raw | UnsetType = UNSET

    def arguments(self) -> Any:
        """``params.arguments`` decoded (None if absent or not JSON): decoded only when asked,
        for a tool whose input schema mirrors arguments into headers."""
        if self._arguments is UNSET:
            return None
        try:
            return _any.decode(self._arguments)
        except UNDECODABLE:
            return None


def read_modern_post(body: bytes) -> ModernPost:
    """Read a modern-era POST body: one request or one notification, nothing else.

    Raises :class:`InvalidMessage`: -32700 for bytes that are not JSON, -32600 for
    a batch, a response, or a malformed envelope (with the request's id when
    there is one to echo).
    """
    parsed = decode(body)
    if isinstance(parsed, list):
        raise InvalidMessage(
            errors.INVALID_REQUEST,
            "Invalid request: the body must be one JSON-RPC request or notification, not a batch",
        )
    method = parsed.method
    if method is UNSET:
        raise InvalidMessage(
            errors.INVALID_REQUEST,
            "Invalid request: a client must not POST a response in this protocol revision",
        )
    request_id = None if parsed.id is UNSET else parsed.id
    raw_params = parsed.params
    if raw_params is UNSET:
        return ModernPost(request_id, method, raw_params, None, None)
    try:
        routed = _routed_params.decode(raw_params)
    except UNDECODABLE:  # params is not an object: rung 1 reports the missing _meta
        return ModernPost(request_id, method, raw_params, None, None)
    meta = routed.meta if isinstance(routed.meta, dict) else None
    return ModernPost(
        request_id,
        method,
        raw_params,
        meta,
        {"name": routed.name, "uri": routed.uri, "taskId": routed.task_id},
        routed.arguments,
    )


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


def outgoing_request(payload: bytes) -> tuple[RequestId, str] | None:
    """The id and method of a request we send (None for a response or notification)."""
    try:
        reply = _reply.decode(payload)
    except UNDECODABLE:
        return None
    if reply.method is None or reply.id is None:
        return None
    return reply.id, reply.method


def error_code(payload: bytes) -> int | None:
    """The code of an error response (None for a result or anything else).

    What we encode never escapes a key, so a payload without the bytes ``"error"`` has
    no ``error`` member: most answers are told apart without being decoded.
    """
    if b'"error"' not in payload:
        return None
    try:
        reply = _reply.decode(payload)
    except UNDECODABLE:
        return None
    return None if reply.error is None else reply.error.code


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
