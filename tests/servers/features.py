"""The feature server: resources, templates, subscriptions, prompts, completion, logging,
rich tool content, and tools that ask the client (sampling, elicitation, roots).

Run in-process (memory transport) or as a child process
(``python -m mcp_actors.cli run servers.features:server`` from ``tests/``). Its
``page_size`` is 2, so every list method is paginated.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from mcp_actors import Context, McpError, Server, types
from mcp_actors.server.content import (
    assistant,
    audio,
    embedded,
    image,
    link,
    text,
    text_contents,
    user,
)

server = Server("features", "0.9.0", page_size=2)

PNG = b"\x89PNG\r\n\x1a\n fake image bytes"
WAV = b"RIFF fake audio bytes"
ICON = types.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"])
USERS = {1: "ada", 2: "grace", 3: "alan"}
REPOS = {"python": ["cpython", "mypy", "typeshed"], "rust": ["rust", "cargo"]}

log = logging.getLogger("features")
log.setLevel(logging.DEBUG)
log.propagate = False
log.addHandler(server.logging_handler())

state: dict[str, Any] = {"counter": 0, "roots_changed": 0}


# -- resources -----------------------------------------------------------------------------


@server.resource(
    "config://app",
    title="App configuration",
    mime_type="text/plain",
    size=12,
    annotations=types.Annotations(audience=["user"], priority=0.5),
    icons=[ICON],
)
def config() -> str:
    """The application's configuration."""
    return "debug = true"


@server.resource("data://logo.png", mime_type="image/png")
async def logo() -> bytes:
    """A binary resource."""
    return PNG


@server.resource("counter://value", mime_type="application/json")
async def counter() -> dict[str, int]:
    """A counter that ``bump`` increments (subscribe to it)."""
    return {"value": state["counter"]}


@server.resource("multi://both")
async def both() -> list[types.ResourceContents]:
    """Two contents at once."""
    return [
        text_contents("multi://both#a", "first", "text/plain"),
        types.ResourceContents(uri="multi://both#b", blob="AAEC", mime_type="application/x-raw"),
    ]


@server.resource(
    "users://{user_id}/profile",
    name="user_profile",
    title="User profile",
    mime_type="application/json",
    complete={"user_id": [str(key) for key in USERS]},
)
async def profile(user_id: int) -> dict[str, Any]:
    """A user's profile, by numeric id."""
    if user_id not in USERS:
        raise McpError(-32002, f"no user {user_id}", {"uri": f"users://{user_id}/profile"})
    return {"id": user_id, "name": USERS[user_id]}


@server.resource("files://{+path}", mime_type="text/plain")
def read_file(path: str, ctx: Context) -> str:
    """A file below the (virtual) project root; the path may contain slashes."""
    client = ctx.session.client_info
    return f"contents of {path} for {client.name if client else '?'}"


@server.resource("repos://{owner}/{repo}")
async def repo(owner: str, repo: str) -> str:
    """A repository of an owner."""
    return f"{owner}/{repo}"


@server.completion(resource="repos://{owner}/{repo}", argument="owner")
def complete_owner(value: str) -> list[str]:
    return [owner for owner in REPOS if owner.startswith(value)]


@server.completion(resource="repos://{owner}/{repo}", argument="repo")
async def complete_repo(value: str, arguments: Mapping[str, str]) -> list[str]:
    """Repositories of the owner already chosen (the request's context)."""
    return [name for name in REPOS.get(arguments.get("owner", ""), []) if name.startswith(value)]


# -- prompts -------------------------------------------------------------------------------


@server.prompt
def greet(name: str) -> str:
    """Greet someone.

    Args:
        name: Who to greet.
    """
    return f"Hello, {name}!"


@server.completion(prompt="greet", argument="name")
def complete_name(value: str) -> list[str]:
    return [name for name in USERS.values() if name.startswith(value)]


class Tone(enum.Enum):
    FRIENDLY = "friendly"
    STRICT = "strict"


@server.prompt(title="Code review", icons=[ICON])
def review(
    code: Annotated[str, msgspec.Meta(description="The code to review")],
    language: Literal["python", "rust", "go"] = "python",
    tone: Tone = Tone.FRIENDLY,
    lines: int = 10,
) -> list[types.PromptMessage]:
    """Ask for a code review."""
    return [
        user(f"Review this {language} code ({tone.value}, {lines} lines max):\n{code}"),
        assistant("Sure, let me look."),
    ]


@server.prompt
def media() -> list[types.PromptMessage | str]:
    """Messages with every kind of content."""
    return [
        "Look at these:",
        user(image(PNG, "image/png")),
        user(audio(WAV, "audio/wav")),
        user(embedded("config://app", "debug = true", "text/plain")),
        assistant(link("data://logo.png", "logo", mime_type="image/png")),
    ]


@server.prompt(description="Explicit description")
def full() -> types.GetPromptResult:
    return types.GetPromptResult(messages=[assistant("done")], meta={"source": "features"})


@server.prompt(complete={"word": [f"word{i:03d}" for i in range(250)]})
def spell(word: str) -> str:
    """Spell a word (its completion has 250 candidates)."""
    return " ".join(word)


# -- tools ---------------------------------------------------------------------------------


@server.tool
async def bump(times: int = 1) -> int:
    """Increment the counter and tell subscribers of counter://value."""
    for _ in range(times):
        state["counter"] += 1
        server.notify_resource_updated("counter://value", meta={"seq": state["counter"]})
    return int(state["counter"])


@server.tool
async def toggle_note(name: str, present: bool) -> str:
    """Add or remove a fixed resource note://NAME (clients see resources/list_changed)."""
    uri = f"note://{name}"
    if present:

        @server.resource(uri)
        def note() -> str:
            return f"note {name}"

    else:
        server.remove_resource(uri)
    return uri


@server.tool
async def toggle_prompt(present: bool) -> str:
    """Add or remove the prompt ``extra`` (clients see prompts/list_changed)."""
    if present:

        @server.prompt
        def extra() -> str:
            return "extra"

    else:
        server.remove_prompt("extra")
    return "ok"


@server.tool
async def rich_content() -> types.CallToolResult:
    """Every kind of content block, and ``_meta``, in one result."""
    return types.CallToolResult(
        content=[
            text("plain", annotations=types.Annotations(priority=1.0)),
            image(PNG, "image/png"),
            audio(WAV, "audio/wav"),
            link("config://app", "config", mime_type="text/plain", size=12),
            embedded("data://logo.png", PNG, "image/png"),
        ],
        meta={"trace": "abc"},
    )


@server.tool
async def content_list() -> list[types.ContentBlock]:
    """A plain list of content blocks."""
    return [text("one"), link("counter://value", "counter")]


@server.tool
async def python_logging(message: str, level: str = "info") -> str:
    """Log through Python's logging (bridged to notifications/message)."""
    log.log(logging.getLevelName(level.upper()), message)
    return "logged"


@server.tool
def python_logging_in_thread(message: str) -> str:
    """A sync tool (worker thread) logging through the bridge."""
    log.warning(message)
    return "logged"


# -- asking the client ---------------------------------------------------------------------


@server.tool
async def ask_model(ctx: Context, question: str) -> str:
    """Sample the client's model."""
    result = await ctx.sample([question], max_tokens=50, system_prompt="Be brief.", temperature=0.1)
    assert isinstance(result.content, types.TextContent)
    return f"{result.model}: {result.content.text}"


@server.tool
async def ask_model_with_tools(ctx: Context) -> str:
    """Sample with tools (2025-11-25 and sampling.tools only)."""
    weather = types.Tool(
        name="weather",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    result = await ctx.sample(
        "What is the weather in Paris?", max_tokens=50, tools=[weather], tool_choice="auto"
    )
    return f"{result.stop_reason}"


CONTACT_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18},
        "subscribe": {"type": "boolean", "default": False},
    },
    "required": ["name", "email"],
}


@server.tool
async def ask_user(ctx: Context) -> dict[str, Any]:
    """Elicit a form given as a schema dict; returns the action and content."""
    answer = await ctx.elicit("Your contact details?", CONTACT_FORM)
    return {"action": answer.action, "content": answer.content}


class Preferences(msgspec.Struct):
    color: Literal["red", "green", "blue"]
    size: Annotated[int, msgspec.Meta(ge=1, le=10, description="Size 1-10")] = 5
    tags: list[Literal["a", "b", "c"]] = []
    tone: Tone = Tone.FRIENDLY


@server.tool
async def ask_preferences(ctx: Context) -> str:
    """Elicit a form given as a Struct; the content comes back as that Struct."""
    answer = await ctx.elicit("Your preferences?", Preferences)
    if not answer.accepted:
        return answer.action
    prefs = answer.content
    assert isinstance(prefs, Preferences)
    return f"{prefs.color} {prefs.size} {','.join(prefs.tags)} {prefs.tone.value}"


ENUM_FORMS = {
    "type": "object",
    "properties": {
        "plain": {"type": "string", "enum": ["x", "y"]},
        "legacy": {"type": "string", "enum": ["l1", "l2"], "enumNames": ["L one", "L two"]},
        "titled": {
            "type": "string",
            "oneOf": [{"const": "t1", "title": "T one"}, {"const": "t2", "title": "T two"}],
            "default": "t1",
        },
        "multi": {
            "type": "array",
            "items": {"type": "string", "enum": ["m1", "m2", "m3"]},
            "minItems": 1,
            "maxItems": 2,
        },
        "titled_multi": {
            "type": "array",
            "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
        },
    },
    "required": ["plain"],
}


@server.tool
async def ask_enums(ctx: Context) -> dict[str, Any]:
    """Elicit the 2025-11-25 enum forms."""
    answer = await ctx.elicit("Choose", ENUM_FORMS)
    return {"action": answer.action, "content": answer.content}


@server.tool
async def ask_nested(ctx: Context) -> str:
    """Elicit with a schema the protocol forbids (a nested object): refused before sending."""
    await ctx.elicit(
        "Address?",
        {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}},
    )
    return "unreachable"


@server.tool
async def ask_url(ctx: Context) -> str:
    """URL-mode elicitation (2025-11-25), then notifications/elicitation/complete."""
    answer = await ctx.elicit_url(
        "Please sign in", "https://example.com/login", elicitation_id="login-1"
    )
    if answer.accepted and answer.elicitation_id is not None:
        await ctx.session.complete_elicitation(answer.elicitation_id)
    return f"{answer.action} {answer.elicitation_id}"


@server.tool
async def roots(ctx: Context) -> list[str]:
    """The client's roots."""
    return [root.uri for root in await ctx.list_roots()]


@server.on_roots_changed
def roots_changed(server_session: Any) -> None:
    state["roots_changed"] += 1


@server.tool
async def roots_changes() -> int:
    """How many roots/list_changed notifications arrived so far."""
    return int(state["roots_changed"])


@server.tool
async def client_capabilities(ctx: Context) -> dict[str, Any]:
    """What the client declared in initialize."""
    capabilities = ctx.session.client_capabilities
    return msgspec.to_builtins(capabilities) if capabilities is not None else {}
