"""A Trio run in a thread of its own, and work handed to it from other threads.

mcp_actors is written for Trio; asyncio applications and plain synchronous code
reach it through a :class:`TrioThread`: one daemon thread running ``trio.run``,
holding a nursery that stays open until :meth:`TrioThread.stop`. Any other thread
may :meth:`~TrioThread.submit` an async function; it becomes a task in that
nursery, inside a cancel scope of its own, and the submitter gets a
:class:`TrioCall` — a ``concurrent.futures.Future`` for the outcome plus a
thread-safe :meth:`~TrioCall.cancel` that cancels the task's scope (so an MCP
request in flight sends ``notifications/cancelled``, as on Trio).

Why a thread and not Trio's guest mode on asyncio: guest mode drives Trio from
the host loop's callbacks, so only one Trio run can live on a loop and it must
outlive every client; it does not help synchronous callers at all. A thread
serves both bridges with one mechanism, keeps Trio's scheduling intact (no
cooperative waiting on a foreign loop), and a blocked asyncio callback never
stalls the MCP session. The cost is one thread per bridge and a hop between
threads per call (``TrioToken.run_sync_soon``, which never blocks the caller).

Nothing here is specific to MCP: :mod:`mcp_actors.aio` and :mod:`mcp_actors.sync`
build clients and servers on it.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import trio

T = TypeVar("T")

#: Seconds :meth:`TrioThread.start` waits for the new thread's Trio run to come up.
_START_TIMEOUT = 30.0


class TrioCall(Generic[T]):
    """One async function running in a :class:`TrioThread`; its outcome is :attr:`future`.

    The future ends with the function's result, its exception, or
    ``concurrent.futures.CancelledError`` when the call was cancelled (by
    :meth:`cancel` or because the thread stopped).
    """

    def __init__(self, thread: TrioThread, function: Callable[[], Awaitable[T]]) -> None:
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._thread = thread
        self._function = function
        self._scope: trio.CancelScope | None = None
        self._cancel_requested = False

    def cancel(self) -> None:
        """Cancel the call's Trio task (thread-safe, never blocks; no-op once it ended)."""
        self._thread.run_soon(self._cancel_in_trio)

    def result(self, timeout: float | None = None) -> T:
        """Block until the call ends; its result, or raise its exception."""
        return self.future.result(timeout)

    def _cancel_in_trio(self) -> None:
        self._cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()

    async def run(self) -> None:
        """Run the function in Trio and settle :attr:`future` (the task body)."""
        if not self.future.set_running_or_notify_cancel():
            return
        with trio.CancelScope() as scope:
            self._scope = scope
            if self._cancel_requested:
                scope.cancel()
            try:
                value = await self._function()
            except trio.Cancelled:
                raise
            except Exception as error:
                self.future.set_exception(error)
                return
            else:
                self.future.set_result(value)
                return
        self.future.set_exception(concurrent.futures.CancelledError())


class TrioThread:
    """A daemon thread running ``trio.run`` with a long-lived nursery for submitted work."""

    def __init__(self, name: str = "mcp-actors-trio") -> None:
        self._name = name
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._stopping: trio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._crash: BaseException | None = None
        #: Settles when the Trio run is over and the thread about to end.
        self.finished: concurrent.futures.Future[None] = concurrent.futures.Future()

    def start(self) -> TrioThread:
        """Start the thread and wait until its Trio run accepts work; returns self."""
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT) or self._token is None:
            raise RuntimeError(f"{self._name}: the Trio thread did not start") from self._crash
        return self

    def submit(self, function: Callable[[], Awaitable[T]]) -> TrioCall[T]:
        """Run ``function()`` as a task of the thread's nursery (thread-safe, non-blocking).

        Submitted after the run ended, the call is cancelled at once.
        """
        call = TrioCall(self, function)
        if not self.run_soon(self._start_call, call):
            call.future.cancel()
        return call

    def run_soon(self, function: Callable[..., object], *args: Any) -> bool:
        """Call ``function(*args)`` in the Trio thread soon; False once the run is over."""
        if self._token is None:
            raise RuntimeError(f"{self._name} is not running")
        try:
            self._token.run_sync_soon(function, *args)
        except trio.RunFinishedError:
            return False
        return True

    def stop_soon(self) -> None:
        """Cancel whatever still runs and end the Trio run (never blocks; see :attr:`finished`)."""
        if self._stopping is not None:
            self.run_soon(self._stopping.set)

    def stop(self, timeout: float | None = None) -> None:
        """:meth:`stop_soon`, then wait for the thread to end (not from the thread itself)."""
        self.stop_soon()
        if not self.in_thread:
            self._thread.join(timeout)

    @property
    def in_thread(self) -> bool:
        """Whether the caller is this Trio thread itself (blocking on it would deadlock)."""
        return threading.current_thread() is self._thread

    def _start_call(self, call: TrioCall[Any]) -> None:
        if self._nursery is None:
            call.future.cancel()
            return
        self._nursery.start_soon(call.run)

    def _main(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as crash:  # reported by start(); the thread must not print it
            self._crash = crash
        finally:
            self._ready.set()
            self.finished.set_result(None)

    async def _serve(self) -> None:
        self._stopping = trio.Event()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self._stopping.wait()
            nursery.cancel_scope.cancel()
        self._nursery = None
