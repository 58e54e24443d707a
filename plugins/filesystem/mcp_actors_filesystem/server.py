"""The ``filesystem`` server: browse, read and search files below a root; write only if allowed.

**Where a request may look.** Inside an *allowed directory*:

- the configured ``root`` (setting), always the outer bound;
- narrowed, when the client declares the ``roots`` capability (and
  ``use_client_roots`` is on), to the client's ``file://`` roots, asked with
  ``roots/list`` on every call so that a change applies at once. A client root
  outside ``root`` gives nothing; one that contains ``root`` gives ``root``. A client
  that declares roots but lists none gets no access.

Relative paths start from the first allowed directory; absolute ones must start with
the root (as configured, or its real path) or with a client root as the client wrote
it. Symlinks inside the root are followed as long as they stay inside; one that leads
out is refused like any other outside path (``search`` and ``list_directory`` never
follow one out). Paths are not checked and then opened — a symlink swapped in between
would win that race — but opened one component at a time without following symlinks,
so that what is checked is what was opened: see :mod:`.confined` for the threat model.
Only regular files are read: a FIFO or device is never opened for reading (it could
block a thread for ever).

File work runs in this server's own pool of ``max_threads`` worker threads (see
:mod:`.workers`), in bounded steps that a cancelled call stops (see :mod:`.files`).

**Tools:** ``list_allowed_directories``, ``list_directory``, ``read_file``,
``get_file_info``, ``search``; with ``allow_write`` also ``write_file`` and
``create_directory`` (not offered at all otherwise). **Resource template:**
``file:///{+path}``.
"""

from __future__ import annotations

import codecs
import datetime
import errno
import mimetypes
import os
import stat
import threading
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Final, TypeVar
from urllib.parse import unquote, urlsplit

import attrs
import msgspec
from msgspec import UNSET

from mcp_actors import Context, McpError, Server, ToolError, types
from mcp_actors.protocol import errors
from mcp_actors.server.content import blob_contents, text, text_contents

from .confined import (
    AccessDenied,
    Confinement,
    NotRegularFile,
    open_listable,
    open_regular,
    owned,
    status,
)
from .files import (
    FileInfo,
    Listing,
    Search,
    SearchResult,
    entry_type,
    list_entries,
    make_directory,
    read_range,
    replace_file,
    search_files,
)
from .workers import Workers

T = TypeVar("T")

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
    #: Most worker threads doing this server's file work at once; more calls wait.
    max_threads: int = 8


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


# -- refusals ------------------------------------------------------------------------------

#: What a path the caller gave can fail with: its mistake, not the server's.
_CALLERS_FAULT: Final = frozenset(
    {
        errno.ENOENT,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EEXIST,
        errno.EACCES,
        errno.EPERM,
        errno.ELOOP,
        errno.ENAMETOOLONG,
    }
)


def refusal(error: AccessDenied | OSError) -> str | None:
    """What to tell the caller of a path refused for its own fault (outside the allowed
    directories, missing, not a regular file...), naming the path as the caller wrote
    it; None for a failure of the server (an I/O error, no space left: logged as one).

    A refusal is answered as a :class:`ToolError`: an ``isError`` result and one DEBUG
    line in the log, so that a client asking again and again cannot flood the log.
    """
    if isinstance(error, (AccessDenied, NotRegularFile)):
        return str(error)
    if error.errno in _CALLERS_FAULT:
        return f"{error.strerror}: {error.filename!r}"
    return None


# -- the server ----------------------------------------------------------------------------


def _check_limits(settings: Settings) -> None:
    for limit in ("max_read_bytes", "max_results", "max_scanned", "max_threads"):
        if getattr(settings, limit) < 1:
            raise ValueError(f"{limit} must be at least 1")


def _alias(written: str | os.PathLike[str]) -> tuple[PurePosixPath, PurePosixPath]:
    """An absolute path as written (``..`` collapsed on the text), and its real path."""
    return PurePosixPath(os.path.abspath(written)), PurePosixPath(real(written))


def create(settings: Settings | None = None) -> Server:
    """Build a ``filesystem`` server for ``settings``."""
    settings = settings or Settings()
    configured = _alias(Path(settings.root).expanduser())
    root = Path(configured[1])
    if not root.is_dir():
        raise ValueError(f"root {settings.root!r} is not a directory")
    _check_limits(settings)
    workers = Workers(settings.max_threads)
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

    async def confinement(ctx: Context) -> Confinement:
        capabilities = ctx.session.client_capabilities
        declared = capabilities is not None and capabilities.roots is not UNSET
        if not settings.use_client_roots or not declared:
            return Confinement(root, ((),), "the configured root", (configured,))
        client_roots = [
            _alias(path) for r in await ctx.list_roots() if (path := file_uri_path(r.uri))
        ]
        covered = intersect(root, (Path(meaning) for _, meaning in client_roots))
        allowed = tuple(directory.relative_to(root).parts for directory in covered)
        source = "the client's roots within the root"
        return Confinement(root, allowed, source, (configured, *client_roots))

    async def confined(ctx: Context, work: Callable[[Confinement, threading.Event], T]) -> T:
        """``work`` in a worker thread, confined to what this request may touch."""
        return await workers.run(partial(work, await confinement(ctx)))

    async def run(ctx: Context, work: Callable[[Confinement, threading.Event], T]) -> T:
        """:func:`confined` for a tool: a path the caller got wrong is a
        :class:`ToolError` (see :func:`refusal`)."""
        try:
            return await confined(ctx, work)
        except (AccessDenied, OSError) as error:
            if (message := refusal(error)) is None:
                raise
            raise ToolError(message) from None

    @server.tool(annotations=_READ_ONLY)
    async def list_allowed_directories(ctx: Context) -> list[str]:
        """The directories this session may read (the configured root, narrowed to the
        client's roots when it declares them)."""
        return [str(directory) for directory in (await confinement(ctx)).directories]

    @server.tool(annotations=_READ_ONLY)
    async def list_directory(ctx: Context, path: str = ".") -> Listing:
        """List a directory's entries (name, type, size of files), sorted by name.

        Args:
            path: The directory, absolute or relative to the first allowed directory.
        """

        def listing(scope: Confinement, stop: threading.Event) -> Listing:
            walked = scope.walk(path, open_listable)
            with owned(walked.result) as directory:
                entries, truncated = list_entries(directory, settings.max_results, stop)
            return Listing(str(scope.display(walked.parts)), entries, truncated)

        return await run(ctx, listing)

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
        limit = min(max_bytes or settings.max_read_bytes, settings.max_read_bytes)

        def read(scope: Confinement, stop: threading.Event) -> tuple[str, int, int]:
            walked = scope.walk(path, open_regular)
            with owned(walked.result) as file:
                size = os.fstat(file).st_size
                data = read_range(file, offset, limit, stop)
            more = offset + len(data) < size
            decoder = codecs.getincrementaldecoder("utf-8")()
            try:
                decoded = decoder.decode(data, final=not more)
            except UnicodeDecodeError:
                message = f"{path!r} is not UTF-8 text; read it as a file:/// resource"
                raise ToolError(message) from None
            consumed = len(data) - len(decoder.getstate()[0])
            return decoded, offset + consumed, size

        content, end, size = await run(ctx, read)
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

        def info(scope: Confinement, stop: threading.Event) -> FileInfo:
            walked = scope.walk(path, status)
            found = walked.result
            modified = datetime.datetime.fromtimestamp(found.st_mtime, datetime.UTC)
            return FileInfo(
                path=str(scope.display(walked.parts)),
                type=entry_type(found.st_mode),
                size=found.st_size,
                modified=modified.isoformat(timespec="seconds"),
                permissions=stat.filemode(found.st_mode),
            )

        return await run(ctx, info)

    @server.tool(annotations=_READ_ONLY)
    async def search(
        ctx: Context, pattern: str, path: str = ".", contains: str | None = None
    ) -> SearchResult:
        """Find regular files below a directory whose name matches a glob pattern
        (case-insensitive), optionally only those whose text contains a string.
        Symlinked directories are not followed.

        Args:
            pattern: A glob on file names, e.g. ``*.py`` or ``README*``.
            path: Where to start, absolute or relative to the first allowed directory.
            contains: Keep only UTF-8 text files that contain this string.
        """
        query = Search(
            pattern.lower(),
            contains,
            settings.max_results,
            settings.max_scanned,
            settings.max_read_bytes,
        )

        def find(scope: Confinement, stop: threading.Event) -> SearchResult:
            walked = scope.walk(path, open_listable)
            with owned(walked.result) as top:
                return search_files(scope, top, walked.parts, query, stop)

        return await run(ctx, find)

    @server.resource(
        "file:///{+path}",
        name="file",
        title="A file",
        description="A file inside the allowed directories (text, or a base64 blob).",
    )
    async def file_resource(path: str, ctx: Context) -> types.ResourceContents:
        uri = f"file:///{path}"
        not_found = McpError(errors.RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})

        def read(scope: Confinement, stop: threading.Event) -> bytes:
            with owned(scope.walk("/" + path, open_regular).result) as file:
                if os.fstat(file).st_size > settings.max_read_bytes:
                    raise errors.invalid_params(
                        f"{uri} is larger than {settings.max_read_bytes} bytes (max_read_bytes)"
                    )
                return read_range(file, 0, settings.max_read_bytes, stop)

        try:
            data = await confined(ctx, read)
        except AccessDenied as denied:
            raise errors.invalid_params(str(denied)) from None
        except (FileNotFoundError, NotADirectoryError, NotRegularFile):
            raise not_found from None
        mime_type = mimetypes.guess_type(path)[0]
        try:
            return text_contents(uri, data.decode("utf-8"), mime_type or "text/plain")
        except UnicodeDecodeError:
            return blob_contents(uri, data, mime_type or "application/octet-stream")

    if settings.allow_write:
        _write_tools(server, run)
    return server


Run = Callable[[Context, Callable[[Confinement, threading.Event], T]], Awaitable[T]]


def _write_tools(server: Server, run: Run[Any]) -> None:
    @server.tool(annotations=_WRITES)
    async def write_file(ctx: Context, path: str, content: str) -> str:
        """Create or replace a UTF-8 text file (written to a temporary file, then renamed
        into place). Its directory must exist.

        Args:
            path: The file, absolute or relative to the first allowed directory.
            content: The new text.
        """
        data = content.encode("utf-8")

        def write(scope: Confinement, stop: threading.Event) -> str:
            walked = scope.walk(path, partial(replace_file, data=data, stop=stop))
            return f"wrote {walked.result} bytes to {scope.display(walked.parts)}"

        message: str = await run(ctx, write)
        return message

    @server.tool(annotations=_WRITES)
    async def create_directory(ctx: Context, path: str) -> str:
        """Create a directory, and any missing parents (nothing happens if it exists).

        Args:
            path: The directory, absolute or relative to the first allowed directory.
        """

        def make(scope: Confinement, stop: threading.Event) -> str:
            walked = scope.walk(path, make_directory, make_directories=True)
            return f"created {scope.display(walked.parts)}"

        message: str = await run(ctx, make)
        return message
