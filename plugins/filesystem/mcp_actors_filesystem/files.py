"""The blocking file work behind the tools, on descriptors, in bounded steps.

Everything here runs in a worker thread and takes a ``stop`` event, set by the server
when the call is cancelled. The work checks it between bounded steps — a chunk of at
most :data:`CHUNK` bytes, one directory entry — and raises :class:`Stopped`, so a
cancelled call gives its thread back at once instead of holding it until the work is
done. Nothing here follows a symlink: descriptors come from
:meth:`~.confined.Confinement.walk`, and directories below them are opened with
``O_NOFOLLOW``.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import secrets
import stat
import threading
from collections.abc import Generator, Iterator
from contextlib import closing, suppress
from typing import Literal

import attrs
import msgspec

from .confined import LISTABLE, AccessDenied, Confinement, open_regular, owned, status

#: The most bytes read or written between two looks at the stop event.
CHUNK = 64 * 1024
#: How many directories deep ``search`` goes below where it starts.
MAX_DEPTH = 32


class Stopped(Exception):
    """The call was cancelled: nobody waits for this work any more."""


def check(stop: threading.Event) -> None:
    if stop.is_set():
        raise Stopped


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


def entry_type(mode: int) -> EntryType:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


# -- reading -------------------------------------------------------------------------------


def read_range(descriptor: int, offset: int, limit: int, stop: threading.Event) -> bytes:
    """Up to ``limit`` bytes of a regular file from ``offset``, a chunk at a time."""
    chunks: list[bytes] = []
    position, remaining = offset, limit
    while remaining > 0:
        check(stop)
        chunk = os.pread(descriptor, min(CHUNK, remaining), position)
        if not chunk:
            break
        chunks.append(chunk)
        position += len(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def list_entries(directory: int, limit: int, stop: threading.Event) -> tuple[list[Entry], bool]:
    """A directory's first ``limit`` entries by name (symlinks described, not followed);
    and whether there were more."""
    entries: list[Entry] = []
    with os.scandir(directory) as scan:
        for item in sorted(scan, key=lambda item: item.name):
            check(stop)
            if len(entries) >= limit:
                return entries, True
            with suppress(FileNotFoundError):  # removed since the listing
                info = item.stat(follow_symlinks=False)
                kind = entry_type(info.st_mode)
                entries.append(Entry(item.name, kind, info.st_size if kind == "file" else None))
    return entries, False


# -- searching -----------------------------------------------------------------------------


@attrs.frozen
class Search:
    """One ``search`` call: a lower-cased glob on names, an optional text to find, bounds."""

    pattern: str
    contains: str | None
    max_results: int
    max_scanned: int
    max_read_bytes: int


def search_files(
    confinement: Confinement,
    top: int,
    top_parts: tuple[str, ...],
    query: Search,
    stop: threading.Event,
) -> SearchResult:
    """The regular files below ``top`` whose name (and text) match ``query``, depth first.

    Directories are entered only through ``O_NOFOLLOW`` descriptors, at most
    :data:`MAX_DEPTH` deep; a symlink counts when it leads to a regular file inside the
    allowed directories; FIFOs, sockets and devices never match and are never read.
    ``truncated``: a bound (results, files scanned, depth) left something out.
    """
    matches: list[str] = []
    scanned = 0
    below = FilesBelow(top, top_parts, stop)
    with closing(iter(below)) as entries:  # its descriptors closed now, not when collected
        for directory, parts, entry in entries:
            if scanned >= query.max_scanned or len(matches) >= query.max_results:
                return SearchResult(matches, scanned, truncated=True)
            scanned += 1
            if not fnmatch.fnmatchcase(entry.name.lower(), query.pattern):
                continue
            path = confinement.display((*parts, entry.name))
            descriptor = _open_match(confinement, directory, str(path), entry)
            if descriptor is None:
                continue
            with owned(descriptor):
                if query.contains is None or _contains(descriptor, query.contains, query, stop):
                    matches.append(str(path))
    return SearchResult(matches, scanned, truncated=below.too_deep)


def _open_match(
    confinement: Confinement, directory: int, path: str, entry: os.DirEntry[str]
) -> int | None:
    """A descriptor of the regular file an entry is (or links to, inside); else None."""
    try:
        if entry.is_symlink():
            return confinement.walk(path, open_regular).result
        return open_regular(directory, entry.name)
    except (AccessDenied, OSError):
        return None


def _contains(descriptor: int, text: str, query: Search, stop: threading.Event) -> bool:
    """Whether the file's first ``max_read_bytes`` are UTF-8 text containing ``text``."""
    try:
        return text in read_range(descriptor, 0, query.max_read_bytes, stop).decode()
    except (OSError, UnicodeDecodeError):
        return False


@attrs.define
class _Directory:
    """A directory being searched: its descriptor, and what is left of it."""

    descriptor: int
    parts: tuple[str, ...]
    files: Iterator[os.DirEntry[str]]
    subdirectories: Iterator[str]
    owned: bool

    @classmethod
    def scan(cls, descriptor: int, parts: tuple[str, ...], *, owned: bool) -> _Directory:
        with os.scandir(descriptor) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
        directories = [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
        others = [entry for entry in entries if not entry.is_dir(follow_symlinks=False)]
        return cls(descriptor, parts, iter(others), iter(directories), owned)

    def close(self) -> None:
        if self.owned:
            os.close(self.descriptor)


class FilesBelow:
    """Every entry below ``top`` that is not a directory, as ``(directory descriptor, its
    parts, entry)``: a directory's own entries by name, then its subdirectories'.

    Iterative, holding one descriptor per level, so the depth is bounded: directories
    more than :data:`MAX_DEPTH` below ``top`` are left out (and ``too_deep`` says so)
    — with ``max_threads`` searches at once, a deep tree cannot use up the process's
    descriptors. A subdirectory that cannot be opened — gone, swapped for a symlink,
    unreadable — is skipped.
    """

    def __init__(self, top: int, top_parts: tuple[str, ...], stop: threading.Event) -> None:
        self.top, self.top_parts, self.stop = top, top_parts, stop
        self.too_deep = False

    def __iter__(self) -> Generator[tuple[int, tuple[str, ...], os.DirEntry[str]]]:
        stack = [_Directory.scan(self.top, self.top_parts, owned=False)]
        try:
            while stack:
                check(self.stop)
                current = stack[-1]
                entry = next(current.files, None)
                if entry is not None:
                    yield current.descriptor, current.parts, entry
                    continue
                name = next(current.subdirectories, None)
                if name is None:
                    stack.pop().close()
                elif len(stack) > MAX_DEPTH:
                    self.too_deep = True
                else:
                    self.enter(stack, current, name)
        finally:
            for directory in stack:
                directory.close()

    @staticmethod
    def enter(stack: list[_Directory], parent: _Directory, name: str) -> None:
        with suppress(OSError):
            child = os.open(name, LISTABLE, dir_fd=parent.descriptor)
            try:
                stack.append(_Directory.scan(child, (*parent.parts, name), owned=True))
            except OSError:
                os.close(child)


# -- writing -------------------------------------------------------------------------------


def replace_file(directory: int, name: str, data: bytes, stop: threading.Event) -> int:
    """Make ``name`` in ``directory`` hold ``data``: written to a new file beside it,
    then renamed over it (readers see the old file or the new one, never half of it;
    a symlink that appears at ``name`` meanwhile is replaced, not followed). A file
    replaced keeps its permissions; a new one gets ``0o666`` less the umask."""
    mode = _mode_to_keep(directory, name)
    temporary, descriptor = _create_beside(directory, name)
    try:
        with owned(descriptor):
            if mode is not None:
                os.fchmod(descriptor, mode)
            for start in range(0, len(data), CHUNK):
                check(stop)
                os.write(descriptor, data[start : start + CHUNK])
        check(stop)
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=directory)
        raise
    return len(data)


def make_directory(directory: int, name: str) -> None:
    """Create the directory ``name`` (nothing happens if it exists)."""
    try:
        os.mkdir(name, dir_fd=directory)
    except FileExistsError:
        if not stat.S_ISDIR(status(directory, name).st_mode):
            raise


def _mode_to_keep(directory: int, name: str) -> int | None:
    """The permissions of the regular file ``name``; None if there is none."""
    try:
        mode = status(directory, name).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    return stat.S_IMODE(mode) if stat.S_ISREG(mode) else None


def _create_beside(directory: int, name: str) -> tuple[str, int]:
    """A new, empty file ``.<name>.<random>`` in ``directory`` (never through a symlink)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        temporary = f".{name[:200]}.{secrets.token_hex(8)}"
        with suppress(FileExistsError):
            return temporary, os.open(temporary, flags, 0o666, dir_fd=directory)
    raise FileExistsError(errno.EEXIST, "no free temporary name")
