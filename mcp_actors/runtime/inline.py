"""Running a coroutine that is declared never to wait, in the current task, in a context of its own.

A request whose handler is declared never to wait (``@server.tool(inline=True)``)
is served by the session's reader itself: no task, no cancel scope — it is over
before the reader reads the next message, so nothing could cancel it, and the task
spawn and cancel scope would be most of its cost. :func:`start_inline` steps the
coroutine once in a copy of the caller's context (as a task would get one, so that
context variables it sets do not leak). Should it wait after all (a declaration
that was wrong), it is not lost: it is driven to completion right there, in the
same task — slower, and the reader is deaf meanwhile, but correct.
"""

from __future__ import annotations

import contextvars
import types
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def start_inline(coroutine: Coroutine[Any, Any, T]) -> Finished[T] | Waiting[T]:
    """Step ``coroutine`` once, in a copy of the current context: finished, or waiting.

    A synchronous first step, so that the common case (it finishes) costs no await;
    a :class:`Waiting` is finished with ``await waiting.finish()``.
    """
    context = contextvars.copy_context()
    try:
        trap = context.run(coroutine.send, None)
    except StopIteration as done:
        return Finished(done.value)
    return Waiting(coroutine, trap, context)


class Finished(Generic[T]):
    """A coroutine that ran to its end in one step."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


class Waiting(Generic[T]):
    """A coroutine that waited in its first step, declared inline or not."""

    __slots__ = ("_context", "_coroutine", "_trap")

    def __init__(
        self, coroutine: Coroutine[Any, Any, T], trap: Any, context: contextvars.Context
    ) -> None:
        self._coroutine = coroutine
        self._trap = trap
        self._context = context

    async def finish(self) -> T:
        """Drive the coroutine to its end, in the current task."""
        return await _finish(self._coroutine, self._trap, self._context)


@types.coroutine
def _finish(
    coroutine: Coroutine[Any, Any, T], trap: Any, context: contextvars.Context
) -> Generator[Any, Any, T]:
    """Drive a coroutine that has already yielded ``trap`` to completion in the current task."""
    while True:
        try:
            value = yield trap
        except BaseException as error:
            try:
                trap = context.run(coroutine.throw, error)
            except StopIteration as done:
                result: T = done.value
                return result
        else:
            try:
                trap = context.run(coroutine.send, value)
            except StopIteration as done:
                result = done.value
                return result
