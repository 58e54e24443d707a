"""What the protocol engine tells its runtime: one event per thing that happened on the wire.

:meth:`~.engine.Engine.receive` turns one inbound message into at most one event
(a batch into one :class:`BatchReceived` holding an event per element). The
runtime acts on each: it serves a :class:`RequestReceived`, hands a
:class:`ResponseReceived`, :class:`ProgressReceived` or :class:`LogReceived` to the
caller waiting for it, cancels the request a :class:`CancelRequested` names, passes a
:class:`NotificationReceived` to its dispatcher, and writes a :class:`Reply` at
once. Messages the engine handles entirely (a stray response, progress for a call
nobody waits on any more) produce no event at all.

The events carry the runtime's own objects where a message refers to something in
flight: the engine keeps them in its id tables (see :class:`~.engine.Engine`), so
the runtime needs no table of its own.

Events are :class:`msgspec.Struct` s: one is made per message, and a Struct's
constructor (in C) costs a fraction of a Python ``__init__``. They are never encoded.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

from . import types as t
from .jsonrpc import Envelope, RequestId

In = TypeVar("In")
Out = TypeVar("Out")


class RequestReceived(msgspec.Struct, Generic[In]):
    """A request that may run: ``request`` is what the engine's ``open_request`` made of it."""

    request: In


class NotificationReceived(msgspec.Struct):
    """A notification for the dispatcher, its ``params`` decoded into the method's type."""

    method: str
    params: Any


class ResponseReceived(msgspec.Struct, Generic[Out]):
    """The response (a result or an error) to one of our requests; ``call`` is its handle."""

    call: Out
    response: Envelope


class ProgressReceived(msgspec.Struct, Generic[Out]):
    """``notifications/progress`` for one of our requests that asked for it."""

    call: Out
    progress: t.ProgressParams


class LogReceived(msgspec.Struct, Generic[Out]):
    """``notifications/message`` belonging to one of our requests that asked for its logs
    (see :meth:`~.engine.Engine.send_request`)."""

    call: Out
    params: t.LoggingMessageParams


class CancelRequested(msgspec.Struct, Generic[In]):
    """The peer cancelled a request of its own that is still in flight: stop it, answer nothing."""

    request: In
    reason: str | None


class Reply(msgspec.Struct):
    """An answer the engine wrote itself, to send at once: an error for a message that
    cannot run, the answer to ``ping`` or to ``initialize``. ``request_id`` is the
    request it answers (None when none could be identified).

    It carries what a transport routes on, so that nothing decodes it again: the
    ``error_code`` of an error (an HTTP status follows from it), and the ``version``
    an ``initialize`` answer settles.
    """

    payload: bytes
    request_id: RequestId | None
    error_code: int | None = None
    version: str | None = None


class BatchReceived(msgspec.Struct, Generic[In, Out]):
    """A JSON-RPC batch (2025-03-26): an event per element, in order.

    Its answer is one array: every :class:`Reply` among ``events`` and the answer of
    every :class:`RequestReceived`, joined with :meth:`~.engine.Engine.encode_batch`.
    """

    events: list[Event[In, Out]]


Event = (
    RequestReceived[In]
    | NotificationReceived
    | ResponseReceived[Out]
    | ProgressReceived[Out]
    | LogReceived[Out]
    | CancelRequested[In]
    | Reply
    | BatchReceived[In, Out]
)
