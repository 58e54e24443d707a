"""How the ``mcp-actors`` command fails: one line on stderr, and an exit code that says why.

============  ================================================================
exit code     meaning
============  ================================================================
0             success (a server stopped with Ctrl-C too)
1             the tool returned an error result (``mcp-actors call``)
2             a bad option (a port out of 0-65535, a bad --header, say), or the target or its
              server failed: a target that cannot be loaded
              (no such module or file, an exception while importing it, a tool
              parameter of an unsupported type, no Server there), bad plugin
              settings or gateway file (every problem on the one line), a server
              that cannot be reached or answers with an error
3             a dependency is missing; the line says what to install (an extra:
              ``pip install 'mcp-actors[http]'``, ``[ws]``, ``[redis]``, ``[otel]``,
              ``[reload]``;
              Node.js for ``mcp-actors dev``)
4             the server cannot listen on the address (port in use, no permission)
5             the server needs an authorization (OAuth) that was not completed
              (nobody answered the login within ``--timeout``) or failed
130           interrupted (Ctrl-C) while calling a server
============  ================================================================

:func:`explain` maps an exception to its code and line; the CLI catches in one
place (``cli.main``) and everything it does not recognise stays a traceback (a
bug of ours should be reported as one).
"""

from __future__ import annotations

import errno
from typing import Any

from .client.headers import HeaderError
from .client.targets import TargetError
from .config import SettingsError
from .plugins import PluginError
from .runtime.groups import sole_exception
from .server.workers import WorkersFailed
from .shared.settings import SharedStateUnavailable

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_FAILURE = 2
EXIT_MISSING_EXTRA = 3
EXIT_CANNOT_LISTEN = 4
EXIT_NOT_AUTHORIZED = 5
EXIT_INTERRUPTED = 130
#: The table above in one line, for ``mcp-actors --help``.
EXIT_CODES = (
    "exit codes: 0 success, 1 the tool returned an error, 2 a bad option, or the target or"
    " its server failed, 3 a dependency is missing, 4 cannot listen on the address,"
    " 5 not authorized, 130 interrupted"
)

#: Optional dependencies, by top-level module name: the extra that installs them, and
#: what needs them.
EXTRAS = {
    "httptools": ("http", "the http transport"),
    "h11": ("http", "the http transport"),
    "hypercorn": ("http", "the http transport"),
    "httpx": ("http", "the http transport"),
    "trio_websocket": ("ws", "the ws transport"),
    "coredis": ("redis", "sharing state through Redis"),
    "opentelemetry": ("otel", "OpenTelemetry tracing"),
    "watchfiles": ("reload", "mcp-actors run --reload"),
}
_LISTEN_ERRORS = {errno.EADDRINUSE: "address already in use", errno.EACCES: "permission denied"}


class CliFailure(Exception):
    """A failure a command reports itself, with its exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def explain(error: BaseException, options: Any) -> tuple[int, str] | None:
    """The exit code and the one line (without the ``mcp-actors:`` prefix) for ``error``.

    None when the error is not a known failure (it is then raised as it is).
    ``options`` are the parsed arguments (for the address a server tried to use).
    """
    error = sole_exception(error)
    if isinstance(error, CliFailure):
        return error.code, str(error)
    failures = (
        TargetError,
        HeaderError,
        PluginError,
        SettingsError,
        WorkersFailed,
        SharedStateUnavailable,
    )
    if isinstance(error, failures):
        return EXIT_FAILURE, str(error)
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(error, ModuleNotFoundError) and error.name is not None:
        package = error.name.split(".")[0]
        if package in EXTRAS:
            extra, needed_by = EXTRAS[package]
            return EXIT_MISSING_EXTRA, (
                f"{needed_by} needs {package!r}, which is not installed:"
                f" pip install 'mcp-actors[{extra}]'"
            )
    if isinstance(error, OSError) and error.errno in _LISTEN_ERRORS and hasattr(options, "port"):
        host = getattr(options, "host", "127.0.0.1")
        return EXIT_CANNOT_LISTEN, (
            f"cannot listen on {host}:{options.port}: {_LISTEN_ERRORS[error.errno]}"
            " (choose another --port, or --port 0 for any free one)"
        )
    return None
