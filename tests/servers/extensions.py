"""A server offering extensions: Skills (the everything plugin's fixtures), an MCP App,
and a third-party extension with a method of its own (``com.example/echo``)."""

from __future__ import annotations

from typing import Any

from mcp_actors import Context, Server
from mcp_actors.protocol import types as t
from mcp_actors.protocol.methods import MethodSpec, register_method
from mcp_actors.runtime.request import InboundRequest
from mcp_actors.server.app import ServerSession
from mcp_actors.server.apps import (
    UI_EXTENSION,
    UiCsp,
    add_ui_resource,
    client_renders_apps,
    ui_tool_meta,
)
from mcp_actors.server.extensions import Extension
from mcp_actors.server.skills import serve_skills
from mcp_actors_everything.server import SKILLS_DIRECTORY

ECHO_EXTENSION = "com.example/echo"
DASHBOARD = "ui://weather/dashboard"
DASHBOARD_HTML = "<!DOCTYPE html><html><body><div id='weather'></div></body></html>"


class ShoutParams(t.McpStruct):
    text: str


class ShoutResult(t.Result, kw_only=True):
    text: str


register_method(
    MethodSpec(
        "echo/shout", "client", ShoutParams, ShoutResult, capability=("extensions", ECHO_EXTENSION)
    )
)

server = Server("extensions", "1.0")
library = serve_skills(server, SKILLS_DIRECTORY)


async def shout(
    server_session: ServerSession, request: InboundRequest, params: ShoutParams
) -> ShoutResult:
    return ShoutResult(text=params.text.upper())


server.add_extension(Extension(ECHO_EXTENSION, {"loud": True}, handlers={"echo/shout": shout}))

add_ui_resource(
    server,
    DASHBOARD,
    DASHBOARD_HTML,
    name="weather_dashboard",
    description="Interactive weather dashboard",
    csp=UiCsp(connect_domains=["https://api.example.com"]),
    prefers_border=True,
)


@server.tool(meta=ui_tool_meta(DASHBOARD))
async def get_weather(city: str, ctx: Context) -> str:
    """The weather in a city (shown in the dashboard by hosts that render apps)."""
    view = "dashboard" if client_renders_apps(ctx) else "text"
    return f"{city}: sunny ({view})"


@server.tool
async def client_extensions(ctx: Context) -> dict[str, Any]:
    """The settings the client declared for the echo and UI extensions."""
    return {
        "echo": ctx.client_extension(ECHO_EXTENSION),
        "ui": ctx.client_extension(UI_EXTENSION),
    }
