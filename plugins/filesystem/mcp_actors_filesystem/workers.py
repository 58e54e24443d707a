"""The worker threads of one ``filesystem`` server: its own bounded pool, given back on cancel.

File work blocks, so it runs in threads. Trio's default thread limiter (40) is shared
by everything in the process; if one tool's threads stay busy — a read that never
returns, or just many calls — every other user of that limiter waits behind them. So
each server has its own :class:`trio.CapacityLimiter` of ``max_threads``: at most that
many of its calls work at once, the others wait their turn (cancellable while they
wait), and nothing outside the server is starved.

A cancelled call must not keep its slot: the thread is told to stop (a
:class:`threading.Event` the work checks between bounded steps, see :mod:`.files`)
and trio stops waiting for it at once (``abandon_on_cancel=True``). That is safe
because the work ends by itself soon after: nothing in it blocks without bound (no
FIFO or device is ever read, reads are chunked), and its slot is released when it
does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import trio

T = TypeVar("T")


class Workers:
    """At most ``size`` threads doing this server's file work at once."""

    def __init__(self, size: int) -> None:
        self.limiter = trio.CapacityLimiter(size)

    async def run(self, work: Callable[[threading.Event], T]) -> T:
        """``work(stop)`` in a worker thread; ``stop`` is set if the call is cancelled."""
        stop = threading.Event()
        try:
            return await trio.to_thread.run_sync(
                work, stop, limiter=self.limiter, abandon_on_cancel=True
            )
        finally:
            stop.set()
