"""Wire-format tests for mcp_actors.protocol.types against the official MCP JSON Schemas.

Every struct gets at least one representative instance; each instance is encoded with
msgspec and validated against the matching definition of every revision that defines it
(mcp_actors/testing/schemas/<rev>/schema.json, copied from the spec so the suite is hermetic).
Params are validated inside their full JSON-RPC request/notification envelope, because
revisions before 2025-11-25 define params inline. Examples from the spec prose are
decoded and checked attribute by attribute.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
import referencing
from msgspec import UNSET

import mcp_actors.testing.wire
from mcp_actors.protocol import types as t
from mcp_actors.protocol.types import (
    Annotations,
    AudioContent,
    CacheableResult,
    CallToolParams,
    CallToolResult,
    CancelledParams,
    CancelTaskParams,
    CancelTaskResult,
    ClientCapabilities,
    CompleteParams,
    CompleteResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    ContentBlock,
    CreateMessageParams,
    CreateMessageResult,
    CreateTaskResult,
    DiscoverParams,
    DiscoverResult,
    ElicitationCompleteParams,
    ElicitParams,
    ElicitResult,
    EmbeddedResource,
    EmptyParams,
    EmptyResult,
    GetPromptParams,
    GetPromptResult,
    GetTaskParams,
    GetTaskPayloadParams,
    GetTaskResult,
    Icon,
    ImageContent,
    Implementation,
    InitializeParams,
    InitializeResult,
    InputRequest,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListTasksResult,
    ListToolsResult,
    LoggingMessageParams,
    McpStruct,
    ModelHint,
    ModelPreferences,
    PaginatedParams,
    ProgressParams,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptReference,
    PromptsCapability,
    ReadResourceParams,
    ReadResourceResult,
    Reference,
    RelatedTaskMetadata,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourcesCapability,
    ResourceTemplate,
    ResourceTemplateReference,
    ResourceUpdatedParams,
    Result,
    Root,
    RootsCapability,
    SamplingContent,
    SamplingMessage,
    ServerCapabilities,
    SetLevelParams,
    SubscribeParams,
    SubscriptionsAcknowledgedParams,
    SubscriptionsListenParams,
    SubscriptionsListenResult,
    Task,
    TaskMetadata,
    TaskStatusNotificationParams,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolChoice,
    ToolResultContent,
    ToolsCapability,
    ToolUseContent,
    UnsubscribeParams,
)

SCHEMA_DIR = Path(mcp_actors.testing.wire.__file__).parent / "schemas"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ALL = REVISIONS
SINCE_2025_03 = REVISIONS[1:]
SINCE_2025_06 = REVISIONS[2:]
ONLY_2025_11 = REVISIONS[3:]
MODERN = ("2026-07-28",)
#: The tasks extension's own schema (``schemas/extensions/tasks``), used with 2026-07-28.
TASKS_EXTENSION = ("extensions/tasks",)


# --------------------------------------------------------------------------- schema helpers


@functools.cache
def load_schema(rev: str) -> dict[str, Any]:
    with (SCHEMA_DIR / rev / "schema.json").open(encoding="utf-8") as f:
        schema: dict[str, Any] = json.load(f)
    return schema


def defs_key(rev: str) -> str:
    return "$defs" if "$defs" in load_schema(rev) else "definitions"


def definitions(rev: str) -> dict[str, Any]:
    defs: dict[str, Any] = load_schema(rev)[defs_key(rev)]
    return defs


@functools.cache
def schema_registry(rev: str) -> tuple[type[jsonschema.protocols.Validator], referencing.Registry]:
    """The revision's dialect and a registry holding its schema document (checked once)."""
    schema = load_schema(rev)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    resource = referencing.Resource.from_contents(schema)
    return cls, referencing.Registry().with_resource(f"urn:mcp-schema:{rev}", resource)


@functools.cache
def validator(rev: str, definition: str) -> jsonschema.protocols.Validator:
    """Validator for `#/definitions/<definition>` (`#/$defs/...` from 2025-11-25 on)."""
    cls, registry = schema_registry(rev)
    ref = {"$ref": f"urn:mcp-schema:{rev}#/{defs_key(rev)}/{definition}"}
    return cls(ref, registry=registry)


def validate(rev: str, definition: str, instance: Any) -> None:
    validator(rev, definition).validate(instance)


def to_json(obj: Any) -> Any:
    """Encode with msgspec, then parse back to plain JSON values."""
    return json.loads(msgspec.json.encode(obj))


# --------------------------------------------------------------------------- case table


@dataclass(frozen=True)
class Target:
    definition: str
    revs: tuple[str, ...] = ALL
    envelope: str | None = None  # "request" / "notification" (params) or None (direct)
    method: str | None = None

    def instance(self, encoded: Any) -> Any:
        if self.envelope == "request":
            return {"jsonrpc": "2.0", "id": 1, "method": self.method, "params": encoded}
        if self.envelope == "notification":
            return {"jsonrpc": "2.0", "method": self.method, "params": encoded}
        return encoded


@dataclass(frozen=True)
class Case:
    id: str
    obj: McpStruct
    targets: tuple[Target, ...]


def direct(definition: str, revs: tuple[str, ...] = ALL) -> Target:
    return Target(definition, revs)


def request(method: str, definition: str, revs: tuple[str, ...] = ALL) -> tuple[Target, Target]:
    """Validate params inside a full request, and directly where `<X>Params` exists."""
    return (
        Target(f"{definition}Request", revs, "request", method),
        Target(f"{definition}RequestParams", revs),
    )


def notification(
    method: str, definition: str, revs: tuple[str, ...] = ALL
) -> tuple[Target, Target]:
    return (
        Target(f"{definition}Notification", revs, "notification", method),
        Target(f"{definition}NotificationParams", revs),
    )


META: dict[str, Any] = {"io.example/trace": "t-1", "progressToken": "tok-1"}
ANN = Annotations(
    audience=["user", "assistant"], priority=0.5, last_modified="2025-01-12T15:00:58Z"
)
ICON = Icon(
    src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"], theme="dark"
)
IMPL = Implementation(
    name="example",
    version="1.0.0",
    title="Example",
    description="An example implementation",
    website_url="https://example.com",
    icons=[ICON],
)
TEXT = TextContent(text="hello", annotations=ANN, meta=META)
IMAGE = ImageContent(data="aGVsbG8=", mime_type="image/png", annotations=ANN, meta=META)
AUDIO = AudioContent(data="aGVsbG8=", mime_type="audio/wav", annotations=ANN, meta=META)
TEXT_CONTENTS = ResourceContents(uri="file:///a.txt", mime_type="text/plain", text="hi", meta=META)
BLOB_CONTENTS = ResourceContents(uri="file:///a.png", mime_type="image/png", blob="aGVsbG8=")
EMBEDDED_TEXT = EmbeddedResource(resource=TEXT_CONTENTS, annotations=ANN, meta=META)
EMBEDDED_BLOB = EmbeddedResource(resource=BLOB_CONTENTS)
LINK = ResourceLink(
    uri="file:///project/README.md",
    name="README.md",
    title="Readme",
    description="The readme",
    mime_type="text/markdown",
    annotations=ANN,
    size=1234,
    icons=[ICON],
    meta=META,
)
TOOL_USE = ToolUseContent(id="call-1", name="get_weather", input={"city": "Paris"}, meta=META)
TOOL_RESULT = ToolResultContent(
    tool_use_id="call-1",
    content=[TextContent(text="18C"), LINK],
    structured_content={"temperature": 18},
    is_error=False,
    meta=META,
)
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
TOOL_ANN = ToolAnnotations(
    title="Weather",
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=True,
)
TOOL = Tool(
    name="get_weather",
    input_schema=INPUT_SCHEMA,
    title="Get weather",
    description="Current weather for a city",
    output_schema={"type": "object", "properties": {"temperature": {"type": "number"}}},
    annotations=TOOL_ANN,
    icons=[ICON],
    execution={"taskSupport": "optional"},
    meta=META,
)
TOOL_MIN = Tool(name="noop", input_schema={"type": "object"})
CLIENT_CAPS = ClientCapabilities(
    experimental={"io.example/feature": {"on": True}},
    roots=RootsCapability(list_changed=True),
    sampling={"context": {}, "tools": {}},
    elicitation={"form": {}, "url": {}},
    tasks={
        "list": {},
        "cancel": {},
        "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
    },
)
SERVER_CAPS = ServerCapabilities(
    experimental={"io.example/feature": {}},
    logging={},
    completions={},
    prompts=PromptsCapability(list_changed=True),
    resources=ResourcesCapability(subscribe=True, list_changed=False),
    tools=ToolsCapability(list_changed=True),
    tasks={"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
)
RESOURCE = Resource(
    uri="file:///project/src/main.rs",
    name="main.rs",
    title="Main",
    description="Entry point",
    mime_type="text/x-rust",
    annotations=ANN,
    size=42,
    icons=[ICON],
    meta=META,
)
TEMPLATE = ResourceTemplate(
    uri_template="file:///{path}",
    name="files",
    title="Project files",
    description="Any project file",
    mime_type="application/octet-stream",
    annotations=ANN,
    icons=[ICON],
    meta=META,
)
PROMPT_ARG = PromptArgument(name="code", title="Code", description="Code to review", required=True)
PROMPT = Prompt(
    name="code_review",
    title="Code review",
    description="Review code",
    arguments=[PROMPT_ARG],
    icons=[ICON],
    meta=META,
)
MODEL_PREFS = ModelPreferences(
    hints=[ModelHint(name="claude-3-sonnet"), ModelHint()],
    cost_priority=0.3,
    speed_priority=0.8,
    intelligence_priority=0.5,
)
SAMPLING_TEXT = SamplingMessage(role="user", content=TextContent(text="Capital of France?"))
SAMPLING_TOOLS = SamplingMessage(
    role="assistant", content=[TextContent(text="Let me check."), TOOL_USE], meta=META
)
SAMPLING_RESULT = SamplingMessage(role="user", content=[TOOL_RESULT])
TASK = Task(
    task_id="task-1",
    status="working",
    created_at="2025-11-25T10:30:00Z",
    last_updated_at="2025-11-25T10:31:00Z",
    ttl=60000,
    status_message="Working on it",
    poll_interval=5000,
)
TASK_FIELDS: dict[str, Any] = {
    "task_id": "task-2",
    "status": "cancelled",
    "created_at": "2025-11-25T10:30:00Z",
    "last_updated_at": "2025-11-25T10:40:00Z",
    "ttl": None,
}
REQUESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1},
        "age": {"type": "integer", "minimum": 0},
        "subscribe": {"type": "boolean", "default": False},
        "color": {"type": "string", "enum": ["red", "green"]},
    },
    "required": ["name"],
}

LIST_CHANGED = (
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/roots/list_changed",
)
_LIST_CHANGED_DEFS = (
    "ToolListChangedNotification",
    "PromptListChangedNotification",
    "ResourceListChangedNotification",
    "RootsListChangedNotification",
)


def _empty_params_targets() -> tuple[Target, ...]:
    targets: list[Target] = [
        Target("PingRequest", ALL, "request", "ping"),
        Target("ListRootsRequest", ALL, "request", "roots/list"),
        Target("InitializedNotification", ALL, "notification", "notifications/initialized"),
        Target("RequestParams", ONLY_2025_11),
        Target("NotificationParams", ONLY_2025_11),
    ]
    for method, definition in zip(LIST_CHANGED, _LIST_CHANGED_DEFS, strict=True):
        targets.append(Target(definition, ALL, "notification", method))
    return tuple(targets)


def _paginated_targets() -> tuple[Target, ...]:
    return (
        Target("ListToolsRequest", ALL, "request", "tools/list"),
        Target("ListResourcesRequest", ALL, "request", "resources/list"),
        Target("ListResourceTemplatesRequest", ALL, "request", "resources/templates/list"),
        Target("ListPromptsRequest", ALL, "request", "prompts/list"),
        Target("ListTasksRequest", ONLY_2025_11, "request", "tasks/list"),
        Target("PaginatedRequestParams", ONLY_2025_11),
    )


CASES: tuple[Case, ...] = (
    # shared pieces
    Case("annotations", ANN, (direct("Annotations"),)),
    Case("annotations-empty", Annotations(), (direct("Annotations"),)),
    Case("icon", ICON, (direct("Icon"),)),
    Case("icon-min", Icon(src="data:image/png;base64,aGVsbG8="), (direct("Icon"),)),
    Case("implementation", IMPL, (direct("Implementation"),)),
    Case("implementation-min", Implementation(name="x", version="0"), (direct("Implementation"),)),
    # content
    Case("text", TEXT, (direct("TextContent"), direct("ContentBlock"))),
    Case("text-min", TextContent(text=""), (direct("TextContent"),)),
    Case("image", IMAGE, (direct("ImageContent"), direct("ContentBlock"))),
    Case("audio", AUDIO, (direct("AudioContent"), direct("ContentBlock"))),
    Case("resource-link", LINK, (direct("ResourceLink"), direct("ContentBlock"))),
    Case(
        "resource-link-min",
        ResourceLink(uri="file:///x", name="x"),
        (direct("ResourceLink"),),
    ),
    Case("embedded-text", EMBEDDED_TEXT, (direct("EmbeddedResource"), direct("ContentBlock"))),
    Case("embedded-blob", EMBEDDED_BLOB, (direct("EmbeddedResource"),)),
    Case(
        "contents-text",
        TEXT_CONTENTS,
        (direct("TextResourceContents"), direct("ResourceContents")),
    ),
    Case(
        "contents-blob",
        BLOB_CONTENTS,
        (direct("BlobResourceContents"), direct("ResourceContents")),
    ),
    Case("tool-use", TOOL_USE, (direct("ToolUseContent"), direct("SamplingMessageContentBlock"))),
    Case(
        "tool-result",
        TOOL_RESULT,
        (direct("ToolResultContent"), direct("SamplingMessageContentBlock")),
    ),
    # capabilities
    Case("client-caps", CLIENT_CAPS, (direct("ClientCapabilities"),)),
    Case("client-caps-empty", ClientCapabilities(), (direct("ClientCapabilities"),)),
    Case("server-caps", SERVER_CAPS, (direct("ServerCapabilities"),)),
    Case("server-caps-empty", ServerCapabilities(), (direct("ServerCapabilities"),)),
    # lifecycle / generic
    Case(
        "initialize-params",
        InitializeParams(
            protocol_version="2025-11-25",
            capabilities=CLIENT_CAPS,
            client_info=IMPL,
            meta=META,
        ),
        request("initialize", "Initialize"),
    ),
    Case(
        "initialize-result",
        InitializeResult(
            protocol_version="2025-06-18",
            capabilities=SERVER_CAPS,
            server_info=IMPL,
            instructions="Be nice.",
            meta=META,
        ),
        (direct("InitializeResult"), direct("ServerResult")),
    ),
    Case("empty-params", EmptyParams(), _empty_params_targets()),
    Case("empty-params-meta", EmptyParams(meta=META), _empty_params_targets()),
    Case("empty-result", EmptyResult(), (direct("EmptyResult"), direct("Result"))),
    Case("empty-result-meta", EmptyResult(meta=META), (direct("EmptyResult"),)),
    Case("paginated", PaginatedParams(cursor="c-1", meta=META), _paginated_targets()),
    Case("paginated-empty", PaginatedParams(), _paginated_targets()),
    # tools
    Case("tool", TOOL, (direct("Tool"),)),
    Case("tool-min", TOOL_MIN, (direct("Tool"),)),
    Case("tool-annotations", TOOL_ANN, (direct("ToolAnnotations"),)),
    Case(
        "list-tools",
        ListToolsResult(tools=[TOOL, TOOL_MIN], next_cursor="n", meta=META),
        (direct("ListToolsResult"),),
    ),
    Case(
        "call-tool-params",
        CallToolParams(name="get_weather", arguments=msgspec.Raw(b'{"city": "Paris"}'), meta=META),
        request("tools/call", "CallTool"),
    ),
    Case("call-tool-params-min", CallToolParams(name="noop"), request("tools/call", "CallTool")),
    Case(
        "call-tool-params-task",
        CallToolParams(name="slow", arguments=msgspec.Raw(b"{}"), task=TaskMetadata(ttl=60000)),
        request("tools/call", "CallTool", ONLY_2025_11),
    ),
    Case(
        "call-tool-result",
        CallToolResult(content=[TEXT, IMAGE, EMBEDDED_TEXT], is_error=False, meta=META),
        (direct("CallToolResult"),),
    ),
    Case(
        "call-tool-result-full",
        CallToolResult(
            content=[AUDIO, LINK, EMBEDDED_BLOB],
            structured_content={"temperature": 18},
            is_error=True,
        ),
        (direct("CallToolResult", SINCE_2025_06),),
    ),
    Case("call-tool-result-empty", CallToolResult(content=[]), (direct("CallToolResult"),)),
    # resources
    Case("resource", RESOURCE, (direct("Resource"),)),
    Case("resource-min", Resource(uri="file:///x", name="x"), (direct("Resource"),)),
    Case("resource-template", TEMPLATE, (direct("ResourceTemplate"),)),
    Case(
        "list-resources",
        ListResourcesResult(resources=[RESOURCE], next_cursor="n", meta=META),
        (direct("ListResourcesResult"),),
    ),
    Case(
        "list-resource-templates",
        ListResourceTemplatesResult(resource_templates=[TEMPLATE], next_cursor="n", meta=META),
        (direct("ListResourceTemplatesResult"),),
    ),
    Case(
        "read-resource-params",
        ReadResourceParams(uri="file:///a.txt", meta=META),
        request("resources/read", "ReadResource"),
    ),
    Case(
        "read-resource-result",
        ReadResourceResult(contents=[TEXT_CONTENTS, BLOB_CONTENTS], meta=META),
        (direct("ReadResourceResult"),),
    ),
    Case(
        "subscribe-params",
        SubscribeParams(uri="file:///a.txt", meta=META),
        request("resources/subscribe", "Subscribe"),
    ),
    Case(
        "unsubscribe-params",
        UnsubscribeParams(uri="file:///a.txt"),
        request("resources/unsubscribe", "Unsubscribe"),
    ),
    Case(
        "resource-updated-params",
        ResourceUpdatedParams(uri="file:///a.txt", meta=META),
        notification("notifications/resources/updated", "ResourceUpdated"),
    ),
    # prompts
    Case("prompt-argument", PROMPT_ARG, (direct("PromptArgument"),)),
    Case("prompt", PROMPT, (direct("Prompt"),)),
    Case("prompt-min", Prompt(name="p"), (direct("Prompt"),)),
    Case(
        "list-prompts",
        ListPromptsResult(prompts=[PROMPT], next_cursor="n", meta=META),
        (direct("ListPromptsResult"),),
    ),
    Case(
        "get-prompt-params",
        GetPromptParams(name="code_review", arguments={"code": "print(1)"}, meta=META),
        request("prompts/get", "GetPrompt"),
    ),
    Case(
        "prompt-message-text",
        PromptMessage(role="user", content=TEXT),
        (direct("PromptMessage"),),
    ),
    Case(
        "prompt-message-embedded",
        PromptMessage(role="assistant", content=EMBEDDED_TEXT),
        (direct("PromptMessage"),),
    ),
    Case(
        "prompt-message-audio",
        PromptMessage(role="user", content=AUDIO),
        (direct("PromptMessage", SINCE_2025_03),),
    ),
    Case(
        "prompt-message-link",
        PromptMessage(role="user", content=LINK),
        (direct("PromptMessage", SINCE_2025_06),),
    ),
    Case(
        "get-prompt-result",
        GetPromptResult(
            messages=[PromptMessage(role="user", content=TEXT)],
            description="Code review prompt",
            meta=META,
        ),
        (direct("GetPromptResult"),),
    ),
    # completion
    Case(
        "prompt-ref",
        PromptReference(name="code_review", title="Code review"),
        (direct("PromptReference"),),
    ),
    Case(
        "resource-template-ref",
        ResourceTemplateReference(uri="file:///{path}"),
        (
            direct("ResourceTemplateReference", SINCE_2025_06),
            direct("ResourceReference", REVISIONS[:2]),
        ),
    ),
    Case(
        "complete-params-prompt",
        CompleteParams(
            ref=PromptReference(name="code_review"),
            argument=CompletionArgument(name="language", value="py"),
        ),
        request("completion/complete", "Complete"),
    ),
    Case(
        "complete-params-resource",
        CompleteParams(
            ref=ResourceTemplateReference(uri="github://repos/{owner}/{repo}"),
            argument=CompletionArgument(name="repo", value="mcp"),
            context=CompletionContext(arguments={"owner": "modelcontextprotocol"}),
            meta=META,
        ),
        request("completion/complete", "Complete"),
    ),
    Case(
        "complete-result",
        CompleteResult(
            completion=Completion(values=["python", "pytorch"], total=10, has_more=True),
            meta=META,
        ),
        (direct("CompleteResult"),),
    ),
    Case(
        "complete-result-min",
        CompleteResult(completion=Completion(values=[])),
        (direct("CompleteResult"),),
    ),
    # logging
    Case(
        "set-level-params",
        SetLevelParams(level="warning", meta=META),
        request("logging/setLevel", "SetLevel"),
    ),
    Case(
        "logging-message-params",
        LoggingMessageParams(
            level="error", logger="database", data={"error": "Connection failed"}, meta=META
        ),
        notification("notifications/message", "LoggingMessage"),
    ),
    Case(
        "logging-message-params-scalar",
        LoggingMessageParams(level="emergency", data="boom"),
        notification("notifications/message", "LoggingMessage"),
    ),
    # progress / cancellation
    Case(
        "progress-params",
        ProgressParams(progress_token="abc123", progress=50.0, total=100.0, message="Halfway"),
        notification("notifications/progress", "Progress"),
    ),
    Case(
        "progress-params-int-token",
        ProgressParams(progress_token=7, progress=0.25, meta=META),
        notification("notifications/progress", "Progress"),
    ),
    Case(
        "cancelled-params",
        CancelledParams(request_id="123", reason="User requested cancellation", meta=META),
        notification("notifications/cancelled", "Cancelled"),
    ),
    Case(
        "cancelled-params-int-id",
        CancelledParams(request_id=5),
        notification("notifications/cancelled", "Cancelled"),
    ),
    Case(
        "cancelled-params-no-id",
        CancelledParams(reason="task cancelled"),
        notification("notifications/cancelled", "Cancelled", ONLY_2025_11),
    ),
    # sampling
    Case("model-hint", ModelHint(name="claude"), (direct("ModelHint"),)),
    Case("model-hint-empty", ModelHint(), (direct("ModelHint"),)),
    Case("model-preferences", MODEL_PREFS, (direct("ModelPreferences"),)),
    Case("sampling-message-text", SAMPLING_TEXT, (direct("SamplingMessage"),)),
    Case(
        "sampling-message-image",
        SamplingMessage(role="assistant", content=IMAGE),
        (direct("SamplingMessage"),),
    ),
    Case(
        "sampling-message-audio",
        SamplingMessage(role="user", content=AUDIO),
        (direct("SamplingMessage", SINCE_2025_03),),
    ),
    Case("sampling-message-tools", SAMPLING_TOOLS, (direct("SamplingMessage", ONLY_2025_11),)),
    Case("sampling-message-result", SAMPLING_RESULT, (direct("SamplingMessage", ONLY_2025_11),)),
    Case("tool-choice", ToolChoice(mode="required"), (direct("ToolChoice"),)),
    Case("tool-choice-empty", ToolChoice(), (direct("ToolChoice"),)),
    Case(
        "create-message-params",
        CreateMessageParams(
            messages=[SAMPLING_TEXT],
            max_tokens=100,
            model_preferences=MODEL_PREFS,
            system_prompt="You are a helpful assistant.",
            include_context="thisServer",
            temperature=0.7,
            stop_sequences=["\n\n"],
            metadata={"provider": {"x": 1}},
            meta=META,
        ),
        request("sampling/createMessage", "CreateMessage"),
    ),
    Case(
        "create-message-params-min",
        CreateMessageParams(messages=[], max_tokens=1),
        request("sampling/createMessage", "CreateMessage"),
    ),
    Case(
        "create-message-params-tools",
        CreateMessageParams(
            messages=[SAMPLING_TEXT, SAMPLING_TOOLS, SAMPLING_RESULT],
            max_tokens=1000,
            tools=[TOOL, TOOL_MIN],
            tool_choice=ToolChoice(mode="auto"),
            task=TaskMetadata(ttl=1000),
        ),
        request("sampling/createMessage", "CreateMessage", ONLY_2025_11),
    ),
    Case(
        "create-message-result",
        CreateMessageResult(
            role="assistant",
            content=TextContent(text="Paris."),
            model="claude-3-sonnet-20240307",
            stop_reason="endTurn",
            meta=META,
        ),
        (direct("CreateMessageResult"),),
    ),
    Case(
        "create-message-result-tool-use",
        CreateMessageResult(role="assistant", content=[TOOL_USE], model="m", stop_reason="toolUse"),
        (direct("CreateMessageResult", ONLY_2025_11),),
    ),
    # elicitation
    Case(
        "elicit-params-form",
        ElicitParams(message="Who are you?", requested_schema=REQUESTED_SCHEMA, meta=META),
        (
            *request("elicitation/create", "Elicit"),
            direct("ElicitRequestFormParams", ONLY_2025_11),
        ),
    ),
    Case(
        "elicit-params-form-mode",
        ElicitParams(
            message="Who are you?",
            mode="form",
            requested_schema={"type": "object", "properties": {}},
            task=TaskMetadata(),
        ),
        (
            *request("elicitation/create", "Elicit", ONLY_2025_11),
            direct("ElicitRequestFormParams", ONLY_2025_11),
        ),
    ),
    Case(
        "elicit-params-url",
        ElicitParams(
            message="Please sign in",
            mode="url",
            url="https://example.com/oauth/start",
            elicitation_id="el-1",
        ),
        (
            *request("elicitation/create", "Elicit", ONLY_2025_11),
            direct("ElicitRequestURLParams", ONLY_2025_11),
        ),
    ),
    Case(
        "elicit-result-accept",
        ElicitResult(
            action="accept",
            content={"name": "Ada", "age": 36, "subscribe": True, "colors": ["red"]},
            meta=META,
        ),
        (direct("ElicitResult", ONLY_2025_11),),
    ),
    Case(
        "elicit-result-accept-scalar",
        ElicitResult(action="accept", content={"name": "Ada", "age": 36, "subscribe": True}),
        (direct("ElicitResult"),),
    ),
    Case("elicit-result-decline", ElicitResult(action="decline"), (direct("ElicitResult"),)),
    Case("elicit-result-cancel", ElicitResult(action="cancel"), (direct("ElicitResult"),)),
    Case(
        "elicitation-complete-params",
        ElicitationCompleteParams(elicitation_id="el-1"),
        notification("notifications/elicitation/complete", "ElicitationComplete"),
    ),
    # roots
    Case(
        "root", Root(uri="file:///home/user/project", name="Project", meta=META), (direct("Root"),)
    ),
    Case("root-min", Root(uri="file:///tmp"), (direct("Root"),)),
    Case(
        "list-roots",
        ListRootsResult(roots=[Root(uri="file:///a", name="A"), Root(uri="file:///b")]),
        (direct("ListRootsResult"),),
    ),
    # multi round-trip requests (2026-07-28)
    Case(
        "input-required-result",
        InputRequiredResult(
            result_type="input_required",
            input_requests={
                "user_name": InputRequest(
                    method="elicitation/create",
                    params={
                        "mode": "form",
                        "message": "Name?",
                        "requestedSchema": {"type": "object", "properties": {}},
                    },
                ),
                "client_roots": InputRequest(method="roots/list", params={}),
            },
            request_state="opaque",
        ),
        (direct("InputRequiredResult", MODERN),),
    ),
    # tasks (2025-11-25)
    Case("task-metadata", TaskMetadata(ttl=60000), (direct("TaskMetadata"),)),
    Case("related-task", RelatedTaskMetadata(task_id="task-1"), (direct("RelatedTaskMetadata"),)),
    Case("task", TASK, (direct("Task"),)),
    Case("task-null-ttl", Task(**TASK_FIELDS), (direct("Task"),)),
    Case(
        "create-task-result",
        CreateTaskResult(task=TASK, meta=META),
        (direct("CreateTaskResult"),),
    ),
    Case(
        "created-task",
        t.CreatedTask(
            result_type="task",
            task_id="task-1",
            status="working",
            created_at="2026-07-28T10:00:00.000Z",
            last_updated_at="2026-07-28T10:00:00.000Z",
            ttl_ms=None,
            poll_interval_ms=500,
        ),
        (direct("CreateTaskResult", TASKS_EXTENSION),),
    ),
    Case(
        "detailed-task",
        t.DetailedTask(
            result_type="complete",
            task_id="task-1",
            status="completed",
            created_at="2026-07-28T10:00:00.000Z",
            last_updated_at="2026-07-28T10:00:01.000Z",
            ttl_ms=60000,
            result={"content": [{"type": "text", "text": "done"}]},
        ),
        (direct("GetTaskResult", TASKS_EXTENSION),),
    ),
    Case(
        "task-id-params",
        t.TaskIdParams(task_id="task-1"),
        (
            Target("GetTaskRequest", TASKS_EXTENSION, "request", "tasks/get"),
            Target("CancelTaskRequest", TASKS_EXTENSION, "request", "tasks/cancel"),
            Target("GetTaskRequest", ONLY_2025_11, "request", "tasks/get"),
        ),
    ),
    Case(
        "update-task-params",
        t.UpdateTaskParams(
            task_id="task-1", input_responses={"confirm": {"action": "accept", "content": {}}}
        ),
        (Target("UpdateTaskRequest", TASKS_EXTENSION, "request", "tasks/update"),),
    ),
    Case(
        "get-task-params",
        GetTaskParams(task_id="task-1"),
        (Target("GetTaskRequest", ONLY_2025_11, "request", "tasks/get"),),
    ),
    Case(
        "get-task-result",
        GetTaskResult(**TASK_FIELDS, poll_interval=1000, meta=META),
        (direct("GetTaskResult"),),
    ),
    Case(
        "get-task-payload-params",
        GetTaskPayloadParams(task_id="task-1", meta=META),
        (Target("GetTaskPayloadRequest", ONLY_2025_11, "request", "tasks/result"),),
    ),
    Case(
        "cancel-task-params",
        CancelTaskParams(task_id="task-1"),
        (Target("CancelTaskRequest", ONLY_2025_11, "request", "tasks/cancel"),),
    ),
    Case("cancel-task-result", CancelTaskResult(**TASK_FIELDS), (direct("CancelTaskResult"),)),
    Case(
        "list-tasks",
        ListTasksResult(tasks=[TASK, Task(**TASK_FIELDS)], next_cursor="n", meta=META),
        (direct("ListTasksResult"),),
    ),
    Case(
        "task-status-params",
        TaskStatusNotificationParams(**TASK_FIELDS, status_message="stopped"),
        notification("notifications/tasks/status", "TaskStatus"),
    ),
    # the modern era (2026-07-28)
    Case("result-complete", Result(result_type="complete"), (direct("Result", MODERN),)),
    Case(
        "cacheable-result",
        CacheableResult(result_type="complete", ttl_ms=0, cache_scope="private"),
        (direct("CacheableResult", MODERN),),
    ),
    Case(
        "discover-params",
        DiscoverParams(
            meta={
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            }
        ),
        request("server/discover", "Discover", MODERN)[:1],
    ),
    Case(
        "discover-result",
        DiscoverResult(
            result_type="complete",
            supported_versions=["2026-07-28"],
            capabilities=ServerCapabilities(
                tools=ToolsCapability(),
                extensions={"io.modelcontextprotocol/tasks": {}},
            ),
            instructions="Use the tools.",
            ttl_ms=60000,
            cache_scope="public",
            meta={"io.modelcontextprotocol/serverInfo": {"name": "x", "version": "1"}},
        ),
        (direct("DiscoverResult", MODERN),),
    ),
    Case(
        "subscriptions-listen-params",
        SubscriptionsListenParams(
            notifications={"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]},
            meta={
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        ),
        request("subscriptions/listen", "SubscriptionsListen", MODERN),
    ),
    Case(
        "subscriptions-acknowledged-params",
        SubscriptionsAcknowledgedParams(
            notifications={"toolsListChanged": True},
            meta={"io.modelcontextprotocol/subscriptionId": 7},
        ),
        notification(
            "notifications/subscriptions/acknowledged", "SubscriptionsAcknowledged", MODERN
        ),
    ),
    Case(
        "subscriptions-listen-result",
        SubscriptionsListenResult(
            result_type="complete", meta={"io.modelcontextprotocol/subscriptionId": "s-1"}
        ),
        (direct("SubscriptionsListenResult", MODERN),),
    ),
)


def _schema_params() -> list[Any]:
    params = []
    for case in CASES:
        for target in case.targets:
            for rev in target.revs:
                if target.definition in definitions(rev):
                    params.append(
                        pytest.param(case, target, rev, id=f"{case.id}-{target.definition}-{rev}")
                    )
    return params


# --------------------------------------------------------------------------- schema tests


@pytest.mark.parametrize(("case", "target", "rev"), _schema_params())
def test_encoded_instance_validates_against_official_schema(
    case: Case, target: Target, rev: str
) -> None:
    validate(rev, target.definition, target.instance(to_json(case.obj)))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_is_validated_by_some_revision(case: Case) -> None:
    hits = [
        (target.definition, rev)
        for target in case.targets
        for rev in target.revs
        if target.definition in definitions(rev)
    ]
    assert hits, f"{case.id}: no revision defines any of its target definitions"


def test_every_struct_has_a_schema_case() -> None:
    structs = {
        obj
        for _, obj in inspect.getmembers(t, inspect.isclass)
        if issubclass(obj, msgspec.Struct) and obj is not McpStruct
    }
    covered: set[type[Any]] = set()

    def walk(value: Any) -> None:
        if isinstance(value, msgspec.Struct):
            covered.add(type(value))
            for name in value.__struct_fields__:
                walk(getattr(value, name))
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    for case in CASES:
        walk(case.obj)
    assert structs - covered == set()


@pytest.mark.parametrize("rev", REVISIONS)
def test_schema_validation_is_not_vacuous(rev: str) -> None:
    # a Tool without inputSchema and a TextContent without text are invalid in every revision
    with pytest.raises(jsonschema.ValidationError):
        validate(rev, "Tool", {"name": "x"})
    with pytest.raises(jsonschema.ValidationError):
        validate(rev, "TextContent", {"type": "text"})
    with pytest.raises(jsonschema.ValidationError):
        validate(
            rev,
            "CallToolRequest",
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}},
        )


def test_schema_copies_present() -> None:
    for rev in (*REVISIONS, "2026-07-28"):
        schema = load_schema(rev)
        assert schema["$schema"]
        assert definitions(rev)


# --------------------------------------------------------------------------- wire conventions


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round_trip_preserves_equality(case: Case) -> None:
    encoded = msgspec.json.encode(case.obj)
    decoded = msgspec.json.decode(encoded, type=type(case.obj))
    assert decoded == case.obj
    assert msgspec.json.encode(decoded) == encoded


def test_unset_fields_are_omitted() -> None:
    assert to_json(TOOL_MIN) == {"name": "noop", "inputSchema": {"type": "object"}}
    assert to_json(EmptyResult()) == {}
    assert msgspec.json.encode(EmptyParams()) == b"{}"
    assert to_json(PaginatedParams()) == {}
    assert to_json(CallToolParams(name="x")) == {"name": "x"}
    assert to_json(TextContent(text="hi")) == {"type": "text", "text": "hi"}
    assert to_json(ClientCapabilities(roots=RootsCapability())) == {"roots": {}}
    assert to_json(CancelledParams(reason="r")) == {"reason": "r"}
    decoded = msgspec.json.decode(b'{"name":"noop","inputSchema":{}}', type=Tool)
    assert decoded.description is UNSET
    assert decoded.meta is UNSET
    assert decoded.annotations is UNSET


def test_camel_case_and_meta_names_on_the_wire() -> None:
    assert to_json(TEXT_CONTENTS) == {
        "uri": "file:///a.txt",
        "mimeType": "text/plain",
        "text": "hi",
        "_meta": META,
    }
    assert to_json(TOOL_ANN) == {
        "title": "Weather",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert set(to_json(TOOL)) == {
        "name",
        "inputSchema",
        "title",
        "description",
        "outputSchema",
        "annotations",
        "icons",
        "execution",
        "_meta",
    }
    assert set(to_json(CallToolResult(content=[], structured_content={}, is_error=True))) == {
        "content",
        "structuredContent",
        "isError",
    }
    assert to_json(IMPL)["websiteUrl"] == "https://example.com"
    assert set(to_json(TASK)) == {
        "taskId",
        "status",
        "createdAt",
        "lastUpdatedAt",
        "ttl",
        "statusMessage",
        "pollInterval",
    }
    assert to_json(Task(**TASK_FIELDS))["ttl"] is None


def test_unknown_fields_are_ignored() -> None:
    raw = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "futureField": {"nested": [1, 2]},
        "annotations": {"readOnlyHint": True, "someNewHint": 3},
        "icons": [{"src": "https://x/i.png", "unknown": True}],
    }
    tool = msgspec.json.decode(json.dumps(raw), type=Tool)
    assert tool == Tool(
        name="t",
        input_schema={"type": "object"},
        annotations=ToolAnnotations(read_only_hint=True),
        icons=[Icon(src="https://x/i.png")],
    )
    content = msgspec.json.decode(
        b'[{"type":"text","text":"a","extra":1},{"type":"resource_link","uri":"u","name":"n",'
        b'"brandNew":{}}]',
        type=list[ContentBlock],
    )
    assert content == [TextContent(text="a"), ResourceLink(uri="u", name="n")]
    caps = msgspec.json.decode(
        b'{"roots":{"listChanged":true,"x":1},"somethingNew":{}}', type=ClientCapabilities
    )
    assert caps == ClientCapabilities(roots=RootsCapability(list_changed=True))


def test_unknown_content_type_is_rejected() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"type":"hologram"}', type=ContentBlock)


def test_tagged_unions_decode_to_the_right_class() -> None:
    blocks = [TEXT, IMAGE, AUDIO, LINK, EMBEDDED_TEXT]
    decoded = msgspec.json.decode(msgspec.json.encode(blocks), type=list[ContentBlock])
    assert [type(b) for b in decoded] == [
        TextContent,
        ImageContent,
        AudioContent,
        ResourceLink,
        EmbeddedResource,
    ]
    assert decoded == blocks
    sampling = msgspec.json.decode(
        msgspec.json.encode([TEXT, IMAGE, AUDIO, TOOL_USE, TOOL_RESULT]),
        type=list[SamplingContent],
    )
    assert [type(b) for b in sampling] == [
        TextContent,
        ImageContent,
        AudioContent,
        ToolUseContent,
        ToolResultContent,
    ]
    refs = msgspec.json.decode(
        b'[{"type":"ref/prompt","name":"p"},{"type":"ref/resource","uri":"file:///{x}"}]',
        type=list[Reference],
    )
    assert refs == [PromptReference(name="p"), ResourceTemplateReference(uri="file:///{x}")]
    assert t.ResourceReference is ResourceTemplateReference
    # sampling content may be a single block or (2025-11-25) a list
    single = msgspec.json.decode(
        b'{"role":"user","content":{"type":"text","text":"x"}}', type=SamplingMessage
    )
    assert single.content == TextContent(text="x")
    many = msgspec.json.decode(
        b'{"role":"user","content":[{"type":"tool_use","id":"1","name":"n","input":{}}]}',
        type=SamplingMessage,
    )
    assert many.content == [ToolUseContent(id="1", name="n", input={})]


def test_call_tool_arguments_stay_raw() -> None:
    class WeatherArgs(msgspec.Struct):
        location: str
        units: str = "metric"

    params = msgspec.json.decode(
        b'{"name":"get_weather","arguments":{"location":"New York"},"_meta":{"progressToken":3}}',
        type=CallToolParams,
    )
    assert isinstance(params.arguments, msgspec.Raw)
    args = msgspec.json.decode(params.arguments, type=WeatherArgs)
    assert args == WeatherArgs(location="New York")
    assert params.meta == {"progressToken": 3}
    assert to_json(params) == {
        "name": "get_weather",
        "arguments": {"location": "New York"},
        "_meta": {"progressToken": 3},
    }


def test_protocol_types_do_no_io_and_do_not_import_trio() -> None:
    # Checked statically: importing the module at runtime goes through the mcp_actors
    # package, whose __init__ legitimately imports the trio runtime.
    assert t.__file__ is not None
    modules = sorted(Path(t.__file__).parent.glob("*.py"))
    assert len(modules) > 1  # the package and its modules, one per concern
    imported: set[str] = set()
    for module in modules:
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module is not None
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.ImportFrom):  # only its own modules
                assert node.level == 1 and (node.module or "") in {m.stem for m in modules}
    assert imported <= {"typing", "msgspec"}, imported


def test_the_types_package_exports_every_type_of_its_modules() -> None:
    """``t.X`` reaches every type, whichever module of the package defines it."""
    assert t.__file__ is not None
    for module in Path(t.__file__).parent.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                assert node.name in t.__all__, (module.name, node.name)
                assert getattr(t, node.name).__name__ == node.name


# --------------------------------------------------------------------------- spec examples
# JSON copied from the specification prose (docs/specification/2025-03-26 and 2024-11-05).


def params_of(message: str) -> bytes:
    return msgspec.json.encode(json.loads(message)["params"])


def result_of(message: str) -> bytes:
    return msgspec.json.encode(json.loads(message)["result"])


def test_example_initialize() -> None:
    req = """{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {"roots": {"listChanged": true}, "sampling": {}},
        "clientInfo": {"name": "ExampleClient", "version": "1.0.0"}}}"""
    params = msgspec.json.decode(params_of(req), type=InitializeParams)
    assert params.protocol_version == "2024-11-05"
    assert params.capabilities.roots == RootsCapability(list_changed=True)
    assert params.capabilities.sampling == {}
    assert params.capabilities.elicitation is UNSET
    assert params.client_info == Implementation(name="ExampleClient", version="1.0.0")

    resp = """{"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2024-11-05",
        "capabilities": {"logging": {}, "prompts": {"listChanged": true},
                         "resources": {"subscribe": true, "listChanged": true},
                         "tools": {"listChanged": true}},
        "serverInfo": {"name": "ExampleServer", "version": "1.0.0"}}}"""
    result = msgspec.json.decode(result_of(resp), type=InitializeResult)
    assert result.capabilities == ServerCapabilities(
        logging={},
        prompts=PromptsCapability(list_changed=True),
        resources=ResourcesCapability(subscribe=True, list_changed=True),
        tools=ToolsCapability(list_changed=True),
    )
    assert result.server_info.name == "ExampleServer"
    assert result.instructions is UNSET
    for rev in REVISIONS:
        validate(rev, "InitializeResult", to_json(result))


def test_example_tools() -> None:
    resp = """{"jsonrpc": "2.0", "id": 1, "result": {"tools": [{
        "name": "get_weather",
        "description": "Get current weather information for a location",
        "inputSchema": {"type": "object",
            "properties": {"location": {"type": "string", "description": "City name or zip code"}},
            "required": ["location"]}}],
        "nextCursor": "next-page-cursor"}}"""
    result = msgspec.json.decode(result_of(resp), type=ListToolsResult)
    assert result.next_cursor == "next-page-cursor"
    (tool,) = result.tools
    assert tool.name == "get_weather"
    assert tool.input_schema["required"] == ["location"]
    assert tool.output_schema is UNSET

    call = """{"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text",
        "text": "Failed to fetch weather data: API rate limit exceeded"}], "isError": true}}"""
    call_result = msgspec.json.decode(result_of(call), type=CallToolResult)
    assert call_result.is_error is True
    assert call_result.content == [
        TextContent(text="Failed to fetch weather data: API rate limit exceeded")
    ]
    assert call_result.structured_content is UNSET

    embedded = """{"type": "resource", "resource": {"uri": "resource://example",
        "mimeType": "text/plain", "text": "Resource content"}}"""
    block = msgspec.json.decode(embedded, type=ContentBlock)
    assert isinstance(block, EmbeddedResource)
    assert block.resource.mime_type == "text/plain"
    assert block.resource.text == "Resource content"
    assert block.resource.blob is UNSET
    image = msgspec.json.decode(
        '{"type": "image", "data": "base64-encoded-data", "mimeType": "image/png"}',
        type=ContentBlock,
    )
    assert image == ImageContent(data="base64-encoded-data", mime_type="image/png")
    audio = msgspec.json.decode(
        '{"type": "audio", "data": "base64-encoded-audio-data", "mimeType": "audio/wav"}',
        type=ContentBlock,
    )
    assert audio == AudioContent(data="base64-encoded-audio-data", mime_type="audio/wav")


def test_example_resources() -> None:
    listing = """{"jsonrpc": "2.0", "id": 1, "result": {"resources": [{
        "uri": "file:///project/src/main.rs", "name": "main.rs",
        "description": "Primary application entry point", "mimeType": "text/x-rust"}],
        "nextCursor": "next-page-cursor"}}"""
    result = msgspec.json.decode(result_of(listing), type=ListResourcesResult)
    assert result.resources == [
        Resource(
            uri="file:///project/src/main.rs",
            name="main.rs",
            description="Primary application entry point",
            mime_type="text/x-rust",
        )
    ]
    read = """{"jsonrpc": "2.0", "id": 2, "result": {"contents": [
        {"uri": "file:///project/src/main.rs", "mimeType": "text/x-rust",
         "text": "fn main() {\\n    println!(\\"Hello world!\\");\\n}"},
        {"uri": "file:///example.png", "mimeType": "image/png", "blob": "base64-encoded-data"}]}}"""
    contents = msgspec.json.decode(result_of(read), type=ReadResourceResult).contents
    assert contents[0].text is not UNSET and contents[0].text.startswith("fn main()")
    assert contents[1].blob == "base64-encoded-data"
    assert contents[1].text is UNSET
    templates = """{"jsonrpc": "2.0", "id": 3, "result": {"resourceTemplates": [{
        "uriTemplate": "file:///{path}", "name": "Project Files",
        "description": "Access files in the project directory",
        "mimeType": "application/octet-stream"}]}}"""
    (template,) = msgspec.json.decode(
        result_of(templates), type=ListResourceTemplatesResult
    ).resource_templates
    assert template.uri_template == "file:///{path}"
    assert template.mime_type == "application/octet-stream"
    updated = """{"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "file:///project/src/main.rs"}}"""
    assert msgspec.json.decode(params_of(updated), type=ResourceUpdatedParams) == (
        ResourceUpdatedParams(uri="file:///project/src/main.rs")
    )
    subscribe = """{"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
        "params": {"uri": "file:///project/src/main.rs"}}"""
    assert msgspec.json.decode(params_of(subscribe), type=SubscribeParams).uri == (
        "file:///project/src/main.rs"
    )


def test_example_prompts() -> None:
    listing = """{"jsonrpc": "2.0", "id": 1, "result": {"prompts": [{"name": "code_review",
        "description": "Asks the LLM to analyze code quality and suggest improvements",
        "arguments": [{"name": "code", "description": "The code to review", "required": true}]}],
        "nextCursor": "next-page-cursor"}}"""
    (prompt,) = msgspec.json.decode(result_of(listing), type=ListPromptsResult).prompts
    assert prompt.arguments == [
        PromptArgument(name="code", description="The code to review", required=True)
    ]
    get = """{"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {
        "name": "code_review", "arguments": {"code": "def hello():\\n    print('world')"}}}"""
    params = msgspec.json.decode(params_of(get), type=GetPromptParams)
    assert params.arguments == {"code": "def hello():\n    print('world')"}
    result = """{"jsonrpc": "2.0", "id": 2, "result": {"description": "Code review prompt",
        "messages": [{"role": "user", "content": {"type": "text",
        "text": "Please review this Python code:\\ndef hello():\\n    print('world')"}}]}}"""
    decoded = msgspec.json.decode(result_of(result), type=GetPromptResult)
    assert decoded.description == "Code review prompt"
    (message,) = decoded.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent)


def test_example_sampling() -> None:
    req = """{"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text",
                      "text": "What is the capital of France?"}}],
        "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}],
                             "intelligencePriority": 0.8, "speedPriority": 0.5},
        "systemPrompt": "You are a helpful assistant.", "maxTokens": 100}}"""
    params = msgspec.json.decode(params_of(req), type=CreateMessageParams)
    assert params.max_tokens == 100
    assert params.system_prompt == "You are a helpful assistant."
    assert params.model_preferences == ModelPreferences(
        hints=[ModelHint(name="claude-3-sonnet")], intelligence_priority=0.8, speed_priority=0.5
    )
    assert params.messages == [
        SamplingMessage(role="user", content=TextContent(text="What is the capital of France?"))
    ]
    assert params.tools is UNSET
    resp = """{"jsonrpc": "2.0", "id": 1, "result": {"role": "assistant",
        "content": {"type": "text", "text": "The capital of France is Paris."},
        "model": "claude-3-sonnet-20240307", "stopReason": "endTurn"}}"""
    result = msgspec.json.decode(result_of(resp), type=CreateMessageResult)
    assert result.stop_reason == "endTurn"
    assert result.model == "claude-3-sonnet-20240307"
    assert result.content == TextContent(text="The capital of France is Paris.")


def test_example_roots_completion_logging_progress_cancel_ping() -> None:
    roots = """{"jsonrpc": "2.0", "id": 1, "result": {"roots": [
        {"uri": "file:///home/user/projects/myproject", "name": "My Project"}]}}"""
    assert msgspec.json.decode(result_of(roots), type=ListRootsResult).roots == [
        Root(uri="file:///home/user/projects/myproject", name="My Project")
    ]
    complete = """{"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": {
        "ref": {"type": "ref/prompt", "name": "code_review"},
        "argument": {"name": "language", "value": "py"}}}"""
    cparams = msgspec.json.decode(params_of(complete), type=CompleteParams)
    assert cparams.ref == PromptReference(name="code_review")
    assert cparams.argument == CompletionArgument(name="language", value="py")
    cresult = """{"jsonrpc": "2.0", "id": 1, "result": {"completion": {
        "values": ["python", "pytorch", "pyside"], "total": 10, "hasMore": true}}}"""
    assert msgspec.json.decode(result_of(cresult), type=CompleteResult).completion == (
        Completion(values=["python", "pytorch", "pyside"], total=10, has_more=True)
    )
    set_level = (
        '{"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}}'
    )
    assert msgspec.json.decode(params_of(set_level), type=SetLevelParams).level == "info"
    log = """{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "error",
        "logger": "database", "data": {"error": "Connection failed",
        "details": {"host": "localhost", "port": 5432}}}}"""
    lparams = msgspec.json.decode(params_of(log), type=LoggingMessageParams)
    assert lparams.logger == "database"
    assert lparams.data["details"]["port"] == 5432
    progress = """{"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": "abc123", "progress": 50, "total": 100,
        "message": "Reticulating splines..."}}"""
    pparams = msgspec.json.decode(params_of(progress), type=ProgressParams)
    assert pparams == ProgressParams(
        progress_token="abc123", progress=50.0, total=100.0, message="Reticulating splines..."
    )
    some_request = """{"jsonrpc": "2.0", "id": 1, "method": "some_method",
        "params": {"_meta": {"progressToken": "abc123"}}}"""
    assert msgspec.json.decode(params_of(some_request), type=EmptyParams).meta == {
        "progressToken": "abc123"
    }
    cancel = """{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
        "requestId": "123", "reason": "User requested cancellation"}}"""
    assert msgspec.json.decode(params_of(cancel), type=CancelledParams) == CancelledParams(
        request_id="123", reason="User requested cancellation"
    )
    ping = '{"jsonrpc": "2.0", "id": "123", "result": {}}'
    assert msgspec.json.decode(result_of(ping), type=EmptyResult) == EmptyResult()


def test_example_2025_11_25_objects() -> None:
    # shapes from the 2025-11-25 schema descriptions (tasks, URL elicitation, tool use)
    task = msgspec.json.decode(
        b'{"taskId":"786512e2","status":"working","statusMessage":"running",'
        b'"createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z",'
        b'"ttl":60000,"pollInterval":5000,"_meta":{"k":1}}',
        type=GetTaskResult,
    )
    assert isinstance(task, Task)
    assert (task.task_id, task.status, task.ttl, task.poll_interval) == (
        "786512e2",
        "working",
        60000,
        5000,
    )
    assert task.meta == {"k": 1}
    elicit = msgspec.json.decode(
        b'{"mode":"url","message":"Sign in","url":"https://x.example/a","elicitationId":"e1"}',
        type=ElicitParams,
    )
    assert (elicit.mode, elicit.elicitation_id, elicit.requested_schema) == ("url", "e1", UNSET)
    result = msgspec.json.decode(
        b'{"role":"assistant","model":"m","stopReason":"toolUse","content":['
        b'{"type":"tool_use","id":"c1","name":"get_weather","input":{"city":"Paris"}}]}',
        type=CreateMessageResult,
    )
    assert result.content == [ToolUseContent(id="c1", name="get_weather", input={"city": "Paris"})]
    icon_impl = msgspec.json.decode(
        b'{"name":"s","version":"1","websiteUrl":"https://e.x",'
        b'"icons":[{"src":"https://e.x/i.svg","mimeType":"image/svg+xml","sizes":["any"],'
        b'"theme":"light"}]}',
        type=Implementation,
    )
    assert icon_impl.website_url == "https://e.x"
    assert icon_impl.icons == [
        Icon(src="https://e.x/i.svg", mime_type="image/svg+xml", sizes=["any"], theme="light")
    ]
