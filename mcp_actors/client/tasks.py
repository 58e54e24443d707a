"""The client side of the tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28).

A server may answer a ``tools/call`` with a task instead of a result, when the
request declares the extension. Two ways to use that:

- ``client.call_tool(...)`` on a client that declares the extension
  (``open_client(..., capabilities=ClientCapabilities(extensions={TASKS_EXTENSION: {}}))``)
  handles it transparently: it polls ``tasks/get`` at the server's ``pollIntervalMs``,
  tells ``on_progress`` each status change, and returns the tool's result. If the
  caller is cancelled or times out, the task is cancelled with ``tasks/cancel``;
- ``await client.start_tool_task(name, arguments)`` declares the extension for that
  one request and returns a :class:`ToolTask` handle — ``status()``, ``result()``,
  ``answer(...)`` (``tasks/update``) and ``cancel()`` — which another connection can
  rebuild from its ``task_id`` with ``client.tool_task(task_id)``.

A task that ends ``failed`` raises its JSON-RPC error as :class:`McpError`; one that
ends ``cancelled`` raises :class:`TaskCancelled`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import msgspec
import trio
from msgspec import UNSET

from ..protocol import types as t
from ..protocol.errors import INTERNAL_ERROR, McpError
from ..protocol.methods import has_capability
from .connection import Connection
from .era import check_result_type
from .handlers import ProgressHandler, maybe_await
from .input_required import INPUT_REQUIRED_METHODS, Answer, call_with_input, fulfil

#: Poll interval when the server suggests none (ms), and the bounds put on what it suggests.
DEFAULT_POLL_MS = 500
MIN_POLL_MS, MAX_POLL_MS = 10, 30_000
#: Seconds ``tasks/cancel`` may take when the caller gave up on a task.
CANCEL_TIMEOUT = 5.0
_TERMINAL = frozenset({"completed", "failed", "cancelled"})


class TaskCancelled(McpError):
    """The task ended ``cancelled`` (``tasks/cancel``, by us or another client)."""

    def __init__(self, task_id: str) -> None:
        super().__init__(INTERNAL_ERROR, f"task {task_id} was cancelled", {"taskId": task_id})
        self.task_id = task_id


def with_tasks_extension(capabilities: t.ClientCapabilities) -> t.ClientCapabilities:
    """``capabilities`` declaring the tasks extension too."""
    extensions = dict(capabilities.extensions) if capabilities.extensions is not UNSET else {}
    extensions.setdefault(t.TASKS_EXTENSION, {})
    return msgspec.structs.replace(capabilities, extensions=extensions)


def declares_tasks(capabilities: object) -> bool:
    """Whether ``capabilities`` declare the tasks extension."""
    return has_capability(capabilities, ("extensions", t.TASKS_EXTENSION))


@attrs.define(eq=False)
class ToolTask:
    """A task a ``tools/call`` started (or the result it gave at once: ``task_id`` None)."""

    #: The connection the task's requests go over (a :class:`~.client.Client`).
    client: Connection
    task_id: str | None
    #: The answer when the server did not make a task (a complete result).
    immediate: t.CallToolResult | None = None
    #: Answers the task's input requests while :meth:`result` waits (the client's
    #: handlers); None: someone else answers them (:meth:`answer`).
    fulfil_with: Answer | None = None
    last: t.DetailedTask | None = None
    _answered: set[str] = attrs.field(init=False, factory=set)

    async def status(self) -> t.DetailedTask:
        """``tasks/get``: the task now (``result``/``error``/``input_requests`` inlined)."""
        self.last = await tasks_request(
            self.client, "tasks/get", t.TaskIdParams(task_id=self._id()), t.DetailedTask
        )
        return self.last

    async def answer(self, responses: Mapping[str, Any]) -> None:
        """``tasks/update``: answer some of the task's ``input_requests`` by key."""
        params = t.UpdateTaskParams(task_id=self._id(), input_responses=dict(responses))
        await tasks_request(self.client, "tasks/update", params, t.EmptyResult)

    async def cancel(self) -> None:
        """``tasks/cancel``: ask the server to stop the task (an ack; it ends cooperatively)."""
        if self.task_id is not None:
            params = t.TaskIdParams(task_id=self.task_id)
            await tasks_request(self.client, "tasks/cancel", params, t.EmptyResult)

    async def result(self, *, on_progress: ProgressHandler | None = None) -> t.CallToolResult:
        """Poll until the task ends; its tool result, or its error raised.

        ``on_progress(polls, None, "status: message")`` hears each status change. A
        task waiting for input (``input_required``) is answered with ``fulfil_with``
        (the client's handlers), or waits until someone answers it (:meth:`answer`).
        Cancel the calling scope to give up: the task is then cancelled on the server too.
        """
        if self.immediate is not None:
            return self.immediate
        polls, seen = 0, None
        try:
            while True:
                task = await self.status()
                polls += 1
                if on_progress is not None and (task.status, task.status_message) != seen:
                    seen = (task.status, task.status_message)
                    note: str = task.status
                    if task.status_message is not UNSET:
                        note += f": {task.status_message}"
                    await maybe_await(on_progress(polls, None, note))
                if task.status in _TERMINAL:
                    return self._outcome(task)
                if task.status == "input_required" and await self._fulfil(task):
                    continue
                await trio.sleep(_poll_seconds(task))
        except BaseException:
            if self.last is None or self.last.status not in _TERMINAL:
                with trio.move_on_after(CANCEL_TIMEOUT) as scope:
                    scope.shield = True
                    with contextlib.suppress(McpError, OSError):  # then it is the server's
                        await self.cancel()  # to expire
            raise

    async def _fulfil(self, task: t.DetailedTask) -> bool:
        """Answer the input requests not answered yet; whether there were any."""
        asked = task.input_requests if task.input_requests is not UNSET else {}
        pending = {key: value for key, value in asked.items() if key not in self._answered}
        if self.fulfil_with is None or not pending:
            return False
        try:
            requests = msgspec.convert(pending, dict[str, t.InputRequest])
        except msgspec.ValidationError as error:
            raise McpError(INTERNAL_ERROR, f"invalid inputRequests of a task: {error}") from None
        responses = await fulfil(requests, self.fulfil_with)
        self._answered.update(responses)
        await self.answer(responses)
        return True

    def _outcome(self, task: t.DetailedTask) -> t.CallToolResult:
        task_id = self._id()
        if task.status == "completed":
            outcome = task.result if task.result is not UNSET else {}
            return msgspec.convert(outcome, t.CallToolResult)
        if task.status == "failed":
            error = task.error if task.error is not UNSET else {}
            raise McpError(
                int(error.get("code", INTERNAL_ERROR)),
                str(error.get("message", f"task {task_id} failed")),
                error.get("data"),
            )
        raise TaskCancelled(task_id)

    def _id(self) -> str:
        if self.task_id is None:
            raise ValueError("the server answered this call at once: there is no task")
        return self.task_id


def _poll_seconds(task: t.DetailedTask) -> float:
    suggested = task.poll_interval_ms if task.poll_interval_ms is not UNSET else DEFAULT_POLL_MS
    return min(max(suggested, MIN_POLL_MS), MAX_POLL_MS) / 1000


async def tasks_request(
    client: Connection,
    method: str,
    params: Any,
    result: type[Any],
    *,
    answer: Answer | None = None,
    on_progress: Callable[[t.ProgressParams], Awaitable[None]] | None = None,
) -> Any:
    """Send a request declaring the tasks extension in its ``_meta``; decode its result.

    A ``tools/call`` answered ``input_required`` (the tool asks before it becomes a
    task) is answered with ``answer`` and retried, as :mod:`.input_required` does.
    """
    modern = client.modern
    if modern is None:
        raise McpError(
            INTERNAL_ERROR,
            f"{method}: the tasks extension needs the modern era (2026-07-28); this"
            f" session speaks {client.protocol_version}",
        )
    stamped = attrs.evolve(modern, capabilities=with_tasks_extension(modern.capabilities))

    async def send(params: Any) -> msgspec.Raw:
        raw: msgspec.Raw = await client.session.request(
            method, stamped.stamp(params), result_type=msgspec.Raw, on_progress=on_progress
        )
        return raw

    if answer is not None and method in INPUT_REQUIRED_METHODS:
        decoded = await call_with_input(method, params, send, answer, dict[str, Any])
    else:
        decoded = msgspec.json.decode(await send(params), type=dict[str, Any])
    if result is t.CallToolResult and decoded.get("resultType") == "task":
        result = t.CreatedTask
    else:
        check_result_type(method, decoded)
    try:
        return msgspec.convert(decoded, result)
    except msgspec.ValidationError as invalid:
        raise McpError(INTERNAL_ERROR, f"Invalid result of {method}: {invalid}") from None


async def start_tool_task(
    client: Connection,
    name: str,
    arguments: Mapping[str, Any] | None,
    meta: dict[str, Any] | None,
    answer: Answer | None,
    *,
    on_progress: Callable[[t.ProgressParams], Awaitable[None]] | None = None,
) -> ToolTask:
    """``tools/call`` declaring the extension; a handle on the task (or the result).
    ``answer`` (the client's handlers) answers what the tool asks, before and during
    the task; ``on_progress`` hears the call's own progress (a result given at once)."""
    params = t.CallToolParams(
        name=name,
        arguments=msgspec.Raw(msgspec.json.encode(arguments)) if arguments is not None else UNSET,
        meta=dict(meta) if meta is not None else UNSET,
    )
    outcome = await tasks_request(
        client, "tools/call", params, t.CallToolResult, answer=answer, on_progress=on_progress
    )
    if isinstance(outcome, t.CreatedTask):
        return ToolTask(client, outcome.task_id, fulfil_with=answer)
    return ToolTask(client, None, immediate=outcome)
