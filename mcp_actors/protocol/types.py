"""msgspec Structs for every MCP object, covering all supported protocol revisions.

Conventions (read these before using or extending the module):

* **One type set for all revisions.** 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25
  share these classes. A field that only some revisions define is optional, so the same
  class decodes and encodes every revision; emitting a field that an older peer does not
  know is harmless because MCP objects are open (unknown fields are ignored). Revision
  gating, if needed, is the caller's job. The protocol layer does no I/O.
* **UNSET means "absent on the wire".** Every optional field is typed
  ``X | UnsetType = UNSET``; msgspec omits UNSET fields when encoding, and a field missing
  from the input decodes as UNSET. ``None`` is never used to mean "absent".
* **snake_case in Python, camelCase on the wire.** ``McpStruct`` uses ``rename="camel"``
  (``mime_type`` <-> ``mimeType``). ``_meta`` is the attribute ``meta`` everywhere.
* **Unknown fields are ignored on decode** (MCP is extensible); do not forbid them.
* **Tagged unions on ``type``.** Content blocks and completion references carry their
  ``type`` as a msgspec tag, so ``ContentBlock`` / ``SamplingContent`` / ``Reference``
  decode straight to the right class and the tag is written automatically.
* **Resource contents are one struct.** msgspec cannot decode an untagged union of
  several Structs, so text and blob contents share ``ResourceContents`` (set exactly one
  of ``text`` / ``blob``).
* **Tool arguments stay raw.** ``CallToolParams.arguments`` is a ``msgspec.Raw`` so the
  server can decode it directly into the tool's own argument Struct.
* **Naming.** Request/notification params are ``<Thing>Params`` and results are
  ``<Thing>Result``; both always carry ``meta``. Methods without params use
  ``EmptyParams``; methods whose result is empty return ``EmptyResult`` (encodes to ``{}``).
"""

from typing import Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType, field

__all__ = [
    "TASKS_EXTENSION",
    "Annotations",
    "AudioContent",
    "CacheScope",
    "CacheableResult",
    "CallToolParams",
    "CallToolResult",
    "CancelTaskParams",
    "CancelTaskResult",
    "CancelledParams",
    "ClientCapabilities",
    "CompleteParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "ContentBlock",
    "CreateMessageParams",
    "CreateMessageResult",
    "CreateTaskResult",
    "CreatedTask",
    "Cursor",
    "DetailedTask",
    "DiscoverParams",
    "DiscoverResult",
    "ElicitParams",
    "ElicitResult",
    "ElicitationCompleteParams",
    "EmbeddedResource",
    "EmptyParams",
    "EmptyResult",
    "GetPromptParams",
    "GetPromptResult",
    "GetTaskParams",
    "GetTaskPayloadParams",
    "GetTaskResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "IncludeContext",
    "InitializeParams",
    "InitializeResult",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListRootsResult",
    "ListTasksResult",
    "ListToolsResult",
    "LoggingLevel",
    "LoggingMessageParams",
    "McpStruct",
    "ModelHint",
    "ModelPreferences",
    "PaginatedParams",
    "ProgressParams",
    "ProgressToken",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "PromptsCapability",
    "ReadResourceParams",
    "ReadResourceResult",
    "Reference",
    "RelatedTaskMetadata",
    "RequestId",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceReference",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedParams",
    "ResourcesCapability",
    "Result",
    "Role",
    "Root",
    "RootsCapability",
    "SamplingContent",
    "SamplingMessage",
    "ServerCapabilities",
    "SetLevelParams",
    "SubscribeParams",
    "Task",
    "TaskIdParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotificationParams",
    "TextContent",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
    "ToolsCapability",
    "UnsubscribeParams",
    "UpdateTaskParams",
]

# --------------------------------------------------------------------------- aliases

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


# --------------------------------------------------------------------------- content


class ResourceContents(McpStruct):
    """Contents of a resource: text (``text``) or binary (base64 ``blob``).

    One struct for the spec's ``TextResourceContents`` and ``BlobResourceContents``
    because msgspec cannot decode an untagged union of Structs; set exactly one of
    ``text`` and ``blob``.
    """

    uri: str
    mime_type: str | UnsetType = UNSET
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class TextContent(McpStruct, tag_field="type", tag="text"):
    """Plain text content."""

    text: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ImageContent(McpStruct, tag_field="type", tag="image"):
    """Base64-encoded image content."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class AudioContent(McpStruct, tag_field="type", tag="audio"):
    """Base64-encoded audio content (2025-03-26+)."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ResourceLink(McpStruct, tag_field="type", tag="resource_link"):
    """A link to a resource the client may read or subscribe to (2025-06-18+)."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class EmbeddedResource(McpStruct, tag_field="type", tag="resource"):
    """Resource contents embedded in a prompt or tool result."""

    resource: ResourceContents
    annotations: Annotations | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)
"""Content of tool results and prompt messages (tagged on ``type``)."""


class ToolUseContent(McpStruct, tag_field="type", tag="tool_use"):
    """A model's request to call a tool, in sampling (2025-11-25)."""

    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ToolResultContent(McpStruct, tag_field="type", tag="tool_result"):
    """The result of a tool use, fed back to the model in sampling (2025-11-25)."""

    tool_use_id: str
    content: list[ContentBlock]
    structured_content: dict[str, Any] | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


SamplingContent: TypeAlias = (
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
)
"""Content of sampling messages (tagged on ``type``)."""


# --------------------------------------------------------------------------- capabilities


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


# --------------------------------------------------------------------------- tasks (2025-11-25)


class TaskMetadata(McpStruct):
    """Requests task-augmented execution (``params.task``) with an optional TTL in ms."""

    ttl: int | UnsetType = UNSET


class RelatedTaskMetadata(McpStruct):
    """Value of ``_meta["io.modelcontextprotocol/related-task"]``."""

    task_id: str


class Task(McpStruct):
    """State of a task. ``ttl`` is required but may be ``null`` (unlimited)."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | UnsetType = UNSET
    poll_interval: int | UnsetType = UNSET


class CreateTaskResult(McpStruct):
    """Result of a task-augmented request: the task that was created."""

    task: Task
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class GetTaskParams(McpStruct):
    """Params of ``tasks/get``."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class GetTaskResult(Task):
    """Result of ``tasks/get``: the task's fields at the top level."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class GetTaskPayloadParams(McpStruct):
    """Params of ``tasks/result``; its result is the original request's result type."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CancelTaskParams(McpStruct):
    """Params of ``tasks/cancel``."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CancelTaskResult(Task):
    """Result of ``tasks/cancel``: the task's fields at the top level."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ListTasksResult(McpStruct):
    """Result of ``tasks/list`` (params: ``PaginatedParams``)."""

    tasks: list[Task]
    next_cursor: Cursor | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class TaskStatusNotificationParams(Task):
    """Params of ``notifications/tasks/status``: the task's fields at the top level."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# ------------------------------------------------------------ tasks (2026-07-28 extension)

#: The tasks extension's identifier, under ``capabilities.extensions`` on both sides.
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"


class CreatedTask(Result, kw_only=True):
    """A ``tools/call`` answered with a task (``resultType: "task"``): the task's fields,
    flat — no result yet; poll ``tasks/get`` with ``task_id``. ``ttl_ms`` is null for
    a task kept until the server restarts."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    status_message: str | UnsetType = UNSET
    poll_interval_ms: int | UnsetType = UNSET


class DetailedTask(CreatedTask, kw_only=True):
    """Result of ``tasks/get`` (and params of ``notifications/tasks``): the task, with
    ``result`` once completed, ``error`` once failed, the outstanding
    ``input_requests`` while ``input_required``."""

    result: dict[str, Any] | UnsetType = UNSET
    error: dict[str, Any] | UnsetType = UNSET
    input_requests: dict[str, Any] | UnsetType = UNSET


class TaskIdParams(McpStruct):
    """Params of ``tasks/get`` and ``tasks/cancel`` (both eras)."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class UpdateTaskParams(McpStruct):
    """Params of ``tasks/update``: answers to some of the task's ``inputRequests``, by key."""

    task_id: str
    input_responses: dict[str, Any]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# --------------------------------------------------------------------------- tools


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


# --------------------------------------------------------------------------- resources


class Resource(McpStruct):
    """A resource the server can read."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ResourceTemplate(McpStruct):
    """A parameterised family of resources (RFC 6570 URI template)."""

    uri_template: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ListResourcesResult(CacheableResult, kw_only=True):
    """Result of ``resources/list``."""

    resources: list[Resource]
    next_cursor: Cursor | UnsetType = UNSET


class ListResourceTemplatesResult(CacheableResult, kw_only=True):
    """Result of ``resources/templates/list``."""

    resource_templates: list[ResourceTemplate]
    next_cursor: Cursor | UnsetType = UNSET


class ReadResourceParams(McpStruct):
    """Params of ``resources/read``."""

    uri: str
    #: MRTR (2026-07-28): the answers to an ``input_required`` result's requests, by key,
    #: and its ``requestState`` echoed byte-exact (see :mod:`.request_state`).
    input_responses: dict[str, Any] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ReadResourceResult(CacheableResult, kw_only=True):
    """Result of ``resources/read``."""

    contents: list[ResourceContents]


class SubscribeParams(McpStruct):
    """Params of ``resources/subscribe``."""

    uri: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class UnsubscribeParams(McpStruct):
    """Params of ``resources/unsubscribe``."""

    uri: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ResourceUpdatedParams(McpStruct):
    """Params of ``notifications/resources/updated``."""

    uri: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# --------------------------------------------------------------------------- prompts


class PromptArgument(McpStruct):
    """An argument a prompt template accepts."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    required: bool | UnsetType = UNSET


class Prompt(McpStruct):
    """A prompt or prompt template offered by the server."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    arguments: list[PromptArgument] | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ListPromptsResult(CacheableResult, kw_only=True):
    """Result of ``prompts/list``."""

    prompts: list[Prompt]
    next_cursor: Cursor | UnsetType = UNSET


class GetPromptParams(McpStruct):
    """Params of ``prompts/get``."""

    name: str
    arguments: dict[str, str] | UnsetType = UNSET
    #: MRTR (2026-07-28): the answers to an ``input_required`` result's requests, by key,
    #: and its ``requestState`` echoed byte-exact (see :mod:`.request_state`).
    input_responses: dict[str, Any] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class PromptMessage(McpStruct):
    """One message of a prompt (the spec gives it no ``_meta``)."""

    role: Role
    content: ContentBlock


class GetPromptResult(Result, kw_only=True):
    """Result of ``prompts/get``."""

    messages: list[PromptMessage]
    description: str | UnsetType = UNSET


# --------------------------------------------------------------------------- completion


class PromptReference(McpStruct, tag_field="type", tag="ref/prompt"):
    """Identifies a prompt for ``completion/complete``."""

    name: str
    title: str | UnsetType = UNSET


class ResourceTemplateReference(McpStruct, tag_field="type", tag="ref/resource"):
    """Identifies a resource (template) for ``completion/complete``."""

    uri: str


ResourceReference = ResourceTemplateReference
"""Name used by revisions 2024-11-05 and 2025-03-26."""

Reference: TypeAlias = PromptReference | ResourceTemplateReference


class CompletionArgument(McpStruct):
    """The argument being completed."""

    name: str
    value: str


class CompletionContext(McpStruct):
    """Previously resolved argument values (2025-06-18+)."""

    arguments: dict[str, str] | UnsetType = UNSET


class CompleteParams(McpStruct):
    """Params of ``completion/complete``."""

    ref: Reference
    argument: CompletionArgument
    context: CompletionContext | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class Completion(McpStruct):
    """Completion values (at most 100)."""

    values: list[str]
    total: int | UnsetType = UNSET
    has_more: bool | UnsetType = UNSET


class CompleteResult(Result, kw_only=True):
    """Result of ``completion/complete``."""

    completion: Completion


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


# --------------------------------------------------------------------------- sampling


class ModelHint(McpStruct):
    """A (sub)string hint for model selection."""

    name: str | UnsetType = UNSET


class ModelPreferences(McpStruct):
    """Server preferences for model selection; priorities are in [0, 1]."""

    hints: list[ModelHint] | UnsetType = UNSET
    cost_priority: float | UnsetType = UNSET
    speed_priority: float | UnsetType = UNSET
    intelligence_priority: float | UnsetType = UNSET


class SamplingMessage(McpStruct):
    """A message in a sampling conversation; a content list is 2025-11-25."""

    role: Role
    content: SamplingContent | list[SamplingContent]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ToolChoice(McpStruct):
    """How the model may use the offered tools (2025-11-25)."""

    mode: Literal["auto", "required", "none"] | UnsetType = UNSET


class CreateMessageParams(McpStruct):
    """Params of ``sampling/createMessage``. ``tools`` / ``tool_choice`` are 2025-11-25."""

    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | UnsetType = UNSET
    system_prompt: str | UnsetType = UNSET
    include_context: IncludeContext | UnsetType = UNSET
    temperature: float | UnsetType = UNSET
    stop_sequences: list[str] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    tools: list[Tool] | UnsetType = UNSET
    tool_choice: ToolChoice | UnsetType = UNSET
    task: TaskMetadata | UnsetType = UNSET  # 2025-11-25
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CreateMessageResult(McpStruct):
    """Result of ``sampling/createMessage``.

    ``stop_reason`` is e.g. ``"endTurn"``, ``"stopSequence"``, ``"maxTokens"``,
    ``"toolUse"`` or any other string.
    """

    role: Role
    content: SamplingContent | list[SamplingContent]
    model: str
    stop_reason: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# --------------------------------------------------------------------------- elicitation


class ElicitParams(McpStruct):
    """Params of ``elicitation/create`` (2025-06-18+).

    Form mode (``mode`` absent or ``"form"``) needs ``requested_schema``; URL mode
    (2025-11-25, ``mode="url"``) needs ``url`` and ``elicitation_id``.
    """

    message: str
    mode: Literal["form", "url"] | UnsetType = UNSET
    requested_schema: dict[str, Any] | UnsetType = UNSET
    url: str | UnsetType = UNSET
    elicitation_id: str | UnsetType = UNSET
    task: TaskMetadata | UnsetType = UNSET  # 2025-11-25
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ElicitResult(McpStruct):
    """Result of ``elicitation/create``; ``content`` only with ``action="accept"``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ElicitationCompleteParams(McpStruct):
    """Params of ``notifications/elicitation/complete`` (2025-11-25)."""

    elicitation_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# --------------------------------------------------------------------------- roots


class Root(McpStruct):
    """A root directory or file the server may operate on (``file://`` URI)."""

    uri: str
    name: str | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class InputRequest(McpStruct):
    """One request of an MRTR ``input_required`` result (2026-07-28): ``elicitation/create``,
    ``sampling/createMessage`` or ``roots/list`` with its params — no ``jsonrpc``, no id."""

    method: str
    params: Any | UnsetType = UNSET


class InputRequiredResult(Result, kw_only=True):
    """``resultType: "input_required"`` (MRTR, 2026-07-28): the server needs the client to
    answer ``input_requests`` (by key) and retry the request with ``requestState``."""

    input_requests: dict[str, InputRequest] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


class ListRootsResult(McpStruct):
    """Result of ``roots/list`` (params: ``EmptyParams``)."""

    roots: list[Root]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")
