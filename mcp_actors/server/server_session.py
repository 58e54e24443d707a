"""The server's side of one client session: :class:`ServerSession`, the dispatcher.

Each connection gets a :class:`ServerSession` (:meth:`.app.Server.create_session`):
it answers that client's requests with the handlers of :mod:`.handlers` (through the
server's middleware), holds its negotiated revision, capabilities, logging level and
resource subscriptions, and sends it notifications and requests. A modern request
(2026-07-28) is served by a view of its own (:meth:`ServerSession.for_request`)
whose state is that request's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Unpack

import attrs
import trio
from msgspec import UNSET, UnsetType

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError, ProtocolViolation
from ..protocol.extensions import declared_settings
from ..protocol.fit import LACKING_REVISIONS, fit
from ..protocol.jsonrpc import RequestId
from ..protocol.lifecycle import Phase, ServerDescription, SessionState
from ..protocol.methods import ROOTS_CHANGED
from ..protocol.modern import ModernRequest
from ..protocol.versions import Revision
from ..runtime.middleware import Call, Middleware, run_notification, run_request
from ..runtime.request import InboundRequest
from ..runtime.session import Session, session_of
from ..runtime.subscription import Deliver, Starter, Subscription
from ..transports.http.auth import Principal
from . import authorization, client_requests
from .client_requests import MessageLike, SamplingOptions
from .content import unset
from .context import LOG_SEVERITY, Context
from .elicitation import ElicitationResult
from .modern import era_error, finish_result
from .mount import LIST_FIELDS, Mounts
from .mrtr import MRTR_METHODS, serve
from .prompts import RegisteredPrompt
from .protocols import InputExchange, TaskRun
from .resources import RegisteredResource
from .tools import RegisteredTool

if TYPE_CHECKING:
    from .caching import CacheHint
    from .completion import Completer
    from .mrtr import Continuations
    from .tasks import TaskManager

log = logging.getLogger("mcp_actors.server")

#: ``on_roots_changed(server_session)``; may be sync or async.
RootsChangedHandler = Callable[["ServerSession"], Awaitable[None] | None]
#: A method's handler: ``handler(server_session, request, params)`` -> its result.
Handler = Callable[["ServerSession", InboundRequest, Any], Awaitable[Any]]


class SessionServer(Protocol):
    """The server a :class:`ServerSession` answers from, as the session and the method
    handlers (:mod:`.handlers`, :mod:`.task_methods`) use it: a :class:`~.app.Server`
    is one (mypy checks it where the server makes its sessions).

    Typed against this Protocol rather than ``Server``, the dispatcher need not import
    the facade that imports it: the imports run one way.
    """

    @property
    def info(self) -> t.Implementation: ...

    @property
    def instructions(self) -> str | None: ...

    @property
    def supported_versions(self) -> tuple[str, ...]: ...

    @property
    def page_size(self) -> int | None: ...

    @property
    def mask_errors(self) -> bool: ...

    @property
    def middleware(self) -> tuple[Middleware, ...]: ...

    @property
    def mounts(self) -> Mounts: ...

    @property
    def task_manager(self) -> TaskManager: ...

    @property
    def continuations(self) -> Continuations: ...

    @property
    def roots_changed_handlers(self) -> tuple[RootsChangedHandler, ...]: ...

    @property
    def trio_token(self) -> trio.lowlevel.TrioToken | None: ...

    def handler(self, method: str) -> Handler | None: ...

    def find_tool(self, name: str) -> RegisteredTool | None: ...

    def find_prompt(self, name: str) -> RegisteredPrompt | None: ...

    def resolve_resource(self, uri: str) -> tuple[RegisteredResource, dict[str, str]]: ...

    def knows_resource(self, uri: str) -> bool: ...

    def definitions(self, method: str) -> list[Any]: ...

    def completer(self, ref: t.Reference, argument: str) -> Completer | None: ...

    def serves_inline(self, request: InboundRequest) -> bool: ...

    def cache_hint(self, method: str) -> CacheHint: ...

    def describe(self, revision: Revision, *, stateless: bool = False) -> ServerDescription: ...

    def session_initialized(self, server_session: ServerSession) -> None: ...

    def subscribe_updates(
        self, uri: str, deliver: Deliver[t.ResourceUpdatedParams], start_actor: Starter
    ) -> Subscription[t.ResourceUpdatedParams]: ...

    async def serve_listen(
        self, server_session: ServerSession, request: InboundRequest, params: Any
    ) -> t.SubscriptionsListenResult: ...


@attrs.define(eq=False)
class ServerSession:
    """The server's side of one client session: the dispatcher of its requests."""

    server: SessionServer
    session: Session = attrs.field(init=False)
    log_level: t.LoggingLevel | None = attrs.field(init=False, default=None)
    _subscriptions: dict[str, Subscription[t.ResourceUpdatedParams]] = attrs.field(
        init=False, factory=dict
    )
    #: A modern request's own state (see :meth:`for_request`); None: the session's.
    _own_state: SessionState | None = attrs.field(default=None, kw_only=True)
    #: The MRTR run whose handler this view serves (modern era): where questions go.
    input_exchange: InputExchange | None = attrs.field(init=False, default=None)
    #: The task whose run this view serves (None: a plain call; see :meth:`in_task`).
    task: TaskRun | None = attrs.field(init=False, default=None)

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
        view = ServerSession(self.server, own_state=modern.state)
        view.session = self.session
        view.log_level = modern.meta.log_level
        return view

    def serving(self, server: SessionServer) -> ServerSession:
        """This view, answering from ``server``'s registry (a server mounted in ours): same
        connection, state, log level and questions' destination."""
        view = ServerSession(server, own_state=self._own_state)
        view.session = self.session
        view.log_level = self.log_level
        view.input_exchange = self.input_exchange
        view.task = self.task
        return view

    async def serve_method(self, method: str, params: Any, request: InboundRequest) -> Any:
        """Answer ``method`` with this view's server's handler, as part of ``request``."""
        handler = self.server.handler(method)
        if handler is None:
            raise errors.method_not_found(method)
        return await handler(self, request, params)

    def in_task(self, task: TaskRun, exchange: InputExchange | None) -> ServerSession:
        """This view, serving a run of ``task`` (``ctx.task_id``, ``ctx.attempt``), its
        handler's questions going to ``exchange`` (the task's input, modern era; None:
        requests on the session, as in a legacy session)."""
        view = ServerSession(self.server, own_state=self._own_state)
        view.session = self.session
        view.log_level = self.log_level
        view.input_exchange = exchange
        view.task = task
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
    def trio_token(self) -> trio.lowlevel.TrioToken | None:
        """How another thread hands work to the server's Trio run (None: not running yet)."""
        return self.server.trio_token

    async def start_task(self, work: Callable[[], Awaitable[Any]]) -> t.CreatedTask:
        """Run ``work()`` as a task of the call this view serves (``tasks.start_task``)."""
        return await self.server.task_manager.start_deferred(self, work)

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
        handler = self.server.handler(request.method)
        if handler is None:
            raise errors.method_not_found(request.method)
        modern = request.modern
        if modern is None:
            result = await handler(self, request, params)
            revision = self.session.state.revision  # a legacy request: the session's own
            return fit(result, revision) if revision.name in LACKING_REVISIONS else result
        return await self._handle_modern(handler, request, params, modern)

    async def _handle_modern(
        self,
        handler: Callable[[ServerSession, InboundRequest, Any], Awaitable[Any]],
        request: InboundRequest,
        params: Any,
        modern: ModernRequest,
    ) -> Any:
        """A modern request: served with its own state; errors and result in its era's shape."""
        server = self.server
        view = self.for_request(modern)
        try:
            if self.may_ask(request, params):
                # run as an actor that can park while the client answers
                result = await serve(
                    view,
                    server.continuations,
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
            lambda call: self.handle_request(
                request
                if call.params is params and call.method == request.method
                else request.passed_on(call.method, call.params),
                call.params,
                bypass_middleware=True,
            ),
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
                return self._mount_may_ask(mounts.passes_input_through(params.name), params)
            return retry or (not tool.inline and _takes_context(tool))
        if request.method == "prompts/get":
            prompt = server.find_prompt(params.name)
            if prompt is None:
                return self._mount_may_ask(mounts.passes_input_through(params.name), params)
            return retry or _takes_context(prompt)
        try:
            resource, _ = server.resolve_resource(params.uri)
        except McpError:  # the handler answers -32002 without asking, unless mounted
            return self._mount_may_ask(mounts.passes_input_through(uri=params.uri), params)
        return retry or _takes_context(resource)

    def _mount_may_ask(self, passes_through: bool | None, params: Any) -> bool:
        """Whether a request routed to a mount may ask through its Context (None: no
        mount serves it): unless the mount ``passes_through`` questions — but a retry of
        a round this server asked itself (its ``requestState`` is one of ours: the mount
        passed nothing through then, e.g. before its upstream's era was known) goes back
        to that round."""
        if passes_through is None:
            return False
        if not passes_through:
            return True
        state = getattr(params, "request_state", UNSET)
        return state is not UNSET and self.server.continuations.issued(state)

    def session_ended(self) -> None:
        """The session has ended: let go of it (they point at each other, see
        :meth:`~mcp_actors.runtime.dispatch.Dispatcher.session_ended`). A view made for
        a request or a task keeps its own reference, as long as it lives."""
        del self.session

    def serves_inline(self, request: InboundRequest) -> bool:
        """Whether the reader serves ``request`` (:mod:`~mcp_actors.runtime.inline`): a call
        of a tool declared ``inline=True``, or a list with no mounted server's list to
        await; never through middleware (it may wait)."""
        server = self.server
        if server.middleware:
            return False
        if request.method in LIST_FIELDS:
            return not server.mounts
        return server.serves_inline(request)

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
            self.server.session_initialized(self)
        elif method == ROOTS_CHANGED:
            for handler in self.server.roots_changed_handlers:
                self.session.submit(_call_soon(handler, self))

    # -- subscriptions ---------------------------------------------------------------

    def subscribe(self, uri: str) -> None:
        """Start this session's subscription actor for ``uri`` (idempotent)."""
        if uri in self._subscriptions:
            return
        self._subscriptions[uri] = self.server.subscribe_updates(
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
        params = t.LoggingMessageParams(level=level, data=data, logger=unset(logger))
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
        self,
        messages: str | Sequence[MessageLike],
        *,
        max_tokens: int,
        timeout: float | UnsetType | None = UNSET,
        **options: Unpack[SamplingOptions],
    ) -> t.CreateMessageResult:
        """``sampling/createMessage`` outside any request (see ``Context.sample``)."""
        return await client_requests.create_message(
            self, messages, max_tokens=max_tokens, timeout=timeout, **options
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
