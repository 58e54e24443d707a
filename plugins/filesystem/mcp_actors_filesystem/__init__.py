"""The ``filesystem`` plugin: files below a root directory, within the client's roots.

Read-only unless ``allow_write`` is set. Installed, it is served by name::

    MCP_ACTORS_FILESYSTEM_ROOT=~/notes mcp-actors run filesystem

See :mod:`.server` for the access rules, tools and resource template.
"""

from __future__ import annotations

from mcp_actors.plugins import Plugin

from .confined import AccessDenied, Confinement
from .server import Settings, create, file_uri_path

__version__ = "0.1.0"

plugin = Plugin(
    create=create,
    description="Browse, read and search files below a root directory (writes only if allowed).",
    settings=Settings,
)

__all__ = [
    "AccessDenied",
    "Confinement",
    "Settings",
    "__version__",
    "create",
    "file_uri_path",
    "plugin",
]
