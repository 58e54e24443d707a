"""The public API, pinned (as trio's ``test_exports.py`` does): which modules are public,
the exact ``__all__`` of each, and that every name in it resolves.

A change to a public module's ``__all__`` fails here until :data:`PUBLIC` says the
same: adding or removing a public name is a decision, made in this file too. The
modules not listed are internal (``mcp_actors.__doc__`` says so, and names these).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import mcp_actors

#: Each public module and its ``__all__`` (names separated by blanks, sorted).
PUBLIC: dict[str, str] = {
    "mcp_actors": """
        CacheHint Client ClientHandlers ConnectionClosed Context ElicitationContentError
        ElicitationResult LATEST Listing MODERN McpError McpLogHandler MessageStream
        MrtrSettings Outgoing ProtocolViolation RequestTimeout SUPPORTED Server ServerSession
        SessionConfig StdioTarget Supervisor ToolError TransportClosed UrlTarget __version__
        content memory_pair open_client open_supervisor run_stdio serve_stdio types
    """,
    "mcp_actors.aio": "AsyncClient Endpoint Updates open_client serve",
    "mcp_actors.sync": "Endpoint PendingCall SyncClient SyncUpdates open_client serve",
    "mcp_actors.testing": "CheckedConnection open_checked_client",
    "mcp_actors.plugins": "GROUP InstalledPlugin Plugin PluginError installed",
    "mcp_actors.gateway": "Upstream UpstreamUnavailable proxy",
    "mcp_actors.middleware": """
        Call CallNext MethodTiming Middleware NotifyNext RateLimit Timing ToolAllowList
    """,
    "mcp_actors.auth.server": """
        Backoff DevKeyError DevKeyVerifier DevelopmentOnly HttpAnswer HttpAuthHook
        IntrospectionVerifier InvalidToken JwksCache JwksStatistics JwtVerifier Principal
        ResourceServer TokenVerifier dev_resource_server
    """,
    "mcp_actors.auth.client": """
        Authorization AuthorizationCodeGrant AuthorizationFailed AuthorizationNotCompleted
        ClientCredentialsGrant ClientRegistration DPoPKey FileTokenStore Grant HeadlessUserAgent
        IdJagGrant JwtBearerGrant MemoryTokenStore OAuthClient OAuthErrorResponse PrivateKeyJwt
        RegisteredClient TokenRequests TokenStore Tokens UserAgent
    """,
    "mcp_actors.auth.client.loopback": "LoopbackUserAgent",
    "mcp_actors.server.tasks": "TaskSettings TaskStatistics start_task",
    "mcp_actors.server.apps": """
        APP_MIME_TYPE Permission UI_EXTENSION UiCsp Visibility add_ui_resource
        client_renders_apps ui_resource_meta ui_tool_meta
    """,
    "mcp_actors.server.content": """
        assistant audio blob_contents embedded image link text text_contents user
    """,
    "mcp_actors.protocol.types": """
        Annotations AudioContent CacheScope CacheableResult CallToolParams CallToolResult
        CancelTaskParams CancelTaskResult CancelledParams ClientCapabilities CompleteParams
        CompleteResult Completion CompletionArgument CompletionContext ContentBlock
        CreateMessageParams CreateMessageResult CreateTaskResult CreatedTask Cursor DetailedTask
        DiscoverParams DiscoverResult ElicitParams ElicitResult ElicitationCompleteParams
        EmbeddedResource EmptyParams EmptyResult GetPromptParams GetPromptResult GetTaskParams
        GetTaskPayloadParams GetTaskResult Icon ImageContent Implementation IncludeContext
        InitializeParams InitializeResult InputRequest InputRequiredResult ListPromptsResult
        ListResourceTemplatesResult ListResourcesResult ListRootsResult ListTasksResult
        ListToolsResult LoggingLevel LoggingMessageParams McpStruct ModelHint ModelPreferences
        PaginatedParams ProgressParams ProgressToken Prompt PromptArgument PromptMessage
        PromptReference PromptsCapability ReadResourceParams ReadResourceResult Reference
        RelatedTaskMetadata RequestId Resource ResourceContents ResourceLink ResourceReference
        ResourceTemplate ResourceTemplateReference ResourceUpdatedParams ResourcesCapability
        Result Role Root RootsCapability SamplingContent SamplingMessage ServerCapabilities
        SetLevelParams SubscribeParams SubscriptionsAcknowledgedParams SubscriptionsListenParams
        SubscriptionsListenResult TASKS_EXTENSION Task TaskIdParams TaskMetadata TaskStatus
        TaskStatusNotificationParams TextContent Tool ToolAnnotations ToolChoice
        ToolResultContent ToolUseContent ToolsCapability UNSET UnsetType UnsubscribeParams
        UpdateTaskParams
    """,
    "mcp_actors.protocol.errors": """
        ConnectionClosed HEADER_MISMATCH INTERNAL_ERROR INVALID_PARAMS INVALID_REQUEST
        METHOD_NOT_FOUND MISSING_CLIENT_CAPABILITY McpError PARSE_ERROR ProtocolViolation
        REQUEST_REJECTED
        RESOURCE_NOT_FOUND UNSUPPORTED_PROTOCOL_VERSION URL_ELICITATION_REQUIRED header_mismatch
        invalid_params invalid_request method_not_found missing_client_capability
        unsupported_protocol_version
    """,
    "mcp_actors.server.skills": "SkillError SkillLibrary serve_skills",
    "mcp_actors.server.signature": "ToolSignature inspect_tool",
    "mcp_actors.server.tools": "RegisteredTool error_result",
}

#: What ``mcp_actors`` exports lazily (imported on first use; not in ``__all__``, so a
#: star import does not pull in the network stack).
LAZY = {
    "HttpConfig",
    "open_sse_client",
    "open_streamable_http",
    "open_websocket_client",
    "run_http",
    "run_websocket",
    "serve_http",
    "serve_websocket",
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_the_public_names_of_each_public_module_are_pinned(name: str) -> None:
    module = importlib.import_module(name)
    assert len(module.__all__) == len(set(module.__all__)), "a name listed twice"
    assert sorted(module.__all__) == PUBLIC[name].split()


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    missing = [public for public in module.__all__ if not hasattr(module, public)]
    assert missing == []
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    assert set(module.__all__) <= set(namespace)


def test_the_lazy_names_are_listed_and_resolve() -> None:
    assert set(dir(mcp_actors)) == set(mcp_actors.__all__) | LAZY
    for name in sorted(LAZY):
        assert getattr(mcp_actors, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        mcp_actors.nonesuch  # noqa: B018


def test_importing_the_package_imports_no_network_front_end() -> None:
    """The lazy names are lazy: ``import mcp_actors`` loads neither hypercorn nor httpx."""
    code = "import sys, mcp_actors; print(sorted({'hypercorn', 'httpx'} & set(sys.modules)))"
    answer = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert answer.stdout.strip() == "[]"


def test_the_package_docstring_names_every_public_module() -> None:
    """What is public is said where a reader looks first; everything else is internal."""
    doc = mcp_actors.__doc__ or ""
    assert "internal" in doc
    for name in PUBLIC:
        assert name == "mcp_actors" or f":mod:`{name}`" in doc, name
