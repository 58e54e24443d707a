"""``mcp-actors install TARGET --client NAME``: the server written into each client's own file,
read back by that file's rules and launched as the client would; idempotent; backed up;
``--dry-run`` writes nothing; a file it cannot read is left alone. Every run has its own
home and project folders: the real home is never touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from mcp_actors import StdioTarget, open_client
from mcp_actors.cli_clients import CLIENTS

from conftest import TESTS

NOTES = str(TESTS / "servers" / "notes.py")
#: Where each client's file is, from the home and project folders (its documentation).
DEFAULT_FILES = {
    "claude": ".config/Claude/claude_desktop_config.json",  # Linux; see cli_clients
    "claude-code": "PROJECT/.mcp.json",
    "cursor": ".cursor/mcp.json",
    "vscode": "PROJECT/.vscode/mcp.json",
    "windsurf": ".codeium/windsurf/mcp_config.json",
    "gemini": ".gemini/settings.json",
}


def install(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("XDG_CONFIG_HOME",)}
    return subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", "install", *args],
        cwd=str(cwd or home / "PROJECT"),
        env={**env, "HOME": str(home), "APPDATA": str(home / "AppData")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "PROJECT").mkdir()
    return tmp_path


def entry_by_the_rules(config: Any, client: str, name: str) -> dict[str, Any]:
    """The entry ``name``, checked as the client reads its file: a JSON object whose
    servers key holds entries of a command, its arguments and environment strings (and
    ``type: stdio`` where the client wants it)."""
    assert isinstance(config, dict)
    servers = config["servers" if client == "vscode" else "mcpServers"]
    entry = servers[name]
    allowed = {"command", "args", "env"} | ({"type"} if CLIENTS[client].typed else set())
    assert set(entry) <= allowed and {"command", "args"} <= set(entry)
    assert Path(entry["command"]).is_file() and os.access(entry["command"], os.X_OK)
    assert all(isinstance(arg, str) for arg in entry["args"])
    assert all(isinstance(v, str) for v in entry.get("env", {}).values())
    if CLIENTS[client].typed:
        assert entry["type"] == "stdio"
    return dict(entry)


async def launches(entry: dict[str, Any], cwd: Path) -> list[str]:
    """The tools of the server the entry launches, started from ``cwd`` as a client does."""
    env = {**os.environ, **entry.get("env", {})}
    target = StdioTarget(entry["command"], entry["args"], env=env, cwd=str(cwd))
    with trio.fail_after(60):
        async with open_client(target) as client:
            return [tool.name for tool in await client.list_tools()]


@pytest.mark.parametrize("client", sorted(CLIENTS))
async def test_install_writes_what_the_client_reads(home: Path, client: str) -> None:
    assert sorted(DEFAULT_FILES) == sorted(CLIENTS)
    written = home / DEFAULT_FILES[client]
    first = install(home, NOTES, "--client", client)
    assert first.returncode == 0, first.stderr
    assert f"added 'notes' to {written}" in first.stderr
    entry = entry_by_the_rules(json.loads(written.read_text()), client, "notes")
    assert await launches(entry, cwd=home) == ["read_note"]  # from any folder
    content, stat = written.read_bytes(), written.stat()
    again = install(home, NOTES, "--client", client)
    assert (
        again.returncode == 0 and "already in" in again.stderr and "nothing changed" in again.stderr
    )
    assert written.read_bytes() == content and written.stat().st_mtime_ns == stat.st_mtime_ns
    assert not written.with_name(written.name + ".bak").exists()  # nothing changed: no backup


async def test_an_existing_file_is_backed_up_and_kept(home: Path) -> None:
    config = home / "settings.json"
    original = '{\n  "theme": "dark",\n  "mcpServers": {"other": {"command": "other-server"}}\n}\n'
    config.write_text(original)
    config.chmod(0o600)
    result = install(home, NOTES, "--client", "cursor", "--config-path", str(config))
    assert result.returncode == 0, result.stderr
    assert f"the previous file is {config}.bak" in result.stderr
    assert (home / "settings.json.bak").read_text() == original
    after = json.loads(config.read_text())
    assert list(after) == ["theme", "mcpServers"] and after["theme"] == "dark"
    assert list(after["mcpServers"]) == ["other", "notes"]
    assert after["mcpServers"]["other"] == {"command": "other-server"}
    assert config.stat().st_mode & 0o777 == 0o600
    entry_by_the_rules(after, "cursor", "notes")


def test_dry_run_writes_nothing(home: Path) -> None:
    result = install(home, NOTES, "--client", "vscode", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "would change" in result.stderr and "nothing written" in result.stderr
    entry_by_the_rules(json.loads(result.stdout), "vscode", "notes")
    assert not (home / "PROJECT" / ".vscode").exists()


async def test_a_module_target_gets_its_folder_on_the_path(home: Path) -> None:
    config = home / "mcp.json"
    result = install(
        home, "servers.sample", "--client", "claude-code", "--config-path", str(config),
        "--name", "sample-server", cwd=TESTS,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    entry = entry_by_the_rules(json.loads(config.read_text()), "claude-code", "sample-server")
    assert entry["env"] == {"PYTHONPATH": str(TESTS)}
    assert "add" in await launches(entry, cwd=home)


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("{not json", "is not JSON (Expecting property name enclosed in double quotes, line 1)"),
        ('{"servers": {}} // a comment', "is not JSON (Extra data, line 1)"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"servers": []}', "'servers' is not an object; fix the file first"),
        ('{"servers": {"notes": {"command": "else"}}}', "has an entry 'notes' that launches"
                                                          " something else: --force replaces it"),
    ],
)  # fmt: skip
def test_a_file_it_cannot_use_is_left_alone(home: Path, content: str, line: str) -> None:
    config = home / "mcp.json"
    config.write_text(content)
    result = install(home, NOTES, "--client", "vscode", "--config-path", str(config))
    assert result.returncode == 2
    assert line in result.stderr
    assert config.read_text() == content and not (home / "mcp.json.bak").exists()


def test_force_replaces_an_entry_and_bad_names_are_refused(home: Path) -> None:
    config = home / "mcp.json"
    config.write_text('{"mcpServers": {"notes": {"command": "else"}}}')
    forced = install(home, NOTES, "--client", "windsurf", "--config-path", str(config), "--force")
    assert forced.returncode == 0, forced.stderr
    entry_by_the_rules(json.loads(config.read_text()), "windsurf", "notes")
    assert json.loads((home / "mcp.json.bak").read_text())["mcpServers"]["notes"]["command"] == (
        "else"
    )
    named = install(home, NOTES, "--client", "windsurf", "--name", "my notes")
    assert named.returncode == 2
    assert "'my notes' cannot name an entry" in named.stderr and "--name" in named.stderr
