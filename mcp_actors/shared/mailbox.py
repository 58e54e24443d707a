"""Workers' mailboxes in Redis streams: letters about shared sessions, read from a cursor.

Each worker takes a number when it starts (``INCR <prefix>:worker-numbers``: never
reused, so a restarted worker does not receive its predecessor's letters) and reads
the stream ``<prefix>:mailbox:<number>`` (``XREAD BLOCK`` from a cursor it keeps).
A letter is an entry: session id, kind, payload. Reading from a cursor is what makes
delivery reliable across a lost Redis connection: the reader reconnects and goes on
from the last entry it handed over, so nothing written meanwhile is missed; and the
entries stay in Redis until trimmed, not only while a reader listens (pub/sub).

**Bounds.** A mailbox keeps its newest ``max_letters`` entries (``XADD ... MAXLEN
~``): a worker that stops reading for that long (stuck, or gone) loses the oldest
ones; every write restarts its ``ttl`` (``PEXPIRE``), so the mailbox of a worker
that died leaves Redis without a sweeper. A letter for a session the worker no
longer runs is dropped by the reader.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio
from coredis.exceptions import RedisError
from coredis.tokens import PureToken

from ..transports.http.directory import Letter
from .redis_client import AnyRedis, as_bytes, as_text

log = logging.getLogger("mcp_actors.shared.mailbox")

#: Milliseconds one read blocks in Redis (bounds how long a stop waits on it).
_BLOCK_MS = 1000
#: Seconds before reading again after a Redis error.
_RETRY_SECONDS = 0.5
_KINDS = ("inbound", "standalone", "sync", "end", "carry", "uncarry", "changed")


@attrs.define(eq=False)
class RedisMailbox:
    """This worker's mailbox, and the way to the others' (see the module docstring)."""

    client: AnyRedis
    prefix: str
    #: This worker's number (see :func:`take_worker_number`).
    worker: int
    max_letters: int = 10_000
    #: Seconds a mailbox nobody writes to lives.
    ttl: float = 3600.0
    #: Letters sent and delivered so far.
    sent: int = attrs.field(init=False, default=0)
    delivered: int = attrs.field(init=False, default=0)

    def _key(self, worker: int) -> str:
        return f"{self.prefix}:mailbox:{worker}"

    async def send(self, worker: int, letter: Letter) -> None:
        key = self._key(worker)
        fields: dict[Any, Any] = {b"s": letter.session_id, b"k": letter.kind, b"p": letter.payload}
        async with self.client.pipeline(transaction=False) as pipeline:
            pipeline.xadd(
                key,
                fields,
                trim_strategy=PureToken.MAXLEN,
                threshold=self.max_letters,
                trim_operator=PureToken.APPROXIMATELY,
            )
            pipeline.pexpire(key, int(self.ttl * 1000))
        self.sent += 1

    async def run(
        self,
        deliver: Callable[[Letter], Awaitable[None]],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Hand this worker's letters to ``deliver`` in order until cancelled; started
        once the cursor is set (a letter sent after that is delivered)."""
        key = self._key(self.worker)
        newest = await self.client.xrevrange(key, end="+", start="-", count=1)
        cursor = as_text(newest[0].identifier) if newest else "0-0"
        task_status.started()
        while True:
            try:
                read = await self.client.xread({key: cursor}, count=100, block=_BLOCK_MS)
            except RedisError as error:
                log.warning("mailbox %s: %s; reading again", key, error)
                await trio.sleep(_RETRY_SECONDS)
                continue
            for entry in (read or {}).get(as_bytes(key), ()):
                cursor = as_text(entry.identifier)
                letter = _letter(entry.field_values)
                if letter is not None:
                    self.delivered += 1
                    await deliver(letter)


def _letter(fields: Any) -> Letter | None:
    try:
        kind = as_text(fields[b"k"])
        if kind not in _KINDS:
            raise ValueError(kind)
        return Letter(as_text(fields[b"s"]), kind, as_bytes(fields[b"p"]))  # type: ignore[arg-type]
    except (KeyError, ValueError, UnicodeDecodeError) as error:
        log.warning("ignored a malformed letter: %r", error)
        return None


async def take_worker_number(client: AnyRedis, prefix: str) -> int:
    """A number no other worker of the deployment has had (see the module docstring)."""
    return int(await client.incr(f"{prefix}:worker-numbers"))
