"""What a legacy Streamable HTTP session *is*, apart from the worker that runs it.

A legacy (2024-11-05 … 2025-11-25) session is a conversation: ``initialize``, then
requests that lean on what came before. What they lean on is small and changes
rarely — the client's ``initialize`` (revision, capabilities, client info), who the
caller is, its ``logging/setLevel`` level and its ``resources/subscribe``
subscriptions. :class:`SessionRecord` is exactly that; a :class:`SessionDirectory`
keeps the records of a deployment (in Redis: :mod:`mcp_actors.shared.sessions`), so
any worker can take any request of any session: it rebuilds the session from its
record (see :mod:`.replicas`), as the 2026-07-28 era serves each request from what
the request carries.

Everything here is pure: the record, the directory's interface, and which of a
POST's messages change a record (:func:`record_changes`).
"""

from __future__ import annotations

from typing import Literal, Protocol

import attrs
import msgspec
from msgspec import UNSET

from ...protocol.jsonrpc import Envelope, Message, peek
from .auth import Principal

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


def caller_of(principal: Principal | None) -> str:
    """Who a session belongs to, as the record stores it: the authenticated resource
    owner and OAuth client (what :meth:`Principal.same_caller` compares), or ``""`` for a
    server that does not authenticate."""
    if principal is None:
        return ""
    return msgspec.json.encode([principal.subject, principal.client_id]).decode()


@attrs.frozen
class SessionRecord:
    """A session's state as every worker sees it."""

    #: The client's ``initialize`` params, as it sent them (JSON).
    initialize: bytes
    #: :func:`caller_of` the principal that opened it: only that caller may use it.
    caller: str
    #: Its ``logging/setLevel`` level (None: never set).
    log_level: str | None = None
    #: The URIs it is subscribed to.
    subscriptions: frozenset[str] = frozenset()

    def belongs_to(self, principal: Principal | None) -> bool:
        """Whether a request from ``principal`` may use the session (as over one worker)."""
        return caller_of(principal) == self.caller


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


class SessionFull(Exception):
    """The deployment holds as many shared sessions as it may (``max_shared_sessions``)."""


class SessionDirectory(Protocol):
    """The records of a deployment's legacy sessions, by session id.

    Bounded: at most a configured number of records per deployment (:meth:`create`
    raises :class:`SessionFull` beyond it), and a record no request touched for the
    idle TTL is forgotten (its session then answers 404 everywhere).
    """

    async def create(self, session_id: str, record: SessionRecord) -> None:
        """Store a new session's record; raises :class:`SessionFull` when full."""

    async def find(self, session_id: str) -> SessionRecord | None:
        """The record of ``session_id`` (its idle clock restarted), or None: unknown,
        expired or ended."""

    async def change(self, session_id: str, changes: list[StateChange]) -> None:
        """Apply what a request of the session changed (a level, subscriptions)."""

    async def end(self, session_id: str) -> None:
        """Forget the session (DELETE): every worker answers 404 for it from now on."""
