"""A network server's session table: ids, the session caps, eviction and idle expiry.

Over HTTP a session outlives every request that touches it, so something must
end the sessions of clients that vanished without a DELETE, and something must
stop one client from taking every slot. The registry maps session ids to live
sessions and enforces:

- **Caps.** At most ``max_sessions`` sessions at once, and at most
  ``max_sessions_per_client`` for one client (clients are told apart by their
  peer IP address, so every client behind one proxy counts as one).
- **Eviction when full.** A new session that would exceed a cap takes the slot
  of the least recently used *idle* session in its way — that client's own for
  the per-client cap, anyone's for the global one. Idle means nothing in flight:
  no request awaiting its response, no stream open. The evicted session is
  closed; its client gets 404 on its next request and, as the specification
  requires, starts a new session.
- **Refusal.** When every session in the way is busy, the new one is refused:
  the caller answers 503 with ``Retry-After: RETRY_AFTER`` (over WebSocket,
  the handshake is refused the same way). Sessions that live exactly as long as
  a connection (legacy SSE, WebSocket) are never idle, so they are counted but
  never evicted.
- **Expiry.** :meth:`SessionRegistry.run_expiry` closes any session that has had
  neither a request nor an open stream for ``idle_timeout`` seconds — which
  cancels its in-flight requests, as a DELETE would.
- **Rest.** The same sweep offers rest to every session idle for ``rest_after``
  seconds (nothing in flight, no stream open): an idle session then gives up its
  tasks and queues until its next request, a message the server sends it, or its
  end (see :mod:`mcp_actors.runtime.session`). An idle session costs a few KiB.
"""

from __future__ import annotations

import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

import attrs
import trio

if TYPE_CHECKING:
    from ...protocol.events import Reply
    from ...protocol.jsonrpc import Message
    from ..abc import MessageStream

log = logging.getLogger("mcp_actors.http")

#: Ends a session actor (cancelling its in-flight requests); safe to call twice.
CloseSession = Callable[[], None]
#: Starts a session actor over a stream in the server's supervisor and returns the
#: function that ends it. A version is given for a stateless session, which then
#: starts operating at that version without ``initialize``.
StartSession = Callable[["MessageStream", str | None], Awaitable[CloseSession]]
#: Serves a session over a stream in the calling task, supervised by the server, and
#: returns when it has ended: the session of one stateless request, which lives no
#: longer than that request's task. The version is as for :data:`StartSession`.
ServeExchange = Callable[["MessageStream", str | None], Awaitable[None]]
#: Whether a stateless session would act on a POST of notifications of these methods
#: (False: it is accepted, 202, with no session made for it).
HeedsNotifications = Callable[[tuple[str, ...]], bool]
#: The answer to a stateless ``initialize``, by an engine of its own and no session: the
#: session would end with its POST, and the engine answers ``initialize`` itself (None:
#: it failed, and was logged).
AnswerInitialize = Callable[["Message"], "Reply | None"]


def heeds_all(methods: tuple[str, ...]) -> bool:
    """The :data:`HeedsNotifications` of a server that says nothing: every POST is served."""
    return True


#: Seconds a refused client is told to wait (``Retry-After``) before asking again.
RETRY_AFTER = 5


class Activity(Protocol):
    """What expiry and eviction look at."""

    #: When the session was last used (``trio.current_time()``).
    last_activity: float

    @property
    def busy(self) -> bool:
        """A connection is open on the session: it does not expire."""

    @property
    def evictable(self) -> bool:
        """Nothing in flight (no request awaiting a response, no stream open)."""

    def offer_rest(self) -> None:
        """The session has been idle a while: it may give up its tasks (see above)."""


@attrs.define
class ConnectionBound:
    """The activity of a session that lives exactly as long as its connection (WebSocket):
    always busy, so it never expires and is never evicted."""

    last_activity: float = 0.0
    busy: bool = True
    evictable: bool = False

    def offer_rest(self) -> None:
        """Never idle: never offered rest."""


def mint_session_id(prefix: str = "") -> str:
    """A fresh, unguessable id of visible ASCII (URL-safe base64 of 24 random bytes),
    after ``prefix`` (``HttpConfig.session_id_prefix``: which worker made it, for a
    load balancer routing a session's requests back to it)."""
    return prefix + secrets.token_urlsafe(24)


@attrs.define(eq=False, slots=True)
class SessionEntry:
    transport: Activity
    #: The client's address (the per-client cap counts by it); None if unknown.
    client: str | None
    #: Set once the session actor has started (:meth:`SessionRegistry.started`).
    close: CloseSession | None = None

    def end(self) -> None:
        """End the session actor, if it has started."""
        if self.close is not None:
            self.close()


@attrs.define(eq=False)
class SessionRegistry:
    """Live sessions by id. ``None`` limits mean unlimited."""

    max_sessions: int | None = None
    idle_timeout: float | None = None
    max_sessions_per_client: int | None = None
    #: Seconds without a request or an open stream after which a session is offered
    #: rest (None: never).
    rest_after: float | None = None
    _entries: dict[str, SessionEntry] = attrs.field(init=False, factory=dict)
    _per_client: Counter[str | None] = attrs.field(init=False, factory=Counter)
    _expired: int = attrs.field(init=False, default=0)
    _evicted: int = attrs.field(init=False, default=0)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def expired(self) -> int:
        """Sessions closed for idleness so far."""
        return self._expired

    @property
    def evicted(self) -> int:
        """Idle sessions closed to make room for new ones so far."""
        return self._evicted

    def sessions_of(self, client: str | None) -> int:
        return self._per_client[client]

    def admit(self, session_id: str, transport: Activity, client: str | None = None) -> bool:
        """Add a new session if the caps allow, evicting an idle one if that makes room.

        False: refused, nothing changed (answer 503 with ``Retry-After``). Call
        :meth:`started` once the session actor runs.
        """
        per_client = self.max_sessions_per_client
        client_full = per_client is not None and self._per_client[client] >= per_client
        if client_full and not self._evict_one(client):
            log.info("session refused: client %s has %s busy sessions", client, per_client)
            return False
        full = self.max_sessions is not None and len(self._entries) >= self.max_sessions
        if full and not self._evict_one(None, any_client=True):
            log.info("session refused: all %s sessions are busy", self.max_sessions)
            return False
        self._entries[session_id] = SessionEntry(transport, client)
        self._per_client[client] += 1
        return True

    def started(self, session_id: str, close: CloseSession) -> None:
        """The session actor of an admitted id runs; ``close`` ends it.

        If the session was closed meanwhile (the server shutting down), it is ended now.
        """
        entry = self._entries.get(session_id)
        if entry is None:
            close()
        else:
            entry.close = close

    def get(self, session_id: str) -> SessionEntry | None:
        """The live session with this id (its activity clock restarted), or None."""
        entry = self._entries.get(session_id)
        if entry is not None:
            entry.transport.last_activity = trio.current_time()
        return entry

    def discard(self, session_id: str) -> SessionEntry | None:
        """Forget a session without ending it (it ended, or its caller ends it)."""
        entry = self._entries.pop(session_id, None)
        if entry is not None:
            self._per_client[entry.client] -= 1
            if not self._per_client[entry.client]:
                del self._per_client[entry.client]
        return entry

    def close(self, session_id: str) -> bool:
        """End a session (DELETE); False if there was none."""
        entry = self.discard(session_id)
        if entry is None:
            return False
        entry.end()
        return True

    def _evict_one(self, client: str | None, *, any_client: bool = False) -> bool:
        """Close the least recently used idle session (of ``client`` unless ``any_client``)."""
        candidates = [
            (entry.transport.last_activity, session_id)
            for session_id, entry in self._entries.items()
            if (any_client or entry.client == client)
            and entry.close is not None
            and entry.transport.evictable
        ]
        if not candidates:
            return False
        _, session_id = min(candidates)
        log.info("session %s evicted to make room", session_id[:8])
        self.close(session_id)
        self._evicted += 1
        return True

    def expire(self, now: float) -> int:
        """Close every session idle since before ``now - idle_timeout``; how many were."""
        if self.idle_timeout is None:
            return 0
        cutoff = now - self.idle_timeout
        stale = [
            session_id
            for session_id, entry in self._entries.items()
            if not entry.transport.busy and entry.transport.last_activity < cutoff
        ]
        for session_id in stale:
            log.info("session %s expired after %g s idle", session_id[:8], self.idle_timeout)
            self.close(session_id)
        self._expired += len(stale)
        return len(stale)

    def offer_rest(self, now: float) -> None:
        """Offer rest to every session idle since before ``now - rest_after``."""
        if self.rest_after is None:
            return
        cutoff = now - self.rest_after
        for entry in self._entries.values():
            transport = entry.transport
            if transport.last_activity < cutoff and transport.evictable:
                transport.offer_rest()

    async def run_expiry(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Sweep for idle sessions forever: expire them (every quarter of the timeout, at
        most 30 s) and offer them rest (every half of ``rest_after``)."""
        task_status.started()
        intervals = [30.0]
        if self.idle_timeout is not None:
            intervals.append(self.idle_timeout / 4)
        if self.rest_after is not None:
            intervals.append(self.rest_after / 2)
        if len(intervals) == 1:
            return
        interval = max(min(intervals), 0.01)
        while True:
            await trio.sleep(interval)
            now = trio.current_time()
            self.expire(now)
            self.offer_rest(now)

    def close_all(self) -> None:
        for session_id in list(self._entries):
            self.close(session_id)
