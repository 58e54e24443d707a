"""The server's method handlers: one function per client→server request, in a table.

``ServerSession.handle_request`` looks the method up (:meth:`.registry.Registry.handler`:
:data:`HANDLERS`, then the offered extensions') and awaits the function with the
session, the request actor and the decoded params. A handler returns the result
Struct or raises :class:`McpError`; everything else (cancellation, progress, turning
exceptions into JSON-RPC errors) is the runtime's job. The four list methods are one
handler (:func:`list_handler`): the server's own items, then its mounts', paged with
:func:`.pagination.paginate`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.versions import Revision, modern_versions
from ..runtime.request import InboundRequest
from .authorization import require_scopes
from .mrtr import host_of
from .pagination import paginate
from .server_session import Handler as Handler  # the table's type, named here too
from .task_methods import TASK_HANDLERS, legacy_created, legacy_requested_ttl, runs_as_task
from .task_rerun import task_call

if TYPE_CHECKING:
    from .server_session import ServerSession
    from .tools import RegisteredTool


# -- logging ------------------------------------------------------------------------


def _needs_a_session(server_session: ServerSession, method: str, reason: str) -> None:
    """Refuse ``method`` in a stateless exchange, which forgets everything when it ends."""
    if not server_session.state.back_channel:
        raise McpError(
            errors.METHOD_NOT_FOUND,
            f"{method} is not available: {reason}, and stateless HTTP keeps none"
            " (each request is served on its own)",
            {"method": method},
        )


async def set_level(
    server_session: ServerSession, request: InboundRequest, params: t.SetLevelParams
) -> t.EmptyResult:
    _needs_a_session(server_session, "logging/setLevel", "the log level needs a session")
    server_session.log_level = params.level
    return t.EmptyResult()


async def discover(
    server_session: ServerSession, request: InboundRequest, params: t.DiscoverParams
) -> t.DiscoverResult:
    """``server/discover`` (2026-07-28): versions, capabilities, instructions.

    The server's identity goes in the result's ``_meta`` and the caching hints on it
    with every modern result (see :mod:`.modern`).
    """
    server = server_session.server
    capabilities = server_session.state.local_capabilities
    assert isinstance(capabilities, t.ServerCapabilities)
    return t.DiscoverResult(
        supported_versions=list(modern_versions(server.supported_versions)),
        capabilities=capabilities,
        instructions=server.instructions if server.instructions is not None else UNSET,
    )


# -- lists ----------------------------------------------------------------------------

ListResult = (
    t.ListToolsResult | t.ListPromptsResult | t.ListResourcesResult | t.ListResourceTemplatesResult
)


def list_handler(
    method: str, result: Callable[[list[Any], str | UnsetType], ListResult]
) -> Handler:
    """The handler of the list ``method``: the server's own items
    (:meth:`.registry.Registry.definitions`), then its mounts', paged; ``result`` makes
    the method's result of a page and the next cursor."""

    async def list_items(
        server_session: ServerSession, request: InboundRequest, params: t.PaginatedParams
    ) -> ListResult:
        server = server_session.server
        items = server.definitions(method)
        if server.mounts:
            items += await server.mounts.list(method, server_session, request)
        page, next_cursor = paginate(items, params.cursor, server.page_size)
        return result(page, next_cursor)

    return list_items


# -- tools ----------------------------------------------------------------------------


def call_tool(
    server_session: ServerSession, request: InboundRequest, params: t.CallToolParams
) -> Awaitable[t.CallToolResult | t.CreatedTask | t.CreateTaskResult]:
    """What to await for ``tools/call``: the tool's run, a task's start, or a mounted
    server's answer. An unknown tool or a missing scope raises at once.

    (A plain function that picks the coroutine, not a coroutine itself: every call's
    path then steps through one coroutine fewer.)
    """
    tool = server_session.server.find_tool(params.name)
    if tool is None:
        routed = server_session.server.mounts.route_name(params.name)
        if routed is not None:
            mount, name = routed
            inner = msgspec.structs.replace(params, name=name)
            called: Awaitable[t.CallToolResult] = mount.target.handle(
                "tools/call", inner, server_session, request
            )
            return called
        raise McpError(errors.INVALID_PARAMS, f"Unknown tool: {params.name}", {"tool": params.name})
    if tool.scopes:  # a set test only, on every call's path
        require_scopes(server_session.principal, tool.scopes, f"tool {tool.name!r}")
    if (tool.task != "never" or params.task is not UNSET) and runs_as_task(
        server_session, request, tool, params
    ):
        return _start_task(server_session, request, tool, params)
    return run_tool(server_session, request, tool, params)


async def _start_task(
    server_session: ServerSession,
    request: InboundRequest,
    tool: RegisteredTool,
    params: t.CallToolParams,
) -> t.CreatedTask | t.CreateTaskResult:
    """Start this call of ``tool`` as a task; what the caller is answered at once.

    (A function of its own so that :func:`call_tool`, on every call's path, makes no
    closure cells for the lambdas here.)
    """
    manager = server_session.server.task_manager
    requestor = manager.requestor_of(server_session)
    call = task_call(server_session, request, tool)
    if request.modern is None:  # 2025-11-25: the task asks on the session, as any call
        created = await manager.start(
            tool.name,
            lambda task: run_tool(server_session.in_task(task, None), request, tool, params),
            host_of(request),
            requestor=requestor,
            ttl_ms=legacy_requested_ttl(params),
            call=call,
        )
        return legacy_created(created)
    return await manager.start(
        tool.name,
        lambda task: run_tool(server_session.in_task(task, task), request, tool, params),
        host_of(request),
        requestor=requestor,
        call=call,
    )


async def run_tool(
    server_session: ServerSession,
    request: InboundRequest,
    tool: RegisteredTool,
    params: t.CallToolParams,
) -> t.CallToolResult | t.CreatedTask:
    server = server_session.server
    # a Context only for a tool that takes one
    wants_context = tool.signature.context_parameter is not None
    context = server_session.context(request) if wants_context else None
    result = await tool.call(params.arguments, context, mask_errors=server.mask_errors)
    if isinstance(result, t.CreatedTask):  # a deferred tool handed its work to a task
        return result
    revision = server_session.state.revision
    check_content(result.content, revision, "tool", params.name)
    structured = result.structured_content  # left out before 2025-06-18 (protocol.fit)
    if revision.structured_output and not (
        revision.structured_content_any or structured is UNSET or isinstance(structured, dict)
    ):
        raise McpError(
            errors.INTERNAL_ERROR,
            f"tool {params.name!r} returned structuredContent of type"
            f" {type(structured).__name__}; protocol revision {revision.name} carries only"
            " a JSON object there (any JSON value from 2026-07-28 on)",
        )
    return result


# -- resources ------------------------------------------------------------------------


async def read_resource(
    server_session: ServerSession, request: InboundRequest, params: t.ReadResourceParams
) -> t.ReadResourceResult:
    server = server_session.server
    if server.mounts and not server.knows_resource(params.uri):
        routed = server.mounts.route_uri(params.uri)
        if routed is not None:
            mount, uri = routed
            return await server.mounts.read(mount, uri, server_session, request)
    resource, variables = server.resolve_resource(params.uri)
    if resource.scopes:
        require_scopes(server_session.principal, resource.scopes, f"resource {params.uri!r}")
    contents = await resource.read(params.uri, variables, server_session.context(request))
    result = t.ReadResourceResult(contents=contents)
    if resource.cache is not None and server_session.state.revision.result_type:
        result.ttl_ms, result.cache_scope = resource.cache.ttl_ms, resource.cache.scope
    return result


async def subscribe(
    server_session: ServerSession, request: InboundRequest, params: t.SubscribeParams
) -> t.EmptyResult:
    _needs_a_session(
        server_session, "resources/subscribe", "subscriptions need a session to deliver updates"
    )
    resource, _ = server_session.server.resolve_resource(params.uri)  # -32002 if unknown
    if resource.scopes:
        require_scopes(server_session.principal, resource.scopes, f"resource {params.uri!r}")
    server_session.subscribe(params.uri)
    return t.EmptyResult()


async def unsubscribe(
    server_session: ServerSession, request: InboundRequest, params: t.UnsubscribeParams
) -> t.EmptyResult:
    _needs_a_session(server_session, "resources/unsubscribe", "subscriptions need a session")
    server_session.unsubscribe(params.uri)
    return t.EmptyResult()


async def listen(
    server_session: ServerSession, request: InboundRequest, params: t.SubscriptionsListenParams
) -> t.SubscriptionsListenResult:
    """``subscriptions/listen`` (2026-07-28): the stream's actor (see :mod:`.listen`)."""
    return await server_session.server.serve_listen(server_session, request, params)


# -- prompts --------------------------------------------------------------------------


async def get_prompt(
    server_session: ServerSession, request: InboundRequest, params: t.GetPromptParams
) -> t.GetPromptResult:
    prompt = server_session.server.find_prompt(params.name)
    if prompt is None:
        routed = server_session.server.mounts.route_name(params.name)
        if routed is not None:
            mount, name = routed
            inner = msgspec.structs.replace(params, name=name)
            result: t.GetPromptResult = await mount.target.handle(
                "prompts/get", inner, server_session, request
            )
            return result
        raise McpError(
            errors.INVALID_PARAMS, f"Unknown prompt: {params.name}", {"prompt": params.name}
        )
    if prompt.scopes:
        require_scopes(server_session.principal, prompt.scopes, f"prompt {params.name!r}")
    arguments = None if params.arguments is UNSET else params.arguments
    result = await prompt.render(arguments, server_session.context(request))
    check_content(
        [message.content for message in result.messages],
        server_session.state.revision,
        "prompt",
        params.name,
    )
    return result


# -- completion -----------------------------------------------------------------------


async def complete(
    server_session: ServerSession, request: InboundRequest, params: t.CompleteParams
) -> t.CompleteResult:
    completer = server_session.server.completer(params.ref, params.argument.name)
    if completer is None:
        return t.CompleteResult(completion=t.Completion(values=[], total=0, has_more=False))
    context = params.context
    arguments = context.arguments if context is not UNSET and context.arguments is not UNSET else {}
    found = await completer.complete(
        params.argument.value, arguments, server_session.context(request)
    )
    return t.CompleteResult(completion=found)


# -- revision checks ------------------------------------------------------------------


def check_content(
    blocks: Sequence[t.ContentBlock], revision: Revision, kind: str, name: str
) -> None:
    """Refuse content the negotiated revision cannot carry: a -32603 naming the culprit,
    the ``kind`` (tool, prompt) called ``name`` that returned it."""
    if revision.audio_content and revision.structured_output:
        return  # the revision carries every kind of block
    for block in blocks:
        needed = None
        if isinstance(block, t.AudioContent) and not revision.audio_content:
            needed = "2025-03-26"
        elif isinstance(block, t.ResourceLink) and not revision.structured_output:
            needed = "2025-06-18"
        if needed is not None:
            raise McpError(
                errors.INTERNAL_ERROR,
                f"{kind} {name!r} returned {type(block).__name__}, which needs protocol"
                f" revision {needed}; this session speaks {revision.name}",
            )


HANDLERS: dict[str, Handler] = {
    "server/discover": discover,
    "logging/setLevel": set_level,
    "tools/list": list_handler(
        "tools/list", lambda page, cursor: t.ListToolsResult(tools=page, next_cursor=cursor)
    ),
    "tools/call": call_tool,
    "resources/list": list_handler(
        "resources/list",
        lambda page, cursor: t.ListResourcesResult(resources=page, next_cursor=cursor),
    ),
    "resources/templates/list": list_handler(
        "resources/templates/list",
        lambda page, cursor: t.ListResourceTemplatesResult(
            resource_templates=page, next_cursor=cursor
        ),
    ),
    "resources/read": read_resource,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
    "subscriptions/listen": listen,
    "prompts/list": list_handler(
        "prompts/list", lambda page, cursor: t.ListPromptsResult(prompts=page, next_cursor=cursor)
    ),
    "prompts/get": get_prompt,
    "completion/complete": complete,
    **TASK_HANDLERS,
}
