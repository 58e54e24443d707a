"""Calling a user's handler: async functions are awaited, sync ones run in a worker thread.

Every decorator (tools, resources, prompts, completions) accepts both kinds of
function. A sync function may block (file I/O, a database driver), so it never
runs on the event loop: it runs in ``trio.to_thread`` and is abandoned if the
request is cancelled (its result is then ignored).

A handler that refuses a request for the caller's fault raises
:class:`~.tool_error.ToolError`: a tool's becomes its ``isError`` result (see
:mod:`.tools`); a prompt's or a resource's has no such result, so it is the request's
error, -32602 with the handler's message (:func:`call_refusable`) — never logged as
the server's failure.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

import trio

from ..protocol import errors
from .tool_error import ToolError

log = logging.getLogger(__name__)


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


async def call_refusable(
    what: str, function: Callable[..., Any], kwargs: Mapping[str, Any], run_async: bool
) -> Any:
    """:func:`call`, where a :class:`~.tool_error.ToolError` is the request's -32602 with
    its message (``what`` names the handler), logged in one DEBUG line."""
    try:
        return await call(function, kwargs, run_async)
    except ToolError as refused:
        log.debug("%s refused a request: %s", what, refused)
        raise errors.invalid_params(f"{what}: {refused}") from None
