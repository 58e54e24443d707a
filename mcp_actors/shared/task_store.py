"""Task records in Redis: ``tasks/get`` answers on any worker, and no task is silently lost.

Each record is one JSON string at ``{<prefix>}:tasks:task:<id>``, written with the record's
time to live (``task_ttl_seconds`` for a task configured to live "until the process
ends": Redis has to forget it some day) — Redis expires it, so the store needs no
sweeper. Updates are compare-and-set transactions (``WATCH``/``MULTI``): a finished
record never changes again, whichever worker tries.

**Requestors.** A record keeps its :attr:`TaskRecord.requestor` (who may see it), so
every worker refuses a task to another caller alike. The ids of a requestor's tasks
are also in the set ``{<prefix>}:tasks:requestor:<requestor>`` (for ``tasks/list``; the set
lives as long as the longest-lived record added to it; ids whose record expired are
dropped from it when it is read). Listing reads every id of the set: one record per
task the requestor started within those tasks' TTL.

**Dead workers: takeover.** A record names the worker running it
(:attr:`TaskRecord.owner`), and the ids of the unfinished tasks each worker runs are
in the set ``{<prefix>}:tasks:running:<worker>`` (the workers that have such a set are in
``{<prefix>}:tasks:runners``). A worker's *lease* on all of its tasks is its heartbeat key,
``{<prefix>}:tasks:worker:<name>``: refreshed each ``heartbeat_seconds``, it lives
``task_lease_seconds``, and is deleted when the worker stops in order. The lease is
the worker's, not each task's: a task actor lives exactly as long as its worker
process (when it ends, it writes its end), so the worker's liveness *is* its tasks';
one key per worker costs one write per heartbeat, where a key per task would cost as
many as it runs; and a per-task lease renewed by the task itself would re-run a task
that is merely slow, concurrently with itself.

Every ``heartbeat_seconds``, each worker looks for workers whose key is gone and claims
their tasks (:meth:`RedisTaskStore.take_over`), each in a transaction that watches
the record and the dead worker's key: exactly one worker's claim commits, and none if
the dead one's key came back. The claim applies
:func:`~mcp_actors.runtime.task_store.takeover_changes` — the next attempt, owned by
the claimer (which runs it again), or ``failed`` with the reason — and moves the id
to the claimer's set. Updates by a run are fenced by its attempt: a worker that lost
its lease while alive (paused, cut from Redis) writes nothing over its successor's.

**Bounds.** At most ``max_tasks`` unfinished tasks *per worker* (the ones this worker
runs; beyond, ``add`` raises :class:`~mcp_actors.runtime.task_store.TaskStoreFull`
and the call is refused, as with the memory store; a worker at its bound claims no
orphan: another one will, or it does once a task of its own ended); finished records
stay until their TTL expires; a task runs at most ``task_max_attempts`` times. The
``running`` and ``runners`` sets live as long as the longest-lived record added to
them. Redis's own ``maxmemory`` is the global bound.
"""

from __future__ import annotations

import logging
import time
from contextlib import suppress
from typing import Any

import attrs
import msgspec
import trio
from coredis import PureToken
from coredis.exceptions import WatchError

from ..runtime.task_store import TaskRecord, TaskStoreFull, takeover_changes
from .redis_client import RedisClient, RedisError

log = logging.getLogger("mcp_actors.shared.tasks")

#: Compare-and-set attempts before an update gives up (another worker kept changing it).
_ATTEMPTS = 8


def _encode(record: TaskRecord) -> bytes:
    return msgspec.json.encode(attrs.asdict(record))


def _decode(data: bytes | None) -> TaskRecord | None:
    if data is None:
        return None
    try:
        fields = msgspec.json.decode(data)
        return TaskRecord(**fields)
    except (msgspec.DecodeError, TypeError) as error:
        log.warning("ignored a malformed task record in Redis: %s", error)
        return None


def task_space(prefix: str) -> str:
    """What every key of the task store starts with: ``{<prefix>}:tasks``. The braces
    are a Redis Cluster hash tag: every key of the store is in one hash slot, so its
    transactions — a record with its requestor's index, a claim watching a record and
    a worker's lease — work on a Cluster as on one server (at the price of not
    spreading task records over the Cluster's nodes)."""
    return f"{{{prefix}}}:tasks"


@attrs.define(eq=False)
class RedisTaskStore:
    """A :class:`~mcp_actors.runtime.task_store.TaskStore` in Redis (see the module docstring).
    Run :meth:`run` (the heartbeat) in a nursery while the store is used."""

    redis: RedisClient
    prefix: str
    #: This worker's name (unique per process).
    worker: str
    max_tasks: int = 1000
    #: Seconds a record lives when its task has no TTL.
    default_ttl: float = 86400.0
    heartbeat: float = 1.0
    #: Seconds the heartbeat key lives: this worker's lease on the tasks it runs.
    lease: float = 3.0
    #: Runs a task gets at most (the first, and re-runs after takeovers).
    max_attempts: int = 3
    #: Tasks this worker added that are not known to be finished.
    _mine: set[str] = attrs.field(init=False, factory=set)
    _added: int = attrs.field(init=False, default=0)

    def now(self) -> float:
        return time.time()

    def _task_key(self, task_id: str) -> str:
        return f"{task_space(self.prefix)}:task:{task_id}"

    def _requestor_key(self, requestor: str) -> str:
        return f"{task_space(self.prefix)}:requestor:{requestor}"

    def _worker_key(self, worker: str) -> str:
        return f"{task_space(self.prefix)}:worker:{worker}"

    def _running_key(self, worker: str) -> str:
        return f"{task_space(self.prefix)}:running:{worker}"

    @property
    def _runners_key(self) -> str:
        return f"{task_space(self.prefix)}:runners"

    async def add(self, record: TaskRecord) -> None:
        if len(self._mine) >= self.max_tasks:
            raise TaskStoreFull(
                f"{self.max_tasks} tasks are running on this worker;"
                " none can be added until one ends"
            )
        record.owner = self.worker
        lifetime_ms = record.ttl_ms or int(self.default_ttl * 1000)
        key = self._task_key(record.task_id)
        index = self._requestor_key(record.requestor) if record.requestor else None
        running = self._running_key(self.worker)
        async with self.redis.client.pipeline(transaction=True) as pipeline:
            pipeline.set(key, _encode(record), px=lifetime_ms)
            sets = [(running, record.task_id), (self._runners_key, self.worker)]
            if index is not None:
                sets.append((index, record.task_id))
            for name, member in sets:  # each set lives at least as long as the record
                pipeline.sadd(name, [member])
                pipeline.pexpire(name, lifetime_ms, PureToken.NX)
                pipeline.pexpire(name, lifetime_ms, PureToken.GT)
        self._mine.add(record.task_id)
        self._added += 1

    async def get(self, task_id: str) -> TaskRecord | None:
        key = self._task_key(task_id)
        record = _decode(await self.redis.client.get(key))
        if record is None:
            self._mine.discard(task_id)
            return None
        if record.terminal:
            self._mine.discard(task_id)
        return record

    async def of_requestor(self, requestor: str) -> list[TaskRecord]:
        if not requestor:
            return []
        index = self._requestor_key(requestor)
        ids = sorted(await self.redis.client.smembers(index))
        if not ids:
            return []
        keys = [self._task_key(task_id.decode()) for task_id in ids]
        found = await self.redis.client.mget(keys)
        records = [_decode(data) for data in found]
        gone = [task_id for task_id, record in zip(ids, records, strict=True) if record is None]
        if gone:
            await self.redis.client.srem(index, gone)
        mine = [r for r in records if r is not None and r.requestor == requestor]
        return sorted(mine, key=lambda record: record.created)

    async def update(
        self, task_id: str, *, if_attempt: int | None = None, **changes: Any
    ) -> TaskRecord | None:
        changes["updated"] = self.now()
        record = await self._compare_and_set(task_id, changes, if_attempt)
        if record is None or record.terminal or record.owner != self.worker:
            self._mine.discard(task_id)
        return record

    async def _compare_and_set(
        self, task_id: str, changes: dict[str, Any], if_attempt: int | None
    ) -> TaskRecord | None:
        """Apply ``changes`` to the record of ``task_id`` unless it is finished (or, given
        ``if_attempt``, at another attempt): read it under ``WATCH``, write it in
        ``MULTI``; another worker's write in between fails the transaction, and it is
        tried again. A record that ends leaves its worker's ``running`` set."""
        key = self._task_key(task_id)
        for _ in range(_ATTEMPTS):
            try:
                pipeline = self.redis.client.pipeline(transaction=True)
                async with pipeline, pipeline.watch(key):
                    record = _decode(await self.redis.client.get(key))
                    if record is None or not record.accepts(if_attempt):
                        return record
                    for name, value in changes.items():
                        setattr(record, name, value)
                    pipeline.set(key, _encode(record), keepttl=True)
                    if record.terminal and record.owner is not None:
                        pipeline.srem(self._running_key(record.owner), [task_id])
                return record
            except WatchError:
                continue
        raise RedisError(f"{key}: changed concurrently {_ATTEMPTS} times; update abandoned")

    @property
    def takeover_interval(self) -> float:
        """Every heartbeat, this worker looks for dead workers' tasks."""
        return self.heartbeat

    async def take_over(self) -> list[TaskRecord]:
        """Claim the tasks of workers whose lease lapsed (see the module docstring), as
        many as this worker has room for; a Redis error is logged, and nothing claimed."""
        try:
            return await self._take_over()
        except RedisError as error:
            log.warning("task takeover: %s", error)
            return []

    async def _take_over(self) -> list[TaskRecord]:
        client = self.redis.client
        claimed: list[TaskRecord] = []
        for name in sorted(await client.smembers(self._runners_key)):
            worker = name.decode()
            if worker == self.worker or await client.exists([self._worker_key(worker)]):
                continue
            orphans = sorted(await client.smembers(self._running_key(worker)))
            for task_id in orphans:
                if len(self._mine) >= self.max_tasks:
                    log.warning(
                        "task takeover: %d tasks run here; no room for more", self.max_tasks
                    )
                    return claimed
                record = await self._claim(task_id.decode(), worker)
                if record is not None:
                    claimed.append(record)
            if not orphans:
                await client.srem(self._runners_key, [name])
        return claimed

    async def _claim(self, task_id: str, dead: str) -> TaskRecord | None:
        """Take ``task_id`` over from ``dead``, atomically (None: not taken — it ended,
        expired, was claimed by another worker, or ``dead`` came back)."""
        key, heartbeat = self._task_key(task_id), self._worker_key(dead)
        orphans = self._running_key(dead)
        try:
            pipeline = self.redis.client.pipeline(transaction=True)
            async with pipeline, pipeline.watch(key, heartbeat):
                record = _decode(await self.redis.client.get(key))
                if record is None or record.terminal or record.owner != dead:
                    pipeline.srem(orphans, [task_id])  # not dead's to run any more
                    return None
                if await self.redis.client.exists([heartbeat]):
                    return None
                changes = takeover_changes(record, self.worker, self.max_attempts)
                for name, value in {**changes, "updated": self.now()}.items():
                    setattr(record, name, value)
                pipeline.set(key, _encode(record), keepttl=True)
                pipeline.srem(orphans, [task_id])
                if not record.terminal:
                    pipeline.sadd(self._running_key(self.worker), [task_id])
                    pipeline.sadd(self._runners_key, [self.worker])
        except WatchError:
            return None
        if not record.terminal:
            self._mine.add(task_id)
        log.warning(
            "task %s: its worker %s is gone; %s",
            task_id,
            dead,
            "running it again here" if not record.terminal else record.status_message,
        )
        return record

    def live(self) -> int:
        return len(self._mine)

    def running(self) -> int:
        return len(self._mine)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep this worker's heartbeat key — its lease on its tasks — alive until
        cancelled (it expires ``lease`` seconds after the last refresh: then the tasks
        it ran are taken over)."""
        key = self._worker_key(self.worker)
        lifetime_ms = int(self.lease * 1000)
        await self.redis.client.set(key, b"1", px=lifetime_ms)
        task_status.started()
        while True:
            await trio.sleep(self.heartbeat)
            try:
                await self.redis.client.set(key, b"1", px=lifetime_ms)
            except RedisError as error:
                log.warning("task heartbeat: %s", error)

    async def retire(self) -> None:
        """Delete this worker's heartbeat key, so the tasks it was running are taken
        over at once: called when the worker stops in order (a worker killed, or
        cancelled from outside, is noticed when its key expires)."""
        with trio.move_on_after(2.0), suppress(RedisError):
            await self.redis.client.delete([self._worker_key(self.worker)])
