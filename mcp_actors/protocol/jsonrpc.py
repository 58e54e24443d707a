"""JSON-RPC 2.0 envelopes: decode one message (or a batch) and say what it is.

Decoding is two-speed. The fast path decodes straight into :class:`Envelope`
with ``params``/``result`` left as :class:`msgspec.Raw`, so each method's
parameters are decoded later, once, into their own type. Anything the fast path
rejects goes through :func:`_diagnose`, which works out the precise JSON-RPC
error (parse error, invalid request with the request's id if it has one) for the
session to answer — bad input is answered, never fatal.

Both :func:`decode` and :func:`decode_payload` (a method's params, a tool's
arguments, a result) are *total*: whatever bytes a peer sends, the only exception
they raise is an :class:`McpError` carrying the code to answer. Bytes that are not
JSON text — a syntax error, invalid UTF-8, a lone UTF-16 surrogate escape such as
``"\\ud800"`` (it names no Unicode character), nesting deeper than the decoder's
recursion limit (about 900 levels) — are a parse error (-32700), answered with the
request's id when a lenient second look can still find it; JSON of the wrong shape
is an invalid request (-32600) or invalid params (-32602).

Outbound messages use their own small Structs (:class:`RequestMessage`, ...)
whose ``jsonrpc`` field is a plain default, so it is always written.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from .errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, McpError
from .versions import Revision

T = TypeVar("T")

RequestId = int | str

JSONRPC_VERSION: Final = "2.0"


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = None


class Envelope(msgspec.Struct, kw_only=True):
    """Any JSON-RPC message as received; exactly which kind is told by its members.

    - request: ``method`` and ``id``;  notification: ``method``, no ``id``;
    - response: ``id`` and ``result``;  error response: ``id`` (maybe null) and ``error``.
    """

    jsonrpc: str
    id: RequestId | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: ErrorObject | UnsetType = UNSET


class RequestMessage(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class NotificationMessage(msgspec.Struct):
    jsonrpc: str
    method: str
    params: Any = UNSET


class ResultMessage(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class ErrorMessage(msgspec.Struct):
    jsonrpc: str
    id: RequestId | None
    error: ErrorObject


class AnonymousErrorMessage(msgspec.Struct):
    """An error answering no identifiable request, as 2025-11-25 writes it: no ``id`` at all."""

    jsonrpc: str
    error: ErrorObject


class InvalidMessage(McpError):
    """A message that cannot be processed; ``request_id`` is the id to answer (None if unknown)."""

    def __init__(self, code: int, message: str, request_id: RequestId | None = None) -> None:
        super().__init__(code, message)
        self.request_id = request_id


class InvalidPayload(McpError):
    """A part of a received message (params, arguments, a result) that does not decode.

    ``code`` is :data:`~.errors.INVALID_PARAMS` when the JSON has the wrong shape and
    :data:`~.errors.PARSE_ERROR` when the bytes are not JSON text at all; ``detail``
    is the reason without the code's name, for callers that phrase their own message.
    """

    def __init__(self, code: int, detail: str) -> None:
        prefix = "Invalid params" if code == INVALID_PARAMS else "Parse error"
        super().__init__(code, f"{prefix}: {detail}")
        self.detail = detail


#: One element of a decoded batch: a valid envelope or the error to answer for it.
BatchItem = Envelope | InvalidMessage
#: One message as decoded: an envelope, or a batch of them.
Message = Envelope | list[BatchItem]

_envelope_decoder: Final = msgspec.json.Decoder(Envelope)
_batch_decoder: Final = msgspec.json.Decoder(list[Envelope])
_any_decoder: Final = msgspec.json.Decoder()
_encoder: Final = msgspec.json.Encoder()
_encode_message: Final = _encoder.encode

#: Everything a msgspec decoder raises for bytes it cannot take: DecodeError (and its
#: ValidationError), UnicodeDecodeError (invalid UTF-8 in a string; a ValueError),
#: ValueError (an integer past Python's digit limit), RecursionError (deep nesting).
UNDECODABLE: Final = (msgspec.DecodeError, ValueError, RecursionError)
_TOO_DEEP: Final = "arrays and objects are nested too deeply"
#: A ``\\uXXXX`` escape of a UTF-16 surrogate that is not half of a pair: a high one
#: (d800-dbff) not followed by a low one (dc00-dfff), or a low one not after a high one.
_LONE_SURROGATE: Final = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def decode(data: bytes) -> Message:
    """Decode one wire message: an :class:`Envelope`, or a batch (a list).

    Raises :class:`InvalidMessage` with the JSON-RPC code to answer when the bytes
    are not JSON (-32700) or not a JSON-RPC message (-32600).
    """
    try:
        first = data[:1]
        if first == b"[" or (first.isspace() and data.lstrip()[:1] == b"["):
            return _check_batch(_batch_decoder.decode(data))
        return _checked(_envelope_decoder.decode(data))
    except UNDECODABLE:
        return _diagnose(data)


def decode_payload(decoder: msgspec.json.Decoder[T], data: bytes | msgspec.Raw) -> T:
    """Decode one part of a received message (``params``, tool arguments, a ``result``).

    Total, like :func:`decode`: raises :class:`InvalidPayload` (-32602 for the wrong
    shape, -32700 for bytes that are not JSON text) and nothing else. A hot path can
    inline it as ``try: decoder.decode(data) except UNDECODABLE as e: raise
    invalid_payload(e)``, which costs nothing until something fails.
    """
    try:
        return decoder.decode(data)
    except UNDECODABLE as error:
        raise invalid_payload(error) from None


def invalid_payload(error: Exception) -> InvalidPayload:
    """The :class:`InvalidPayload` for what a decoder raised (one of :data:`UNDECODABLE`)."""
    if isinstance(error, msgspec.ValidationError):
        return InvalidPayload(INVALID_PARAMS, str(error))
    if isinstance(error, UnicodeDecodeError):
        return InvalidPayload(PARSE_ERROR, f"a string is not valid UTF-8 ({error.reason})")
    if isinstance(error, RecursionError):
        return InvalidPayload(PARSE_ERROR, _TOO_DEEP)
    if isinstance(error, ValueError):  # an integer with more digits than Python converts
        return InvalidPayload(INVALID_PARAMS, str(error))
    return InvalidPayload(PARSE_ERROR, str(error))  # a DecodeError: malformed JSON


def peek(decoder: msgspec.json.Decoder[T], data: bytes | msgspec.Raw) -> T | None:
    """:func:`decode_payload` for a look that must not fail: None for anything undecodable."""
    try:
        return decoder.decode(data)
    except UNDECODABLE:
        return None


def encode_cancellation(request_id: RequestId, reason: str) -> bytes:
    """``notifications/cancelled`` for ``request_id``: the one place it is encoded, for
    the engine (a caller gave up) and for HTTP (a client closed a request's stream)."""
    params = {"requestId": request_id, "reason": reason}
    return _encode_message(NotificationMessage(JSONRPC_VERSION, "notifications/cancelled", params))


def encode_error(request_id: RequestId | None, error: McpError, revision: Revision) -> bytes:
    """The error response for ``request_id`` as ``revision`` writes it: the one place
    an error is encoded, for every transport (an HTTP error body too).

    With no identifiable request (``request_id`` None), 2025-11-25 and later omit
    ``id``; older revisions write JSON-RPC 2.0's ``"id": null``.
    """
    body = ErrorObject(error.code, error.message, UNSET if error.data is None else error.data)
    if request_id is None and revision.anonymous_error_omits_id:
        return _encode_message(AnonymousErrorMessage(JSONRPC_VERSION, body))
    return _encode_message(ErrorMessage(JSONRPC_VERSION, request_id, body))


def encode_received(message: bytes | Message) -> bytes:
    """A received message's bytes: as they came, or, for one a transport decoded to route
    it, encoded again. For what records the wire (a test's recorder, a bench); the
    runtime never needs it. An invalid element of a batch is written as ``null``."""
    if isinstance(message, bytes):
        return message
    if isinstance(message, list):
        return (
            b"["
            + b",".join(
                b"null" if isinstance(item, InvalidMessage) else _encode_message(item)
                for item in message
            )
            + b"]"
        )
    return _encode_message(message)


def _checked(envelope: Envelope) -> Envelope:
    if envelope.jsonrpc != JSONRPC_VERSION:
        raise InvalidMessage(
            INVALID_REQUEST,
            f'"jsonrpc" must be "2.0", got {envelope.jsonrpc!r}',
            _usable_id(envelope.id),
        )
    if envelope.method is UNSET:
        has_result = envelope.result is not UNSET
        has_error = envelope.error is not UNSET
        if envelope.id is UNSET or has_result == has_error:
            raise InvalidMessage(
                INVALID_REQUEST,
                "a message without a method must be a response: an id and exactly one of"
                " result or error",
                _usable_id(envelope.id),
            )
    elif envelope.id is None:
        raise InvalidMessage(INVALID_REQUEST, "a request id must be a string or an integer")
    return envelope


def _check_batch(envelopes: list[Envelope]) -> list[BatchItem]:
    if not envelopes:
        raise InvalidMessage(INVALID_REQUEST, "an empty batch is not a valid request")
    items: list[BatchItem] = []
    for envelope in envelopes:
        try:
            items.append(_checked(envelope))
        except InvalidMessage as error:
            items.append(error)
    return items


def _usable_id(value: object) -> RequestId | None:
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _diagnose(data: bytes) -> Message:
    """Slow path: find the exact reason a message failed the fast decode."""
    try:
        value = _any_decoder.decode(data)
    except RecursionError:
        raise InvalidMessage(PARSE_ERROR, f"Parse error: {_TOO_DEEP}") from None
    except UNDECODABLE as error:
        raise _unparsable(data, error) from None
    if isinstance(value, list):
        if not value:
            raise InvalidMessage(INVALID_REQUEST, "an empty batch is not a valid request")
        return [_diagnose_one(element) for element in value]
    item = _diagnose_one(value)
    if isinstance(item, InvalidMessage):
        raise item
    return item


def _diagnose_one(value: object) -> BatchItem:
    if not isinstance(value, dict):
        return InvalidMessage(
            INVALID_REQUEST, f"a JSON-RPC message must be an object, got {type(value).__name__}"
        )
    request_id = _usable_id(value.get("id"))
    if "jsonrpc" not in value:
        return InvalidMessage(INVALID_REQUEST, 'missing "jsonrpc": "2.0"', request_id)
    try:
        return _checked(_envelope_decoder.decode(_encoder.encode(value)))
    except InvalidMessage as error:
        return error
    except UNDECODABLE as error:
        return InvalidMessage(INVALID_REQUEST, f"Invalid request: {error}", request_id)


def _unparsable(data: bytes, error: Exception) -> InvalidMessage:
    """The parse error for bytes the decoder refused: the true reason, and the request's
    id if a lenient parser (one that takes invalid UTF-8 and lone surrogates) finds it."""
    try:
        data.decode()
    except UnicodeDecodeError as invalid:
        reason = f"invalid UTF-8 at byte {invalid.start}"
    else:
        surrogate = _LONE_SURROGATE.search(data)
        if surrogate is not None:
            escape = surrogate.group().decode()
            reason = (
                f"a lone UTF-16 surrogate {escape} at byte {surrogate.start()}"
                " (it is not a Unicode character)"
            )
        else:
            reason = str(error)
    return InvalidMessage(PARSE_ERROR, f"Parse error: {reason}", _lenient_id(data))


def _lenient_id(data: bytes) -> RequestId | None:
    """The ``id`` of a message that is JSON but for invalid UTF-8 or lone surrogates."""
    try:
        value = json.loads(data.decode(errors="surrogateescape"), parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    request_id = _usable_id(value.get("id")) if isinstance(value, dict) else None
    if isinstance(request_id, str) and not _is_unicode(request_id):
        return None  # the id itself is broken: it cannot be echoed
    return request_id


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_unicode(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
