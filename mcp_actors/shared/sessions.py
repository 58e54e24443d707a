"""Legacy session records in Redis: the session directory of workers that serve any
session's request on any worker (see :mod:`mcp_actors.transports.http.directory`).

Each record is one hash, ``{<prefix>}:sessions:session:<id>``:

- ``init``: the client's ``initialize`` params (JSON, as sent);
- ``caller``: who opened it (``""``: a server without authentication);
- ``level``: its ``logging/setLevel`` level, once set;
- ``get``: the number of the worker carrying its GET stream, while one is open;
- ``w:<n>``: one field per worker that has run an actor of the session;

and its subscriptions are the set ``{<prefix>}:sessions:session:<id>:subs``.

**Bounds.** A record expires ``ttl`` seconds after the last request that touched it
(every request of the session restarts the clock with its read: ``PEXPIRE``), so a
client that vanished without DELETE leaves nothing behind. At most ``max_sessions``
records per deployment: the sorted set ``{<prefix>}:sessions`` holds every record's
expiry time; creating one first drops the expired ones from it, then refuses
(:class:`~mcp_actors.transports.http.directory.SessionFull`: the ``initialize`` is
answered 503 with ``Retry-After``) when the set is full — all in one Lua script, so
workers creating sessions at once cannot overshoot. A record holds at most
``max_subscriptions`` subscriptions: past it, further ``resources/subscribe``
requests are still served by the worker they land on but not recorded (logged), so
another worker does not deliver their updates.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import attrs

from ..protocol.session_record import StateChange
from ..transports.http.directory import SessionFull, SessionRecord
from .mailbox import RedisMailbox, take_worker_number
from .redis_client import AnyRedis, as_bytes
from .state import SharedState

log = logging.getLogger("mcp_actors.shared.sessions")

_INIT = b"init"
_CALLER = b"caller"
_LEVEL = b"level"
_STREAM = b"get"
_WORKER = b"w:"

#: KEYS: record, subscriptions, index. ARGV: id, init, caller, ttl ms, now ms, max
#: sessions, the creating worker's field.
_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[1], 'init', ARGV[2], 'caller', ARGV[3], ARGV[7], '1')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[5] + ARGV[4], ARGV[1])
return 1
"""

#: KEYS: record, subscriptions, index. ARGV: id, ttl ms, now ms, worker field.
#: The record and its subscriptions, its clock restarted and the worker added.
_FIND = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {{}, {}} end
redis.call('HSET', KEYS[1], ARGV[4], '1')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3] + ARGV[2], ARGV[1])
return {redis.call('HGETALL', KEYS[1]), redis.call('SMEMBERS', KEYS[2])}
"""

#: KEYS: record, subscriptions. ARGV: max subscriptions, ttl ms, then (kind, value)
#: pairs. A change to a record that is gone is dropped (the session ended meanwhile).
_CHANGE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local dropped = 0
for i = 3, #ARGV, 2 do
  if ARGV[i] == 'level' then
    redis.call('HSET', KEYS[1], 'level', ARGV[i + 1])
  elseif ARGV[i] == 'unsubscribe' then
    redis.call('SREM', KEYS[2], ARGV[i + 1])
  elseif redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[1]) then
    dropped = dropped + 1
  else
    redis.call('SADD', KEYS[2], ARGV[i + 1])
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return dropped
"""

#: KEYS: record. ARGV: worker. Sets ``get`` if the record exists.
_HOLD = """
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'get', ARGV[1]) end
return 0
"""

#: KEYS: record. ARGV: worker. Clears ``get`` if it is still that worker's.
_RELEASE = """
if redis.call('HGET', KEYS[1], 'get') == ARGV[1] then redis.call('HDEL', KEYS[1], 'get') end
return 0
"""


def _record(fields: dict[bytes, bytes], subscriptions: list[bytes]) -> SessionRecord | None:
    if _INIT not in fields:
        return None
    level = fields.get(_LEVEL)
    stream = fields.get(_STREAM)
    workers = frozenset(int(name[len(_WORKER) :]) for name in fields if name.startswith(_WORKER))
    return SessionRecord(
        fields[_INIT],
        fields.get(_CALLER, b"").decode(),
        None if level is None else level.decode(),
        frozenset(uri.decode() for uri in subscriptions),
        None if stream is None else int(stream),
        workers,
    )


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


@attrs.define(eq=False)
class RedisSessionDirectory:
    """Session records in Redis (see the module docstring)."""

    client: AnyRedis
    prefix: str
    #: Seconds a record lives after the last request that touched it.
    ttl: float = 3600.0
    max_sessions: int = 100_000
    max_subscriptions: int = 1000

    def _keys(self, session_id: str) -> list[str]:
        # One hash tag for every key: the scripts touch a record, its subscriptions and
        # the deployment's index together, which a Redis Cluster takes in one slot only.
        space = f"{{{self.prefix}}}:sessions"
        record = f"{space}:session:{session_id}"
        return [record, f"{record}:subs", space]

    @property
    def _ttl_ms(self) -> int:
        return max(1, int(self.ttl * 1000))

    async def create(self, session_id: str, record: SessionRecord) -> None:
        now = int(time.time() * 1000)
        args: list[Any] = [session_id, record.initialize, record.caller, self._ttl_ms, now]
        (worker,) = record.workers
        args += [self.max_sessions, f"w:{worker}"]
        created = await self.client.eval(_CREATE, keys=self._keys(session_id), args=args)
        if not created:
            raise SessionFull(f"{self.max_sessions} shared sessions are open")

    async def find(self, session_id: str, worker: int) -> SessionRecord | None:
        now = int(time.time() * 1000)
        args: list[Any] = [session_id, self._ttl_ms, now, f"w:{worker}"]
        found = await self.client.eval(_FIND, keys=self._keys(session_id), args=args)
        assert isinstance(found, list) and len(found) == 2
        fields, subscriptions = found
        return _record(
            _pairs([as_bytes(item) for item in fields]),
            [as_bytes(item) for item in subscriptions],
        )

    async def change(self, session_id: str, changes: list[StateChange]) -> None:
        args: list[Any] = [self.max_subscriptions, self._ttl_ms]
        for change in changes:
            args += [change.kind, change.value]
        dropped = await self.client.eval(_CHANGE, keys=self._keys(session_id)[:2], args=args)
        if dropped:
            log.warning(
                "session %s: %d subscription(s) not recorded (at most %d per session)",
                session_id[:8],
                dropped,
                self.max_subscriptions,
            )

    async def hold_stream(self, session_id: str, worker: int) -> None:
        await self.client.eval(_HOLD, keys=self._keys(session_id)[:1], args=[worker])

    async def release_stream(self, session_id: str, worker: int) -> None:
        await self.client.eval(_RELEASE, keys=self._keys(session_id)[:1], args=[worker])

    async def end(self, session_id: str) -> None:
        record, subscriptions, index = self._keys(session_id)
        async with self.client.pipeline(transaction=True) as pipeline:
            pipeline.delete([record, subscriptions])
            pipeline.zrem(index, [session_id])


def session_directory(state: SharedState) -> RedisSessionDirectory:
    """The session directory of ``state``'s deployment, over its Redis client."""
    settings = state.settings
    return RedisSessionDirectory(
        state.redis.client,
        settings.key_prefix,
        ttl=settings.session_ttl_seconds,
        max_sessions=settings.max_shared_sessions,
    )


async def open_shared_sessions(state: SharedState) -> tuple[RedisSessionDirectory, RedisMailbox]:
    """``state``'s deployment's session directory, and this worker's mailbox under a
    fresh worker number (see :mod:`.mailbox`)."""
    client, settings = state.redis.client, state.settings
    worker = await take_worker_number(client, settings.key_prefix)
    mailbox = RedisMailbox(client, settings.key_prefix, worker, ttl=settings.session_ttl_seconds)
    return session_directory(state), mailbox
