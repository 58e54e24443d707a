"""The client a user holds: ``async with open_client(target) as client: ...``.

:func:`open_client` connects to a target (a server process, an in-process
Server, any message stream), starts the client's session actor, performs the
``initialize`` handshake and yields a :class:`Client`. Every call is an
outbound-call actor: it has a timeout, may report progress, and when it is
abandoned — timed out, or the awaiting task cancelled — the server is sent
``notifications/cancelled``.

List methods (``list_tools``, ``list_resources``, ``list_prompts``...) follow
pagination cursors and return everything. What the client offers the server
(sampling, elicitation, roots, log and list-changed callbacks) is given as
:class:`~.handlers.ClientHandlers`; the capabilities follow from it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import attrs
import msgspec
import trio
from msgspec import UNSET, UnsetType

from .._version import __version__
from ..protocol import types as t
from ..protocol.errors import INTERNAL_ERROR, McpError
from ..protocol.lifecycle import Phase, SessionState
from ..protocol.versions import LATEST, SUPPORTED
from ..runtime.config import SessionConfig
from ..runtime.groups import unwrapped
from ..runtime.session import Session
from .handlers import (
    ClientDispatcher,
    ClientHandlers,
    ListChangedHandler,
    LogHandler,
    ProgressHandler,
    _maybe_await,
    as_root,
    merge_capabilities,
)
from .targets import Target, connect

__all__ = [
    "Client",
    "ClientHandlers",
    "ListChangedHandler",
    "LogHandler",
    "ProgressHandler",
    "open_client",
]

log = logging.getLogger("mcp_actors.client")

T = TypeVar("T")
Timeout = float | UnsetType | None
_encode = msgspec.json.Encoder().encode
#: Seconds an ``unsubscribe`` may take when a ``subscribe`` block exits.
_UNSUBSCRIBE_TIMEOUT = 5.0


@attrs.define(eq=False)
class Client:
    """A connected, initialized MCP client session."""

    session: Session
    initialize_result: t.InitializeResult

    @property
    def server_info(self) -> t.Implementation:
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> t.ServerCapabilities:
        return self.initialize_result.capabilities

    @property
    def protocol_version(self) -> str:
        return self.session.state.revision.name

    @property
    def instructions(self) -> str | None:
        instructions = self.initialize_result.instructions
        return None if instructions is UNSET else instructions

    @property
    def _dispatcher(self) -> ClientDispatcher:
        dispatcher = self.session.dispatcher
        assert isinstance(dispatcher, ClientDispatcher)
        return dispatcher

    async def ping(self, *, timeout: Timeout = UNSET) -> None:
        """Round-trip a ``ping``; raises on timeout or error."""
        await self.session.request("ping", timeout=timeout)

    # -- tools -----------------------------------------------------------------------

    async def list_tools(self, *, timeout: Timeout = UNSET) -> list[t.Tool]:
        """Every tool the server offers, following pagination cursors."""
        tools: list[t.Tool] = await self._list_all("tools/list", "tools", timeout)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: Timeout = UNSET,
        on_progress: ProgressHandler | None = None,
        meta: dict[str, Any] | None = None,
    ) -> t.CallToolResult:
        """Call a tool and return its result (an ``isError`` result is returned, not raised)."""
        params = t.CallToolParams(
            name=name,
            arguments=msgspec.Raw(_encode(arguments)) if arguments is not None else UNSET,
            meta=dict(meta) if meta is not None else UNSET,
        )
        result: t.CallToolResult = await self.session.request(
            "tools/call",
            params,
            timeout=timeout,
            on_progress=_progress_adapter(on_progress) if on_progress is not None else None,
        )
        return result

    # -- resources -------------------------------------------------------------------

    async def list_resources(self, *, timeout: Timeout = UNSET) -> list[t.Resource]:
        """Every resource the server lists, following pagination cursors."""
        resources: list[t.Resource] = await self._list_all("resources/list", "resources", timeout)
        return resources

    async def list_resource_templates(
        self, *, timeout: Timeout = UNSET
    ) -> list[t.ResourceTemplate]:
        """Every resource template the server lists, following pagination cursors."""
        templates: list[t.ResourceTemplate] = await self._list_all(
            "resources/templates/list", "resource_templates", timeout
        )
        return templates

    async def read_resource(self, uri: str, *, timeout: Timeout = UNSET) -> t.ReadResourceResult:
        """Read a resource; an unknown URI raises :class:`McpError` with code -32002."""
        result: t.ReadResourceResult = await self.session.request(
            "resources/read", t.ReadResourceParams(uri=uri), timeout=timeout
        )
        return result

    @asynccontextmanager
    async def subscribe(
        self, uri: str, *, timeout: Timeout = UNSET
    ) -> AsyncIterator[trio.MemoryReceiveChannel[t.ResourceUpdatedParams]]:
        """Subscribe to ``uri``; yields a channel of its ``notifications/resources/updated``.

        ::

            async with client.subscribe("file:///log") as updates:
                async for update in updates:
                    text = (await client.read_resource(update.uri)).contents[0].text

        The channel is unbuffered and *coalescing*: updates that arrive while you
        are busy collapse into one, the latest, so a slow reader never holds up
        the session (an update says "it changed", so nothing is lost). Several
        blocks may watch the same URI; the server is sent ``resources/subscribe``
        for the first and ``resources/unsubscribe`` when the last one exits.
        """
        dispatcher = self._dispatcher
        send, receive = trio.open_memory_channel[t.ResourceUpdatedParams](0)

        async def deliver(update: t.ResourceUpdatedParams) -> None:
            # If the reader closed its end, updates are dropped until the block exits.
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await send.send(update)

        subscription = dispatcher.updates.subscribe(uri, deliver, self.session.start_actor)
        try:
            if dispatcher.add_interest(uri):
                try:
                    await self.session.request(
                        "resources/subscribe", t.SubscribeParams(uri=uri), timeout=timeout
                    )
                except BaseException:
                    dispatcher.drop_interest(uri)
                    raise
            try:
                with receive:
                    yield receive
            finally:
                if dispatcher.drop_interest(uri):
                    await self._unsubscribe_quietly(uri)
        finally:
            subscription.cancel()
            send.close()

    @asynccontextmanager
    async def forward_updates(
        self,
        uri: str,
        deliver: Callable[[t.ResourceUpdatedParams], Awaitable[None]],
        *,
        timeout: Timeout = UNSET,
    ) -> AsyncIterator[None]:
        """Subscribe to ``uri`` and await ``deliver(update)`` for each update during the block.

        For code outside Trio (the asyncio and sync fronts), which hand the update
        over to another thread: updates arriving while ``deliver`` runs coalesce.
        """
        async with self.subscribe(uri, timeout=timeout) as updates, trio.open_nursery() as nursery:

            async def pump() -> None:
                async for update in updates:
                    await deliver(update)

            nursery.start_soon(pump)
            yield
            nursery.cancel_scope.cancel()

    async def _unsubscribe_quietly(self, uri: str) -> None:
        if self.session.state.phase is Phase.CLOSED:
            return
        with trio.CancelScope(shield=True):
            try:
                await self.session.request(
                    "resources/unsubscribe",
                    t.UnsubscribeParams(uri=uri),
                    timeout=_UNSUBSCRIBE_TIMEOUT,
                )
            except (McpError, TimeoutError) as error:
                log.debug("unsubscribe from %s failed: %s", uri, error)

    # -- prompts ---------------------------------------------------------------------

    async def list_prompts(self, *, timeout: Timeout = UNSET) -> list[t.Prompt]:
        """Every prompt the server offers, following pagination cursors."""
        prompts: list[t.Prompt] = await self._list_all("prompts/list", "prompts", timeout)
        return prompts

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        timeout: Timeout = UNSET,
    ) -> t.GetPromptResult:
        """Render a prompt. Argument values are sent as strings (``3`` -> ``"3"``)."""
        params = t.GetPromptParams(
            name=name,
            arguments=(
                {key: _as_argument(value) for key, value in arguments.items()}
                if arguments is not None
                else UNSET
            ),
        )
        result: t.GetPromptResult = await self.session.request(
            "prompts/get", params, timeout=timeout
        )
        return result

    # -- completion and logging ------------------------------------------------------

    async def complete(
        self,
        ref: t.PromptReference | t.ResourceTemplateReference,
        argument: str,
        value: str = "",
        *,
        context: Mapping[str, str] | None = None,
        timeout: Timeout = UNSET,
    ) -> t.Completion:
        """Suggestions for ``argument`` of a prompt or resource template, given its ``value``.

        ``context`` holds arguments already chosen; servers see it from protocol
        revision 2025-06-18 on (it is left out for older ones, which have no field
        for it).
        """
        carries_context = self.session.state.revision.completion_context
        params = t.CompleteParams(
            ref=ref,
            argument=t.CompletionArgument(name=argument, value=value),
            context=(
                t.CompletionContext(arguments=dict(context))
                if context is not None and carries_context
                else UNSET
            ),
        )
        result: t.CompleteResult = await self.session.request(
            "completion/complete", params, timeout=timeout
        )
        return result.completion

    async def set_logging_level(self, level: t.LoggingLevel, *, timeout: Timeout = UNSET) -> None:
        """Ask the server to send log messages at ``level`` and above (``logging/setLevel``)."""
        await self.session.request(
            "logging/setLevel", t.SetLevelParams(level=level), timeout=timeout
        )

    # -- roots -----------------------------------------------------------------------

    @property
    def roots(self) -> list[t.Root]:
        """The roots this client offers (``ClientHandlers.roots``)."""
        return list(self._dispatcher.roots)

    async def set_roots(self, roots: Sequence[t.Root | str]) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``).

        Needs ``ClientHandlers(roots=...)`` at connection time (the ``roots``
        capability); otherwise :class:`ProtocolViolation` is raised.
        """
        if self._dispatcher.handlers.roots is None:
            self.session.state.check_outbound("notifications/roots/list_changed")
        self._dispatcher.roots = [as_root(root) for root in roots]
        await self.session.notify("notifications/roots/list_changed")

    # -- anything else ---------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: type[T] | None = None,
        timeout: Timeout = UNSET,
    ) -> Any:
        """Send any request (a custom method too) and return its decoded result."""
        return await self.session.request(method, params, result_type=result_type, timeout=timeout)

    async def _list_all(self, method: str, field: str, timeout: Timeout) -> list[Any]:
        """Every item of a paginated list method, following ``nextCursor`` to the end."""
        items: list[Any] = []
        cursor: str | UnsetType = UNSET
        seen: set[str] = set()
        while True:
            page = await self.session.request(
                method, t.PaginatedParams(cursor=cursor), timeout=timeout
            )
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if not cursor:
                return items
            if cursor in seen:
                raise McpError(INTERNAL_ERROR, f"{method}: the server repeated cursor {cursor!r}")
            seen.add(cursor)


def _as_argument(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


@asynccontextmanager
async def open_client(
    target: Target,
    *,
    name: str = "mcp-actors",
    version: str = __version__,
    capabilities: t.ClientCapabilities | None = None,
    handlers: ClientHandlers | None = None,
    config: SessionConfig | None = None,
    protocol_version: str = LATEST,
    supported_versions: tuple[str, ...] = SUPPORTED,
    initialize_timeout: float = 30.0,
) -> AsyncIterator[Client]:
    """Connect to ``target``, initialize, and yield a :class:`Client`.

    ``target`` is a server process (``StdioTarget`` or ``"stdio:CMD ARGS"``), an
    in-process ``Server`` (or ``"MODULE:ATTR"``), or any open ``MessageStream``.
    The capabilities declared are those ``handlers`` imply (sampling, elicitation,
    roots), with any field of ``capabilities`` taking precedence.
    Leaving the block closes the session and shuts the server down (a launched
    process: stdin closed, then SIGTERM, then SIGKILL).
    """
    handlers = handlers or ClientHandlers()
    capabilities = merge_capabilities(handlers.capabilities(), capabilities)
    with unwrapped():
        async with trio.open_nursery() as nursery, connect(target, nursery) as stream:
            dispatcher = ClientDispatcher(handlers)
            state = SessionState("client", capabilities, supported_versions)
            session = Session(stream, state, dispatcher, config or SessionConfig())
            dispatcher.session = session
            await nursery.start(session.run)
            try:
                params = t.InitializeParams(
                    protocol_version=protocol_version,
                    capabilities=capabilities,
                    client_info=t.Implementation(name=name, version=version),
                )
                # The engine records the server's answer as it decodes it (or raises).
                result = await session.request("initialize", params, timeout=initialize_timeout)
                await session.notify("notifications/initialized")
                yield Client(session, result)
            finally:
                session.close()
                nursery.cancel_scope.cancel()


def _progress_adapter(
    on_progress: ProgressHandler,
) -> Callable[[t.ProgressParams], Awaitable[None]]:
    async def deliver(progress: t.ProgressParams) -> None:
        total = None if progress.total is UNSET else progress.total
        message = None if progress.message is UNSET else progress.message
        await _maybe_await(on_progress(progress.progress, total, message))

    return deliver
