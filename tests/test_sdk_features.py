"""Every feature against the official Python SDK (``mcp`` 2.x), in both directions, over stdio.

- the SDK's client against our feature server (``tests/servers/features.py`` run by
  ``mcp-actors run``): resources, templates, pagination, subscriptions, prompts,
  completion, logging, and our server asking the SDK client for sampling,
  elicitation and roots;
- our client against an SDK server (``tests/peers/sdk_features_server.py``): the same
  features with the roles swapped.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import mcp_types as sdk
import pytest
import trio
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.client.session import ClientRequestContext

from mcp_actors import ClientHandlers, StdioTarget, open_client, types

from conftest import TESTS

FEATURES = "servers.features:server"
SDK_SERVER = TESTS / "peers" / "sdk_features_server.py"

# The SDK deprecates sampling, roots, logging and resources/subscribe for 2026-07-28.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def our_server() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_actors.cli", "run", FEATURES], cwd=str(TESTS)
    )


async def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(0.01)


# -- the SDK client against our server ---------------------------------------------------


async def test_sdk_client_uses_our_resources_prompts_completion_and_logging() -> None:
    notifications: list[Any] = []
    logs: list[sdk.LoggingMessageNotificationParams] = []

    async def on_message(message: Any) -> None:
        notifications.append(message)

    async def on_log(params: sdk.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with SdkClient(
        our_server(), mode="legacy", message_handler=on_message, logging_callback=on_log
    ) as client:
        capabilities = client.server_capabilities
        assert capabilities.resources is not None and capabilities.resources.subscribe
        assert capabilities.prompts is not None and capabilities.completions is not None

        # resources, following our cursors by hand
        first = await client.list_resources()
        assert first.next_cursor is not None and len(first.resources) == 2
        second = await client.list_resources(cursor=first.next_cursor)
        uris = [str(r.uri) for r in first.resources + second.resources]
        assert uris == ["config://app", "data://logo.png", "counter://value", "multi://both"]
        assert first.resources[0].title == "App configuration" and first.resources[0].size == 12
        templates = await client.list_resource_templates()
        assert templates.resource_templates[0].uri_template == "users://{user_id}/profile"
        profile = await client.read_resource("users://1/profile")
        assert isinstance(profile.contents[0], sdk.TextResourceContents)
        assert json.loads(profile.contents[0].text) == {"id": 1, "name": "ada"}
        logo = await client.read_resource("data://logo.png")
        assert isinstance(logo.contents[0], sdk.BlobResourceContents)
        assert base64.b64decode(logo.contents[0].blob).startswith(b"\x89PNG")

        # subscriptions
        await client.subscribe_resource("counter://value")
        await client.call_tool("bump")
        await wait_until(lambda: notifications)
        update = notifications[0]
        assert isinstance(update, sdk.ResourceUpdatedNotification)
        assert str(update.params.uri) == "counter://value" and update.params.meta is not None
        await client.unsubscribe_resource("counter://value")

        # prompts
        prompts = await client.list_prompts()
        assert [p.name for p in prompts.prompts] == ["greet", "review"]
        review = await client.get_prompt("review", {"code": "x = 1", "lines": "3"})
        assert review.messages[0].content.text.startswith("Review this python code")  # type: ignore[union-attr]
        media = await client.get_prompt("media")
        assert [m.content.type for m in media.messages] == [
            "text",
            "image",
            "audio",
            "resource",
            "resource_link",
        ]

        # completion, with the 2025-06-18 context
        names = await client.complete(
            sdk.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "a"}
        )
        assert names.completion.values == ["ada", "alan"]
        repos = await client.complete(
            sdk.ResourceTemplateReference(type="ref/resource", uri="repos://{owner}/{repo}"),
            {"name": "repo", "value": ""},
            {"owner": "python"},
        )
        assert repos.completion.values == ["cpython", "mypy", "typeshed"]

        # logging through our Python logging bridge, at the level the SDK set
        await client.set_logging_level("warning")
        await client.call_tool("python_logging", {"message": "quiet", "level": "info"})
        await client.call_tool("python_logging", {"message": "loud", "level": "error"})
        await wait_until(lambda: logs)
        await client.send_ping()
        assert [(m.level, m.data, m.logger) for m in logs] == [("error", "loud", "features")]


async def test_sdk_client_answers_our_sampling_elicitation_and_roots() -> None:
    async def sampling(
        context: ClientRequestContext, params: sdk.CreateMessageRequestParams
    ) -> sdk.CreateMessageResult:
        question = params.messages[0].content
        assert isinstance(question, sdk.TextContent)
        return sdk.CreateMessageResult(
            role="assistant",
            content=sdk.TextContent(type="text", text=f"{question.text}!"),
            model="sdk-model",
        )

    async def elicitation(
        context: ClientRequestContext, params: sdk.ElicitRequestParams
    ) -> sdk.ElicitResult:
        assert isinstance(params, sdk.ElicitRequestFormParams)
        assert params.requested_schema["required"] == ["name", "email"]
        return sdk.ElicitResult(action="accept", content={"name": "Ada", "email": "a@b.co"})

    async def roots(context: ClientRequestContext) -> sdk.ListRootsResult:
        return sdk.ListRootsResult(roots=[sdk.Root(uri="file:///sdk", name="sdk")])  # type: ignore[arg-type]

    async with SdkClient(
        our_server(),
        mode="legacy",
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
    ) as client:
        sampled = await client.call_tool("ask_model", {"question": "Why"})
        assert sampled.content[0].text == "sdk-model: Why!"  # type: ignore[union-attr]
        asked = await client.call_tool("ask_user")
        assert asked.structured_content == {
            "action": "accept",
            "content": {"name": "Ada", "email": "a@b.co", "subscribe": False},
        }
        listed = await client.call_tool("roots")
        assert listed.structured_content == {"result": ["file:///sdk"]}
        before = (await client.call_tool("roots_changes")).structured_content
        await client.send_roots_list_changed()
        with trio.fail_after(5):
            while (await client.call_tool("roots_changes")).structured_content == before:
                await trio.sleep(0.02)


# -- our client against the SDK's server -------------------------------------------------


def sdk_server() -> StdioTarget:
    return StdioTarget(sys.executable, (str(SDK_SERVER),))


async def test_our_client_uses_sdk_resources_prompts_completion_and_logging() -> None:
    logs: list[types.LoggingMessageParams] = []
    async with open_client(
        sdk_server(), handlers=ClientHandlers(on_log=logs.append), era="legacy"
    ) as client:
        assert client.server_info.name == "sdk-features"
        assert [r.uri for r in await client.list_resources()] == ["config://app", "data://logo.png"]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates] == ["users://{user_id}/profile"]
        profile = await client.read_resource("users://2/profile")
        assert json.loads(profile.contents[0].text) == {"id": "2", "name": "grace"}  # type: ignore[arg-type]
        logo = await client.read_resource("data://logo.png")
        assert base64.b64decode(logo.contents[0].blob) == b"\x89PNG fake"  # type: ignore[arg-type]

        async with client.subscribe("config://app") as updates:
            touched = await client.call_tool("touch", {"uri": "config://app"})
            assert touched.structured_content == {"result": 1}
            with trio.fail_after(5):
                assert (await updates.receive()).uri == "config://app"
        untouched = await client.call_tool("touch", {"uri": "config://app"})
        assert untouched.structured_content == {"result": 0}  # we unsubscribed on exit

        (greet,) = await client.list_prompts()
        assert greet.arguments == [types.PromptArgument(name="name", required=True)]
        rendered = await client.get_prompt("greet", {"name": "Ada"})
        assert rendered.messages[0].content == types.TextContent(text="Hello, Ada!")
        names = await client.complete(types.PromptReference(name="greet"), "name", "a")
        assert names.values == ["ada", "alan"]
        ids = await client.complete(
            types.ResourceTemplateReference(uri="users://{user_id}/profile"), "user_id", ""
        )
        assert ids.values == ["1", "2"]

        await client.set_logging_level("warning")
        await client.call_tool("log", {"message": "quiet", "level": "info"})
        await client.call_tool("log", {"message": "loud", "level": "error"})
        await wait_until(lambda: logs)
        await client.ping()
        assert [(m.level, m.data, m.logger) for m in logs] == [("error", "loud", "sdk")]


async def test_our_client_answers_sdk_sampling_elicitation_and_roots() -> None:
    forms: list[types.ElicitParams] = []

    async def sampling(params: types.CreateMessageParams) -> types.CreateMessageResult:
        question = params.messages[0].content
        assert isinstance(question, types.TextContent) and params.system_prompt == "Be brief."
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text=question.text.upper()), model="ours"
        )

    def elicitation(params: types.ElicitParams) -> types.ElicitResult:
        forms.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada", "subscribe": True})

    handlers = ClientHandlers(sampling=sampling, elicitation=elicitation, roots=["file:///ours"])
    async with open_client(sdk_server(), handlers=handlers, era="legacy") as client:
        sampled = await client.call_tool("ask_model", {"question": "why"})
        assert sampled.content == [types.TextContent(text="ours: WHY")]
        asked = await client.call_tool("ask_user")
        assert asked.content == [types.TextContent(text="accept Ada 30 True")]
        assert forms[0].requested_schema["required"] == ["name"]  # type: ignore[index]
        listed = await client.call_tool("roots")
        assert listed.structured_content == {"result": ["file:///ours"]}
        await client.set_roots(["file:///a", "file:///b"])
        with trio.fail_after(5):
            while (await client.call_tool("roots_changes")).structured_content != {"result": 1}:
                await trio.sleep(0.02)
        assert (await client.call_tool("roots")).structured_content == {
            "result": ["file:///a", "file:///b"]
        }
