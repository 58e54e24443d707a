"""A two-level gateway: this server mounts, under ``p``, a proxy process (``servers.proxied``)
that fronts the upstream process (``servers.upstream``)."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_actors import Server
from mcp_actors.client.targets import StdioTarget
from mcp_actors.gateway import Upstream

TESTS = Path(__file__).parent.parent

server = Server("gateway")
server.mount(
    Upstream(
        StdioTarget(
            sys.executable,
            ("-m", "mcp_actors.cli", "run", "servers.proxied:server"),
            cwd=str(TESTS),
        ),
        name="proxied",
    ),
    prefix="p",
)
