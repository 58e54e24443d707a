"""Running a server: over this process's stdio, or over any message stream, supervised."""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable

import trio

from ..runtime.gc_policy import apply_serving_gc_policy
from ..runtime.groups import unwrapped
from ..transports.stdio import open_stdio_server_stream
from .protocols import HostedServer

#: The largest TCP port number.
MAX_PORT = 65535
#: What a port setting takes.
PORT_RANGE = f"a port number 0-{MAX_PORT} (0: any free port)"


def check_port(port: object) -> int:
    """``port`` if it is a TCP port number, 0 to 65535 (0: any free port, the system's
    pick; the URL reported says which), else a ValueError. Checked before listening:
    the system would read 99999 as 34463 (modulo 65536), and 65536 as 0."""
    if isinstance(port, int) and not isinstance(port, bool) and 0 <= port <= MAX_PORT:
        return port
    raise ValueError(f"expected {PORT_RANGE}, got {port!r}")


async def serve_stdio(server: HostedServer) -> None:
    """Serve one client on this process's stdin/stdout until stdin closes.

    That client is the only one this server will ever have: when its session ends
    (the requests in flight at EOF had ``SessionConfig.eof_grace`` to be answered),
    whatever its requests left running is stopped too — a gateway's upstream
    connections (whose child processes are shut down with them), tasks nobody can ask
    about any more — so that the process exits (:meth:`Server.serve_session`).
    """
    transport = open_stdio_server_stream(max_message_size=server.config.max_message_size)
    await server.serve_session(transport)


def run_stdio(server: HostedServer) -> None:
    """Blocking entry point: ``trio.run(serve_stdio, server)``, quiet on Ctrl-C.

    The server is set up by then: the serving GC policy applies
    (:func:`~mcp_actors.runtime.gc_policy.apply_serving_gc_policy`).
    """

    async def main() -> None:
        apply_serving_gc_policy()
        await serve_stdio(server)

    run_until_interrupted(main)


def run_until_interrupted(main: Callable[[], Awaitable[None]]) -> None:
    """``trio.run(main)``; Ctrl-C (SIGINT) ends it quietly.

    In the main thread, SIGINT is received as an event that *cancels* ``main``, so
    every task — an HTTP request half answered, a session — unwinds the ordinary
    way, instead of a ``KeyboardInterrupt`` raised at whatever checkpoint a task
    happened to be (where a library may turn it into another error). A second
    Ctrl-C during that shutdown, or one in another thread's run, is a
    ``KeyboardInterrupt``, unwrapped from its exception group and swallowed too.
    """

    async def until_interrupted() -> None:
        async with trio.open_nursery() as nursery:
            if threading.current_thread() is threading.main_thread():
                await nursery.start(_cancel_on_sigint, nursery.cancel_scope)
            await main()
            nursery.cancel_scope.cancel()

    try:
        with unwrapped():
            trio.run(until_interrupted)
    except KeyboardInterrupt:
        pass


async def _cancel_on_sigint(
    scope: trio.CancelScope, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    with trio.open_signal_receiver(signal.SIGINT) as signals:
        task_status.started()
        async for _ in signals:
            scope.cancel()
            return
