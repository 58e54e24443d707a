"""A gateway's life over stdio: it ends with its client, and takes its upstreams with it.

A desktop client launches a gateway (``mcp-actors run gateway.toml``, or a script
serving ``proxy(...)``) and, when it quits, closes the gateway's stdin. The gateway
must then exit like any server, within ``SessionConfig.eof_grace``, and stop the
upstream processes it launched: nothing may be left running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from conftest import TESTS

UPSTREAM_ARGS = ["-m", "mcp_actors.cli", "run", "servers.upstream:server"]
GATEWAY_TOML = f"""
[upstreams.up]
command = {sys.executable!r}
args = {json.dumps(UPSTREAM_ARGS)}
cwd = {str(TESTS)!r}
"""


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def request(id_: int, method: str, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()


INITIALIZE = request(
    1,
    "initialize",
    {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "desktop", "version": "0"},
    },
)
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
CALL = request(2, "tools/call", {"name": "up_add", "arguments": {"a": 1, "b": 2}})


@pytest.mark.parametrize("kind", ["gateway.toml", "proxy script"])
async def test_a_stdio_gateway_exits_when_its_client_closes_stdin(
    kind: str, tmp_path: Path
) -> None:
    if kind == "gateway.toml":
        (tmp_path / "gateway.toml").write_text(GATEWAY_TOML)
        command = [sys.executable, "-m", "mcp_actors.cli", "run", "gateway.toml"]
        call = CALL
    else:
        command = [sys.executable, "-m", "mcp_actors.cli", "run", str(TESTS / "servers/proxied.py")]
        call = CALL.replace(b"up_add", b"add")  # proxy(): unprefixed
    process = await trio.lowlevel.open_process(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=str(tmp_path if kind == "gateway.toml" else TESTS),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        with trio.fail_after(30):  # hang guard only
            await process.stdin.send_all(b"\n".join([INITIALIZE, INITIALIZED, call, b""]))
            received = b""
            while received.count(b"\n") < 2:
                chunk = await process.stdout.receive_some()
                assert chunk, "the gateway closed stdout before answering"
                received += chunk
            replies = [json.loads(line) for line in received.splitlines()]
            assert replies[1]["result"]["structuredContent"] == {"result": 3}
            (upstream,) = children(process.pid)  # launched for the call, still held
            await process.stdin.aclose()
            await process.wait()
        assert process.returncode == 0
        assert not alive(upstream)
    finally:
        if process.returncode is None:  # it hung: leave nothing running
            for pid in children(process.pid):
                os.kill(pid, signal.SIGKILL)
            process.kill()
            await process.wait()
