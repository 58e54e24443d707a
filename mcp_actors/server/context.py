"""What a handler gets to talk back: progress, logging, cancellation, requests to the client.

A :class:`Context` is made for each request whose handler asks for one (by
annotating a parameter with ``Context``). It is bound to that request: progress
goes to the request's ``progressToken``, log messages and server→client requests
are routed with the request (on HTTP, on its response stream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import attrs
import trio
from msgspec import UNSET

from ..protocol import types as t
from ..protocol.jsonrpc import RequestId
from ..runtime.request import InboundRequest

if TYPE_CHECKING:
    from .app import ServerSession

LOG_LEVELS: Final[tuple[t.LoggingLevel, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_SEVERITY: Final[dict[str, int]] = {level: rank for rank, level in enumerate(LOG_LEVELS)}


@attrs.define(eq=False, slots=True)
class Context:
    """The handler's line back to the client, for the request being served."""

    _request: InboundRequest
    _session: ServerSession

    @property
    def request_id(self) -> RequestId:
        return self._request.id

    @property
    def session(self) -> ServerSession:
        """The server's view of this client session (client info, capabilities, revision)."""
        return self._session

    @property
    def cancel_called(self) -> bool:
        """Whether the client has cancelled this request."""
        return self._request.scope.cancel_called

    @property
    def progress_token(self) -> t.ProgressToken | None:
        stream = self._request.progress
        return None if stream is None else stream.token

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress, if the client asked for it (else a no-op).

        ``progress`` must increase at each call. Never blocks on a slow client: a
        newer report replaces one not yet sent.
        """
        stream = self._request.progress
        if stream is not None:
            stream.report(progress, total, message)
        await trio.lowlevel.checkpoint()

    async def log(self, level: t.LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if ``level`` is at or above the session's level."""
        await self._session.log(level, data, logger=logger, related_request=self._request.id)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    async def request(
        self, method: str, params: Any = None, *, result_type: Any = None, timeout: Any = UNSET
    ) -> Any:
        """Send a request to the client on behalf of this request and await its result."""
        return await self._session.session.request(
            method,
            params,
            result_type=result_type,
            timeout=timeout,
            related_request=self._request.id,
        )
