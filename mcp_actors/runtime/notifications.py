"""A session's queue of slow notification work, and the one task that runs it.

A dispatcher must take a notification without blocking: the reader that hands it
over reads nothing else meanwhile. Work that has to wait (a handler of
``notifications/roots/list_changed`` that asks the client for its roots, a log
message sent from synchronous code) is submitted here instead
(:meth:`.session.Session.submit`) and run by the session's notification task, one
piece after another, in the order submitted.

Bounded: the queue holds ``notification_queue_size`` pieces of work; when it is
full, new work is **dropped** (counted in :attr:`Notifications.dropped`, logged as a
warning) — a peer that floods us with notifications cannot grow our memory or
stall the reader. A piece of work that raises is a bug: it is reported with a
rate-limited traceback (see :mod:`.internal_errors`) and the task goes on.

The queue and its task are made by the first work of each stretch the session is
awake (most sessions never need them); the session lends its nursery
(:meth:`Notifications.attach`) while it is awake. When it falls asleep the queue
goes (:meth:`Notifications.rest`: it was empty); once the peer stops sending it is
closed for good (:meth:`Notifications.close`) and later work is dropped.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

import attrs
import trio

from .companions import StartTask
from .internal_errors import internal_errors

log = logging.getLogger("mcp_actors.session")

#: A piece of notification work.
Work = Callable[[], Awaitable[None]]


@attrs.define(eq=False)
class Notifications:
    """The slow-notification queue of one session (see the module docstring)."""

    queue_size: int
    #: Work dropped because the queue was full or closed.
    dropped: int = attrs.field(init=False, default=0)
    _send: trio.MemorySendChannel[Work] | None = attrs.field(init=False, default=None)
    _receive: trio.MemoryReceiveChannel[Work] | None = attrs.field(init=False, default=None)
    _start_task: StartTask | None = attrs.field(init=False, default=None)
    _closed: bool = attrs.field(init=False, default=False)

    @property
    def queued(self) -> int:
        """Work waiting for the task."""
        return 0 if self._receive is None else self._receive.statistics().current_buffer_used

    @property
    def tasks(self) -> int:
        """The tasks of its own in the session's nursery while it is awake (0 or 1)."""
        return 0 if self._receive is None else 1

    @property
    def idle(self) -> bool:
        """Nothing queued, nothing running: the task (if any) waits on an empty queue."""
        receive = self._receive
        if receive is None:
            return True
        queue = receive.statistics()
        return not queue.current_buffer_used and bool(queue.tasks_waiting_receive)

    def attach(self, start_task: StartTask) -> None:
        """The session is awake: the task may start with ``start_task`` (at once, if work
        was submitted while it slept)."""
        self._start_task = start_task
        if self._receive is not None:
            start_task(functools.partial(self._run, self._receive))

    def detach(self) -> None:
        """The session's nursery is gone: no task can start until the next :meth:`attach`."""
        self._start_task = None

    def submit(self, work: Work) -> None:
        """Queue ``work`` for the task; drop it if the queue is full or closed."""
        send = self._send
        if send is None and not self._closed:
            send, receive = trio.open_memory_channel[Work](self.queue_size)
            self._send, self._receive = send, receive
            if self._start_task is not None:  # else it starts when the session runs
                self._start_task(functools.partial(self._run, receive))
        try:
            if send is None:
                raise trio.ClosedResourceError
            send.send_nowait(work)
        except (trio.WouldBlock, trio.ClosedResourceError):
            self.dropped += 1
            log.warning("notification queue full: dropped a notification")

    def rest(self) -> None:
        """The session goes to sleep (the queue :attr:`idle`): let the queue and task go."""
        if self._send is not None:
            self._send.close()
        self._send = self._receive = None

    def close(self) -> None:
        """The peer stopped sending: the task runs what is queued, then ends; no more work."""
        self._closed = True
        if self._send is not None:
            self._send.close()

    async def _run(self, queue: trio.MemoryReceiveChannel[Work]) -> None:
        async for work in queue:
            try:
                await work()
            except Exception:
                internal_errors.report(log, "a notification handler failed")
