"""``servers.upstream`` behind a proxy: ``proxy(stdio upstream)``, run as its own process."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_actors.client.targets import StdioTarget
from mcp_actors.gateway import proxy

TESTS = Path(__file__).parent.parent
UPSTREAM = StdioTarget(
    sys.executable, ("-m", "mcp_actors.cli", "run", "servers.upstream:server"), cwd=str(TESTS)
)

server = proxy(UPSTREAM, name="proxied")
