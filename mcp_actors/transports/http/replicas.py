"""Local actors of shared sessions: each worker runs its own actor of a session.

With a :class:`~.directory.SessionDirectory` (workers sharing Redis, see
:mod:`.any_worker`), a legacy
session is not bound to the worker that answered its ``initialize``. Whichever
worker a request lands on serves it with a *local actor* of the session — a session
actor like any other, started the first time a request of that session reaches
this worker and brought to the state the session's record describes by the very
messages that made that state: the client's recorded ``initialize`` and
``notifications/initialized``, then ``logging/setLevel`` and ``resources/subscribe``
for what the record holds. These *replayed* requests carry ids of their own
(:data:`REPLAY_ID` and a number) and their answers go to a JSON response stream
nobody reads: the client never sees them, and the server's handlers need no
special case — a local actor is a session that was told what the client said.

Every request of a shared session reads its record first (one Redis round trip,
which also restarts its idle clock): a record that is gone (DELETE on another
worker, or expired) closes the local actor and the request gets 404; a record
that changed since this actor last looked (a level or a subscription set through
another worker) is replayed into it before the request is delivered (and the
worker that changed it tells the others at once, see :mod:`.any_worker`).

Concurrent first requests of one session on one worker restore it once: the
others wait for that restoration to finish (:meth:`Replicas.local_session`).

What a local actor keeps is per worker: a request running here, the response
streams of the POSTs that landed here, this worker's subscription actors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs
import trio

from ...protocol.session_record import (
    INITIALIZED,
    LOG_LEVEL,
    SUBSCRIBE,
    UNSUBSCRIBE,
    StateChange,
    replayed_request,
)
from .directory import SessionRecord
from .session_stream import HttpSessionStream
from .sessions import SessionRegistry

#: The ids of replayed requests start so: a client's own ids are answered as usual.
REPLAY_ID = "mcp-actors.replay."


class NoLocalRoom(Exception):
    """This worker's session table has no room for another local actor (503)."""


#: Creates the local actor of a session with the given id (None: no room).
CreateLocal = Callable[[], Awaitable[HttpSessionStream | None]]


@attrs.define
class _Applied:
    """What a local actor has been told (beyond its ``initialize``)."""

    log_level: str | None = None
    subscriptions: frozenset[str] = frozenset()


@attrs.define(eq=False)
class Replicas:
    """This worker's local actors of a deployment's shared sessions (module docstring)."""

    #: What each local actor has applied, by session id (forgotten when it closes).
    _applied: dict[str, _Applied] = attrs.field(init=False, factory=dict)
    #: Sessions whose local actor is being restored now: set once it is.
    _restoring: dict[str, trio.Event] = attrs.field(init=False, factory=dict)
    _replayed: int = attrs.field(init=False, default=0)

    def opened(self, session_id: str) -> None:
        """A session was initialized here: its actor has applied nothing more."""
        self._applied[session_id] = _Applied()

    async def local_session(
        self,
        session_id: str,
        record: SessionRecord,
        registry: SessionRegistry,
        create: CreateLocal,
    ) -> HttpSessionStream | None:
        """This worker's actor of the session, made to match ``record`` (restored if this
        worker has none). None: the local session is of another kind (cannot happen for
        a shared id); raises :class:`NoLocalRoom` when the session table is full."""
        ready = self._restoring.get(session_id)
        if ready is not None:
            await ready.wait()
        entry = registry.get(session_id)
        if entry is None:
            return await self._restore(session_id, record, create)
        transport = entry.transport
        if not isinstance(transport, HttpSessionStream):
            return None
        await self.sync(session_id, transport, record)
        return transport

    async def _restore(
        self, session_id: str, record: SessionRecord, create: CreateLocal
    ) -> HttpSessionStream:
        ready = self._restoring[session_id] = trio.Event()
        try:
            transport = await create()
            if transport is None:
                raise NoLocalRoom(session_id)
            initialize_id = self._next_id()
            transport.initialize_id = initialize_id
            await self._ask(transport, initialize_id, "initialize", record.initialize)
            await transport.deliver(INITIALIZED)
            self._applied[session_id] = _Applied()
            await self.sync(session_id, transport, record)
            return transport
        finally:
            del self._restoring[session_id]
            ready.set()

    async def sync(
        self, session_id: str, transport: HttpSessionStream, record: SessionRecord
    ) -> None:
        """Replay into the local actor what ``record`` holds and it was not told yet."""
        applied = self._applied.setdefault(session_id, _Applied())
        if record.log_level is not None and record.log_level != applied.log_level:
            applied.log_level = record.log_level
            level = {"level": record.log_level}
            await self._ask(transport, self._next_id(), LOG_LEVEL, level)
        added = record.subscriptions - applied.subscriptions
        removed = applied.subscriptions - record.subscriptions
        applied.subscriptions = record.subscriptions
        asks = [(SUBSCRIBE, uri) for uri in sorted(added)]
        asks += [(UNSUBSCRIBE, uri) for uri in sorted(removed)]
        for method, uri in asks:
            await self._ask(transport, self._next_id(), method, {"uri": uri})

    def changed(self, session_id: str, changes: list[StateChange]) -> None:
        """A request of the session (delivered next, here) changes its record: the local
        actor applies the changes itself."""
        applied = self._applied.setdefault(session_id, _Applied())
        subscriptions = set(applied.subscriptions)
        for change in changes:
            if change.kind == "level":
                applied.log_level = change.value
            elif change.kind == "subscribe":
                subscriptions.add(change.value)
            else:
                subscriptions.discard(change.value)
        applied.subscriptions = frozenset(subscriptions)

    def forget(self, session_id: str) -> None:
        """The local actor closed: what it applied goes with it."""
        self._applied.pop(session_id, None)

    @property
    def replayed(self) -> int:
        """Requests replayed into local actors so far (restorations and catch-ups)."""
        return self._replayed

    def _next_id(self) -> str:
        self._replayed += 1
        return f"{REPLAY_ID}{self._replayed}"

    async def _ask(
        self,
        transport: HttpSessionStream,
        request_id: str,
        method: str,
        params: bytes | dict[str, str],
    ) -> None:
        """Deliver one replayed request and wait for its (unread) answer."""
        stream = await transport.open_stream([request_id], json=True)
        await transport.deliver(replayed_request(request_id, method, params))
        while not stream.finished and not transport.closed.is_set():
            await stream.changed.wait()
