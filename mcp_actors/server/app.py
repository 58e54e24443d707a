"""The server a user writes: ``Server(name, version)`` plus decorators, and its per-session side.

:class:`Server` is the registry shared by every session: tools, resources and
resource templates, prompts, completers, and the subscription hub. Each
connection gets a :class:`ServerSession`: the dispatcher that answers that
client's requests (with the handlers of :mod:`.handlers`), holds its negotiated
revision, capabilities, logging level and resource subscriptions, and sends it
notifications. Handlers are plain async (or sync) functions; the runtime turns
them into request actors.

What a server declares in ``initialize`` follows what is registered when the
client connects: ``tools``, ``resources`` (with ``subscribe`` and ``listChanged``),
``prompts`` and ``completions`` appear once something of that kind exists;
``logging`` is always there; ``extensions`` lists what :meth:`Server.add_extension`
offers (and the tasks extension, in the modern era, once a tool can run as a task).
Changing the registry later tells connected clients with
``notifications/*/list_changed`` (when their session declared that kind).

Both eras are served on one endpoint (``supported_versions``, default
:data:`~mcp_actors.protocol.versions.ALL`): an ``initialize`` opens a legacy
session; a request whose ``_meta`` names a modern revision (2026-07-28) is served
on its own, by a :class:`ServerSession` made for it (:meth:`ServerSession.for_request`)
whose state is that request's: its revision, the capabilities it declares, its log
level. ``server/discover`` tells modern clients what the server offers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Container, Hashable, Iterable, Mapping
from typing import Any, Literal, TypeVar, overload

import attrs
import trio
from msgspec import UNSET, UnsetType

from .._version import __version__
from ..protocol import errors
from ..protocol import types as t
from ..protocol.engine import ServerDescription
from ..protocol.errors import McpError, ProtocolViolation
from ..protocol.extensions import declared_settings
from ..protocol.fit import LACKING_REVISIONS, fit
from ..protocol.jsonrpc import RequestId
from ..protocol.lifecycle import Phase, SessionState
from ..protocol.modern import ModernRequest
from ..protocol.request_state import StateKeys
from ..protocol.versions import ALL, LATEST, REVISIONS, Revision
from ..runtime.bus import Bus, Change, MemoryBus
from ..runtime.config import SessionConfig
from ..runtime.middleware import Call, Middleware, check_middleware, run_notification, run_request
from ..runtime.request import InboundRequest
from ..runtime.session import Session, session_of
from ..runtime.subscription import HubStatistics, Subscription, SubscriptionHub
from ..runtime.supervisor import open_supervisor
from ..runtime.task_store import TaskStore
from ..transports.abc import MessageStream
from ..transports.http_auth import Principal
from . import authorization, client_requests
from .caching import CacheHint, check_cacheable
from .completion import CompleterLike, CompletionKey, CompletionRegistry
from .context import LOG_SEVERITY, Context
from .elicitation import ElicitationResult
from .extensions import Extension, ExtensionHandler, ExtensionRegistry
from .handlers import HANDLERS, Handler
from .listen import ListenOffer, ListenStatistics, ListenStreams
from .log_bridge import McpLogHandler
from .modern import era_error, finish_result
from .mount import Mount, Mountable, MountedServer, Mounts
from .mrtr import MRTR_METHODS, Continuations, ContinuationStatistics, MrtrSettings, Run, serve
from .prompts import RegisteredPrompt, argument_choices, prompt_arguments
from .resources import RegisteredResource, ResourceRegistry
from .signature import describe, inspect_tool
from .task_methods import task_change
from .tasks import RunningTask, TaskManager, TaskSettings, TaskStatistics
from .tools import RegisteredTool, TaskMode, serves_inline
from .uri_template import UriTemplate

#: The bus carries ``tasks/update`` answers to the worker running the task under this name
#: (between workers only: no client is ever sent it).
TASK_ANSWERS = "mcp-actors/tasks/answers"

log = logging.getLogger("mcp_actors.server")

F = TypeVar("F", bound=Callable[..., Any])
#: ``on_roots_changed(server_session)``; may be sync or async.
RootsChangedHandler = Callable[["ServerSession"], Awaitable[None] | None]


def _unset(value: Any) -> Any:
    return UNSET if value is None else value


def _known_versions(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, tuple) or not value:
        raise ValueError(f"supported_versions must be a non-empty tuple, not {value!r}")
    unknown = [version for version in value if version not in ALL]
    if unknown:
        raise ValueError(
            f"supported_versions: {', '.join(map(repr, unknown))} not among {', '.join(ALL)}"
        )


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
    #: The protocol revisions served, of either era: the default serves both on one
    #: endpoint. Only modern ones (``MODERN``): ``initialize`` is answered -32022 naming
    #: them. Only legacy ones (``SUPPORTED``): a modern request is answered -32022.
    supported_versions: tuple[str, ...] = attrs.field(default=ALL, validator=_known_versions)
    #: ``ttlMs``/``cacheScope`` of cacheable modern results, unless set per method
    #: (:meth:`set_cache_hint`) or per resource (``resource(..., cache=...)``).
    cache: CacheHint = attrs.field(factory=CacheHint)
    config: SessionConfig = attrs.field(factory=SessionConfig)
    #: Tell clients only "internal error" for an exception in a tool (it is logged with
    #: its traceback either way); off, the tool's ``isError`` result carries the
    #: exception's text. An exception in a resource or prompt handler is always an
    #: internal error whose text stays in the server's log (see
    #: :mod:`mcp_actors.runtime.internal_errors`).
    mask_errors: bool = False
    #: How tasks (the tasks extension) are kept: TTL, poll interval, bound (see :mod:`.tasks`).
    tasks: TaskSettings = attrs.field(factory=TaskSettings)
    #: The tasks created by calls of this server's tools, and their actors.
    task_manager: TaskManager = attrs.field(
        init=False, default=attrs.Factory(lambda self: TaskManager(self.tasks), takes_self=True)
    )
    #: How handlers ask the client in the modern era (MRTR): the keys ``requestState``
    #: is sealed with, its lifetime, the TTL and bound of parked handlers (see :mod:`.mrtr`).
    mrtr: MrtrSettings = attrs.field(factory=MrtrSettings)
    _tools: dict[str, RegisteredTool] = attrs.field(init=False, factory=dict)
    _resources: ResourceRegistry = attrs.field(init=False, factory=ResourceRegistry)
    _prompts: dict[str, RegisteredPrompt] = attrs.field(init=False, factory=dict)
    _completions: CompletionRegistry = attrs.field(init=False, factory=CompletionRegistry)
    _extensions: ExtensionRegistry = attrs.field(init=False, factory=ExtensionRegistry)
    _sessions: dict[ServerSession, None] = attrs.field(init=False, factory=dict)
    #: Tools that may run as tasks (kept as tools come and go: the capabilities say so).
    _task_tools: int = attrs.field(init=False, default=0)
    #: The capabilities declared so far, by everything they depend on (see capabilities):
    #: computed once per distinct answer, and one object shared by every session given it.
    _declared: dict[tuple[object, ...], t.ServerCapabilities] = attrs.field(
        init=False, factory=dict
    )
    _hub: SubscriptionHub[t.ResourceUpdatedParams] = attrs.field(
        init=False, factory=SubscriptionHub
    )
    #: Carries list changes and resource updates to every session and listen stream
    #: (see :mod:`~mcp_actors.runtime.bus`; a bus spanning workers replaces the default).
    bus: Bus = attrs.field(factory=MemoryBus)
    #: At most this many ``subscriptions/listen`` streams at once (see :mod:`.listen`).
    max_listen_streams: int = 1000
    #: At most this many of them from one client (see :attr:`ServerSession.client_identity`).
    max_listen_streams_per_client: int = attrs.field(
        default=100, validator=[attrs.validators.instance_of(int), attrs.validators.ge(1)]
    )
    #: Distinct changes waiting per listen stream (beyond: dropped, counted).
    listen_mailbox_size: int = 64
    _listens: ListenStreams = attrs.field(init=False)
    _roots_changed: list[RootsChangedHandler] = attrs.field(init=False, factory=list)
    _cache_hints: dict[str, CacheHint] = attrs.field(init=False, factory=dict)
    _forwarded: int = attrs.field(init=False, default=0)
    _continuations: Continuations = attrs.field(init=False)
    #: The servers mounted in this one (see :mod:`.mount`).
    mounts: Mounts = attrs.field(init=False, factory=Mounts)
    #: The Trio run serving this server's sessions (set when one initializes), so that
    #: other threads can reach it (see :class:`.log_bridge.McpLogHandler`).
    trio_token: trio.lowlevel.TrioToken | None = attrs.field(init=False, default=None)
    #: Around every request and notification of every session, the first outermost
    #: (see :mod:`~mcp_actors.runtime.middleware`; add more with :meth:`add_middleware`).
    middleware: tuple[Middleware, ...] = attrs.field(
        default=(), converter=check_middleware, kw_only=True
    )

    def __attrs_post_init__(self) -> None:
        self._continuations = Continuations(self.mrtr)
        self._listens = self._new_listens(self.bus)
        self.bus.subscribe(self._deliver_to_sessions)
        self.bus.subscribe(self._tasks_elsewhere)
        self.task_manager.on_change = lambda record: self.bus.publish(task_change(record))
        self.task_manager.forward_answers = self._forward_task_answers

    def share_state(
        self,
        *,
        bus: Bus | None = None,
        task_store: TaskStore | None = None,
        state_keys: StateKeys | None = None,
    ) -> None:
        """Share what clients may reach on any worker, before serving (see
        :mod:`mcp_actors.shared`): a ``bus`` spanning workers (listen notifications,
        task changes), a ``task_store`` they all read, the ``requestState`` keys they
        all accept. What is not given stays as it is."""
        if bus is not None:
            self.bus = bus
            self._listens = self._new_listens(bus)
            bus.subscribe(self._deliver_to_sessions)
            bus.subscribe(self._tasks_elsewhere)
        if task_store is not None:
            self.task_manager.store = task_store
        if state_keys is not None:
            self.mrtr = attrs.evolve(self.mrtr, state_keys=state_keys)
            self._continuations.settings = self.mrtr

    def _forward_task_answers(self, task_id: str, responses: dict[str, Any]) -> None:
        # Each forwarding is its own change (a unique subject): none replaces another.
        self._forwarded += 1
        self.bus.publish(Change(TASK_ANSWERS, f"{task_id} {self._forwarded}", responses))

    def _tasks_elsewhere(self, change: Change) -> int:
        """The bus's receiver for what other workers did to the tasks this one runs:
        cancelled them, or received ``tasks/update`` answers for them."""
        if change.subject is None:
            return 0
        if change.method == TASK_ANSWERS and isinstance(change.params, dict):
            task_id = change.subject.split(" ", 1)[0]
            return self.task_manager.answered_elsewhere(task_id, change.params)
        cancelled = getattr(change.params, "status", None) == "cancelled"
        if change.method == "notifications/tasks" and cancelled:
            return self.task_manager.cancelled_elsewhere(change.subject)
        return 0

    def add_middleware(self, middleware: Middleware) -> None:
        """Add ``middleware`` inside those already there (it runs after them, nearer the
        handler); it applies to every request from now on."""
        self.middleware = (*self.middleware, *check_middleware([middleware]))

    def mount(self, other: Server | Mountable, *, prefix: str | None = None) -> None:
        """Serve ``other``'s tools, resources and prompts too, under ``prefix`` (see
        :mod:`.mount`): an in-process Server, or a remote one behind a client
        (``mcp_actors.gateway.Upstream``). Clients are told the lists changed, now and
        whenever ``other``'s do."""
        if other is self:
            raise ValueError("a server cannot be mounted in itself")
        target: Mountable = MountedServer(other) if isinstance(other, Server) else other
        self.mounts.add(target, prefix)
        target.watch(self._list_changed)
        for kind in ("tools", "resources", "prompts"):
            self._list_changed(f"notifications/{kind}/list_changed")

    def continuation_statistics(self) -> ContinuationStatistics:
        """Handlers parked waiting for an MRTR retry, and what became of them (see :mod:`.mrtr`)."""
        return self._continuations.statistics()

    # -- tools -----------------------------------------------------------------------

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
        icons: list[t.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        inline: bool = False,
        task: TaskMode = "never",
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        function: F | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: t.ToolAnnotations | None = None,
        icons: list[t.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        inline: bool = False,
        task: TaskMode = "never",
        scopes: Iterable[str] = (),
    ) -> F | Callable[[F], F]:
        """Register a function as a tool; usable bare (``@server.tool``) or with options.

        The input schema comes from the parameters' type hints, the description
        from the docstring's first paragraph. A sync function runs in a worker
        thread so it never blocks the event loop. ``inline=True`` declares an
        ``async def`` that never waits (no ``await`` that can block): its calls are
        served without a task of their own, several times cheaper (see
        :class:`~.tools.RegisteredTool`). ``task`` says whether a call may run as a
        task of the tasks extension: ``"never"``, ``"optional"`` (when the request
        declares the extension), ``"always"`` or ``"deferred"`` (see :mod:`.tasks`).
        ``scopes`` are the OAuth scopes a caller's token must carry to call it, on a
        server protected by a resource server (see :mod:`.authorization`).
        """

        def register(function: F) -> F:
            signature = inspect_tool(function, Context, name=name)
            definition = t.Tool(
                name=name or function.__name__,
                title=_unset(title),
                description=description or describe(function) or UNSET,
                input_schema=signature.input_schema,
                output_schema=signature.output_schema or UNSET,
                annotations=_unset(annotations),
                icons=_unset(icons),
                execution=(
                    {"taskSupport": _TASK_SUPPORT[task]} if task in _TASK_SUPPORT else UNSET
                ),
                meta=_unset(meta),
            )
            self.add_tool(
                RegisteredTool(definition, function, signature, inline, task, scopes=scopes)
            )
            return function

        return register(function) if function is not None else register

    def add_tool(self, tool: RegisteredTool, *, replace: bool = False) -> None:
        """Add a tool; connected clients are told the list changed.

        A second tool of the same name raises ValueError, unless ``replace``.
        """
        _check_unique("tool", tool.name, self._tools, replace)
        previous = self._tools.get(tool.name)
        self._tools[tool.name] = tool
        self._task_tools += _may_run_as_task(tool) - _may_run_as_task(previous)
        self._list_changed("notifications/tools/list_changed")

    def remove_tool(self, name: str) -> None:
        """Remove a tool; connected clients are told the list changed."""
        self._task_tools -= _may_run_as_task(self._tools.pop(name))
        self._list_changed("notifications/tools/list_changed")

    @property
    def tools(self) -> dict[str, RegisteredTool]:
        return dict(self._tools)

    def find_tool(self, name: str) -> RegisteredTool | None:
        """The tool named ``name`` (None: none). Unlike :attr:`tools`, copies nothing."""
        return self._tools.get(name)

    # -- resources -------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: t.Annotations | None = None,
        icons: list[t.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        complete: Mapping[str, CompleterLike] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register a function as a resource (fixed ``uri``) or a template (``uri`` has ``{vars}``).

        A template's function takes the template's variables as parameters,
        decoded with their type hints (see :mod:`.resources` for what it may
        return). ``complete`` maps variable names to completers (a list of
        choices or a function; see :mod:`.completion`). ``size`` applies to a
        fixed resource only. ``cache`` is the caching hint of its ``resources/read``
        results in the modern era (default: the server's, see :meth:`set_cache_hint`).
        ``scopes``: the OAuth scopes needed to read (or subscribe to) it (see
        :mod:`.authorization`).
        """
        template = UriTemplate.parse(uri)
        if size is not None and template.is_template:
            raise TypeError(f"resource template {uri!r}: size applies to fixed resources only")

        def register(function: F) -> F:
            signature = inspect_tool(function, Context, kind="resource", name=uri)
            common: dict[str, Any] = {
                "name": name or function.__name__,
                "title": _unset(title),
                "description": description or describe(function) or UNSET,
                "mime_type": _unset(mime_type),
                "annotations": _unset(annotations),
                "icons": _unset(icons),
                "meta": _unset(meta),
            }
            definition: t.Resource | t.ResourceTemplate
            if template.is_template:
                definition = t.ResourceTemplate(uri_template=uri, **common)
            else:
                definition = t.Resource(uri=uri, size=_unset(size), **common)
            registered = RegisteredResource(
                definition, template, function, signature, cache, scopes=scopes
            )
            for variable in template.variables:
                choices = argument_choices(signature, variable)
                if choices is not None:
                    self._completions.add(("resource", uri, variable), choices)
            for variable, completer in (complete or {}).items():
                if variable not in template.variables:
                    raise TypeError(f"complete: {uri!r} has no variable {variable!r}")
                self._completions.add(("resource", uri, variable), completer)
            self.add_resource(registered)
            return function

        return register

    def add_resource(self, resource: RegisteredResource, *, replace: bool = False) -> None:
        """Add a resource or template; clients are told the list changed.

        A second one with the same URI (or URI template) raises ValueError, unless ``replace``.
        """
        _check_unique("resource", resource.key, self._resources, replace)
        self._resources.add(resource)
        self._list_changed("notifications/resources/list_changed")

    def remove_resource(self, uri: str) -> None:
        """Remove the resource with this URI (or the template with this template string)."""
        self._resources.remove(uri)
        self._completions.discard_target("resource", uri)
        self._list_changed("notifications/resources/list_changed")

    def notify_resource_updated(self, uri: str, *, meta: dict[str, Any] | None = None) -> int:
        """Tell every session subscribed to ``uri`` that it changed; returns how many.

        Never blocks: each subscriber's actor sends ``notifications/resources/updated``
        at its own pace, and a subscriber that is behind gets one notification for
        many updates (the latest, with its ``meta``). Callable from the Trio thread
        only (from another thread, use ``trio.from_thread.run_sync``).
        """
        params = t.ResourceUpdatedParams(uri=uri, meta=_unset(meta))
        return self.bus.publish(Change("notifications/resources/updated", uri, params))

    def scopes_needed(self, method: str, target: str | None) -> frozenset[str]:
        """The OAuth scopes a request needs: ``method`` acting on ``target`` (a tool or
        prompt name, a resource URI), as declared with ``scopes=`` on the decorators."""
        return authorization.scopes_needed(self, method, target)

    def resource_scopes(self, uri: str) -> frozenset[str]:
        """The scopes reading ``uri`` needs (empty for a URI no resource serves)."""
        try:
            resource, _ = self._resources.resolve(uri)
        except McpError:
            return frozenset()
        return resource.scopes

    def subscription_statistics(self) -> HubStatistics:
        """Subscriptions alive now, and updates published / delivered / coalesced so far."""
        return self._hub.statistics()

    def task_statistics(self) -> TaskStatistics:
        """Tasks held now (live, running) and started / refused so far."""
        return self.task_manager.statistics()

    # -- subscriptions/listen (modern era) -------------------------------------------

    def _new_listens(self, bus: Bus) -> ListenStreams:
        return ListenStreams(
            bus,
            self.max_listen_streams,
            self.listen_mailbox_size,
            self.max_listen_streams_per_client,
        )

    async def serve_listen(
        self, server_session: ServerSession, request: InboundRequest, params: Any
    ) -> t.SubscriptionsListenResult:
        """Serve one ``subscriptions/listen`` request: the stream's actor (see :mod:`.listen`)."""
        capabilities = server_session.state.local_capabilities
        assert isinstance(capabilities, t.ServerCapabilities)
        offer = ListenOffer(
            capabilities,
            self._resources.knows,
            server_session.client_capabilities,
            audience=self.task_manager.requestor_of(server_session),
        )

        async def notify(method: str, notification: Any) -> None:
            await server_session.session.notify(
                method, notification, related_request=request.id, state=server_session.state
            )

        client = server_session.client_identity
        return await self._listens.serve(request.id, params.notifications, offer, notify, client)

    def end_listen_streams(self) -> int:
        """End every listen stream gracefully (each gets its ``subscriptions/listen``
        result), e.g. before shutting down; returns how many."""
        return self._listens.end_all()

    def listen_statistics(self) -> ListenStatistics:
        """Listen streams open now; opened, refused, and changes delivered / coalesced /
        dropped so far."""
        return self._listens.statistics()

    # -- prompts ---------------------------------------------------------------------

    @overload
    def prompt(self, function: F) -> F: ...

    @overload
    def prompt(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[t.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        complete: Mapping[str, CompleterLike] | None = None,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        function: F | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[t.Icon] | None = None,
        meta: dict[str, Any] | None = None,
        complete: Mapping[str, CompleterLike] | None = None,
        scopes: Iterable[str] = (),
    ) -> F | Callable[[F], F]:
        """Register a function as a prompt; usable bare (``@server.prompt``) or with options.

        Its parameters are the prompt's arguments (see :mod:`.prompts`);
        ``complete`` maps argument names to completers; ``scopes``: the OAuth scopes
        needed to get it (see :mod:`.authorization`).
        """

        def register(function: F) -> F:
            signature = inspect_tool(function, Context, kind="prompt", name=name)
            prompt_name = name or function.__name__
            arguments = prompt_arguments(signature, function)
            definition = t.Prompt(
                name=prompt_name,
                title=_unset(title),
                description=description or describe(function) or UNSET,
                arguments=arguments or UNSET,
                icons=_unset(icons),
                meta=_unset(meta),
            )
            for argument in signature.argument_names:
                choices = argument_choices(signature, argument)
                if choices is not None:
                    self._completions.add(("prompt", prompt_name, argument), choices)
            for argument, completer in (complete or {}).items():
                if argument not in signature.argument_names:
                    raise TypeError(
                        f"complete: prompt {prompt_name!r} has no argument {argument!r}"
                    )
                self._completions.add(("prompt", prompt_name, argument), completer)
            self.add_prompt(RegisteredPrompt(definition, function, signature, scopes=scopes))
            return function

        return register(function) if function is not None else register

    def add_prompt(self, prompt: RegisteredPrompt, *, replace: bool = False) -> None:
        """Add a prompt; connected clients are told the list changed.

        A second prompt of the same name raises ValueError, unless ``replace``.
        """
        _check_unique("prompt", prompt.name, self._prompts, replace)
        self._prompts[prompt.name] = prompt
        self._list_changed("notifications/prompts/list_changed")

    @property
    def prompts(self) -> dict[str, RegisteredPrompt]:
        return dict(self._prompts)

    def find_prompt(self, name: str) -> RegisteredPrompt | None:
        """The prompt named ``name`` (None: none). Unlike :attr:`prompts`, copies nothing."""
        return self._prompts.get(name)

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt; connected clients are told the list changed."""
        del self._prompts[name]
        self._completions.discard_target("prompt", name)
        self._list_changed("notifications/prompts/list_changed")

    # -- completion ------------------------------------------------------------------

    def completion(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Register a function completing ``argument`` of a ``prompt`` or ``resource`` template.

        Give exactly one of ``prompt`` (its name) or ``resource`` (the URI template
        as registered). See :mod:`.completion` for the function's shape.
        """
        key = _completion_key(argument, prompt, resource)

        def register(function: F) -> F:
            self._completions.add(key, function)
            return function

        return register

    def add_completion(
        self,
        completer: CompleterLike,
        *,
        argument: str,
        prompt: str | None = None,
        resource: str | None = None,
    ) -> None:
        """Like :meth:`completion`, for a function or a list of choices you already have."""
        self._completions.add(_completion_key(argument, prompt, resource), completer)

    # -- roots -----------------------------------------------------------------------

    def on_roots_changed(self, handler: RootsChangedHandler) -> RootsChangedHandler:
        """Decorator: call ``handler(server_session)`` when a client's roots change.

        It runs on the session's notification task, off the reader.
        """
        self._roots_changed.append(handler)
        return handler

    # -- extensions ------------------------------------------------------------------

    def add_extension(self, extension: Extension, *, replace: bool = False) -> None:
        """Offer ``extension``: declared under ``capabilities.extensions`` (both eras),
        its methods answered by its handlers (see :mod:`.extensions`).

        ValueError if it is offered already (unless ``replace``) or handles a method
        the core protocol or another extension handles. Sessions already open keep the
        capabilities they negotiated.
        """
        if extension.identifier == t.TASKS_EXTENSION:
            raise ValueError(
                f"{t.TASKS_EXTENSION} is declared by the server itself when a tool can run"
                " as a task (@server.tool(task=...))"
            )
        self._extensions.add(extension, replace=replace, core=HANDLERS)

    def remove_extension(self, identifier: str) -> None:
        """Stop offering the extension ``identifier`` (KeyError if not offered)."""
        self._extensions.remove(identifier)

    @property
    def extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions offered, with their settings (what ``capabilities.extensions``
        declares, the tasks extension aside)."""
        return self._extensions.declared()

    def extension_handler(self, method: str) -> ExtensionHandler | None:
        """The handler an offered extension gives ``method`` (None: none)."""
        return self._extensions.handler(method)

    # -- capabilities and sessions ---------------------------------------------------

    def capabilities(
        self, revision: Revision | None = None, *, stateless: bool = False
    ) -> t.ServerCapabilities:
        """What the server declares to a client negotiating ``revision`` (default: latest).

        A ``stateless`` legacy server (stateless HTTP) promises neither resource
        subscriptions nor list-change notifications: it has no channel to deliver them
        on. In the modern era ``subscriptions/listen`` delivers them, so both are
        declared whatever the transport.
        """
        revision = revision or REVISIONS[LATEST]
        completions = bool(self._completions) and revision.completions_capability
        offers_tasks = self._task_tools > 0
        mounted = self.mounts.kinds()  # what the mounted servers offer (see .mount)
        # Asked for every request of the 2026-07-28 era: built once per distinct answer.
        key = (
            revision.name,
            stateless,
            completions,
            offers_tasks,
            mounted,
            bool(self._prompts),
            bool(self._resources),
            bool(self._tools),
            self._extensions.changes,
        )
        declared = self._declared.get(key)
        if declared is None:
            if len(self._declared) >= _DECLARED_KEPT:
                self._declared.clear()
            declared = self._declared[key] = self._build_capabilities(
                revision, stateless, completions, offers_tasks, mounted
            )
        return declared

    def _build_capabilities(
        self,
        revision: Revision,
        stateless: bool,
        completions: bool,
        offers_tasks: bool,
        mounted: frozenset[str],
    ) -> t.ServerCapabilities:
        # Change notifications need a channel: a legacy session's, or (modern era) a
        # subscriptions/listen stream, which every transport carries.
        sessions = True if not revision.handshake or not stateless else UNSET
        tasks = offers_tasks and not revision.handshake  # the extension: 2026-07-28 on
        legacy_tasks = offers_tasks and revision.name == "2025-11-25" and not stateless
        extensions = self._extensions.declared()
        if tasks:
            extensions[t.TASKS_EXTENSION] = {}
        return t.ServerCapabilities(
            extensions=extensions or UNSET,
            logging={},
            completions={} if completions else UNSET,
            prompts=t.PromptsCapability(list_changed=sessions)
            if self._prompts or "prompts" in mounted
            else UNSET,
            resources=(
                t.ResourcesCapability(subscribe=sessions, list_changed=sessions)
                if self._resources or "resources" in mounted
                else UNSET
            ),
            tools=(
                t.ToolsCapability(list_changed=sessions)
                if self._tools or "tools" in mounted
                else UNSET
            ),
            tasks=_LEGACY_TASKS_CAPABILITY if legacy_tasks else UNSET,
        )

    # -- caching hints (modern era) --------------------------------------------------

    def set_cache_hint(self, method: str, hint: CacheHint) -> None:
        """The ``ttlMs``/``cacheScope`` of ``method``'s modern results (see :mod:`.caching`).

        ``method`` is one of ``server/discover``, ``tools/list``, ``prompts/list``,
        ``resources/list``, ``resources/templates/list``, ``resources/read`` (for
        every resource without its own ``cache=``); anything else raises ValueError.
        """
        check_cacheable(method)
        self._cache_hints[method] = hint

    def cache_hint(self, method: str) -> CacheHint:
        """The caching hint of ``method``'s results: its own, else the server's default."""
        return self._cache_hints.get(method, self.cache)

    @property
    def info(self) -> t.Implementation:
        """The server's name and version, as ``serverInfo`` carries them."""
        return t.Implementation(name=self.name, version=self.version, title=_unset(self.title))

    def describe(self, revision: Revision, *, stateless: bool = False) -> ServerDescription:
        """What the server tells a client negotiating ``revision`` (``initialize``'s result)."""
        return ServerDescription(
            capabilities=self.capabilities(revision, stateless=stateless),
            server_info=self.info,
            instructions=self.instructions,
        )

    @property
    def sessions(self) -> list[ServerSession]:
        """The initialized sessions, in the order they initialized."""
        return list(self._sessions)

    def logging_handler(self, level: int = logging.NOTSET) -> McpLogHandler:
        """A ``logging.Handler`` forwarding records to every session (see :mod:`.log_bridge`)."""
        return McpLogHandler(self, level)

    def create_session(
        self, transport: MessageStream, state: SessionState | None = None
    ) -> Session:
        """A session actor serving one client over ``transport`` (not started yet), in
        ``state`` (default: a new session, waiting for ``initialize``)."""
        handler = ServerSession(self)
        if state is None:
            stateless = transport.stateless
            state = SessionState(
                "server",
                self.capabilities(stateless=stateless),
                self.supported_versions,
                back_channel=not stateless,
            )
        session = Session(transport, state, handler, self.config)
        handler.session = session
        return session

    async def serve_session(
        self,
        transport: MessageStream,
        *,
        task_status: trio.TaskStatus[Session] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve one client over ``transport`` until it goes away.

        The session has a supervisor of its own: the actors its requests start (a
        task, a parked handler, a mounted upstream's connection) live there and are
        stopped when the session ends. The mounts are connected first, so that what
        the server declares is what they offer (see :mod:`.mount`).
        """
        async with open_supervisor() as supervisor:
            await self.mounts.connect(supervisor)
            session = await supervisor.start_session(self.create_session(transport))
            task_status.started(session)
            await session.closed.wait()
            supervisor.cancel()

    def run(
        self,
        transport: Literal["stdio", "http", "sse", "ws"] = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        **options: Any,
    ) -> None:
        """Serve until stdin closes (stdio) or Ctrl-C: what ``python my_server.py`` calls.

        ::

            if __name__ == "__main__":
                server.run()  # stdio; or server.run("http", port=8000)

        ``transport="http"`` serves Streamable HTTP at ``http://HOST:PORT/mcp`` (and
        legacy SSE at ``/sse``), ``"ws"`` WebSocket; the URL is printed to stderr.
        ``options`` are those of :func:`~mcp_actors.server.serve_http.serve_http`
        (``path``, ``stateless``, ``json_response``...). See :mod:`.hosting`.
        """
        from .hosting import run  # hosting imports this module

        if transport == "stdio":
            run(self, "stdio")
        else:
            run(self, transport, host=host, port=port, **options)

    def _list_changed(self, method: str) -> None:
        self.bus.publish(Change(method))

    def _deliver_to_sessions(self, change: Change) -> int:
        """The bus's receiver for legacy sessions: list changes to every initialized
        session, resource updates to the subscription actors of ``resources/subscribe``."""
        if change.method == "notifications/resources/updated":
            assert change.subject is not None
            return self._hub.publish(change.subject, change.params)
        if change.method.endswith("/list_changed"):
            sessions = list(self._sessions)
            for server_session in sessions:
                server_session.notify_soon(change.method)
            return len(sessions)
        return 0


#: Distinct capability answers kept (by revision, statelessness, what the server offers).
_DECLARED_KEPT = 64


def _may_run_as_task(tool: RegisteredTool | None) -> int:
    return int(tool is not None and tool.task != "never")


#: What a 2025-11-25 server with task tools declares: list (each requestor its own
#: tasks: see :mod:`.task_methods`), cancel, and task-augmented ``tools/call``.
_LEGACY_TASKS_CAPABILITY: dict[str, Any] = {
    "list": {},
    "cancel": {},
    "requests": {"tools": {"call": {}}},
}
_TASK_SUPPORT = {"optional": "optional", "always": "required"}


def _check_unique(kind: str, key: str, registered: Container[str], replace: bool) -> None:
    if key in registered and not replace:
        raise ValueError(
            f"{kind} {key!r} is already registered (remove it first, or add it with replace=True)"
        )


def _completion_key(argument: str, prompt: str | None, resource: str | None) -> CompletionKey:
    if (prompt is None) == (resource is None):
        raise TypeError("give exactly one of prompt= or resource=")
    if prompt is not None:
        return ("prompt", prompt, argument)
    assert resource is not None
    return ("resource", resource, argument)


@attrs.define(eq=False)
class ServerSession:
    """The server's side of one client session: the dispatcher of its requests."""

    server: Server
    session: Session = attrs.field(init=False)
    log_level: t.LoggingLevel | None = attrs.field(init=False, default=None)
    _subscriptions: dict[str, Subscription[t.ResourceUpdatedParams]] = attrs.field(
        init=False, factory=dict
    )
    #: A modern request's own state (see :meth:`for_request`); None: the session's.
    _own_state: SessionState | None = attrs.field(init=False, default=None)
    #: The MRTR run whose handler this view serves (modern era): where questions go.
    input_exchange: Run | RunningTask | None = attrs.field(init=False, default=None)

    @property
    def state(self) -> SessionState:
        return self._own_state or self.session.state

    @property
    def principal(self) -> Principal | None:
        """Who is calling, as the transport authenticated them (None: it does not)."""
        return self.session.transport.principal

    @property
    def client_identity(self) -> Hashable:
        """Who per-client bounds count this caller against (see
        :func:`~.authorization.client_identity`)."""
        transport = self.session.transport
        return authorization.client_identity(
            transport.principal, transport.client_address, transport
        )

    def for_request(self, modern: ModernRequest) -> ServerSession:
        """The server's side of one modern request: same server and connection, the
        request's own state (revision, client capabilities and info) and log level."""
        view = ServerSession(self.server)
        view.session = self.session
        view._own_state = modern.state
        view.log_level = modern.meta.log_level
        return view

    def serving(self, server: Server) -> ServerSession:
        """This view, answering from ``server``'s registry (a server mounted in ours): same
        connection, state, log level and questions' destination."""
        view = ServerSession(server)
        view.session = self.session
        view._own_state = self._own_state
        view.log_level = self.log_level
        view.input_exchange = self.input_exchange
        return view

    async def serve_method(self, method: str, params: Any, request: InboundRequest) -> Any:
        """Answer ``method`` with this view's server's handler, as part of ``request``."""
        handler = HANDLERS.get(method)
        if handler is None:
            raise errors.method_not_found(method)
        return await handler(self, request, params)

    def answered_by(self, exchange: RunningTask) -> ServerSession:
        """This view, its handler's questions going to ``exchange`` (a task's input)."""
        view = ServerSession(self.server)
        view.session = self.session
        view._own_state = self._own_state
        view.log_level = self.log_level
        view.input_exchange = exchange
        return view

    def follow(self, request: InboundRequest) -> None:
        """Serve ``request`` from now on (an MRTR retry resumed this view's handler): its
        connection, capabilities and log level."""
        self.session = session_of(request)
        if request.modern is not None:
            self._own_state = request.modern.state
            self.log_level = request.modern.meta.log_level

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

    def client_extension(self, identifier: str) -> dict[str, Any] | None:
        """The settings the client declared for extension ``identifier`` (in
        ``initialize``, or in this modern request's ``_meta``), or None if it did not."""
        return declared_settings(self.client_capabilities, identifier)

    @property
    def subscriptions(self) -> frozenset[str]:
        """The URIs this client is subscribed to."""
        return frozenset(self._subscriptions)

    # -- the dispatcher protocol -----------------------------------------------------

    async def handle_request(
        self, request: InboundRequest, params: Any, *, bypass_middleware: bool = False
    ) -> Any:
        """Serve one request: through the server's middleware, if any (``bypass_middleware``:
        the innermost middleware calling the handler), then its handler."""
        middleware = self.server.middleware
        if middleware and not bypass_middleware:
            return await self._through_middleware(middleware, request, params)
        handler = HANDLERS.get(request.method) or self.server.extension_handler(request.method)
        if handler is None:
            raise errors.method_not_found(request.method)
        modern = request.modern
        if modern is None:
            result = await handler(self, request, params)
            revision = self.session.state.revision  # a legacy request: the session's own
            return fit(result, revision) if revision.name in LACKING_REVISIONS else result
        return await self._handle_modern(handler, request, params, modern)

    async def _handle_modern(
        self, handler: Handler, request: InboundRequest, params: Any, modern: ModernRequest
    ) -> Any:
        """A modern request: served with its own state; errors and result in its era's shape."""
        server = self.server
        view = self.for_request(modern)
        try:
            if self.may_ask(request, params):
                # run as an actor that can park while the client answers
                result = await serve(
                    view,
                    server._continuations,
                    request,
                    params,
                    lambda view: handler(view, request, params),
                )
            else:
                result = await handler(view, request, params)
        except McpError as error:
            raise era_error(error, modern.state.revision) from None
        hint = server.cache_hint(request.method)
        return finish_result(result, server_info=server.info, cache_hint=hint)

    async def _through_middleware(
        self, middleware: tuple[Middleware, ...], request: InboundRequest, params: Any
    ) -> Any:
        """Serve ``request`` with ``middleware`` around it (a method of its own, so that the
        path without middleware makes no closure cells)."""
        modern = request.modern
        call = Call(
            request.method,
            params,
            "server",
            "inbound",
            caller=self.principal,
            session=self if modern is None else self.for_request(modern),
            request_id=request.id,
        )
        return await run_request(
            middleware,
            call,
            lambda call: self.handle_request(request, call.params, bypass_middleware=True),
        )

    def may_ask(self, request: InboundRequest, params: Any) -> bool:
        """Whether a modern request's handler could ask the client something (MRTR).

        Only such a handler runs as an actor that can park (:func:`.mrtr.serve`), which
        costs a task of its own; the others run in the request's task. A handler can
        ask only through the :class:`Context` it is given, so a tool, prompt or resource
        whose function takes none never asks, nor does a tool declared ``inline``. A
        retry carrying ``requestState`` or ``inputResponses`` always takes the MRTR path,
        which checks them. A mounted server's handler may always ask, unless the mount
        passes its questions through (``Mountable.passes_input_through``: a modern
        upstream's own ``input_required``, and its retries, go by as they are).
        """
        if request.method not in MRTR_METHODS:
            return False
        retry = (
            getattr(params, "request_state", UNSET) is not UNSET
            or getattr(params, "input_responses", UNSET) is not UNSET
        )
        server = self.server
        mounts = server.mounts
        if request.method == "tools/call":
            tool = server.find_tool(params.name)
            if tool is None:
                return self._mount_may_ask(mounts.route_name(params.name), params)
            return retry or (not tool.inline and _takes_context(tool))
        if request.method == "prompts/get":
            prompt = server._prompts.get(params.name)
            if prompt is None:
                return self._mount_may_ask(mounts.route_name(params.name), params)
            return retry or _takes_context(prompt)
        try:
            resource, _ = server._resources.resolve(params.uri)
        except McpError:  # the handler answers -32002 without asking, unless mounted
            return self._mount_may_ask(mounts.route_uri(params.uri), params)
        return retry or _takes_context(resource)

    def _mount_may_ask(self, routed: tuple[Mount, str] | None, params: Any) -> bool:
        """Whether a request routed to a mount (``routed``) may ask through its Context:
        unless the mount passes questions through — but a retry of a round this server
        asked itself (its ``requestState`` is one of ours: the mount passed nothing
        through then, e.g. before its upstream's era was known) goes back to that round."""
        if routed is None:
            return False
        if not routed[0].target.passes_input_through():
            return True
        state = getattr(params, "request_state", UNSET)
        return state is not UNSET and self.server._continuations.issued(state)

    def serves_inline(self, request: InboundRequest) -> bool:
        """Whether ``request`` calls a tool declared never to wait (``inline=True``) and
        no middleware stands in between (middleware may wait)."""
        return not self.server.middleware and serves_inline(self.server._tools, request)

    def describe_server(self, revision: Revision, *, stateless: bool) -> ServerDescription:
        """What the server tells a client of ``revision``: the ``initialize`` answer's
        content, and the capabilities a modern request is served with."""
        return self.server.describe(revision, stateless=stateless)

    def handle_notification(self, method: str, params: Any) -> None:
        middleware = self.server.middleware
        if not middleware:
            self._take_notification(method, params)
            return
        call = Call(method, params, "server", "inbound", caller=None, session=self)
        run_notification(middleware, call, self._take_call)

    def _take_call(self, call: Call) -> None:
        self._take_notification(call.method, call.params)

    def _take_notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            server = self.server
            server.trio_token = trio.lowlevel.current_trio_token()
            server._sessions[self] = None
            self.session.closed_callbacks.append(lambda: server._sessions.pop(self, None))
        elif method == "notifications/roots/list_changed":
            for handler in self.server._roots_changed:
                self.session.submit(_call_soon(handler, self))

    # -- subscriptions ---------------------------------------------------------------

    def subscribe(self, uri: str) -> None:
        """Start this session's subscription actor for ``uri`` (idempotent)."""
        if uri in self._subscriptions:
            return
        self._subscriptions[uri] = self.server._hub.subscribe(
            uri, self._deliver_update, self.session.start_actor
        )

    def unsubscribe(self, uri: str) -> None:
        """Stop the subscription actor for ``uri`` (idempotent)."""
        subscription = self._subscriptions.pop(uri, None)
        if subscription is not None:
            subscription.cancel()

    async def _deliver_update(self, params: t.ResourceUpdatedParams) -> None:
        await self.session.notify("notifications/resources/updated", params)

    # -- sending ---------------------------------------------------------------------

    async def log(
        self,
        level: t.LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        related_request: RequestId | None = None,
    ) -> None:
        """Send ``notifications/message`` if ``level`` passes the session's threshold."""
        if not self._passes(level):
            return
        params = t.LoggingMessageParams(level=level, data=data, logger=_unset(logger))
        await self.session.notify("notifications/message", params, related_request=related_request)

    def log_soon(self, level: t.LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Like :meth:`log`, never waiting: queued, or dropped (counted) if the queue is full."""
        if self._passes(level) and self.state.phase is Phase.OPERATING:
            self.session.submit(lambda: self.log(level, data, logger=logger))

    def _passes(self, level: t.LoggingLevel) -> bool:
        threshold = self.log_level
        if threshold is None:  # no level: all (legacy), none (modern, per request)
            return not self.state.revision.log_level_per_request
        return LOG_SEVERITY[level] >= LOG_SEVERITY[threshold]

    @property
    def log_threshold(self) -> t.LoggingLevel | None:
        """The lowest level of the log messages this client gets (None: it gets none).

        Its level, once set (``logging/setLevel``; per request in the 2026-07-28 era);
        until then every level in a legacy session, none in the modern era.
        """
        if self.log_level is not None:
            return self.log_level
        return None if self.state.revision.log_level_per_request else "debug"

    def notify_soon(self, method: str, params: Any = None) -> None:
        """Send a notification without waiting, if this session may get it (else nothing)."""
        if self.state.phase is not Phase.OPERATING:
            return
        try:
            self.session.notify_soon(method, params)
        except ProtocolViolation as violation:  # e.g. a kind this session did not declare
            log.debug("not sent to this session: %s", violation)

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = None,
        timeout: float | UnsetType | None = UNSET,
        related_request: RequestId | None = None,
    ) -> Any:
        """Send the client a request of any method and await its result (see
        :meth:`Session.request`), through the server's middleware; refused
        (:class:`ProtocolViolation`, nothing sent) where this session cannot carry
        server-to-client requests (stateless, modern era)."""
        state = self.state
        if not state.back_channel or not state.revision.server_requests:
            raise ProtocolViolation(
                errors.INVALID_REQUEST,
                f"{method} cannot be sent: this request is served on its own"
                f" (protocol revision {state.revision.name}, no channel back to the client)",
            )
        return await self.send_request(
            method,
            params,
            result_type=result_type,
            timeout=timeout,
            related_request=related_request,
        )

    async def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: Any = None,
        timeout: float | UnsetType | None = UNSET,
        related_request: RequestId | None = None,
    ) -> Any:
        """Send the client a request through the server's middleware, with the session's
        own checks only (:meth:`request` checks the channel first; the questions of
        :mod:`.client_requests` have checked theirs)."""
        middleware = self.server.middleware
        if not middleware:
            return await self.session.request(
                method,
                params,
                result_type=result_type,
                timeout=timeout,
                related_request=related_request,
            )
        return await self._request_through_middleware(
            middleware, method, params, result_type, timeout, related_request
        )

    async def _request_through_middleware(
        self,
        middleware: tuple[Middleware, ...],
        method: str,
        params: Any,
        result_type: Any,
        timeout: float | UnsetType | None,
        related_request: RequestId | None,
    ) -> Any:
        async def send(call: Call) -> Any:
            return await self.session.request(
                call.method,
                call.params,
                result_type=result_type,
                timeout=timeout,
                related_request=related_request,
            )

        return await run_request(
            middleware, Call(method, params, "server", "outbound", session=self), send
        )

    async def sample(
        self, messages: Any, *, max_tokens: int, **options: Any
    ) -> t.CreateMessageResult:
        """``sampling/createMessage`` outside any request (see ``Context.sample``)."""
        return await client_requests.create_message(
            self, messages, max_tokens=max_tokens, **options
        )

    async def elicit(
        self, message: str, form: Mapping[str, Any] | type, **options: Any
    ) -> ElicitationResult[Any]:
        """Form-mode ``elicitation/create`` outside any request (see ``Context.elicit``)."""
        return await client_requests.elicit(self, message, form, **options)

    async def list_roots(self, *, timeout: float | UnsetType | None = UNSET) -> list[t.Root]:
        """The client's roots (``roots/list``)."""
        return await client_requests.list_roots(self, timeout=timeout)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation finished (2025-11-25)."""
        params = t.ElicitationCompleteParams(elicitation_id=elicitation_id)
        await self.session.notify("notifications/elicitation/complete", params)

    def context(self, request: InboundRequest) -> Context:
        context = Context(request, self)
        if self.input_exchange is not None:  # an MRTR retry may resume it on another request
            self.input_exchange.contexts.append(context)
        return context


def _takes_context(handler: RegisteredTool | RegisteredPrompt | RegisteredResource) -> bool:
    """Whether ``handler``'s function is given a :class:`Context` (its only way to ask)."""
    return handler.signature.context_parameter is not None


def _call_soon(
    handler: RootsChangedHandler, server_session: ServerSession
) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        value = handler(server_session)
        if value is not None:
            await value

    return run
