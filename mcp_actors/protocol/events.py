"""What the protocol engine tells its runtime: one event per thing that happened on the wire.

:meth:`~.engine.Engine.receive` turns one inbound message into at most one event
(a batch into one :class:`BatchReceived` holding an event per element). The
runtime acts on each: it serves a :class:`RequestReceived`, hands a
:class:`ResponseReceived` or :class:`ProgressReceived` to the caller waiting for
it, cancels the request a :class:`CancelRequested` names, passes a
:class:`NotificationReceived` to its dispatcher, and writes a :class:`Reply` at
once. Messages the engine handles entirely (a stray response, progress for a call
nobody waits on any more) produce no event at all.

The events carry the runtime's own objects where a message refers to something in
flight: the engine keeps them in its id tables (see :class:`~.engine.Engine`), so
the runtime needs no table of its own.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from . import types as t
from .jsonrpc import Envelope, RequestId

In = TypeVar("In")
Out = TypeVar("Out")


class RequestReceived(Generic[In]):
    """A request that may run: ``request`` is what the engine's ``open_request`` made of it."""

    __slots__ = ("request",)

    def __init__(self, request: In) -> None:
        self.request = request


class NotificationReceived:
    """A notification for the dispatcher, its ``params`` decoded into the method's type."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Any) -> None:
        self.method = method
        self.params = params


class ResponseReceived(Generic[Out]):
    """The response (a result or an error) to one of our requests; ``call`` is its handle."""

    __slots__ = ("call", "response")

    def __init__(self, call: Out, response: Envelope) -> None:
        self.call = call
        self.response = response


class ProgressReceived(Generic[Out]):
    """``notifications/progress`` for one of our requests that asked for it."""

    __slots__ = ("call", "progress")

    def __init__(self, call: Out, progress: t.ProgressParams) -> None:
        self.call = call
        self.progress = progress


class CancelRequested(Generic[In]):
    """The peer cancelled a request of its own that is still in flight: stop it, answer nothing."""

    __slots__ = ("reason", "request")

    def __init__(self, request: In, reason: str | None) -> None:
        self.request = request
        self.reason = reason


class Reply:
    """An answer the engine wrote itself, to send at once: an error for a message that
    cannot run, the answer to ``ping`` or to ``initialize``. ``request_id`` is the
    request it answers (None when none could be identified)."""

    __slots__ = ("payload", "request_id")

    def __init__(self, payload: bytes, request_id: RequestId | None) -> None:
        self.payload = payload
        self.request_id = request_id


class BatchReceived(Generic[In, Out]):
    """A JSON-RPC batch (2025-03-26): an event per element, in order.

    Its answer is one array: every :class:`Reply` among ``events`` and the answer of
    every :class:`RequestReceived`, joined with :meth:`~.engine.Engine.encode_batch`.
    """

    __slots__ = ("events",)

    def __init__(self, events: list[Event[In, Out]]) -> None:
        self.events = events


Event = (
    RequestReceived[In]
    | NotificationReceived
    | ResponseReceived[Out]
    | ProgressReceived[Out]
    | CancelRequested[In]
    | Reply
    | BatchReceived[In, Out]
)
