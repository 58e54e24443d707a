"""What a session is made of: capabilities, the handshake, discovery, ``subscriptions/listen``,
logging, progress and cancellation.

Everything here is about the session (or, in the 2026-07-28 era, the request standing
in for one) rather than one feature: what each side offers, how they meet, and the
notifications that run alongside every request.
"""

from typing import Any

from msgspec import UNSET, UnsetType, field

from .base import (
    CacheableResult,
    Implementation,
    LoggingLevel,
    McpStruct,
    ProgressToken,
    RequestId,
    Result,
)


class RootsCapability(McpStruct):
    list_changed: bool | UnsetType = UNSET


class PromptsCapability(McpStruct):
    list_changed: bool | UnsetType = UNSET


class ResourcesCapability(McpStruct):
    subscribe: bool | UnsetType = UNSET
    list_changed: bool | UnsetType = UNSET


class ToolsCapability(McpStruct):
    list_changed: bool | UnsetType = UNSET


class ClientCapabilities(McpStruct):
    """What the client supports. An empty dict means "supported, no sub-features"."""

    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    roots: RootsCapability | UnsetType = UNSET
    sampling: dict[str, Any] | UnsetType = UNSET
    elicitation: dict[str, Any] | UnsetType = UNSET  # 2025-06-18+
    tasks: dict[str, Any] | UnsetType = UNSET  # 2025-11-25
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET  # 2026-07-28


class ServerCapabilities(McpStruct):
    """What the server supports. An empty dict means "supported, no sub-features"."""

    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    logging: dict[str, Any] | UnsetType = UNSET
    completions: dict[str, Any] | UnsetType = UNSET  # 2025-03-26+
    prompts: PromptsCapability | UnsetType = UNSET
    resources: ResourcesCapability | UnsetType = UNSET
    tools: ToolsCapability | UnsetType = UNSET
    tasks: dict[str, Any] | UnsetType = UNSET  # 2025-11-25 (2026-07-28: under ``extensions``)
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET  # 2026-07-28


# --------------------------------------------------------------------------- lifecycle


class InitializeParams(McpStruct):
    """Params of ``initialize``."""

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class InitializeResult(Result, kw_only=True):
    """Result of ``initialize``."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | UnsetType = UNSET


# --------------------------------------------------------------------------- discovery (2026-07-28)


class DiscoverParams(McpStruct):
    """Params of ``server/discover``: nothing but the request ``_meta``."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class DiscoverResult(CacheableResult, kw_only=True):
    """Result of ``server/discover``: the versions, capabilities and instructions of a
    modern server. Its identity travels in ``_meta["io.modelcontextprotocol/serverInfo"]``."""

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | UnsetType = UNSET


# --------------------------------------------------------------------------- subscriptions/listen


class SubscriptionsListenParams(McpStruct):
    """Params of ``subscriptions/listen`` (2026-07-28): which notifications the stream
    opts in to. ``notifications`` stays a plain object (``toolsListChanged``,
    ``promptsListChanged``, ``resourcesListChanged``, ``resourceSubscriptions``, and
    keys extensions add, such as the tasks extension's ``taskIds``): the server reads
    each key it knows and leaves the others out of its acknowledgement."""

    notifications: dict[str, Any]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class SubscriptionsAcknowledgedParams(McpStruct):
    """Params of ``notifications/subscriptions/acknowledged``: the honoured subset of the
    filter, tagged with the subscription id in ``_meta``."""

    notifications: dict[str, Any]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class SubscriptionsListenResult(Result, kw_only=True):
    """Result of ``subscriptions/listen``: sent only when the server ends the stream
    gracefully; ``_meta`` carries the subscription id."""


# --------------------------------------------------------------------------- logging


class SetLevelParams(McpStruct):
    """Params of ``logging/setLevel``."""

    level: LoggingLevel
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class LoggingMessageParams(McpStruct):
    """Params of ``notifications/message``. ``data`` is any JSON value."""

    level: LoggingLevel
    data: Any
    logger: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# --------------------------------------------------------------------------- progress / cancel


class ProgressParams(McpStruct):
    """Params of ``notifications/progress``. ``message`` is 2025-03-26+."""

    progress_token: ProgressToken
    progress: float
    total: float | UnsetType = UNSET
    message: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CancelledParams(McpStruct):
    """Params of ``notifications/cancelled``.

    ``request_id`` is required before 2025-11-25; 2025-11-25 makes it optional (tasks are
    cancelled with ``tasks/cancel`` instead).
    """

    request_id: RequestId | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")
