"""MkDocs hook: ``<!-- cli-help: COMMAND -->`` in a page becomes that command's ``--help``.

The CLI reference shows what ``mcp-actors COMMAND --help`` prints, taken from the
command itself when the site is built (``python -m mcp_actors.cli COMMAND --help``,
80 columns), so the page can never disagree with the code. A command that fails to
print its help fails the build.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

MARKER = re.compile(r"^<!-- cli-help: ([\w -]*?) -->$", re.MULTILINE)


def help_text(command: str) -> str:
    """What ``mcp-actors COMMAND --help`` prints (``""``: the top-level help)."""
    arguments = [*command.split(), "--help"]
    environment = {**os.environ, "COLUMNS": "80"}
    result = subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", *arguments],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=True,
    )
    return result.stdout


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace every marker of the page with a ``text`` block of the help it names."""

    def block(match: re.Match[str]) -> str:
        command = match.group(1).strip()
        shown = f"$ mcp-actors {command} --help".replace("  ", " ")
        return f"```text\n{shown}\n{help_text(command)}```"

    return MARKER.sub(block, markdown)
