"""Helpers of the scale-out tests: a real ``redis-server`` and ``mcp-actors run`` processes,
and the raw Streamable HTTP exchanges they drive.

Everything listens on 127.0.0.1. ``redis-server`` is Debian's (``.ci/run`` installs
it); a test that needs it fails, not skips, when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from mcp_actors.transports.http.sse import ServerSentEvent, SSEDecoder

SERVERS = Path(__file__).parent / "servers"
SCALE_OUT_SERVER = str(SERVERS / "scale_out.py")
LEGACY = "2025-11-25"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
#: What workers of one deployment share for requestState (two keys: rotation).
STATE_KEYS = '["' + "11" * 32 + '", "' + "22" * 32 + '"]'


def request(request_id: int | None, method: str, params: dict[str, Any]) -> bytes:
    """A JSON-RPC request body (a notification when ``request_id`` is None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return json.dumps(message).encode()


async def events_of(response: httpx.Response) -> list[ServerSentEvent]:
    """Every server-sent event of ``response``, to its end."""
    decoder = SSEDecoder()
    events: list[ServerSentEvent] = []
    async for chunk in response.aiter_bytes():
        events.extend(decoder.feed(chunk))
    return events


async def open_legacy_session(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str]
) -> dict[str, str]:
    """Initialize a 2025-11-25 session at ``url``; the headers its later requests carry."""
    init = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    opened = await http.post(url, content=request(1, "initialize", init), headers=headers)
    assert opened.status_code == 200, opened.text
    session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
    initialized = request(None, "notifications/initialized", {})
    acknowledged = await http.post(url, content=initialized, headers={**headers, **session})
    assert acknowledged.status_code == 202, acknowledged.text
    return session


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def need(program: str) -> str:
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin")
    assert found, f"{program} is not installed (bash .ci/run installs it from Debian)"
    return found


async def accepting(port: int, seconds: float = 10.0) -> None:
    """Return once something accepts connections on loopback ``port`` (fails after ``seconds``)."""
    with trio.fail_after(seconds):
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
            except OSError:
                await trio.sleep(0.05)
                continue
            await stream.aclose()
            return


@asynccontextmanager
async def redis_server() -> AsyncIterator[str]:
    """A throwaway ``redis-server`` on loopback (no persistence); yields its URL."""
    port = free_port()
    command = [need("redis-server"), "--port", str(port), "--bind", "127.0.0.1"]
    command += ["--save", "", "--appendonly", "no", "--loglevel", "warning"]
    async with trio.open_nursery() as nursery:
        process = await nursery.start(trio.run_process, command)
        try:
            await accepting(port)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()


@attrs.define
class Running:
    """An ``mcp-actors run`` process and the URL it announced."""

    process: trio.Process
    url: str


@asynccontextmanager
async def mcp_actors_run(
    *arguments: str, env: Mapping[str, str] | None = None
) -> AsyncIterator[Running]:
    """``mcp-actors run ARGUMENTS`` (HTTP, port 0); yields once it announced its URL.
    Stopped with SIGTERM at the end (then killed if it lingers)."""
    command = [sys.executable, "-m", "mcp_actors.cli", "run", *arguments]
    environment = {**os.environ, **(env or {})}
    process = await trio.lowlevel.open_process(command, stderr=subprocess.PIPE, env=environment)
    assert process.stderr is not None
    seen = b""
    try:
        with trio.fail_after(30):
            while b"serving" not in seen or not seen.endswith(b"\n"):
                chunk = await process.stderr.receive_some()
                assert chunk, f"mcp-actors run exited: {seen.decode(errors='replace')}"
                seen += chunk
        line = next(x for x in seen.decode().splitlines() if "serving" in x)
        url = line.split(" at ", 1)[1].split()[0]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_drain, process.stderr)
            yield Running(process, url)
            nursery.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            with trio.move_on_after(15):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def _drain(stream: trio.abc.ReceiveStream) -> None:
    while await stream.receive_some():
        pass


NGINX_CONF = Path(__file__).parent.parent / "deploy" / "nginx.conf"
DEPLOYMENT_PAGE = Path(__file__).parent.parent / "docs" / "deployment.md"
#: Round robin, no affinity: for workers sharing their sessions.
NGINX_ANY_WORKER_CONF = NGINX_CONF.with_name("nginx-any-worker.conf")


def documented_nginx_command(conf: str = "nginx.conf") -> str:
    """The nginx command line docs/deployment.md documents for ``deploy/<conf>``, as written."""
    text = DEPLOYMENT_PAGE.read_text()
    lines = [
        line
        for line in text.splitlines()
        if line.startswith("nginx ") and f'/deploy/{conf}"' in line
    ]
    assert len(lines) == 1, lines
    return lines[0]


def render_nginx_conf(
    directory: Path, listen: int, workers: list[int], shipped_conf: Path = NGINX_CONF
) -> Path:
    """The shipped ``deploy/nginx.conf`` (or ``shipped_conf``) with test ports (nothing
    else changed), at ``directory/deploy/nginx.conf``: where the documented command,
    run from ``directory``, finds it."""
    shipped = shipped_conf.read_text()
    assert len(workers) == 2, "deploy/nginx.conf names two workers"
    site = shipped.replace("127.0.0.1:8080", f"127.0.0.1:{listen}")
    site = site.replace("127.0.0.1:9001", f"127.0.0.1:{workers[0]}")
    site = site.replace("127.0.0.1:9002", f"127.0.0.1:{workers[1]}")
    conf = directory / "deploy" / shipped_conf.name
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(site)
    return conf


@asynccontextmanager
async def nginx(
    directory: Path, workers: list[int], shipped_conf: Path = NGINX_CONF
) -> AsyncIterator[str]:
    """nginx with the shipped configuration (or ``shipped_conf``) in front of ``workers``
    (ports), started with the command line docs/deployment.md documents, run by bash
    from ``directory``; yields its URL."""
    listen = free_port()
    render_nginx_conf(directory, listen, workers, shipped_conf)
    path = f"{os.path.dirname(need('nginx'))}:{os.environ['PATH']}"
    environment = {**os.environ, "PATH": path, "TMPDIR": str(directory)}  # mktemp -d: in here
    command = ["bash", "-c", documented_nginx_command(shipped_conf.name)]
    process = await trio.lowlevel.open_process(
        command, cwd=directory, env=environment, start_new_session=True
    )
    try:
        await accepting(listen)
        yield f"http://127.0.0.1:{listen}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # bash and nginx's processes
        with trio.move_on_after(15):
            await process.wait()
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
