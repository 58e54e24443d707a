"""mcp_actors: an MCP runtime on Trio where every session and request is a supervised actor.

The curated public API; everything here is re-exported from the module that owns it.
"""

from ._version import __version__
from .client.client import Client, ClientHandlers, open_client
from .client.targets import StdioTarget
from .protocol import types
from .protocol.errors import McpError, ProtocolViolation
from .protocol.versions import LATEST, SUPPORTED
from .runtime.config import SessionConfig
from .runtime.outbound import ConnectionClosed, RequestTimeout
from .runtime.supervisor import Supervisor, open_supervisor
from .server import content
from .server.app import Server, ServerSession
from .server.context import Context
from .server.elicitation import ElicitationContentError, ElicitationResult
from .server.log_bridge import McpLogHandler
from .server.serve import run_stdio, serve_stdio
from .transports.abc import MessageStream, Outgoing, TransportClosed
from .transports.memory import memory_pair

__all__ = [
    "LATEST",
    "SUPPORTED",
    "Client",
    "ClientHandlers",
    "ConnectionClosed",
    "Context",
    "ElicitationContentError",
    "ElicitationResult",
    "McpError",
    "McpLogHandler",
    "MessageStream",
    "Outgoing",
    "ProtocolViolation",
    "RequestTimeout",
    "Server",
    "ServerSession",
    "SessionConfig",
    "StdioTarget",
    "Supervisor",
    "TransportClosed",
    "__version__",
    "content",
    "memory_pair",
    "open_client",
    "open_supervisor",
    "run_stdio",
    "serve_stdio",
    "types",
]
