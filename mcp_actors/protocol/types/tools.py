"""Tools: their definitions, ``tools/list`` and ``tools/call``.

``CallToolParams.arguments`` stays raw (``msgspec.Raw``) so the server decodes it
straight into the tool's own argument Struct.
"""

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType, field

from .base import CacheableResult, Cursor, Icon, McpStruct, Result
from .content import ContentBlock
from .tasks import TaskMetadata


class ToolAnnotations(McpStruct):
    """Untrusted hints about a tool's behaviour (2025-03-26+)."""

    title: str | UnsetType = UNSET
    read_only_hint: bool | UnsetType = UNSET
    destructive_hint: bool | UnsetType = UNSET
    idempotent_hint: bool | UnsetType = UNSET
    open_world_hint: bool | UnsetType = UNSET


class Tool(McpStruct):
    """A tool definition. ``input_schema`` / ``output_schema`` are JSON Schema objects.

    ``annotations`` is 2025-03-26+; ``title``, ``output_schema`` and ``meta`` 2025-06-18+;
    ``icons`` and ``execution`` (``{"taskSupport": ...}``) 2025-11-25.
    """

    name: str
    input_schema: dict[str, Any]
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    output_schema: dict[str, Any] | UnsetType = UNSET
    annotations: ToolAnnotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    execution: dict[str, Any] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ListToolsResult(CacheableResult, kw_only=True):
    """Result of ``tools/list``."""

    tools: list[Tool]
    next_cursor: Cursor | UnsetType = UNSET


class CallToolParams(McpStruct):
    """Params of ``tools/call``.

    ``arguments`` is kept as raw JSON so the server can decode it straight into the
    tool's argument Struct (``msgspec.json.decode(params.arguments, type=Args)``).
    """

    name: str
    arguments: msgspec.Raw | UnsetType = UNSET
    task: TaskMetadata | UnsetType = UNSET  # 2025-11-25
    #: MRTR (2026-07-28): the answers to an ``input_required`` result's requests, by key,
    #: and its ``requestState`` echoed byte-exact (see :mod:`.request_state`).
    input_responses: dict[str, Any] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CallToolResult(Result, kw_only=True):
    """Result of ``tools/call``. ``structured_content`` is 2025-06-18+: a JSON object
    until 2025-11-25, any JSON value from 2026-07-28 on."""

    content: list[ContentBlock]
    structured_content: Any | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
