"""The ``tasks/*`` methods of the tasks extension (2026-07-28); when ``tools/call`` makes a task.

Each method first checks that the request declares the extension in its
``_meta`` client capabilities (-32021 otherwise, before the task id is even
looked at), then finds the task (-32602 for an unknown or expired id):

- ``tasks/get``: the task with its result (``completed``), error (``failed``) or
  outstanding ``inputRequests`` (``input_required``);
- ``tasks/update``: answers to some input requests; ack ``{"resultType": "complete"}``;
- ``tasks/cancel``: cooperative cancellation; the same ack, also for a finished task.

``tasks/result`` and ``tasks/list`` do not exist in this era (-32601, from the
method table). See :mod:`.tasks` for the tasks themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol import errors
from ..protocol import types as t
from ..runtime.request import InboundRequest
from .tasks import declares_extension, detailed_task, missing_extension

if TYPE_CHECKING:
    from .app import ServerSession
    from .tools import RegisteredTool


def runs_as_task(
    server_session: ServerSession, request: InboundRequest, tool: RegisteredTool
) -> bool:
    """Whether this ``tools/call`` of ``tool`` becomes a task.

    Only in the modern era, only for a tool that allows it (``task="optional"`` or
    ``"always"``), only when the request declares the extension; a tool that must run
    as a task (``"always"``, ``"deferred"``), called without it, is refused with -32021.
    """
    if request.modern is None or tool.task == "never":
        return False
    declared = declares_extension(server_session.client_capabilities)
    if not declared and tool.task in ("always", "deferred"):
        raise missing_extension(f"tool {tool.name!r} runs only as a task")
    return declared and tool.task != "deferred"  # a deferred tool starts its task itself


def _check_declared(server_session: ServerSession, request: InboundRequest) -> None:
    method = request.method
    if request.modern is None:  # the 2025-11-25 experimental tasks are not served (yet)
        raise errors.method_not_found(method)
    if not declares_extension(server_session.client_capabilities):
        raise missing_extension(f"{method} needs the tasks extension")


async def get_task(
    server_session: ServerSession, request: InboundRequest, params: t.TaskIdParams
) -> t.DetailedTask:
    _check_declared(server_session, request)
    return detailed_task(server_session.server.task_manager.find(params.task_id))


async def update_task(
    server_session: ServerSession, request: InboundRequest, params: t.UpdateTaskParams
) -> t.EmptyResult:
    _check_declared(server_session, request)
    server_session.server.task_manager.update(params.task_id, params.input_responses)
    return t.EmptyResult()


async def cancel_task(
    server_session: ServerSession, request: InboundRequest, params: t.TaskIdParams
) -> t.EmptyResult:
    _check_declared(server_session, request)
    server_session.server.task_manager.cancel(params.task_id)
    return t.EmptyResult()


TASK_HANDLERS: dict[str, Any] = {
    "tasks/get": get_task,
    "tasks/update": update_task,
    "tasks/cancel": cancel_task,
}
