"""Redis commands per legacy-session ``tools/call`` under load: counted by Redis, not timed.

One ``mcp-actors run`` worker sharing its sessions (``share_sessions``) with a
``redis-server`` this script starts; ``wrk`` posts ``tools/call add`` over
``--sessions`` legacy sessions (as ``legacy_workers.py`` does). Redis's ``INFO
commandstats`` is read before and after the run, once the finished streams of a warm-up
are past their retention (so their deletions are counted too), and each command's calls
are divided by the requests served. A command a Lua script runs is counted under its
own name too (``eval`` is the script itself): the round trips a call waits for are the
top-level commands — ``eval`` plus whatever is sent outside a script. The figures are
counts: the load on the machine does not move them (only how many requests they are
divided by).

Usage::

    python benchmarks/legacy_redis_commands.py
    python benchmarks/legacy_redis_commands.py --duration 8 --sessions 10 --connections 10
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import tempfile
import time
from pathlib import Path

from http_compare import LUA, open_session  # benchmarks/: the same requests and sessions
from legacy_workers import SHARE, measure, process, worker
from workers import free_port, run_wrk

#: Seconds after the warm-up: past ``finished_stream_retention`` (5 s), so the streams
#: of the counted calls are discarded during the count, as in a steady state.
SETTLE = 6.0


def commandstats(port: int) -> dict[str, int]:
    """Calls per command from ``INFO commandstats`` of the Redis at ``port``."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"INFO commandstats\r\n")
        data = b""
        while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2:
            data += sock.recv(65536)
        header, _, rest = data.partition(b"\r\n")
        length = int(header[1:])
        while len(rest) < length:
            rest += sock.recv(65536)
    calls = {}
    for line in rest.decode().splitlines():
        if line.startswith("cmdstat_"):
            name, fields = line.removeprefix("cmdstat_").split(":", 1)
            calls[name] = int(fields.split(",")[0].removeprefix("calls="))
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=8, help="seconds counted")
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--connections", type=int, default=10)
    options = parser.parse_args()
    for program in ("wrk", "redis-server"):
        if shutil.which(program) is None:
            raise SystemExit(f"{program} is not installed (apt-get install {program})")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        script = Path(tmp) / "call.lua"
        script.write_text(LUA)
        redis_port, port = free_port(), free_port()
        redis = ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1"]
        stack.enter_context(process([*redis, "--save", "", "--appendonly", "no"], redis_port))
        url = f"redis://127.0.0.1:{redis_port}/0"
        stack.enter_context(process(worker(port, url), port, SHARE))
        sessions = [open_session(port) for _ in range(options.sessions)]
        measure(port, sessions, 1, options.connections, script)  # warm up: every session
        time.sleep(SETTLE)
        before = commandstats(redis_port)
        served = run_wrk(port, options.duration, options.connections, script)["requests"]
        after = commandstats(redis_port)
    counted = {name: calls - before.get(name, 0) for name, calls in after.items()}
    print(f"Redis commands per legacy tools/call ({served:.0f} calls, one worker sharing):")
    for name, calls in sorted(counted.items()):
        if name != "info" and calls / served >= 0.005:
            print(f"  {name:10s} {calls / served:6.2f}")


if __name__ == "__main__":
    main()
