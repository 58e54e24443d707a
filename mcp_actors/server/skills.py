"""The Skills extension (``io.modelcontextprotocol/skills``): serve a directory of Agent Skills.

A skill is a directory holding a ``SKILL.md`` (YAML frontmatter with at least
``name`` and ``description``, then instructions) and any supporting files. Point a
server at a directory of them::

    library = serve_skills(server, "skills/")

and every file becomes a resource ``skill://<skill-path>/<file-path>`` (read with
``resources/read``; ``SKILL.md`` as ``text/markdown`` named and described from its
frontmatter), and the server declares the extension and answers:

- ``skills/list``: an entry per skill, paginated like every list (``Server.page_size``)
  — its ``uri`` (the ``SKILL.md``), its frontmatter verbatim, and the complete
  manifest of its files with their ``sha256:`` digests and sizes;
- ``skills/get``: one entry by the URI of its ``SKILL.md``; -32602 for any other URI;
- ``resources/directory/read`` (with ``directory_read=True``, the default, declared as
  ``{"directoryRead": true}``): the direct children of any directory of the tree
  (a skill's root ``skill://pdf-processing``, ``skill://pdf-processing/templates``...),
  subdirectories as ``inode/directory``; -32602 for a URI that is not a directory.

``<skill-path>`` is the skill directory's path under the root (``pdf-processing``,
``acme/billing/refunds``): its last segment must equal the frontmatter ``name``, and
the name must follow the Agent Skills naming rules (1-64 lowercase letters, digits
and single hyphens). A ``SKILL.md`` below another skill is a nested skill, listed on
its own; its files also count among the enclosing skill's. Hidden files and
directories (``.git``...) and symbolic links are skipped.

The directory is read once, into memory, when :func:`serve_skills` runs (digests
then always describe the bytes served; each directory's files come first, then its
subdirectories, by name); :meth:`SkillLibrary.reload` reads it again. What is read is
bounded: a skill over the extension's limits (512 files, 16 MiB), or a library over
``max_bytes`` (default 256 MiB) or 100,000 files, is refused with :class:`SkillError`
naming it, as is a skill whose ``SKILL.md`` is malformed: nothing is served half-read.
A file that would take the library past ``max_bytes`` is refused by its size before a
byte of it is read (and read at most one byte past the limit, should it grow meanwhile).
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final

import attrs
from msgspec import UNSET

from ..protocol import errors
from ..protocol import skills as s
from ..protocol import types as t
from ..protocol.frontmatter import FrontmatterError, parse_frontmatter
from ..runtime.request import InboundRequest
from .context import Context
from .extensions import Extension
from .pagination import paginate
from .resources import RegisteredResource
from .signature import inspect_tool
from .uri_template import UriTemplate

if TYPE_CHECKING:
    from .app import Server
    from .server_session import ServerSession

__all__ = ["SkillError", "SkillLibrary", "serve_skills"]

#: Per-skill limits every conforming host accepts (the extension's "Limits").
MAX_FILES_PER_SKILL: Final = 512
MAX_BYTES_PER_SKILL: Final = 16 * 1024 * 1024
#: Most files read from one directory of skills.
MAX_FILES_PER_LIBRARY: Final = 100_000
#: The Agent Skills naming rule for a skill's ``name``.
_NAME: Final = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_SKILL_FILE: Final = "SKILL.md"
_MARKDOWN: Final = "text/markdown"
#: What one read asks for when a file turns out longer than its size said.
_CHUNK: Final = 1024 * 1024


class SkillError(ValueError):
    """A skill (or a library) that cannot be served, and why."""


@attrs.frozen
class SkillFile:
    """One file of the library, as served: its URI, bytes and mime type."""

    uri: str
    data: bytes
    mime_type: str

    @property
    def manifest_entry(self) -> s.SkillResource:
        digest = "sha256:" + hashlib.sha256(self.data).hexdigest()
        return s.SkillResource(uri=self.uri, digest=digest, size=len(self.data))


@attrs.frozen
class LoadedSkill:
    """One skill: its entry (what ``skills/list`` and ``skills/get`` give) and files."""

    entry: s.Skill
    files: tuple[SkillFile, ...]

    @property
    def uri(self) -> str:
        return self.entry.uri

    @property
    def name(self) -> str:
        name: str = self.entry.frontmatter["name"]
        return name

    @property
    def description(self) -> str:
        description: str = self.entry.frontmatter["description"]
        return description


@attrs.frozen
class LibrarySnapshot:
    """Everything read from a skills directory at one time."""

    skills: dict[str, LoadedSkill]
    files: dict[str, SkillFile]
    #: directory URI -> its direct children (files, and subdirectories as inode/directory)
    directories: dict[str, list[t.Resource]]


def read_library(
    root: Path, *, scheme: str = "skill", max_bytes: int = 256 * 1024 * 1024
) -> LibrarySnapshot:
    """Read every skill under ``root`` (see the module docstring for the rules)."""
    root = Path(root)
    if not root.is_dir():
        raise SkillError(f"{root} is not a directory")
    files: dict[str, SkillFile] = {}
    manifests: list[SkillFile] = []
    total = 0
    for relative in _walk(root):
        if len(files) == MAX_FILES_PER_LIBRARY:
            raise SkillError(f"more than {MAX_FILES_PER_LIBRARY} files under {root}")
        uri = f"{scheme}://{relative.as_posix()}"
        data = _read_bounded(root / relative, max_bytes - total)
        if data is None:
            size = (root / relative).stat().st_size
            raise SkillError(
                f"{uri}: {size} bytes would take the skills under {root} past max_bytes={max_bytes}"
            )
        total += len(data)
        files[uri] = SkillFile(uri, data, _mime_type(relative))
        if relative.name == _SKILL_FILE and len(relative.parts) > 1:  # in a skill directory
            manifests.append(files[uri])
    if not manifests:
        raise SkillError(f"no skill under {root}: no <skill>/{_SKILL_FILE} found")
    skills = {skill.uri: skill for skill in (_load_skill(file, files) for file in manifests)}
    return LibrarySnapshot(skills, files, _directories(files, scheme))


def _read_bounded(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` if it holds at most ``limit``, else None — decided by its
    size before reading, and by reading at most ``limit + 1`` bytes (a file that grew
    since is caught too): a huge file never reaches memory."""
    with path.open("rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size > limit:
            return None
        data = file.read(size + 1)  # (a read allocates what it is asked for: ask for little)
        while len(data) <= limit and (more := file.read(min(_CHUNK, limit + 1 - len(data)))):
            data += more  # the file grew since fstat
    return data if len(data) <= limit else None


def _walk(root: Path) -> Iterator[PurePosixPath]:
    """Relative paths of the regular files under ``root``, sorted; hidden entries and
    symbolic links left out (never followed)."""
    for directory, subdirectories, names in os.walk(root, followlinks=False):
        subdirectories[:] = sorted(name for name in subdirectories if not name.startswith("."))
        base = Path(directory)
        for name in sorted(names):
            path = base / name
            if name.startswith(".") or path.is_symlink() or not path.is_file():
                continue
            yield PurePosixPath(path.relative_to(root).as_posix())


def _mime_type(path: PurePosixPath) -> str:
    if path.suffix.lower() in (".md", ".markdown"):
        return _MARKDOWN
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


def _load_skill(skill_md: SkillFile, files: dict[str, SkillFile]) -> LoadedSkill:
    uri = skill_md.uri
    try:
        frontmatter = parse_frontmatter(skill_md.data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SkillError(f"{uri}: SKILL.md is not UTF-8 text") from None
    except FrontmatterError as error:
        raise SkillError(f"{uri}: {error}") from None
    name = frontmatter.get("name")
    directory = uri[: -len(_SKILL_FILE) - 1]
    folder = directory.rsplit("/", 1)[-1]
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise SkillError(
            f"{uri}: frontmatter name {name!r} must be 1-64 lowercase letters, digits and"
            " single hyphens, neither first nor last"
        )
    if name != folder:
        raise SkillError(f"{uri}: frontmatter name {name!r} must equal its directory {folder!r}")
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description:
        raise SkillError(f"{uri}: frontmatter needs a non-empty description")
    members = tuple(file for key, file in files.items() if key.startswith(directory + "/"))
    if len(members) > MAX_FILES_PER_SKILL:
        raise SkillError(f"{uri}: {len(members)} files, over the limit of {MAX_FILES_PER_SKILL}")
    size = sum(len(file.data) for file in members)
    if size > MAX_BYTES_PER_SKILL:
        raise SkillError(f"{uri}: {size} bytes, over the limit of {MAX_BYTES_PER_SKILL}")
    entry = s.Skill(
        uri=uri,
        frontmatter=frontmatter,
        resources=[file.manifest_entry for file in members],
    )
    return LoadedSkill(entry, members)


def _directories(files: dict[str, SkillFile], scheme: str) -> dict[str, list[t.Resource]]:
    """Every directory of the tree and its direct children: ``skill://a/b/c.md`` makes
    ``skill://a`` (holding the directory ``skill://a/b``) and ``skill://a/b`` (holding
    the file)."""
    root = f"{scheme}://"
    children: dict[str, dict[str, t.Resource]] = {}
    for uri, file in files.items():
        parts = uri[len(root) :].split("/")
        for depth in range(1, len(parts)):
            directory = root + "/".join(parts[:depth])
            child_uri = root + "/".join(parts[: depth + 1])
            if depth + 1 == len(parts):
                child = t.Resource(
                    uri=child_uri, name=parts[depth], mime_type=file.mime_type, size=len(file.data)
                )
            else:
                child = t.Resource(
                    uri=child_uri, name=parts[depth], mime_type=s.DIRECTORY_MIME_TYPE
                )
            children.setdefault(directory, {}).setdefault(child_uri, child)
    return {uri: list(items.values()) for uri, items in children.items()}


@attrs.define(eq=False)
class SkillLibrary:
    """The skills a server serves from one directory (see the module docstring)."""

    server: Server
    root: Path
    directory_read: bool = True
    scheme: str = "skill"
    max_bytes: int = 256 * 1024 * 1024
    _snapshot: LibrarySnapshot | None = attrs.field(init=False, default=None)

    @property
    def skills(self) -> list[LoadedSkill]:
        """The skills served, in ``skills/list`` order."""
        return [] if self._snapshot is None else list(self._snapshot.skills.values())

    def reload(self) -> None:
        """Read the directory again and serve what it holds now (clients are told the
        resource list changed). On a :class:`SkillError` the previous skills stay served."""
        snapshot = read_library(self.root, scheme=self.scheme, max_bytes=self.max_bytes)
        previous, self._snapshot = self._snapshot, snapshot
        if previous is not None:
            for uri in previous.files:
                if uri not in snapshot.files:
                    self.server.remove_resource(uri)
        for file in snapshot.files.values():
            self.server.add_resource(self._resource(file), replace=True)

    def extension(self) -> Extension:
        """The extension this library answers for: its settings and its three methods."""
        handlers: dict[str, Any] = {"skills/list": self._list, "skills/get": self._get}
        settings: dict[str, Any] = {}
        if self.directory_read:
            handlers["resources/directory/read"] = self._read_directory
            settings["directoryRead"] = True
        return Extension(s.SKILLS_EXTENSION, settings, handlers)

    def _resource(self, file: SkillFile) -> RegisteredResource:
        skill = self._current.skills.get(file.uri)
        name = file.uri.rsplit("/", 1)[-1]
        definition = t.Resource(
            uri=file.uri,
            name=skill.name if skill is not None else name,
            description=skill.description if skill is not None else UNSET,
            mime_type=file.mime_type,
            size=len(file.data),
        )
        data = file.data

        def read() -> t.ResourceContents:
            return _contents(file.uri, data, file.mime_type)

        signature = inspect_tool(read, Context, kind="resource", name=file.uri)
        return RegisteredResource(definition, UriTemplate.parse(file.uri), read, signature)

    @property
    def _current(self) -> LibrarySnapshot:
        assert self._snapshot is not None
        return self._snapshot

    async def _list(
        self, server_session: ServerSession, request: InboundRequest, params: t.PaginatedParams
    ) -> s.ListSkillsResult:
        entries = [skill.entry for skill in self._current.skills.values()]
        page, next_cursor = paginate(entries, params.cursor, self.server.page_size)
        return s.ListSkillsResult(skills=page, next_cursor=next_cursor)

    async def _get(
        self, server_session: ServerSession, request: InboundRequest, params: s.GetSkillParams
    ) -> s.GetSkillResult:
        skill = self._current.skills.get(params.uri)
        if skill is None:
            raise errors.invalid_params(f"No skill is served at {params.uri}")
        return s.GetSkillResult(skill=skill.entry)

    async def _read_directory(
        self,
        server_session: ServerSession,
        request: InboundRequest,
        params: s.ReadDirectoryParams,
    ) -> s.ReadDirectoryResult:
        children = self._current.directories.get(params.uri)
        if children is None:
            what = (
                "is not a directory resource"
                if params.uri in self._current.files
                else ("names no directory this server serves")
            )
            raise errors.invalid_params(f"{params.uri} {what}")
        page, next_cursor = paginate(children, params.cursor, self.server.page_size)
        return s.ReadDirectoryResult(resources=page, next_cursor=next_cursor)


def _contents(uri: str, data: bytes, mime_type: str) -> t.ResourceContents:
    """A file's ``resources/read`` contents: text when it is UTF-8, else a base64 blob
    (either way the bytes its digest covers)."""
    try:
        return t.ResourceContents(uri=uri, mime_type=mime_type, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        blob = base64.b64encode(data).decode("ascii")
        return t.ResourceContents(uri=uri, mime_type=mime_type, blob=blob)


def serve_skills(
    server: Server,
    root: str | Path,
    *,
    directory_read: bool = True,
    scheme: str = "skill",
    max_bytes: int = 256 * 1024 * 1024,
) -> SkillLibrary:
    """Serve the skills under ``root`` from ``server`` (see the module docstring).

    Raises :class:`SkillError` (nothing registered) when a skill cannot be served.
    """
    library = SkillLibrary(server, Path(root), directory_read, scheme, max_bytes)
    library.reload()
    server.add_extension(library.extension())
    return library
