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
- **Resumption.** The session's events are in the shared store, each stream's key
  naming the worker that writes it (``w<n>.p<k>``, ``w<n>.g``). A GET with a
  ``Last-Event-ID`` of a stream another worker writes — a POST's stream whose
  connection broke, or the GET stream itself — is carried here: this worker replays
  what the store holds after that id and asks the writer (a ``carry`` letter) to say
  when the stream changes (``changed`` letters) until it finishes; meanwhile the
  writer does not take its client for gone (the request is not cancelled after
  ``resume_window``), and a resumed GET stream stays its writer's: messages for it
  keep going there. A writer that died leaves such a stream open (keep-alive
  comments) until the client goes.
- **DELETE** on any worker ends the record and tells every worker of the session
  (an ``end`` letter): their actors close, cancelling what runs there, and a GET
  stream held there ends.

Letters are acted on one at a time, in the order sent: one for a session whose inbox
is full waits for room (that session's bound then slows this worker's other letters),
and a ``sync`` waits until the actor has applied the record.

Without a directory nothing of this exists: each session lives on its worker
(:class:`~.endpoint.StreamableHttpEndpoint` with ``shared=None``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

import attrs
import trio

from ...protocol.jsonrpc import InvalidMessage, encode_received
from ...protocol.received import Post, read_post
from ...protocol.session_record import StateChange, answered_ids, for_every_actor
from ..abc import Outgoing, TransportClosed
from .auth import Principal
from .directory import (
    Letter,
    Mailbox,
    SessionDirectory,
    SessionRecord,
    caller_of,
    first_request_id,
    stream_prefix,
    worker_of_request,
    worker_of_stream,
)
from .replicas import CreateLocal, Replicas
from .session_stream import ELSEWHERE, STANDALONE, HttpSessionStream, ResponseStream
from .sessions import SessionRegistry

log = logging.getLogger("mcp_actors.http")

#: Seconds a closing GET's worker may take to tell the records or a writer it stopped.
RELEASE_SECONDS = 5.0

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
    #: Where the tasks reporting carried streams' changes run (see :meth:`run`).
    _nursery: trio.Nursery | None = attrs.field(init=False, default=None)

    @property
    def worker(self) -> int:
        return self.mailbox.worker

    @property
    def stream_prefix(self) -> str:
        """What the keys of this worker's actors' streams start with."""
        return stream_prefix(self.worker)

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
        self, session_id: str, caller: Principal | None, create: CreateLocal
    ) -> HttpSessionStream | None:
        """This worker's actor of the session, restored or brought up to date from its
        record (``create`` makes a new one); None: no such session for ``caller``."""
        record = await self.find(session_id)
        if record is None:
            self.registry.close(session_id)  # ended or expired on another worker
            return None
        if not record.belongs_to(caller):
            return None
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

    async def _hold_stream(self, session_id: str, writer: int) -> None:
        """The GET stream ``writer``'s actor writes is carried now: say so, tell the others."""
        await self.directory.hold_stream(session_id, writer)
        known = self._known.get(session_id)
        if known is not None:
            self._known[session_id] = attrs.evolve(known, stream_worker=writer)
        await self._tell_others(session_id, Letter(session_id, "sync"))

    async def resume_elsewhere(
        self, session_id: str, transport: HttpSessionStream, event_id: str
    ) -> ResponseStream | None:
        """The stream of another worker that ``event_id`` (a ``Last-Event-ID``) belongs
        to, to be carried here (None: no such stream). Its writer is asked to report
        its changes; call :meth:`stop_carrying` once the connection ends."""
        key = transport.store.stream_of(event_id)
        writer = None if key is None else worker_of_stream(key)
        if key is None or writer is None or writer == self.worker:
            return None
        stream = transport.stream(key, foreign=True)
        assert stream is not None
        payload = b"%d %s" % (self.worker, key.encode())
        await self.mailbox.send(writer, Letter(session_id, "carry", payload))
        return stream

    @asynccontextmanager
    async def carrying(
        self, transport: HttpSessionStream, stream: ResponseStream
    ) -> AsyncIterator[None]:
        """A GET's connection carries ``stream`` for the block: a GET stream (the record
        names the worker writing it meanwhile), or a POST's stream; another worker's
        stream stops having its changes reported after."""
        session_id = transport.session_id
        assert session_id is not None
        writer = worker_of_stream(stream.key)
        get_stream = writer is not None and stream.key == stream_prefix(writer) + STANDALONE
        if writer is not None and get_stream:
            await self._hold_stream(session_id, writer)
        try:
            yield
        finally:
            with trio.move_on_after(RELEASE_SECONDS, shield=True):
                await self._stop_carrying(session_id, stream)
                if writer is not None and get_stream:
                    await self.directory.release_stream(session_id, writer)

    async def _stop_carrying(self, session_id: str, stream: ResponseStream) -> None:
        writer = worker_of_stream(stream.key)
        if writer is not None and writer != self.worker and not stream.finished:
            payload = b"%d %s" % (self.worker, stream.key.encode())
            await self.mailbox.send(writer, Letter(session_id, "uncarry", payload))

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
        """Read this worker's letters until cancelled (and report the changes of the
        streams other workers carry)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(partial(self.mailbox.run, self.receive))
            task_status.started()

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
            elif letter.kind in ("carry", "uncarry"):
                self._carry(transport, letter)
            elif letter.kind == "changed":
                key, _, finished = letter.payload.decode().partition(" ")
                transport.foreign_changed(key, finished=finished == "1")
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

    def _carry(self, transport: HttpSessionStream, letter: Letter) -> None:
        """A connection on another worker carries (or stopped carrying) one of our streams."""
        carrier, _, key = letter.payload.decode().partition(" ")
        stream = transport.stream(key)
        if stream is None or not carrier.isdigit():
            return
        carried = letter.kind == "carry"
        transport.carried_elsewhere(stream, carried)
        if carried and self._nursery is not None:
            report = partial(self._report, int(carrier), letter.session_id, transport, stream)
            self._nursery.start_soon(report)

    async def _report(
        self, carrier: int, session_id: str, transport: HttpSessionStream, stream: ResponseStream
    ) -> None:
        """Tell ``carrier`` of each change of ``stream`` while a connection there carries it
        (what changed written to the store first: the carrier reads it there)."""
        while True:
            changed = stream.changed
            finished = stream.finished or transport.closed.is_set()
            await transport.store.flush()
            payload = b"%s %d" % (stream.key.encode(), finished)
            await self.mailbox.send(carrier, Letter(session_id, "changed", payload))
            if finished or stream.connection is not ELSEWHERE:
                return
            await changed.wait()

    async def _deliver(self, transport: HttpSessionStream, payload: bytes) -> None:
        try:
            post = read_post(payload)
        except InvalidMessage:
            return  # written by a worker from a message it decoded: cannot happen
        cancelled = post.cancelled
        await transport.deliver(post.take_message())
        for request_id in cancelled:
            transport.cancelled(request_id)
