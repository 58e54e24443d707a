"""The supervisor: the root nursery every session actor lives in, and where failures stop.

A server opens one supervisor and starts a session actor in it per connection, and
the actors that outlive connections (tasks) with :meth:`Supervisor.start_actor`.
A session that crashes (a bug, a transport error) is logged, counted and
closed; the supervisor and every other session go on. ``statistics()`` counts
what is alive, so tests and operators can see that closed sessions leave
nothing behind.

A session that sleeps (an idle Streamable HTTP session, see
:mod:`.session`) has no task here, but is still the supervisor's: it stays in
its table, is run again in the same nursery when something wakes it
(:meth:`Supervisor.resume_session`), and is woken to end when the supervisor
closes.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import attrs
import trio

from .groups import unwrapped
from .internal_errors import internal_errors
from .session import Session

log = logging.getLogger("mcp_actors.supervisor")


@attrs.frozen
class SupervisorStatistics:
    """What the supervisor holds right now, and what it has seen."""

    sessions_active: int
    #: Of the active sessions, those asleep (no task).
    sessions_asleep: int
    sessions_started: int
    sessions_failed: int
    inbound_requests: int
    outbound_calls: int
    tasks: int


@attrs.define(eq=False)
class Supervisor:
    """Owns the root nursery; runs session actors in it, containing their failures."""

    _nursery: trio.Nursery
    _sessions: set[Session] = attrs.field(init=False, factory=set)
    _started: int = attrs.field(init=False, default=0)
    _failed: int = attrs.field(init=False, default=0)

    async def start_session(self, session: Session) -> Session:
        """Start ``session`` as a supervised actor; returns once it is reading."""
        session.host = self
        self._started += 1
        self._sessions.add(session)
        await self._nursery.start(self._supervise, session)
        return session

    def start_session_soon(self, session: Session) -> None:
        """Like :meth:`start_session`, from synchronous code."""
        session.host = self
        self._started += 1
        self._sessions.add(session)
        self._nursery.start_soon(self._supervise, session)

    async def serve_here(self, session: Session) -> None:
        """Run ``session`` in the calling task until it ends, supervised as a started one is.

        For a session that lives exactly as long as the task asking for it (the session
        of one stateless HTTP request, which is served in that request's own task):
        it is counted, its failure contained and logged, the actors it parks run here;
        what it saves is a task, a nursery and two passes of the scheduler per request.
        Such a session must not sleep (its transport never offers rest).
        """
        session.host = self
        self._started += 1
        self._sessions.add(session)
        await self._supervise(session)

    async def _supervise(
        self, session: Session, *, task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            await session.run(task_status=task_status)
        except Exception:
            self._failed += 1
            internal_errors.report(log, "session actor failed; the server goes on")
        finally:
            if not session.asleep:
                self._sessions.discard(session)

    def resume_session(self, session: Session) -> None:
        """Run an asleep session again, supervised as when it started."""
        self._nursery.start_soon(self._supervise, session)

    def end_asleep(self) -> None:
        """End the sessions that sleep (they have no task a cancellation would reach)."""
        for session in [s for s in self._sessions if s.asleep]:
            session.close()

    def start_actor(self, actor: Callable[[], Awaitable[None]]) -> None:
        """Run ``actor()`` in the root nursery, outliving the session that started it (a
        parked MRTR handler, a task of the tasks extension); an exception it raises is
        logged and counted, nothing more."""
        self._nursery.start_soon(self._contain, actor)

    async def _contain(self, actor: Callable[[], Awaitable[None]]) -> None:
        try:
            await actor()
        except Exception:
            self._failed += 1
            internal_errors.report(log, "an actor failed; the server goes on")

    @property
    def sessions(self) -> frozenset[Session]:
        return frozenset(self._sessions)

    def statistics(self) -> SupervisorStatistics:
        per_session = [session.statistics() for session in self._sessions]
        return SupervisorStatistics(
            sessions_active=len(self._sessions),
            sessions_asleep=sum(1 for s in self._sessions if s.asleep),
            sessions_started=self._started,
            sessions_failed=self._failed,
            inbound_requests=sum(s.inbound_requests for s in per_session),
            outbound_calls=sum(s.outbound_calls for s in per_session),
            tasks=len(self._nursery.child_tasks),
        )

    def cancel(self) -> None:
        """Stop every session now."""
        self._nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_supervisor() -> AsyncIterator[Supervisor]:
    """Open a supervisor; leaving the block waits for its sessions (cancel to stop them)."""
    with unwrapped():
        async with trio.open_nursery() as nursery:
            supervisor = Supervisor(nursery)
            try:
                yield supervisor
            finally:
                supervisor.end_asleep()
