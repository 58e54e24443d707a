"""The MCP clients `mcp-actors config` and `install` know: where each keeps its servers, how.

Every one of them launches a local (stdio) server from a JSON file holding one object of
servers by name, each ``{"command": ..., "args": [...], "env": {...}}``:

============  ===============  ============  ==================================================
client        label            servers key   file (default)
============  ===============  ============  ==================================================
claude        Claude Desktop   mcpServers    macOS ``~/Library/Application Support/Claude/``,
                                             Windows ``%APPDATA%\\Claude\\``, Linux
                                             ``~/.config/Claude/``: ``claude_desktop_config.json``
claude-code   Claude Code      mcpServers    ``.mcp.json`` in the project (``~/.claude.json``:
                                             every project, with ``--config-path``); ``type``
cursor        Cursor           mcpServers    ``~/.cursor/mcp.json`` (``.cursor/mcp.json``: one
                                             project)
vscode        VS Code          servers       ``.vscode/mcp.json`` in the workspace; ``type``
windsurf      Windsurf         mcpServers    ``~/.codeium/windsurf/mcp_config.json``
gemini        Gemini CLI       mcpServers    ``~/.gemini/settings.json`` (``.gemini/settings.json``:
                                             one project)
============  ===============  ============  ==================================================

"``type``": the client wants ``"type": "stdio"`` in the entry. The entry runs the server
with this Python: ``python -m mcp_actors.cli run TARGET``, a file target made absolute,
a module target given the current folder on ``PYTHONPATH`` (so it works from any folder).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from .cli_targets import is_gateway_file
from .plugins import installed


@attrs.frozen
class McpClient:
    """One client's configuration file: where it is, and the shape of its entries."""

    label: str
    #: The key of the object holding the servers by name.
    servers_key: str
    #: Whether an entry says ``"type": "stdio"``.
    typed: bool
    #: The default file, given the home folder and the current one.
    default_path: Callable[[Path, Path], Path]
    #: What to do for the client to load a new entry.
    reload_hint: str


def _claude_desktop(home: Path, cwd: Path) -> Path:
    if sys.platform == "darwin":
        folder = home / "Library" / "Application Support" / "Claude"
    elif sys.platform == "win32":
        folder = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    else:
        folder = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


CLIENTS: dict[str, McpClient] = {
    "claude": McpClient(
        "Claude Desktop", "mcpServers", False, _claude_desktop, "restart Claude Desktop"
    ),
    "claude-code": McpClient(
        "Claude Code", "mcpServers", True, lambda home, cwd: cwd / ".mcp.json",
        "run claude in this folder (it asks before using a project's servers)",
    ),
    "cursor": McpClient(
        "Cursor", "mcpServers", False, lambda home, cwd: home / ".cursor" / "mcp.json",
        "Cursor picks it up (Settings > MCP lists it)",
    ),
    "vscode": McpClient(
        "VS Code", "servers", True, lambda home, cwd: cwd / ".vscode" / "mcp.json",
        "VS Code offers to start it (Chat > Tools)",
    ),
    "windsurf": McpClient(
        "Windsurf", "mcpServers", False,
        lambda home, cwd: home / ".codeium" / "windsurf" / "mcp_config.json",
        "refresh the MCP servers in Windsurf's Cascade panel",
    ),
    "gemini": McpClient(
        "Gemini CLI", "mcpServers", False, lambda home, cwd: home / ".gemini" / "settings.json",
        "restart gemini",
    ),
}  # fmt: skip


def launch_entry(target: str, client: McpClient) -> dict[str, Any]:
    """The entry that has ``client`` launch the server ``target`` (module docstring)."""
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    entry["command"] = sys.executable
    entry["args"] = ["-m", "mcp_actors.cli", "run", absolute_target(target)]
    if _is_module(target):
        entry["env"] = {"PYTHONPATH": os.getcwd()}
    return entry


def _is_file(target: str) -> bool:
    return target.partition(":")[0].endswith(".py") or is_gateway_file(target) or "/" in target


def _is_module(target: str) -> bool:
    return not _is_file(target) and target not in installed()


def absolute_target(target: str) -> str:
    """``target`` with a file path made absolute (so it works from any folder)."""
    if not _is_file(target):
        return target
    path, colon, attribute = target.rpartition(":") if target.count(":") else (target, "", "")
    if not path.endswith(".py"):  # no attribute (a gateway file, a path with a colon)
        path, colon, attribute = target, "", ""
    return str(Path(path).resolve()) + colon + attribute
