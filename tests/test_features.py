"""Every server and client feature, through the public API, over every transport.

The server is ``tests/servers/features.py`` (``page_size=2``, so every list is
paginated). ``connect`` validates every message either side wrote against the
official schema of the negotiated revision.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
import trio
from msgspec import UNSET

from mcp_actors import ClientHandlers, McpError, types
from mcp_actors.protocol import errors

from conftest import connect
from servers.features import CONTACT_FORM

FEATURES = "servers.features:server"
PNG = b"\x89PNG\r\n\x1a\n fake image bytes"


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(0.01)


def structured(result: types.CallToolResult) -> Any:
    assert result.is_error is not True, result.content
    return result.structured_content


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


# -- capabilities -----------------------------------------------------------------------


@pytest.mark.needs("sessions")  # stateless: see test_stateless_http.py
async def test_server_declares_what_is_registered(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        capabilities = client.server_capabilities
    assert capabilities.resources == types.ResourcesCapability(subscribe=True, list_changed=True)
    assert capabilities.prompts == types.PromptsCapability(list_changed=True)
    assert capabilities.tools == types.ToolsCapability(list_changed=True)
    assert capabilities.completions == {}
    assert capabilities.logging == {}


async def test_2024_11_05_gets_no_completions_capability(transport: str) -> None:
    async with connect(transport, FEATURES, protocol_version="2024-11-05") as client:
        assert client.server_capabilities.completions is UNSET
        completion = await client.complete(types.PromptReference(name="greet"), "name", "a")
        assert completion.values == ["ada", "alan"]


@pytest.mark.needs("sessions")
async def test_client_declares_what_its_handlers_imply(transport: str) -> None:
    handlers = ClientHandlers(
        sampling=lambda params: None,  # type: ignore[arg-type,return-value]
        sampling_tools=True,
        elicitation=lambda params: None,  # type: ignore[arg-type,return-value]
        elicitation_modes=("form", "url"),
        roots=["file:///work"],
    )
    async with connect(transport, FEATURES, handlers=handlers) as client:
        declared = structured(await client.call_tool("client_capabilities"))
    assert declared == {
        "sampling": {"tools": {}},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": True},
    }


@pytest.mark.needs("sessions")
async def test_explicit_capabilities_take_precedence(transport: str) -> None:
    explicit = types.ClientCapabilities(experimental={"x": {}}, sampling={"context": {}})
    handlers = ClientHandlers(sampling=lambda params: None)  # type: ignore[arg-type,return-value]
    async with connect(transport, FEATURES, handlers=handlers, capabilities=explicit) as client:
        declared = structured(await client.call_tool("client_capabilities"))
    assert declared == {"experimental": {"x": {}}, "sampling": {"context": {}}}


# -- resources ---------------------------------------------------------------------------


async def test_list_resources_follows_cursors(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        resources = {resource.uri: resource for resource in await client.list_resources()}
        first_page = await client.request("resources/list", types.PaginatedParams())
    assert list(resources) == ["config://app", "data://logo.png", "counter://value", "multi://both"]
    assert len(first_page.resources) == 2 and first_page.next_cursor
    config = resources["config://app"]
    assert config.name == "config"
    assert config.title == "App configuration"
    assert config.description == "The application's configuration."
    assert config.mime_type == "text/plain"
    assert config.size == 12
    assert config.annotations == types.Annotations(audience=["user"], priority=0.5)
    assert config.icons == [
        types.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"])
    ]


async def test_list_resource_templates(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        templates = await client.list_resource_templates()
    assert [template.uri_template for template in templates] == [
        "users://{user_id}/profile",
        "files://{+path}",
        "repos://{owner}/{repo}",
    ]
    profile = templates[0]
    assert (profile.name, profile.title, profile.mime_type) == (
        "user_profile",
        "User profile",
        "application/json",
    )
    assert profile.description == "A user's profile, by numeric id."


async def test_read_text_binary_json_and_several_contents(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        config = await client.read_resource("config://app")
        logo = await client.read_resource("data://logo.png")
        both = await client.read_resource("multi://both")
    assert config.contents == [
        types.ResourceContents(uri="config://app", mime_type="text/plain", text="debug = true")
    ]
    (blob,) = logo.contents
    assert blob.mime_type == "image/png" and blob.text is UNSET
    assert isinstance(blob.blob, str) and base64.b64decode(blob.blob) == PNG
    assert [(c.uri, c.text, c.blob) for c in both.contents] == [
        ("multi://both#a", "first", UNSET),
        ("multi://both#b", UNSET, "AAEC"),
    ]


@pytest.mark.needs("sessions")  # the template reads the client's name
async def test_read_templates_decode_their_variables(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        profile = await client.read_resource("users://2/profile")
        deep = await client.read_resource("files://src/pkg/mod%20ule.py")
    assert profile.contents[0].mime_type == "application/json"
    assert json.loads(profile.contents[0].text) == {"id": 2, "name": "grace"}  # type: ignore[arg-type]
    assert deep.contents[0].text in (
        "contents of src/pkg/mod ule.py for mcp-actors",
        "contents of src/pkg/mod ule.py for ?",  # stateless HTTP: no client info
    )


async def test_read_errors(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        with pytest.raises(McpError) as unknown:
            await client.read_resource("nowhere://x")
        with pytest.raises(McpError) as not_an_int:
            await client.read_resource("users://abc/profile")
        with pytest.raises(McpError) as raised:
            await client.read_resource("users://99/profile")
    assert unknown.value.code == errors.RESOURCE_NOT_FOUND == -32002
    assert unknown.value.data == {"uri": "nowhere://x"}
    assert not_an_int.value.code == errors.INVALID_PARAMS
    assert "user_id" in not_an_int.value.message
    assert raised.value.code == -32002 and raised.value.data == {"uri": "users://99/profile"}


@pytest.mark.parametrize("method", ["resources/list", "resources/templates/list", "prompts/list"])
async def test_invalid_cursor_is_invalid_params(transport: str, method: str) -> None:
    async with connect(transport, FEATURES) as client:
        with pytest.raises(McpError) as invalid:
            await client.request(method, types.PaginatedParams(cursor="not-ours"))
    assert invalid.value.code == errors.INVALID_PARAMS


@pytest.mark.needs("sessions")
async def test_subscribe_delivers_updates_until_the_block_exits(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        async with client.subscribe("counter://value") as updates:
            value = structured(await client.call_tool("bump"))["result"]
            with trio.fail_after(5):
                update = await updates.receive()
            assert update.uri == "counter://value"
            assert update.meta == {"seq": value}
            read = await client.read_resource(update.uri)
            assert json.loads(read.contents[0].text) == {"value": value}  # type: ignore[arg-type]
        # Unsubscribed: bumping again sends nothing (a stray update would be a protocol
        # message the wire check sees; the next request's answer proves ordering).
        await client.call_tool("bump")
        await client.ping()


@pytest.mark.needs("sessions")
async def test_a_slow_subscriber_gets_the_latest_update(transport: str) -> None:
    seen: list[int] = []
    async with (
        connect(transport, FEATURES) as client,
        client.subscribe("counter://value") as updates,
    ):
        last = structured(await client.call_tool("bump", {"times": 50}))["result"]
        with trio.fail_after(5):
            while not seen or seen[-1] != last:
                seen.append((await updates.receive()).meta["seq"])  # type: ignore[index]
    assert seen == sorted(seen) and len(seen) <= 50


@pytest.mark.needs("sessions")
async def test_two_blocks_share_one_server_subscription(transport: str) -> None:
    async with connect(transport, FEATURES) as client, client.subscribe("counter://value") as first:
        async with client.subscribe("counter://value") as second:
            await client.call_tool("bump")
            with trio.fail_after(5):
                a, b = await first.receive(), await second.receive()
            assert a == b
        await client.call_tool("bump")  # the first block still holds the subscription
        with trio.fail_after(5):
            assert (await first.receive()).uri == "counter://value"


@pytest.mark.needs("sessions")
async def test_subscribe_to_an_unknown_uri_is_refused(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        with pytest.raises(McpError) as refused:
            async with client.subscribe("nowhere://x"):
                pass  # pragma: no cover
        assert refused.value.code == -32002
        # Nothing was left behind: a later subscription works normally.
        async with client.subscribe("counter://value") as updates:
            await client.call_tool("bump")
            with trio.fail_after(5):
                await updates.receive()


@pytest.mark.needs("sessions")
async def test_resource_list_changes_are_announced(transport: str) -> None:
    announced: list[str] = []
    handlers = ClientHandlers(on_list_changed=announced.append)
    async with connect(transport, FEATURES, handlers=handlers) as client:
        await client.call_tool("toggle_note", {"name": "n1", "present": True})
        try:
            await wait_until(lambda: len(announced) >= 1)
            assert "note://n1" in {r.uri for r in await client.list_resources()}
            assert (await client.read_resource("note://n1")).contents[0].text == "note n1"
        finally:
            await client.call_tool("toggle_note", {"name": "n1", "present": False})
        await wait_until(lambda: len(announced) >= 2)
        assert "note://n1" not in {r.uri for r in await client.list_resources()}
    assert announced == ["notifications/resources/list_changed"] * 2


# -- prompts -----------------------------------------------------------------------------


async def test_list_prompts_describes_arguments(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        prompts = {prompt.name: prompt for prompt in await client.list_prompts()}
    assert list(prompts) == ["greet", "review", "media", "full", "spell"]
    assert prompts["greet"].description == "Greet someone."
    assert prompts["greet"].arguments == [
        types.PromptArgument(name="name", description="Who to greet.", required=True)
    ]
    review = prompts["review"]
    assert review.title == "Code review"
    assert review.icons and review.icons[0].src == "https://example.com/icon.png"
    assert review.arguments == [
        types.PromptArgument(name="code", description="The code to review", required=True),
        types.PromptArgument(name="language", required=False),
        types.PromptArgument(name="tone", required=False),
        types.PromptArgument(name="lines", required=False),
    ]
    assert prompts["full"].description == "Explicit description"
    assert prompts["media"].arguments is UNSET


async def test_get_prompt_renders_messages(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        greet = await client.get_prompt("greet", {"name": "Ada"})
        review = await client.get_prompt(
            "review", {"code": "x = 1", "language": "rust", "tone": "strict", "lines": 3}
        )
        full = await client.get_prompt("full")
    assert greet.description == "Greet someone."
    assert greet.messages == [
        types.PromptMessage(role="user", content=types.TextContent(text="Hello, Ada!"))
    ]
    assert [(m.role, m.content) for m in review.messages] == [
        ("user", types.TextContent(text="Review this rust code (strict, 3 lines max):\nx = 1")),
        ("assistant", types.TextContent(text="Sure, let me look.")),
    ]
    assert full.description == "Explicit description" and full.meta == {"source": "features"}


async def test_prompt_messages_carry_every_content_kind(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        media = await client.get_prompt("media")
    kinds = [(m.role, type(m.content).__name__) for m in media.messages]
    assert kinds == [
        ("user", "TextContent"),
        ("user", "ImageContent"),
        ("user", "AudioContent"),
        ("user", "EmbeddedResource"),
        ("assistant", "ResourceLink"),
    ]
    image = media.messages[1].content
    assert isinstance(image, types.ImageContent) and base64.b64decode(image.data) == PNG
    resource = media.messages[3].content
    assert isinstance(resource, types.EmbeddedResource)
    assert resource.resource == types.ResourceContents(
        uri="config://app", mime_type="text/plain", text="debug = true"
    )


async def test_old_revisions_are_not_sent_content_they_lack(transport: str) -> None:
    async with connect(transport, FEATURES, protocol_version="2024-11-05") as client:
        with pytest.raises(McpError) as refused:
            await client.get_prompt("media")
        assert "AudioContent" in refused.value.message and "2025-03-26" in refused.value.message
        assert (await client.get_prompt("greet", {"name": "x"})).messages


async def test_get_prompt_errors(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        with pytest.raises(McpError) as missing:
            await client.get_prompt("review", {"language": "go"})
        with pytest.raises(McpError) as bad_value:
            await client.get_prompt("review", {"code": "x", "lines": "many"})
        with pytest.raises(McpError) as bad_choice:
            await client.get_prompt("review", {"code": "x", "language": "cobol"})
        with pytest.raises(McpError) as unknown:
            await client.get_prompt("nope")
    assert missing.value.code == errors.INVALID_PARAMS
    assert "missing required argument 'code'" in missing.value.message
    assert bad_value.value.code == errors.INVALID_PARAMS and "lines" in bad_value.value.message
    assert bad_choice.value.code == errors.INVALID_PARAMS
    assert unknown.value.code == errors.INVALID_PARAMS


@pytest.mark.needs("sessions")
async def test_prompt_list_changes_are_announced(transport: str) -> None:
    announced: list[str] = []
    handlers = ClientHandlers(on_list_changed=announced.append)
    async with connect(transport, FEATURES, handlers=handlers) as client:
        await client.call_tool("toggle_prompt", {"present": True})
        try:
            await wait_until(lambda: len(announced) >= 1)
            assert (await client.get_prompt("extra")).messages[0].content == types.TextContent(
                text="extra"
            )
        finally:
            await client.call_tool("toggle_prompt", {"present": False})
        await wait_until(lambda: len(announced) >= 2)
    assert announced == ["notifications/prompts/list_changed"] * 2


# -- completion --------------------------------------------------------------------------


async def test_complete_prompt_arguments(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        names = await client.complete(types.PromptReference(name="greet"), "name", "a")
        language = await client.complete(types.PromptReference(name="review"), "language", "R")
        tone = await client.complete(types.PromptReference(name="review"), "tone", "")
        nothing = await client.complete(types.PromptReference(name="review"), "code", "x")
    assert names.values == ["ada", "alan"]
    assert language == types.Completion(values=["rust"], total=1, has_more=False)
    assert tone.values == ["friendly", "strict"]
    assert nothing.values == []


async def test_complete_template_variables_with_context(transport: str) -> None:
    repos = types.ResourceTemplateReference(uri="repos://{owner}/{repo}")
    async with connect(transport, FEATURES) as client:
        owners = await client.complete(repos, "owner", "")
        python = await client.complete(repos, "repo", "", context={"owner": "python"})
        rust = await client.complete(repos, "repo", "c", context={"owner": "rust"})
        ids = await client.complete(
            types.ResourceTemplateReference(uri="users://{user_id}/profile"), "user_id", ""
        )
    assert owners.values == ["python", "rust"]
    assert python.values == ["cpython", "mypy", "typeshed"]
    assert rust.values == ["cargo"]
    assert ids.values == ["1", "2", "3"]


async def test_context_is_left_out_before_2025_06_18(transport: str) -> None:
    repos = types.ResourceTemplateReference(uri="repos://{owner}/{repo}")
    async with connect(transport, FEATURES, protocol_version="2025-03-26") as client:
        completion = await client.complete(repos, "repo", "", context={"owner": "python"})
    assert completion.values == []


async def test_completion_is_capped_at_100_values(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        everything = await client.complete(types.PromptReference(name="spell"), "word", "word")
        some = await client.complete(types.PromptReference(name="spell"), "word", "word1")
    assert len(everything.values) == 100
    assert everything.values[0] == "word000"
    assert (everything.total, everything.has_more) == (250, True)
    assert (len(some.values), some.total, some.has_more) == (100, 100, False)


async def test_completion_errors(transport: str) -> None:
    references: list[tuple[types.Reference, str]] = [
        (types.PromptReference(name="nope"), "x"),
        (types.PromptReference(name="greet"), "nope"),
        (types.ResourceTemplateReference(uri="nope://{x}"), "x"),
        (types.ResourceTemplateReference(uri="repos://{owner}/{repo}"), "nope"),
    ]
    async with connect(transport, FEATURES) as client:
        for ref, argument in references:
            with pytest.raises(McpError) as invalid:
                await client.complete(ref, argument, "")
            assert invalid.value.code == errors.INVALID_PARAMS


# -- logging -----------------------------------------------------------------------------


@pytest.mark.needs("sessions")
async def test_python_logging_reaches_the_client_at_its_level(transport: str) -> None:
    received: list[types.LoggingMessageParams] = []
    handlers = ClientHandlers(on_log=received.append)
    async with connect(transport, FEATURES, handlers=handlers) as client:
        await client.set_logging_level("info")
        await client.call_tool("python_logging", {"message": "hidden", "level": "debug"})
        await client.call_tool("python_logging", {"message": "shown", "level": "info"})
        await client.call_tool("python_logging_in_thread", {"message": "from a thread"})
        await client.set_logging_level("error")
        await client.call_tool("python_logging", {"message": "hidden too", "level": "warning"})
        await client.call_tool("python_logging", {"message": "bad", "level": "critical"})
        await wait_until(lambda: len(received) >= 3)
        await client.ping()
    assert [(m.level, m.data, m.logger) for m in received] == [
        ("info", "shown", "features"),
        ("warning", "from a thread", "features"),
        ("critical", "bad", "features"),
    ]


async def test_invalid_log_level_is_invalid_params(transport: str) -> None:
    async with connect(transport, FEATURES, validate=False) as client:  # we send a bad level
        with pytest.raises(McpError) as invalid:
            await client.request("logging/setLevel", {"level": "loud"})
    assert invalid.value.code == errors.INVALID_PARAMS


# -- tool content --------------------------------------------------------------------------


async def test_tool_results_carry_every_content_kind_and_meta(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        rich = await client.call_tool("rich_content")
        listed = await client.call_tool("content_list")
    assert rich.meta == {"trace": "abc"}
    assert [type(block).__name__ for block in rich.content] == [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
    ]
    text, _, audio, link, embedded = rich.content
    assert isinstance(text, types.TextContent) and text.annotations == types.Annotations(
        priority=1.0
    )
    assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
    assert link == types.ResourceLink(
        uri="config://app", name="config", mime_type="text/plain", size=12
    )
    assert isinstance(embedded, types.EmbeddedResource)
    assert base64.b64decode(embedded.resource.blob) == PNG  # type: ignore[arg-type]
    assert [type(block).__name__ for block in listed.content] == ["TextContent", "ResourceLink"]


async def test_resource_links_are_refused_before_2025_06_18(transport: str) -> None:
    async with connect(transport, FEATURES, protocol_version="2025-03-26") as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("content_list")
    assert "ResourceLink" in refused.value.message and "2025-06-18" in refused.value.message


# -- sampling ------------------------------------------------------------------------------


async def sample(params: types.CreateMessageParams) -> types.CreateMessageResult:
    first = params.messages[0].content
    assert isinstance(first, types.TextContent)
    reply = f"{first.text} ({params.max_tokens} tokens, {params.system_prompt})"
    stop = "toolUse" if params.tools is not UNSET else "endTurn"
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=reply), model="echo", stop_reason=stop
    )


@pytest.mark.needs("server_requests")
async def test_sampling(transport: str) -> None:
    handlers = ClientHandlers(sampling=sample)
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = await client.call_tool("ask_model", {"question": "Why?"})
    assert text_of(result) == "echo: Why? (50 tokens, Be brief.)"


@pytest.mark.needs("server_requests")
async def test_sampling_with_tools(transport: str) -> None:
    handlers = ClientHandlers(sampling=sample, sampling_tools=True)
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = await client.call_tool("ask_model_with_tools")
    assert text_of(result) == "toolUse"


@pytest.mark.needs("server_requests")
@pytest.mark.parametrize(
    ("version", "sampling_tools", "reason"),
    [
        ("2025-11-25", False, "'sampling.tools', which the client did not declare"),
        ("2025-06-18", True, "need protocol revision 2025-11-25; this session speaks 2025-06-18"),
    ],
)
async def test_sampling_tools_need_the_revision_and_the_capability(
    transport: str, version: str, sampling_tools: bool, reason: str
) -> None:
    handlers = ClientHandlers(sampling=sample, sampling_tools=sampling_tools)
    async with connect(transport, FEATURES, handlers=handlers, protocol_version=version) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_model_with_tools")
    assert reason in refused.value.message


@pytest.mark.needs("server_requests")  # stateless: see test_stateless_http.py
async def test_sampling_needs_the_client_capability(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_model", {"question": "?"})
    assert "'sampling'" in refused.value.message
    assert "did not declare" in refused.value.message


# -- elicitation ---------------------------------------------------------------------------


def answering(result: types.ElicitResult) -> tuple[ClientHandlers, list[types.ElicitParams]]:
    """Handlers whose elicitation answers ``result``, and the list of requests it saw."""
    seen: list[types.ElicitParams] = []

    def elicitation(params: types.ElicitParams) -> types.ElicitResult:
        seen.append(params)
        return result

    return ClientHandlers(elicitation=elicitation), seen


@pytest.mark.needs("server_requests")
async def test_elicit_a_form_and_fill_its_defaults(transport: str) -> None:
    handlers, seen = answering(
        types.ElicitResult(action="accept", content={"name": "Ada", "email": "ada@example.com"})
    )
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = structured(await client.call_tool("ask_user"))
    assert result == {
        "action": "accept",
        "content": {"name": "Ada", "email": "ada@example.com", "subscribe": False},
    }
    (params,) = seen
    assert params.message == "Your contact details?"
    assert params.requested_schema == CONTACT_FORM


@pytest.mark.needs("server_requests")
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_elicit_declined_or_cancelled(transport: str, action: str) -> None:
    handlers, _ = answering(types.ElicitResult(action=action))  # type: ignore[arg-type]
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = structured(await client.call_tool("ask_user"))
    assert result == {"action": action, "content": None}


@pytest.mark.needs("server_requests")
@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"name": "Ada", "email": "not-an-email"}, "'not-an-email' is not a valid email"),
        ({"name": "Ada"}, "email: required but missing"),
        ({"name": "Ada", "email": "a@b.co", "age": 12}, "less than the minimum 18"),
        ({"name": "", "email": "a@b.co"}, "shorter than 1 characters"),
        ({"name": "Ada", "email": "a@b.co", "extra": True}, "extra: not a property"),
    ],
)
async def test_accepted_content_is_checked_against_the_schema(
    transport: str, content: dict[str, Any], problem: str
) -> None:
    handlers, _ = answering(types.ElicitResult(action="accept", content=content))
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = await client.call_tool("ask_user")
    assert result.is_error is True
    assert problem in text_of(result)


@pytest.mark.needs("server_requests")
async def test_elicit_a_typed_form(transport: str) -> None:
    handlers, seen = answering(
        types.ElicitResult(action="accept", content={"color": "green", "tags": ["a", "c"]})
    )
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = await client.call_tool("ask_preferences")
    assert text_of(result) == "green 5 a,c friendly"
    schema = seen[0].requested_schema
    assert schema == {
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["blue", "green", "red"]},
            "size": {
                "type": "integer",
                "description": "Size 1-10",
                "minimum": 1,
                "maximum": 10,
                "default": 5,
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
                "default": [],
            },
            "tone": {"type": "string", "enum": ["friendly", "strict"], "default": "friendly"},
        },
        "required": ["color"],
    }


@pytest.mark.needs("server_requests")
async def test_elicit_the_2025_11_25_enum_forms(transport: str) -> None:
    content = {"plain": "x", "legacy": "l2", "multi": ["m1", "m3"], "titled_multi": ["b"]}
    handlers, _ = answering(types.ElicitResult(action="accept", content=content))
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = structured(await client.call_tool("ask_enums"))
    assert result["content"] == {**content, "titled": "t1"}


@pytest.mark.needs("server_requests")
@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"plain": "z"}, "plain: 'z' is not one of ['x', 'y']"),
        ({"plain": "x", "titled": "T one"}, "titled: 'T one' is not one of ['t1', 't2']"),
        ({"plain": "x", "multi": []}, "multi: fewer than 1 selected"),
        ({"plain": "x", "multi": ["m1", "m2", "m3"]}, "multi: more than 2 selected"),
        ({"plain": "x", "multi": ["m1", "m1"]}, "multi: a value is selected twice"),
        ({"plain": "x", "titled_multi": "a"}, "titled_multi: expected a list of strings"),
        ({"legacy": "L one"}, "legacy: 'L one' is not one of ['l1', 'l2']; plain: required"),
    ],
)
async def test_accepted_enum_answers_are_checked_against_the_schema(
    transport: str, content: dict[str, Any], problem: str
) -> None:
    handlers, _ = answering(types.ElicitResult(action="accept", content=content))
    async with connect(transport, FEATURES, handlers=handlers) as client:
        result = await client.call_tool("ask_enums")
    assert result.is_error is True
    assert problem in text_of(result)


@pytest.mark.needs("server_requests")
async def test_enum_forms_are_refused_under_2025_06_18(transport: str) -> None:
    handlers, seen = answering(types.ElicitResult(action="cancel"))
    async with connect(
        transport, FEATURES, handlers=handlers, protocol_version="2025-06-18"
    ) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_enums")
    assert "titled enum properties need protocol revision 2025-11-25" in refused.value.message
    assert seen == []


@pytest.mark.needs("server_requests")
async def test_a_nested_form_is_refused_before_sending(transport: str) -> None:
    handlers, seen = answering(types.ElicitResult(action="cancel"))
    async with connect(transport, FEATURES, handlers=handlers) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_nested")
    assert "address: only string, number, integer, boolean and enum" in refused.value.message
    assert seen == []


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_elicitation_does_not_exist_before_2025_06_18(transport: str, version: str) -> None:
    handlers, _ = answering(types.ElicitResult(action="cancel"))
    async with connect(transport, FEATURES, handlers=handlers, protocol_version=version) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_user")
    assert refused.value.message == (
        f"elicitation/create does not exist in protocol revision {version}"
    )


@pytest.mark.needs("server_requests")  # stateless: see test_stateless_http.py
async def test_elicitation_needs_the_client_capability(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_user")
    assert "'elicitation'" in refused.value.message


@pytest.mark.needs("server_requests")
async def test_url_elicitation(transport: str) -> None:
    seen: list[types.ElicitParams] = []
    completed: list[str] = []

    def elicitation(params: types.ElicitParams) -> types.ElicitResult:
        seen.append(params)
        return types.ElicitResult(action="accept")

    handlers = ClientHandlers(
        elicitation=elicitation,
        elicitation_modes=("form", "url"),
        on_elicitation_complete=completed.append,
    )
    async with connect(transport, FEATURES, handlers=handlers) as client:
        assert text_of(await client.call_tool("ask_url")) == "accept login-1"
        await wait_until(lambda: completed == ["login-1"])
    (params,) = seen
    assert (params.mode, params.url, params.elicitation_id) == (
        "url",
        "https://example.com/login",
        "login-1",
    )


@pytest.mark.needs("server_requests")
@pytest.mark.parametrize(
    ("version", "modes", "reason"),
    [
        ("2025-11-25", ("form",), "'elicitation.url', which the client did not declare"),
        ("2025-06-18", ("form", "url"), "needs protocol revision 2025-11-25"),
    ],
)
async def test_url_elicitation_needs_the_revision_and_the_capability(
    transport: str, version: str, modes: tuple[str, ...], reason: str
) -> None:
    handlers = ClientHandlers(
        elicitation=lambda params: types.ElicitResult(action="accept"),
        elicitation_modes=modes,  # type: ignore[arg-type]
    )
    async with connect(transport, FEATURES, handlers=handlers, protocol_version=version) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("ask_url")
    assert reason in refused.value.message


@pytest.mark.needs("server_requests")
async def test_a_slow_elicitation_does_not_block_other_traffic(transport: str) -> None:
    release = trio.Event()
    asked = trio.Event()

    async def elicitation(params: types.ElicitParams) -> types.ElicitResult:
        asked.set()
        await release.wait()
        return types.ElicitResult(action="decline")

    handlers = ClientHandlers(elicitation=elicitation, sampling=sample)
    async with connect(transport, FEATURES, handlers=handlers) as client:
        async with trio.open_nursery() as nursery:
            outcome: list[Any] = []

            async def ask() -> None:
                outcome.append(structured(await client.call_tool("ask_user")))

            nursery.start_soon(ask)
            with trio.fail_after(5):
                await asked.wait()
            # While a human "types", everything else flows: server->client sampling too.
            await client.ping()
            assert text_of(await client.call_tool("ask_model", {"question": "Hi"})).startswith(
                "echo: Hi"
            )
            assert (await client.read_resource("config://app")).contents
            release.set()
        assert outcome == [{"action": "decline", "content": None}]


# -- roots ---------------------------------------------------------------------------------


@pytest.mark.needs("server_requests")
async def test_roots_and_their_changes(transport: str) -> None:
    handlers = ClientHandlers(roots=[types.Root(uri="file:///work", name="work")])
    async with connect(transport, FEATURES, handlers=handlers) as client:
        assert structured(await client.call_tool("roots"))["result"] == ["file:///work"]
        before = structured(await client.call_tool("roots_changes"))["result"]
        await client.set_roots(["file:///a", types.Root(uri="file:///b")])
        assert client.roots == [types.Root(uri="file:///a"), types.Root(uri="file:///b")]

        async def changed() -> bool:
            return bool(structured(await client.call_tool("roots_changes"))["result"] > before)

        with trio.fail_after(5):
            while not await changed():
                await trio.sleep(0.01)
        assert structured(await client.call_tool("roots"))["result"] == ["file:///a", "file:///b"]


@pytest.mark.needs("server_requests")  # stateless: see test_stateless_http.py
async def test_roots_need_the_capability(transport: str) -> None:
    async with connect(transport, FEATURES) as client:
        with pytest.raises(McpError) as refused:
            await client.call_tool("roots")
        assert "'roots'" in refused.value.message
        with pytest.raises(McpError) as local:
            await client.set_roots(["file:///x"])
    assert "roots.list_changed" in local.value.message
