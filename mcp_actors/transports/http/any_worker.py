"""Legacy sessions on any worker: one session, an actor of it on each worker it reached.

Workers that share a :class:`~.directory.SessionDirectory` and a
:class:`~.directory.Mailbox` (Redis: ``[shared] share_sessions``) serve any request of
any legacy session, whichever worker a load balancer picks. :class:`SharedSessions`
is one worker's part:

- **State.** Each request of a session reads its record (one round trip); this
  worker's actor of the session is restored from it, or brought up to date
  (:mod:`.replicas`). A request that changes the record (``logging/setLevel``,
  ``resources/(un)subscribe``) writes it first, then tells the session's other
  workers (a ``sync`` letter): their actors apply it at once, so a subscription made
  here is served by the worker that holds the GET stream.
- **A request runs where it landed.** Its response stream, its progress, the
  sampling or elicitation requests its handler sends — all go out on that POST's
  stream, from this worker.
- **Answers go to the waiting actor.** Requests a worker's actors send have ids
  starting at ``worker << 32`` (:func:`~.directory.first_request_id`): a client's
  answer POSTed to another worker is sent on to the one its id names, whose actor
  gets it as if it had been POSTed there (:meth:`SharedSessions.route`).
- **Cancellation reaches the request.** A ``notifications/cancelled`` goes to this
  worker's actor and to every other worker of the session; the one running the
  request cancels it, the others ignore it. So does ``notifications/initialized``:
  the worker that answered ``initialize`` hears it wherever it was POSTed (a restored
  actor was told it already, and takes a second one as a no-op).
- **The GET stream.** The worker carrying a session's GET stream is in its record.
  A message unrelated to any request that an actor elsewhere sends (a log message, a
  request of the server's) is sent on to that worker and written to the stream
  there; a list change or resource update — which every worker's actor hears from
  the change bus — is written by the GET stream's worker only, so the client gets
  it once.
- **DELETE** on any worker ends the record and tells every worker of the session
  (an ``end`` letter): their actors close, cancelling what runs there, and a GET
  stream held there ends.

Without a directory nothing of this exists: each session lives on its worker
(:class:`~.endpoint.StreamableHttpEndpoint` with ``shared=None``).
"""

from __future__ import annotations

import logging

import attrs
import trio

from ...protocol.jsonrpc import InvalidMessage, encode_received
from ...protocol.received import Post, read_post
from ..abc import Outgoing, TransportClosed
from .auth import Principal
from .directory import (
    Letter,
    Mailbox,
    SessionDirectory,
    SessionRecord,
    StateChange,
    answered_ids,
    caller_of,
    first_request_id,
    for_every_actor,
    worker_of_request,
)
from .replicas import CreateLocal, Replicas
from .session_stream import HttpSessionStream
from .sessions import SessionRegistry

log = logging.getLogger("mcp_actors.http")

#: What every worker's actor of a session hears from the change bus: written to the
#: GET stream by the worker that carries it, dropped by the others.
FAN_OUT = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)


@attrs.define(eq=False)
class SharedSessions:
    """One worker's part of the deployment's shared sessions (module docstring)."""

    directory: SessionDirectory
    mailbox: Mailbox
    registry: SessionRegistry
    replicas: Replicas = attrs.field(init=False, factory=Replicas)
    #: The newest record seen of each session this worker runs an actor of.
    _known: dict[str, SessionRecord] = attrs.field(init=False, factory=dict)

    @property
    def worker(self) -> int:
        return self.mailbox.worker

    def adopt(self, transport: HttpSessionStream) -> None:
        """Make a new local actor's stream one of a shared session (before it starts)."""
        transport.first_request_id = first_request_id(self.worker)
        transport.relay = self
        transport.direct_writes = False  # sending may go through Redis: the writer's job

    async def opened(self, session_id: str, initialize: bytes, principal: Principal | None) -> None:
        """A session was initialized here: record it (raises
        :class:`~.directory.SessionFull` when the deployment holds as many as it may)."""
        workers = frozenset({self.worker})
        record = SessionRecord(initialize, caller_of(principal), workers=workers)
        await self.directory.create(session_id, record)
        self._known[session_id] = record
        self.replicas.opened(session_id)

    async def find(self, session_id: str) -> SessionRecord | None:
        """The session's record (None: there is no such session any more)."""
        record = await self.directory.find(session_id, self.worker)
        if record is None:
            self._known.pop(session_id, None)
        else:
            self._known[session_id] = record
        return record

    async def local_session(
        self, session_id: str, record: SessionRecord, create: CreateLocal
    ) -> HttpSessionStream | None:
        """This worker's actor of the session, up to date with ``record``."""
        return await self.replicas.local_session(session_id, record, self.registry, create)

    async def changed(self, session_id: str, changes: list[StateChange]) -> None:
        """A request about to be delivered here changes the record: write it, and tell
        the session's other workers."""
        await self.directory.change(session_id, changes)
        self.replicas.changed(session_id, changes)
        await self._tell_others(session_id, Letter(session_id, "sync"))

    async def route(self, session_id: str, post: Post) -> bool:
        """Send on what of a POST without requests belongs to other workers' actors: a
        cancellation or ``notifications/initialized`` to each of them (and this one), an
        answer to the worker that asked.
        True: the POST went elsewhere whole (nothing for this worker's actor)."""
        if for_every_actor(post.message):
            assert post.message is not None
            letter = Letter(session_id, "inbound", encode_received(post.message))
            await self._tell_others(session_id, letter)
            return False
        answered = answered_ids(post.message)
        if len(answered) != 1 or isinstance(post.message, list):
            return False  # a batch of answers is rare: this worker's actor takes it
        worker = worker_of_request(answered[0])
        if worker is None or worker == self.worker:
            return False
        letter = Letter(session_id, "inbound", encode_received(post.take_message()))
        await self.mailbox.send(worker, letter)
        return True

    async def hold_stream(self, session_id: str) -> None:
        """This worker carries the session's GET stream now: say so, and tell the others."""
        await self.directory.hold_stream(session_id, self.worker)
        known = self._known.get(session_id)
        if known is not None:
            self._known[session_id] = attrs.evolve(known, stream_worker=self.worker)
        await self._tell_others(session_id, Letter(session_id, "sync"))

    async def release_stream(self, session_id: str) -> None:
        """The GET stream carried here closed."""
        await self.directory.release_stream(session_id, self.worker)

    async def end(self, session_id: str) -> None:
        """DELETE: the session ends on every worker."""
        await self._tell_others(session_id, Letter(session_id, "end"))
        await self.directory.end(session_id)
        self.forget(session_id)

    def forget(self, session_id: str) -> None:
        """This worker's actor of the session closed."""
        self.replicas.forget(session_id)
        self._known.pop(session_id, None)

    async def _tell_others(self, session_id: str, letter: Letter) -> None:
        known = self._known.get(session_id)
        for worker in sorted(known.workers if known is not None else ()):
            if worker != self.worker:
                await self.mailbox.send(worker, letter)

    # -- the relay of this worker's actors' streams ------------------------------------

    async def unrelated(self, session_id: str, message: Outgoing) -> bool:
        """An actor here sends ``message``, related to no request: True when it is for the
        GET stream another worker carries (sent there) or that worker's actor sends it
        too (dropped here); False: this worker's stream takes it."""
        known = self._known.get(session_id)
        holder = None if known is None else known.stream_worker
        if holder is None or holder == self.worker:
            return False
        if message.method not in FAN_OUT:
            await self.mailbox.send(holder, Letter(session_id, "standalone", message.payload))
        return True

    # -- letters from the other workers ------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read this worker's letters until cancelled."""
        await self.mailbox.run(self.receive, task_status=task_status)

    async def receive(self, letter: Letter) -> None:
        """Act on one letter; one for a session this worker runs no actor of is dropped."""
        session_id = letter.session_id
        entry = self.registry.get(session_id)
        transport = None if entry is None else entry.transport
        if not isinstance(transport, HttpSessionStream) or transport.closed.is_set():
            return
        try:
            if letter.kind == "end":
                self.registry.close(session_id)
            elif letter.kind == "standalone":
                await transport.send_standalone(letter.payload)
            elif letter.kind == "sync":
                record = await self.find(session_id)
                if record is None:
                    self.registry.close(session_id)
                else:
                    await self.replicas.sync(session_id, transport, record)
            else:
                await self._deliver(transport, letter.payload)
        except TransportClosed:
            log.debug("a letter for session %s came after it closed", session_id[:8])

    async def _deliver(self, transport: HttpSessionStream, payload: bytes) -> None:
        try:
            post = read_post(payload)
        except InvalidMessage:
            return  # written by a worker from a message it decoded: cannot happen
        cancelled = post.cancelled
        await transport.deliver(post.take_message())
        for request_id in cancelled:
            transport.cancelled(request_id)
