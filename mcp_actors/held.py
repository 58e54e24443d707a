"""A Trio async context manager held open in a :class:`~.trio_thread.TrioThread`.

A Trio ``async with`` block (``open_client``, ``open_hosted``, ``subscribe``) must
be entered and left by the same task. A :class:`Held` gives it one: a task in the
Trio thread enters the block, hands out what it yields, and waits until
:meth:`Held.release` tells it to leave — then leaves the block the ordinary way (a
client closes its session, a server stops). A Held made with
:meth:`Held.in_new_thread` owns its thread, which ends with the block. The asyncio
and sync fronts (:mod:`mcp_actors.aio`, :mod:`mcp_actors.sync`) are built on this.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

import trio

from .trio_thread import TrioThread

T = TypeVar("T")
OpenBlock = Callable[[], AbstractAsyncContextManager[T]]


class Held(Generic[T]):
    """The value of an ``async with`` block kept open by a task of a Trio thread.

    Construction returns at once; :attr:`opened` settles when the block is entered
    (or with the exception entering it raised). :attr:`closed` settles once the
    block was left (and, for an owned thread, the thread ended).
    """

    def __init__(self, open_block: OpenBlock[T], thread: TrioThread, *, owns_thread: bool) -> None:
        self._open_block = open_block
        self._release: trio.Event | None = None
        self._owns_thread = owns_thread
        #: Settles with the block's value once entered.
        self.opened: concurrent.futures.Future[T] = concurrent.futures.Future()
        #: Settles once the block was left, with the exception leaving it raised, if any.
        self.closed: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.thread = thread
        self._holder = thread.submit(self._hold)
        self._holder.future.add_done_callback(self._ended)

    @classmethod
    def in_new_thread(cls, open_block: OpenBlock[T], *, name: str) -> Held[T]:
        """Hold ``open_block()`` in a Trio thread of its own, ending with the block."""
        return cls(open_block, TrioThread(name).start(), owns_thread=True)

    def release(self) -> concurrent.futures.Future[None]:
        """Ask the holding task to leave the block (thread-safe); returns :attr:`closed`."""
        if not self.thread.run_soon(self._leave):
            self._holder.cancel()
        return self.closed

    def _leave(self) -> None:
        if self._release is not None:
            self._release.set()
        else:
            self._holder.cancel()

    async def _hold(self) -> None:
        self._release = trio.Event()
        async with self._open_block() as value:
            self.opened.set_result(value)
            await self._release.wait()

    def _ended(self, holder: concurrent.futures.Future[None]) -> None:
        error = None if holder.cancelled() else holder.exception()
        if not self.opened.done():
            self.opened.set_exception(error or concurrent.futures.CancelledError())
            error = None
        if not self._owns_thread:
            _settle(self.closed, error)
            return
        self.thread.stop_soon()
        self.thread.finished.add_done_callback(lambda _: _settle(self.closed, error))


def _settle(future: concurrent.futures.Future[None], error: BaseException | None) -> None:
    if error is None or isinstance(error, concurrent.futures.CancelledError):
        future.set_result(None)
    else:
        future.set_exception(error)
