"""mcp_actors: an MCP runtime on Trio where every session and request is a supervised actor.

The curated public API; everything here is re-exported from the module that owns it.
From asyncio or blocking code, use :mod:`mcp_actors.aio` or :mod:`mcp_actors.sync`
(the same client, Trio running in a thread of its own); the pytest plugin is
:mod:`mcp_actors.testing`.
The network transports are exported lazily (``from mcp_actors import serve_http``
imports hypercorn then, not ``import mcp_actors``).

The public modules are this one, :mod:`mcp_actors.aio`, :mod:`mcp_actors.sync`,
:mod:`mcp_actors.testing`, and those the documentation teaches for one feature each:
:mod:`mcp_actors.plugins`, :mod:`mcp_actors.gateway`, :mod:`mcp_actors.middleware`,
:mod:`mcp_actors.auth.server`, :mod:`mcp_actors.auth.client`,
:mod:`mcp_actors.auth.client.loopback`, :mod:`mcp_actors.server.tasks`,
:mod:`mcp_actors.server.apps`, :mod:`mcp_actors.server.content` (also ``content``
here), :mod:`mcp_actors.protocol.types` (``types`` here) and
:mod:`mcp_actors.protocol.errors`, plus the few names the bundled plugins build on
(:mod:`mcp_actors.server.skills`, :mod:`mcp_actors.server.signature`,
:mod:`mcp_actors.server.tools`). Each one's ``__all__`` is its public API, pinned
by ``tests/test_exports.py``; every other module is internal and may change
without notice.
"""

from typing import Any

from ._version import __version__
from .client.client import Client, ClientHandlers, open_client
from .client.listing import Listing
from .client.targets import StdioTarget, UrlTarget
from .protocol import types
from .protocol.errors import McpError, ProtocolViolation
from .protocol.versions import LATEST, MODERN, SUPPORTED
from .runtime.config import SessionConfig
from .runtime.outbound import ConnectionClosed, RequestTimeout
from .runtime.supervisor import Supervisor, open_supervisor
from .server import content
from .server.app import Server, ServerSession
from .server.caching import CacheHint
from .server.context import Context
from .server.elicitation import ElicitationContentError, ElicitationResult
from .server.log_bridge import McpLogHandler
from .server.mrtr import MrtrSettings
from .server.serve import run_stdio, serve_stdio
from .server.tool_error import ToolError
from .transports.abc import MessageStream, Outgoing, TransportClosed
from .transports.memory import memory_pair

__all__ = [
    "LATEST",
    "MODERN",
    "SUPPORTED",
    "CacheHint",
    "Client",
    "ClientHandlers",
    "ConnectionClosed",
    "Context",
    "ElicitationContentError",
    "ElicitationResult",
    "Listing",
    "McpError",
    "McpLogHandler",
    "MessageStream",
    "MrtrSettings",
    "Outgoing",
    "ProtocolViolation",
    "RequestTimeout",
    "Server",
    "ServerSession",
    "SessionConfig",
    "StdioTarget",
    "Supervisor",
    "ToolError",
    "TransportClosed",
    "UrlTarget",
    "__version__",
    "content",
    "memory_pair",
    "open_client",
    "open_supervisor",
    "run_stdio",
    "serve_stdio",
    "types",
]


#: Network transports, imported on first use: name -> (module, attribute).
_LAZY: dict[str, tuple[str, str]] = {
    "HttpConfig": ("mcp_actors.transports.http.config", "HttpConfig"),
    "serve_http": ("mcp_actors.server.serve_http", "serve_http"),
    "run_http": ("mcp_actors.server.serve_http", "run_http"),
    "serve_websocket": ("mcp_actors.server.serve_websocket", "serve_websocket"),
    "run_websocket": ("mcp_actors.server.serve_websocket", "run_websocket"),
    "open_streamable_http": (
        "mcp_actors.transports.http.client",
        "open_streamable_http",
    ),
    "open_sse_client": ("mcp_actors.transports.http.sse_client", "open_sse_client"),
    "open_websocket_client": ("mcp_actors.transports.websocket", "open_websocket_client"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'mcp_actors' has no attribute {name!r}")
    import importlib

    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, *_LAZY])
