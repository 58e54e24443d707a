"""Running a server: over this process's stdio, or over any message stream, supervised."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from ..runtime.groups import unwrapped
from ..runtime.supervisor import open_supervisor
from ..transports.stdio import open_stdio_server_stream
from .app import Server


async def serve_stdio(server: Server) -> None:
    """Serve one client on this process's stdin/stdout until stdin closes."""
    transport = open_stdio_server_stream(max_message_size=server.config.max_message_size)
    async with open_supervisor() as supervisor:
        await supervisor.start_session(server.create_session(transport))


def run_stdio(server: Server) -> None:
    """Blocking entry point: ``trio.run(serve_stdio, server)``, quiet on Ctrl-C."""
    run_until_interrupted(lambda: serve_stdio(server))


def run_until_interrupted(main: Callable[[], Awaitable[None]]) -> None:
    """``trio.run(main)``; Ctrl-C (SIGINT) ends it quietly.

    Trio delivers ``KeyboardInterrupt`` wherever the program was waiting, often
    inside a nursery, which wraps it in an exception group: unwrapped here, so a
    server stopped with Ctrl-C exits without a traceback.
    """
    try:
        with unwrapped():
            trio.run(main)
    except KeyboardInterrupt:
        pass
