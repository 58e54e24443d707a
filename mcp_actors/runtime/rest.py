"""Rest: an idle session gives up its tasks, and wakes when something concerns it.

Most of a Streamable HTTP server's sessions are idle: a client that made a few calls
and keeps its session id for later. Awake, each holds a reader task, perhaps a
writer and a notification task, a nursery and their queues. Over a transport that
can hold a session's input while nobody reads it, an idle session lets all that go
and keeps only its engine, state and transport.

**Falling asleep.** The transport offers rest: its reader's ``receive`` ends with
``transport.rest_offered`` set (see :class:`~mcp_actors.transports.abc.MessageStream`;
stdio never offers it). The session takes the offer only if nothing is in flight —
no request, no outbound call, no actor, nothing queued or being written, each of
its parts (:class:`Resting`) idle, with no task in its nursery but the parts' own
tasks waiting on empty queues — and if it has a host to run it again. Then
:meth:`Rest.fall_asleep` lets every part's queues go, cancels the nursery (whose
tasks all wait) and hands the transport the session's ``wake``, last, since it may
call it at once; the session's ``run`` returns. Otherwise the offer lapses and the
reader reads on.

**Waking.** The first thing that concerns a sleeping session wakes it
(:meth:`Rest.wake`): input the transport receives, a message something sends to it,
closing it. If the task that ran it is still winding down, that task serves on;
else its host (the :class:`~.supervisor.Supervisor` that started it) runs it again,
in the same root nursery, with the same failure containment. Asleep, it is still a
supervised actor: counted, closed with the server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import attrs
import trio

from ..transports.abc import MessageStream


class Resting(Protocol):
    """A part of a session that holds tasks or queues while awake (its writer, its
    notification queue)."""

    @property
    def idle(self) -> bool:
        """Nothing queued or being done: its tasks, if any, wait on empty queues."""

    @property
    def tasks(self) -> int:
        """How many tasks of its own run in the session's nursery."""

    def rest(self) -> None:
        """The session falls asleep (this part :attr:`idle`): let queues and tasks go."""


@attrs.define(eq=False)
class Rest:
    """Whether one session sleeps, and how it wakes (see the module docstring).

    ``resume`` runs the session again in its host.
    """

    _resume: Callable[[], None]
    #: Whether the session sleeps: no task, kept until something wakes it.
    asleep: bool = attrs.field(init=False, default=False)
    #: Whether a task runs the session now (it may be winding down to sleep).
    running: bool = attrs.field(init=False, default=False)

    @staticmethod
    def idle(nursery: trio.Nursery, parts: Sequence[Resting]) -> bool:
        """Whether the session's parts are all idle, and its nursery holds only their tasks
        (no request actor, no batch, no actor left)."""
        tasks = 0
        for part in parts:
            if not part.idle:
                return False
            tasks += part.tasks
        return len(nursery.child_tasks) == tasks

    def fall_asleep(
        self,
        nursery: trio.Nursery,
        parts: Sequence[Resting],
        transport: MessageStream,
        wake: Callable[[], None],
    ) -> None:
        """Give up the tasks (all waiting on empty queues) and the queues; keep the rest."""
        self.asleep = True
        for part in parts:
            part.rest()
        nursery.cancel_scope.cancel()
        transport.rest(wake)  # last: it may wake the session at once

    def end(self) -> None:
        """The session has ended: it never runs again, and the callback into it goes
        (no reference cycle outlives the session)."""
        self.asleep = False
        self._resume = _ended

    def wake(self) -> None:
        """Something concerns the session: if it sleeps, run it again (in its host)."""
        if not self.asleep:
            return
        self.asleep = False
        if not self.running:  # else the task winding down serves on instead
            self._resume()


def _ended() -> None:
    """What waking an ended session does: nothing."""
