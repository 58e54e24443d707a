"""The server a user writes: ``Server(name, version)`` plus decorators, and its per-session side.

:class:`Server` is the registry (tools, and later resources and prompts) shared
by every session. Each connection gets a :class:`ServerSession`: the dispatcher
that answers that client's requests, holds its negotiated revision, capabilities
and logging level, and sends it notifications. Handlers are plain async (or sync)
functions; the runtime turns them into request actors.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

import attrs
import trio
from msgspec import UNSET

from .._version import __version__
from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.lifecycle import Phase, SessionState
from ..protocol.versions import SUPPORTED
from ..runtime.config import SessionConfig
from ..runtime.request import InboundRequest
from ..runtime.session import Session
from ..transports.abc import MessageStream
from .context import LOG_SEVERITY, Context
from .pagination import paginate
from .signature import describe, inspect_tool
from .tools import RegisteredTool

log = logging.getLogger("mcp_actors.server")

F = TypeVar("F", bound=Callable[..., Any])
Handler = Callable[["ServerSession", InboundRequest, Any], Awaitable[Any]]


@attrs.define(eq=False)
class Server:
    """An MCP server: what it offers, shared by all its sessions.

    >>> server = Server("demo", "1.0")
    >>> @server.tool
    ... async def add(a: int, b: int) -> int:
    ...     "Add two integers."
    ...     return a + b
    """

    name: str
    version: str = __version__
    instructions: str | None = None
    title: str | None = None
    #: Items per page of list results (None: everything in one page).
    page_size: int | None = None
    supported_versions: tuple[str, ...] = SUPPORTED
    config: SessionConfig = attrs.field(factory=SessionConfig)
    _tools: dict[str, RegisteredTool] = attrs.field(init=False, factory=dict)
    _sessions: set[ServerSession] = attrs.field(init=False, factory=set)

    # -- registration ----------------------------------------------------------------

    @overload
    def tool(self, function: F) -> F: ...

    @overload
    def tool(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: t.ToolAnnotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        function: F | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: t.ToolAnnotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> F | Callable[[F], F]:
        """Register a function as a tool; usable bare (``@server.tool``) or with options.

        The input schema comes from the parameters' type hints, the description
        from the docstring's first paragraph. A sync function runs in a worker
        thread so it never blocks the event loop.
        """

        def register(function: F) -> F:
            signature = inspect_tool(function, Context)
            definition = t.Tool(
                name=name or function.__name__,
                title=title if title is not None else UNSET,
                description=description or describe(function) or UNSET,
                input_schema=signature.input_schema,
                output_schema=signature.output_schema or UNSET,
                annotations=annotations if annotations is not None else UNSET,
                meta=meta if meta is not None else UNSET,
            )
            self.add_tool(RegisteredTool(definition, function, signature))
            return function

        return register(function) if function is not None else register

    def add_tool(self, tool: RegisteredTool) -> None:
        """Add (or replace) a tool; connected clients are told the list changed."""
        self._tools[tool.name] = tool
        self._list_changed("notifications/tools/list_changed")

    def remove_tool(self, name: str) -> None:
        """Remove a tool; connected clients are told the list changed."""
        del self._tools[name]
        self._list_changed("notifications/tools/list_changed")

    @property
    def tools(self) -> dict[str, RegisteredTool]:
        return dict(self._tools)

    def capabilities(self) -> t.ServerCapabilities:
        return t.ServerCapabilities(
            tools=t.ToolsCapability(list_changed=True),
            logging={},
        )

    # -- sessions --------------------------------------------------------------------

    def create_session(self, transport: MessageStream) -> Session:
        """A session actor serving one client over ``transport`` (not started yet)."""
        handler = ServerSession(self)
        state = SessionState("server", self.capabilities(), self.supported_versions)
        session = Session(transport, state, handler, self.config)
        handler.session = session
        return session

    async def serve_session(
        self,
        transport: MessageStream,
        *,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one client over ``transport`` until it goes away."""
        session = self.create_session(transport)
        await session.run(task_status=task_status)

    def _list_changed(self, method: str) -> None:
        for server_session in list(self._sessions):
            server_session.notify_soon(method)


@attrs.define(eq=False)
class ServerSession:
    """The server's side of one client session: the dispatcher of its requests."""

    server: Server
    session: Session = attrs.field(init=False)
    log_level: t.LoggingLevel | None = attrs.field(init=False, default=None)

    @property
    def state(self) -> SessionState:
        return self.session.state

    @property
    def client_info(self) -> t.Implementation | None:
        return self.state.peer_info

    @property
    def client_capabilities(self) -> t.ClientCapabilities | None:
        capabilities = self.state.peer_capabilities
        assert capabilities is None or isinstance(capabilities, t.ClientCapabilities)
        return capabilities

    @property
    def protocol_version(self) -> str:
        return self.state.revision.name

    # -- the dispatcher protocol -----------------------------------------------------

    async def handle_request(self, request: InboundRequest, params: Any) -> Any:
        handler = _HANDLERS.get(request.method)
        if handler is None:
            raise errors.method_not_found(request.method)
        return await handler(self, request, params)

    def handle_notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            self.state.receive_initialized()
            self.server._sessions.add(self)
            self.session.closed_callbacks.append(lambda: self.server._sessions.discard(self))

    # -- sending ---------------------------------------------------------------------

    async def log(
        self,
        level: t.LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        related_request: Any = None,
    ) -> None:
        """Send ``notifications/message`` if ``level`` passes the session's threshold."""
        threshold = self.log_level
        if threshold is not None and LOG_SEVERITY[level] < LOG_SEVERITY[threshold]:
            return
        params = t.LoggingMessageParams(
            level=level, data=data, logger=logger if logger is not None else UNSET
        )
        await self.session.notify("notifications/message", params, related_request=related_request)

    def notify_soon(self, method: str, params: Any = None) -> None:
        """Send a notification without waiting (a full queue defers it to a task)."""
        if self.state.phase is Phase.OPERATING:
            self.session.notify_soon(method, params)

    def context(self, request: InboundRequest) -> Context:
        return Context(request, self)


# -- method handlers -----------------------------------------------------------------


async def _initialize(
    server_session: ServerSession, request: InboundRequest, params: t.InitializeParams
) -> t.InitializeResult:
    server = server_session.server
    revision = server_session.state.receive_initialize(params)
    return t.InitializeResult(
        protocol_version=revision.name,
        capabilities=server.capabilities(),
        server_info=t.Implementation(
            name=server.name,
            version=server.version,
            title=server.title if server.title is not None else UNSET,
        ),
        instructions=server.instructions if server.instructions is not None else UNSET,
    )


async def _list_tools(
    server_session: ServerSession, request: InboundRequest, params: t.PaginatedParams
) -> t.ListToolsResult:
    server = server_session.server
    structured = server_session.state.revision.structured_output
    tools = [
        tool.definition if structured else _without_output_schema(tool.definition)
        for tool in server._tools.values()
    ]
    page, next_cursor = paginate(tools, params.cursor, server.page_size)
    return t.ListToolsResult(tools=page, next_cursor=next_cursor)


async def _call_tool(
    server_session: ServerSession, request: InboundRequest, params: t.CallToolParams
) -> t.CallToolResult:
    tool = server_session.server._tools.get(params.name)
    if tool is None:
        raise McpError(errors.INVALID_PARAMS, f"Unknown tool: {params.name}", {"tool": params.name})
    result = await tool.call(params.arguments, server_session.context(request))
    if not server_session.state.revision.structured_output and result.structured_content:
        result = t.CallToolResult(
            content=result.content, is_error=result.is_error, meta=result.meta
        )
    return result


async def _set_level(
    server_session: ServerSession, request: InboundRequest, params: t.SetLevelParams
) -> t.EmptyResult:
    server_session.log_level = params.level
    return t.EmptyResult()


def _without_output_schema(tool: t.Tool) -> t.Tool:
    if tool.output_schema is UNSET:
        return tool
    return t.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        annotations=tool.annotations,
        meta=tool.meta,
    )


_HANDLERS: dict[str, Handler] = {
    "initialize": _initialize,
    "tools/list": _list_tools,
    "tools/call": _call_tool,
    "logging/setLevel": _set_level,
}
