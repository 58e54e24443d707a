"""The bridge from Python's ``logging`` to MCP log notifications (``notifications/message``).

Attach :class:`McpLogHandler` to any logger and its records reach the client(s)
as log messages, filtered by each session's ``logging/setLevel``::

    handler = McpLogHandler(server)                 # every initialized session
    logging.getLogger("my_app").addHandler(handler)

    @server.tool
    def work(ctx: Context) -> str:
        handler = McpLogHandler(ctx.session)         # only this client
        ...

``emit`` never blocks, whichever thread it runs in (sync tools run in worker
threads): in the Trio thread the record is queued on each session's bounded
notification queue (``Session.submit``; when it is full the record is dropped
and counted in ``statistics().dropped_notifications``); from another thread it
is handed to the Trio thread with ``TrioToken.run_sync_soon`` first. A record
logged while a record is being forwarded (the runtime logging about itself) is
not forwarded again, so attaching the handler to the root logger is safe.

Python levels map to MCP's syslog levels: DEBUG -> debug, INFO -> info,
25 -> notice, WARNING -> warning, ERROR -> error, CRITICAL -> critical, and
above CRITICAL -> alert / emergency.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import trio

from ..protocol import types as t
from .context import SessionView


@runtime_checkable
class LoggedServer(Protocol):
    """A server, as its log records reach its sessions (:class:`~.app.Server` is one)."""

    @property
    def sessions(self) -> Sequence[SessionView]: ...

    @property
    def trio_token(self) -> trio.lowlevel.TrioToken | None: ...


_LEVELS: tuple[tuple[int, t.LoggingLevel], ...] = (
    (logging.CRITICAL + 20, "emergency"),
    (logging.CRITICAL + 10, "alert"),
    (logging.CRITICAL, "critical"),
    (logging.ERROR, "error"),
    (logging.WARNING, "warning"),
    (25, "notice"),
    (logging.INFO, "info"),
)


def mcp_level(levelno: int) -> t.LoggingLevel:
    """The MCP level of a Python logging level number."""
    for threshold, level in _LEVELS:
        if levelno >= threshold:
            return level
    return "debug"


class McpLogHandler(logging.Handler):
    """A ``logging.Handler`` that forwards records to a server's sessions, never blocking.

    ``target`` is a ``Server`` (every initialized session at the time of the
    record) or one ``ServerSession``. The message is ``self.format(record)``
    (set a Formatter to change it); the MCP ``logger`` is the record's logger name.
    """

    def __init__(self, target: LoggedServer | SessionView, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.target = target
        self._forwarding = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._forwarding, "active", False):
            return
        try:
            message = self.format(record)
        except Exception:
            self.handleError(record)
            return
        level = mcp_level(record.levelno)
        try:
            trio.lowlevel.current_trio_token()
        except RuntimeError:
            token = self._token()
            if token is None:
                return
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(self._forward, level, message, record.name)
            return
        self._forward(level, message, record.name)

    def _token(self) -> trio.lowlevel.TrioToken | None:
        return self.target.trio_token

    def _forward(self, level: t.LoggingLevel, message: str, logger: str) -> None:
        self._forwarding.active = True
        try:
            for server_session in self._sessions():
                server_session.log_soon(level, message, logger=logger)
        finally:
            self._forwarding.active = False

    def _sessions(self) -> Sequence[SessionView]:
        if isinstance(self.target, LoggedServer):
            return self.target.sessions
        return [self.target]
