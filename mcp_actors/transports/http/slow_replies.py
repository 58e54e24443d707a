"""Which exchanges are still unanswered after :data:`~.asgi.QUICK_REPLY`: one timer for all.

A stateless exchange (:mod:`.exchange`) lets its session serve the request in the
POST's own task and read nothing meanwhile (:meth:`~..abc.MessageStream.defer_reading`):
most requests are answered within milliseconds, and a reader task beside the handler,
with its nursery and its timer, costs as much as a small request. The few that take
longer need a reader after all, to watch the client (one that leaves has its request
cancelled) and to keep a streaming reply alive. :func:`call_when_slow` arranges it:
``callback()`` runs once the exchange has gone unanswered for between half and all of
``QUICK_REPLY`` seconds, unless :func:`forget` came first.

One timer serves every exchange of a trio run: a system task (no nursery needed: the
POST's task has none to lend) that wakes every half ``QUICK_REPLY`` while exchanges
are waiting, and ends after a second without any. Exchanges wait in two generations:
those registered since the last tick are young; at a tick, the old ones still there
get their callback and the young become old. Registering and forgetting are a
dictionary insert and two removals: no clock read, no cancel scope, no task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable

import trio

from .asgi import QUICK_REPLY

log = logging.getLogger("mcp_actors.http")

#: How often the timer looks: an exchange is slow after one or two ticks.
TICK = QUICK_REPLY / 2
#: Ticks without any exchange waiting before the timer's task ends.
IDLE_TICKS = round(1.0 / TICK)


class _SlowReplies:
    """The exchanges waiting in one trio run, and the task that ticks for them."""

    def __init__(self) -> None:
        self.young: dict[Hashable, Callable[[], None]] = {}
        self.old: dict[Hashable, Callable[[], None]] = {}
        self.ticking = False

    def add(self, key: Hashable, callback: Callable[[], None]) -> None:
        self.young[key] = callback
        if not self.ticking:
            self.ticking = True
            trio.lowlevel.spawn_system_task(self._tick, name="mcp_actors slow replies")

    async def _tick(self) -> None:
        idle = 0
        try:
            while idle < IDLE_TICKS:
                await trio.sleep(TICK)
                slow, self.old, self.young = self.old, self.young, {}
                for callback in slow.values():
                    try:
                        callback()
                    except Exception:  # a system task must not fail: that ends the run
                        log.exception("starting the reader of a slow exchange failed")
                idle = 0 if slow or self.old else idle + 1
        finally:
            self.ticking = False


_RUN: trio.lowlevel.RunVar[_SlowReplies] = trio.lowlevel.RunVar("mcp_actors_slow_replies")


def _current() -> _SlowReplies:
    try:
        return _RUN.get()
    except LookupError:
        replies = _SlowReplies()
        _RUN.set(replies)
        return replies


def call_when_slow(key: Hashable, callback: Callable[[], None]) -> None:
    """Call ``callback()`` once ``key`` has waited between ``QUICK_REPLY / 2`` and
    ``QUICK_REPLY`` seconds, unless :func:`forget` is called first (from a trio task)."""
    _current().add(key, callback)


def forget(key: Hashable) -> None:
    """``key`` no longer waits (answered, or read by other means): no callback."""
    replies = _current()
    replies.young.pop(key, None)
    replies.old.pop(key, None)
