"""The change bus: how a server's changes reach every listener, without the publisher waiting.

A *change* (:class:`Change`) is something a server announces to clients that asked
to hear about it: its tool, prompt or resource list changed, a resource was
updated (extensions add more, such as a task's status). Whoever makes the change
calls :meth:`Bus.publish`; the bus hands it to every *receiver* subscribed to it
(:meth:`Bus.subscribe`). A receiver is a plain function that must never block: it
looks at the change, and if its listener wants it, drops it into that listener's
:class:`Mailbox` and returns. So publishing costs one function call per receiver,
whatever the listeners' peers are doing.

:class:`MemoryBus` is the bus of one process. A bus spanning processes (Redis,
for servers scaled out over several workers) implements the same :class:`Bus`
interface: ``publish`` forwards the change, and the changes other workers publish
reach this worker's receivers the same way. Such a bus may lose changes on their way
between processes (a link down longer than the others' changes were kept): then it
publishes one :data:`CHANGES_MISSED` change to this process's receivers, which means
"assume everything you watch changed" — a listen stream turns it into a
``list_changed`` for each list it follows and a ``resources/updated`` for each
resource it follows, telling its client to re-list and re-read.

A :class:`Mailbox` is one listener's bounded, coalescing inbox, read by the
listener's actor (:meth:`Mailbox.get`):

- a change whose :attr:`Change.key` is already pending **replaces** it in place
  (latest wins; a list change or a resource update says "it changed", so a second
  one adds nothing); ``coalesced`` counts those;
- at most ``capacity`` distinct keys wait at once; a change with a new key beyond
  that is **dropped** and counted in ``dropped`` (its listener was far behind);
- :meth:`Mailbox.close` ends the mailbox: what is pending is discarded (a listener
  that is ending is sent nothing more), :meth:`Mailbox.get` returns None, and later
  offers are ignored.

>>> bus, mailbox = MemoryBus(), Mailbox(capacity=8)
>>> unsubscribe = bus.subscribe(lambda change: mailbox.offer(change) or 1)
>>> bus.publish(Change("notifications/tools/list_changed"))   # never blocks
1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

import attrs
import trio

#: Takes a change for the listeners it feeds that want it; returns how many did (0:
#: ignored). Never blocks.
Receiver = Callable[["Change"], int]
#: Ends a subscription to a bus.
Unsubscribe = Callable[[], None]

#: The method of the change a bus publishes to this process's receivers when changes
#: published in other processes may not have reached it (see the module docstring).
CHANGES_MISSED: Final = "mcp-actors/changes-missed"
#: The list changes :data:`CHANGES_MISSED` stands for (every list may have changed).
LIST_CHANGES: Final = (
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
)


@attrs.frozen
class Change:
    """One announced change: the notification ``method`` that tells it, what it is
    about (``subject``: a resource URI, a task id; None for a list change), the
    notification's ``params`` (a protocol Struct, without the listener's tag), and
    who may hear it (``audience``: a task's requestor; None: every listener)."""

    method: str
    subject: str | None = None
    params: Any = None
    audience: str | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        """What a newer change replaces in a mailbox: the same method about the same subject."""
        return (self.method, self.subject)


@attrs.frozen
class BusStatistics:
    """A bus's receivers now, and the changes published so far."""

    receivers: int
    published: int


class Bus(Protocol):
    """Fans changes out to receivers (see the module docstring)."""

    def publish(self, change: Change) -> int:
        """Hand ``change`` to every receiver; never blocks. Returns how many listeners in
        this process took it."""

    def subscribe(self, receiver: Receiver) -> Unsubscribe:
        """Add ``receiver``; the returned function removes it (idempotent)."""

    def statistics(self) -> BusStatistics: ...


@attrs.define(eq=False)
class MemoryBus:
    """The bus of one process: ``publish`` calls every receiver, in subscription order."""

    _receivers: dict[int, Receiver] = attrs.field(init=False, factory=dict)
    _next: int = attrs.field(init=False, default=0)
    _published: int = attrs.field(init=False, default=0)

    def publish(self, change: Change) -> int:
        self._published += 1
        return sum(receiver(change) for receiver in list(self._receivers.values()))

    def subscribe(self, receiver: Receiver) -> Unsubscribe:
        token = self._next
        self._next += 1
        self._receivers[token] = receiver
        return lambda: self._receivers.pop(token, None) and None

    def statistics(self) -> BusStatistics:
        return BusStatistics(receivers=len(self._receivers), published=self._published)


@attrs.define(eq=False)
class Mailbox:
    """One listener's bounded, coalescing inbox (see the module docstring).

    ``capacity`` bounds the distinct changes waiting (at least 1).
    """

    capacity: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    _pending: dict[tuple[str, str | None], Change] = attrs.field(init=False, factory=dict)
    _wakeup: trio.Event = attrs.field(init=False, factory=trio.Event)
    closed: bool = attrs.field(init=False, default=False)
    #: Changes taken out by the listener.
    delivered: int = attrs.field(init=False, default=0)
    #: Changes that replaced a pending one with the same key.
    coalesced: int = attrs.field(init=False, default=0)
    #: Changes refused because ``capacity`` keys were already waiting.
    dropped: int = attrs.field(init=False, default=0)

    def offer(self, change: Change) -> None:
        """Add ``change``, replacing a pending one with its key; never blocks."""
        if self.closed:
            return
        key = change.key
        pending = self._pending
        if key in pending:
            self.coalesced += 1
        elif len(pending) >= self.capacity:
            self.dropped += 1
            return
        pending[key] = change
        self._wakeup.set()

    def close(self) -> None:
        """No more changes: :meth:`get` returns None from now on."""
        self.closed = True
        self._pending.clear()
        self._wakeup.set()

    @property
    def waiting(self) -> int:
        """How many changes are pending."""
        return len(self._pending)

    async def get(self) -> Change | None:
        """The oldest pending change (waiting for one), or None once closed."""
        while not self._pending:
            if self.closed:
                return None
            await self._wakeup.wait()
            self._wakeup = trio.Event()
        if self.closed:
            return None
        key = next(iter(self._pending))
        self.delivered += 1
        return self._pending.pop(key)
