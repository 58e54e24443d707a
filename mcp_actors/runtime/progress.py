"""Progress a handler reports on a request the peer asked progress of.

A request whose ``_meta`` carries a ``progressToken`` gets a :class:`ProgressStream`:
the handler calls :meth:`ProgressStream.report` as its work advances, and the peer
receives ``notifications/progress`` with that token. Three rules shape it:

- **reports never block**: the handler is not slowed by a slow peer. A report only
  replaces the stream's pending value and tells its :class:`ProgressSink` (the
  session's writer) that the stream has something to send;
- **the newest wins**: the sink sends a stream's pending value before anything else
  it writes, and a value replaced before it went out is never sent — a slow peer
  sees fewer, fresher updates, and the memory per stream is one value;
- **never after the response**: once the answer is queued the stream is closed
  (:attr:`ProgressStream.closed`), and a report then raises :class:`ProgressClosed`.

Progress must increase: a report not above the previous one raises ValueError.
"""

from __future__ import annotations

from typing import Protocol

import attrs
from msgspec import UNSET

from ..protocol import types as t
from ..protocol.jsonrpc import RequestId


class ProgressClosed(RuntimeError):
    """Progress was reported after the request finished."""


class ProgressSink(Protocol):
    """Where a stream says it has a report to send (the session's writer)."""

    def schedule_progress(self, stream: ProgressStream) -> None: ...


@attrs.define(eq=False, slots=True)
class ProgressStream:
    """Monotonic, coalescing progress for one request's ``progressToken``."""

    token: t.ProgressToken
    request_id: RequestId
    _sink: ProgressSink
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
        self._sink.schedule_progress(self)

    def take(self) -> t.ProgressParams | None:
        """The pending report, now sent: none is pending any more."""
        pending, self.pending = self.pending, None
        return pending
