"""The ``mcp-actors`` command as a user runs it: serve, call, inspect, and fail clearly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import h11
import pytest
import trio

from mcp_actors.auth.client import FileTokenStore, OAuthClient
from mcp_actors.cli import _parser
from mcp_actors.cli_auth import oauth_for
from mcp_actors.client.targets import parse_target

from conftest import SAMPLE, TESTS

SERVE_SAMPLE = f"stdio:{sys.executable} -m mcp_actors.cli run {SAMPLE}"


async def mcp_actors(*args: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(60):
        return await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", *args],
            cwd=str(TESTS),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )


def output(result: subprocess.CompletedProcess[bytes]) -> Any:
    return json.loads(result.stdout)


async def test_call_prints_the_result_and_progress_on_stderr() -> None:
    result = await mcp_actors("call", SERVE_SAMPLE, "slow", '{"steps": 2}', "--raw")
    assert result.returncode == 0, result.stderr
    printed = output(result)  # the modern era's result: resultType, serverInfo in _meta
    assert printed["content"] == [{"type": "text", "text": "done after 2 steps"}]
    assert printed["resultType"] == "complete"
    assert b"progress 1/2 step 1" in result.stderr
    assert b"progress 2/2 step 2" in result.stderr
    legacy = await mcp_actors(
        "call", "--era", "legacy", SERVE_SAMPLE, "slow", '{"steps": 2}', "--raw"
    )
    assert output(legacy) == {"content": [{"type": "text", "text": "done after 2 steps"}]}


async def test_call_in_process_with_module_attr() -> None:
    result = await mcp_actors("call", SAMPLE, "add", '{"a": 4, "b": 5}', "--raw")
    assert result.returncode == 0, result.stderr
    assert output(result)["structuredContent"] == {"result": 9}


async def test_a_tool_error_exits_1_with_the_result() -> None:
    result = await mcp_actors("call", SAMPLE, "fail", '{"message": "bad day"}', "--raw")
    assert result.returncode == 1
    assert output(result)["isError"] is True
    assert "bad day" in output(result)["content"][0]["text"]


async def test_an_unknown_tool_exits_2_with_the_servers_message() -> None:
    result = await mcp_actors("call", SAMPLE, "nosuch")
    assert result.returncode == 2
    assert result.stdout == b""
    assert b"Unknown tool: nosuch" in result.stderr


async def test_a_server_that_dies_exits_2_with_a_clear_message() -> None:
    dying = f"stdio:{sys.executable} -c 'import sys; sys.exit(3)'"
    result = await mcp_actors("call", dying, "add")
    assert result.returncode == 2
    assert b"connection closed before server/discover was answered" in result.stderr


async def test_bad_targets_and_arguments_exit_2() -> None:
    missing = await mcp_actors("call", "no_such_module:server", "add")
    assert missing.returncode == 2
    assert b"cannot import 'no_such_module'" in missing.stderr
    not_json = await mcp_actors("call", SAMPLE, "add", "{oops")
    assert not_json.returncode == 2
    assert b"not valid JSON" in not_json.stderr


async def test_inspect_prints_info_capabilities_and_tools() -> None:
    result = await mcp_actors("inspect", SERVE_SAMPLE)
    assert result.returncode == 0, result.stderr
    report = output(result)
    assert report["serverInfo"] == {"name": "sample", "version": "1.2.3"}
    assert (report["era"], report["protocolVersion"]) == ("modern", "2026-07-28")
    assert "add" in {tool["name"] for tool in report["tools"]}
    pinned = output(await mcp_actors("inspect", "--protocol-version", "2025-06-18", SERVE_SAMPLE))
    assert (pinned["era"], pinned["protocolVersion"]) == ("legacy", "2025-06-18")
    assert pinned["capabilities"]["tools"] == {"listChanged": True}


async def test_inspect_lists_resources_templates_and_prompts() -> None:
    result = await mcp_actors("inspect", "servers.features:server")
    assert result.returncode == 0, result.stderr
    report = output(result)
    assert report["resources"] and all("uri" in resource for resource in report["resources"])
    assert report["resourceTemplates"]
    assert all("uriTemplate" in template for template in report["resourceTemplates"])
    assert report["prompts"] and all("name" in prompt for prompt in report["prompts"])


async def test_run_serves_stdio_and_keeps_stdout_clean() -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
        },
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines).encode()
    with trio.fail_after(60):
        result = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "run", "mcp_actors.examples.demo:server"],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
        )
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[1]["result"]["structuredContent"] == {"result": 3}


def test_url_targets_get_an_oauth_client_from_the_options(tmp_path: Path) -> None:
    url = "https://mcp.example.com/mcp"
    tokens = tmp_path / "tokens.json"
    options = _parser().parse_args(
        ["call", url, "t", "--no-browser", "--token-file", str(tokens), "--client-id", "app"]
    )
    oauth = oauth_for(options, parse_target(url))
    assert isinstance(oauth, OAuthClient)
    assert isinstance(oauth.store, FileTokenStore) and oauth.store.path == tokens
    assert oauth.registration.client_id == "app"
    assert not oauth.grant.user_agent.open_browser  # type: ignore[attr-defined]
    assert oauth_for(_parser().parse_args(["inspect", url, "--no-auth"]), parse_target(url)) is None
    stdio = "stdio:python server.py"
    assert oauth_for(_parser().parse_args(["inspect", stdio]), parse_target(stdio)) is None
    assert not tokens.exists()  # nothing is written until a server asks for a token


def write_gateway(folder: Path) -> Path:
    """A gateway.toml mounting the sample server (tools only) as ``up``, launched over stdio."""
    gateway = folder / "gateway.toml"
    gateway.write_text(
        f"[upstreams.up]\ncommand = {sys.executable!r}\n"
        f'args = ["-m", "mcp_actors.cli", "run", {SAMPLE!r}]\ncwd = {str(TESTS)!r}\n'
    )
    return gateway


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("served", ["in-process", "stdio"])
async def test_inspect_of_a_gateway_declares_and_lists_what_its_upstream_offers(
    tmp_path: Path, served: str, era: str
) -> None:
    """A gateway mounting a tools-only server declares tools only (served, in-process
    or launched, it connects its upstream before the client's first request), and
    inspect succeeds."""
    gateway = str(write_gateway(tmp_path))
    target = (
        gateway
        if served == "in-process"
        else f"stdio:{sys.executable} -m mcp_actors.cli run {gateway}"
    )
    result = await mcp_actors("inspect", "--era", era, target)
    assert result.returncode == 0, result.stderr
    report = output(result)
    assert "up_add" in {tool["name"] for tool in report["tools"]}
    assert report["era"] == era
    assert "resources" not in report["capabilities"] and "resources" not in report
    assert "prompts" not in report["capabilities"] and "prompts" not in report


async def test_every_command_takes_a_gateway_file_as_run_does(tmp_path: Path) -> None:
    gateway = write_gateway(tmp_path)
    called = await mcp_actors("call", str(gateway), "up_add", '{"a": 2, "b": 3}', "--raw")
    assert called.returncode == 0, called.stderr
    assert output(called)["structuredContent"] == {"result": 5}
    configured = await mcp_actors("config", str(gateway), "--client", "claude")
    assert configured.returncode == 0, configured.stderr
    (entry,) = output(configured)["mcpServers"].values()
    assert entry["args"][-2:] == ["run", str(gateway.resolve())] and "env" not in entry
    broken = tmp_path / "broken.toml"
    broken.write_text("[upstreams.x]\n")
    for command in ("inspect", "call", "config"):
        args = [command, str(broken)] + (["tool"] if command == "call" else [])
        failed = await mcp_actors(*args)
        assert failed.returncode == 2
        assert b"bad gateway config" in failed.stderr and b"Traceback" not in failed.stderr


class NobodyLogsIn:
    """An MCP endpoint at ``/mcp`` that answers ``401`` until authorized, and its
    authorization server (the same origin: it publishes no resource metadata), whose
    login page nobody visits."""

    def __init__(self) -> None:
        self.origin = ""

    async def serve(self, *, task_status: trio.TaskStatus[str]) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.origin = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}"
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, self._answer, listeners)
            task_status.started(f"{self.origin}/mcp")

    async def _answer(self, stream: trio.SocketStream) -> None:
        async with stream:
            protocol = h11.Connection(h11.SERVER)
            while True:
                event = protocol.next_event()
                if event is h11.NEED_DATA:
                    data = await stream.receive_some()
                    if not data:
                        return
                    protocol.receive_data(data)
                    continue
                if isinstance(event, h11.Request):
                    status, headers, body = self._response(event.target.decode())
                elif isinstance(event, h11.EndOfMessage):  # the request's body was read
                    head = h11.Response(status_code=status, headers=headers)
                    for reply in (head, h11.Data(data=body), h11.EndOfMessage()):
                        await stream.send_all(protocol.send(reply) or b"")
                    return

    def _response(self, target: str) -> tuple[int, list[tuple[str, str]], bytes]:
        if target == "/.well-known/oauth-authorization-server":
            metadata = {
                "issuer": self.origin,
                "authorization_endpoint": f"{self.origin}/authorize",
                "token_endpoint": f"{self.origin}/token",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }
            body = json.dumps(metadata).encode()
            return 200, [("content-type", "application/json"), *_sized(body)], body
        if target == "/mcp":
            return 401, [("www-authenticate", "Bearer"), *_sized(b"")], b""
        return 404, list(_sized(b"")), b""


def _sized(body: bytes) -> list[tuple[str, str]]:
    return [("content-length", str(len(body))), ("connection", "close")]


async def test_a_login_nobody_completes_fails_within_the_timeout_and_says_so(
    tmp_path: Path,
) -> None:
    """``--timeout`` bounds the wait for the browser's answer too; the failure says the
    authorization was not completed (exit code 5), not that the server is unreachable."""
    endpoint = NobodyLogsIn()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(endpoint.serve)
        result = await mcp_actors(
            "call",
            url,
            "add",
            "--no-browser",
            "--client-id",
            "app",
            "--token-file",
            str(tmp_path / "tokens.json"),
            "--timeout",
            "1",
        )
        nursery.cancel_scope.cancel()
    assert result.returncode == 5, result.stderr
    assert result.stdout == b""
    last = result.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("mcp-actors: authorization was not completed"), last
    assert "no authorization response within 1 s" in last
    assert "cannot reach" not in result.stderr.decode()
    assert result.stderr.count(b"Open this URL to authorize") == 1  # asked once
