"""Exception groups stop here: the one helper that unwraps them at the public edge.

Trio nurseries always raise :class:`BaseExceptionGroup`. Users of a client or a
server should see the error that happened — a ``RequestTimeout``, a
``ConnectionClosed`` — not a group holding it, so public context managers wrap
their nursery in :func:`unwrapped`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def sole_exception(error: BaseException) -> BaseException:
    """The single leaf of nested one-exception groups, or ``error`` itself."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


@contextmanager
def unwrapped() -> Iterator[None]:
    """Re-raise a group holding exactly one exception as that exception."""
    try:
        yield
    except BaseExceptionGroup as group:
        leaf = sole_exception(group)
        if leaf is group:
            raise
        raise leaf from None


def describe(error: BaseException) -> str:
    """A one-line account of an exception; a group is described by its leaves."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(leaf) for leaf in error.exceptions)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
