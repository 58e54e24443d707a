"""The Skills extension's wire objects (``io.modelcontextprotocol/skills``).

A server serving Agent Skills declares the extension under
``capabilities.extensions`` (``{"directoryRead": true}`` when it also answers
``resources/directory/read``) and answers two methods of its own:

- ``skills/list`` (paginated, cacheable): a :class:`Skill` entry per skill;
- ``skills/get`` (``{uri}`` of a ``SKILL.md``, cacheable): that skill's entry, -32602
  for a URI that names no skill the server serves.

A :class:`Skill` entry is a complete manifest: the ``SKILL.md`` frontmatter as a JSON
object, and every file of the skill as a :class:`SkillResource` ``{uri, digest,
size}`` (``sha256:<64 hex>`` over the file's raw bytes), or ``"dynamic"`` for
generated content. The files themselves are ordinary resources, read with
``resources/read``. ``resources/directory/read`` lists a directory resource's
direct children (subdirectories with ``mimeType: "inode/directory"``).

The specification: ``specification/stable/skills.mdx`` of modelcontextprotocol/ext-skills.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from msgspec import UNSET, UnsetType, field

from .types import CacheableResult, Cursor, McpStruct, Resource, Result

#: The Skills extension's identifier, under ``capabilities.extensions``.
SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
#: The ``mimeType`` of a directory resource (``resources/directory/read`` lists its children).
DIRECTORY_MIME_TYPE: Final = "inode/directory"
#: The ``_meta`` key prefix reserved for this extension on skill resources.
SKILLS_META_PREFIX: Final = "io.modelcontextprotocol.skills/"


class SkillResource(McpStruct):
    """One file of a skill: its resource URI, ``sha256:<hex>`` digest, and size in bytes."""

    uri: str
    digest: str
    size: int


class Skill(McpStruct):
    """The entry of one skill, in ``skills/list`` and ``skills/get`` alike."""

    uri: str
    frontmatter: dict[str, Any]
    resources: list[SkillResource] | Literal["dynamic"]


class ListSkillsResult(CacheableResult, kw_only=True):
    """Result of ``skills/list``."""

    skills: list[Skill]
    next_cursor: Cursor | UnsetType = UNSET


class GetSkillParams(McpStruct):
    """Params of ``skills/get``: the URI of the skill's ``SKILL.md``."""

    uri: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class GetSkillResult(CacheableResult, kw_only=True):
    """Result of ``skills/get``."""

    skill: Skill


class ReadDirectoryParams(McpStruct):
    """Params of ``resources/directory/read``: a directory resource's URI (no trailing ``/``)."""

    uri: str
    cursor: Cursor | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ReadDirectoryResult(Result, kw_only=True):
    """Result of ``resources/directory/read``: the directory's direct children."""

    resources: list[Resource]
    next_cursor: Cursor | UnsetType = UNSET
