"""The ``everything`` server: each conformance fixture, exactly as the suite checks it.

**Conformance fixtures** (``@modelcontextprotocol/conformance`` 0.1.16, server mode):

- tools ``test_simple_text``, ``test_image_content``, ``test_audio_content``,
  ``test_embedded_resource``, ``test_multiple_content_types``, ``test_tool_with_logging``,
  ``test_error_handling``, ``test_tool_with_progress``, ``test_sampling(prompt)``,
  ``test_elicitation(message)``, ``test_elicitation_sep1034_defaults``,
  ``test_elicitation_sep1330_enums``, ``json_schema_2020_12_tool`` (a hand-written
  JSON Schema 2020-12 ``inputSchema``) and ``test_reconnection``;
- resources ``test://static-text``, ``test://static-binary``, the template
  ``test://template/{id}/data`` and the subscribable ``test://watched-resource``;
- prompts ``test_simple_prompt``, ``test_prompt_with_arguments(arg1, arg2)``,
  ``test_prompt_with_embedded_resource(resourceUri)``, ``test_prompt_with_image``;
- completion of ``test_prompt_with_arguments``'s arguments and of the template's ``id``.

**2026-07-28 fixtures** (alpha ``--requirements 2026-07-28``): ``test_missing_capability``
(needs the client's ``sampling``: -32021 without it), ``test_logging_tool`` (logs, so a
request without ``logLevel`` shows none arrive), ``test_streaming_elicitation`` (asks a
name; in the modern era it asks inside its result, ``input_required``), and
``test_header_echo(region)`` whose ``region`` carries ``x-mcp-header: Region``. Every
fixture is served in both eras; ``test_simple_text`` stays first in ``tools/list``.
``test_trigger_tool_change`` / ``test_trigger_prompt_change`` (last in the list) announce a
tool / prompt list change to ``subscriptions/listen`` streams (and legacy sessions).

**Multi round-trip fixtures** (``input-required-result-*``, listed last): the tools
``test_input_required_result_{elicitation,sampling,list_roots,request_state,
multiple_inputs,multi_round,tampered_state,capabilities}`` and the prompt
``test_input_required_result_prompt``. Each asks the client with the ordinary
``ctx.elicit``/``ctx.sample``/``ctx.list_roots``/``ctx.ask`` and a fixed ``key``: a
request to the client in a legacy session, an ``input_required`` round in the modern era.

**Skills** (the extension ``io.modelcontextprotocol/skills``, scenarios
``sep-2640-skills-*``): the directory ``skills/`` next to this module, served by
:func:`mcp_actors.server.skills.serve_skills` with ``directoryRead``: ``pdf-processing``
(references, templates with a nested ``regional/`` directory, a script),
``acme/billing/refunds`` (a skill under an organizational prefix) and ``git-workflow``.

**Tools a real server has:**

- ``slow_job(steps, step_seconds)``: progress after each step, a log line per step;
- ``cancellable_job(job, seconds)`` and ``job_status(job)``: holds a (simulated)
  lease while it runs and releases it however it ends; a cancelled job is recorded
  as such, so a client can see that cancellation was clean;
- ``update_watched_resource(text)``: changes ``test://watched-resource`` and tells
  its subscribers (``notifications/resources/updated``);
- the ``mcp-actors bench`` contract (see :mod:`mcp_actors.bench.runner`): ``add(a, b)``,
  ``echo(text)``, ``cancellation_probe(token, seconds)`` and ``last_cancellation(token)``.

Each :func:`create` call builds a fresh server with its own state.
"""

from __future__ import annotations

import base64
import json
import time
from collections import OrderedDict
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import attrs
import msgspec
import trio

from mcp_actors import (
    Context,
    ElicitationContentError,
    McpError,
    RequestTimeout,
    Server,
    types,
)
from mcp_actors.server.content import audio, embedded, image, text, user
from mcp_actors.server.signature import inspect_tool
from mcp_actors.server.skills import serve_skills
from mcp_actors.server.tasks import start_task
from mcp_actors.server.tools import RegisteredTool, error_result

#: A 1x1 red PNG, and a minimal WAV: the conformance suite's reference constants.
TEST_IMAGE_BASE64: Final = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
TEST_AUDIO_BASE64: Final = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

#: The skills the server serves (the Skills extension's fixtures).
SKILLS_DIRECTORY: Final = Path(__file__).parent / "skills"

SEP1034_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


def _options(prefix: str, *titles: str) -> list[dict[str, str]]:
    return [{"const": f"{prefix}{n}", "title": title} for n, title in enumerate(titles, 1)]


SEP1330_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": _options("value", "First Option", "Second Option", "Third Option"),
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {"anyOf": _options("value", "First Choice", "Second Choice", "Third Choice")},
        },
    },
    "required": [],
}

USER_INFO_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

NAME_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}

#: The suite's ``JSON_SCHEMA_2020_12_FIXTURE`` (SEP-1613, SEP-2106): served byte for byte as
#: written — ``$ref``, ``$defs``, ``$anchor``, composition and conditional keywords kept.
JSON_SCHEMA_2020_12_INPUT: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {
        "properties": {"contactMethod": {"const": "phone"}},
        "required": ["contactMethod"],
    },
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

INSTRUCTIONS: Final = (
    "Test and demonstration server: every fixture of the MCP conformance suite"
    " (tools test_*, resources test://..., prompts test_*), plus slow_job (progress),"
    " cancellable_job / job_status (clean cancellation), update_watched_resource"
    " (subscriptions) and the benchmark tools add, echo, cancellation_probe and"
    " last_cancellation."
)

#: Most entries kept in the per-server job and cancellation tables (oldest dropped first).
_MAX_RECORDS: Final = 1000
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)


@attrs.frozen
class Settings:
    """Settings of the ``everything`` plugin."""

    #: Seconds between the steps of the logging and progress fixtures.
    step_delay: float = 0.05
    #: Longest ``slow_job`` / ``cancellable_job`` / ``cancellation_probe`` accepted, in seconds.
    max_job_seconds: float = 600.0


class Address(msgspec.Struct):
    """``json_schema_2020_12_tool``'s ``address`` (``#/$defs/address``)."""

    street: str | None = None
    city: str | None = None


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _remember(table: OrderedDict[str, Any], key: str, value: Any) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > _MAX_RECORDS:
        table.popitem(last=False)


def create(settings: Settings | None = None) -> Server:
    """Build a fresh ``everything`` server."""
    settings = settings or Settings()
    server = Server("mcp-actors-everything", "0.1.0", instructions=INSTRUCTIONS)
    _fixture_tools(server, settings)
    _elicitation_tools(server)
    _fixture_resources(server)
    _fixture_prompts(server)
    _job_tools(server, settings)
    _bench_tools(server, settings)
    _input_required_fixtures(server)
    _listen_triggers(server)
    _task_tools(server, settings)
    serve_skills(server, SKILLS_DIRECTORY)
    return server


# -- conformance: tools -----------------------------------------------------------------


def _fixture_tools(server: Server, settings: Settings) -> None:
    delay = settings.step_delay

    @server.tool(annotations=_READ_ONLY)
    async def test_simple_text() -> str:
        """Tests simple text content response."""
        return "This is a simple text response for testing."

    @server.tool(annotations=_READ_ONLY)
    async def test_image_content() -> types.ImageContent:
        """Tests image content response (a 1x1 PNG)."""
        return image(TEST_IMAGE_BASE64, "image/png")

    @server.tool(annotations=_READ_ONLY)
    async def test_audio_content() -> types.AudioContent:
        """Tests audio content response (a minimal WAV)."""
        return audio(TEST_AUDIO_BASE64, "audio/wav")

    @server.tool(annotations=_READ_ONLY)
    async def test_embedded_resource() -> types.EmbeddedResource:
        """Tests embedded resource content response."""
        return embedded(
            "test://embedded-resource", "This is an embedded resource content.", "text/plain"
        )

    @server.tool(annotations=_READ_ONLY)
    async def test_multiple_content_types() -> list[types.ContentBlock]:
        """Tests response with multiple content types (text, image, resource)."""
        return [
            text("Multiple content types test:"),
            image(TEST_IMAGE_BASE64, "image/png"),
            embedded(
                "test://mixed-content-resource",
                _compact({"test": "data", "value": 123}),
                "application/json",
            ),
        ]

    @server.tool(annotations=_READ_ONLY)
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution."""
        await ctx.info("Tool execution started")
        await trio.sleep(delay)
        await ctx.info("Tool processing data")
        await trio.sleep(delay)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool(annotations=_READ_ONLY)
    async def test_error_handling() -> types.CallToolResult:
        """Tests error response handling (always returns an isError result)."""
        return types.CallToolResult(
            content=[text("This tool intentionally returns an error for testing")],
            is_error=True,
        )

    @server.tool(annotations=_READ_ONLY)
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications; returns the progress token."""
        for step in (0, 50, 100):
            if step:
                await trio.sleep(delay)
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        token = ctx.progress_token
        return str(token) if token is not None else "no progress token"

    @server.tool
    async def test_sampling(ctx: Context, prompt: str) -> str:
        """Tests server-initiated sampling (LLM completion request to the client).

        Args:
            prompt: The prompt to send to the client's model.
        """
        try:
            result = await ctx.sample(prompt, max_tokens=100)
        except (McpError, RequestTimeout) as error:
            return f"Sampling not supported or error: {error}"
        blocks = result.content if isinstance(result.content, list) else [result.content]
        answer = " ".join(b.text for b in blocks if isinstance(b, types.TextContent))
        return f"LLM response: {answer}"

    @server.tool(annotations=_READ_ONLY)
    async def test_reconnection() -> str:
        """Tests SSE stream reconnection (a result that survives a dropped response stream)."""
        await trio.sleep(delay)
        return (
            "Reconnection test completed successfully. If you received this, the client"
            " properly reconnected after stream closure."
        )

    async def json_schema_2020_12_tool(
        name: str | None = None,
        address: Address | None = None,
        contactMethod: Literal["phone", "email"] | None = None,  # the wire name
        phone: str | None = None,
        email: str | None = None,
    ) -> str:
        """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)."""
        given = {
            "name": name,
            "address": msgspec.to_builtins(address),
            "contactMethod": contactMethod,
            "phone": phone,
            "email": email,
        }
        return _compact({key: value for key, value in given.items() if value is not None})

    signature = inspect_tool(json_schema_2020_12_tool, Context)
    definition = types.Tool(
        name="json_schema_2020_12_tool",
        description=("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"),
        input_schema=JSON_SCHEMA_2020_12_INPUT,
        annotations=_READ_ONLY,
    )
    server.add_tool(RegisteredTool(definition, json_schema_2020_12_tool, signature))
    _modern_fixture_tools(server, settings)


def _modern_fixture_tools(server: Server, settings: Settings) -> None:
    """Fixtures of the suite's 2026-07-28 scenarios (``server-stateless``, the header ones)."""
    delay = settings.step_delay

    @server.tool
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's sampling capability: asks its model one question.

        A modern request that does not declare ``sampling`` gets -32021 with
        ``requiredCapabilities: {"sampling": {}}`` and the question is never asked.
        """
        result = await ctx.sample("Say hello.", max_tokens=20)
        blocks = result.content if isinstance(result.content, list) else [result.content]
        return " ".join(b.text for b in blocks if isinstance(b, types.TextContent))

    @server.tool(annotations=_READ_ONLY)
    async def test_logging_tool(ctx: Context) -> str:
        """Logs two lines (info), then answers; a modern request without a log level gets
        no ``notifications/message`` from it, one with ``logLevel`` gets those at or above."""
        await ctx.info("test_logging_tool started")
        await trio.sleep(delay)
        await ctx.info("test_logging_tool finished")
        return "Logging tool executed"

    @server.tool
    async def test_streaming_elicitation(ctx: Context) -> types.CallToolResult:
        """Asks the user's name (form elicitation) and greets them.

        In the modern era the question travels inside the result (``input_required``);
        a request that did not declare ``elicitation`` gets an ``isError`` result.
        """
        try:
            answer = await ctx.elicit("What is your name?", NAME_FORM)
        except McpError as error:
            return types.CallToolResult(content=[text(f"Cannot ask: {error}")], is_error=True)
        if answer.action != "accept" or answer.content is None:
            return types.CallToolResult(content=[text(f"No name ({answer.action})")])
        return types.CallToolResult(content=[text(f"Hello, {answer.content['name']}!")])

    @server.tool(annotations=_READ_ONLY)
    async def test_header_echo(
        region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})],
    ) -> str:
        """Echoes ``region``, which HTTP clients of 2026-07-28 mirror in ``Mcp-Param-Region``.

        Args:
            region: Any string; the server checks the header against it.
        """
        return region


def _elicitation_tools(server: Server) -> None:
    async def elicit(ctx: Context, message: str, schema: dict[str, Any]) -> tuple[str, Any]:
        answer = await ctx.elicit(message, schema)
        return answer.action, answer.content

    @server.tool
    async def test_elicitation(ctx: Context, message: str) -> str:
        """Tests server-initiated elicitation (a username and email form).

        Args:
            message: The message shown to the user.
        """
        try:
            action, content = await elicit(ctx, message, USER_INFO_SCHEMA)
        except (McpError, RequestTimeout, ElicitationContentError) as error:
            return f"Elicitation not supported or error: {error}"
        return f"User response: action={action}, content={_compact(content)}"

    @server.tool
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values for every primitive type (SEP-1034)."""
        try:
            action, content = await elicit(
                ctx, "Please review and update the form fields with defaults", SEP1034_SCHEMA
            )
        except (McpError, RequestTimeout, ElicitationContentError) as error:
            return f"Elicitation not supported or error: {error}"
        return f"Elicitation completed: action={action}, content={_compact(content)}"

    @server.tool
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with every enum schema variant (SEP-1330)."""
        try:
            action, content = await elicit(
                ctx, "Please select options from the enum fields", SEP1330_SCHEMA
            )
        except (McpError, RequestTimeout, ElicitationContentError) as error:
            return f"Elicitation not supported or error: {error}"
        return f"Elicitation completed: action={action}, content={_compact(content)}"


# -- conformance: resources -------------------------------------------------------------


def _fixture_resources(server: Server) -> None:
    watched = {"text": "Watched resource content"}

    @server.resource(
        "test://static-text",
        name="static-text",
        title="Static Text Resource",
        description="A static text resource for testing",
        mime_type="text/plain",
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        title="Static Binary Resource",
        description="A static binary resource (image) for testing",
        mime_type="image/png",
    )
    def static_binary() -> bytes:
        return base64.b64decode(TEST_IMAGE_BASE64)

    @server.resource(
        "test://template/{id}/data",
        name="template",
        title="Template Resource",
        description="A resource template with parameter substitution",
        mime_type="application/json",
        complete={"id": ["123", "456", "789"]},
    )
    def template(id: str) -> str:
        return _compact({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        title="Watched Resource",
        description="A resource that can be subscribed to (update_watched_resource changes it)",
        mime_type="text/plain",
    )
    def watched_resource() -> str:
        return watched["text"]

    @server.tool
    async def update_watched_resource(text: str) -> str:
        """Replace the text of test://watched-resource and notify its subscribers.

        Args:
            text: The new content.
        """
        watched["text"] = text
        notified = server.notify_resource_updated("test://watched-resource")
        return f"updated test://watched-resource; {notified} subscriber(s) notified"


# -- conformance: prompts ---------------------------------------------------------------


def _fixture_prompts(server: Server) -> None:
    @server.prompt(description="A simple prompt without arguments")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @server.prompt(
        description="A prompt with required arguments",
        complete={"arg1": ["testValue1", "test-value", "other"], "arg2": ["testValue2"]},
    )
    def test_prompt_with_arguments(
        arg1: Annotated[str, msgspec.Meta(description="First test argument")],
        arg2: Annotated[str, msgspec.Meta(description="Second test argument")],
    ) -> str:
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(description="A prompt that includes an embedded resource")
    def test_prompt_with_embedded_resource(
        resourceUri: Annotated[str, msgspec.Meta(description="URI of the resource to embed")],
    ) -> list[types.PromptMessage]:
        return [
            user(embedded(resourceUri, "Embedded resource content for testing.", "text/plain")),
            user("Please process the embedded resource above."),
        ]

    @server.prompt(description="A prompt that includes image content")
    def test_prompt_with_image() -> list[types.PromptMessage]:
        return [
            user(image(TEST_IMAGE_BASE64, "image/png")),
            user("Please analyze the image above."),
        ]


# -- realistic tools --------------------------------------------------------------------

JobState = Literal["running", "completed", "cancelled", "failed"]


def _job_tools(server: Server, settings: Settings) -> None:
    jobs: OrderedDict[str, JobState] = OrderedDict()
    leases = {"held": 0}
    counter = {"next": 0}

    def too_long(seconds: float) -> str | None:
        if seconds > settings.max_job_seconds:
            return f"at most {settings.max_job_seconds:g} seconds (max_job_seconds)"
        return None

    @server.tool
    async def slow_job(
        ctx: Context,
        steps: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 10,
        step_seconds: Annotated[float, msgspec.Meta(ge=0)] = 0.2,
    ) -> str:
        """A slow job: reports progress after each step (send a progressToken to see it).

        Args:
            steps: How many steps.
            step_seconds: How long each step takes.
        """
        if problem := too_long(steps * step_seconds):
            return f"refused: {problem}"
        started = time.monotonic()
        for step in range(1, steps + 1):
            await trio.sleep(step_seconds)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
            await ctx.debug(f"slow_job: step {step} of {steps} done", logger="everything")
        return f"completed {steps} steps in {time.monotonic() - started:.2f}s"

    @server.tool
    async def cancellable_job(
        ctx: Context,
        job: str | None = None,
        seconds: Annotated[float, msgspec.Meta(ge=0)] = 30.0,
    ) -> str:
        """Hold a lease for ``seconds``, one progress report per second; cancel it any time.

        However the job ends, the lease is released; a cancelled job is recorded as
        ``cancelled`` (see ``job_status``).

        Args:
            job: A name for the job (default: job-N).
            seconds: How long the job runs if not cancelled.
        """
        if problem := too_long(seconds):
            return f"refused: {problem}"
        if job is None:
            counter["next"] += 1
            job = f"job-{counter['next']}"
        _remember(jobs, job, "running")
        leases["held"] += 1
        try:
            deadline = trio.current_time() + seconds
            elapsed = 0
            while (left := deadline - trio.current_time()) > 0:
                await trio.sleep(min(1.0, left))
                elapsed += 1
                await ctx.report_progress(min(elapsed, seconds), seconds, f"{job} running")
        except trio.Cancelled:
            _remember(jobs, job, "cancelled")
            raise
        except BaseException:
            _remember(jobs, job, "failed")
            raise
        finally:
            leases["held"] -= 1
        _remember(jobs, job, "completed")
        return f"{job} completed after {seconds:g}s"

    @server.tool(annotations=_READ_ONLY)
    async def job_status(job: str) -> dict[str, Any]:
        """The state of a ``cancellable_job`` (running, completed, cancelled, failed or
        unknown) and how many leases are held now.

        Args:
            job: The job's name.
        """
        return {"job": job, "state": jobs.get(job, "unknown"), "leases_held": leases["held"]}


def _bench_tools(server: Server, settings: Settings) -> None:
    observed: OrderedDict[str, float] = OrderedDict()

    @server.tool(annotations=_READ_ONLY, inline=True)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(annotations=_READ_ONLY, inline=True)
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(annotations=_READ_ONLY)
    async def cancellation_probe(
        ctx: Context, token: str, seconds: Annotated[float, msgspec.Meta(ge=0)] = 30.0
    ) -> str:
        """Report progress 0, wait ``seconds``; if cancelled, record when under ``token``.

        The benchmark contract of ``mcp-actors bench`` (workload ``cancel``).
        """
        try:  # the report too: a cancellation may land at its checkpoint
            await ctx.report_progress(0, None, "started")
            await trio.sleep(min(seconds, settings.max_job_seconds))
        except trio.Cancelled:
            _remember(observed, token, time.monotonic())
            raise
        return "not cancelled"

    @server.tool(annotations=_READ_ONLY, inline=True)
    async def last_cancellation(token: str) -> dict[str, Any]:
        """When ``cancellation_probe`` saw its cancellation (``time.monotonic()``), or null."""
        return {"token": token, "observed": observed.get(token)}


# -- conformance: subscriptions/listen --------------------------------------------------


def _listen_triggers(server: Server) -> None:
    """The hooks ``server-stateless`` calls (on another connection) to see a listen
    stream deliver a list change: each re-registers a tool or prompt of the server,
    which announces the change without changing what is listed."""

    @server.tool
    async def test_trigger_tool_change() -> str:
        """Announce a change of the tool list (notifications/tools/list_changed)."""
        server.add_tool(server.tools["test_trigger_tool_change"], replace=True)
        return "tools/list_changed announced"

    @server.tool
    async def test_trigger_prompt_change() -> str:
        """Announce a change of the prompt list (notifications/prompts/list_changed)."""
        server.add_prompt(server.prompts["test_simple_prompt"], replace=True)
        return "prompts/list_changed announced"


# -- conformance: multi round-trip requests (2026-07-28) ---------------------------------

CONFIRM_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "description": "Go on?"}},
    "required": ["ok"],
}
COLOR_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"color": {"type": "string", "description": "Favourite colour"}},
    "required": ["color"],
}
CONTEXT_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"context": {"type": "string", "description": "What to focus on"}},
    "required": ["context"],
}


def _sampled_text(result: types.CreateMessageResult) -> str:
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return " ".join(b.text for b in blocks if isinstance(b, types.TextContent))


def _input_required_fixtures(server: Server) -> None:
    """The ``input-required-result-*`` fixtures: each asks with a fixed key."""

    @server.tool
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name (key ``user_name``) and greets them."""
        answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        if not answer.accepted or answer.content is None:
            return f"No name given ({answer.action})"
        return f"Hello, {answer.content['name']}!"

    @server.tool
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question (key ``capital_question``)."""
        result = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"The model said: {_sampled_text(result)}"

    @server.tool
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Lists the client's roots (key ``client_roots``)."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(root.uri for root in roots)

    @server.tool
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for a confirmation (key ``confirm``); the round carries a ``requestState``."""
        answer = await ctx.elicit("Go on?", CONFIRM_FORM, key="confirm")
        confirmed = answer.accepted and answer.content is not None and answer.content["ok"]
        return f"state-ok: confirmed={confirmed}"

    @server.tool
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks three things in one round: a name, a model's greeting, the roots."""
        name, greeting, roots = await ctx.ask(
            ctx.elicitation("What is your name?", NAME_FORM, key="user_name"),
            ctx.sampling("Write a one-line greeting.", max_tokens=50, key="greeting"),
            ctx.roots(key="client_roots"),
        )
        who = name.content["name"] if name.accepted and name.content else "?"
        return (
            f"name={who}; greeting={_sampled_text(greeting)};"
            f" roots={','.join(root.uri for root in roots)}"
        )

    @server.tool
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Two rounds: a name (key ``step1``), then a colour (key ``step2``)."""
        name = await ctx.elicit("What is your name?", NAME_FORM, key="step1")
        color = await ctx.elicit("Your favourite colour?", COLOR_FORM, key="step2")
        who = name.content["name"] if name.accepted and name.content else "?"
        hue = color.content["color"] if color.accepted and color.content else "?"
        return f"{who} likes {hue}"

    @server.tool
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Asks for a confirmation; a retry whose ``requestState`` was altered is -32602."""
        answer = await ctx.elicit("Go on?", CONFIRM_FORM, key="confirm")
        return f"confirmed: {answer.accepted}"

    @server.tool
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks the model and the user, but only what the request declared it can answer."""
        declared = ctx.session.client_capabilities
        questions: list[Any] = []
        if declared is not None and declared.sampling is not msgspec.UNSET:
            questions.append(ctx.sampling("Say hello.", max_tokens=20, key="model_hello"))
        if declared is not None and declared.elicitation is not msgspec.UNSET:
            questions.append(ctx.elicitation("What is your name?", NAME_FORM, key="user_name"))
        if not questions:
            return "Nothing to ask: the client declared neither sampling nor elicitation"
        answers = await ctx.ask(*questions)
        return f"Got {len(answers)} answer(s)"

    @server.prompt(description="A prompt that asks the user for context first (MRTR)")
    async def test_input_required_result_prompt(ctx: Context) -> str:
        question = "What should the prompt focus on?"
        answer = await ctx.elicit(question, CONTEXT_FORM, key="user_context")
        focus = answer.content["context"] if answer.accepted and answer.content else "anything"
        return f"Please help me with: {focus}"


# -- the tasks extension (2026-07-28) ---------------------------------------------------------


#: The form the task fixtures ask with (the suite answers ``{name, confirm}``).
_TASK_FORM: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
}


def _task_tools(server: Server, settings: Settings) -> None:
    """The fixtures of the suite's ``tasks-*`` scenarios (see :mod:`mcp_actors.server.tasks`)."""

    @server.tool(annotations=_READ_ONLY)
    async def greet(name: str = "world") -> str:
        """Greet someone; always answered at once, never as a task."""
        return f"Hello, {name}!"

    @server.tool(annotations=_READ_ONLY, task="optional")
    async def slow_compute(seconds: Annotated[float, msgspec.Meta(ge=0)] = 1.0) -> str:
        """Work for ``seconds``; a task when the client declares the tasks extension."""
        await trio.sleep(min(seconds, settings.max_job_seconds))
        return f"computed for {seconds:g} s"

    @server.tool(annotations=_READ_ONLY, task="always")
    async def failing_job() -> types.CallToolResult:
        """Always runs as a task, which completes with a tool error (``isError``).

        Returned, not raised: a raised exception's text names its class, which the
        fuzzer (tests/test_fuzz.py) rightly counts as Python leaking into replies."""
        await trio.lowlevel.checkpoint()
        return error_result("the job failed, as it always does")

    @server.tool(annotations=_READ_ONLY, task="optional")
    async def protocol_error_job() -> str:
        """A task that fails with a JSON-RPC error (status ``failed``)."""
        await trio.lowlevel.checkpoint()
        raise McpError(-32602, "protocol_error_job always fails with -32602")

    @server.tool(task="always")
    async def confirm_delete(ctx: Context, path: str = "/tmp/example.txt") -> str:
        """Ask the user to confirm (the task is ``input_required`` until ``tasks/update``)."""
        answer = await ctx.elicit(f"Delete {path}?", _TASK_FORM, key="confirm")
        if answer.accepted and answer.content and answer.content.get("confirm"):
            return f"deleted {path}"
        return f"kept {path}"

    @server.tool(task="always")
    async def multi_input(ctx: Context) -> str:
        """Ask two questions at once; each answer may come in its own ``tasks/update``."""
        name, go_on = await ctx.ask(
            ctx.elicitation("Your name?", _TASK_FORM, key="name"),
            ctx.elicitation("Go on?", _TASK_FORM, key="go_on"),
        )
        return f"name: {name.action}, go on: {go_on.action}"

    @server.tool(task="deferred")
    async def test_tool_with_task(ctx: Context) -> types.CreatedTask:
        """Ask the user's name (an input_required round of the call), then finish as a task."""
        answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        name = answer.content["name"] if answer.accepted and answer.content else "nobody"

        async def greet_later() -> str:
            await trio.sleep(0.1)
            return f"Hello, {name}! (from a task)"

        return await start_task(ctx, greet_later)
