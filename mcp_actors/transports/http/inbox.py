"""A bounded first-in first-out queue with one reader: the request bodies of an HTTP session.

A trio memory channel does this job too, but costs about 3 KB per idle session (its
state, two channel objects, the deque and the reader's parked entry): over
Streamable HTTP, where an idle session is nothing but this queue waiting, that was
the largest single piece of an idle session. :class:`Inbox` keeps a list and one
:class:`trio.Event`, made only while someone waits.

Bounded: :meth:`Inbox.put` waits while ``capacity`` items are queued (the writer is
slowed down, nothing is dropped); :meth:`Inbox.put_nowait` raises
:class:`trio.WouldBlock` instead. :meth:`Inbox.end` lets the reader take what is
queued and then ends it; :meth:`Inbox.close` ends it at once, dropping what is
queued. Either way :meth:`Inbox.get` then raises :class:`InboxClosed`, and so does a
``put`` after it.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import trio

T = TypeVar("T")


class InboxClosed(Exception):
    """The inbox was ended or closed."""


class InboxInterrupted(Exception):
    """:meth:`Inbox.interrupt` woke the reader waiting on an empty inbox."""


class Inbox(Generic[T]):
    """A bounded FIFO for one reader (see the module docstring)."""

    __slots__ = ("_capacity", "_changed", "_closed", "_ended", "_interrupted", "_items", "_reading")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"Inbox capacity must be at least 1: {capacity!r}")
        self._capacity = capacity
        self._items: list[T] = []
        self._changed: trio.Event | None = None
        self._ended = False
        self._closed = False
        self._reading = False
        self._interrupted = False

    def __len__(self) -> int:
        return len(self._items)

    def put_nowait(self, item: T) -> None:
        if self._ended or self._closed:
            raise InboxClosed
        if len(self._items) >= self._capacity:
            raise trio.WouldBlock
        self._items.append(item)
        self._wake()

    async def put(self, item: T) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        while not (self._ended or self._closed) and len(self._items) >= self._capacity:
            await self._wait()
        self.put_nowait(item)
        # Queued, then yield (as trio's channels do): the reader, woken, runs now, so an
        # answer it can give at once is there when the caller resumes.
        await trio.lowlevel.cancel_shielded_checkpoint()

    @property
    def reader_waiting(self) -> bool:
        """Whether the reader waits in :meth:`get` on an empty inbox."""
        return self._reading and not self._items

    def interrupt(self) -> None:
        """Wake the reader waiting on an empty inbox: its :meth:`get` raises
        :class:`InboxInterrupted` (unless an item came first)."""
        if self.reader_waiting:
            self._interrupted = True
            self._wake()

    async def get(self) -> T:
        if self._items or self._ended or self._closed:
            await trio.lowlevel.checkpoint()
        # else waiting is the checkpoint: a reader that parks does not first yield in vain
        self._interrupted = False
        self._reading = True
        try:
            while not self._items and not (self._ended or self._closed):
                if self._interrupted:
                    raise InboxInterrupted
                await self._wait()
        finally:
            self._reading = self._interrupted = False
        if self._closed or not self._items:
            raise InboxClosed
        item = self._items.pop(0)  # at most ``capacity`` items: cheap
        self._wake()
        return item

    def end(self) -> None:
        """No more items: the reader takes what is queued, then :meth:`get` raises."""
        self._ended = True
        self._wake()

    def close(self) -> None:
        """End now: what is queued is dropped."""
        self._closed = True
        self._items.clear()
        self._wake()

    async def _wait(self) -> None:
        if self._changed is None:
            self._changed = trio.Event()
        await self._changed.wait()

    def _wake(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()
