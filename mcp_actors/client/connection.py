"""A client's connection: its session, what the server said, and the one path every request takes.

:class:`Connection` is what :class:`~.client.Client` is built on: the session actor,
the server's answer to the handshake (``initialize`` or ``server/discover``), and
:meth:`Connection.request` / :meth:`Connection.forward`, through which every call
goes: through the client's middleware, as it is in the legacy era, or in the modern
era with its ``_meta`` (once more after a -32022 naming a version we speak) and
checked for a complete ``resultType``; a request that may answer ``input_required``
is retried with the answers of the client's handlers (:mod:`.input_required`).
Helpers that only send requests (:mod:`.tasks`) type against it, not ``Client``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

import attrs
import msgspec
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.errors import INTERNAL_ERROR, McpError
from ..protocol.jsonrpc import RequestId
from ..runtime.middleware import Call, Middleware, run_request
from ..runtime.session import Session
from .era import Discovered, ModernRequests, check_result_type
from .handlers import ClientDispatcher
from .input_required import INPUT_REQUIRED_METHODS, call_with_input
from .listing import Listing

log = logging.getLogger("mcp_actors.client")

T = TypeVar("T")
#: A call's timeout in seconds: UNSET for the session's default, None for none.
Timeout = float | UnsetType | None


@attrs.define(eq=False)
class Connection:
    """A connected session to an MCP server, and the path its requests take: a legacy
    session opened by ``initialize``, or the modern era's, which knows its server from
    ``server/discover``."""

    session: Session
    #: The server's answer to ``initialize`` (legacy era), else None.
    initialize_result: t.InitializeResult | None = None
    #: The server's answer to ``server/discover`` (modern era), else None. Its
    #: ``ttl_ms`` and ``cache_scope`` say for how long the answer holds.
    discover_result: Discovered | None = None
    #: What every modern request carries (None in the legacy era).
    modern: ModernRequests | None = None
    #: Around every call this client makes, the first outermost (see
    #: :mod:`~mcp_actors.runtime.middleware`).
    middleware: tuple[Middleware, ...] = ()

    @property
    def era(self) -> Literal["modern", "legacy"]:
        """``"modern"`` (2026-07-28 on: no session, ``_meta`` on every request) or ``"legacy"``."""
        return "legacy" if self.modern is None else "modern"

    @property
    def server_info(self) -> t.Implementation | None:
        """The server's name and version (None: a modern server that did not say)."""
        if self.initialize_result is not None:
            return self.initialize_result.server_info
        return None if self.discover_result is None else self.discover_result.implementation()

    @property
    def server_capabilities(self) -> t.ServerCapabilities:
        if self.initialize_result is not None:
            return self.initialize_result.capabilities
        assert self.discover_result is not None
        return self.discover_result.capabilities

    @property
    def protocol_version(self) -> str:
        return self.session.state.revision.name

    @property
    def instructions(self) -> str | None:
        answer = self.initialize_result or self.discover_result
        instructions = UNSET if answer is None else answer.instructions
        return None if instructions is UNSET else instructions

    @property
    def _dispatcher(self) -> ClientDispatcher:
        dispatcher = self.session.dispatcher
        assert isinstance(dispatcher, ClientDispatcher)
        return dispatcher

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        result_type: type[T] | None = None,
        timeout: Timeout = UNSET,
    ) -> Any:
        """Send any request (a custom method too) and return its decoded result.

        ``params`` is a Struct, a dict or None; in the modern era its ``_meta`` gets the
        version, capabilities and client info like every other request's.
        """
        return await self._call(method, params, result_type=result_type, timeout=timeout)

    async def forward(
        self,
        method: str,
        params: Any,
        *,
        on_progress: Callable[[t.ProgressParams], Awaitable[None]] | None = None,
        on_log: Callable[[t.LoggingMessageParams], Awaitable[None]] | None = None,
        answer: Callable[[str, Any], Awaitable[Any]] | Literal["return"] | None = None,
        timeout: Timeout = UNSET,
    ) -> Any:
        """Send ``params`` (a Struct, e.g. one a gateway received) as they are: no
        re-encoding of their arguments. ``on_progress`` gets the raw progress
        notifications, ``on_log`` the log messages that belong to this call (in order,
        before the result; see :class:`~mcp_actors.protocol.engine.Engine` for how a log
        message is known to belong to it); in the modern era the questions of an
        ``input_required`` result go to ``answer(method, params)`` instead of this
        client's handlers (a gateway asks its own caller), or with ``answer="return"``
        the ``input_required`` result is returned as it is (a gateway passes it on)."""
        return await self._call(
            method, params, timeout=timeout, on_progress=on_progress, on_log=on_log, answer=answer
        )

    async def _call(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: Timeout = UNSET,
        on_progress: Callable[[t.ProgressParams], Awaitable[None]] | None = None,
        result_type: Any = None,
        on_id: Callable[[RequestId], None] | None = None,
        answer: Callable[[str, Any], Awaitable[Any]] | Literal["return"] | None = None,
        on_log: Callable[[t.LoggingMessageParams], Awaitable[None]] | None = None,
    ) -> Any:
        """Every request goes out here, through the middleware: as it is (legacy era),
        or with its ``_meta``, once more after a -32022 that names a version we speak,
        and checked for a complete ``resultType`` (modern era)."""
        if not self.middleware:
            return await self._send(
                method, params, timeout, on_progress, result_type, on_id, answer, on_log
            )
        return await self._through_middleware(
            method, params, timeout, on_progress, result_type, on_id, answer, on_log
        )

    async def _through_middleware(
        self,
        method: str,
        params: Any,
        timeout: Timeout,
        on_progress: Callable[[t.ProgressParams], Awaitable[None]] | None,
        result_type: Any,
        on_id: Callable[[RequestId], None] | None,
        answer: Callable[[str, Any], Awaitable[Any]] | Literal["return"] | None,
        on_log: Callable[[t.LoggingMessageParams], Awaitable[None]] | None,
    ) -> Any:
        """Send with the middleware around (a method of its own, so that the path without
        middleware makes no closure cells)."""

        async def send(call: Call) -> Any:
            return await self._send(
                call.method, call.params, timeout, on_progress, result_type, on_id, answer, on_log
            )

        call = Call(method, params, "client", "outbound", session=self)
        return await run_request(self.middleware, call, send)

    async def _send(
        self,
        method: str,
        params: Any,
        timeout: Timeout,
        on_progress: Callable[[t.ProgressParams], Awaitable[None]] | None,
        result_type: Any,
        on_id: Callable[[RequestId], None] | None,
        answer: Callable[[str, Any], Awaitable[Any]] | Literal["return"] | None,
        on_log: Callable[[t.LoggingMessageParams], Awaitable[None]] | None,
    ) -> Any:
        modern = self.modern
        if modern is None:
            return await self.session.request(
                method,
                params,
                timeout=timeout,
                on_progress=on_progress,
                on_log=on_log,
                result_type=result_type,
                on_id=on_id,
            )

        async def send_once(params: Any, result_type: Any = result_type) -> Any:
            return await self.session.request(
                method,
                modern.stamp(params),
                timeout=timeout,
                on_progress=on_progress,
                on_log=on_log,
                result_type=result_type,
                on_id=on_id,
            )

        async def send() -> Any:
            if method in INPUT_REQUIRED_METHODS and isinstance(params, msgspec.Struct):
                # It may answer input_required: answered with our handlers, retried.
                raw = functools.partial(send_once, result_type=msgspec.Raw)
                return await call_with_input(
                    method, params, raw, answer or self._dispatcher.answer, result_type
                )
            return await send_once(params)

        try:
            result = await send()
        except McpError as error:
            version = modern.retry_version(error)
            if version is None:
                raise
            log.info("%s: the server asks for protocol version %s; retrying", method, version)
            modern.adopt(version, self.session)
            result = await send()
        if not isinstance(result, t.InputRequiredResult):  # asked for with answer="return"
            check_result_type(method, result)
        return result

    async def _list_all(self, method: str, field: str, timeout: Timeout) -> Listing[Any]:
        """Every item of a paginated list method, following ``nextCursor`` to the end."""
        items: Listing[Any] = Listing()
        cursor: str | UnsetType = UNSET
        seen: set[str] = set()
        while True:
            page = await self._call(method, t.PaginatedParams(cursor=cursor), timeout=timeout)
            items.add_page(getattr(page, field), page)
            cursor = page.next_cursor
            if not cursor:
                return items
            if cursor in seen:
                raise McpError(INTERNAL_ERROR, f"{method}: the server repeated cursor {cursor!r}")
            seen.add(cursor)
