"""Where task records live: a store interface, and the in-memory store.

A task (the tasks extension, ``io.modelcontextprotocol/tasks``) outlives the
request that made it: the client polls ``tasks/get`` later, perhaps over another
connection. What it polls is a :class:`TaskRecord` — plain data (status, timestamps,
the result or error, the outstanding input requests), nothing that runs. The actor
that runs the task lives elsewhere (:mod:`mcp_actors.server.tasks`) and writes its
progress here. Keeping records behind :class:`TaskStore` lets a shared store
(:class:`~mcp_actors.shared.task_store.RedisTaskStore`, for several workers) replace
:class:`MemoryTaskStore` without touching the actors; that is why its reads and
writes are awaited (a shared store does I/O; the memory store never blocks).

Bounds and expiry:

- each record has a time to live (``ttl_ms``, from its creation; None: kept until
  the process ends). An expired record is gone: reads return None, and
  :meth:`MemoryTaskStore.purge_expired` drops them (the store purges on every add);
- a record names its ``requestor`` (who may see it: see :mod:`mcp_actors.server.tasks`);
  :meth:`TaskStore.of_requestor` gives one requestor's records (``tasks/list``);
- the store holds at most ``max_tasks`` records. When it is full, adding one first
  drops expired records, then the oldest *finished* record (completed, failed,
  cancelled); if every record is still running, :meth:`add` raises
  :class:`TaskStoreFull` and the caller refuses the new task.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

import attrs

#: Statuses after which a task never changes again.
TERMINAL = frozenset({"completed", "failed", "cancelled"})


class TaskStoreFull(Exception):
    """The store holds ``max_tasks`` running tasks: no room for another."""


def iso_timestamp(epoch_seconds: float) -> str:
    """``epoch_seconds`` as an ISO 8601 UTC timestamp with milliseconds."""
    moment = datetime.fromtimestamp(epoch_seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@attrs.define(eq=False)
class TaskRecord:
    """One task as clients see it. ``result``/``error``/``input_requests`` are JSON
    builtins (what ``tasks/get`` inlines), set only in the matching status."""

    task_id: str
    created: float
    ttl_ms: int | None
    poll_interval_ms: int
    #: The tool it runs (for logs and statistics).
    tool: str
    #: The worker process that runs it (None: this process; a shared store sets it,
    #: and reports the task failed once that worker is gone).
    owner: str | None = None
    #: Who may see and steer it: an opaque key of the caller that created it (its
    #: principal, or its session); "" for a caller nothing identifies.
    requestor: str = ""
    status: str = "working"
    updated: float = attrs.field(default=attrs.Factory(lambda self: self.created, takes_self=True))
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now >= self.created + self.ttl_ms / 1000


class TaskStore(Protocol):
    """What the task machinery needs of a store (see the module docstring)."""

    def now(self) -> float:
        """The store's clock (seconds since the epoch): what ``created`` and expiry use."""

    async def add(self, record: TaskRecord) -> None:
        """Keep ``record``; raises :class:`TaskStoreFull` when there is no room."""

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record of ``task_id``, or None if unknown or expired."""

    async def update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        """Apply ``changes`` to a task that is not finished yet; returns the record as
        it is now (unchanged if it was finished already), None if unknown or expired."""

    async def of_requestor(self, requestor: str) -> list[TaskRecord]:
        """The unexpired records of ``requestor``, oldest first."""

    def live(self) -> int:
        """How many records the store holds (finished ones included, until they expire);
        a shared store counts only the unfinished ones this process added."""

    def running(self) -> int:
        """How many of them are not finished."""


@attrs.define(eq=False)
class MemoryTaskStore:
    """A :class:`TaskStore` in this process's memory, bounded by ``max_tasks``."""

    max_tasks: int = 1000
    clock: Callable[[], float] = time.time
    _records: dict[str, TaskRecord] = attrs.field(init=False, factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.max_tasks < 1:
            raise ValueError(f"max_tasks must be at least 1, not {self.max_tasks!r}")

    def now(self) -> float:
        return self.clock()

    async def add(self, record: TaskRecord) -> None:
        if len(self._records) >= self.max_tasks:
            self.purge_expired()
        if len(self._records) >= self.max_tasks:
            finished = [r for r in self._records.values() if r.terminal]
            if not finished:
                raise TaskStoreFull(
                    f"{self.max_tasks} tasks are running; none can be added until one ends"
                )
            del self._records[min(finished, key=lambda r: r.updated).task_id]
        self._records[record.task_id] = record

    async def get(self, task_id: str) -> TaskRecord | None:
        return self._get(task_id)

    def _get(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is not None and record.expired(self.clock()):
            del self._records[task_id]
            return None
        return record

    async def update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        record = self._get(task_id)
        if record is None or record.terminal:
            return record
        for name, value in changes.items():
            setattr(record, name, value)
        record.updated = self.clock()
        return record

    async def of_requestor(self, requestor: str) -> list[TaskRecord]:
        now = self.clock()
        mine = [
            record
            for record in self._records.values()
            if record.requestor == requestor and not record.expired(now)
        ]
        return sorted(mine, key=lambda record: record.created)

    def remove(self, task_id: str) -> None:
        self._records.pop(task_id, None)

    def purge_expired(self) -> list[str]:
        """Drop the expired records; returns their ids."""
        now = self.clock()
        gone = [task_id for task_id, r in self._records.items() if r.expired(now)]
        for task_id in gone:
            del self._records[task_id]
        return gone

    def live(self) -> int:
        return len(self._records)

    def running(self) -> int:
        return sum(1 for record in self._records.values() if not record.terminal)
