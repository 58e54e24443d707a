"""Legacy-session ``tools/call`` throughput: 1 worker, 2 workers with affinity, 2 without.

A 2025-11-25 session lives in a worker unless the workers share sessions through
Redis (``share_sessions``: see docs/deployment.md). This measures what sharing costs,
and what it buys, with ``wrk`` (Debian's load generator in C) posting ``tools/call add``
over ``--sessions`` legacy sessions opened beforehand (each request names one of them,
in turn), ``--connections`` keep-alive connections:

- ``1-worker``: one ``mcp-actors run`` process, nothing shared (the floor);
- ``affinity``: two workers with session-id prefixes behind ``deploy/nginx.conf``, which
  sends each session's requests to the worker that holds it (Redis on, sessions not shared);
- ``any-worker``: two workers sharing sessions behind ``deploy/nginx-any-worker.conf``
  (round robin: a session's requests land on both);
- ``workers-2``: ``--workers 2`` on one port, sharing sessions (the kernel spreads
  connections; no nginx).

The server is ``benchmarks/servers/ours.py`` (its ``add`` tool). Rounds alternate the
order of the setups; figures are medians over rounds. Everything listens on 127.0.0.1;
``redis-server`` and ``nginx`` come from Debian. On a 2-core machine wrk, nginx, Redis
and the workers share the two cores: read the ratios, not the absolute figures.

Usage::

    python benchmarks/legacy_workers.py                         # 5 rounds x 5 s
    python benchmarks/legacy_workers.py --rounds 7 --duration 8 --sessions 50
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from http_compare import LUA, open_session  # benchmarks/: the same requests and sessions
from workers import free_port, run_wrk  # the same wrk run and RESULT line

HERE = Path(__file__).resolve().parent
SERVER = HERE / "servers" / "ours.py"
DEPLOY = HERE.parent / "deploy"
SETUPS = ("1-worker", "affinity", "any-worker", "workers-2")
SHARE = {"MCP_ACTORS_SHARED_SHARE_SESSIONS": "true"}


def wait_accepting(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket_to(port):
            return
        time.sleep(0.1)
    raise SystemExit(f"nothing accepts on port {port}")


@contextlib.contextmanager
def socket_to(port: int) -> Iterator[None]:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=1):
        yield


def stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def process(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    started = subprocess.Popen(
        command,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_accepting(port)
        yield
    finally:
        stop(started)


def worker(port: int, redis: str | None, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "mcp_actors.cli", "run", str(SERVER)]
    command += ["--transport", "http", "--port", str(port), *extra]
    return command + (["--redis-url", redis] if redis else [])


def nginx_conf(directory: Path, shipped: str, listen: int, ports: list[int]) -> Path:
    """The shipped configuration with this run's ports (as the tests render it)."""
    text = (DEPLOY / shipped).read_text()
    text = text.replace("127.0.0.1:8080", f"127.0.0.1:{listen}")
    text = text.replace("127.0.0.1:9001", f"127.0.0.1:{ports[0]}")
    text = text.replace("127.0.0.1:9002", f"127.0.0.1:{ports[1]}")
    conf = directory / shipped
    conf.write_text(text)
    return conf


@contextlib.contextmanager
def setup(name: str, redis: str, directory: Path) -> Iterator[int]:
    """Start one setup; yield the port clients use."""
    with contextlib.ExitStack() as stack:
        if name in ("1-worker", "workers-2"):
            port = free_port()
            if name == "1-worker":
                stack.enter_context(process(worker(port, None), port))
            else:
                stack.enter_context(process(worker(port, redis, "--workers", "2"), port, SHARE))
            yield port
            return
        ports = [free_port(), free_port()]
        for n, port in enumerate(ports, 1):
            if name == "affinity":
                command = worker(port, redis, "--session-prefix", f"w{n}.")
                stack.enter_context(process(command, port))
            else:
                stack.enter_context(process(worker(port, redis), port, SHARE))
        listen = free_port()
        shipped = "nginx.conf" if name == "affinity" else "nginx-any-worker.conf"
        prefix = directory / name
        prefix.mkdir(exist_ok=True)
        conf = nginx_conf(prefix, shipped, listen, ports)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        command = [nginx, "-p", str(prefix), "-e", "stderr", "-g", "daemon off;", "-c", str(conf)]
        stack.enter_context(process(command, listen))
        yield listen


def measure(port: int, sessions: list[str], seconds: int, connections: int, script: Path) -> float:
    os.environ["MCP_SIDS"] = ",".join(sessions)
    os.environ["MCP_VERSION"] = "2025-11-25"
    return float(run_wrk(port, seconds, connections, script)["rps"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=int, default=5, help="seconds per run")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"of {', '.join(SETUPS)}")
    options = parser.parse_args()
    chosen = [name for name in options.setups.split(",") if name]
    unknown = set(chosen) - set(SETUPS)
    if unknown:
        raise SystemExit(f"unknown setup(s): {', '.join(sorted(unknown))}")
    for program in ("wrk", "redis-server"):
        if shutil.which(program) is None:
            raise SystemExit(f"{program} is not installed (apt-get install {program})")
    figures: dict[str, list[float]] = {name: [] for name in chosen}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        directory = Path(tmp)
        script = directory / "call.lua"
        script.write_text(LUA)
        redis_port = free_port()
        redis_command = [
            "redis-server",
            "--port",
            str(redis_port),
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        stack.enter_context(process(redis_command, redis_port))
        redis = f"redis://127.0.0.1:{redis_port}/0"
        runs: dict[str, Callable[[], float]] = {}
        for name in chosen:
            port = stack.enter_context(setup(name, redis, directory))
            sessions = [open_session(port) for _ in range(options.sessions)]
            runs[name] = lambda p=port, s=sessions, d=options.duration: measure(  # type: ignore[misc]
                p, s, d, options.connections, script
            )
            runs[name]()  # warm up (a worker restores sessions it has not served yet)
        for round_number in range(options.rounds):
            order = chosen if round_number % 2 == 0 else chosen[::-1]
            for name in order:
                figures[name].append(runs[name]())
                print(
                    f"round {round_number + 1}: {name:10s} {figures[name][-1]:8.0f} calls/s",
                    file=sys.stderr,
                )
    base = statistics.median(figures[chosen[0]])
    print(
        f"legacy-session tools/call, {options.sessions} sessions, {options.connections}"
        f" connections, median of {options.rounds} rounds x {options.duration} s:"
    )
    for name in chosen:
        runs_of = figures[name]
        median = statistics.median(runs_of)
        print(
            f"  {name:10s} {median:8.0f} calls/s  ({min(runs_of):.0f}-{max(runs_of):.0f})"
            f"  {median / base:.2f}x {chosen[0]}"
        )


if __name__ == "__main__":
    main()
