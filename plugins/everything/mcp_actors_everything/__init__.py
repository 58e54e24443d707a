"""The ``everything`` plugin: every MCP conformance fixture, and a few realistic tools.

Installed, it is served by name::

    mcp-actors run everything                                # stdio
    mcp-actors run everything --transport http --port 3001   # http://127.0.0.1:3001/mcp

What it offers is listed in :mod:`.server`; the fixtures follow the official
conformance suite (``@modelcontextprotocol/conformance`` 0.1.16) name for name.
"""

from __future__ import annotations

from mcp_actors.plugins import Plugin

from .server import (
    JSON_SCHEMA_2020_12_INPUT,
    SEP1034_SCHEMA,
    SEP1330_SCHEMA,
    TEST_AUDIO_BASE64,
    TEST_IMAGE_BASE64,
    Settings,
    create,
)

__version__ = "0.1.0"

plugin = Plugin(
    create=create,
    description="Every MCP conformance fixture, plus slow, cancellable and benchmark tools.",
    settings=Settings,
)

__all__ = [
    "JSON_SCHEMA_2020_12_INPUT",
    "SEP1034_SCHEMA",
    "SEP1330_SCHEMA",
    "TEST_AUDIO_BASE64",
    "TEST_IMAGE_BASE64",
    "Settings",
    "__version__",
    "create",
    "plugin",
]
