"""Which messages of a legacy session change what the session *is*, and the messages that
tell a session so: the pure part of serving one session on several workers.

A legacy session's lasting state is the client's ``initialize``, its
``logging/setLevel`` level and its ``resources/(un)subscribe`` subscriptions
(:func:`record_changes` finds them in a POST as decoded by :mod:`.received`). A worker
that did not see them brings its own actor of the session up to date by *replaying*
them: :func:`replayed_request` encodes such a request. And some messages must reach
every worker's actor of a session (:func:`for_every_actor`), an answer the one that
asked (:func:`answered_ids`). See :mod:`mcp_actors.transports.http.any_worker`.
"""

from __future__ import annotations

from typing import Literal

import attrs
import msgspec
from msgspec import UNSET

from .jsonrpc import Envelope, Message, RequestId, peek

#: The methods whose effect outlives their request: the record keeps it.
LOG_LEVEL = "logging/setLevel"
SUBSCRIBE = "resources/subscribe"
UNSUBSCRIBE = "resources/unsubscribe"


class _LevelParams(msgspec.Struct):
    level: str


class _UriParams(msgspec.Struct):
    uri: str


_level_params = msgspec.json.Decoder(_LevelParams)
_uri_params = msgspec.json.Decoder(_UriParams)

#: The client's ``notifications/initialized``, as a replay delivers it.
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def caller_key(subject: str | None, client_id: str | None) -> str:
    """Who a session belongs to, as a record stores it: its resource owner and OAuth
    client (what an access token names)."""
    return msgspec.json.encode([subject, client_id]).decode()


def replayed_request(request_id: str, method: str, params: bytes | dict[str, str]) -> bytes:
    """A request a worker replays into its actor of a session: ``params`` as JSON, or
    the JSON to send as they are (a recorded ``initialize``'s)."""
    encoded = params if isinstance(params, bytes) else msgspec.json.encode(params)
    head = msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "method": method})
    return head[:-1] + b',"params":' + encoded + b"}"


@attrs.frozen
class StateChange:
    """One message of a POST that changes its session's record."""

    kind: Literal["level", "subscribe", "unsubscribe"]
    #: The level, or the URI.
    value: str


def record_changes(message: Message | None) -> list[StateChange]:
    """The record changes ``message`` (a POST's message or batch) asks for, in order.

    A malformed one is not a change: the session's own answer tells the client why.
    """
    items = message if isinstance(message, list) else [message]
    changes: list[StateChange] = []
    for item in items:
        if not isinstance(item, Envelope) or item.id is UNSET or item.params is UNSET:
            continue
        if item.method == LOG_LEVEL:
            level = peek(_level_params, item.params)
            if level is not None:
                changes.append(StateChange("level", level.level))
        elif item.method in (SUBSCRIBE, UNSUBSCRIBE):
            uri = peek(_uri_params, item.params)
            if uri is not None:
                kind: Literal["subscribe", "unsubscribe"] = (
                    "subscribe" if item.method == SUBSCRIBE else "unsubscribe"
                )
                changes.append(StateChange(kind, uri.uri))
    return changes


def initialize_params(message: Message | None) -> bytes | None:
    """The params of the ``initialize`` request ``message`` is (None: it is not one)."""
    if (
        isinstance(message, Envelope)
        and message.method == "initialize"
        and message.params is not UNSET
    ):
        return bytes(message.params)
    return None


def for_every_actor(message: Message | None) -> bool:
    """Whether every worker's actor of the session must get ``message``: it cancels a
    request (running on one of them) or says the client is initialized (the actor of
    the worker that answered ``initialize`` waits for it, wherever it was POSTed)."""
    items = message if isinstance(message, list) else [message]
    return any(
        isinstance(item, Envelope) and item.id is UNSET and item.method in _FOR_EVERY_ACTOR
        for item in items
    )


_FOR_EVERY_ACTOR = frozenset({"notifications/cancelled", "notifications/initialized"})


def answered_ids(message: Message | None) -> list[RequestId]:
    """The ids ``message`` answers: its responses' (a client's answers to our requests)."""
    items = message if isinstance(message, list) else [message]
    return [
        item.id
        for item in items
        if isinstance(item, Envelope)
        and item.method is UNSET
        and item.id is not UNSET
        and item.id is not None
    ]
