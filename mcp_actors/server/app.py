"""The server a user writes: ``Server(name, version)`` plus decorators.

:class:`Server` is the facade shared by every session: what it offers is its
:class:`~.registry.Registry` (tools, resources and resource templates, prompts,
completers, extensions); here it adds what serving needs: the capabilities it
declares, the bus and subscription hub carrying changes, listen streams, tasks,
parked MRTR handlers and middleware. Each connection gets a
:class:`~.server_session.ServerSession` (re-exported here): the dispatcher that
answers that client's requests. Running it (:meth:`Server.run`) is the job of
:mod:`.hosting`. Handlers are plain async (or sync) functions; the runtime turns
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
from functools import partial
from typing import Any, Literal

import attrs
import trio

from .._version import __version__
from ..protocol import types as t
from ..protocol.lifecycle import ServerDescription, SessionState
from ..protocol.request_state import StateKeys
from ..protocol.versions import ALL, LATEST, REVISIONS, Revision
from ..runtime.actors import ActorHost
from ..runtime.bus import CHANGES_MISSED, LIST_CHANGES, Bus, Change, MemoryBus
from ..runtime.config import SessionConfig
from ..runtime.middleware import Middleware, check_middleware
from ..runtime.request import InboundRequest
from ..runtime.session import Session
from ..runtime.subscription import Deliver, HubStatistics, Starter, Subscription, SubscriptionHub
from ..runtime.supervisor import open_supervisor
from ..runtime.task_store import TaskStore
from ..transports.abc import MessageStream
from . import authorization
from .caching import CacheHint, check_cacheable
from .capabilities import DeclaredCapabilities
from .content import unset
from .context import SessionView
from .handlers import run_tool
from .listen import ListenOffer, ListenStatistics, ListenStreams
from .log_bridge import McpLogHandler
from .mount import Mountable, MountedServer, Mounts
from .mrtr import Continuations, ContinuationStatistics, MrtrSettings
from .registry import Registry
from .server_session import RootsChangedHandler, ServerSession
from .task_methods import task_change
from .task_rerun import rerun_work
from .tasks import TaskManager, TaskSettings, TaskStatistics

__all__ = ["RootsChangedHandler", "Server", "ServerSession"]

#: The bus carries ``tasks/update`` answers to the worker running the task under this name
#: (between workers only: no client is ever sent it).
TASK_ANSWERS = "mcp-actors/tasks/answers"


def _known_versions(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, tuple) or not value:
        raise ValueError(f"supported_versions must be a non-empty tuple, not {value!r}")
    unknown = [version for version in value if version not in ALL]
    if unknown:
        raise ValueError(
            f"supported_versions: {', '.join(map(repr, unknown))} not among {', '.join(ALL)}"
        )


@attrs.define(eq=False)
class Server(Registry):
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
    _sessions: dict[ServerSession, None] = attrs.field(init=False, factory=dict)
    #: The capabilities declared so far, by everything they depend on (see capabilities):
    #: computed once per distinct answer, and one object shared by every session given it.
    _declared: DeclaredCapabilities = attrs.field(init=False, factory=DeclaredCapabilities)
    #: The latest description made (see :meth:`describe`).
    _described: ServerDescription | None = attrs.field(init=False, default=None)
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
        self.task_manager.rerun = partial(rerun_work, self, run_tool)

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

    @property
    def continuations(self) -> Continuations:
        """The handlers parked waiting for an MRTR retry (see :mod:`.mrtr`)."""
        return self._continuations

    def view_of(self, view: SessionView) -> SessionView:
        """``view`` (a request's server side) answering from this server, mounted in the
        one ``view`` serves (see :class:`~.mount.MountedServer`)."""
        if not isinstance(view, ServerSession):
            raise TypeError(f"a server answers only for its ServerSessions, not {view!r}")
        return view.serving(self)

    def continuation_statistics(self) -> ContinuationStatistics:
        """Handlers parked waiting for an MRTR retry, and what became of them (see :mod:`.mrtr`)."""
        return self._continuations.statistics()

    def notify_resource_updated(self, uri: str, *, meta: dict[str, Any] | None = None) -> int:
        """Tell every session subscribed to ``uri`` that it changed; returns how many.

        Never blocks: each subscriber's actor sends ``notifications/resources/updated``
        at its own pace, and a subscriber that is behind gets one notification for
        many updates (the latest, with its ``meta``). Callable from the Trio thread
        only (from another thread, use ``trio.from_thread.run_sync``).
        """
        params = t.ResourceUpdatedParams(uri=uri, meta=unset(meta))
        return self.bus.publish(Change("notifications/resources/updated", uri, params))

    def scopes_needed(self, method: str, target: str | None) -> frozenset[str]:
        """The OAuth scopes a request needs: ``method`` acting on ``target`` (a tool or
        prompt name, a resource URI), as declared with ``scopes=`` on the decorators."""
        return authorization.scopes_needed(self, method, target)

    def subscription_statistics(self) -> HubStatistics:
        """Subscriptions alive now, and updates published / delivered / coalesced so far."""
        return self._hub.statistics()

    async def take_over_tasks(
        self, host: ActorHost, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """While serving: run again in ``host`` the tasks of this server whose worker
        died (a shared task store; see :meth:`.tasks.TaskManager.take_over`)."""
        await self.task_manager.take_over(host, task_status=task_status)

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
            self.knows_resource,
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

    # -- roots -----------------------------------------------------------------------

    def on_roots_changed(self, handler: RootsChangedHandler) -> RootsChangedHandler:
        """Decorator: call ``handler(server_session)`` when a client's roots change.

        It runs on the session's notification task, off the reader.
        """
        self._roots_changed.append(handler)
        return handler

    @property
    def roots_changed_handlers(self) -> tuple[RootsChangedHandler, ...]:
        """What :meth:`on_roots_changed` registered, in order."""
        return tuple(self._roots_changed)

    def session_initialized(self, server_session: ServerSession) -> None:
        """``server_session``'s client sent ``notifications/initialized``: it is among
        :attr:`sessions` (told of list changes) until its session closes."""
        self.trio_token = trio.lowlevel.current_trio_token()
        self._sessions[server_session] = None
        server_session.session.when_closed(lambda: self._sessions.pop(server_session, None))

    def subscribe_updates(
        self,
        uri: str,
        deliver: Deliver[t.ResourceUpdatedParams],
        start_actor: Starter,
    ) -> Subscription[t.ResourceUpdatedParams]:
        """A subscription actor delivering ``uri``'s updates to ``deliver``, started with
        ``start_actor`` (see :meth:`notify_resource_updated`)."""
        return self._hub.subscribe(uri, deliver, start_actor)

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
        mounted = self.mounts.kinds()  # what the mounted servers offer (see .mount)
        return self._declared.get(
            revision, stateless, self.offer(), mounted, self.extensions_declared
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
        return t.Implementation(name=self.name, version=self.version, title=unset(self.title))

    def describe(self, revision: Revision, *, stateless: bool = False) -> ServerDescription:
        """What the server tells a client negotiating ``revision`` (``initialize``'s result);
        the latest is kept (every 2026-07-28 request is served with one)."""
        capabilities = self.capabilities(revision, stateless=stateless)
        described = self._described
        if (
            described is None
            or described.capabilities is not capabilities
            or described.instructions != self.instructions
            or described.server_info != self.info
        ):
            described = self._described = ServerDescription(
                capabilities=capabilities, server_info=self.info, instructions=self.instructions
            )
        return described

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
        if change.method == CHANGES_MISSED:  # every list changed, every resource updated
            new, topics = "notifications/resources/updated", self._hub.topics()
            catch_up = [Change(method) for method in LIST_CHANGES]
            catch_up += [Change(new, u, t.ResourceUpdatedParams(uri=u)) for u in topics]
            return sum(self._deliver_to_sessions(each) for each in catch_up)
        if change.method == "notifications/resources/updated":
            assert change.subject is not None
            return self._hub.publish(change.subject, change.params)
        if change.method.endswith("/list_changed"):
            sessions = list(self._sessions)
            for server_session in sessions:
                server_session.notify_soon(change.method)
            return len(sessions)
        return 0
