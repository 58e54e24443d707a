"""Running a server: over this process's stdio, or over any message stream, supervised."""

from __future__ import annotations

import gc
import signal
import threading
from collections.abc import Awaitable, Callable

import trio

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

    The server is set up by then: what is alive is frozen out of the cycle
    collector's sight (:func:`freeze_startup_objects`).
    """

    async def main() -> None:
        freeze_startup_objects()
        await serve_stdio(server)

    run_until_interrupted(main)


def freeze_startup_objects() -> None:
    """Collect once, then hide every object alive now from CPython's cycle collector.

    A server's process holds tens of thousands of objects from its start — modules,
    classes, functions, the server's tools and schemas — that live as long as it
    does. Each full (generation 2) collection would scan all of them again, and a
    collection runs in the middle of whatever request allocated last: that request
    waits. :func:`gc.freeze` moves them to a permanent generation the collector
    skips; later objects are collected as usual. The blocking entry points
    (:func:`run_stdio`, ``run_http``, ``run_websocket``, each worker of
    ``run_workers``) call this once the server is set up and listening; it changes
    nothing a server does, only how long a full collection takes. A frozen object
    that later becomes garbage in a reference cycle is not freed (freed by reference
    counting, as most are, it is): hence only what exists at start, once the garbage
    of starting was collected. ``serve_*`` coroutines, which may run inside another
    program, do not call it.
    """
    gc.collect()
    gc.freeze()


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
