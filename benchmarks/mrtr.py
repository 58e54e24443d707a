"""What a multi round-trip request (MRTR, 2026-07-28) costs, in-process, our client and server.

Three sequential loops over the in-memory transport, each printing calls/s and µs/call:

- ``plain``: a modern ``tools/call`` of a tool that never asks (the price every modern
  call of ``tools/call``/``prompts/get``/``resources/read`` pays for running its handler as
  an actor that could park);
- ``continuation``: a tool that asks one elicitation: two requests, the handler parked
  between them and resumed;
- ``replay``: the same with ``max_continuations=0`` (never parked: the retry re-runs
  the handler from the sealed answers).

Usage::

    python benchmarks/mrtr.py --calls 2000
"""

from __future__ import annotations

import argparse
import time

import trio

from mcp_actors import ClientHandlers, Context, MrtrSettings, Server, open_client, types

FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def make_server(settings: MrtrSettings) -> Server:
    server = Server("bench-mrtr", mrtr=settings)

    @server.tool
    async def plain(text: str) -> str:
        return text

    @server.tool
    async def confirm(ctx: Context, text: str) -> str:
        answer = await ctx.elicit("OK?", FORM, key="ok")
        return f"{text}: {answer.action}"

    return server


async def accept(params: types.ElicitParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def loop(server: Server, tool: str, calls: int) -> float:
    handlers = ClientHandlers(elicitation=accept)
    async with open_client(server, era="modern", handlers=handlers) as client:
        for _ in range(min(200, calls)):  # warm up
            await client.call_tool(tool, {"text": "x"})
        started = time.perf_counter()
        for _ in range(calls):
            await client.call_tool(tool, {"text": "x"})
        return time.perf_counter() - started


async def main(calls: int) -> None:
    runs = [
        ("plain", MrtrSettings(), "plain"),
        ("continuation", MrtrSettings(), "confirm"),
        ("replay", MrtrSettings(max_continuations=0), "confirm"),
    ]
    for label, settings, tool in runs:
        server = make_server(settings)
        elapsed = await loop(server, tool, calls)
        statistics = server.continuation_statistics()
        print(
            f"{label:>12}: {calls / elapsed:8.0f} calls/s  {elapsed / calls * 1e6:7.0f} µs/call"
            f"  (resumed {statistics.resumed}, replayed {statistics.replayed})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    trio.run(main, parser.parse_args().calls)
