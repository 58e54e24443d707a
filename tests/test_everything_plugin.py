"""The ``everything`` plugin (plugins/everything): every conformance fixture, checked with
our own client, and its realistic tools.

The fixture tables below follow /work/shared/conformance-fixtures.md (the official
``@modelcontextprotocol/conformance`` 0.1.16): the client answers sampling and
elicitation exactly as the suite's harness does, and each result is compared whole
with the reference output. Most tests run in-process (memory transport, every message
validated against the official schema); a few run ``mcp-actors run everything`` as a
user would, over stdio. ``pip install -e plugins/everything`` must have been run
(``.ci/run`` does it).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from typing import Any

import msgspec
import pytest
import trio

from mcp_actors import ClientHandlers, RequestTimeout, types
from mcp_actors.protocol.skills import SKILLS_EXTENSION, SkillResource
from mcp_actors_everything import (
    JSON_SCHEMA_2020_12_INPUT,
    SEP1034_SCHEMA,
    SEP1330_SCHEMA,
    TEST_AUDIO_BASE64,
    TEST_IMAGE_BASE64,
)

from conftest import connect

EVERYTHING = "mcp_actors_everything.server:create"

# -- what the suite's harness answers -------------------------------------------------------

SAMPLING_REPLY = types.CreateMessageResult(
    role="assistant",
    content=types.TextContent(text="This is a test response from the client"),
    model="test-model",
    stop_reason="endTurn",
)
ELICITATION_REPLIES: dict[str, dict[str, Any]] = {
    "Please provide your information": {"username": "testuser", "email": "test@example.com"},
    "Please review and update the form fields with defaults": {
        "name": "Jane Smith",
        "age": 25,
        "score": 88,
        "status": "inactive",
        "verified": False,
    },
    "Please select options from the enum fields": {
        "untitledSingle": "option1",
        "titledSingle": "value1",
        "legacyEnum": "opt1",
        "untitledMulti": ["option1", "option2"],
        "titledMulti": ["value1", "value2"],
    },
    "What is your name?": {"name": "Ada"},
}


class Harness:
    """Client handlers that answer like the conformance harness, and remember what came."""

    def __init__(self) -> None:
        self.sampling: list[types.CreateMessageParams] = []
        self.elicitations: list[types.ElicitParams] = []
        self.logs: list[types.LoggingMessageParams] = []

    def sample(self, params: types.CreateMessageParams) -> types.CreateMessageResult:
        self.sampling.append(params)
        return SAMPLING_REPLY

    def elicit(self, params: types.ElicitParams) -> types.ElicitResult:
        self.elicitations.append(params)
        return types.ElicitResult(action="accept", content=ELICITATION_REPLIES[params.message])

    def handlers(self) -> ClientHandlers:
        return ClientHandlers(
            sampling=self.sample, elicitation=self.elicit, on_log=self.logs.append
        )


def wire(value: Any) -> Any:
    """What ``value`` looks like on the wire (camelCase keys, unset fields left out)."""
    return json.loads(msgspec.json.encode(value))


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


# -- tools ---------------------------------------------------------------------------------

#: (tool, arguments, the whole result on the wire). ``None`` arguments: no ``arguments`` key.
TOOL_FIXTURES: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = [
    ("test_simple_text", None, text_result("This is a simple text response for testing.")),
    (
        "test_image_content",
        {},
        {"content": [{"type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png"}]},
    ),
    (
        "test_audio_content",
        {},
        {"content": [{"type": "audio", "data": TEST_AUDIO_BASE64, "mimeType": "audio/wav"}]},
    ),
    (
        "test_embedded_resource",
        {},
        {
            "content": [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://embedded-resource",
                        "mimeType": "text/plain",
                        "text": "This is an embedded resource content.",
                    },
                }
            ]
        },
    ),
    (
        "test_multiple_content_types",
        {},
        {
            "content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": '{"test":"data","value":123}',
                    },
                },
            ]
        },
    ),
    (
        "test_error_handling",
        {},
        {
            "isError": True,
            "content": [
                {"type": "text", "text": "This tool intentionally returns an error for testing"}
            ],
        },
    ),
    (
        "test_sampling",
        {"prompt": "Test prompt for sampling"},
        text_result("LLM response: This is a test response from the client"),
    ),
    (
        "test_elicitation",
        {"message": "Please provide your information"},
        text_result(
            'User response: action=accept, content={"username":"testuser",'
            '"email":"test@example.com"}'
        ),
    ),
    (
        "test_elicitation_sep1034_defaults",
        {},
        text_result(
            'Elicitation completed: action=accept, content={"name":"Jane Smith","age":25,'
            '"score":88,"status":"inactive","verified":false}'
        ),
    ),
    (
        "test_elicitation_sep1330_enums",
        {},
        text_result(
            'Elicitation completed: action=accept, content={"untitledSingle":"option1",'
            '"titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],'
            '"titledMulti":["value1","value2"]}'
        ),
    ),
    (
        "test_reconnection",
        {},
        text_result(
            "Reconnection test completed successfully. If you received this, the client"
            " properly reconnected after stream closure."
        ),
    ),
    (
        "test_tool_with_logging",
        {},
        text_result("Tool with logging executed successfully"),
    ),
    # the 2026-07-28 scenarios' fixtures, in a legacy session (tests/test_modern_server.py
    # has them in the modern era)
    ("test_missing_capability", {}, text_result("This is a test response from the client")),
    ("test_logging_tool", {}, text_result("Logging tool executed")),
    ("test_streaming_elicitation", {}, text_result("Hello, Ada!")),
    ("test_header_echo", {"region": "=?base64?SGVsbG8="}, text_result("=?base64?SGVsbG8=")),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), TOOL_FIXTURES, ids=lambda v: str(v))
async def test_tool_fixture(tool: str, arguments: dict[str, Any] | None, expected: Any) -> None:
    harness = Harness()
    async with connect("memory", EVERYTHING, handlers=harness.handlers()) as client:
        result = await client.call_tool(tool, arguments)
    assert wire(result) == expected


async def test_tools_list_names_descriptions_and_object_schemas() -> None:
    async with connect("memory", EVERYTHING) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    fixtures = {name for name, _, _ in TOOL_FIXTURES}
    assert fixtures | {"test_tool_with_progress", "json_schema_2020_12_tool"} <= set(tools)
    for tool in tools.values():
        assert tool.description, tool.name
        assert tool.input_schema.get("type") == "object", tool.name
        if tool.output_schema is not msgspec.UNSET:
            assert tool.output_schema.get("type") == "object", tool.name
    assert tools["test_sampling"].input_schema["required"] == ["prompt"]
    assert tools["test_elicitation"].input_schema["required"] == ["message"]


async def test_json_schema_2020_12_tool_is_listed_with_that_exact_schema() -> None:
    async with connect("memory", EVERYTHING) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        tool = tools["json_schema_2020_12_tool"]
        result = await client.call_tool(
            "json_schema_2020_12_tool", {"name": "Ada", "address": {"city": "London"}}
        )
    assert wire(tool)["inputSchema"] == JSON_SCHEMA_2020_12_INPUT
    assert tool.description == (
        "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"
    )
    assert json.loads(wire(result)["content"][0]["text"]) == {
        "name": "Ada",
        "address": {"street": None, "city": "London"},
    }


async def test_progress_reports_three_steps_and_echoes_the_token() -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with connect("memory", EVERYTHING) as client:
        result = await client.call_tool("test_tool_with_progress", {}, on_progress=on_progress)
    assert reports == [
        (0, 100, "Completed step 0 of 100"),
        (50, 100, "Completed step 50 of 100"),
        (100, 100, "Completed step 100 of 100"),
    ]
    token = wire(result)["content"][0]["text"]
    assert token.isdigit()  # our client's progress token is the request id


async def test_logging_tool_sends_three_messages_at_the_session_level() -> None:
    harness = Harness()
    async with connect("memory", EVERYTHING, handlers=harness.handlers()) as client:
        await client.set_logging_level("debug")
        await client.call_tool("test_tool_with_logging", {})
        with trio.fail_after(5):
            while len(harness.logs) < 3:
                await trio.sleep(0.01)
        await client.set_logging_level("warning")  # info messages are now filtered out
        await client.call_tool("test_tool_with_logging", {})
    assert [(log.level, log.data) for log in harness.logs] == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]


async def test_sampling_request_is_what_the_suite_validates() -> None:
    harness = Harness()
    async with connect("memory", EVERYTHING, handlers=harness.handlers()) as client:
        await client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
    (request,) = harness.sampling
    assert wire(request) == {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}
        ],
        "maxTokens": 100,
    }


@pytest.mark.parametrize(
    ("tool", "arguments", "schema"),
    [
        ("test_elicitation_sep1034_defaults", {}, SEP1034_SCHEMA),
        ("test_elicitation_sep1330_enums", {}, SEP1330_SCHEMA),
        ("test_elicitation", {"message": "Please provide your information"}, None),
    ],
)
async def test_elicitation_requests_carry_the_checked_schema(
    tool: str, arguments: dict[str, Any], schema: dict[str, Any] | None
) -> None:
    harness = Harness()
    async with connect("memory", EVERYTHING, handlers=harness.handlers()) as client:
        await client.call_tool(tool, arguments)
    (request,) = harness.elicitations
    requested = request.requested_schema
    assert isinstance(requested, dict)
    if schema is not None:
        assert requested == schema
    properties = requested["properties"]
    if tool == "test_elicitation_sep1034_defaults":
        # the five checks of elicitation-sep1034-defaults
        assert (properties["name"]["type"], properties["name"]["default"]) == ("string", "John Doe")
        assert (properties["age"]["type"], properties["age"]["default"]) == ("integer", 30)
        assert (properties["score"]["type"], properties["score"]["default"]) == ("number", 95.5)
        status = properties["status"]
        assert status["type"] == "string" and status["default"] == "active"
        assert status["enum"] == ["active", "inactive", "pending"]
        assert properties["verified"]["type"] == "boolean"
        assert properties["verified"]["default"] is True
    elif tool == "test_elicitation_sep1330_enums":
        # the five checks of elicitation-sep1330-enums
        single = properties["untitledSingle"]
        assert single["type"] == "string" and isinstance(single["enum"], list)
        assert "oneOf" not in single and "enumNames" not in single
        titled = properties["titledSingle"]
        assert titled["type"] == "string" and "enum" not in titled
        assert all(
            isinstance(o["const"], str) and isinstance(o["title"], str) for o in titled["oneOf"]
        )
        legacy = properties["legacyEnum"]
        assert legacy["type"] == "string" and len(legacy["enumNames"]) == len(legacy["enum"])
        multi = properties["untitledMulti"]
        assert multi["type"] == "array" and multi["items"]["type"] == "string"
        assert isinstance(multi["items"]["enum"], list) and "anyOf" not in multi["items"]
        titled_multi = properties["titledMulti"]
        assert titled_multi["type"] == "array" and "enum" not in titled_multi["items"]
        assert all("const" in o and "title" in o for o in titled_multi["items"]["anyOf"])
    else:
        assert request.message == "Please provide your information"
        assert requested["type"] == "object" and requested["required"] == ["username", "email"]


# -- resources -----------------------------------------------------------------------------

#: (URI read, its whole contents on the wire)
RESOURCE_FIXTURES: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "test://static-text",
        [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }
        ],
    ),
    (
        "test://static-binary",
        [{"uri": "test://static-binary", "mimeType": "image/png", "blob": TEST_IMAGE_BASE64}],
    ),
    (
        "test://template/123/data",
        [
            {
                "uri": "test://template/123/data",
                "mimeType": "application/json",
                "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
            }
        ],
    ),
    (
        "test://watched-resource",
        [
            {
                "uri": "test://watched-resource",
                "mimeType": "text/plain",
                "text": "Watched resource content",
            }
        ],
    ),
]


@pytest.mark.parametrize(("uri", "contents"), RESOURCE_FIXTURES, ids=lambda v: str(v)[:30])
async def test_resource_fixture(uri: str, contents: list[dict[str, Any]]) -> None:
    async with connect("memory", EVERYTHING) as client:
        result = await client.read_resource(uri)
    assert wire(result) == {"contents": contents}


async def test_resources_and_template_are_listed_with_uri_and_name() -> None:
    async with connect("memory", EVERYTHING) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
    assert {(r.uri, r.name) for r in resources if r.uri.startswith("test://")} == {
        ("test://static-text", "static-text"),
        ("test://static-binary", "static-binary"),
        ("test://watched-resource", "watched-resource"),
    }
    skill_files = [r.uri for r in resources if r.uri.startswith("skill://")]
    assert len(skill_files) == 9  # the skills fixtures: see test_everything_serves_the_skills
    assert len(resources) == 3 + len(skill_files)
    assert [t.uri_template for t in templates] == ["test://template/{id}/data"]


async def test_watched_resource_subscribe_update_unsubscribe() -> None:
    async with connect("memory", EVERYTHING) as client:
        subscribed = await client.request(
            "resources/subscribe", types.SubscribeParams(uri="test://watched-resource")
        )
        assert wire(subscribed) == {}
        await client.request(
            "resources/unsubscribe", types.UnsubscribeParams(uri="test://watched-resource")
        )
        async with client.subscribe("test://watched-resource") as updates:
            await client.call_tool("update_watched_resource", {"text": "changed"})
            with trio.fail_after(5):
                update = await updates.receive()
        assert update.uri == "test://watched-resource"
        read = await client.read_resource("test://watched-resource")
    assert wire(read)["contents"][0]["text"] == "changed"


# -- prompts, completion, capabilities, utilities ------------------------------------------

#: (prompt, arguments, its messages on the wire)
PROMPT_FIXTURES: list[tuple[str, dict[str, str] | None, list[dict[str, Any]]]] = [
    (
        "test_simple_prompt",
        None,
        [
            {
                "role": "user",
                "content": {"type": "text", "text": "This is a simple prompt for testing."},
            }
        ],
    ),
    (
        "test_prompt_with_arguments",
        {"arg1": "testValue1", "arg2": "testValue2"},
        [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'",
                },
            }
        ],
    ),
    (
        "test_prompt_with_embedded_resource",
        {"resourceUri": "test://example-resource"},
        [
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {
                        "uri": "test://example-resource",
                        "mimeType": "text/plain",
                        "text": "Embedded resource content for testing.",
                    },
                },
            },
            {
                "role": "user",
                "content": {"type": "text", "text": "Please process the embedded resource above."},
            },
        ],
    ),
    (
        "test_prompt_with_image",
        None,
        [
            {
                "role": "user",
                "content": {"type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png"},
            },
            {
                "role": "user",
                "content": {"type": "text", "text": "Please analyze the image above."},
            },
        ],
    ),
]


@pytest.mark.parametrize(
    ("prompt", "arguments", "messages"), PROMPT_FIXTURES, ids=lambda v: str(v)[:40]
)
async def test_prompt_fixture(
    prompt: str, arguments: dict[str, str] | None, messages: list[dict[str, Any]]
) -> None:
    async with connect("memory", EVERYTHING) as client:
        result = await client.get_prompt(prompt, arguments)
    assert wire(result)["messages"] == messages


async def test_prompts_are_listed_with_descriptions_and_arguments() -> None:
    async with connect("memory", EVERYTHING) as client:
        prompts = {prompt.name: wire(prompt) for prompt in await client.list_prompts()}
    # (test_input_required_result_prompt asks the user first: tests/test_mrtr.py)
    assert set(prompts) == {name for name, _, _ in PROMPT_FIXTURES} | {
        "test_input_required_result_prompt"
    }
    assert all(prompt["description"] for prompt in prompts.values())
    assert prompts["test_prompt_with_arguments"]["arguments"] == [
        {"name": "arg1", "description": "First test argument", "required": True},
        {"name": "arg2", "description": "Second test argument", "required": True},
    ]


async def test_completion_answers_with_a_list_of_values() -> None:
    async with connect("memory", EVERYTHING) as client:
        completion = await client.complete(
            types.PromptReference(name="test_prompt_with_arguments"), "arg1", "test"
        )
        template = await client.complete(
            types.ResourceTemplateReference(uri="test://template/{id}/data"), "id", "1"
        )
    assert isinstance(completion.values, list)
    assert completion.values == ["testValue1", "test-value"]
    assert template.values == ["123"]


async def test_capabilities_ping_and_set_level_answer_empty_objects() -> None:
    async with connect("memory", EVERYTHING) as client:
        capabilities = wire(client.server_capabilities)
        assert wire(await client.request("ping")) == {}
        assert (
            wire(await client.request("logging/setLevel", types.SetLevelParams(level="info"))) == {}
        )
    assert capabilities == {
        "logging": {},
        "completions": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": True},
        # its task fixtures
        "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        # extensions are negotiated in the legacy era too (in initialize)
        "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": True}},
    }


# -- realistic tools -----------------------------------------------------------------------


async def test_slow_job_reports_progress_per_step() -> None:
    reports: list[float] = []

    async with connect("memory", EVERYTHING) as client:
        result = await client.call_tool(
            "slow_job",
            {"steps": 3, "step_seconds": 0.01},
            on_progress=lambda progress, total, message: reports.append(progress),
        )
        refused = await client.call_tool("slow_job", {"steps": 1000, "step_seconds": 10})
    assert wire(result)["content"][0]["text"].startswith("completed 3 steps in ")
    assert reports == [1, 2, 3]
    assert "refused: at most 600 seconds" in wire(refused)["content"][0]["text"]


async def test_a_cancelled_job_releases_its_lease_and_says_so() -> None:
    async with connect("memory", EVERYTHING) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("cancellable_job", {"job": "j1", "seconds": 60}, timeout=0.2)
        with trio.fail_after(5):
            while (
                status := await client.call_tool("job_status", {"job": "j1"})
            ).structured_content["state"] == "running":
                await trio.sleep(0.01)
        done = await client.call_tool("cancellable_job", {"job": "j2", "seconds": 0.05})
        finished = await client.call_tool("job_status", {"job": "j2"})
    assert status.structured_content == {"job": "j1", "state": "cancelled", "leases_held": 0}
    assert wire(done)["content"][0]["text"] == "j2 completed after 0.05s"
    assert finished.structured_content == {"job": "j2", "state": "completed", "leases_held": 0}


async def test_benchmark_contract_tools() -> None:
    """``mcp-actors bench``'s tools: add, echo, and the cancellation probe's record."""
    async with connect("memory", EVERYTHING) as client:
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
        assert wire(await client.call_tool("echo", {"text": "hi"})) == text_result("hi")
        before = await client.call_tool("last_cancellation", {"token": "t1"})
        assert before.structured_content == {"token": "t1", "observed": None}
        with pytest.raises(RequestTimeout):
            await client.call_tool(
                "cancellation_probe",
                {"token": "t1", "seconds": 30},
                timeout=0.2,
                on_progress=lambda *progress: None,
            )
        with trio.fail_after(5):
            while (
                after := await client.call_tool("last_cancellation", {"token": "t1"})
            ).structured_content["observed"] is None:
                await trio.sleep(0.01)
    assert math.isfinite(after.structured_content["observed"])


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("cancellation_probe", {"token": "t", "seconds": -1}),
        ("slow_job", {"steps": 1, "step_seconds": -1}),
        ("cancellable_job", {"seconds": -1}),
    ],
)
async def test_negative_durations_are_invalid_arguments(tool: str, arguments: Any) -> None:
    """Refused before the tool runs (not a ValueError from ``trio.sleep`` inside it)."""
    async with connect("memory", EVERYTHING) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    message = result.content[0]
    assert isinstance(message, types.TextContent)
    assert message.text.startswith(f"Invalid arguments for tool {tool!r}"), message.text


# -- as a user runs it ---------------------------------------------------------------------


async def test_served_over_stdio_by_plugin_name() -> None:
    """``mcp-actors run everything``: the fixtures over a real process and pipe."""
    harness = Harness()
    async with connect("stdio", "everything", handlers=harness.handlers()) as client:
        assert client.server_info.name == "mcp-actors-everything"
        simple = await client.call_tool("test_simple_text")
        sampled = await client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
        audio = await client.call_tool("test_audio_content", {})
        text = await client.read_resource("test://static-text")
    assert wire(simple) == text_result("This is a simple text response for testing.")
    assert wire(sampled) == text_result("LLM response: This is a test response from the client")
    assert wire(audio)["content"][0]["mimeType"] == "audio/wav"
    assert wire(text)["contents"][0]["text"] == "This is the content of the static text resource."


async def test_list_finds_both_plugins_with_their_versions() -> None:
    with trio.fail_after(60):
        result = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "list"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    lines = {line.split()[0]: line for line in result.stdout.decode().splitlines() if line}
    assert "everything" in lines and "filesystem" in lines, (
        "pip install -e plugins/everything -e plugins/filesystem (see .ci/run)"
    )
    assert "(mcp-actors-everything 0.1.0)" in lines["everything"]
    assert "test_simple_text" in lines["everything"] and "BROKEN" not in lines["everything"]
    assert "(mcp-actors-filesystem 0.1.0)" in lines["filesystem"]
    assert "read_file" in lines["filesystem"] and "write_file" not in lines["filesystem"]


async def test_settings_come_from_the_environment() -> None:
    env = {"MCP_ACTORS_EVERYTHING_MAX_JOB_SECONDS": "1"}
    async with connect("stdio", "everything", env=env) as client:
        refused = await client.call_tool("cancellable_job", {"seconds": 5})
    assert wire(refused)["content"][0]["text"] == ("refused: at most 1 seconds (max_job_seconds)")


def test_settings_errors_are_reported_by_run() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", "run", "everything"],
        env={**os.environ, "MCP_ACTORS_EVERYTHING_STEP_DELAY": "soon"},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert b"bad settings for plugin 'everything'" in result.stderr


async def test_everything_serves_the_skills_fixtures() -> None:
    async with connect("memory", EVERYTHING) as client:
        assert client.server_extension(SKILLS_EXTENSION) == {"directoryRead": True}
        skills = await client.list_skills()
        assert [skill.frontmatter["name"] for skill in skills] == [
            "refunds",
            "git-workflow",
            "pdf-processing",
        ]
        pdf = await client.get_skill("skill://pdf-processing/SKILL.md")
        assert len(pdf.resources) == 6
        for resource in pdf.resources:
            assert isinstance(resource, SkillResource)
            await client.read_skill_file(pdf, resource.uri)  # verified against the entry
        regional = await client.read_directory("skill://pdf-processing/templates/regional")
        assert [child.uri for child in regional] == [
            "skill://pdf-processing/templates/regional/eu-invoice.md"
        ]
