"""What every worker of a deployment tells the others about itself: the fleet's status.

Each worker sharing state through Redis runs a reporter actor (:meth:`FleetReporter.run`)
that, every ``heartbeat_seconds``, writes one :class:`WorkerReport` — who it is
(host, pid), and its counters: sessions, parked MRTR continuations, tasks held and
running, open listen streams, what its bus sent, received, dropped and missed, the
Redis errors it met — as one field of the hash ``<prefix>:fleet`` (field: the
worker's name), and refreshes its *alive key* ``<prefix>:fleet:<worker>``, which
expires after three heartbeats: a worker is alive while that key exists (Redis
keeps the time, so the workers' clocks do not matter). :func:`read_fleet` reads them
all (``mcp-actors status``: :mod:`mcp_actors.cli_status`).

Bounds: one field and one key per worker. A worker removes both on an orderly stop;
one that was killed stays in the hash, reported dead, until :func:`read_fleet`
prunes it ``forget_seconds`` (one hour, by the worker's clock when it reported)
after its last report — every worker does when it starts, and so does every
status read; the hash itself expires a day after the last report of any worker.
On a Redis Cluster the hash is one key in one slot; the alive keys are spread, read
with one pipeline. Task states (:func:`tasks_by_state`) are read from the task
records themselves, at most 10,000 of them.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any, Protocol, runtime_checkable

import attrs
import msgspec
import trio
from anyio import ClosedResourceError

from .redis_client import RedisClient, RedisError, as_bytes
from .task_store import task_space

log = logging.getLogger("mcp_actors.shared.fleet")

#: Heartbeats a report stays valid: a worker silent longer is dead.
ALIVE_HEARTBEATS = 3
#: Seconds the hash lives after the last report of any worker.
HASH_TTL_SECONDS = 86400


class WorkerReport(msgspec.Struct, frozen=True, kw_only=True):
    """One worker's report (see the module docstring); counters are 0 when unknown."""

    worker: str
    host: str
    pid: int
    #: When the report was written (the worker's clock, seconds since the epoch).
    reported: float
    heartbeat_seconds: float
    sessions: int = 0
    continuations_parked: int = 0
    tasks_live: int = 0
    tasks_running: int = 0
    listen_streams: int = 0
    bus_sent: int = 0
    bus_received: int = 0
    bus_dropped: int = 0
    bus_missed: int = 0
    redis_errors: int = 0


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(WorkerReport).decode


@runtime_checkable
class Observed(Protocol):
    """What a worker's server tells about itself (:class:`~mcp_actors.server.app.Server`)."""

    @property
    def sessions(self) -> list[Any]: ...

    def continuation_statistics(self) -> Any: ...
    def task_statistics(self) -> Any: ...
    def listen_statistics(self) -> Any: ...


def server_counters(server: Observed) -> dict[str, int]:
    """The counters of a :class:`WorkerReport` a server knows."""
    tasks = server.task_statistics()
    return {
        "sessions": len(server.sessions),
        "continuations_parked": server.continuation_statistics().parked,
        "tasks_live": tasks.live,
        "tasks_running": tasks.running,
        "listen_streams": server.listen_statistics().active,
    }


@attrs.define(eq=False)
class FleetReporter:
    """Writes this worker's :class:`WorkerReport` every heartbeat (module docstring).
    ``counters()`` returns the counter fields by name."""

    redis: RedisClient
    #: The fleet hash, ``<prefix>:fleet``.
    key: str
    worker: str
    counters: Callable[[], Mapping[str, int]]
    heartbeat: float = attrs.field(default=1.0)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Report now and every heartbeat until cancelled; then remove this worker's
        report and alive key (an orderly stop is no death)."""
        try:
            await read_fleet(self.redis, self.key)  # forgets workers long dead
            await self.report()
            task_status.started()
            while True:
                await trio.sleep(self.heartbeat)
                try:
                    await self.report()
                except RedisError as error:
                    log.warning("fleet report: %s", error)
        finally:
            # A cancelled block may have closed the client's connections already (coredis
            # then raises anyio's ClosedResourceError): the report expires by itself.
            with trio.move_on_after(2.0, shield=True), suppress(RedisError, ClosedResourceError):
                async with self.redis.client.pipeline(transaction=False) as pipeline:
                    pipeline.hdel(self.key, [self.worker])
                    pipeline.delete([alive_key(self.key, self.worker)])

    async def report(self) -> None:
        report = WorkerReport(
            worker=self.worker,
            host=socket.gethostname(),
            pid=os.getpid(),
            reported=time.time(),
            heartbeat_seconds=self.heartbeat,
            **self.counters(),
        )
        lifetime_ms = int(ALIVE_HEARTBEATS * self.heartbeat * 1000)
        async with self.redis.client.pipeline(transaction=False) as pipeline:
            pipeline.hset(self.key, {self.worker: _encode(report)})
            pipeline.expire(self.key, HASH_TTL_SECONDS)
            pipeline.set(alive_key(self.key, self.worker), b"1", px=lifetime_ms)


def alive_key(key: str, worker: str) -> str:
    """The key that exists while ``worker`` of the fleet hash ``key`` is alive."""
    return f"{key}:{worker}"


@attrs.frozen
class WorkerStatus:
    """A worker's last report, and whether it is alive (its alive key exists)."""

    report: WorkerReport
    alive: bool


async def read_fleet(
    redis: RedisClient, key: str, *, forget_seconds: float = 3600.0
) -> list[WorkerStatus]:
    """Every worker in the fleet hash ``key`` (sorted by host, pid), alive or not;
    removes reports older than ``forget_seconds`` and fields that are no report."""
    fields = await redis.client.hgetall(key)
    reports, stale = [], []
    now = time.time()
    for name, data in fields.items():
        try:
            report = _decode(as_bytes(data))
        except (msgspec.DecodeError, msgspec.ValidationError):
            stale.append(name)
            continue
        if now - report.reported > forget_seconds:
            stale.append(name)
        else:
            reports.append(report)
    if stale:
        await redis.client.hdel(key, stale)
    reports.sort(key=lambda report: (report.host, report.pid, report.worker))
    async with redis.client.pipeline(transaction=False) as pipeline:
        checks = [pipeline.exists([alive_key(key, r.worker)]) for r in reports]
    return [WorkerStatus(r, bool(await c)) for r, c in zip(reports, checks, strict=True)]


@attrs.frozen
class RedisHealth:
    """How Redis answers now: the round trip of a ``PING``, and what ``INFO`` says."""

    latency_ms: float
    version: str
    mode: str
    used_memory: str
    maxmemory: str
    #: ``CLUSTER INFO``'s ``cluster_state`` on a Cluster (``ok``), else empty.
    cluster_state: str = ""


async def redis_health(redis: RedisClient) -> RedisHealth:
    """Ask Redis how it is (raises :data:`RedisError` when it does not answer)."""
    started = trio.current_time()
    await redis.client.ping()
    latency_ms = (trio.current_time() - started) * 1000
    server = await redis.client.info("server")
    memory = await redis.client.info("memory")
    mode = str(server.get("redis_mode", "?"))
    state = ""
    if mode == "cluster":
        state = str((await redis.client.cluster_info()).get("cluster_state", "?"))
    return RedisHealth(
        latency_ms,
        str(server.get("redis_version", "?")),
        mode,
        str(memory.get("used_memory_human", "?")),
        str(memory.get("maxmemory_human", "?")),
        state,
    )


class _TaskStatus(msgspec.Struct):
    status: str


_task_status = msgspec.json.Decoder(_TaskStatus).decode


async def tasks_by_state(
    redis: RedisClient, prefix: str, *, limit: int = 10_000
) -> tuple[dict[str, int], bool]:
    """How many task records (``{<prefix>}:tasks:task:<id>``, :mod:`.task_store`) are in each
    state, reading at most ``limit`` of them (``SCAN``, then ``MGET`` 100 at a time);
    and whether there were more."""
    keys: list[Any] = []
    more = False
    async for key in redis.client.scan_iter(match=f"{task_space(prefix)}:task:*", count=1000):
        if len(keys) == limit:
            more = True
            break
        keys.append(key)
    counts: dict[str, int] = {}
    for start in range(0, len(keys), 100):
        for data in await redis.client.mget(keys[start : start + 100]):
            if data is None:  # expired since the scan
                continue
            try:
                state = _task_status(as_bytes(data)).status
            except (msgspec.DecodeError, msgspec.ValidationError):
                state = "unreadable"
            counts[state] = counts.get(state, 0) + 1
    return dict(sorted(counts.items())), more
