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

The types are split by concern into the modules of this package (:mod:`.base`,
:mod:`.content`, :mod:`.session`, :mod:`.tasks`, :mod:`.tools`, :mod:`.resources`,
:mod:`.prompts`, :mod:`.client_features`); import them from here,
``from mcp_actors.protocol import types as t``, never from those modules. ``UNSET``
(and its type) is here too: ``t.UNSET`` is what an absent field holds.
"""

from msgspec import UNSET, UnsetType

from .base import (
    Annotations,
    CacheableResult,
    CacheScope,
    Cursor,
    EmptyParams,
    EmptyResult,
    Icon,
    Implementation,
    IncludeContext,
    LoggingLevel,
    McpStruct,
    PaginatedParams,
    ProgressToken,
    RequestId,
    Result,
    Role,
    TaskStatus,
)
from .client_features import (
    CreateMessageParams,
    CreateMessageResult,
    ElicitationCompleteParams,
    ElicitParams,
    ElicitResult,
    InputRequest,
    InputRequiredResult,
    ListRootsResult,
    ModelHint,
    ModelPreferences,
    Root,
    SamplingMessage,
    ToolChoice,
)
from .content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    SamplingContent,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)
from .prompts import (
    CompleteParams,
    CompleteResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    GetPromptParams,
    GetPromptResult,
    ListPromptsResult,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptReference,
    Reference,
    ResourceReference,
    ResourceTemplateReference,
)
from .resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceUpdatedParams,
    SubscribeParams,
    UnsubscribeParams,
)
from .session import (
    CancelledParams,
    ClientCapabilities,
    DiscoverParams,
    DiscoverResult,
    InitializeParams,
    InitializeResult,
    LoggingMessageParams,
    ProgressParams,
    PromptsCapability,
    ResourcesCapability,
    RootsCapability,
    ServerCapabilities,
    SetLevelParams,
    SubscriptionsAcknowledgedParams,
    SubscriptionsListenParams,
    SubscriptionsListenResult,
    ToolsCapability,
)
from .tasks import (
    TASKS_EXTENSION,
    CancelTaskParams,
    CancelTaskResult,
    CreatedTask,
    CreateTaskResult,
    DetailedTask,
    GetTaskParams,
    GetTaskPayloadParams,
    GetTaskResult,
    ListTasksResult,
    RelatedTaskMetadata,
    Task,
    TaskIdParams,
    TaskMetadata,
    TaskStatusNotificationParams,
    UpdateTaskParams,
)
from .tools import (
    CallToolParams,
    CallToolResult,
    ListToolsResult,
    Tool,
    ToolAnnotations,
)

__all__ = [
    "TASKS_EXTENSION",
    "UNSET",
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
    "InputRequest",
    "InputRequiredResult",
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
    "SubscriptionsAcknowledgedParams",
    "SubscriptionsListenParams",
    "SubscriptionsListenResult",
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
    "UnsetType",
    "UnsubscribeParams",
    "UpdateTaskParams",
]
