"""Every way the ``mcp-actors`` command fails: exactly one line on stderr, a documented exit code.

The codes are those of :mod:`mcp_actors.cli_errors`. A tool's exception is logged
by the server with its traceback (``--log-level`` sets the threshold), and
``Server(mask_errors=True)`` keeps its text from the client.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from mcp_actors import McpError, Server, StdioTarget, open_client
from mcp_actors.cli_dev import NODE_MISSING
from mcp_actors.cli_errors import (
    EXIT_CANNOT_LISTEN,
    EXIT_FAILURE,
    EXIT_MISSING_EXTRA,
    EXIT_TOOL_ERROR,
)
from mcp_actors.server.hosting import open_hosted

from conftest import TESTS

INSTALLED = "everything, filesystem, skills"


def cli(
    *args: str, python: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the command from tests/ (``python``: code run before ``main``, e.g. hiding a module)."""
    prelude = f"import sys; {python}; from mcp_actors.cli import main; sys.exit(main())"
    command = ["-c", prelude] if python else ["-m", "mcp_actors.cli"]
    return subprocess.run(
        [sys.executable, *command, *args],
        cwd=str(TESTS),
        env=None if env is None else {**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def fails(result: subprocess.CompletedProcess[str], code: int, line: str) -> None:
    assert (result.returncode, result.stderr) == (code, f"mcp-actors: {line}\n")
    assert result.stdout == ""


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_a_port_in_use(busy_port: int, transport: str) -> None:
    result = cli("run", "servers.sample", "--transport", transport, "--port", str(busy_port))
    fails(
        result,
        EXIT_CANNOT_LISTEN,
        f"cannot listen on 127.0.0.1:{busy_port}: address already in use"
        " (choose another --port, or --port 0 for any free one)",
    )


REDIS = ("--transport", "http", "--port", "0", "--redis-url", "redis://127.0.0.1:9/0")


@pytest.mark.parametrize(
    ("hidden", "args", "extra", "needed_by"),
    [
        (
            "httptools",
            ("run", "servers.sample", "--transport", "http"),
            "http",
            "the http transport",
        ),
        (
            "trio_websocket",
            ("run", "servers.sample", "--transport", "ws"),
            "ws",
            "the ws transport",
        ),
        ("httpx", ("call", "http://127.0.0.1:9/mcp", "add"), "http", "the http transport"),
        ("coredis", ("run", "servers.sample", *REDIS), "redis", "sharing state through Redis"),
    ],
)
def test_a_missing_extra_names_what_to_install(
    hidden: str, args: tuple[str, ...], extra: str, needed_by: str
) -> None:
    result = cli(*args, python=f"sys.modules[{hidden!r}] = None")
    fails(
        result,
        EXIT_MISSING_EXTRA,
        f"{needed_by} needs {hidden!r}, which is not installed: pip install 'mcp-actors[{extra}]'",
    )


@pytest.mark.parametrize(
    ("target", "line"),
    [
        (
            "nosuch",
            f"no plugin named 'nosuch' is installed (installed: {INSTALLED}),"
            " nor a module by that name",
        ),
        ("nosuch:server", "cannot import 'nosuch': no module named 'nosuch'"),
        ("nosuch.py", "no such file: nosuch.py"),
        ("servers.sample:nope", "servers.sample has no attribute 'nope'"),
        ("servers", "servers has none of server, mcp, app; name the server as servers:ATTR"),
        (
            "mcp_actors.examples.demo:add",
            "mcp_actors.examples.demo:add is an async function, not a Server"
            " (nor a function returning one)",
        ),
        (
            "mcp_actors.examples.demo:Forecast",
            "mcp_actors.examples.demo:Forecast is not a Server, and calling it to make one"
            " failed: TypeError: Missing required argument 'city'",
        ),
        ("mcp_actors.examples.demo:LATER", "mcp_actors.examples.demo has no attribute 'LATER'"),
        (
            "servers.sample:Point",
            "servers.sample:Point is not a Server, and calling it to make"
            " one failed: TypeError: Missing required argument 'x'",
        ),
    ],
)
def test_a_bad_target(target: str, line: str) -> None:
    fails(cli("run", target), EXIT_FAILURE, line)


def test_a_parameter_type_we_cannot_decode_names_tool_and_parameter(tmp_path: Path) -> None:
    script = tmp_path / "bad_hint.py"
    script.write_text(
        "from mcp_actors import Server\n"
        "server = Server('bad')\n"
        "class Thing:\n"
        "    pass\n"
        "@server.tool\n"
        "async def use(thing: Thing) -> str:\n"
        "    return 'never'\n"
    )
    result = cli("run", str(script))
    assert result.returncode == EXIT_FAILURE
    assert result.stderr.startswith(
        f"mcp-actors: cannot import {script}: TypeError: tool 'use', parameter 'thing':"
        " Thing is not a supported argument type (supported: str, int,"
    )
    assert result.stderr.endswith(f" ({script}:5)\n")
    assert result.stderr.count("\n") == 1


def test_an_exception_while_importing_points_at_the_line(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("import os\n\nundefined_name + 1\n")
    fails(
        cli("run", str(script)),
        EXIT_FAILURE,
        f"cannot import {script}: NameError: name 'undefined_name' is not defined ({script}:3)",
    )


def test_a_tool_exception_is_logged_with_its_traceback() -> None:
    result = cli("call", "servers.sample", "fail", '{"message": "bad day"}')
    assert result.returncode == EXIT_TOOL_ERROR
    assert "ERROR mcp_actors.tools: tool 'fail' failed\nTraceback (most recent call last):" in (
        result.stderr
    )
    assert "RuntimeError: bad day" in result.stderr
    quiet = cli("call", "--log-level", "critical", "servers.sample", "fail")
    assert quiet.returncode == EXIT_TOOL_ERROR
    assert quiet.stderr == ""


async def test_exception_text_reaches_the_client_only_from_an_unmasked_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for mask in (False, True):
        server = Server("masked", mask_errors=mask)

        @server.tool
        async def leak() -> str:
            raise RuntimeError("password=hunter2")

        @server.resource("secret://x")
        async def secret() -> str:
            raise RuntimeError("password=hunter2")

        async with open_client(server) as client:
            result = await client.call_tool("leak")
            text = result.content[0].text  # type: ignore[union-attr]
            with pytest.raises(Exception) as resource_error:
                await client.read_resource("secret://x")
        if mask:
            assert text == "Tool 'leak' failed: internal error (details are in the server's log)"
        else:
            assert text == "Tool 'leak' failed: RuntimeError: password=hunter2"
        assert isinstance(resource_error.value, McpError)
        assert (resource_error.value.code, resource_error.value.message) == (
            -32603,
            "Internal error",
        )
    logged = [record for record in caplog.records if record.exc_info]
    assert len(logged) == 4  # every failure, masked or not, logged with its traceback


def test_dev_without_node_says_how_to_install_it(tmp_path: Path) -> None:
    fails(
        cli("dev", "servers.sample", env={"PATH": str(tmp_path)}), EXIT_MISSING_EXTRA, NODE_MISSING
    )
    assert NODE_MISSING.startswith("the MCP Inspector runs on Node.js, and npx is not on PATH")


async def test_dev_runs_the_inspector_on_a_command_that_serves_the_target(tmp_path: Path) -> None:
    recorded = tmp_path / "npx-args"
    fake_npx = tmp_path / "npx"
    fake_npx.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {recorded}\n')
    fake_npx.chmod(0o755)
    path = f"{tmp_path}{os.pathsep}{os.environ['PATH']}"
    result = cli("dev", "servers/sample.py", env={"PATH": path})
    assert result.returncode == 0, result.stderr
    args = recorded.read_text().splitlines()
    sample = str(TESTS / "servers" / "sample.py")
    assert args == [
        "-y",
        "@modelcontextprotocol/inspector",
        sys.executable,
        "-m",
        "mcp_actors.cli",
        "run",
        sample,
    ]
    # what the Inspector would launch serves the server over stdio
    target = StdioTarget(args[2], args[3:], cwd=str(tmp_path))
    with trio.fail_after(30):
        async with open_client(target) as client:
            assert client.server_info.name == "sample"


@pytest.mark.parametrize("transport", ["http", "sse", "ws"])
@pytest.mark.parametrize("port", ["-1", "65536", "99999", "80x", ""])
def test_a_port_out_of_range_is_refused_before_anything_starts(transport: str, port: str) -> None:
    result = cli("run", "servers.sample", "--transport", transport, "--port", port)
    fails(
        result,
        EXIT_FAILURE,
        f"argument --port: expected a port number 0-65535 (0: any free port), got {port!r}"
        " (see mcp-actors run --help)",
    )


@pytest.mark.parametrize("transport", ["http", "ws"])
async def test_the_python_api_refuses_a_port_out_of_range(transport: str) -> None:
    with pytest.raises(ValueError, match=r"^expected a port number 0-65535 \(0: any free port\)"):
        async with open_hosted(Server("s"), transport, port=65536):  # type: ignore[arg-type]
            pass


def gateway_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "gateway.toml"
    path.write_text(text + '[upstreams.local]\nserver = "servers.sample:server"\n')
    return str(path)


def test_otel_in_a_gateway_file_without_the_extra_names_what_to_install(tmp_path: Path) -> None:
    gateway = gateway_file(tmp_path, "otel = true\n")
    result = cli("run", gateway, python="sys.modules['opentelemetry'] = None")
    fails(
        result,
        EXIT_MISSING_EXTRA,
        "OpenTelemetry tracing needs 'opentelemetry', which is not installed:"
        " pip install 'mcp-actors[otel]'",
    )


def test_every_problem_of_a_gateway_file_is_on_one_line(tmp_path: Path) -> None:
    gateway = gateway_file(tmp_path, 'name = 3\ncolour = "blue"\n[rate_limit]\nrate = -1\n')
    fails(
        cli("run", gateway),
        EXIT_FAILURE,
        f"bad gateway config {gateway}: name: expected a string, got int 3;"
        " top level: extra fields found (colour); rate_limit: rate must be positive and finite",
    )
