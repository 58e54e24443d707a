"""The client a user holds: ``async with open_client(target) as client: ...``.

:func:`open_client` connects to a target (a server process, an in-process
Server, any message stream), starts the client's session actor, finds out which
era the server speaks (:mod:`.era`: ``server/discover`` first, ``initialize`` for
a legacy server) and yields a :class:`Client`. Every call is an outbound-call
actor: it has a timeout, may report progress, and when it is abandoned — timed
out, or the awaiting task cancelled — the server is told (``notifications/cancelled``;
over HTTP in the modern era, the request's response stream is closed).

In the modern era every request carries the version, the capabilities and the
client's name in ``params._meta``; a -32022 (unsupported version) naming a
version we speak earns one retry at it. Results whose ``resultType`` is absent
read as complete.

List methods (``list_tools``, ``list_resources``, ``list_prompts``...) follow
pagination cursors and return everything, as a :class:`~.listing.Listing` that
carries the server's caching hints. What the client offers the server
(sampling, elicitation, roots, log and list-changed callbacks) is given as
:class:`~.handlers.ClientHandlers`; the capabilities follow from it. The same
handlers answer a modern server's ``input_required`` results (MRTR, see
:mod:`.input_required`): ``call_tool``, ``get_prompt`` and ``read_resource`` retry
with the answers and return the final result.

:class:`Client` is the MCP methods; the session they share and the path every
request takes (middleware, the modern ``_meta``, the one retry) are its base,
:class:`~.connection.Connection`.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import attrs
import msgspec
import trio
from msgspec import UNSET, UnsetType

from .._version import __version__
from ..protocol import skills as s
from ..protocol import types as t
from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError, ProtocolViolation
from ..protocol.extensions import declared_settings
from ..protocol.jsonrpc import RequestId
from ..protocol.lifecycle import Phase, SessionState
from ..protocol.versions import SUPPORTED
from ..runtime.config import SessionConfig
from ..runtime.groups import unwrapped
from ..runtime.middleware import Middleware, check_middleware
from ..runtime.session import Session
from .connection import Connection, Timeout
from .era import Era, EraChoice, ModernRequests, initialize, probe
from .handlers import (
    ClientDispatcher,
    ClientHandlers,
    ListChangedHandler,
    LogHandler,
    ProgressHandler,
    as_root,
    maybe_await,
    merge_capabilities,
)
from .headers import request_headers
from .listen import Listener, ListenEvent
from .listing import Listing
from .skills import SkillVerificationError, content_bytes, verify_skill_file
from .targets import Target, connect, with_auth, with_headers
from .tasks import ToolTask, declares_tasks, start_tool_task

if TYPE_CHECKING:
    import httpx

__all__ = [
    "Client",
    "ClientHandlers",
    "Era",
    "ListChangedHandler",
    "ListenEvent",
    "Listener",
    "Listing",
    "LogHandler",
    "ProgressHandler",
    "open_client",
]

log = logging.getLogger("mcp_actors.client")

_encode = msgspec.json.Encoder().encode
#: Seconds an ``unsubscribe`` may take when a ``subscribe`` block exits.
_UNSUBSCRIBE_TIMEOUT = 5.0


@attrs.define(eq=False)
class Client(Connection):
    """A connected MCP client: the methods of MCP (tools, resources, prompts, completion,
    logging, roots, skills) over its :class:`~.connection.Connection`."""

    async def ping(self, *, timeout: Timeout = UNSET) -> None:
        """Round-trip a ``ping``; raises on timeout or error (the modern era has no ``ping``:
        :class:`ProtocolViolation`)."""
        await self._call("ping", timeout=timeout)

    # -- tools -----------------------------------------------------------------------

    async def list_tools(self, *, timeout: Timeout = UNSET) -> Listing[t.Tool]:
        """Every tool the server offers, following pagination cursors.

        Over Streamable HTTP in the modern era the transport learns each tool's
        ``x-mcp-header`` annotations (mirrored into ``Mcp-Param-*`` headers when the
        tool is called), and a tool whose annotations are invalid is left out, with a
        warning in the log: no call of it could be routed correctly.
        """
        tools: Listing[t.Tool] = await self._list_all("tools/list", "tools", timeout)
        table = self.session.transport.tool_headers
        if self.modern is not None and table is not None:
            invalid = table.learn((tool.name, tool.input_schema) for tool in tools)
            if invalid:
                tools[:] = [tool for tool in tools if tool.name not in invalid]
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
        """Call a tool and return its result (an ``isError`` result is returned, not raised).

        On a client declaring the tasks extension, a call the server runs as a task is
        followed to its end (see :mod:`.tasks`): ``on_progress`` hears its status,
        ``timeout`` bounds the whole wait, and giving up cancels the task.
        """
        if self.modern is not None and declares_tasks(self.modern.capabilities):
            seconds = timeout if isinstance(timeout, (int, float)) else math.inf
            with trio.fail_after(seconds):  # trio.TooSlowError, the task cancelled
                progress = _progress_adapter(on_progress) if on_progress is not None else None
                handle = await start_tool_task(
                    self, name, arguments, meta, self._dispatcher.answer, on_progress=progress
                )
                return await handle.result(on_progress=on_progress)
        params = t.CallToolParams(
            name=name,
            arguments=msgspec.Raw(_encode(arguments)) if arguments is not None else UNSET,
            meta=dict(meta) if meta is not None else UNSET,
        )
        result: t.CallToolResult = await self._call(
            "tools/call",
            params,
            timeout=timeout,
            on_progress=_progress_adapter(on_progress) if on_progress is not None else None,
        )
        return result

    async def start_tool_task(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
    ) -> ToolTask:
        """Call a tool declaring the tasks extension (this request only); a handle on
        the task the server made — or on the result it gave at once (see :mod:`.tasks`)."""
        return await start_tool_task(self, name, arguments, meta, self._dispatcher.answer)

    def tool_task(self, task_id: str) -> ToolTask:
        """A handle on a task started earlier, perhaps by another connection; its
        :meth:`~.tasks.ToolTask.result` answers the task's questions with this client's
        handlers."""
        return ToolTask(self, task_id, fulfil_with=self._dispatcher.answer)

    # -- resources -------------------------------------------------------------------

    async def list_resources(self, *, timeout: Timeout = UNSET) -> Listing[t.Resource]:
        """Every resource the server lists, following pagination cursors."""
        resources: Listing[t.Resource] = await self._list_all(
            "resources/list", "resources", timeout
        )
        return resources

    async def list_resource_templates(
        self, *, timeout: Timeout = UNSET
    ) -> Listing[t.ResourceTemplate]:
        """Every resource template the server lists, following pagination cursors."""
        templates: Listing[t.ResourceTemplate] = await self._list_all(
            "resources/templates/list", "resource_templates", timeout
        )
        return templates

    async def read_resource(self, uri: str, *, timeout: Timeout = UNSET) -> t.ReadResourceResult:
        """Read a resource. An unknown URI raises :class:`McpError`: code -32002 in the
        legacy era, -32602 in the modern one. In the modern era the result's ``ttl_ms``
        and ``cache_scope`` say for how long, and for whom, it may be reused."""
        result: t.ReadResourceResult = await self._call(
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
                    await self._call(
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
                await self._call(
                    "resources/unsubscribe",
                    t.UnsubscribeParams(uri=uri),
                    timeout=_UNSUBSCRIBE_TIMEOUT,
                )
            except (McpError, TimeoutError) as error:
                log.debug("unsubscribe from %s failed: %s", uri, error)

    # -- subscriptions/listen (modern era) -------------------------------------------

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: Sequence[str] = (),
        extra: Mapping[str, Any] | None = None,
        inbox_size: int = 64,
        max_relistens: int = 5,
        timeout: Timeout = UNSET,
    ) -> AsyncIterator[Listener]:
        """Open a ``subscriptions/listen`` stream; yields a :class:`~.listen.Listener` of
        the server's change notifications, once the server acknowledged it.

        The keywords are the filter (``extra``: keys of extensions, e.g. the tasks
        extension's ``taskIds``); ``timeout`` bounds the wait for the acknowledgement
        (default: the session's request timeout). See :mod:`.listen` for the inbox
        bound, coalescing and re-listening. Modern era only: a legacy client gets
        :class:`ProtocolViolation` and uses :meth:`subscribe` and
        ``ClientHandlers.on_list_changed`` instead.
        """
        if self.modern is None:
            raise ProtocolViolation(
                INVALID_REQUEST,
                "subscriptions/listen needs the 2026-07-28 era; in a legacy session use"
                " subscribe() and ClientHandlers(on_list_changed=...)",
            )
        wanted: dict[str, Any] = {
            key: True
            for key, value in (
                ("toolsListChanged", tools_list_changed),
                ("promptsListChanged", prompts_list_changed),
                ("resourcesListChanged", resources_list_changed),
            )
            if value
        }
        if resource_subscriptions:
            wanted["resourceSubscriptions"] = list(resource_subscriptions)
        wanted.update(extra or {})

        async def send(
            params: t.SubscriptionsListenParams, on_id: Callable[[RequestId], None]
        ) -> Any:
            return await self._call("subscriptions/listen", params, timeout=None, on_id=on_id)

        listener = Listener(wanted, send, self._dispatcher.listens, inbox_size, max_relistens)
        seconds = self.session.config.request_timeout if timeout is UNSET else timeout
        with unwrapped():
            async with trio.open_nursery() as nursery:
                nursery.start_soon(listener.run)
                with trio.fail_after(math.inf if seconds is None else seconds):
                    await listener.wait_acknowledged()
                yield listener
                nursery.cancel_scope.cancel()

    # -- prompts ---------------------------------------------------------------------

    async def list_prompts(self, *, timeout: Timeout = UNSET) -> Listing[t.Prompt]:
        """Every prompt the server offers, following pagination cursors."""
        prompts: Listing[t.Prompt] = await self._list_all("prompts/list", "prompts", timeout)
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
        result: t.GetPromptResult = await self._call("prompts/get", params, timeout=timeout)
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
        result: t.CompleteResult = await self._call("completion/complete", params, timeout=timeout)
        return result.completion

    async def set_logging_level(self, level: t.LoggingLevel, *, timeout: Timeout = UNSET) -> None:
        """Ask the server to send log messages at ``level`` and above.

        Legacy era: a ``logging/setLevel`` request. Modern era: no request; every later
        request carries ``level`` in its ``_meta`` (``io.modelcontextprotocol/logLevel``),
        and the messages come with the reply to that request. Until then the modern
        server sends none.
        """
        if self.modern is not None:
            self.modern.log_level = level
            return
        await self._call("logging/setLevel", t.SetLevelParams(level=level), timeout=timeout)

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

    # -- extensions ------------------------------------------------------------------

    def server_extension(self, identifier: str) -> dict[str, Any] | None:
        """The settings the server declared for extension ``identifier`` (``{}``: no
        optional features), or None when it does not offer it."""
        return declared_settings(self.server_capabilities, identifier)

    async def list_skills(self, *, timeout: Timeout = UNSET) -> Listing[s.Skill]:
        """Every skill the server lists (``skills/list``, the Skills extension), each a
        complete manifest; raises :class:`ProtocolViolation` if it does not offer them."""
        skills: Listing[s.Skill] = await self._list_all("skills/list", "skills", timeout)
        return skills

    async def get_skill(self, uri: str, *, timeout: Timeout = UNSET) -> s.Skill:
        """The entry of the skill whose ``SKILL.md`` is ``uri`` (``skills/get``), listed or not."""
        result: s.GetSkillResult = await self._call(
            "skills/get", s.GetSkillParams(uri=uri), timeout=timeout
        )
        return result.skill

    async def read_skill_file(self, skill: s.Skill, uri: str, *, timeout: Timeout = UNSET) -> bytes:
        """Read file ``uri`` of ``skill`` and verify it against the entry (listed, size,
        digest, and for ``SKILL.md`` the frontmatter); raises
        :class:`~.skills.SkillVerificationError` rather than return content that differs."""
        result = await self.read_resource(uri, timeout=timeout)
        if len(result.contents) != 1:
            raise SkillVerificationError(f"{uri}: {len(result.contents)} contents, expected one")
        data = content_bytes(result.contents[0])
        verify_skill_file(skill, uri, data)
        return data

    async def read_directory(self, uri: str, *, timeout: Timeout = UNSET) -> list[t.Resource]:
        """The direct children of directory resource ``uri`` (``resources/directory/read``,
        every page), subdirectories with ``mimeType`` ``inode/directory``."""
        children: list[t.Resource] = []
        cursor: str | UnsetType = UNSET
        seen: set[str] = set()
        while True:
            params = s.ReadDirectoryParams(uri=uri, cursor=cursor)
            page = await self._call("resources/directory/read", params, timeout=timeout)
            children.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                return children
            if cursor in seen:
                raise McpError(INTERNAL_ERROR, f"{uri}: the server repeated cursor {cursor!r}")
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
    era: Era = "auto",
    protocol_version: str | None = None,
    supported_versions: tuple[str, ...] = SUPPORTED,
    initialize_timeout: float = 30.0,
    discover_timeout: float = 10.0,
    middleware: Sequence[Middleware] = (),
    auth: httpx.Auth | None = None,
    headers: Mapping[str, str] | None = None,
    bearer: str | None = None,
) -> AsyncIterator[Client]:
    """Connect to ``target``, find out which era the server speaks, and yield a :class:`Client`.

    ``target`` is a server process (``StdioTarget`` or ``"stdio:CMD ARGS"``), an
    in-process ``Server`` (or ``"MODULE:ATTR"``), or any open ``MessageStream``.
    The capabilities declared are those ``handlers`` imply (sampling, elicitation,
    roots), with any field of ``capabilities`` taking precedence.

    ``era="auto"`` probes with ``server/discover`` (for up to ``discover_timeout``
    seconds) and speaks the modern era (2026-07-28) to a server that answers it, the
    legacy one (``initialize``) to any other. ``era="modern"`` never falls back (a
    legacy server is an error); ``era="legacy"`` goes straight to ``initialize``. A
    ``protocol_version`` pins that version and its era (``"2025-11-25"`` and older:
    legacy, offered in ``initialize``; ``"2026-07-28"``: modern). Over the legacy
    HTTP+SSE transport there is only the legacy era. ``supported_versions`` are the
    legacy versions accepted in the server's ``initialize`` answer.

    ``middleware`` runs around every call the client makes and every request its
    server sends it, the first outermost (see :mod:`~mcp_actors.runtime.middleware`);
    the handshake (``initialize``, ``server/discover``) goes out before it applies.

    ``auth`` authorizes every HTTP request to a URL target: pass an
    :class:`mcp_actors.auth.client.OAuthClient` to call a server protected by OAuth
    (it discovers the authorization server on the first ``401``, obtains a token and
    sends the request again), or any other ``httpx.Auth``. With ``auth``, the first
    request may wait for a person to log in: ``discover_timeout`` and
    ``initialize_timeout`` then do not apply (the OAuth client bounds each of its
    own steps).

    ``headers`` go on every request to a URL target (``{"X-Api-Key": "..."}``);
    ``bearer`` sends ``Authorization: Bearer TOKEN`` (e.g. from ``mcp-actors auth
    token``), not with ``auth``. Both are checked first (:mod:`~.headers`).

    Leaving the block closes the session and shuts the server down (a launched
    process: stdin closed, then SIGTERM, then SIGKILL).
    """
    layers = check_middleware(middleware)
    choice = EraChoice.of(era, protocol_version, supported_versions)
    handshake_timeouts: tuple[float | None, float | None] = (discover_timeout, initialize_timeout)
    if headers is not None or bearer is not None:
        target = with_headers(target, request_headers(headers, bearer), auth)
    if auth is not None:
        target = with_auth(target, auth)
        handshake_timeouts = (None, None)
    handlers = handlers or ClientHandlers()
    capabilities = merge_capabilities(handlers.capabilities(), capabilities)
    client_info = t.Implementation(name=name, version=version)
    with unwrapped():
        async with trio.open_nursery() as nursery, connect(target, nursery) as stream:
            dispatcher = ClientDispatcher(handlers, layers)
            state = SessionState("client", capabilities, supported_versions)
            session = Session(stream, state, dispatcher, config or SessionConfig())
            dispatcher.session = session
            await nursery.start(session.run)
            try:
                client = None
                if choice.modern_version is not None and not stream.legacy_only:
                    modern = ModernRequests(choice.modern_version, capabilities, client_info)
                    may_fall_back = choice.legacy_version is not None
                    discovered = await probe(
                        session, modern, handshake_timeouts[0], may_fall_back=may_fall_back
                    )
                    if discovered is not None:
                        state.peer_capabilities = discovered.capabilities
                        state.peer_info = discovered.implementation()
                        state.phase = Phase.OPERATING
                        client = Client(
                            session, discover_result=discovered, modern=modern, middleware=layers
                        )
                if client is None:
                    if choice.legacy_version is None:
                        raise McpError(
                            INTERNAL_ERROR,
                            "era='modern', but this transport speaks only the legacy era",
                        )
                    answer = await initialize(
                        session, choice.legacy_version, client_info, handshake_timeouts[1]
                    )
                    client = Client(session, initialize_result=answer, middleware=layers)
                yield client
            finally:
                session.close()
                nursery.cancel_scope.cancel()


def _progress_adapter(
    on_progress: ProgressHandler,
) -> Callable[[t.ProgressParams], Awaitable[None]]:
    async def deliver(progress: t.ProgressParams) -> None:
        total = None if progress.total is UNSET else progress.total
        message = None if progress.message is UNSET else progress.message
        await maybe_await(on_progress(progress.progress, total, message))

    return deliver
