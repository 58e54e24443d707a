"""The ``tasks/*`` methods, and when a ``tools/call`` makes a task — in both eras.

**2026-07-28, the extension ``io.modelcontextprotocol/tasks``.** Each method first
checks that the request declares the extension in its ``_meta`` client capabilities
(-32021 otherwise, before the task id is even looked at), then finds the task
(-32602 for an unknown or expired id):

- ``tasks/get``: the task with its result (``completed``), error (``failed``) or
  outstanding ``inputRequests`` (``input_required``);
- ``tasks/update``: answers to some input requests; ack ``{"resultType": "complete"}``;
- ``tasks/cancel``: cooperative cancellation; the same ack, also for a finished task.

``tasks/result`` and ``tasks/list`` do not exist in this era (-32601, from the
method table). A ``subscriptions/listen`` whose filter has ``taskIds`` gets
``notifications/tasks`` (the task, as ``tasks/get`` gives it) at each change of those
tasks; from a request without the extension it is refused with -32021. The
acknowledgement echoes the ids asked for, whoever's they are (as it does for ids
that do not exist: no oracle), but only the listener's own tasks are heard — a
task's change is addressed to its requestor (:attr:`Change.audience`).

**2025-11-25, the experimental core tasks (legacy sessions).** A ``tools/call`` with
``params.task`` (``{ttl}``) of a tool that allows it (``execution.taskSupport``) is
answered ``{"task": {...}}``; ``tasks/get`` gives the task (a tool's ``isError``
result is ``failed`` in this revision), ``tasks/result`` waits for the end and
answers what the call would have (its result with the ``related-task`` ``_meta``,
or its error), ``tasks/cancel`` cancels (-32602 for a finished task) and answers
the ``cancelled`` task. ``tasks/list`` (declared: ``tasks.list``) gives the
requestor's own tasks, oldest first, ``TaskSettings.list_page_size`` a page (a
``nextCursor`` for more; -32602 for a cursor we did not make). A legacy requestor is
always known — its principal, or else its session — so the list never shows
another client's tasks. A task's questions to the client (``ctx.elicit``...) are
requests on the session, as in any legacy call.

In both eras every method answers only the requestor's own tasks (see :mod:`.tasks`):
another caller's task id is answered as an unknown one.

See :mod:`.tasks` for the tasks themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..runtime.bus import Change
from ..runtime.request import InboundRequest
from ..runtime.task_store import TaskRecord, iso_timestamp
from .listen import FilterKey, ListenOffer, register_filter_key
from .pagination import paginate
from .tasks import declares_extension, detailed_task, missing_extension

if TYPE_CHECKING:
    from .server_session import ServerSession
    from .tools import RegisteredTool

#: The ``_meta`` key tying a 2025-11-25 message to its task.
RELATED_TASK = "io.modelcontextprotocol/related-task"
#: The legacy revision that has the experimental tasks.
LEGACY_TASKS = "2025-11-25"


def runs_as_task(
    server_session: ServerSession,
    request: InboundRequest,
    tool: RegisteredTool,
    params: t.CallToolParams,
) -> bool:
    """Whether this ``tools/call`` of ``tool`` becomes a task.

    Modern era: for a tool that allows it (``task="optional"`` or ``"always"``), when
    the request declares the extension; a tool that must run as a task (``"always"``,
    ``"deferred"``), called without it, is refused with -32021. 2025-11-25: when the
    call asks for a task (``params.task``) of a tool that allows one; -32601 for a
    task of a tool that forbids it, or for a tool that requires one called plainly.
    Older revisions: never.
    """
    if request.modern is None:
        if server_session.state.revision.name != LEGACY_TASKS:
            return False
        asked = params.task is not UNSET
        if asked and tool.task in ("never", "deferred"):
            raise McpError(errors.METHOD_NOT_FOUND, f"tool {tool.name!r} does not run as a task")
        if not asked and tool.task == "always":
            raise McpError(
                errors.METHOD_NOT_FOUND,
                f"tool {tool.name!r} runs only as a task: call it with params.task",
            )
        return asked
    if tool.task == "never":
        return False
    declared = declares_extension(server_session.client_capabilities)
    if not declared and tool.task in ("always", "deferred"):
        raise missing_extension(f"tool {tool.name!r} runs only as a task")
    return declared and tool.task != "deferred"  # a deferred tool starts its task itself


# -- notifications/tasks on listen streams (the extension's ``taskIds`` filter key) ----------


def task_change(record: TaskRecord) -> Change:
    """A task's new state, as the change bus carries it to its requestor's listen streams."""
    return Change(
        "notifications/tasks", record.task_id, detailed_task(record), audience=record.requestor
    )


def _honour_task_ids(value: Any, offer: ListenOffer) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise errors.invalid_params("notifications.taskIds must be an array of strings")
    if not declares_extension(offer.client_capabilities):
        raise missing_extension("a listen with taskIds needs the tasks extension")
    return value or None


def _selects_task(honoured: Any, change: Change) -> bool:
    return change.method == "notifications/tasks" and change.subject in honoured


register_filter_key(FilterKey("taskIds", _honour_task_ids, _selects_task))


def legacy_requested_ttl(params: t.CallToolParams) -> int | None:
    """The ``ttl`` a 2025-11-25 task-augmented call asks for (None: none)."""
    task = params.task
    return task.ttl if task is not UNSET and isinstance(task.ttl, int) else None


def legacy_created(created: t.CreatedTask) -> t.CreateTaskResult:
    """A new task as 2025-11-25 spells it: ``{"task": {...}}``."""
    return t.CreateTaskResult(task=_legacy_task_of(created))


def _check_declared(server_session: ServerSession, request: InboundRequest) -> None:
    if request.modern is None:
        if server_session.state.revision.name != LEGACY_TASKS:
            raise errors.method_not_found(request.method)
        return
    if not declares_extension(server_session.client_capabilities):
        raise missing_extension(f"{request.method} needs the tasks extension")


async def get_task(
    server_session: ServerSession, request: InboundRequest, params: t.TaskIdParams
) -> t.DetailedTask | t.GetTaskResult:
    _check_declared(server_session, request)
    manager = server_session.server.task_manager
    record = await manager.find(params.task_id, manager.requestor_of(server_session))
    if request.modern is None:
        return t.GetTaskResult(**_legacy_fields(record))
    return detailed_task(record)


async def update_task(
    server_session: ServerSession, request: InboundRequest, params: t.UpdateTaskParams
) -> t.EmptyResult:
    _check_declared(server_session, request)
    manager = server_session.server.task_manager
    requestor = manager.requestor_of(server_session)
    await manager.update(params.task_id, requestor, params.input_responses)
    return t.EmptyResult()


async def cancel_task(
    server_session: ServerSession, request: InboundRequest, params: t.TaskIdParams
) -> t.EmptyResult | t.CancelTaskResult:
    _check_declared(server_session, request)
    manager = server_session.server.task_manager
    requestor = manager.requestor_of(server_session)
    if request.modern is None:
        if (await manager.find(params.task_id, requestor)).terminal:
            raise McpError(
                errors.INVALID_PARAMS,
                f"Invalid params: task {params.task_id!r} has finished; it cannot be cancelled",
                {"taskId": params.task_id},
            )
        await manager.cancel(params.task_id, requestor)
        return t.CancelTaskResult(**_legacy_fields(await manager.find(params.task_id, requestor)))
    await manager.cancel(params.task_id, requestor)
    return t.EmptyResult()


async def task_result(
    server_session: ServerSession, request: InboundRequest, params: t.GetTaskPayloadParams
) -> t.CallToolResult:
    """``tasks/result`` (2025-11-25): what the call would have answered, once it ended."""
    _check_declared(server_session, request)
    manager = server_session.server.task_manager
    record = await manager.wait_finished(params.task_id, manager.requestor_of(server_session))
    related = {RELATED_TASK: {"taskId": record.task_id}}
    if record.status == "completed" and record.result is not None:
        result = msgspec.convert(record.result, t.CallToolResult)
        meta = result.meta if isinstance(result.meta, dict) else {}
        return msgspec.structs.replace(result, meta={**meta, **related})
    if record.status == "failed" and record.error is not None:
        error = record.error
        raise McpError(int(error["code"]), str(error["message"]), error.get("data"))
    raise McpError(errors.INTERNAL_ERROR, f"task {record.task_id!r} was cancelled", related)


async def list_tasks(
    server_session: ServerSession, request: InboundRequest, params: t.PaginatedParams
) -> t.ListTasksResult:
    """``tasks/list`` (2025-11-25): one page of the requestor's own tasks."""
    _check_declared(server_session, request)
    manager = server_session.server.task_manager
    records = await manager.tasks_of(manager.requestor_of(server_session))
    page, next_cursor = paginate(records, params.cursor, manager.settings.list_page_size)
    tasks = [t.Task(**_legacy_fields(record)) for record in page]
    return t.ListTasksResult(tasks=tasks, next_cursor=next_cursor)


def _legacy_fields(record: TaskRecord) -> dict[str, Any]:
    """A record as 2025-11-25's ``Task``: ``ttl``/``pollInterval``, and a tool's
    ``isError`` result as ``failed``."""
    status = record.status
    message = record.status_message
    if status == "completed" and record.result is not None and record.result.get("isError"):
        status, message = "failed", message or "the tool reported an error (isError)"
    return {
        "task_id": record.task_id,
        "status": status,
        "created_at": iso_timestamp(record.created),
        "last_updated_at": iso_timestamp(record.updated),
        "ttl": record.ttl_ms,
        "poll_interval": record.poll_interval_ms,
        "status_message": message or UNSET,
    }


def _legacy_task_of(created: t.CreatedTask) -> t.Task:
    return t.Task(
        task_id=created.task_id,
        status=created.status,
        created_at=created.created_at,
        last_updated_at=created.last_updated_at,
        ttl=created.ttl_ms,
        poll_interval=created.poll_interval_ms,
    )


TASK_HANDLERS: dict[str, Any] = {
    "tasks/get": get_task,
    "tasks/update": update_task,
    "tasks/cancel": cancel_task,
    "tasks/result": task_result,
    "tasks/list": list_tasks,
}
