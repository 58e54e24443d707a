"""Where our server's time goes on this workload: one worker, in this process, under cProfile.

Starts Redis and the API (:func:`.harness.stack`), serves :mod:`.server`'s tools in this
process (``serve_worker``, one worker, the front end ``MCP_ACTORS_HTTP_FRONT_END``
names), and runs the driver in a child process for ``--sessions`` sessions; then
prints the profile's top functions by own time and by cumulative time, and the
server's CPU time per session (cProfile slows Python code about twofold: read the
shares, not the absolute figures).

Run: ``python -m benchmarks.realio.profile --sessions 5000``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from functools import partial

import trio

from mcp_actors.transports.http.config import HttpConfig

from . import harness, processes
from .server import Backends, ShopSlot, build_server, serve_worker

DRIVE = (
    "import sys; from benchmarks.realio.driver import Driver;"
    " t = Driver('127.0.0.1', int(sys.argv[1])).run(warmup=1.0, sessions=int(sys.argv[2]));"
    " print(t.errors, t.sessions)"
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--dump", help="also write the raw profile here (pstats)")
    options = parser.parse_args(argv)
    profiler = cProfile.Profile(time.thread_time)  # CPU time: waits and preemption excluded
    with harness.stack() as backends:
        harness.seed(backends.redis_url)
        slot = ShopSlot()
        server = build_server(slot)
        port = processes.free_port()
        started = os.times()

        async def run() -> None:
            async with trio.open_nursery() as nursery:
                serve = partial(
                    serve_worker,
                    server,
                    slot=slot,
                    backends=Backends(backends.redis_url, backends.api.url),
                    port=port,
                    config=HttpConfig(stateless=True, json_response=True),
                )
                await nursery.start(serve)
                command = [sys.executable, "-c", DRIVE, str(port), str(options.sessions)]
                env = {**os.environ, "PYTHONPATH": str(processes.ROOT)}
                done = await trio.run_process(command, capture_stdout=True, env=env)
                print("driver: errors, sessions =", done.stdout.decode().strip())
                nursery.cancel_scope.cancel()

        profiler.enable()
        trio.run(run)
        profiler.disable()
        ended = os.times()
    cpu = (ended.user + ended.system) - (started.user + started.system)
    print(
        f"server CPU (profiled, warm-up included): {cpu / options.sessions * 1e6:,.0f} µs/session"
    )
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(options.top)
    stats.sort_stats("cumulative").print_stats(options.top)
    if options.dump is not None:
        stats.dump_stats(options.dump)


if __name__ == "__main__":
    main()
