"""Servers as scripts: ``python FILE``, ``python -m MODULE``, ``mcp-actors run FILE.py``,
``server.run("http")`` and ``mcp-actors config``, each driven by a real client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import Client as SdkClient
from mcp import StdioServerParameters

from mcp_actors import StdioTarget, open_client

from conftest import TESTS

ROOT = TESTS.parent
EXAMPLE = ROOT / "examples" / "weather.py"


async def test_python_example_script_serves_the_sdk_client_over_stdio() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(EXAMPLE)], cwd=str(TESTS))
    with trio.fail_after(30):
        async with SdkClient(params, mode="legacy") as client:
            assert client.server_info is not None and client.server_info.name == "weather"
            result = await client.call_tool("forecast", {"city": "Lima"})
            assert result.structured_content == {
                "city": "Lima",
                "temperature_c": 21.5,
                "conditions": "sunny",
            }
            prompts = await client.list_prompts()
            assert [prompt.name for prompt in prompts.prompts] == ["packing_list"]


@pytest.mark.parametrize(
    "args",
    [
        ("-m", "mcp_actors.examples.demo"),  # python -m MODULE
        ("-m", "mcp_actors.cli", "run", str(EXAMPLE)),  # a file, its `server` found
        ("-m", "mcp_actors.cli", "run", f"{EXAMPLE}:server"),  # a file and an attribute
        ("-m", "mcp_actors.cli", "run", "servers.sample"),  # a module, `server` found
    ],
    ids=["python-m", "run-file", "run-file-attr", "run-module"],
)
async def test_each_way_of_naming_a_server_serves_it(args: tuple[str, ...]) -> None:
    target = StdioTarget(sys.executable, args, cwd=str(TESTS))
    with trio.fail_after(30):
        async with open_client(target) as client:
            tools = {tool.name for tool in await client.list_tools()}
            assert tools & {"add", "forecast"}


async def run_until_announced(*args: str) -> tuple[trio.Process, str]:
    """Start a server process and read the URL it announces on stderr."""
    process = await trio.lowlevel.open_process(
        [sys.executable, *args], cwd=str(TESTS), stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    seen = b""
    with trio.fail_after(30):
        while b"\n" not in seen:
            chunk = await process.stderr.receive_some()
            assert chunk, f"the server ended: {seen!r}"
            seen += chunk
    line = seen.decode().splitlines()[0]
    assert line.startswith("mcp-actors: serving "), line
    return process, line.rsplit(" at ", 1)[1]


async def interrupt(process: trio.Process) -> tuple[int, bytes]:
    """SIGINT (Ctrl-C) the process; its exit code and what else it wrote to stderr."""
    assert process.stderr is not None
    process.send_signal(signal.SIGINT)
    rest = b""
    with trio.fail_after(30):
        while chunk := await process.stderr.receive_some():
            rest += chunk
        code = await process.wait()
    return code, rest


@pytest.mark.parametrize(
    "args",
    [
        ("-c", "from servers.sample import server; server.run('http', port=0)"),
        ("-c", "from servers.sample import server; server.run('ws', port=0)"),
        ("-m", "mcp_actors.cli", "run", "servers.sample", "--transport", "http", "--port", "0"),
        ("-m", "mcp_actors.cli", "run", "servers.sample", "--transport", "ws", "--port", "0"),
    ],
    ids=["server.run-http", "server.run-ws", "cli-http", "cli-ws"],
)
async def test_network_servers_announce_their_url_and_stop_quietly_on_ctrl_c(
    args: tuple[str, ...],
) -> None:
    process, url = await run_until_announced(*args)
    try:
        with trio.fail_after(30):
            async with open_client(url) as client:
                result = await client.call_tool("add", {"a": 2, "b": 2})
                assert result.structured_content == {"result": 4}
    finally:
        code, rest = await interrupt(process)
    assert (code, rest) == (0, b"")  # no traceback


def config(*args: str) -> tuple[dict[str, Any], str]:
    result = subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", "config", *args],
        cwd=str(TESTS),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout), result.stderr


def test_config_prints_an_entry_for_each_client() -> None:
    claude, where = config(str(EXAMPLE))
    launch = claude["mcpServers"]["weather"]
    assert launch == {
        "command": sys.executable,
        "args": ["-m", "mcp_actors.cli", "run", str(EXAMPLE)],
    }
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    desktop = config_home / "Claude" / "claude_desktop_config.json"  # on Linux
    assert where == f"mcp-actors: paste into {desktop} (Claude Desktop)\n"
    cursor, _ = config("servers.sample", "--client", "cursor", "--name", "tests")
    assert cursor == {
        "mcpServers": {
            "tests": {
                "command": sys.executable,
                "args": ["-m", "mcp_actors.cli", "run", "servers.sample"],
                "env": {"PYTHONPATH": str(TESTS)},
            }
        }
    }
    vscode, _ = config(str(EXAMPLE), "--client", "vscode")
    assert vscode == {"servers": {"weather": {"type": "stdio", **launch}}}


async def test_the_configured_command_runs_the_server_from_anywhere(tmp_path: Path) -> None:
    entry, _ = config("servers.sample", "--client", "cursor")
    launch = entry["mcpServers"]["sample"]
    env = {**os.environ, **launch["env"]}
    target = StdioTarget(launch["command"], launch["args"], env=env, cwd=str(tmp_path))
    with trio.fail_after(30):
        async with open_client(target) as client:
            assert client.server_info.name == "sample"
