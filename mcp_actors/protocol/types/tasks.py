"""Tasks: long-running requests polled for their result.

Two generations: the core tasks of 2025-11-25 (``tasks/get``, ``tasks/result``, ...)
and the 2026-07-28 tasks extension (:data:`TASKS_EXTENSION`), whose ``tools/call``
answers a :class:`CreatedTask`.
"""

from typing import Any, Final

from msgspec import UNSET, UnsetType, field

from .base import Cursor, McpStruct, Result, TaskStatus


class TaskMetadata(McpStruct):
    """Requests task-augmented execution (``params.task``) with an optional TTL in ms."""

    ttl: int | UnsetType = UNSET


class RelatedTaskMetadata(McpStruct):
    """Value of ``_meta["io.modelcontextprotocol/related-task"]``."""

    task_id: str


class Task(McpStruct):
    """State of a task. ``ttl`` is required but may be ``null`` (unlimited)."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl: int | None
    status_message: str | UnsetType = UNSET
    poll_interval: int | UnsetType = UNSET


class CreateTaskResult(McpStruct):
    """Result of a task-augmented request: the task that was created."""

    task: Task
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class GetTaskParams(McpStruct):
    """Params of ``tasks/get``."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class GetTaskResult(Task):
    """Result of ``tasks/get``: the task's fields at the top level."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class GetTaskPayloadParams(McpStruct):
    """Params of ``tasks/result``; its result is the original request's result type."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CancelTaskParams(McpStruct):
    """Params of ``tasks/cancel``."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class CancelTaskResult(Task):
    """Result of ``tasks/cancel``: the task's fields at the top level."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class ListTasksResult(McpStruct):
    """Result of ``tasks/list`` (params: ``PaginatedParams``)."""

    tasks: list[Task]
    next_cursor: Cursor | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class TaskStatusNotificationParams(Task):
    """Params of ``notifications/tasks/status``: the task's fields at the top level."""

    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


# ------------------------------------------------------------ tasks (2026-07-28 extension)

#: The tasks extension's identifier, under ``capabilities.extensions`` on both sides.
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"


class CreatedTask(Result, kw_only=True):
    """A ``tools/call`` answered with a task (``resultType: "task"``): the task's fields,
    flat — no result yet; poll ``tasks/get`` with ``task_id``. ``ttl_ms`` is null for
    a task kept until the server restarts."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    status_message: str | UnsetType = UNSET
    poll_interval_ms: int | UnsetType = UNSET


class DetailedTask(CreatedTask, kw_only=True):
    """Result of ``tasks/get`` (and params of ``notifications/tasks``): the task, with
    ``result`` once completed, ``error`` once failed, the outstanding
    ``input_requests`` while ``input_required``."""

    result: dict[str, Any] | UnsetType = UNSET
    error: dict[str, Any] | UnsetType = UNSET
    input_requests: dict[str, Any] | UnsetType = UNSET


class TaskIdParams(McpStruct):
    """Params of ``tasks/get`` and ``tasks/cancel`` (both eras)."""

    task_id: str
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")


class UpdateTaskParams(McpStruct):
    """Params of ``tasks/update``: answers to some of the task's ``inputRequests``, by key."""

    task_id: str
    input_responses: dict[str, Any]
    meta: dict[str, Any] | UnsetType = field(default=UNSET, name="_meta")
