"""``mcp-actors config TARGET --client NAME``: the entry to paste into a client's configuration.

MCP desktop clients launch stdio servers from a JSON file (:mod:`.cli_clients` lists
them: Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI). This command
loads the target (so a typo fails here, not in the client), and prints the object that
adds it — ``{"mcpServers": {NAME: {"command", "args", "env"}}}``, or VS Code's
``{"servers": {NAME: {"type": "stdio", ...}}}``. Where to paste it goes to stderr; stdout
is only the JSON. ``mcp-actors install`` writes it into the file instead
(:mod:`.cli_install`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .cli_clients import CLIENTS, launch_entry
from .cli_targets import SERVED_METAVAR, load_served


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``config`` sub-command to the CLI's sub-parsers."""
    config: argparse.ArgumentParser = commands.add_parser(
        "config", help="print the JSON entry that adds a server to an MCP client"
    )
    config.add_argument("target", metavar=SERVED_METAVAR)
    config.add_argument("--client", choices=sorted(CLIENTS), default="claude")
    config.add_argument("--name", default=None, help="the entry's name (default: server name)")
    config.set_defaults(action=run)
    return config


def run(options: argparse.Namespace) -> int:
    server = load_served(options.target)
    client = CLIENTS[options.client]
    entry = launch_entry(options.target, client)
    print(json.dumps({client.servers_key: {options.name or server.name: entry}}, indent=2))
    default = client.default_path(Path.home(), Path.cwd())
    print(f"mcp-actors: paste into {default} ({client.label})", file=sys.stderr)
    return 0
