"""Legacy session records in Redis: the session directory of workers that serve any
session's request on any worker (see :mod:`mcp_actors.transports.http.directory`).

Each record is one hash, ``<prefix>:session:<id>``:

- ``init``: the client's ``initialize`` params (JSON, as sent);
- ``caller``: who opened it (``""``: a server without authentication);
- ``level``: its ``logging/setLevel`` level, once set;
- ``s:<uri>``: one field per subscribed URI.

**Bounds.** A record expires ``ttl`` seconds after the last request that touched it
(every request of the session restarts the clock with its read: ``PEXPIRE``), so a
client that vanished without DELETE leaves nothing behind. At most ``max_sessions``
records per deployment: the sorted set ``<prefix>:sessions`` holds every record's
expiry time; creating one first drops the expired ones from it, then refuses
(:class:`~mcp_actors.transports.http.directory.SessionFull`: the ``initialize`` is
answered 503 with ``Retry-After``) when the set is full — all in one Lua script, so
workers creating sessions at once cannot overshoot. A record holds at most
``max_subscriptions`` subscriptions: past it, further ``resources/subscribe``
requests are still served by the worker they land on but not recorded (logged),
so another worker does not deliver their updates.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import attrs
import coredis

from ..transports.http.directory import SessionFull, SessionRecord, StateChange
from .redis_client import as_bytes
from .state import SharedState

log = logging.getLogger("mcp_actors.shared.sessions")

_INIT = b"init"
_CALLER = b"caller"
_LEVEL = b"level"
_SUBSCRIPTION = b"s:"

#: KEYS: record, index. ARGV: id, init, caller, ttl ms, now ms, max sessions.
_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
redis.call('HSET', KEYS[1], 'init', ARGV[2], 'caller', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5] + ARGV[4], ARGV[1])
return 1
"""

#: KEYS: record, index. ARGV: id, ttl ms, now ms. The record, its clock restarted.
_FIND = """
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return fields end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3] + ARGV[2], ARGV[1])
return fields
"""

#: KEYS: record. ARGV: max subscriptions, then (field, value or "" to delete) pairs.
#: A change to a record that is gone is dropped (the session ended meanwhile).
_CHANGE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local dropped = 0
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], ARGV[i])
  elseif string.sub(ARGV[i], 1, 2) == 's:'
      and redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0
      and redis.call('HLEN', KEYS[1]) - 2 - redis.call('HEXISTS', KEYS[1], 'level')
          >= tonumber(ARGV[1]) then
    dropped = dropped + 1
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return dropped
"""


def _record(fields: dict[bytes, bytes]) -> SessionRecord | None:
    if _INIT not in fields:
        return None
    level = fields.get(_LEVEL)
    subscriptions = frozenset(
        name[len(_SUBSCRIPTION) :].decode() for name in fields if name.startswith(_SUBSCRIPTION)
    )
    return SessionRecord(
        fields[_INIT],
        fields.get(_CALLER, b"").decode(),
        None if level is None else level.decode(),
        subscriptions,
    )


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _change_args(changes: list[StateChange]) -> list[bytes]:
    args: list[bytes] = []
    for change in changes:
        if change.kind == "level":
            args += [_LEVEL, change.value.encode()]
        else:
            value = b"1" if change.kind == "subscribe" else b""
            args += [_SUBSCRIPTION + change.value.encode(), value]
    return args


@attrs.define(eq=False)
class RedisSessionDirectory:
    """Session records in Redis (see the module docstring)."""

    client: coredis.Redis[bytes]
    prefix: str
    #: Seconds a record lives after the last request that touched it.
    ttl: float = 3600.0
    max_sessions: int = 100_000
    max_subscriptions: int = 1000

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}:session:{session_id}"

    @property
    def _index(self) -> str:
        return f"{self.prefix}:sessions"

    @property
    def _ttl_ms(self) -> int:
        return max(1, int(self.ttl * 1000))

    async def create(self, session_id: str, record: SessionRecord) -> None:
        keys = [self._key(session_id), self._index]
        now = int(time.time() * 1000)
        args: list[Any] = [session_id, record.initialize, record.caller, self._ttl_ms, now]
        args.append(self.max_sessions)
        created = await self.client.eval(_CREATE, keys=keys, args=args)
        if not created:
            raise SessionFull(f"{self.max_sessions} shared sessions are open")

    async def find(self, session_id: str) -> SessionRecord | None:
        keys = [self._key(session_id), self._index]
        now = int(time.time() * 1000)
        args: list[Any] = [session_id, self._ttl_ms, now]
        flat = await self.client.eval(_FIND, keys=keys, args=args)
        assert isinstance(flat, list)
        return _record(_pairs([as_bytes(item) for item in flat]))

    async def change(self, session_id: str, changes: list[StateChange]) -> None:
        args: list[Any] = [self.max_subscriptions, *_change_args(changes)]
        dropped = await self.client.eval(_CHANGE, keys=[self._key(session_id)], args=args)
        if dropped:
            log.warning(
                "session %s: %d subscription(s) not recorded (at most %d per session)",
                session_id[:8],
                dropped,
                self.max_subscriptions,
            )

    async def end(self, session_id: str) -> None:
        async with self.client.pipeline(transaction=True) as pipeline:
            pipeline.delete([self._key(session_id)])
            pipeline.zrem(self._index, [session_id])


def session_directory(state: SharedState) -> RedisSessionDirectory:
    """The session directory of ``state``'s deployment, over its Redis client."""
    settings = state.settings
    return RedisSessionDirectory(
        state.redis.client,
        settings.key_prefix,
        ttl=settings.session_ttl_seconds,
        max_sessions=settings.max_shared_sessions,
    )
