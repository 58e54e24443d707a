"""The ``filesystem`` server: browse, read and search files below a root; write only if allowed.

**Where a request may look.** A path is resolved first — symlinks followed, ``..``
collapsed (``os.path.realpath``) — and the result must lie inside an *allowed
directory*:

- the configured ``root`` (setting), always the outer bound;
- narrowed, when the client declares the ``roots`` capability (and
  ``use_client_roots`` is on), to the client's ``file://`` roots, asked with
  ``roots/list`` on every call so that a change applies at once. A client root
  outside ``root`` gives nothing; one that contains ``root`` gives ``root``. A client
  that declares roots but lists none gets no access.

Relative paths start from the first allowed directory. A symlink inside an allowed
directory that points outside is refused like any other outside path; ``search``
skips such entries. File work runs in worker threads, bounded by the ``max_*``
settings.

**Tools:** ``list_allowed_directories``, ``list_directory``, ``read_file``,
``get_file_info``, ``search``; with ``allow_write`` also ``write_file`` and
``create_directory`` (not offered at all otherwise). **Resource template:**
``file:///{+path}``.
"""

from __future__ import annotations

import codecs
import datetime
import fnmatch
import mimetypes
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Final, Literal
from urllib.parse import unquote, urlsplit

import attrs
import msgspec
import trio
from msgspec import UNSET

from mcp_actors import Context, McpError, Server, types
from mcp_actors.protocol import errors
from mcp_actors.server.content import blob_contents, text, text_contents

_READ_ONLY: Final = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITES: Final = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


@attrs.frozen
class Settings:
    """Settings of the ``filesystem`` plugin."""

    #: The directory every path must stay inside (``~`` is expanded).
    root: str = "."
    #: Offer ``write_file`` and ``create_directory``.
    allow_write: bool = False
    #: Narrow access to the client's roots when it declares the ``roots`` capability.
    use_client_roots: bool = True
    #: Largest file, or slice of one, that ``read_file`` and the resource return.
    max_read_bytes: int = 1_000_000
    #: Most entries ``list_directory`` and ``search`` return.
    max_results: int = 500
    #: Most files ``search`` looks at in one call.
    max_scanned: int = 20_000


class AccessDenied(Exception):
    """A path outside the allowed directories (or no directory is allowed at all)."""


# -- where a request may look --------------------------------------------------------------


def real(path: str | os.PathLike[str]) -> Path:
    """``path`` with symlinks followed and ``..`` collapsed (it need not exist)."""
    return Path(os.path.realpath(path))


def file_uri_path(uri: str) -> Path | None:
    """The local path of a ``file://`` URI (``file:///a%20b`` -> ``/a b``); None for others."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return Path(path) if path.startswith("/") else None


def path_uri(path: Path) -> str:
    """The ``file://`` URI of an absolute path."""
    return path.as_uri()


@attrs.frozen
class Allowed:
    """The directories one request may touch, resolved, and where they came from."""

    directories: tuple[Path, ...]
    source: str

    def resolve(self, path: str) -> Path:
        """The real path of ``path``, or :class:`AccessDenied` if it is outside."""
        if "\x00" in path:
            raise AccessDenied("a path cannot contain NUL")
        if not self.directories:
            raise AccessDenied(f"no directory is allowed ({self.source})")
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.directories[0] / candidate
        resolved = real(candidate)
        if not self.contains(resolved):
            raise AccessDenied(
                f"{path!r} resolves to {str(resolved)!r}, outside the allowed directories"
                f" ({self.source}: {', '.join(map(str, self.directories))})"
            )
        return resolved

    def contains(self, resolved: Path) -> bool:
        return any(resolved.is_relative_to(directory) for directory in self.directories)


def intersect(root: Path, client_roots: Iterable[Path]) -> tuple[Path, ...]:
    """The parts of ``root`` the client's roots cover (all paths already real)."""
    found: list[Path] = []
    for client_root in client_roots:
        if client_root.is_relative_to(root):
            covered = client_root
        elif root.is_relative_to(client_root):
            covered = root
        else:
            continue
        if covered not in found:
            found.append(covered)
    return tuple(found)


# -- results -------------------------------------------------------------------------------

EntryType = Literal["file", "directory", "symlink", "other"]


class Entry(msgspec.Struct, omit_defaults=True):
    name: str
    type: EntryType
    size: int | None = None


class Listing(msgspec.Struct):
    path: str
    entries: list[Entry]
    truncated: bool = False


class FileInfo(msgspec.Struct):
    path: str
    type: EntryType
    size: int
    modified: str
    permissions: str


class SearchResult(msgspec.Struct):
    matches: list[str]
    scanned: int
    truncated: bool = False


def _entry_type(mode: int) -> EntryType:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


# -- the server ----------------------------------------------------------------------------


def create(settings: Settings | None = None) -> Server:
    """Build a ``filesystem`` server for ``settings``."""
    settings = settings or Settings()
    root = real(Path(settings.root).expanduser())
    if not root.is_dir():
        raise ValueError(f"root {settings.root!r} is not a directory")
    for limit in ("max_read_bytes", "max_results", "max_scanned"):
        if getattr(settings, limit) < 1:
            raise ValueError(f"{limit} must be at least 1")
    mode = "read-write" if settings.allow_write else "read-only"
    server = Server(
        "mcp-actors-filesystem",
        "0.1.0",
        instructions=(
            f"Files below {root} ({mode}), within the client's roots when it declares them."
            " Paths may be absolute or relative to the first allowed directory"
            " (see list_allowed_directories)."
        ),
    )

    async def allowed(ctx: Context) -> Allowed:
        capabilities = ctx.session.client_capabilities
        declared = capabilities is not None and capabilities.roots is not UNSET
        if not settings.use_client_roots or not declared:
            return Allowed((root,), "the configured root")
        client_roots = [file_uri_path(r.uri) for r in await ctx.list_roots()]
        covered = intersect(root, (real(path) for path in client_roots if path is not None))
        return Allowed(covered, f"the client's roots within {root}")

    async def resolve(ctx: Context, path: str) -> Path:
        return (await allowed(ctx)).resolve(path)

    async def in_thread(function: Any, *args: Any) -> Any:
        return await trio.to_thread.run_sync(function, *args, abandon_on_cancel=True)

    @server.tool(annotations=_READ_ONLY)
    async def list_allowed_directories(ctx: Context) -> list[str]:
        """The directories this session may read (the configured root, narrowed to the
        client's roots when it declares them)."""
        return [str(directory) for directory in (await allowed(ctx)).directories]

    @server.tool(annotations=_READ_ONLY)
    async def list_directory(ctx: Context, path: str = ".") -> Listing:
        """List a directory's entries (name, type, size of files), sorted by name.

        Args:
            path: The directory, absolute or relative to the first allowed directory.
        """
        directory = await resolve(ctx, path)

        def listing() -> Listing:
            entries: list[Entry] = []
            with os.scandir(directory) as scan:
                for item in sorted(scan, key=lambda item: item.name):
                    if len(entries) >= settings.max_results:
                        return Listing(str(directory), entries, truncated=True)
                    info = item.stat(follow_symlinks=False)
                    kind = _entry_type(info.st_mode)
                    entries.append(Entry(item.name, kind, info.st_size if kind == "file" else None))
            return Listing(str(directory), entries)

        result: Listing = await in_thread(listing)
        return result

    @server.tool(annotations=_READ_ONLY)
    async def read_file(
        ctx: Context,
        path: str,
        offset: Annotated[int, msgspec.Meta(ge=0)] = 0,
        max_bytes: Annotated[int, msgspec.Meta(ge=1)] | None = None,
    ) -> list[types.ContentBlock]:
        """Read a UTF-8 text file, or a slice of one (``offset``/``max_bytes``, in bytes).

        When more remains, a second text block says which ``offset`` continues it.

        Args:
            path: The file, absolute or relative to the first allowed directory.
            offset: The byte to start at.
            max_bytes: The most bytes to read (at most the server's max_read_bytes).
        """
        file = await resolve(ctx, path)
        limit = min(max_bytes or settings.max_read_bytes, settings.max_read_bytes)

        def read() -> tuple[str, int, int]:
            if not file.is_file():
                raise IsADirectoryError(f"{file} is not a regular file")
            size = file.stat().st_size
            with file.open("rb") as handle:
                handle.seek(offset)
                data = handle.read(limit)
            more = offset + len(data) < size
            decoder = codecs.getincrementaldecoder("utf-8")()
            try:
                decoded = decoder.decode(data, final=not more)
            except UnicodeDecodeError:
                raise ValueError(
                    f"{file} is not UTF-8 text; read it as the resource {path_uri(file)}"
                ) from None
            consumed = len(data) - len(decoder.getstate()[0])
            return decoded, offset + consumed, size

        content, end, size = await in_thread(read)
        blocks: list[types.ContentBlock] = [text(content)]
        if end < size:
            blocks.append(text(f"[{size - end} more bytes: continue with offset={end}]"))
        return blocks

    @server.tool(annotations=_READ_ONLY)
    async def get_file_info(ctx: Context, path: str) -> FileInfo:
        """A file's or directory's type, size, modification time (UTC) and permissions.

        Args:
            path: Absolute or relative to the first allowed directory.
        """
        target = await resolve(ctx, path)

        def info() -> FileInfo:
            status = target.stat()
            modified = datetime.datetime.fromtimestamp(status.st_mtime, datetime.UTC)
            return FileInfo(
                path=str(target),
                type=_entry_type(status.st_mode),
                size=status.st_size,
                modified=modified.isoformat(timespec="seconds"),
                permissions=stat.filemode(status.st_mode),
            )

        result: FileInfo = await in_thread(info)
        return result

    @server.tool(annotations=_READ_ONLY)
    async def search(
        ctx: Context, pattern: str, path: str = ".", contains: str | None = None
    ) -> SearchResult:
        """Find files below a directory whose name matches a glob pattern (case-insensitive),
        optionally only those whose text contains a string. Symlinked directories are
        not followed.

        Args:
            pattern: A glob on file names, e.g. ``*.py`` or ``README*``.
            path: Where to start, absolute or relative to the first allowed directory.
            contains: Keep only UTF-8 text files that contain this string.
        """
        scope = await allowed(ctx)
        start = scope.resolve(path)
        wanted = pattern.lower()

        def walk() -> SearchResult:
            matches: list[str] = []
            scanned = 0
            for directory, subdirectories, files in os.walk(start):
                subdirectories.sort()
                for name in sorted(files):
                    if scanned >= settings.max_scanned or len(matches) >= settings.max_results:
                        return SearchResult(matches, scanned, truncated=True)
                    scanned += 1
                    if not fnmatch.fnmatchcase(name.lower(), wanted):
                        continue
                    found = Path(directory, name)
                    if not scope.contains(real(found)):
                        continue  # a symlink pointing outside
                    if contains is not None and not _contains(found, contains):
                        continue
                    matches.append(str(found))
            return SearchResult(matches, scanned)

        def _contains(file: Path, needle: str) -> bool:
            try:
                with file.open("rb") as handle:
                    data = handle.read(settings.max_read_bytes)
                return needle in data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                return False

        result: SearchResult = await in_thread(walk)
        return result

    @server.resource(
        "file:///{+path}",
        name="file",
        title="A file",
        description="A file inside the allowed directories (text, or a base64 blob).",
    )
    async def file_resource(path: str, ctx: Context) -> types.ResourceContents:
        uri = f"file:///{path}"
        try:
            file = await resolve(ctx, "/" + path)
        except AccessDenied as denied:
            raise errors.invalid_params(str(denied)) from None

        def read() -> types.ResourceContents:
            if not file.is_file():
                raise McpError(
                    errors.RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri}
                )
            if file.stat().st_size > settings.max_read_bytes:
                raise errors.invalid_params(
                    f"{uri} is larger than {settings.max_read_bytes} bytes (max_read_bytes)"
                )
            data = file.read_bytes()
            mime_type = mimetypes.guess_type(file.name)[0]
            try:
                return text_contents(uri, data.decode("utf-8"), mime_type or "text/plain")
            except UnicodeDecodeError:
                return blob_contents(uri, data, mime_type or "application/octet-stream")

        try:
            contents: types.ResourceContents = await in_thread(read)
        except FileNotFoundError:
            raise McpError(
                errors.RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri}
            ) from None
        return contents

    if settings.allow_write:
        _write_tools(server, resolve, in_thread)
    return server


def _write_tools(server: Server, resolve: Any, in_thread: Any) -> None:
    @server.tool(annotations=_WRITES)
    async def write_file(ctx: Context, path: str, content: str) -> str:
        """Create or replace a UTF-8 text file (written to a temporary file, then renamed
        into place). Its directory must exist.

        Args:
            path: The file, absolute or relative to the first allowed directory.
            content: The new text.
        """
        file: Path = await resolve(ctx, path)

        def write() -> int:
            if file.is_dir():
                raise IsADirectoryError(f"{file} is a directory")
            data = content.encode("utf-8")
            descriptor, temporary = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
            try:
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(data)
                os.replace(temporary, file)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            return len(data)

        written = await in_thread(write)
        return f"wrote {written} bytes to {file}"

    @server.tool(annotations=_WRITES)
    async def create_directory(ctx: Context, path: str) -> str:
        """Create a directory, and any missing parents (nothing happens if it exists).

        Args:
            path: The directory, absolute or relative to the first allowed directory.
        """
        directory: Path = await resolve(ctx, path)
        await in_thread(lambda: directory.mkdir(parents=True, exist_ok=True))
        return f"created {directory}"
