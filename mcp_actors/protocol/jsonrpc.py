"""JSON-RPC 2.0 envelopes: decode one message (or a batch) and say what it is.

Decoding is two-speed. The fast path decodes straight into :class:`Envelope`
with ``params``/``result`` left as :class:`msgspec.Raw`, so each method's
parameters are decoded later, once, into their own type. Anything the fast path
rejects goes through :func:`_diagnose`, which works out the precise JSON-RPC
error (parse error, invalid request with the request's id if it has one) for the
session to answer — bad input is answered, never fatal.

Outbound messages use their own small Structs (:class:`RequestMessage`, ...)
whose ``jsonrpc`` field is a plain default, so it is always written.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from .errors import INVALID_REQUEST, PARSE_ERROR, McpError

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


#: One element of a decoded batch: a valid envelope or the error to answer for it.
BatchItem = Envelope | InvalidMessage

_envelope_decoder: Final = msgspec.json.Decoder(Envelope)
_batch_decoder: Final = msgspec.json.Decoder(list[Envelope])
_any_decoder: Final = msgspec.json.Decoder()
_encoder: Final = msgspec.json.Encoder()


def decode(data: bytes) -> Envelope | list[BatchItem]:
    """Decode one wire message: an :class:`Envelope`, or a batch (a list).

    Raises :class:`InvalidMessage` with the JSON-RPC code to answer when the bytes
    are not JSON (-32700) or not a JSON-RPC message (-32600).
    """
    try:
        first = data[:1]
        if first == b"[" or (first.isspace() and data.lstrip()[:1] == b"["):
            return _check_batch(_batch_decoder.decode(data))
        return _checked(_envelope_decoder.decode(data))
    except msgspec.DecodeError:
        return _diagnose(data)


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


def _diagnose(data: bytes) -> Envelope | list[BatchItem]:
    """Slow path: find the exact reason a message failed the fast decode."""
    try:
        value = _any_decoder.decode(data)
    except msgspec.DecodeError as error:
        raise InvalidMessage(PARSE_ERROR, f"Parse error: {error}") from None
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
    except msgspec.ValidationError as error:
        return InvalidMessage(INVALID_REQUEST, f"Invalid request: {error}", request_id)
