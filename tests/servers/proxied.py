"""``servers.upstream`` behind a proxy: ``proxy(stdio upstream)``, run as its own process.

``server`` speaks to the upstream in the era it answers in (the modern one);
``legacy_server`` in the legacy era.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_actors.client.targets import StdioTarget
from mcp_actors.gateway import Upstream, proxy

TESTS = Path(__file__).parent.parent
UPSTREAM = StdioTarget(
    sys.executable, ("-m", "mcp_actors.cli", "run", "servers.upstream:server"), cwd=str(TESTS)
)

server = proxy(UPSTREAM, name="proxied")
legacy_server = proxy(Upstream(UPSTREAM, era="legacy"), name="proxied-legacy")

#: ``servers.sample`` (tools only) behind a proxy: the proxy declares tools only.
tools_only = proxy(
    StdioTarget(
        sys.executable, ("-m", "mcp_actors.cli", "run", "servers.sample:server"), cwd=str(TESTS)
    ),
    name="proxied-tools",
)
