"""A session's companions: the tasks it starts while it serves one request in its own task.

The session of one exchange (a stateless or 2026-07-28 HTTP request, see
:meth:`.session.Session.run`) serves its request in the POST's own task. Most such
requests need no other task, and a nursery opened around the handler in case one is
needed costs about a fifth of the request. So the session opens none: what may need a
task of its own while the handler runs — the reader, once the reply is slow
(:mod:`..transports.http.slow_replies`), the writer's task once a message has to
wait, slow notification work, an actor — starts as a *companion*, a task of the
session's host (the supervisor's nursery) in a cancel scope of its own. The session
holds them as a nursery would hold its children:

- it waits for every companion (:meth:`Companions.join`) before it ends, so none
  outlives it;
- a companion that fails cancels the request being served (the ``body`` scope) and
  the other companions, and its exception is raised where the session joins them: the
  session fails, as when a task of its nursery fails;
- a session that leaves by an exception (its task cancelled) cancels them all, and
  still waits for them (:meth:`Companions.cancel_and_join`); a companion's failure
  then is logged, as the session's own exception goes on.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

import attrs
import trio

log = logging.getLogger("mcp_actors.session")

#: Starts a task (a nursery's ``start_soon``, a host's ``start_actor``).
StartTask = Callable[[Callable[[], Awaitable[None]]], None]


@attrs.define(eq=False)
class Companions:
    """The companions of one session (see the module docstring): started with
    ``start_task``, while the session runs ``body``."""

    _start_task: StartTask
    _body: trio.CancelScope
    _scopes: set[trio.CancelScope] = attrs.field(init=False, factory=set)
    _running: int = attrs.field(init=False, default=0)
    _cancelled: bool = attrs.field(init=False, default=False)
    _all_done: trio.Event | None = attrs.field(init=False, default=None)
    _failure: Exception | None = attrs.field(init=False, default=None)

    def start(self, task: Callable[[], Awaitable[None]]) -> None:
        """Run ``task()`` beside the session, until it returns or is cancelled."""
        self._running += 1
        self._start_task(functools.partial(self._run, task))

    async def _run(self, task: Callable[[], Awaitable[None]]) -> None:
        scope = trio.CancelScope()
        if self._cancelled:
            scope.cancel()
        self._scopes.add(scope)
        try:
            with scope:
                await task()
        except Exception as failure:
            if self._failure is None:
                self._failure = failure
            self.cancel()
        finally:
            self._scopes.discard(scope)
            self._running -= 1
            if self._running == 0 and self._all_done is not None:
                self._all_done.set()

    def cancel(self) -> None:
        """Cancel the session's body and every companion (those not begun yet too)."""
        self._cancelled = True
        self._body.cancel()
        for scope in self._scopes:
            scope.cancel()

    async def join(self) -> None:
        """Wait until every companion has ended; raise the first one's failure."""
        await self._all_ended()
        if self._failure is not None:
            raise self._failure

    async def cancel_and_join(self) -> None:
        """The session leaves by an exception: cancel the companions and wait for them
        (shielded: the session's own cancellation must not cut the wait short); log a
        failure among them, which that exception would hide."""
        self.cancel()
        with trio.CancelScope(shield=True):
            await self._all_ended()
        if self._failure is not None:
            log.error("a companion of an ending session failed", exc_info=self._failure)

    async def _all_ended(self) -> None:
        if self._running:
            self._all_done = trio.Event()
            await self._all_done.wait()
