"""Calling a user's handler: async functions are awaited, sync ones run in a worker thread.

Every decorator (tools, resources, prompts, completions) accepts both kinds of
function. A sync function may block (file I/O, a database driver), so it never
runs on the event loop: it runs in ``trio.to_thread`` and is abandoned if the
request is cancelled (its result is then ignored).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import trio


def is_async(function: Callable[..., Any]) -> bool:
    """Whether calling ``function`` returns an awaitable we should await on the loop."""
    target = function.__call__ if not inspect.isroutine(function) else function  # type: ignore[operator]
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(target)


async def call(function: Callable[..., Any], kwargs: Mapping[str, Any], run_async: bool) -> Any:
    """``function(**kwargs)``: awaited if ``run_async``, else in a worker thread."""
    if run_async:
        return await function(**kwargs)
    return await trio.to_thread.run_sync(
        functools.partial(function, **kwargs), abandon_on_cancel=True
    )
