"""The one decode of a received message, and the facts a transport routes on.

An HTTP transport must route a POST before its session sees it: which requests it
carries (the reply waits for their answers), whether it opens a session
(``initialize``), which era it speaks, which requests it cancels. Those facts come
from the same decode that the engine then works on: :func:`read_post` (legacy
Streamable HTTP), :func:`read_modern_post` (2026-07-28) and :func:`read_message`
(legacy HTTP+SSE) decode a body once, with :func:`~.jsonrpc.decode`, and return the
decoded message with the facts. The transport hands the *decoded* message to its
session, whose engine takes it as it is
(:meth:`~.engine.Engine.receive_message`): each message is decoded exactly once, as
over stdio, where the engine decodes the bytes itself (:meth:`~.engine.Engine.receive`).
``params`` stay :class:`msgspec.Raw` for the engine's typed decode, the second
stage of the same decode.

Likewise a transport never decodes what the engine encoded: the facts of an answer
(the request it closes, its error code, the version an ``initialize`` settled)
travel with it (see :class:`~.events.Reply` and ``transports.abc.Outgoing``).

Malformed bodies raise :class:`~.jsonrpc.InvalidMessage`, for the transport to
answer (HTTP 400 with the JSON-RPC error).
"""

from __future__ import annotations

from typing import Any, Final

import attrs
import msgspec
from msgspec import UNSET, UnsetType

from . import errors
from .jsonrpc import (
    JSONRPC_VERSION,
    UNDECODABLE,
    Envelope,
    ErrorObject,
    InvalidMessage,
    Message,
    RequestId,
    decode,
    peek,
)
from .modern import is_modern_request
from .types import ProgressToken


class _CancelledParams(msgspec.Struct, rename="camel"):
    request_id: RequestId | None = None


class _RoutedParams(msgspec.Struct):
    """The parameters a modern HTTP request mirrors in headers (arguments left encoded)."""

    meta: Any = msgspec.field(default=None, name="_meta")
    name: Any = None
    uri: Any = None
    task_id: Any = msgspec.field(default=None, name="taskId")
    arguments: msgspec.Raw | UnsetType = UNSET


_cancelled_params: Final = msgspec.json.Decoder(_CancelledParams)
_routed_params: Final = msgspec.json.Decoder(_RoutedParams)
_any: Final = msgspec.json.Decoder()


@attrs.define
class Post:
    """One legacy Streamable HTTP POST body, decoded, and what routing needs of it."""

    #: The message (or batch) as decoded, for the session's engine (see :meth:`take_message`).
    message: Message | None
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
    #: The methods of the notifications it carries.
    notifications: tuple[str, ...]

    def take_message(self) -> Message:
        """The message, forgotten here: once the session has it, a POST waiting on a long
        reply (or a client that does not read it) must not keep it alive."""
        message, self.message = self.message, None
        assert message is not None, "a POST's message is taken once"
        return message


def read_post(body: bytes) -> Post:
    """Decode a legacy POST body; raises :class:`InvalidMessage` for anything malformed
    (duplicate request ids in a batch included)."""
    message = decode(body)
    items = message if isinstance(message, list) else [message]
    request_ids: list[RequestId] = []
    cancelled: list[RequestId] = []
    methods: list[str] = []
    notifications: list[str] = []
    for item in items:
        if isinstance(item, InvalidMessage):
            raise item
        method = item.method
        if method is UNSET:
            continue
        if item.id is UNSET or item.id is None:
            notifications.append(method)
            if method == "notifications/cancelled" and item.params is not UNSET:
                params = peek(_cancelled_params, item.params)
                if params is not None and params.request_id is not None:
                    cancelled.append(params.request_id)
            continue
        request_ids.append(item.id)
        methods.append(method)
    if len(set(request_ids)) != len(request_ids):
        raise InvalidMessage(errors.INVALID_REQUEST, "Invalid request: duplicate request ids")
    single = not isinstance(message, list)
    modern = (
        not isinstance(message, list)
        and len(request_ids) == 1
        and is_modern_request(message.params)
    )
    return Post(
        message,
        not single,
        tuple(request_ids),
        tuple(cancelled),
        single and methods == ["initialize"],
        modern,
        tuple(notifications),
    )


def read_message(body: bytes) -> Message:
    """Decode one message or batch (legacy HTTP+SSE); raises :class:`InvalidMessage`."""
    return decode(body)


class ModernPost(msgspec.Struct, frozen=True):
    """One JSON-RPC request or notification POSTed in the 2026-07-28 era, decoded (a
    Struct: one is made per POST, and a Struct is made in C)."""

    #: The message as decoded, for the session's engine.
    envelope: Envelope
    #: None for a notification.
    request_id: RequestId | None
    method: str
    #: ``params._meta`` decoded (None if absent or not an object).
    meta: dict[str, Any] | None
    #: The parameters the routing headers mirror: ``{"name": …}`` or ``{"uri": …}``, or None
    #: when ``params`` is not an object.
    routed: dict[str, Any] | None
    _arguments: msgspec.Raw | UnsetType = UNSET

    @property
    def raw_params(self) -> msgspec.Raw | UnsetType:
        """``params`` as sent (``UNSET``: none)."""
        return self.envelope.params

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
    """Decode a modern-era POST body: one request or one notification, nothing else.

    Raises :class:`InvalidMessage`: -32700 for bytes that are not JSON, -32600 for
    a batch, a response, or a malformed envelope (with the request's id when
    there is one to echo).
    """
    return modern_post(decode(body))


def modern_post(envelope: Message) -> ModernPost:
    """:func:`read_modern_post` for a body decoded already (by :func:`read_post`, which
    found the 2026-07-28 ``_meta`` in it): the same checks, no second decode."""
    if isinstance(envelope, list):
        raise InvalidMessage(
            errors.INVALID_REQUEST,
            "Invalid request: the body must be one JSON-RPC request or notification, not a batch",
        )
    method = envelope.method
    if method is UNSET:
        raise InvalidMessage(
            errors.INVALID_REQUEST,
            "Invalid request: a client must not POST a response in this protocol revision",
        )
    request_id = None if envelope.id is UNSET else envelope.id
    raw_params = envelope.params
    if raw_params is UNSET:
        return ModernPost(envelope, request_id, method, None, None)
    try:
        routed = _routed_params.decode(raw_params)
    except UNDECODABLE:  # params is not an object: rung 1 reports the missing _meta
        return ModernPost(envelope, request_id, method, None, None)
    meta = routed.meta if isinstance(routed.meta, dict) else None
    return ModernPost(
        envelope,
        request_id,
        method,
        meta,
        {"name": routed.name, "uri": routed.uri, "taskId": routed.task_id},
        routed.arguments,
    )


# -- a client's side --------------------------------------------------------------------


class _InitializeResult(msgspec.Struct, rename="camel"):
    protocol_version: str | None = None


class _ErrorResponse(msgspec.Struct):
    error: ErrorObject


_initialize_result: Final = msgspec.json.Decoder(_InitializeResult)
_error_response: Final = msgspec.json.Decoder(_ErrorResponse)


@attrs.frozen
class Answer:
    """A message an HTTP client got on one of its requests' replies, decoded once."""

    #: The message as decoded, for the session's engine; the bytes as they came if they
    #: do not decode (the engine then says what is wrong with them).
    message: bytes | Message
    #: The ids of the requests its responses answer.
    answers: tuple[RequestId, ...]

    def negotiated_version(self) -> str | None:
        """The protocol version an ``initialize`` result in it settles (None: none)."""
        message = self.message
        if isinstance(message, (bytes, list)) or message.result is UNSET:
            return None
        result = peek(_initialize_result, message.result)
        return None if result is None else result.protocol_version


def read_answer(data: bytes) -> Answer:
    """Decode a message a client received on a request's reply (see :class:`Answer`)."""
    try:
        message = decode(data)
    except InvalidMessage:
        return Answer(data, ())
    items = message if isinstance(message, list) else (message,)
    answers = tuple(
        item.id
        for item in items
        if not isinstance(item, InvalidMessage)
        and item.method is UNSET
        and isinstance(item.id, (int, str))
    )
    return Answer(message, answers)


def error_in_body(body: bytes) -> errors.McpError | None:
    """The JSON-RPC error an HTTP error response carries as its body, if it carries one."""
    response = peek(_error_response, body)
    if response is None:
        return None
    error = response.error
    return errors.McpError(error.code, error.message, error.data)


def refusal_in_peers_stead(request_id: RequestId, method: str, reason: str) -> Envelope:
    """The error response to our request ``request_id``, as the peer would send it, when
    the transport knows no answer can come (a stateless HTTP exchange has no back
    channel): handed to the session as received, already decoded."""
    message = f"{method}: {reason}"
    error = ErrorObject(errors.METHOD_NOT_FOUND, message)
    return Envelope(jsonrpc=JSONRPC_VERSION, id=request_id, error=error)


def progress_token(params: Any) -> ProgressToken | None:
    """The ``_meta.progressToken`` of a request's decoded params, if it has a usable one."""
    meta = getattr(params, "meta", UNSET)
    if meta is UNSET or meta is None:
        return None
    token = meta.get("progressToken")
    if isinstance(token, (int, str)) and not isinstance(token, bool):
        return token
    return None
