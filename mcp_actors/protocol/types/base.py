"""The ground every MCP object stands on: aliases, :class:`McpStruct`, shared pieces, results.

Aliases name the scalar types of the schema (request ids, progress tokens, cursors,
levels); :class:`McpStruct` sets the wire conventions every object follows (see the
package docstring); :class:`Result` and its kin are the shapes every answer shares.
"""

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType, field

RequestId: TypeAlias = int | str
"""A JSON-RPC request id (never null in MCP)."""

ProgressToken: TypeAlias = int | str
"""Token tying ``notifications/progress`` to the request that asked for it."""

Cursor: TypeAlias = str
"""Opaque pagination cursor."""

Role: TypeAlias = Literal["user", "assistant"]

CacheScope: TypeAlias = Literal["public", "private"]
"""Who may share a cached result (2026-07-28, ``cacheScope``)."""

LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]

IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]

TaskStatus: TypeAlias = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""Status of a task (2025-11-25)."""


class McpStruct(msgspec.Struct, kw_only=True, rename="camel"):
    """Base of every MCP object: keyword-only, snake_case attributes, camelCase on the wire.

    Printed, an object shows only the fields it has: ``CallToolResult(content=[...],
    structured_content={'result': 3})``, not a row of ``UNSET`` placeholders.
    """

    def __repr__(self) -> str:
        present = (
            f"{name}={value!r}"
            for name in self.__struct_fields__
            if (value := getattr(self, name)) is not UNSET
        )
        return f"{type(self).__name__}({', '.join(present)})"


# --------------------------------------------------------------------------- shared pieces


class Annotations(McpStruct):
    """Hints to the client about how to use or display an object.

    ``last_modified`` (ISO 8601) is 2025-06-18+; 2024-11-05 nests the same shape in
    ``Annotated.annotations``.
    """

    audience: list[Role] | UnsetType = UNSET
    priority: float | UnsetType = UNSET
    last_modified: str | UnsetType = UNSET


class Icon(McpStruct):
    """An icon for an implementation, tool, resource or prompt (2025-11-25)."""

    src: str
    mime_type: str | UnsetType = UNSET
    sizes: list[str] | UnsetType = UNSET
    theme: Literal["light", "dark"] | UnsetType = UNSET


class Implementation(McpStruct):
    """Name and version of an MCP client or server (``clientInfo`` / ``serverInfo``).

    ``title`` is 2025-06-18+; ``description``, ``website_url`` and ``icons`` 2025-11-25.
    """

    name: str
    version: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    website_url: str | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET


# --------------------------------------------------------------------------- generic


class Result(McpStruct, kw_only=True):
    """Common fields of every result.

    ``result_type`` (``"complete"``; ``"input_required"`` for MRTR) is set on results
    of the modern era (2026-07-28) only: legacy peers validate results strictly, so
    it stays UNSET there. A client reads an absent ``resultType`` as ``"complete"``.
    """

    result_type: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CacheableResult(Result, kw_only=True):
    """A result the client may cache (2026-07-28): ``server/discover``, the four list
    results and ``resources/read``.

    ``ttl_ms`` (integer >= 0) says for how long, ``cache_scope`` who may share the
    cached copy (``"public"``: anyone; ``"private"``: one authorization context).
    Both are required on a modern ``"complete"`` result, absent on legacy ones.
    """

    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class EmptyParams(McpStruct):
    """Params of methods and notifications that take none (``ping``, ``roots/list``,
    ``notifications/initialized``, ``notifications/*/list_changed``)."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class EmptyResult(Result, kw_only=True):
    """A result with no content (e.g. ``ping``, ``logging/setLevel``); encodes to ``{}``."""


class PaginatedParams(McpStruct):
    """Params of every list method (``tools/list``, ``resources/list``, ...)."""

    cursor: Cursor | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")
