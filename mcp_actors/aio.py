"""mcp_actors from asyncio: a client and a hosted server, with Trio underneath in a thread.

::

    import asyncio
    from mcp_actors import aio

    async def main() -> None:
        async with aio.open_client("stdio:python -m my_server") as client:
            result = await client.call_tool("add", {"a": 1, "b": 2}, timeout=5)
            print(result.structured_content)

    asyncio.run(main())

:func:`open_client` starts a :class:`~mcp_actors.trio_thread.TrioThread` (one per
client), opens the Trio :func:`~mcp_actors.client.client.open_client` in it and
yields an :class:`AsyncClient` whose methods mirror the Trio
:class:`~mcp_actors.client.client.Client`. Each call runs as a Trio task; awaiting
it from asyncio waits without blocking the event loop. **Cancelling the asyncio
task cancels the call**: its Trio task is cancelled, which sends the server
``notifications/cancelled``, and the awaiting task sees ``CancelledError`` once
that happened. Progress callbacks (sync or async functions) and subscription
updates are delivered on the asyncio loop, one at a time: while one is pending,
newer ones coalesce (latest wins), so a busy loop never queues up a backlog. An
exception in a progress callback fails the call, as on Trio.

:func:`serve` hosts a Server from asyncio the same way: its Trio run lives in a
thread; leaving the ``async with`` block stops it.

Why a thread rather than Trio's guest mode: see :mod:`mcp_actors.trio_thread`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

import trio
from msgspec import UNSET, UnsetType

from .client.client import Client
from .client.client import open_client as open_trio_client
from .client.forwarding import ServerDescription
from .client.handlers import ProgressHandler
from .client.listing import Listing
from .client.targets import Target
from .held import Held
from .protocol import types as t
from .server.app import Server
from .server.hosting import Endpoint, TransportName, open_hosted
from .trio_thread import TrioCall, TrioThread

__all__ = ["AsyncClient", "Endpoint", "Updates", "open_client", "serve"]

T = TypeVar("T")
Timeout = float | UnsetType | None


async def await_future(future: concurrent.futures.Future[T]) -> T:
    """Await a ``concurrent.futures.Future`` settled by another thread."""
    return await asyncio.wrap_future(future)


async def run_call(call: TrioCall[T]) -> T:
    """Await a call running in a Trio thread; cancelling the awaiting task cancels the call.

    On cancellation the Trio task is cancelled and awaited (so whatever it does on
    the way out — sending ``notifications/cancelled`` — has happened) before
    ``CancelledError`` propagates.
    """
    outcome = asyncio.wrap_future(call.future)
    try:
        return await asyncio.shield(outcome)
    except asyncio.CancelledError:
        call.cancel()
        await asyncio.wait([outcome])
        if not outcome.cancelled():
            outcome.exception()  # retrieved: a cancelled caller does not want it
        raise


async def call_on_loop(loop: asyncio.AbstractEventLoop, function: Callable[[], Any]) -> Any:
    """From Trio: run ``function()`` on the asyncio ``loop``, awaiting what it returns if
    that is awaitable, and return its result (or raise its exception) here.

    Waiting is also the back-pressure: a caller delivering progress or updates this
    way has at most one callback pending on the loop, and what arrives meanwhile
    coalesces on the Trio side (latest wins) instead of piling up in the loop's
    queue. Cancelling the Trio side cancels the asyncio task.
    """
    token = trio.lowlevel.current_trio_token()
    finished = trio.Event()
    outcome: list[tuple[Any, BaseException | None]] = []
    tasks: list[asyncio.Future[Any]] = []

    def settle(value: Any, error: BaseException | None) -> None:
        outcome.append((value, error))
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(finished.set)

    def settle_task(task: asyncio.Future[Any]) -> None:
        if task.cancelled():  # by the asyncio side; Trio must not see asyncio's BaseException
            settle(None, RuntimeError("the asyncio callback was cancelled"))
        elif (error := task.exception()) is not None:
            settle(None, error)
        else:
            settle(task.result(), None)

    def start() -> None:
        try:
            value = function()
        except Exception as error:
            settle(None, error)
            return
        if inspect.isawaitable(value):
            task = asyncio.ensure_future(value)
            tasks.append(task)
            task.add_done_callback(settle_task)
        else:
            settle(value, None)

    def cancel() -> None:
        for task in tasks:
            task.cancel()

    loop.call_soon_threadsafe(start)  # RuntimeError if the loop is closed
    try:
        await finished.wait()
    except trio.Cancelled:
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(cancel)  # after start(): the loop runs callbacks in order
        raise
    value, error = outcome[0]
    if error is not None:
        raise error
    return value


def on_loop(loop: asyncio.AbstractEventLoop) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An adapter making a callback (sync or async, asyncio's) callable from Trio."""

    def adapt(callback: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
        async def bridged(*args: Any) -> Any:
            return await call_on_loop(loop, lambda: callback(*args))

        return bridged

    return adapt


class Updates:
    """The updates of one subscription, as an async iterator on the asyncio loop.

    Coalescing, like the Trio channel it mirrors: updates that arrive while you are
    busy collapse into the latest one (an update says "it changed"; nothing is
    lost). Iteration ends when the subscription or the connection ends.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._latest: t.ResourceUpdatedParams | None = None
        self._ended = False
        self._wakeup = asyncio.Event()

    async def put_from_trio(self, update: t.ResourceUpdatedParams) -> None:
        """Deliver ``update`` from the Trio thread (replaces one not yet taken)."""
        await call_on_loop(self._loop, lambda: self._put(update))

    def end_threadsafe(self) -> None:
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._end)

    def _put(self, update: t.ResourceUpdatedParams) -> None:
        self._latest = update
        self._wakeup.set()

    def _end(self) -> None:
        self._ended = True
        self._wakeup.set()

    def __aiter__(self) -> Updates:
        return self

    async def __anext__(self) -> t.ResourceUpdatedParams:
        while self._latest is None:
            if self._ended:
                raise StopAsyncIteration
            self._wakeup.clear()
            await self._wakeup.wait()
        update, self._latest = self._latest, None
        return update


class AsyncClient(ServerDescription):
    """A connected MCP client for asyncio code; every method mirrors :class:`Client`'s."""

    def __init__(self, client: Client, thread: TrioThread, loop: asyncio.AbstractEventLoop) -> None:
        self._client = client
        self._thread = thread
        self._loop = loop

    async def _run(self, function: Callable[[], Awaitable[T]]) -> T:
        return await run_call(self._thread.submit(function))

    async def ping(self, *, timeout: Timeout = UNSET) -> None:
        await self._run(lambda: self._client.ping(timeout=timeout))

    async def list_tools(self, *, timeout: Timeout = UNSET) -> Listing[t.Tool]:
        return await self._run(lambda: self._client.list_tools(timeout=timeout))

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: Timeout = UNSET,
        on_progress: ProgressHandler | None = None,
        meta: dict[str, Any] | None = None,
    ) -> t.CallToolResult:
        """Call a tool; ``on_progress(progress, total, message)`` runs on this loop."""
        progress = self._on_loop(on_progress) if on_progress is not None else None
        return await self._run(
            lambda: self._client.call_tool(
                name, arguments, timeout=timeout, on_progress=progress, meta=meta
            )
        )

    async def list_resources(self, *, timeout: Timeout = UNSET) -> Listing[t.Resource]:
        return await self._run(lambda: self._client.list_resources(timeout=timeout))

    async def list_resource_templates(
        self, *, timeout: Timeout = UNSET
    ) -> Listing[t.ResourceTemplate]:
        return await self._run(lambda: self._client.list_resource_templates(timeout=timeout))

    async def read_resource(self, uri: str, *, timeout: Timeout = UNSET) -> t.ReadResourceResult:
        return await self._run(lambda: self._client.read_resource(uri, timeout=timeout))

    @asynccontextmanager
    async def subscribe(self, uri: str, *, timeout: Timeout = UNSET) -> AsyncIterator[Updates]:
        """Subscribe to ``uri``; yields its updates as an async iterator (see :class:`Updates`)."""
        updates = Updates(self._loop)
        client = self._client

        def forwarding() -> AbstractAsyncContextManager[None]:
            return client.forward_updates(uri, updates.put_from_trio, timeout=timeout)

        held = Held(forwarding, self._thread, owns_thread=False)
        held.closed.add_done_callback(lambda _: updates.end_threadsafe())
        await await_future(held.opened)
        try:
            yield updates
        finally:
            await await_future(held.release())

    async def list_prompts(self, *, timeout: Timeout = UNSET) -> Listing[t.Prompt]:
        return await self._run(lambda: self._client.list_prompts(timeout=timeout))

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        timeout: Timeout = UNSET,
    ) -> t.GetPromptResult:
        return await self._run(lambda: self._client.get_prompt(name, arguments, timeout=timeout))

    async def complete(
        self,
        ref: t.PromptReference | t.ResourceTemplateReference,
        argument: str,
        value: str = "",
        *,
        context: Mapping[str, str] | None = None,
        timeout: Timeout = UNSET,
    ) -> t.Completion:
        return await self._run(
            lambda: self._client.complete(ref, argument, value, context=context, timeout=timeout)
        )

    async def set_logging_level(self, level: t.LoggingLevel, *, timeout: Timeout = UNSET) -> None:
        await self._run(lambda: self._client.set_logging_level(level, timeout=timeout))

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: type[Any] | None = None,
        timeout: Timeout = UNSET,
    ) -> Any:
        return await self._run(
            lambda: self._client.request(method, params, result_type=result_type, timeout=timeout)
        )

    def _on_loop(self, callback: ProgressHandler) -> ProgressHandler:
        """A progress handler for the Trio side that runs ``callback`` on this loop."""
        bridged: ProgressHandler = on_loop(self._loop)(callback)
        return bridged


@asynccontextmanager
async def open_client(target: Target, **options: Any) -> AsyncIterator[AsyncClient]:
    """Connect to ``target`` from asyncio; yields an :class:`AsyncClient`.

    ``target`` and ``options`` are those of the Trio
    :func:`~mcp_actors.client.client.open_client` (``name``, ``version``, ``era``,
    ``protocol_version``, ``config``, ``initialize_timeout``...). The callbacks of
    ``handlers`` (sampling, elicitation, ``on_log``...) are asyncio code: they run on
    this loop, and a server's cancellation cancels their task. Leaving the block
    closes the session (a launched server process is shut down) and the thread.
    """
    if options.get("handlers") is not None:
        options["handlers"] = options["handlers"].adapted(on_loop(asyncio.get_running_loop()))
    held = Held.in_new_thread(lambda: open_trio_client(target, **options), name="mcp-actors-aio")
    try:
        client = await await_future(held.opened)
        yield AsyncClient(client, held.thread, asyncio.get_running_loop())
    finally:
        await await_future(held.release())


@asynccontextmanager
async def serve(
    server: Server, transport: TransportName = "http", **options: Any
) -> AsyncIterator[Endpoint]:
    """Host ``server`` from asyncio: it serves in a Trio thread until the block ends.

    ``transport`` is ``"http"`` (Streamable HTTP, and legacy SSE at ``/sse``),
    ``"sse"`` or ``"ws"``; ``options`` (``host``, ``port`` — 0 picks a free one —,
    ``path``, ``stateless``...) are those of :func:`mcp_actors.server.hosting.serve`.
    Yields the :class:`Endpoint`, whose ``url`` clients connect to.
    """
    if transport == "stdio":
        raise ValueError("aio.serve hosts network transports; for stdio use server.run()")
    held = Held.in_new_thread(
        lambda: open_hosted(server, transport, **options), name="mcp-actors-aio-serve"
    )
    try:
        yield await await_future(held.opened)
    finally:
        await await_future(held.release())
