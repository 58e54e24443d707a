"""The HTTP server's session table: ids, the session cap, and idle expiry.

Over HTTP a session outlives every request that touches it, so something must
end the sessions of clients that vanished without a DELETE. The registry maps
``Mcp-Session-Id`` values to live sessions, refuses new ones beyond
``max_sessions`` (the caller answers 503), and :meth:`SessionRegistry.run_expiry`
closes any session that has had neither a request nor an open stream for
``idle_timeout`` seconds — which cancels its in-flight requests, as a DELETE would.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Protocol

import attrs
import trio

log = logging.getLogger("mcp_actors.http")

#: Ends a session actor (cancelling its in-flight requests); safe to call twice.
CloseSession = Callable[[], None]


class Activity(Protocol):
    """What expiry looks at: when the session was last used, and whether a stream is open."""

    last_activity: float

    @property
    def busy(self) -> bool: ...


def mint_session_id() -> str:
    """A fresh, unguessable id of visible ASCII (URL-safe base64 of 24 random bytes)."""
    return secrets.token_urlsafe(24)


@attrs.define(eq=False)
class SessionEntry:
    transport: Activity
    close: CloseSession


@attrs.define(eq=False)
class SessionRegistry:
    """Live HTTP sessions by id. ``None`` limits mean unlimited."""

    max_sessions: int | None = None
    idle_timeout: float | None = None
    _entries: dict[str, SessionEntry] = attrs.field(init=False, factory=dict)
    _expired: int = attrs.field(init=False, default=0)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def full(self) -> bool:
        return self.max_sessions is not None and len(self._entries) >= self.max_sessions

    @property
    def expired(self) -> int:
        """Sessions closed for idleness so far."""
        return self._expired

    def add(self, session_id: str, transport: Activity, close: CloseSession) -> None:
        self._entries[session_id] = SessionEntry(transport, close)

    def get(self, session_id: str) -> SessionEntry | None:
        """The live session with this id (its activity clock restarted), or None."""
        entry = self._entries.get(session_id)
        if entry is not None:
            entry.transport.last_activity = trio.current_time()
        return entry

    def discard(self, session_id: str) -> SessionEntry | None:
        return self._entries.pop(session_id, None)

    def close(self, session_id: str) -> bool:
        """End a session (DELETE); False if there was none."""
        entry = self._entries.pop(session_id, None)
        if entry is None:
            return False
        entry.close()
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

    async def run_expiry(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Sweep for idle sessions forever (every quarter of the timeout, at most 30 s)."""
        task_status.started()
        if self.idle_timeout is None:
            return
        interval = min(max(self.idle_timeout / 4, 0.01), 30.0)
        while True:
            await trio.sleep(interval)
            self.expire(trio.current_time())

    def close_all(self) -> None:
        for session_id in list(self._entries):
            self.close(session_id)
