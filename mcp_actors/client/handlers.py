"""What a client offers its server: sampling, elicitation, roots, and notification callbacks.

Pass a :class:`ClientHandlers` to ``open_client(..., handlers=...)``. Each handler
you give turns the matching capability on in ``initialize`` — there is nothing
else to declare::

    async def sample(params: types.CreateMessageParams) -> types.CreateMessageResult:
        reply = await my_model(params.messages, max_tokens=params.max_tokens)
        return types.CreateMessageResult(role="assistant", content=text(reply), model="m")

    handlers = ClientHandlers(
        sampling=sample,                           # -> capabilities.sampling
        elicitation=ask_user,                      # -> capabilities.elicitation
        roots=[types.Root(uri="file:///work")],    # -> capabilities.roots.listChanged
        on_log=print,
    )

Server→client *requests* (``sampling/createMessage``, ``elicitation/create``,
``roots/list``) run as request actors of the session: each in its own task and
cancel scope, so a slow elicitation (a human typing) never holds up other
traffic, and a server's ``notifications/cancelled`` cancels the handler.
Handlers may be sync or async; raise :class:`~mcp_actors.protocol.errors.McpError`
to answer with an error. *Notifications* (log messages, list changes) are handed
to the session's bounded notification queue, off the reader task.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar

import attrs
from msgspec import UNSET

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.jsonrpc import RequestId
from ..protocol.modern import SUBSCRIPTION_ID_KEY
from ..runtime.middleware import Call, Middleware, run_request
from ..runtime.request import InboundRequest
from ..runtime.session import Session
from ..runtime.subscription import SubscriptionHub

R = TypeVar("R")
MaybeAwaitable: TypeAlias = Awaitable[R] | R

#: ``sampling(params)`` answers ``sampling/createMessage``.
SamplingHandler = Callable[[t.CreateMessageParams], MaybeAwaitable[t.CreateMessageResult]]
#: ``elicitation(params)`` answers ``elicitation/create`` (``params.mode`` says form or URL).
ElicitationHandler = Callable[[t.ElicitParams], MaybeAwaitable[t.ElicitResult]]
#: ``on_progress(progress, total, message)``; may be sync or async.
ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None] | None]
#: ``on_log(params)`` for ``notifications/message``; may be sync or async.
LogHandler = Callable[[t.LoggingMessageParams], Awaitable[None] | None]
#: ``on_list_changed(method)`` for the ``notifications/*/list_changed`` family.
ListChangedHandler = Callable[[str], Awaitable[None] | None]
#: ``on_elicitation_complete(elicitation_id)`` for ``notifications/elicitation/complete``.
ElicitationCompleteHandler = Callable[[str], Awaitable[None] | None]

ElicitationMode = Literal["form", "url"]
#: The callback fields of :class:`ClientHandlers`.
CALLBACKS = ("sampling", "elicitation", "on_log", "on_list_changed", "on_elicitation_complete")


@attrs.define(eq=False)
class ClientHandlers:
    """The callbacks a client offers the server (see the module docstring)."""

    sampling: SamplingHandler | None = None
    #: Declare ``sampling.tools`` (2025-11-25): the sampling handler accepts ``tools``.
    sampling_tools: bool = False
    elicitation: ElicitationHandler | None = None
    #: The elicitation modes ``elicitation`` serves; ``"url"`` is 2025-11-25.
    elicitation_modes: tuple[ElicitationMode, ...] = ("form",)
    #: The roots offered to the server; change them with ``Client.set_roots``.
    roots: Sequence[t.Root | str] | None = None
    on_log: LogHandler | None = None
    on_list_changed: ListChangedHandler | None = None
    on_elicitation_complete: ElicitationCompleteHandler | None = None

    def adapted(self, adapt: Callable[[Callable[..., Any]], Callable[..., Any]]) -> ClientHandlers:
        """A copy whose every callback is ``adapt(callback)``.

        How the asyncio and sync fronts run your callbacks on their side of the thread
        boundary (the event loop, a worker thread) while the session runs in Trio.
        """
        changes: dict[str, Any] = {
            name: adapt(callback)
            for name in CALLBACKS
            if (callback := getattr(self, name)) is not None
        }
        return attrs.evolve(self, **changes)

    def capabilities(self) -> t.ClientCapabilities:
        """The capabilities these handlers imply."""
        sampling: dict[str, Any] | None = None
        if self.sampling is not None:
            sampling = {"tools": {}} if self.sampling_tools else {}
        elicitation: dict[str, Any] | None = None
        if self.elicitation is not None:
            elicitation = {mode: {} for mode in self.elicitation_modes}
        return t.ClientCapabilities(
            sampling=sampling if sampling is not None else UNSET,
            elicitation=elicitation if elicitation is not None else UNSET,
            roots=t.RootsCapability(list_changed=True) if self.roots is not None else UNSET,
        )


def merge_capabilities(
    implied: t.ClientCapabilities, explicit: t.ClientCapabilities | None
) -> t.ClientCapabilities:
    """``implied`` with every field ``explicit`` sets taking precedence."""
    if explicit is None:
        return implied
    fields = {
        name: getattr(explicit, name)
        if getattr(explicit, name) is not UNSET
        else getattr(implied, name)
        for name in explicit.__struct_fields__
    }
    return t.ClientCapabilities(**fields)


def as_root(root: t.Root | str) -> t.Root:
    """A ``Root`` (a bare string is its URI)."""
    return t.Root(uri=root) if isinstance(root, str) else root


@attrs.define(eq=False)
class ClientDispatcher:
    """Answers what the server sends the client: requests, and notifications."""

    handlers: ClientHandlers
    #: Around every request the server sends (see :mod:`~mcp_actors.runtime.middleware`).
    middleware: tuple[Middleware, ...] = ()
    session: Session = attrs.field(init=False)
    #: The roots ``roots/list`` answers with.
    roots: list[t.Root] = attrs.field(init=False)
    #: ``notifications/resources/updated`` fan-out to ``Client.subscribe`` channels.
    updates: SubscriptionHub[t.ResourceUpdatedParams] = attrs.field(
        init=False, factory=SubscriptionHub
    )
    #: How many local ``subscribe`` blocks hold each URI (the server is told once).
    interest: dict[str, int] = attrs.field(init=False, factory=dict)
    #: Listen streams by subscription id: where their tagged notifications go.
    listens: dict[RequestId, Callable[[str, Any], None]] = attrs.field(init=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        self.roots = [as_root(root) for root in self.handlers.roots or ()]

    async def handle_request(self, request: InboundRequest, params: Any) -> Any:
        if not self.middleware:
            return await self.answer(request.method, params)
        call = Call(
            request.method, params, "client", "inbound", session=self, request_id=request.id
        )
        return await run_request(self.middleware, call, self._answer_call)

    async def _answer_call(self, call: Call) -> Any:
        return await self.answer(call.method, call.params)

    async def answer(self, method: str, params: Any) -> Any:
        """The client's result for a server's ``method`` (a request of a legacy session,
        or an input request of a modern ``input_required`` result)."""
        handlers = self.handlers
        if method == "sampling/createMessage" and handlers.sampling is not None:
            return await _resolve(handlers.sampling(params))
        if method == "elicitation/create" and handlers.elicitation is not None:
            mode = "form" if params.mode is UNSET else params.mode
            if mode not in handlers.elicitation_modes:
                raise McpError(
                    errors.INVALID_PARAMS, f"this client does not support {mode}-mode elicitation"
                )
            return await _resolve(handlers.elicitation(params))
        if method == "roots/list" and handlers.roots is not None:
            return t.ListRootsResult(roots=list(self.roots))
        raise errors.method_not_found(method)

    def serves_inline(self, request: InboundRequest) -> bool:
        """A client's handlers (sampling, elicitation...) may wait: each gets its own task."""
        return False

    def session_ended(self) -> None:
        """The session has ended: a client's dispatcher holds nothing of it."""

    def handle_notification(self, method: str, params: Any) -> None:
        handlers = self.handlers
        meta = getattr(params, "meta", None)
        if isinstance(meta, dict) and SUBSCRIPTION_ID_KEY in meta:
            listener = self.listens.get(meta[SUBSCRIPTION_ID_KEY])
            if listener is not None:
                listener(method, params)
            return  # a listen stream's, never the session-wide handlers'
        if method == "notifications/resources/updated":
            self.updates.publish(params.uri, params)
        elif method == "notifications/message" and handlers.on_log is not None:
            on_log = handlers.on_log
            self.session.submit(lambda: maybe_await(on_log(params)))
        elif method.endswith("/list_changed") and handlers.on_list_changed is not None:
            on_list_changed = handlers.on_list_changed
            self.session.submit(lambda: maybe_await(on_list_changed(method)))
        elif (
            method == "notifications/elicitation/complete"
            and handlers.on_elicitation_complete is not None
        ):
            on_complete = handlers.on_elicitation_complete
            self.session.submit(lambda: maybe_await(on_complete(params.elicitation_id)))

    def add_interest(self, uri: str) -> bool:
        """Count one more local subscriber of ``uri``; True if it is the first."""
        self.interest[uri] = self.interest.get(uri, 0) + 1
        return self.interest[uri] == 1

    def drop_interest(self, uri: str) -> bool:
        """Count one subscriber fewer; True if it was the last."""
        left = self.interest.get(uri, 0) - 1
        if left > 0:
            self.interest[uri] = left
            return False
        self.interest.pop(uri, None)
        return True


async def _resolve(value: Awaitable[R] | R) -> R:
    if inspect.isawaitable(value):
        result: R = await value
        return result
    return value


async def maybe_await(value: Awaitable[None] | None) -> None:
    if inspect.isawaitable(value):
        await value
