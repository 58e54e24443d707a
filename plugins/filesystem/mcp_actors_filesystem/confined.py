"""Opening paths confined to a directory tree, safe against symlink races.

**The threat.** Whoever can change what is inside the root (another process, another
user, a tool the model drives) can swap any name for a symlink at any moment. The
obvious check — ``realpath(path)`` is inside the root, then ``open(path)`` — asks the
kernel to follow symlinks twice, and the second time the answer can differ: the
check passes for ``notes.txt`` and the open, a microsecond later, follows
``notes.txt -> /home/me/.ssh/id_ed25519``. Checking the name again after the open
has the same hole (the check and the open may see different files). Only what was
actually opened can be trusted.

**Open first, then what you opened is what you checked.** A path is walked one
component at a time from a descriptor of the root, each step an
``openat(directory_fd, name, O_NOFOLLOW)``: the kernel never follows a symlink for
us. When a component is a symlink, we read it (``readlinkat``) and splice its target
into the rest of the path ourselves — refused if it would leave the root (an absolute
target not below the root, or a ``..`` above it). Every descriptor we hold was reached
from the root's descriptor through directories inside it, so whatever the final step
opens is inside, however the names change meanwhile; a swap makes a step fail or see
the new inside object, never an outside one. Writes are created the same way
(``O_CREAT|O_EXCL|O_NOFOLLOW`` beside the target, then renamed over it with both
directory descriptors: a rename replaces a symlink, it never follows one).

The root itself is opened by its real path at the start of each walk: that path is
the operator's, outside what the sandboxed side can change.

**Not covered:** a directory *moved out of* the root while we hold its descriptor
(that needs write access outside the root), and hard links to outside files placed
inside by someone who can write both (the kernel's ``protected_hardlinks`` stops
that for other users' files).

Files are opened with ``O_NONBLOCK|O_NOCTTY`` and ``fstat``-checked to be regular
before a byte is read: opening a FIFO for reading would otherwise wait for a writer
forever, and a device has no business being read by a model.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import Final, Generic, TypeVar

import attrs

T = TypeVar("T")

#: How many symlinks one path may pass through (Linux's own limit).
MAX_SYMLINKS: Final = 40
#: The longest path a client may give (Linux's PATH_MAX).
MAX_PATH: Final = 4096

_O_PATH: Final = getattr(os, "O_PATH", 0)
#: A directory we only pass through (or name things in): no read permission needed.
PASS_THROUGH: Final = (
    (_O_PATH or os.O_RDONLY | os.O_NONBLOCK) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
)
#: A directory whose entries we list.
LISTABLE: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: A file we read: never blocks on a FIFO, never becomes our controlling terminal.
READABLE: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

#: What ``open(..., O_NOFOLLOW)`` says when the name is a symlink (ENOTDIR with
#: O_DIRECTORY on Linux, EMLINK on FreeBSD).
_SYMLINK_ERRNOS: Final = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})

#: What is done with the last component: ``(directory_fd, name) -> result``. It must not
#: follow a symlink; if ``name`` is one, it raises ``OSError(ELOOP)`` and the walk
#: follows it itself.
Action = Callable[[int, str], T]


class AccessDenied(Exception):
    """A path outside the allowed directories (or no directory is allowed at all)."""


class NotRegularFile(OSError):
    """A FIFO, socket, device or directory where a regular file is needed."""

    def __str__(self) -> str:
        return f"{self.filename!r} is not a regular file"


@attrs.frozen
class Confinement:
    """The directories one request may touch, inside the configured root.

    ``root`` is the root's real path. ``allowed`` are the directories the request may
    use, as parts below the root (``()`` is the root itself); relative paths start from
    the first. ``source`` says where ``allowed`` came from, for errors. ``aliases`` are
    other absolute spellings a client may use, each with the real path it stands for:
    the root as configured (``~/notes``), the client's roots as the client wrote them.
    An absolute path must start with the root's real path or with an alias; that is
    decided on the text alone, then the walk from the root does the rest.
    """

    root: Path
    allowed: tuple[tuple[str, ...], ...]
    source: str
    aliases: tuple[tuple[PurePosixPath, PurePosixPath], ...] = ()

    @property
    def directories(self) -> tuple[Path, ...]:
        return tuple(self.display(parts) for parts in self.allowed)

    def display(self, parts: Sequence[str]) -> Path:
        """The absolute path of ``parts`` below the root (inside it: safe to show)."""
        return self.root.joinpath(*parts)

    def walk(self, path: str, action: Action[T], *, make_directories: bool = False) -> Walked[T]:
        """Walk the client's ``path`` from the root and do ``action`` on its last component.

        Raises :class:`AccessDenied` (naming only ``path``, never where a symlink
        pointed) when it leaves the allowed directories; any ``OSError`` carries
        ``path`` as its filename. With ``make_directories``, missing directories on the
        way are created (inside the allowed directories only).
        """
        if "\x00" in path:
            raise AccessDenied("a path cannot contain NUL")
        if len(path) > MAX_PATH:
            raise AccessDenied(f"a path cannot be longer than {MAX_PATH} characters")
        if not self.allowed:
            raise AccessDenied(f"no directory is allowed ({self.source})")
        try:
            walker = _Walker(self, path, make_directories)
            try:
                return walker.run(self._start(path), action)
            finally:
                walker.close()
        except OSError as error:
            error.filename, error.filename2 = path, None
            raise

    def outside(self, path: str) -> AccessDenied:
        """The refusal of ``path``, naming the allowed directories relative to the root
        (``.`` is the root itself): the root's own place is not the caller's business."""
        directories = ", ".join("/".join(parts) or "." for parts in self.allowed)
        return AccessDenied(f"{path!r} is outside the allowed roots ({self.source}: {directories})")

    def below_root(self, path: PurePosixPath) -> list[str] | None:
        """The parts of an absolute ``path`` below the root (on the text alone), or None."""
        root = PurePosixPath(self.root)
        for alias, meaning in ((root, root), *self.aliases):
            rest = _under(path, alias)
            parts = None if rest is None else _under(meaning.joinpath(*rest), root)
            if parts is not None:
                return parts
        return None

    def permits(self, parts: Sequence[str]) -> bool:
        """Whether ``parts`` (below the root, symlink-free) lie in an allowed directory."""
        return any(tuple(parts[: len(allowed)]) == allowed for allowed in self.allowed)

    def _start(self, path: str) -> deque[str]:
        given = PurePosixPath(path)
        if not given.is_absolute():
            return deque([*self.allowed[0], *given.parts])
        parts = self.below_root(given)
        if parts is None:
            raise self.outside(path)
        return deque(parts)


@attrs.frozen
class Walked(Generic[T]):
    """What the action returned, and where it acted (parts below the root, no symlinks)."""

    result: T
    parts: tuple[str, ...]


class _Walker:
    """One walk: descriptors of the root and of the directory we are in, and its names.

    Only these two are held, however deep the path: ``..`` re-walks the names from the
    root (each step ``O_NOFOLLOW`` again) rather than keeping every ancestor open.
    """

    def __init__(self, confinement: Confinement, path: str, make_directories: bool) -> None:
        self.confinement = confinement
        self.path = path
        self.make_directories = make_directories
        self.root = os.open(confinement.root, PASS_THROUGH)
        self.here = self.root
        self.names: list[str] = []
        self.symlinks = 0
        self.just_made: str | None = None

    def run(self, pending: deque[str], action: Action[T]) -> Walked[T]:
        """Walk ``pending`` (no ``""`` or ``"."`` in it) and act on the last component."""
        while True:
            name = pending.popleft() if pending else "."
            if name == "..":
                self.up()
            elif pending:
                self.down(name, pending)
            else:
                done = self.act(name, action, pending)
                if done is not None:
                    return done

    def up(self) -> None:
        """Go to the parent: the same names less one, walked again from the root."""
        if not self.names:
            raise self.confinement.outside(self.path)
        self.names.pop()
        self.move_to(self.root)
        for name in self.names:  # a name swapped for a symlink meanwhile fails here
            self.move_to(os.open(name, PASS_THROUGH, dir_fd=self.here))

    def down(self, name: str, pending: deque[str]) -> None:
        """Enter the directory ``name``, or splice it into ``pending`` if it is a symlink."""
        try:
            descriptor = os.open(name, PASS_THROUGH, dir_fd=self.here)
        except FileNotFoundError:
            if not self.make_directories or name == self.just_made:
                raise  # (or removed again as soon as made: give up rather than loop)
            self.make_directory(name)
            self.just_made = name
            pending.appendleft(name)
            return
        except OSError as error:
            self.follow(name, pending, error)
            return
        self.move_to(descriptor)
        self.names.append(name)
        self.just_made = None

    def move_to(self, descriptor: int) -> None:
        if self.here != self.root:
            os.close(self.here)
        self.here = descriptor

    def act(self, name: str, action: Action[T], pending: deque[str]) -> Walked[T] | None:
        """Do ``action`` on ``name`` unless it is a symlink (then splice it; None)."""
        target = _read_link(self.here, name) if name != "." else None
        if target is not None:
            self.splice(target, pending)
            return None
        parts = (*self.names, name) if name != "." else tuple(self.names)
        if not self.confinement.permits(parts):
            raise self.confinement.outside(self.path)
        try:
            return Walked(action(self.here, name), parts)
        except OSError as error:
            self.follow(name, pending, error)  # swapped for a symlink since we looked
            return None

    def follow(self, name: str, pending: deque[str], error: OSError) -> None:
        """``name`` failed to open with ``error``: splice it if it is a symlink, else raise."""
        target = _read_link(self.here, name) if error.errno in _SYMLINK_ERRNOS else None
        if target is None:
            raise error
        self.splice(target, pending)

    def splice(self, target: str, pending: deque[str]) -> None:
        """Continue the walk through a symlink's ``target``, if it stays inside the root."""
        self.symlinks += 1
        if self.symlinks > MAX_SYMLINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        linked = PurePosixPath(target)
        if linked.is_absolute():
            parts = self.confinement.below_root(linked)
            if parts is None:
                raise self.confinement.outside(self.path)
            self.names.clear()
            self.move_to(self.root)
        else:
            parts = list(linked.parts)
        pending.extendleft(reversed(parts))

    def make_directory(self, name: str) -> None:
        if not self.confinement.permits((*self.names, name)):
            raise self.confinement.outside(self.path)
        with suppress(FileExistsError):  # made meanwhile: open it on the next step
            os.mkdir(name, dir_fd=self.here)

    def close(self) -> None:
        self.move_to(self.root)
        os.close(self.root)


def _under(path: PurePosixPath, prefix: PurePosixPath) -> list[str] | None:
    """The parts of ``path`` after ``prefix`` (both absolute), or None if it is not one."""
    if path.parts[1 : len(prefix.parts)] != prefix.parts[1:]:
        return None
    return list(path.parts[len(prefix.parts) :])


def _read_link(directory: int, name: str) -> str | None:
    """The target of the symlink ``name`` in ``directory``; None if it is not one."""
    try:
        return os.readlink(name, dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.EINVAL, errno.ENOENT, errno.ENOTDIR):
            return None
        raise


# -- actions on the last component ---------------------------------------------------------


@contextmanager
def owned(descriptor: int) -> Iterator[int]:
    """Close ``descriptor`` when the block ends."""
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def open_regular(directory: int, name: str) -> int:
    """A descriptor of the regular file ``name`` (never blocks on a FIFO or device)."""
    descriptor = os.open(name, READABLE, dir_fd=directory)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise NotRegularFile()
    return descriptor


def open_listable(directory: int, name: str) -> int:
    """A descriptor of the directory ``name``, for listing its entries."""
    return os.open(name, LISTABLE, dir_fd=directory)


def status(directory: int, name: str) -> os.stat_result:
    """``name``'s own status (a symlink is followed by the walk, not here)."""
    result = os.stat(name, dir_fd=directory, follow_symlinks=False)
    if stat.S_ISLNK(result.st_mode):
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
    return result
