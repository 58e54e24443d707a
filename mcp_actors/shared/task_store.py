"""Task records in Redis: ``tasks/get`` answers on any worker, and no task is silently lost.

Each record is one JSON string at ``<prefix>:task:<id>``, written with the record's
time to live (``task_ttl_seconds`` for a task configured to live "until the process
ends": Redis has to forget it some day) — Redis expires it, so the store needs no
sweeper. Updates are compare-and-set transactions (``WATCH``/``MULTI``): a finished
record never changes again, whichever worker tries.

**Requestors.** A record keeps its :attr:`TaskRecord.requestor` (who may see it), so
every worker refuses a task to another caller alike. The ids of a requestor's tasks
are also in the set ``<prefix>:requestor:<requestor>`` (for ``tasks/list``; the set
lives as long as the longest-lived record added to it; ids whose record expired are
dropped from it when it is read). Listing reads every id of the set: one record per
task the requestor started within those tasks' TTL.

**Dead workers.** A record names the worker running it (:attr:`TaskRecord.owner`).
Every worker refreshes ``<prefix>:worker:<name>`` each ``heartbeat_seconds``, with a
lifetime of three heartbeats, and deletes it when it stops. A worker that reads an
unfinished record whose owner's key is gone — killed, or stopped — marks it
``failed`` ("the worker running this task stopped") and says so: the client polling
it learns, rather than waiting forever. (A task is not resumed elsewhere: its
actor's state died with its worker.)

**Bounds.** At most ``max_tasks`` unfinished tasks *per worker* (the ones this worker
runs; beyond, ``add`` raises :class:`~mcp_actors.runtime.task_store.TaskStoreFull`
and the call is refused, as with the memory store); finished records stay until
their TTL expires. Redis's own ``maxmemory`` is the global bound.
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

from ..runtime.task_store import TaskRecord, TaskStoreFull
from .redis_client import RedisClient, RedisError

log = logging.getLogger("mcp_actors.shared.tasks")

#: Compare-and-set attempts before an update gives up (another worker kept changing it).
_ATTEMPTS = 8
#: The error of a task whose worker is gone.
WORKER_GONE: dict[str, Any] = {
    "code": -32603,
    "message": "the worker running this task stopped; the task did not finish",
}


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
    #: Tasks this worker added that are not known to be finished.
    _mine: set[str] = attrs.field(init=False, factory=set)
    _added: int = attrs.field(init=False, default=0)

    def now(self) -> float:
        return time.time()

    def _task_key(self, task_id: str) -> str:
        return f"{self.prefix}:task:{task_id}"

    def _requestor_key(self, requestor: str) -> str:
        return f"{self.prefix}:requestor:{requestor}"

    def _worker_key(self, worker: str) -> str:
        return f"{self.prefix}:worker:{worker}"

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
        async with self.redis.client.pipeline(transaction=True) as pipeline:
            pipeline.set(key, _encode(record), px=lifetime_ms)
            if index is not None:  # the set lives at least as long as the record
                pipeline.sadd(index, [record.task_id])
                pipeline.pexpire(index, lifetime_ms, PureToken.NX)
                pipeline.pexpire(index, lifetime_ms, PureToken.GT)
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
        owner = record.owner
        if owner is not None and owner != self.worker and not await self._alive(owner):
            log.warning("task %s: its worker %s is gone; marking it failed", task_id, owner)
            gone = await self.update(task_id, status="failed", error=WORKER_GONE)
            return gone
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

    async def _alive(self, worker: str) -> bool:
        key = self._worker_key(worker)
        return bool(await self.redis.client.exists([key]))

    async def update(self, task_id: str, **changes: Any) -> TaskRecord | None:
        changes["updated"] = self.now()
        record = await self._compare_and_set(self._task_key(task_id), changes)
        if record is None or record.terminal:
            self._mine.discard(task_id)
        return record

    async def _compare_and_set(self, key: str, changes: dict[str, Any]) -> TaskRecord | None:
        """Apply ``changes`` to the record at ``key`` unless it is finished: read it
        under ``WATCH``, write it in ``MULTI``; another worker's write in between
        fails the transaction, and it is tried again."""
        for _ in range(_ATTEMPTS):
            try:
                pipeline = self.redis.client.pipeline(transaction=True)
                async with pipeline, pipeline.watch(key):
                    record = _decode(await self.redis.client.get(key))
                    if record is None or record.terminal:
                        return record
                    for name, value in changes.items():
                        setattr(record, name, value)
                    pipeline.set(key, _encode(record), keepttl=True)
                return record
            except WatchError:
                continue
        raise RedisError(f"{key}: changed concurrently {_ATTEMPTS} times; update abandoned")

    def live(self) -> int:
        return len(self._mine)

    def running(self) -> int:
        return len(self._mine)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep this worker's heartbeat key alive until cancelled (it expires three
        heartbeats after the last refresh: then the tasks it ran are reported failed)."""
        key = self._worker_key(self.worker)
        lifetime_ms = int(self.heartbeat * 3000)
        await self.redis.client.set(key, b"1", px=lifetime_ms)
        task_status.started()
        while True:
            await trio.sleep(self.heartbeat)
            try:
                await self.redis.client.set(key, b"1", px=lifetime_ms)
            except RedisError as error:
                log.warning("task heartbeat: %s", error)

    async def retire(self) -> None:
        """Delete this worker's heartbeat key, so the tasks it was running are reported
        failed at once: called when the worker stops in order (a worker killed, or
        cancelled from outside, is noticed when its key expires)."""
        with trio.move_on_after(2.0), suppress(RedisError):
            await self.redis.client.delete([self._worker_key(self.worker)])
