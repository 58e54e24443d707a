"""A remote server behind one long-lived client, mountable in a Server: the proxy's engine.

An :class:`Upstream` is what ``server.mount(Upstream(target), prefix=...)`` and
:func:`~mcp_actors.gateway.proxy` put behind a server: every tool, resource and
prompt request for it is passed on over **one** client connection to ``target``
(any target :func:`~mcp_actors.open_client` takes: ``"stdio:CMD"``, a URL, an
in-process Server), opened when the mounting server starts serving
(:meth:`Upstream.connect`; else, or once lost, at the next request) and kept — not
a client and a handshake per call. The connection is an actor of the serving
supervisor (of the session, when there is none), so it ends with the server.

What crosses the hop, for each call:

- **cancellation, both ways**: the downstream client cancels (or disconnects) →
  the request's actor is cancelled → the upstream call is abandoned and the upstream
  is sent ``notifications/cancelled``. The upstream cancels a question it asked →
  the question passed downstream is cancelled too.
- **progress**: the upstream's reports become the downstream request's.
- **logs**: the upstream's log messages about a call become the downstream
  request's (``Context.log``), so its caller gets them at the level it asked for
  (its session's level; in the 2026-07-28 era, its request's). The upstream is asked
  for them only when the caller wants some: a modern upstream gets the caller's
  level in the call's ``_meta``, a legacy one is set to ``debug`` once (the caller's
  level then filters). Which call a message is about: over Streamable HTTP, the one
  whose response stream carried it; over a transport that cannot tell (stdio,
  WebSocket, in-process, the HTTP GET stream), the one call in flight that wants
  logs, when exactly one does. A message that cannot be placed, or about no call,
  goes to the gateway's own Python log (``mcp_actors.gateway``), never to a caller
  it may not belong to.
- **questions** (elicitation, sampling, roots): asked of the downstream caller with
  ``Context.relay``, in either era. With a modern (2026-07-28) upstream each
  question comes inside its call's ``input_required`` result, so it reaches the
  caller of that call: a modern caller gets that result as it is (its retry, with
  the upstream's ``requestState``, is passed back the same way — the gateway holds
  nothing between the rounds, and the call needs no actor that can park). A legacy
  upstream asks on the shared session, naming no call: it is passed on when exactly
  one call is in flight, and refused (-32603) when several are, rather than risk
  asking the wrong user.
- **failure**: an upstream that cannot be reached or dies mid-call gives a tool
  call an ``isError`` result (other methods a -32603 error) saying so; the next
  request connects again. Errors the upstream answers pass through as they are.
- **list changes**: the upstream's ``notifications/*/list_changed`` reach the
  mounting server's clients; lists are cached until then. A connection after a
  lost or failed one tells them too (what it offers may have changed meanwhile).
- **capabilities**: what the upstream declares (tools, resources, prompts) is what
  the mount offers (:meth:`Upstream.offers`, see :mod:`~mcp_actors.server.mount`);
  the serving functions connect it before the first client (:meth:`Upstream.connect`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs
import msgspec
import trio
from msgspec import UNSET

from ..client.client import Client, open_client
from ..client.era import Era
from ..client.handlers import ClientHandlers
from ..client.targets import Target
from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import ConnectionClosed, McpError
from ..protocol.methods import METHODS
from ..protocol.modern import LOG_LEVEL_KEY
from ..runtime.actors import ActorHost
from ..runtime.middleware import Middleware
from ..runtime.outbound import RequestTimeout
from ..runtime.request import InboundRequest
from ..server.mount import LIST_FIELDS, kind_of, offered_kinds

if TYPE_CHECKING:
    from ..server.context import Context, SessionView

log = logging.getLogger("mcp_actors.gateway")
#: An MCP log level as a Python logging level (for upstream logs no caller takes).
_PYTHON_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

#: ``_meta`` keys of a downstream request that concern only its own hop.
_HOP_KEYS = ("progressToken",)
_RESERVED_PREFIX = "io.modelcontextprotocol/"


@attrs.define(eq=False)
class Upstream:
    """One remote server, reached over one long-lived client (see the module docstring)."""

    target: Target
    #: A name for messages and logs (default: the target as text).
    name: str = ""
    #: The era to speak to it ("auto": modern if it answers ``server/discover``).
    era: Era = "auto"
    #: Seconds to wait for the connection (launch, handshake) before a request fails.
    connect_timeout: float = 30.0
    #: Seconds after a failed connection during which requests fail at once with its
    #: reason, rather than each launching or dialling the upstream again.
    retry_delay: float = 1.0
    #: The upstream client's middleware (e.g. :class:`mcp_actors.otel.OpenTelemetry`).
    middleware: Sequence[Middleware] = ()
    _client: Client | None = attrs.field(init=False, default=None)
    _lock: trio.Lock = attrs.field(init=False, factory=trio.Lock)
    _failure: str | None = attrs.field(init=False, default=None)
    _failed_at: float = attrs.field(init=False, default=float("-inf"))
    _watchers: list[Callable[[str], None]] = attrs.field(init=False, factory=list)
    _lists: dict[str, Any] = attrs.field(init=False, factory=dict)
    #: Calls in flight, for a legacy upstream's questions (see the module docstring).
    _in_flight: dict[int, Context] = attrs.field(init=False, factory=dict)
    #: What it offered when last connected (None: never connected).
    _offered: frozenset[str] | None = attrs.field(init=False, default=None)
    connections: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        if not self.name:
            self.name = self.target if isinstance(self.target, str) else type(self.target).__name__

    # -- Mountable --------------------------------------------------------------------

    def watch(self, on_change: Callable[[str], None]) -> None:
        self._watchers.append(on_change)

    def passes_input_through(self) -> bool:
        """A modern upstream's questions go back to a modern caller as they are (until
        it is connected, its era is unknown: they are relayed)."""
        client = self._client
        return client is not None and client.era == "modern"

    def offers(self) -> frozenset[str] | None:
        return self._offered

    async def connect(self, host: ActorHost) -> None:
        with contextlib.suppress(UpstreamUnavailable):  # logged by the connection's actor
            await self._connected(host)

    async def handle(
        self, method: str, params: Any, view: SessionView, request: InboundRequest
    ) -> Any:
        try:
            client = await self._connected(request.session.host or request.session)
            if method in LIST_FIELDS:
                if kind_of(method) not in offered_kinds(client.server_capabilities):
                    return _empty_list(method)  # a kind it does not offer
                return await self._list(client, method)
            passes_through = request.modern is not None and view.input_exchange is None
            return await self._call(client, method, params, view.context(request), passes_through)
        except (ConnectionClosed, RequestTimeout, UpstreamUnavailable) as failure:
            message = f"upstream {self.name} failed: {failure}"
            log.warning("%s (%s)", message, method)
            if method == "tools/call":
                return t.CallToolResult(content=[t.TextContent(text=message)], is_error=True)
            raise McpError(errors.INTERNAL_ERROR, message) from None

    # -- the connection ---------------------------------------------------------------

    async def _connected(self, host: ActorHost) -> Client:
        """The upstream client, connecting (once, whoever asks first) if there is none;
        the connection is an actor of ``host``."""
        client = self._client
        if client is not None and not client.session.peer_gone:
            return client  # the common case, without the lock's scheduling round
        async with self._lock:
            client = self._client
            if client is not None and client.session.peer_gone:
                with trio.move_on_after(self.connect_timeout):
                    await client.session.closed.wait()  # the upstream went: let it end
            elif client is not None:
                return client
            if (
                self._failure is not None
                and trio.current_time() < self._failed_at + self.retry_delay
            ):
                raise UpstreamUnavailable(self._failure)
            ready = trio.Event()
            host.start_actor(partial(self._hold, ready))
            with trio.move_on_after(self.connect_timeout):
                await ready.wait()
            if self._client is None:
                raise UpstreamUnavailable(self._failure or "timed out connecting")
            return self._client

    async def _hold(self, ready: trio.Event) -> None:
        """The connection's actor: open the client, keep it until the upstream goes."""
        reconnected = self.connections > 0 or self._failure is not None
        self._failure = None
        held: Client | None = None
        try:
            async with open_client(
                self.target, handlers=self._handlers(), era=self.era, middleware=self.middleware
            ) as client:
                if client.era == "legacy" and client.server_capabilities.logging is not UNSET:
                    await client.set_logging_level("debug")  # callers' levels filter
                held = self._client = client
                self.connections += 1
                self._offered = offered_kinds(client.server_capabilities)
                self._lists.clear()
                if reconnected:  # its lists may have changed while it was away
                    for kind in sorted(self._offered):
                        self._list_changed(f"notifications/{kind}/list_changed")
                ready.set()
                if client.era == "modern":
                    await self._listen(client)  # until the stream or the upstream ends
                await client.session.closed.wait()
        except Exception as error:  # unreachable (callers are told), or broke on the way out
            if held is None:
                self._failure = f"{type(error).__name__}: {error}"
                self._failed_at = trio.current_time()
            log.warning("upstream %s: %s: %s", self.name, type(error).__name__, error)
        finally:
            if self._client is held:  # a newer connection may have replaced it already
                self._client = None
            ready.set()

    def _handlers(self) -> ClientHandlers:
        return ClientHandlers(
            sampling=partial(self._legacy_question, "sampling/createMessage"),
            elicitation=partial(self._legacy_question, "elicitation/create"),
            elicitation_modes=("form", "url"),
            on_list_changed=self._list_changed,
            on_log=self._log_unplaced,
        )

    def _log_unplaced(self, params: t.LoggingMessageParams) -> None:
        """An upstream log message about no call in particular: the gateway's own log."""
        logger = "" if params.logger is UNSET else f" {params.logger}"
        log.log(
            _PYTHON_LEVELS.get(params.level, logging.INFO),
            "upstream %s%s: %s",
            self.name,
            logger,
            params.data,
        )

    async def _listen(self, client: Client) -> None:
        """A modern upstream tells list changes on a ``subscriptions/listen`` stream (one
        it refuses or ends costs only those notifications: lists stay cached)."""
        try:
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as changes:
                async for event in changes:
                    if event.method.endswith("/list_changed"):
                        self._list_changed(event.method)
        except (McpError, RequestTimeout, trio.TooSlowError) as error:
            log.warning("upstream %s: no list changes (%s)", self.name, error)

    def _list_changed(self, method: str) -> None:
        self._lists.clear()
        for watcher in self._watchers:
            watcher(method)

    # -- requests ---------------------------------------------------------------------

    async def _list(self, client: Client, method: str) -> Any:
        cached = self._lists.get(method)
        if cached is not None:
            return cached
        field = LIST_FIELDS[method]
        items: list[Any] = []
        cursor: str | msgspec.UnsetType = UNSET
        while True:
            page = await client.forward(method, t.PaginatedParams(cursor=cursor))
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if not cursor:
                break
        result = msgspec.structs.replace(_cleaned(page), **{field: items})
        self._lists[method] = result
        return result

    async def _call(
        self, client: Client, method: str, params: Any, context: Context, passes_through: bool
    ) -> Any:
        """Forward one call. ``passes_through``: a modern caller served without an actor
        that can park, to whom a modern upstream's ``input_required`` goes as it is."""

        async def progress(report: t.ProgressParams) -> None:
            total = None if report.total is UNSET else report.total
            message = None if report.message is UNSET else report.message
            try:
                await context.report_progress(report.progress, total, message)
            except (ValueError, RuntimeError):  # not increasing, or after the end
                log.debug("upstream %s: progress %s not passed on", self.name, report.progress)

        async def answer(question: str, question_params: Any) -> Any:
            return await context.relay(question, question_params)

        async def pass_log(message: t.LoggingMessageParams) -> None:
            logger = None if message.logger is UNSET else message.logger
            await context.log(message.level, message.data, logger=logger)

        level = context.log_level  # None: the caller wants no logs
        key = id(context)
        self._in_flight[key] = context
        try:
            result = await client.forward(
                method,
                _for_upstream(params, level if client.era == "modern" else None),
                on_progress=progress if context.progress_token is not None else None,
                on_log=pass_log if level is not None else None,
                answer="return" if passes_through and client.era == "modern" else answer,
                timeout=None,
            )
        finally:
            del self._in_flight[key]
        return _cleaned(result)

    async def _legacy_question(self, method: str, params: Any) -> Any:
        """A legacy upstream's question, passed to the one caller it can be for."""
        if len(self._in_flight) != 1:
            raise McpError(
                errors.INTERNAL_ERROR,
                f"the gateway cannot tell which of its {len(self._in_flight)} calls in flight"
                f" this {method} belongs to",
            )
        (context,) = self._in_flight.values()
        return await context.relay(method, params)


class UpstreamUnavailable(Exception):
    """The upstream could not be reached (the reason is the message)."""


def _for_upstream(params: Any, log_level: t.LoggingLevel | None) -> Any:
    """``params`` without what belonged to the downstream hop (its progress token, its
    era's reserved keys): the upstream call gets its own — and, for a modern upstream,
    the caller's ``log_level``."""
    meta = getattr(params, "meta", None)  # None: params without a _meta field
    if not isinstance(meta, dict):
        if log_level is None or meta is None:
            return params
        meta = {}
    kept = {
        key: value
        for key, value in meta.items()
        if key not in _HOP_KEYS and not key.startswith(_RESERVED_PREFIX)
    }
    if log_level is not None:
        kept[LOG_LEVEL_KEY] = log_level
    return msgspec.structs.replace(params, meta=kept or UNSET)


def _empty_list(method: str) -> Any:
    """The result of list ``method`` with no items."""
    result = METHODS[method].result
    assert result is not None
    return result(**{LIST_FIELDS[method]: []})


def _cleaned(result: Any) -> Any:
    """``result`` without the upstream's modern-era fields (the gateway sets its own)."""
    if not isinstance(result, t.Result):
        return result
    changes: dict[str, Any] = {}
    if result.result_type != "input_required":  # passed on to a modern caller as it is
        changes["result_type"] = UNSET
    if isinstance(result.meta, dict):
        kept = {k: v for k, v in result.meta.items() if not k.startswith(_RESERVED_PREFIX)}
        changes["meta"] = kept or UNSET
    if isinstance(result, t.CacheableResult):
        changes["ttl_ms"] = UNSET
        changes["cache_scope"] = UNSET
    return msgspec.structs.replace(result, **changes)
