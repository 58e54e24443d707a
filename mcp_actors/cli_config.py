"""``mcp-actors config TARGET --client claude|cursor|vscode``: the entry to paste into a client.

MCP desktop clients launch stdio servers from a JSON file. This command loads the
target (so a typo fails here, not in the client), and prints the entry that runs
it with this Python: ``python -m mcp_actors.cli run TARGET``, a file target made
absolute, a module target given the current folder on ``PYTHONPATH``. Where to
paste it goes to stderr; stdout is only the JSON.

- Claude Desktop: ``{"mcpServers": {NAME: {"command", "args", "env"}}}`` in
  ``claude_desktop_config.json`` (Settings → Developer → Edit Config);
- Cursor: the same shape in ``~/.cursor/mcp.json`` or ``.cursor/mcp.json``;
- VS Code: ``{"servers": {NAME: {"type": "stdio", ...}}}`` in ``.vscode/mcp.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .cli_targets import SERVED_METAVAR, is_gateway_file, load_served
from .plugins import installed

CLIENTS = {
    "claude": "claude_desktop_config.json (Claude Desktop: Settings > Developer > Edit Config)",
    "cursor": "~/.cursor/mcp.json (all projects) or .cursor/mcp.json (this project)",
    "vscode": ".vscode/mcp.json (this workspace)",
}


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``config`` sub-command to the CLI's sub-parsers."""
    config: argparse.ArgumentParser = commands.add_parser(
        "config", help="print the JSON entry that adds a server to Claude, Cursor or VS Code"
    )
    config.add_argument("target", metavar=SERVED_METAVAR)
    config.add_argument("--client", choices=sorted(CLIENTS), default="claude")
    config.add_argument("--name", default=None, help="the entry's name (default: server name)")
    config.set_defaults(action=run)
    return config


def run(options: argparse.Namespace) -> int:
    server = load_served(options.target)
    entry = client_entry(options.name or server.name, options.target, options.client)
    print(json.dumps(entry, indent=2))
    print(f"mcp-actors: paste into {CLIENTS[options.client]}", file=sys.stderr)
    return 0


def client_entry(name: str, target: str, client: str) -> dict[str, Any]:
    """The configuration object adding the server ``target`` as ``name`` to ``client``."""
    launch: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "mcp_actors.cli", "run", absolute_target(target)],
    }
    if _is_module(target):
        launch["env"] = {"PYTHONPATH": os.getcwd()}
    if client == "vscode":
        return {"servers": {name: {"type": "stdio", **launch}}}
    return {"mcpServers": {name: launch}}


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
