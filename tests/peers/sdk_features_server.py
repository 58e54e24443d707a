"""A stdio MCP server on the official SDK (``MCPServer``) exercising every server feature.

The independent peer our *client* is tested against (``tests/test_sdk_features.py``):

* resources ``config://app`` (text), ``data://logo.png`` (binary) and the template
  ``users://{user_id}/profile``; ``resources/subscribe``/``unsubscribe`` handlers and a
  ``touch(uri)`` tool that sends ``notifications/resources/updated`` to subscribers;
* prompt ``greet(name)``; completion of ``greet``'s ``name`` and the template's ``user_id``;
* ``logging/setLevel`` and a ``log(message, level)`` tool;
* tools asking the client: ``ask_model`` (sampling), ``ask_user`` (form elicitation),
  ``roots`` (roots/list), and ``roots_changes`` (how many roots/list_changed arrived).

Run: ``python tests/peers/sdk_features_server.py`` (stdio).
"""

from __future__ import annotations

import warnings
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")  # the SDK deprecates sampling/roots/logging for 2026-07-28

server = MCPServer("sdk-features", version="1.0.0", log_level="WARNING")
lowlevel = server._lowlevel_server
subscribers: dict[str, list[Any]] = {}
state = {"roots_changed": 0, "level": "debug"}
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


@server.resource("config://app", mime_type="text/plain")
def config() -> str:
    """The configuration."""
    return "debug = true"


@server.resource("data://logo.png", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG fake"


@server.resource("users://{user_id}/profile", mime_type="application/json")
def profile(user_id: str) -> dict[str, str]:
    """A user's profile."""
    return {"id": user_id, "name": {"1": "ada", "2": "grace"}.get(user_id, "?")}


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.completion()
async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    if isinstance(ref, types.PromptReference) and argument.name == "name":
        names = [n for n in ("ada", "alan", "grace") if n.startswith(argument.value)]
        return types.Completion(values=names, total=len(names), has_more=False)
    if isinstance(ref, types.ResourceTemplateReference) and argument.name == "user_id":
        return types.Completion(values=["1", "2"])
    return None


async def on_subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
    subscribers.setdefault(str(params.uri), []).append(ctx.session)
    return types.EmptyResult()


async def on_unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    # One client per server process: forget one subscription of this URI.
    sessions = subscribers.get(str(params.uri), [])
    if sessions:
        sessions.pop()
    return types.EmptyResult()


async def on_set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    state["level"] = params.level
    return types.EmptyResult()


async def on_roots_changed(ctx: Any, params: Any) -> None:
    state["roots_changed"] += 1


lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
lowlevel.add_request_handler(
    "resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe
)
lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
lowlevel.add_notification_handler(
    "notifications/roots/list_changed", types.NotificationParams, on_roots_changed
)


@server.tool()
async def touch(uri: str) -> int:
    """Tell the subscribers of ``uri`` that it changed."""
    sessions = subscribers.get(uri, [])
    for session in sessions:
        await session.send_resource_updated(uri)
    return len(sessions)


@server.tool()
async def log(message: str, level: str, ctx: Context) -> str:
    """Send a log message if ``level`` passes the level the client set."""
    if LEVELS.index(level) >= LEVELS.index(state["level"]):
        await ctx.log(level, message, logger_name="sdk")  # type: ignore[arg-type]
    return "ok"


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Sample the client's model."""
    result = await ctx.request_context.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=20,
        system_prompt="Be brief.",
    )
    content = result.content
    text = content.text if isinstance(content, types.TextContent) else "?"
    return f"{result.model}: {text}"


class Contact(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(default=30, ge=0)
    subscribe: bool = False


@server.tool()
async def ask_user(ctx: Context) -> str:
    """Elicit a contact form."""
    answer = await ctx.elicit("Who are you?", schema=Contact)
    if answer.action == "accept":
        data = answer.data
        return f"accept {data.name} {data.age} {data.subscribe}"
    return answer.action


@server.tool()
async def roots(ctx: Context) -> list[str]:
    """The client's roots."""
    result = await ctx.request_context.session.list_roots()
    return [str(root.uri) for root in result.roots]


@server.tool()
def roots_changes() -> int:
    """How many roots/list_changed notifications arrived."""
    return int(state["roots_changed"])


if __name__ == "__main__":
    server.run("stdio")
