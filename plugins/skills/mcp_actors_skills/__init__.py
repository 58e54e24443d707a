"""The ``skills`` plugin: a directory of Agent Skills, served over MCP.

Each subdirectory holding a ``SKILL.md`` is a skill; the server declares the Skills
extension (``io.modelcontextprotocol/skills``) and answers ``skills/list``,
``skills/get`` and ``resources/directory/read``, every file a ``skill://`` resource.
Installed, it is served by name::

    MCP_ACTORS_SKILLS_ROOT=~/skills mcp-actors run skills

See :mod:`mcp_actors.server.skills` for the rules a skill must follow and the limits.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from mcp_actors import Server
from mcp_actors.plugins import Plugin, PluginNotConfigured
from mcp_actors.server.skills import serve_skills

__version__ = "0.1.0"


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, not {value!r}")


@attrs.frozen
class Settings:
    """Settings of the ``skills`` plugin."""

    #: The directory of skills (``~`` is expanded); required: no folder is scanned
    #: unless named (the current one may hold anything, a home folder say).
    root: str | None = None
    #: Answer ``resources/directory/read`` (declared as ``directoryRead: true``).
    directory_read: bool = True
    #: Most bytes read from ``root`` in all (beyond: the server refuses to start).
    max_bytes: int = attrs.field(default=256 * 1024 * 1024, validator=_positive)
    #: Skills per ``skills/list`` page (and children per directory page); 0: one page.
    page_size: int = 0


def create(settings: Settings | None = None) -> Server:
    """Build a ``skills`` server for ``settings`` (SkillError if a skill is malformed,
    PluginNotConfigured without a ``root``)."""
    settings = settings or Settings()
    if settings.root is None:
        raise PluginNotConfigured(
            'set the folder of skills to serve: MCP_ACTORS_SKILLS_ROOT=DIR, or root = "DIR"'
            " under [plugins.skills] in the --config file"
        )
    root = Path(settings.root).expanduser()
    server = Server(
        "mcp-actors-skills",
        __version__,
        instructions=(
            "Agent Skills: list them with skills/list, load one by reading its SKILL.md"
            " (resources/read), and its other files as the instructions need them."
        ),
        page_size=settings.page_size or None,
    )
    serve_skills(server, root, directory_read=settings.directory_read, max_bytes=settings.max_bytes)
    return server


plugin = Plugin(
    create=create,
    description="A directory of Agent Skills (skills/list, skills/get, skill:// resources).",
    settings=Settings,
)

__all__ = ["Settings", "__version__", "create", "plugin"]
