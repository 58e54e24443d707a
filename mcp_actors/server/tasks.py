"""Tasks: a tool call that outlives its request, as an actor the server supervises.

With the tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28) a server may
answer a ``tools/call`` with a task — ``{"resultType": "task", "taskId": …}`` — and
finish the work later; the client polls ``tasks/get`` (over any connection) until
the task is ``completed`` (the tool's result inlined, ``isError`` included),
``failed`` (a JSON-RPC error) or ``cancelled`` (``tasks/cancel``). The server decides
per call, from what the tool declares::

    @server.tool(task="optional")  # a task when the request's _meta declares the extension
    async def render(frames: int) -> str: ...

    @server.tool(task="always")    # refused with -32021 to a client without it
    async def migrate(ctx: Context) -> str: ...

    @server.tool(task="deferred")  # asks first (MRTR), then hands the work to a task
    async def deploy(ctx: Context) -> t.CreatedTask:
        answer = await ctx.elicit("Which region?", REGION_FORM, key="region")
        return await start_task(ctx, lambda: roll_out(answer.content))

``task="never"`` (the default) keeps the call synchronous. ``"deferred"`` needs the
extension like ``"always"``, but the handler runs as a plain call — its questions are
``input_required`` rounds of the call itself (MRTR) — until it calls
:func:`start_task`, whose ``CreatedTask`` it returns. A task is an actor: it
runs where the request's session hosts its actors — the server's supervisor when
the session was started by one (``serve_http``, ``serve_websocket``), never in the
request's or the connection's scope: on Streamable HTTP each POST's session ends with
its response, and the task goes on. A session served on its own (``serve_stdio``, or
``server.serve_session`` on a stream of yours) has a supervisor of its own, which hosts
its tasks: they end with it.

A task's records go through a :class:`~mcp_actors.runtime.task_store.TaskStore`
(bounded, with a time to live; see there for what happens when it is full: the
``tools/call`` is refused with -32603). ``tasks/cancel`` cancels the actor's scope:
the tool sees ``trio.Cancelled`` at its next checkpoint, as for any cancelled call.

**A task belongs to its requestor.** Whoever created a task — the caller's OAuth
principal (subject and client, as :func:`~.authorization.caller_key` tells them) when
the transport authenticates one, else the legacy session that made it — is the only
one who can ``tasks/get``, ``tasks/result``, ``tasks/update``, ``tasks/cancel`` or
``tasks/list`` it, or hear it on a listen stream; anyone else is answered exactly as
for an id that never existed (-32602), so the answer tells nothing about other
callers' tasks. The same principal reaches its tasks from any connection or session
(and, with a shared store, any worker). A 2026-07-28 request that nothing
authenticates (no ``auth``, or stdio) has no requestor to bind to — a modern client
polls over whatever connection it likes — so its tasks are bound to no one: anyone
holding the id reaches them, as the spec allows when there is no authorization
context. Their ids are 192 random bits, unguessable; serve with ``auth`` (and a
short ``ttl_ms``) where tasks of several users must stay apart. Each identified
requestor runs at most ``max_running_per_requestor`` tasks at once in a process
(one more is refused with -32603 and ``data.limit``), so one caller cannot take all
of ``max_tasks``.

A task's tool asks the user for input with the same code as anywhere else —
``await ctx.elicit(...)``, ``ctx.sample``, ``ctx.list_roots``, ``ctx.ask`` — and the
task becomes ``input_required`` with the questions as ``inputRequests`` until
``tasks/update`` has answered every one of them (a partial answer leaves the rest
outstanding); see :class:`RunningTask`.

**Durable tasks.** With a task store shared by several workers (Redis, see
:mod:`mcp_actors.shared`), a task outlives the worker running it::

    @server.tool(task="optional", rerun_safe=True)
    async def charge(ctx: Context, order: str) -> str:
        # ctx.task_id is the same on every run: the idempotency key
        return await payments.charge(order, idempotency_key=ctx.task_id)

When that worker dies, another one takes the task over (:meth:`TaskManager.take_over`,
run by ``serve_http``): exactly one claims it, and runs the call again — the same
arguments, revision, client capabilities and caller (:mod:`.task_rerun`) — as attempt
2, 3... (``ctx.attempt``), at-least-once: the first run may have done part of its work,
so a tool declares ``rerun_safe=True`` only when a repeat is harmless or recognised by
``ctx.task_id``. A tool that does not declare it (the default), or a task that has had
``[shared] task_max_attempts`` runs, ends ``failed`` with the reason instead. Pollers
and listeners on any worker see it through the record; the re-run's questions are
``input_required`` as before (modern era). A worker that stops in order leaves its
re-run-safe tasks to the others rather than cancelling them.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import msgspec
import trio

from ..protocol import errors
from ..protocol import types as t
from ..protocol.errors import McpError
from ..protocol.extensions import declared_settings
from ..runtime.actors import ActorHost
from ..runtime.groups import describe
from ..runtime.internal_errors import internal_errors
from ..runtime.session import Session
from ..runtime.task_store import (
    MemoryTaskStore,
    TaskCall,
    TaskRecord,
    TaskStore,
    TaskStoreFull,
    iso_timestamp,
)
from .authorization import caller_key
from .task_run import RunningTask
from .tools import error_result, to_content

if TYPE_CHECKING:
    from .context import Context, SessionView

__all__ = ["TaskSettings", "TaskStatistics", "start_task"]

log = logging.getLogger("mcp_actors.tasks")
#: Seconds a stopping task gets to record that it stopped.
_LAST_WORD_SECONDS = 2.0


#: What a task runs: the tool call, given the task it runs as (its input exchange).
Work = Callable[["RunningTask"], Awaitable[t.CallToolResult | t.CreatedTask]]

_NEEDS_EXTENSION: dict[str, Any] = {"extensions": {t.TASKS_EXTENSION: {}}}


def declares_extension(capabilities: object) -> bool:
    """Whether client ``capabilities`` declare the tasks extension."""
    return declared_settings(capabilities, t.TASKS_EXTENSION) is not None


def missing_extension(what: str) -> McpError:
    """-32021 naming the tasks extension as the capability ``what`` needs."""
    return errors.missing_client_capability(_NEEDS_EXTENSION, what)


def _positive_integer(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, not {value!r}")


def _positive_integer_or_none(
    instance: object, attribute: attrs.Attribute[Any], value: Any
) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{attribute.name} must be a positive integer or None, not {value!r}")


@attrs.frozen
class TaskSettings:
    """How tasks are kept: ``ttl_ms`` from creation (None: until the process ends),
    the ``poll_interval_ms`` suggested to clients, at most ``max_tasks`` records, at
    most ``max_running_per_requestor`` unfinished tasks of one identified requestor
    in this process, and ``list_page_size`` tasks per ``tasks/list`` page. Each is a
    positive integer (``True`` is not one); anything else is a ValueError naming it."""

    ttl_ms: int | None = attrs.field(default=3_600_000, validator=_positive_integer_or_none)
    poll_interval_ms: int = attrs.field(default=500, validator=_positive_integer)
    max_tasks: int = attrs.field(default=1000, validator=_positive_integer)
    max_running_per_requestor: int = attrs.field(default=100, validator=_positive_integer)
    list_page_size: int = attrs.field(default=100, validator=_positive_integer)


@attrs.frozen
class TaskStatistics:
    """Tasks held now (``live``, of which ``running``) and started / refused so far."""

    live: int
    running: int
    started: int
    refused: int


def _memory_store(manager: TaskManager) -> TaskStore:
    return MemoryTaskStore(manager.settings.max_tasks)


@attrs.define(eq=False)
class TaskManager:
    """Creates tasks, runs them as actors, and answers ``tasks/*`` from their records."""

    settings: TaskSettings = attrs.field(factory=TaskSettings)
    store: TaskStore = attrs.field(default=attrs.Factory(_memory_store, takes_self=True))
    #: Told each task's new state (``notifications/tasks`` on listen streams: the
    #: server publishes it on its change bus).
    on_change: Callable[[TaskRecord], object] | None = None
    #: Sends ``tasks/update`` answers for a task run by another worker (the server
    #: publishes them on its change bus; None: they are ignored).
    forward_answers: Callable[[str, dict[str, Any]], object] | None = None
    #: Makes the work of running a taken-over task's call again (the server sets it:
    #: :func:`.task_rerun.rerun_work`; None: taken-over tasks fail). Raises McpError
    #: when it cannot: the task fails with it.
    rerun: Callable[[TaskRecord], Work] | None = None
    _running: dict[str, RunningTask] = attrs.field(init=False, factory=dict)
    #: The requestor key of each legacy session that made or asked for a task.
    _session_keys: weakref.WeakKeyDictionary[Session, str] = attrs.field(
        init=False, factory=weakref.WeakKeyDictionary
    )
    _started: int = attrs.field(init=False, default=0)
    _refused: int = attrs.field(init=False, default=0)

    def requestor_of(self, view: SessionView) -> str:
        """Who is asking, as a key a task is bound to (module docstring): the caller's
        authenticated principal; else, in a legacy session, that session; else "" (a
        modern request nothing authenticates). Opaque: a digest, never the identity."""
        principal = view.principal
        if principal is not None and principal.authenticated:
            return _digest("principal", caller_key(principal))
        if not view.state.revision.handshake:
            return ""
        session = view.session
        key = self._session_keys.get(session)
        if key is None:
            key = self._session_keys[session] = _digest("session", secrets.token_hex(16))
        return key

    async def start_deferred(
        self, view: SessionView, work: Callable[[], Awaitable[Any]]
    ) -> t.CreatedTask:
        """Run ``work()`` as a task of the call ``view`` serves (:func:`start_task`): its
        caller must have declared the extension; the task is bound to that caller."""
        if not declares_extension(view.client_capabilities):
            raise missing_extension("this tool hands its work to a task")
        session = view.session
        return await self.start(
            "deferred",
            lambda task: _tool_result(work),
            session.host or session,
            requestor=self.requestor_of(view),
        )

    async def start(
        self,
        tool: str,
        work: Work,
        host: ActorHost,
        *,
        requestor: str = "",
        ttl_ms: int | None = None,
        call: TaskCall | None = None,
    ) -> t.CreatedTask:
        """Record a new task of ``requestor`` and start its actor, running ``work(task)``
        in ``host``; returns what ``tools/call`` answers. The record is in the store
        before this returns, so ``tasks/get`` finds it at once. Refused (-32603) when the
        store is full, or the requestor runs ``max_running_per_requestor`` tasks here.
        ``ttl_ms`` (a client's request) can only shorten the configured TTL. ``call``:
        what another worker needs to run it again (see :meth:`take_over`)."""
        settings = self.settings
        limit = settings.max_running_per_requestor
        if requestor and self._running_of(requestor) >= limit:
            self._refused += 1
            detail = f"You have {limit} tasks running; start another once one has finished"
            raise McpError(errors.INTERNAL_ERROR, detail, {"limit": limit})
        now = self.store.now()
        ttl = settings.ttl_ms
        if ttl_ms is not None and ttl_ms > 0:
            ttl = ttl_ms if ttl is None else min(ttl, ttl_ms)
        record = TaskRecord(
            task_id=secrets.token_urlsafe(24),
            created=now,
            ttl_ms=ttl,
            poll_interval_ms=settings.poll_interval_ms,
            tool=tool,
            requestor=requestor,
            call=call,
        )
        try:
            await self.store.add(record)
        except TaskStoreFull as full:
            self._refused += 1
            detail = f"The server cannot take more tasks now: {full}"
            raise McpError(errors.INTERNAL_ERROR, detail) from None
        rerun_safe = call is not None and call.rerun_safe
        running = RunningTask(record.task_id, self, requestor, rerun_safe=rerun_safe)
        self._launch(running, work, host)
        return created_task(record)

    def _launch(self, running: RunningTask, work: Work, host: ActorHost) -> None:
        self._running[running.task_id] = running
        self._started += 1
        host.start_actor(lambda: self._run(running, work))

    async def _run(self, running: RunningTask, work: Work) -> None:
        try:
            with running.scope:
                result = await work(running)
                if isinstance(result, t.CreatedTask):
                    raise McpError(errors.INTERNAL_ERROR, "a task cannot start another task")
                await self._record(running, status="completed", result=_builtins(result))
            if running.scope.cancelled_caught:
                await self._record(running, status="cancelled")
        except McpError as error:
            await self._record(running, status="failed", error=_error_object(error))
        except trio.Cancelled:
            # The server is stopping: record it (shielded, briefly: a shared store does I/O)
            # — unless another worker will run it again, once this one is gone.
            if not (running.rerun_safe and self.store.takeover_interval is not None):
                with trio.move_on_after(_LAST_WORD_SECONDS, shield=True):
                    stopped = {"status": "cancelled", "status_message": "the server stopped"}
                    await self._record(running, **stopped)
            raise
        except Exception:
            internal_errors.report(log, "task %s failed", running.task_id)
            failure = McpError(errors.INTERNAL_ERROR, "Internal error")
            await self._record(running, status="failed", error=_error_object(failure))
        finally:
            if self._running.get(running.task_id) is running:
                del self._running[running.task_id]
            running.ended.set()

    async def _record(self, running: RunningTask, **changes: Any) -> None:
        """The task's run changes its record — unless the task was taken over by another
        worker meanwhile (this one lost its lease): then the run is stopped instead."""
        record = await self._update(running.task_id, if_attempt=running.attempt, **changes)
        if record is not None and record.attempt != running.attempt:
            log.warning(
                "task %s: taken over by another worker (attempt %d); stopping attempt %d here",
                running.task_id,
                record.attempt,
                running.attempt,
            )
            running.scope.cancel()

    async def _update(
        self, task_id: str, *, if_attempt: int | None = None, **changes: Any
    ) -> TaskRecord | None:
        """Change a task's record (not once finished; given ``if_attempt``, only at that
        attempt), and tell ``on_change``; returns the record as it is now."""
        before = await self.store.get(task_id)
        if before is None or not before.accepts(if_attempt):
            return before
        record = await self.store.update(task_id, if_attempt=if_attempt, **changes)
        if record is not None and self.on_change is not None:
            self.on_change(record)
        return record

    async def publish_input(
        self, running: RunningTask, outstanding: Mapping[str, Any] | None
    ) -> None:
        """Record the questions a task waits on (None: it is working again)."""
        if outstanding:
            questions = dict(outstanding)
            await self._record(running, status="input_required", input_requests=questions)
        else:
            await self._record(running, status="working", input_requests=None)

    async def take_over(
        self, host: ActorHost, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Take over, as long as the server serves, the tasks whose worker is gone: every
        ``store.takeover_interval`` seconds, claim them (:meth:`TaskStore.take_over`:
        each is claimed by exactly one worker) and run each one again in ``host`` — or,
        if the store failed it (not re-run-safe, out of attempts), tell listeners. A
        store whose tasks never outlive their process (memory) returns at once."""
        task_status.started()
        interval = self.store.takeover_interval
        if interval is None:
            return
        while True:
            await trio.sleep(interval)
            try:
                await self._take_over_orphans(host)
            except Exception:  # a store's failure: the next look tries again
                internal_errors.report(log, "task takeover failed; trying again in %ss", interval)

    async def _take_over_orphans(self, host: ActorHost) -> None:
        """One look: claim the orphans, tell listeners, run the re-runnable ones again.
        A re-run counts against ``max_tasks`` (the store claims no more than that), not
        against ``max_running_per_requestor``: the task was admitted when it was made."""
        for record in await self.store.take_over():
            if self.on_change is not None:
                self.on_change(record)
            if not record.terminal:
                await self._run_again(record, host)

    async def _run_again(self, record: TaskRecord, host: ActorHost) -> None:
        """Run a taken-over task's call again in ``host`` (its next attempt); fail the
        task when that cannot be done here."""
        call = record.call
        running = RunningTask(
            record.task_id,
            self,
            record.requestor,
            attempt=record.attempt,
            rerun_safe=call is not None and call.rerun_safe,
        )
        try:
            if self.rerun is None:
                raise McpError(errors.INTERNAL_ERROR, "this worker cannot run tasks again")
            work = self.rerun(record)
        except McpError as error:
            await self._record(running, status="failed", error=_error_object(error))
            return
        log.info("task %s: taken over, attempt %d", record.task_id, record.attempt)
        self._launch(running, work, host)

    def _running_of(self, requestor: str) -> int:
        return sum(1 for running in self._running.values() if running.requestor == requestor)

    async def find(self, task_id: str, requestor: str) -> TaskRecord:
        """The record of ``task_id`` if it is ``requestor``'s; else -32602, the same
        for another requestor's task as for an unknown or expired id."""
        record = await self.store.get(task_id)
        if record is None:
            self._forget(task_id)
        if record is None or record.requestor != requestor:
            raise McpError(
                errors.INVALID_PARAMS,
                f"Invalid params: no task {task_id!r} (unknown, or expired)",
                {"taskId": task_id},
            )
        return record

    async def tasks_of(self, requestor: str) -> list[TaskRecord]:
        """``requestor``'s tasks (unexpired), oldest first: what ``tasks/list`` pages."""
        return await self.store.of_requestor(requestor)

    async def update(self, task_id: str, requestor: str, responses: Mapping[str, Any]) -> None:
        """Deliver ``tasks/update`` answers to the task's actor (unknown keys ignored);
        to a task another worker runs, through ``forward_answers`` (the shared bus)."""
        record = await self.find(task_id, requestor)
        if record.status != "input_required":
            return
        running = self._running.get(record.task_id)
        if running is not None:
            await running.answer(responses)
        elif self.forward_answers is not None:
            self.forward_answers(task_id, dict(responses))

    def answered_elsewhere(self, task_id: str, responses: Mapping[str, Any]) -> int:
        """``tasks/update`` answers another worker received for a task this process
        may run: hand them to it. Returns 1 if it runs here, else 0."""
        running = self._running.get(task_id)
        if running is None:
            return 0
        running.take_from_elsewhere(responses)
        return 1

    async def cancel(self, task_id: str, requestor: str) -> None:
        """Cancel a task (nothing for a finished one): its record says ``cancelled``
        and its actor's scope is cancelled — on another worker, when that worker hears
        the change on a shared bus (:meth:`cancelled_elsewhere`)."""
        record = await self.find(task_id, requestor)
        if record.terminal:
            return
        await self._update(task_id, status="cancelled")
        running = self._running.get(task_id)
        if running is not None:
            running.scope.cancel()

    def cancelled_elsewhere(self, task_id: str) -> int:
        """Another worker cancelled ``task_id`` (its change reached us on the bus): if
        this process runs it, cancel its actor. Returns 1 if it did, else 0."""
        running = self._running.get(task_id)
        if running is None:
            return 0
        running.scope.cancel()
        return 1

    async def wait_finished(self, task_id: str, requestor: str) -> TaskRecord:
        """The record of ``task_id`` once the task has finished (-32602 if it is
        unknown, another requestor's, or expires meanwhile)."""
        while True:
            record = await self.find(task_id, requestor)
            if record.terminal:
                return record
            running = self._running.get(task_id)
            if running is not None:
                await running.ended.wait()
            else:  # run elsewhere (another worker): poll its record
                await trio.sleep(record.poll_interval_ms / 1000)

    def _forget(self, task_id: str) -> None:
        running = self._running.pop(task_id, None)
        if running is not None:  # expired while running: nobody can read its result
            running.scope.cancel()

    def statistics(self) -> TaskStatistics:
        return TaskStatistics(
            live=self.store.live(),
            running=len(self._running),
            started=self._started,
            refused=self._refused,
        )


async def start_task(ctx: Context, work: Callable[[], Awaitable[Any]]) -> t.CreatedTask:
    """Run ``work()`` as a task of the call ``ctx`` serves; return what the tool
    returns (a ``task="deferred"`` tool: see the module docstring).

    ``work``'s return value becomes the task's result as a tool's would (text, JSON,
    content blocks, a ``CallToolResult``); an exception is an ``isError`` result, an
    :class:`McpError` the task's failure.
    """
    return await ctx.session.start_task(work)


async def _tool_result(work: Callable[[], Awaitable[Any]]) -> t.CallToolResult:
    try:
        value = await work()
    except McpError:
        raise
    except Exception as error:
        log.error("a deferred task failed", exc_info=error)
        return error_result(f"The task failed: {describe(error)}")
    if isinstance(value, t.CallToolResult):
        return value
    return t.CallToolResult(content=to_content(value))


def created_task(record: TaskRecord) -> t.CreatedTask:
    """What ``tools/call`` answers for a new task."""
    return t.CreatedTask(result_type="task", **_task_fields(record))


def detailed_task(record: TaskRecord) -> t.DetailedTask:
    """What ``tasks/get`` answers: the task, with its result, error or questions."""
    return t.DetailedTask(
        **_task_fields(record),
        result=record.result if record.status == "completed" and record.result else msgspec.UNSET,
        error=record.error if record.status == "failed" and record.error else msgspec.UNSET,
        input_requests=(
            record.input_requests
            if record.status == "input_required" and record.input_requests
            else msgspec.UNSET
        ),
    )


def _task_fields(record: TaskRecord) -> dict[str, Any]:
    return {
        "task_id": record.task_id,
        "status": record.status,
        "created_at": iso_timestamp(record.created),
        "last_updated_at": iso_timestamp(record.updated),
        "ttl_ms": record.ttl_ms,
        "poll_interval_ms": record.poll_interval_ms,
        "status_message": record.status_message or msgspec.UNSET,
    }


def _digest(kind: str, identity: str) -> str:
    """An opaque requestor key for ``identity`` of ``kind`` (safe in a Redis key, a log)."""
    return hashlib.sha256(f"{kind}\n{identity}".encode()).hexdigest()[:32]


def _builtins(result: t.CallToolResult) -> dict[str, Any]:
    value = msgspec.to_builtins(result)
    assert isinstance(value, dict)
    return value


def _error_object(error: McpError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return body
