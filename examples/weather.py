"""A server as a script: ``python examples/weather.py`` serves it over stdio.

``python examples/weather.py http`` serves it over Streamable HTTP at
http://127.0.0.1:8000/mcp instead; ``mcp-actors run examples/weather.py`` does the
same as the first (it finds the module's ``server``).
"""

from __future__ import annotations

import sys

import msgspec
import trio

from mcp_actors import Context, Server

server = Server("weather", "1.0", instructions="Made-up weather, for trying MCP clients.")


class Forecast(msgspec.Struct):
    city: str
    temperature_c: float
    conditions: str


@server.tool
async def forecast(city: str) -> Forecast:
    """Tomorrow's (made-up) weather in a city."""
    return Forecast(city=city, temperature_c=21.5, conditions="sunny")


@server.tool
async def countdown(ctx: Context, seconds: float = 3.0) -> str:
    """Report progress; a client's notifications/cancelled stops it at the next await."""
    for step in range(1, 4):
        await trio.sleep(seconds / 3)
        await ctx.report_progress(step, 3, f"step {step}")
    return "lift-off"


@server.resource("weather://cities")
async def cities() -> str:
    """The cities we make up weather for."""
    return "Paris\nLagos\nLima"


@server.prompt
async def packing_list(city: str) -> str:
    """Ask for a packing list for a trip to a city."""
    return f"What should I pack for a trip to {city}? Check the forecast first."


if __name__ == "__main__":
    server.run("http" if sys.argv[1:] == ["http"] else "stdio")
