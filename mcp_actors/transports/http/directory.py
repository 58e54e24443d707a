"""What a legacy Streamable HTTP session *is*, apart from the worker that runs it.

A legacy (2024-11-05 … 2025-11-25) session is a conversation: ``initialize``, then
requests that lean on what came before. What they lean on is small and changes
rarely — the client's ``initialize`` (revision, capabilities, client info), who the
caller is, its ``logging/setLevel`` level and its ``resources/subscribe``
subscriptions. :class:`SessionRecord` is exactly that; a :class:`SessionDirectory`
keeps the records of a deployment (in Redis: :mod:`mcp_actors.shared.sessions`), so
any worker can take any request of any session: it rebuilds the session from its
record (see :mod:`.replicas`), as the 2026-07-28 era serves each request from what
the request carries.

What must reach one worker's live actor — a client's answer to a request that actor
sent, a cancellation, a message for the session's GET stream held there — travels as a
:class:`Letter` to that worker's :class:`Mailbox`. Workers are numbered (each process
takes a fresh number from the directory when it starts); a worker's number is its
address, and the ids of the requests its actors send start at ``number << 32``, so an
answer's id names the worker waiting for it (:func:`worker_of_request`).

Everything here is pure: the record, the interfaces, the addresses. Which of a POST's
messages change a record is :mod:`mcp_actors.protocol.session_record`'s to say.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

import attrs
import trio

from ...protocol.jsonrpc import RequestId
from ...protocol.session_record import StateChange, caller_key
from .auth import Principal


def caller_of(principal: Principal | None) -> str:
    """Who a session belongs to, as the record stores it: the authenticated resource
    owner and OAuth client (what :meth:`Principal.same_caller` compares), or ``""`` for a
    server that does not authenticate."""
    if principal is None:
        return ""
    return caller_key(principal.subject, principal.client_id)


@attrs.frozen
class SessionRecord:
    """A session's state as every worker sees it."""

    #: The client's ``initialize`` params, as it sent them (JSON).
    initialize: bytes
    #: :func:`caller_of` the principal that opened it: only that caller may use it.
    caller: str
    #: Its ``logging/setLevel`` level (None: never set).
    log_level: str | None = None
    #: The URIs it is subscribed to.
    subscriptions: frozenset[str] = frozenset()
    #: The worker whose actor carries the session's GET stream now (None: no GET open).
    stream_worker: int | None = None
    #: The workers that have run an actor of the session (where news of it go).
    workers: frozenset[int] = frozenset()

    def belongs_to(self, principal: Principal | None) -> bool:
        """Whether a request from ``principal`` may use the session (as over one worker)."""
        return caller_of(principal) == self.caller


#: Bits of a request id below the worker number (see the module docstring).
WORKER_SHIFT = 32


def first_request_id(worker: int) -> int:
    """The first id of the requests a worker's session actors send (JSON-safe up to
    worker 2**20)."""
    return (worker << WORKER_SHIFT) + 1


def worker_of_request(request_id: RequestId | None) -> int | None:
    """The worker that sent the request ``request_id`` answers (None: not one of ours)."""
    if isinstance(request_id, int) and not isinstance(request_id, bool) and request_id > 0:
        return request_id >> WORKER_SHIFT
    return None


def stream_prefix(worker: int) -> str:
    """What the keys of a worker's actors' streams start with: a stream's key (and so
    every event id of it) names the worker that writes it."""
    return f"w{worker}."


def worker_of_stream(key: str) -> int | None:
    """The worker whose actor writes the stream ``key`` (None: not a shared stream's)."""
    head, dot, _ = key.partition(".")
    if not dot or head[:1] != "w" or not head[1:].isdigit():
        return None
    return int(head[1:])


@attrs.frozen
class Letter:
    """What one worker sends another about a session (see :class:`Mailbox`)."""

    session_id: str
    #: ``inbound``: a client's message for the session actor there (``payload``);
    #: ``standalone``: a message for the GET stream held there (``payload``);
    #: ``sync``: the record changed, bring the actor up to date; ``end``: DELETEd;
    #: ``carry``/``uncarry``: a connection of the sender carries (no longer carries) a
    #: stream the addressee writes (``payload``: ``b"<sender> <key>"``);
    #: ``changed``: the stream the addressee carries changed (``b"<key> <0|1: finished>"``).
    kind: Literal["inbound", "standalone", "sync", "end", "carry", "uncarry", "changed"]
    payload: bytes = b""


class Mailbox(Protocol):
    """Letters to the workers of a deployment, each delivered to its addressee once it
    reads them, in the order sent. Bounded: see the implementation."""

    #: This worker's number (its address).
    worker: int

    async def send(self, worker: int, letter: Letter) -> None:
        """Queue ``letter`` for ``worker``."""

    async def run(
        self,
        deliver: Callable[[Letter], Awaitable[None]],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Hand this worker's letters to ``deliver``, in order, until cancelled."""


class SessionFull(Exception):
    """The deployment holds as many shared sessions as it may (``max_shared_sessions``)."""


class SessionDirectory(Protocol):
    """The records of a deployment's legacy sessions, by session id.

    Bounded: at most a configured number of records per deployment (:meth:`create`
    raises :class:`SessionFull` beyond it), and a record no request touched for the
    idle TTL is forgotten (its session then answers 404 everywhere).
    """

    async def create(self, session_id: str, record: SessionRecord) -> None:
        """Store a new session's record; raises :class:`SessionFull` when full."""

    async def find(self, session_id: str, worker: int) -> SessionRecord | None:
        """The record of ``session_id`` (its idle clock restarted, ``worker`` added to
        its workers), or None: unknown, expired or ended."""

    async def change(self, session_id: str, changes: list[StateChange]) -> None:
        """Apply what a request of the session changed (a level, subscriptions)."""

    async def hold_stream(self, session_id: str, worker: int) -> None:
        """``worker`` carries the session's GET stream from now on."""

    async def release_stream(self, session_id: str, worker: int) -> None:
        """``worker``'s GET stream of the session closed (unless another took it over)."""

    async def end(self, session_id: str) -> None:
        """Forget the session (DELETE): every worker answers 404 for it from now on."""
