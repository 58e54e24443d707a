"""Upstreams run as processes of their own, for gateways under test to mount."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_actors.client.targets import StdioTarget
from mcp_actors.gateway import Upstream

TESTS = Path(__file__).parent.parent


def upstream_process() -> Upstream:
    """``servers.upstream`` in a process of its own, as an upstream named ``up``."""
    command = ("-m", "mcp_actors.cli", "run", "servers.upstream:server")
    return Upstream(StdioTarget(sys.executable, command, cwd=str(TESTS)), name="up")
