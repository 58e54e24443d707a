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

**Takeover (durable tasks).** A record keeps what it takes to run its call again
(:class:`TaskCall`: the request's params as sent, the revision, the client's
capabilities, the caller's principal, and whether the tool declared a re-run safe)
and which run it is at (:attr:`TaskRecord.attempt`). A store shared by several
processes (Redis) knows when the process running a task is gone — its lease lapsed —
and :meth:`TaskStore.take_over` lets exactly one other process claim each such
orphan: it runs the call again (at-least-once: the handler sees the same task id,
``ctx.task_id``, as its idempotency key, and ``ctx.attempt``), or, when that is not
allowed, the task ends ``failed`` with the reason (:func:`takeover_changes` decides,
for every store alike). A runner's own writes are *fenced* by its attempt
(``update(..., if_attempt=n)``): a process whose task was taken over while it was
unreachable writes nothing more, and stops its run. The memory store has nothing to
take over (its tasks die with their process).

**Writing a store for another backend** (a database, a queue): implement
:class:`TaskStore` — :meth:`~TaskStore.add`, :meth:`~TaskStore.get`,
:meth:`~TaskStore.update` (a compare-and-set: never change a finished record, nor
one whose attempt is not ``if_attempt``), :meth:`~TaskStore.of_requestor`, the two
counters, and, for takeover, :attr:`~TaskStore.takeover_interval` and
:meth:`~TaskStore.take_over` — and hand it to ``Server.share_state(task_store=...)``
before serving. ``docs/task-stores.md`` walks through one.
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


#: The JSON-RPC code of a task that ended because its runner went away.
WORKER_GONE_CODE = -32603


@attrs.frozen
class TaskCall:
    """What another process needs to run a task's ``tools/call`` again: plain JSON data.

    ``params`` is the call's params as the client sent them (JSON text, ``_meta``
    included), ``revision`` the protocol revision it was served in,
    ``capabilities``/``client_info`` the client's (as JSON objects), ``principal``
    the caller's (its fields as JSON; None: the transport authenticated nobody), and
    ``rerun_safe`` what the tool declared (``@server.tool(rerun_safe=True)``).
    """

    params: str
    revision: str
    capabilities: dict[str, Any] | None = None
    client_info: dict[str, Any] | None = None
    principal: dict[str, Any] | None = None
    rerun_safe: bool = False


def _task_call(value: TaskCall | dict[str, Any] | None) -> TaskCall | None:
    """A record's ``call`` from what a store read back (a JSON object) or kept."""
    if value is None or isinstance(value, TaskCall):
        return value
    return TaskCall(**value)


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
    #: Which run of the call this is: 1, then one more at each takeover.
    attempt: int = 1
    #: What it takes to run the call again (None: it cannot be, e.g. a deferred tool's work).
    call: TaskCall | None = attrs.field(default=None, converter=_task_call)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def accepts(self, if_attempt: int | None) -> bool:
        """Whether an update may change this record: it is not finished, and it is at
        ``if_attempt`` (None: at any attempt) — see :meth:`TaskStore.update`."""
        return not self.terminal and (if_attempt is None or self.attempt == if_attempt)

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

    async def update(
        self, task_id: str, *, if_attempt: int | None = None, **changes: Any
    ) -> TaskRecord | None:
        """Apply ``changes`` to a task that is not finished yet — and, given
        ``if_attempt``, is still at that attempt (its runner's write: see the module
        docstring) — atomically; returns the record as it is now (unchanged if it was
        not applied), None if unknown or expired."""

    async def of_requestor(self, requestor: str) -> list[TaskRecord]:
        """The unexpired records of ``requestor``, oldest first."""

    def live(self) -> int:
        """How many records the store holds (finished ones included, until they expire);
        a shared store counts only the unfinished ones this process added."""

    def running(self) -> int:
        """How many of them are not finished."""

    @property
    def takeover_interval(self) -> float | None:
        """Seconds between two calls of :meth:`take_over` (None: this store's tasks
        never outlive the process running them; it is never called)."""

    async def take_over(self) -> list[TaskRecord]:
        """Claim the unfinished tasks whose runner is gone (its lease lapsed), at most
        as many as this process may still run. Each claim is atomic across every
        process sharing the store — exactly one claims a given orphan — and applies
        :func:`takeover_changes`: each record returned is either ``working`` again,
        owned by this process at the next attempt (the caller runs it again), or
        ``failed`` with the reason. A store that cannot reach its backend logs it and
        returns ``[]`` (the next call tries again)."""


def takeover_changes(record: TaskRecord, owner: str, max_attempts: int) -> dict[str, Any]:
    """What taking over ``record`` (its runner gone) changes, for ``owner``: run it again
    — next attempt, ``working``, its questions withdrawn (they were the dead run's) —
    if its tool declared a re-run safe and it has not had ``max_attempts`` runs;
    else ``failed``, the error saying why."""
    call = record.call
    if call is not None and call.rerun_safe and record.attempt < max_attempts:
        return {
            "owner": owner,
            "attempt": record.attempt + 1,
            "status": "working",
            "status_message": f"re-running: attempt {record.attempt + 1} of {max_attempts}",
            "input_requests": None,
        }
    if call is None or not call.rerun_safe:
        reason = (
            "the worker running this task stopped; the task did not finish"
            f" (tool {record.tool!r} is not declared rerun_safe, so it is not run again)"
        )
    else:
        runs = "attempt" if record.attempt == 1 else "attempts"
        reason = (
            f"the worker running this task stopped; gave up after {record.attempt} {runs}"
            f" (at most {max_attempts})"
        )
    error = {"code": WORKER_GONE_CODE, "message": reason, "data": {"attempts": record.attempt}}
    return {"status": "failed", "status_message": reason, "error": error, "input_requests": None}


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

    async def update(
        self, task_id: str, *, if_attempt: int | None = None, **changes: Any
    ) -> TaskRecord | None:
        record = self._get(task_id)
        if record is None or not record.accepts(if_attempt):
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

    @property
    def takeover_interval(self) -> None:
        """None: a task in this process's memory dies with the process (nothing to take over)."""
        return None

    async def take_over(self) -> list[TaskRecord]:
        return []
