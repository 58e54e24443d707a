"""Actors: long-lived tasks that belong to a session, or outlive it.

An *actor* is an ``async`` callable run as a task of its own: a resource
subscription's delivery loop, a parked multi round-trip handler, a gateway's
connection to its upstream. Where it runs decides how long it may live, so code
that starts one asks for an :class:`ActorHost` rather than a nursery:

- the **session** (:meth:`.session.Session.start_actor`): the actor ends with the
  session — it is cancelled once the peer stops sending, or when the session is
  closed;
- the **supervisor** (:class:`~.supervisor.Supervisor`): the actor outlives the
  session that started it (a handler that waits for a retry on another connection).

:class:`Actors` is a session's own set. Each actor runs in a cancel scope of its
own, so that the session can cancel them all when its peer stops sending
(:meth:`Actors.cancel_all`) while its reader and writer still finish their work;
from then on no new actor starts. The set is made by the first actor: most
sessions never start one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import attrs
import trio


class ActorHost(Protocol):
    """Where actors run: a session (they end with it) or the supervisor (they outlive it)."""

    def start_actor(self, actor: Callable[[], Awaitable[None]]) -> None: ...


@attrs.define(eq=False)
class Actors:
    """The actors of one session, each in its own cancel scope (see the module docstring)."""

    _scopes: set[trio.CancelScope] | None = attrs.field(init=False, default=None)
    #: Set by :meth:`cancel_all`: no new actor starts.
    draining: bool = attrs.field(init=False, default=False)

    @property
    def idle(self) -> bool:
        """Whether no actor runs."""
        return not self._scopes

    async def run(self, actor: Callable[[], Awaitable[None]]) -> None:
        """Run ``actor()`` in a cancel scope of its own (the body of the actor's task);
        it does not start once the set is draining."""
        scope = trio.CancelScope()
        if self.draining:
            return
        if self._scopes is None:
            self._scopes = set()
        self._scopes.add(scope)
        try:
            with scope:
                await actor()
        finally:
            if self._scopes is not None:
                self._scopes.discard(scope)

    def cancel_all(self) -> None:
        """Cancel every running actor; none starts from now on."""
        self.draining = True
        scopes, self._scopes = self._scopes, None
        for scope in scopes or ():
            scope.cancel()
