"""mcp_actors from plain synchronous code: a blocking client and a hosted server.

::

    from mcp_actors import sync

    with sync.open_client("stdio:python -m my_server") as client:
        result = client.call_tool("add", {"a": 1, "b": 2}, timeout=5)
        print(result.structured_content)

:func:`open_client` starts a :class:`~mcp_actors.trio_thread.TrioThread` (one per
client), opens the Trio :func:`~mcp_actors.client.client.open_client` in it and
yields a :class:`SyncClient` whose methods mirror the Trio
:class:`~mcp_actors.client.client.Client`, blocking until the answer comes. The
client may be used from several threads at once.

Cancelling: a call gives up after ``timeout`` seconds; Ctrl-C
(``KeyboardInterrupt``) while a call blocks cancels it; and
:meth:`SyncClient.start_call_tool` returns a :class:`PendingCall` that another
thread (or a progress callback) can :meth:`~PendingCall.cancel`. Every way sends
the server ``notifications/cancelled``.

Progress callbacks run in a worker thread, one report at a time per call (they may
block, and may use the client). :func:`serve` hosts a Server in a Trio thread for
the duration of a ``with`` block.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, Generic, TypeVar

import trio
from msgspec import UNSET, UnsetType

from .client.client import Client
from .client.client import open_client as open_trio_client
from .client.forwarding import ServerDescription
from .client.listing import Listing
from .client.targets import Target
from .held import Held
from .protocol import types as t
from .server.app import Server
from .server.hosting import Endpoint, TransportName, open_hosted
from .trio_thread import TrioCall, TrioThread

__all__ = ["Endpoint", "PendingCall", "SyncClient", "SyncUpdates", "open_client", "serve"]

T = TypeVar("T")
Timeout = float | UnsetType | None
#: ``on_progress(progress, total, message)``, a plain function.
SyncProgressHandler = Callable[[float, float | None, str | None], object]


class PendingCall(Generic[T]):
    """A call in flight: wait for it with :meth:`result`, or :meth:`cancel` it."""

    def __init__(self, call: TrioCall[T]) -> None:
        self._call = call

    def result(self, timeout: float | None = None) -> T:
        """Block until the call ends (Ctrl-C cancels it); its result, or raise its error.

        ``timeout`` bounds only this wait (``TimeoutError``; the call goes on).
        """
        try:
            return self._call.result(timeout)
        except KeyboardInterrupt:
            self.cancel()
            raise

    def cancel(self) -> None:
        """Cancel the call and wait until the server was told (``notifications/cancelled``)."""
        self._call.cancel()
        concurrent.futures.wait([self._call.future])

    def done(self) -> bool:
        return self._call.future.done()

    def cancelled(self) -> bool:
        """Whether the call ended by being cancelled."""
        future = self._call.future
        return future.done() and isinstance(future.exception(), concurrent.futures.CancelledError)


class SyncUpdates:
    """The updates of one subscription, as a blocking iterator (coalescing, latest wins).

    Iteration ends when the subscription or the connection ends.
    """

    def __init__(self) -> None:
        self._latest: t.ResourceUpdatedParams | None = None
        self._ended = False
        self._changed = threading.Condition()

    async def put_from_trio(self, update: t.ResourceUpdatedParams) -> None:
        """Deliver ``update`` (replaces one not yet taken); never blocks for long."""
        with self._changed:
            self._latest = update
            self._changed.notify_all()

    def end(self) -> None:
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def __iter__(self) -> Iterator[t.ResourceUpdatedParams]:
        return self

    def __next__(self) -> t.ResourceUpdatedParams:
        with self._changed:
            self._changed.wait_for(lambda: self._latest is not None or self._ended)
            if self._latest is None:
                raise StopIteration
            update, self._latest = self._latest, None
            return update


class SyncClient(ServerDescription):
    """A connected MCP client for synchronous code; every method mirrors :class:`Client`'s."""

    def __init__(self, client: Client, thread: TrioThread) -> None:
        self._client = client
        self._thread = thread

    def _start(self, function: Callable[[], Awaitable[T]]) -> PendingCall[T]:
        if self._thread.in_thread:
            raise RuntimeError("a SyncClient cannot be called from its own Trio thread")
        return PendingCall(self._thread.submit(function))

    def _run(self, function: Callable[[], Awaitable[T]]) -> T:
        return self._start(function).result()

    def ping(self, *, timeout: Timeout = UNSET) -> None:
        self._run(lambda: self._client.ping(timeout=timeout))

    def list_tools(self, *, timeout: Timeout = UNSET) -> Listing[t.Tool]:
        return self._run(lambda: self._client.list_tools(timeout=timeout))

    def start_call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: Timeout = UNSET,
        on_progress: SyncProgressHandler | None = None,
        meta: dict[str, Any] | None = None,
    ) -> PendingCall[t.CallToolResult]:
        """Start a tool call and return at once; see :class:`PendingCall`."""
        progress = in_worker_thread(on_progress) if on_progress is not None else None
        return self._start(
            lambda: self._client.call_tool(
                name, arguments, timeout=timeout, on_progress=progress, meta=meta
            )
        )

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: Timeout = UNSET,
        on_progress: SyncProgressHandler | None = None,
        meta: dict[str, Any] | None = None,
    ) -> t.CallToolResult:
        """Call a tool and block until its result (an ``isError`` result is returned)."""
        pending = self.start_call_tool(
            name, arguments, timeout=timeout, on_progress=on_progress, meta=meta
        )
        return pending.result()

    def list_resources(self, *, timeout: Timeout = UNSET) -> Listing[t.Resource]:
        return self._run(lambda: self._client.list_resources(timeout=timeout))

    def list_resource_templates(self, *, timeout: Timeout = UNSET) -> Listing[t.ResourceTemplate]:
        return self._run(lambda: self._client.list_resource_templates(timeout=timeout))

    def read_resource(self, uri: str, *, timeout: Timeout = UNSET) -> t.ReadResourceResult:
        return self._run(lambda: self._client.read_resource(uri, timeout=timeout))

    @contextmanager
    def subscribe(self, uri: str, *, timeout: Timeout = UNSET) -> Iterator[SyncUpdates]:
        """Subscribe to ``uri``; yields its updates as a blocking iterator."""
        updates = SyncUpdates()
        client = self._client

        def forwarding() -> AbstractAsyncContextManager[None]:
            return client.forward_updates(uri, updates.put_from_trio, timeout=timeout)

        held = Held(forwarding, self._thread, owns_thread=False)
        held.closed.add_done_callback(lambda _: updates.end())
        held.opened.result()
        try:
            yield updates
        finally:
            held.release().result()

    def list_prompts(self, *, timeout: Timeout = UNSET) -> Listing[t.Prompt]:
        return self._run(lambda: self._client.list_prompts(timeout=timeout))

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        timeout: Timeout = UNSET,
    ) -> t.GetPromptResult:
        return self._run(lambda: self._client.get_prompt(name, arguments, timeout=timeout))

    def complete(
        self,
        ref: t.PromptReference | t.ResourceTemplateReference,
        argument: str,
        value: str = "",
        *,
        context: Mapping[str, str] | None = None,
        timeout: Timeout = UNSET,
    ) -> t.Completion:
        return self._run(
            lambda: self._client.complete(ref, argument, value, context=context, timeout=timeout)
        )

    def set_logging_level(self, level: t.LoggingLevel, *, timeout: Timeout = UNSET) -> None:
        self._run(lambda: self._client.set_logging_level(level, timeout=timeout))

    def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: type[Any] | None = None,
        timeout: Timeout = UNSET,
    ) -> Any:
        return self._run(
            lambda: self._client.request(method, params, result_type=result_type, timeout=timeout)
        )


def in_worker_thread(callback: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """A callback made callable from Trio: it runs in a worker thread, and may block."""

    async def bridged(*args: Any) -> Any:
        # abandon_on_cancel: a callback that cancels its own call must not deadlock it
        return await trio.to_thread.run_sync(lambda: callback(*args), abandon_on_cancel=True)

    return bridged


@contextmanager
def open_client(target: Target, **options: Any) -> Iterator[SyncClient]:
    """Connect to ``target``; yields a :class:`SyncClient` (options as the Trio open_client:
    ``era="auto"|"modern"|"legacy"``, ``protocol_version``, ``name``, ``config``...).

    The callbacks of ``handlers`` (sampling, elicitation, ``on_log``...) are plain
    functions; each runs in a worker thread.
    """
    if options.get("handlers") is not None:
        options["handlers"] = options["handlers"].adapted(in_worker_thread)
    held = Held.in_new_thread(lambda: open_trio_client(target, **options), name="mcp-actors-sync")
    try:
        yield SyncClient(held.opened.result(), held.thread)
    finally:
        held.release().result()


@contextmanager
def serve(server: Server, transport: TransportName = "http", **options: Any) -> Iterator[Endpoint]:
    """Host ``server`` in a Trio thread for the duration of the block; yields its Endpoint.

    Options as :func:`mcp_actors.aio.serve`.
    """
    if transport == "stdio":
        raise ValueError("sync.serve hosts network transports; for stdio use server.run()")
    held = Held.in_new_thread(
        lambda: open_hosted(server, transport, **options), name="mcp-actors-sync-serve"
    )
    try:
        yield held.opened.result()
    finally:
        held.release().result()
