"""One inbound request = one actor with its own cancel scope, and its progress stream.

:class:`InboundRequest` is created by the session's reader when a request
arrives, before the task that serves it starts, so that a
``notifications/cancelled`` arriving right behind it already finds its cancel
scope. Cancelling that scope is all cancellation is: the handler sees
``trio.Cancelled`` at its next checkpoint, and no response is sent.

:class:`ProgressStream` is how a handler reports progress when the request
carried ``_meta.progressToken``. Reports never block: the newest value replaces
a pending one (a slow peer sees fewer, fresher updates), the session's writer
sends it before anything else it writes, and once the response is queued the
stream is closed — so progress is never sent after the response.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import msgspec
import trio
from msgspec import UNSET, UnsetType

from ..protocol import types as t
from ..protocol.engine import NOT_DECODED
from ..protocol.jsonrpc import UNDECODABLE, RequestId, invalid_payload
from ..protocol.methods import MethodSpec
from ..protocol.modern import ModernRequest

if TYPE_CHECKING:
    from .session import Session
    from .writer import Writer


class ProgressClosed(RuntimeError):
    """Progress was reported after the request finished."""


@attrs.define(eq=False, slots=True)
class ProgressStream:
    """Monotonic, coalescing progress for one request's ``progressToken``."""

    token: t.ProgressToken
    request_id: RequestId
    _writer: Writer
    _last: float | None = attrs.field(init=False, default=None)
    pending: t.ProgressParams | None = attrs.field(init=False, default=None)
    closed: bool = attrs.field(init=False, default=False)

    def report(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Queue a progress update; raises ValueError if ``progress`` does not increase."""
        if self.closed:
            raise ProgressClosed("progress reported after the request finished")
        if self._last is not None and progress <= self._last:
            raise ValueError(f"progress must increase: {progress} after {self._last}")
        self._last = progress
        self.pending = t.ProgressParams(
            progress_token=self.token,
            progress=progress,
            total=UNSET if total is None else total,
            message=UNSET if message is None else message,
        )
        self._writer.schedule_progress(self)

    def take(self) -> t.ProgressParams | None:
        pending, self.pending = self.pending, None
        return pending


class InboundRequest(msgspec.Struct, eq=False):
    """A request the peer sent us, while it is being served.

    ``modern`` is set for a request of the modern era (2026-07-28): its ``_meta`` and
    the state it is served with, of its own (None: a request of the session's legacy
    era, served with the session's state). ``scope`` is None for a request served
    inline by the session's reader (see ``Session._serve_inline``): it is over before
    the reader reads on, so nothing could cancel it.

    A Struct (never encoded), not an attrs class: one is made per request, and a
    Struct's constructor costs a fraction of a Python ``__init__``. Compared and hashed
    by identity (``eq=False``).
    """

    session: Session
    id: RequestId
    method: str
    spec: MethodSpec | None
    raw_params: msgspec.Raw | UnsetType
    modern: ModernRequest | None
    #: The params decoded into the method's type, or NOT_DECODED (see decode_params).
    _params: Any = NOT_DECODED
    scope: trio.CancelScope | None = None
    progress: ProgressStream | None = None
    cancel_reason: str | None = None

    @property
    def cancel_called(self) -> bool:
        """Whether the peer cancelled this request."""
        return self.scope is not None and self.scope.cancel_called

    def decode_params(self) -> Any:
        """Decode ``params`` into the method's type, once.

        Raises :class:`~mcp_actors.protocol.jsonrpc.InvalidPayload` (an McpError: -32602,
        or -32700 for bytes that are not JSON text) and nothing else.
        """
        params = self._params
        if params is NOT_DECODED:
            assert self.spec is not None
            raw = self.raw_params
            try:
                params = self.spec.params_decoder.decode(raw if raw is not UNSET else b"{}")
            except UNDECODABLE as error:  # inlined decode_payload: this is the hot path
                raise invalid_payload(error) from None
            self._params = params
        return params

    def cancel(self, reason: str | None) -> None:
        """The peer cancelled this request: stop the handler; no response will be sent."""
        self.cancel_reason = reason
        self.close_progress()
        if self.progress is not None:
            self.progress.pending = None
        if self.scope is not None:
            self.scope.cancel()

    def close_progress(self) -> None:
        """No progress may be reported any more (the answer is on its way, or cancelled)."""
        if self.progress is not None:
            self.progress.closed = True
