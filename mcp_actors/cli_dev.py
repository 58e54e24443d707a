"""``mcp-actors dev TARGET``: try a server in the official MCP Inspector.

The Inspector (npm package ``@modelcontextprotocol/inspector``) is a web UI for
calling a server's tools, reading its resources and rendering its prompts. This
command loads TARGET first (so a broken server fails here, in one line), then runs
``npx -y @modelcontextprotocol/inspector PYTHON -m mcp_actors.cli run TARGET``:
the Inspector launches the server over stdio and prints the address of its UI.
Without Node.js (``npx``), it says how to install it and exits with code 3.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from typing import Any

from .cli_clients import absolute_target
from .cli_errors import EXIT_MISSING_EXTRA, CliFailure
from .cli_targets import SERVED_METAVAR, load_served

INSPECTOR = "@modelcontextprotocol/inspector"
NODE_MISSING = (
    "the MCP Inspector runs on Node.js, and npx is not on PATH: install Node.js 22 or later"
    " (https://nodejs.org/en/download, or your package manager: apt install nodejs npm,"
    " brew install node), then run this again"
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``dev`` sub-command to the CLI's sub-parsers."""
    dev: argparse.ArgumentParser = commands.add_parser(
        "dev", help="open a server in the MCP Inspector (needs Node.js)"
    )
    dev.add_argument("target", metavar=SERVED_METAVAR)
    dev.add_argument(
        "--inspector", default=INSPECTOR, help=f"npm package to run (default {INSPECTOR})"
    )
    dev.set_defaults(action=run)
    return dev


def run(options: argparse.Namespace) -> int:
    load_served(options.target)  # fail here, in one line, if it cannot load
    npx = shutil.which("npx")
    if npx is None:
        raise CliFailure(EXIT_MISSING_EXTRA, NODE_MISSING)
    command = [npx, "-y", options.inspector, *server_command(options.target)]
    print(f"mcp-actors: starting the MCP Inspector: {' '.join(command)}", file=sys.stderr)
    try:
        return subprocess.run(command, check=False).returncode
    except KeyboardInterrupt:
        return 0


def server_command(target: str) -> list[str]:
    """The command that serves ``target`` over stdio with this Python."""
    return [sys.executable, "-m", "mcp_actors.cli", "run", absolute_target(target)]
