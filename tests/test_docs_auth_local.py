"""Every code block of ``docs/auth-local.md`` runs as written (and the OAuth page's example
advertises the scopes its tools need).

Each ``python`` block starts with ``# NAME.py`` and is saved as that file in a fresh folder.
Each ``bash`` block that serves (``mcp-actors run``, ``node server.mjs``, ``python
notes_oauth.py``) is started in the background and waited for (its "serving"/port line);
the others of a section run in order in one shell (so ``$TOKEN`` carries over), with this
environment's ``python`` and ``mcp-actors`` first on PATH. The page's ports (8000 for the
MCP server, 9000 for the authorization server) become free ones; the authorization
server's ``npm install`` is left out (done once for the test suite) and its ``node`` is
the suite's (:func:`servers.authorization_server.node_command`).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path

import pytest
import trio

from mcp_actors import open_client
from mcp_actors.client.targets import load_server

from conftest import TESTS
from servers.authorization_server import node_command, start_authorization_server

DOC = TESTS.parent / "docs" / "auth-local.md"
OAUTH_PAGE = TESTS.parent / "docs" / "oauth.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
SERVING = ("mcp-actors run", "server.mjs", "python notes_oauth.py")


def blocks(text: str) -> list[tuple[str, str]]:
    return [(language, code) for language, code in BLOCK.findall(text)]


def sections() -> list[list[tuple[str, str]]]:
    """The page's code blocks, by ``## `` section (the first section has none)."""
    parts = re.split(r"^## ", DOC.read_text(), flags=re.MULTILINE)
    return [blocks(part) for part in parts[1:]]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def environment() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PATH": path, "PYTHONPATH": ""}


@asynccontextmanager
async def background(command: str, cwd: Path, ready: bytes, stdout: bool) -> AsyncIterator[None]:
    """``command`` (bash) running until the block ends, once it printed ``ready``."""
    async with trio.open_nursery() as nursery:
        process: trio.Process = await nursery.start(
            partial(
                trio.run_process,
                ["bash", "-c", command if "&&" in command else f"exec {command}"],
                cwd=str(cwd),
                env=environment(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
                stderr=subprocess.DEVNULL if stdout else subprocess.PIPE,
                check=False,
            )
        )
        stream = process.stdout if stdout else process.stderr
        assert stream is not None
        seen = b""
        with trio.fail_after(60):
            while ready not in seen:
                chunk = await stream.receive_some(4096)
                assert chunk, f"{command!r} ended before it was ready: {seen!r}"
                seen += chunk
        try:
            yield
        finally:
            process.terminate()
            assert process.stdin is not None
            await process.stdin.aclose()


async def run_section(
    section: list[tuple[str, str]], folder: Path, adapt: Callable[[str], str]
) -> str:
    """Save the section's Python files, start its servers, run the rest: its output."""
    script: list[str] = []  # what runs once the servers are up, in one shell
    servers = 0
    async with AsyncExitStack() as stack:
        for language, code in section:
            code = adapt(code)
            if language == "python":
                name = code.splitlines()[0].removeprefix("# ").strip()
                (folder / name).write_text(code)
            elif any(serving in code for serving in SERVING):
                from_repo = "server.mjs" in code  # the authorization server: its port on stdout
                cwd, ready = (TESTS.parent, b'{"port"') if from_repo else (folder, b"serving")
                await stack.enter_async_context(background(code.strip(), cwd, ready, from_repo))
                servers += 1
            elif not servers:
                await run_bash(code, folder)  # before any server (keygen)
            else:
                script.append(code)
        return await run_bash("\n".join(script), folder)


async def run_bash(script: str, folder: Path) -> str:
    with trio.fail_after(120):
        done = await trio.run_process(
            ["bash", "-e", "-c", script],
            cwd=str(folder),
            env=environment(),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def adapter(mcp_port: int, as_port: int) -> Callable[[str], str]:
    node = node_command() or "node"

    def adapt(code: str) -> str:
        code = code.replace("8000", str(mcp_port)).replace("9000", str(as_port))
        code = code.replace("npm install --no-audit --no-fund && ", "")
        return code.replace(" node server.mjs", f" {node} server.mjs")

    return adapt


async def test_development_tokens_as_documented(tmp_path: Path) -> None:
    development = sections()[0]
    assert [language for language, _ in development] == [
        "bash", "python", "bash", "bash", "python", "bash", "python"
    ]  # fmt: skip
    output = await run_section(development, tmp_path, adapter(free_port(), free_port()))
    assert output.splitlines() == ["note 1, read by alice", "note 2, read by alice"]
    imported = await run_bash("python -c 'import notes_dev; print(notes_dev.auth.resource_name)'",
                              tmp_path)  # fmt: skip
    assert "development server" in imported


async def test_a_real_authorization_server_as_documented(tmp_path: Path) -> None:
    start_authorization_server().stop()  # Node and oidc-provider are there (else: fail in CI)
    real = sections()[1]
    assert [language for language, _ in real] == [
        "bash",
        "python",
        "bash",
        "bash",
        "python",
        "bash",
    ]
    output = await run_section(real, tmp_path, adapter(free_port(), free_port()))
    assert output.splitlines() == ["note 3, read by svc", "note 4, read by svc"]


async def test_the_oauth_page_example_advertises_the_scopes_its_tools_need(
    tmp_path: Path,
) -> None:
    (snippet,) = [code for language, code in blocks(OAUTH_PAGE.read_text())
                  if language == "python" and "ResourceServer(" in code]  # fmt: skip
    (tmp_path / "readme_oauth.py").write_text(snippet)
    try:
        server = load_server(str(tmp_path / "readme_oauth.py"))
        advertised = set(sys.modules["readme_oauth"].auth.scopes_supported)
        async with open_client(server) as client:
            tools = [tool.name for tool in await client.list_tools()]
        for tool in tools:  # a token for the advertised scopes can call every tool
            assert server.scopes_needed("tools/call", tool) <= advertised, tool
    finally:
        sys.modules.pop("readme_oauth", None)
        sys.path.remove(str(tmp_path))


@pytest.fixture(autouse=True)
def _no_stray_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_ACTORS_BEARER", raising=False)
