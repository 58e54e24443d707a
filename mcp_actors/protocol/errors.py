"""JSON-RPC error codes and the exceptions that carry them.

An :class:`McpError` is the one way an error crosses the wire: raised by a
handler it becomes the JSON-RPC error response with its ``code``, ``message`` and
``data``; received from the peer it is raised to the awaiting caller.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REQUEST_REJECTED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "ConnectionClosed",
    "McpError",
    "ProtocolViolation",
    "header_mismatch",
    "invalid_params",
    "invalid_request",
    "method_not_found",
    "missing_client_capability",
    "unsupported_protocol_version",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: MCP: a resource URI that the server does not know.
RESOURCE_NOT_FOUND = -32002
#: MCP 2025-11-25: the request needs a URL-mode elicitation to complete first.
URL_ELICITATION_REQUIRED = -32042
#: Implementation-defined (JSON-RPC reserves -32000..-32099 for servers).
REQUEST_REJECTED = -32000
#: MCP 2026-07-28: an HTTP routing header disagrees with the body (or is missing, malformed).
HEADER_MISMATCH = -32020
#: MCP 2026-07-28: serving the request needs a client capability it did not declare.
MISSING_CLIENT_CAPABILITY = -32021
#: MCP 2026-07-28: the request's protocol version is not one the server speaks.
UNSUPPORTED_PROTOCOL_VERSION = -32022

_NAMES = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    RESOURCE_NOT_FOUND: "Resource not found",
    HEADER_MISMATCH: "Header mismatch",
    MISSING_CLIENT_CAPABILITY: "Missing required client capability",
    UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
}


class McpError(Exception):
    """An error that has (or will get) a JSON-RPC error code.

    ``code``, ``message`` and ``data`` are exactly what goes on the wire.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"

    def __str__(self) -> str:
        name = _NAMES.get(self.code)
        prefix = f"{name} ({self.code})" if name else f"Error {self.code}"
        return f"{prefix}: {self.message}"


class ProtocolViolation(McpError):
    """Raised locally when *our* side would break the protocol (wrong state, missing capability).

    Nothing is sent: the mistake is the caller's, reported before any byte moves.
    """


def method_not_found(method: str) -> McpError:
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})


def invalid_params(detail: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: {detail}")


def invalid_request(detail: str) -> McpError:
    return McpError(INVALID_REQUEST, f"Invalid request: {detail}")


def header_mismatch(detail: str) -> McpError:
    """-32020: an HTTP routing header is missing, malformed or disagrees with the body."""
    return McpError(HEADER_MISMATCH, f"Header mismatch: {detail}")


def missing_client_capability(required: dict[str, Any], detail: str = "") -> McpError:
    """-32021 with ``data.requiredCapabilities``: a ClientCapabilities object, such as
    ``{"sampling": {}}`` (an object, not a list of names)."""
    names = ", ".join(required)
    message = f"Missing required client capability: {names}" + (f" ({detail})" if detail else "")
    return McpError(MISSING_CLIENT_CAPABILITY, message, {"requiredCapabilities": required})


def unsupported_protocol_version(
    requested: str, supported: tuple[str, ...] | list[str], *, detail: str = ""
) -> McpError:
    """-32022 with ``data: {supported, requested}`` (``requested`` echoed as sent)."""
    message = "Unsupported protocol version" + (f": {detail}" if detail else "")
    return McpError(
        UNSUPPORTED_PROTOCOL_VERSION,
        message,
        {"supported": list(supported), "requested": requested},
    )


class ConnectionClosed(McpError):
    """The connection ended while a request was waiting for its response."""

    def __init__(self, method: str) -> None:
        super().__init__(REQUEST_REJECTED, f"connection closed before {method} was answered")
