"""How many connections an HTTP front end holds, from whom, and for how long a peer may stall.

Both front ends (the lean server and hypercorn) accept their connections through a
:class:`ConnectionGate`, which bounds what hostile peers can hold:

- **A global cap and a per-client cap.** At most ``max_connections`` connections are
  served at once, at most ``max_connections_per_client`` of them from one peer IP
  address. Besides them the gate keeps a **reserve** of ``reserve`` connections, so
  that when the cap is reached a load balancer's health checks and new clients are
  still served:

  - a connection under both caps is served (:attr:`Admission.SERVE`);
  - past the global cap, a client that holds no connection yet (a new client) is
    served on the reserve;
  - any other connection past a cap, while the reserve has room, is *restricted*
    (:attr:`Admission.RESTRICT`): it may carry one request for the health path (answered,
    then the connection closes); anything else is answered
    ``503 Service Unavailable`` with ``Retry-After`` and the connection closes;
  - with the reserve full as well, the connection is closed at once, unanswered
    (:attr:`Admission.CLOSE`): answering would cost what the caps are there to save.

- **A send timeout** (:class:`GuardedStream`, the stream each connection is served
  on). A peer that accepts no bytes for ``send_timeout`` seconds while a reply is
  being written (it sends requests and never reads the replies) is dropped: its
  connection is closed, and the front end treats it as a client that left: the
  application is told (``http.disconnect``), which cancels what it was serving that
  client (unless the client may still resume it, see ``HttpConfig.resume_window``),
  and the requests the connection pipelined behind are never run.
- **A reset is noticed.** A front end that is not reading the connection (its
  read-ahead of pipelined requests is full) would not see the peer reset it; the gate
  looks at the connection's TCP state meanwhile (Linux), so a reset, a broken read or
  write and a send timeout all set :attr:`GuardedStream.gone`: the front end tells the
  application the client left, and runs none of the requests it pipelined.

- **An idle keep-alive connection closes.** While a front end waits for a
  connection's next request it sets :attr:`GuardedStream.idle_until`; a connection
  still waiting then is closed (the front end's read ends as for a peer that left).

All three are checked by one **sweep** of the gate every second over the connections
it serves (:meth:`GuardedStream.check`), not by a timer per write or a task per
connection: a write only notes when it last made progress and a wait for the next
request only when it gives up, so a request costs no cancel scope (a trio cancel
scope with a deadline costs about 50,000 instructions), and ten thousand idle
connections cost one wake-up a second, not ten thousand. A stalled peer is therefore
dropped between ``send_timeout`` and ``send_timeout`` + 1 seconds after its last
progress, and an idle connection closed up to a second after its ``idle_until``.

**Reads and writes that need no wait do not yield.** trio's socket stream yields to
the scheduler after every read or write that succeeds at once, so that no task can
run forever on a socket that is always ready; each such yield is one more pass of
the run loop (about 30,000 instructions: an ``epoll_wait``, the scheduler's
bookkeeping), and a request that is read, answered and written costs two where one
would do. :class:`GuardedStream` reads and writes the socket's descriptor directly and
waits (``trio.lowlevel.wait_readable``/``wait_writable``) only when it must; it still
raises :class:`trio.Cancelled` at every call of a cancelled task, and it yields after
:data:`UNYIELDED_LIMIT` operations in a row that did not wait, so a peer that keeps
its socket always ready (pipelining requests, reading a long reply as fast as it is
written) still lets every other task run. In the usual exchange the next read waits
for the next request, which is the request's one pass.
"""

from __future__ import annotations

import enum
import errno
import os
import socket
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import attrs
import trio

#: accept() errors that mean "out of resources for now": wait a little and accept again
#: (trio.serve_listeners does the same).
_ACCEPT_CAPACITY_ERRORS: Final = frozenset(
    {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
)
_ACCEPT_RETRY_SECONDS: Final = 0.1
#: How often the gate sweeps its connections for stalled writes and resets.
_SWEEP_SECONDS: Final = 1.0
#: ``tcpi_state`` of a connection that was reset (Linux's TCP_CLOSE).
_TCP_CLOSE: Final = 7
#: Reads and writes in a row that needed no wait before a connection yields anyway.
UNYIELDED_LIMIT: Final = 16
#: Bytes read when the caller names no size (trio's default too).
_DEFAULT_READ: Final = 65536


class Admission(enum.Enum):
    """What the gate does with a new connection."""

    SERVE = "serve"
    #: Past a cap: one health check is served, anything else gets 503 (then close).
    RESTRICT = "restrict"
    #: Past the cap and the reserve: closed at once.
    CLOSE = "close"


class GuardedStream(trio.abc.HalfCloseableStream):
    """An accepted connection as a front end serves it: a write that makes no progress
    for ``send_timeout`` seconds closes the connection and raises
    :class:`trio.BrokenResourceError`, as a write to a peer that left does; that, a
    broken read or write, or a reset seen by :meth:`check` sets :attr:`gone`."""

    def __init__(
        self, stream: trio.SocketStream, send_timeout: float | None, read_size: int | None = None
    ) -> None:
        self.transport_stream = stream
        self.socket = stream.socket
        self._send_timeout = send_timeout
        self._read_size = read_size
        #: Set once the peer is gone (reset, broken, or dropped for not reading).
        self.gone = trio.Event()
        self._receiving = False
        #: When the write in progress last made progress (None: no write in progress).
        self._progress_at: float | None = None
        #: Why the connection was dropped, once it was.
        self._dropped: str | None = None
        #: Reads and writes in a row that did not wait (see :data:`UNYIELDED_LIMIT`).
        self._unyielded = 0
        #: When the connection closes if it is still waiting for a request (set by the
        #: front end while it waits for one; None: not waiting). See :meth:`check`.
        self.idle_until: float | None = None

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        size = max_bytes or _DEFAULT_READ
        if self._read_size is not None:
            size = min(size, self._read_size)
        self._receiving = True
        try:
            await trio.lowlevel.checkpoint_if_cancelled()
            while True:
                try:
                    data = os.read(self._descriptor(), size)
                except BlockingIOError:
                    await trio.lowlevel.wait_readable(self.socket)
                    self._unyielded = 0
                    continue
                except OSError as error:
                    raise self._broken(error) from error
                await self._yield_now_and_then()
                return data
        finally:
            self._receiving = False

    def _descriptor(self) -> int:
        descriptor = self.socket.fileno()
        if descriptor < 0:
            raise trio.ClosedResourceError("the connection is closed")
        return descriptor

    async def _yield_now_and_then(self) -> None:
        """After an operation that did not wait: yield if :data:`UNYIELDED_LIMIT` such
        operations came in a row (module docstring)."""
        self._unyielded += 1
        if self._unyielded >= UNYIELDED_LIMIT:
            self._unyielded = 0
            await trio.lowlevel.cancel_shielded_checkpoint()

    def _broken(self, error: OSError) -> trio.BrokenResourceError:
        """The stream error for a failed read or write: the peer is gone."""
        self.gone.set()
        if self._dropped is not None:
            return trio.BrokenResourceError(self._dropped)
        return trio.BrokenResourceError(f"the connection broke: {error}")

    def check(self, now: float) -> None:
        """The gate's sweep (module docstring): close the connection if it waited for a
        request past :attr:`idle_until`; drop it if a write has made no progress for
        ``send_timeout`` seconds; else, while nobody reads it, look whether the peer
        reset it (a read would say so; nobody is reading)."""
        if self.gone.is_set():
            return
        if self.idle_until is not None and now >= self.idle_until:
            self.close_idle()
            return
        since, timeout = self._progress_at, self._send_timeout
        if since is not None and timeout is not None and now - since >= timeout:
            self._dropped = f"the peer accepted no bytes for {timeout} s"
            self.gone.set()
            self.socket.close()  # wakes the blocked write (and any read)
            return
        if not self._receiving and _reset(self.socket):
            self.gone.set()

    def close_idle(self) -> None:
        """Close the connection if it is waiting for a request (its front end's read
        ends as if the peer had left); a connection serving one is left alone."""
        if self.idle_until is not None:
            self.idle_until = None
            self.socket.close()  # wakes the read

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Write ``data``; each write must take bytes within ``send_timeout``."""
        await trio.lowlevel.checkpoint_if_cancelled()
        with memoryview(data) as view:
            total, waited = 0, False
            try:
                while total < len(view):
                    try:
                        total += os.write(self._descriptor(), view[total:])
                    except BlockingIOError:
                        # The last progress was now (the start, or a write that took some
                        # bytes): the sweep drops the peer if none follows in time. A write
                        # that needs no wait never reads the clock.
                        self._progress_at = trio.current_time()
                        await trio.lowlevel.wait_writable(self.socket)
                        waited = True
                    except OSError as error:
                        raise self._broken(error) from error
            except trio.ClosedResourceError:
                if self._dropped is not None:  # closed by check(): the peer stopped reading
                    raise trio.BrokenResourceError(self._dropped) from None
                raise
            finally:
                self._progress_at = None
        if waited:
            self._unyielded = 0
        else:
            await self._yield_now_and_then()

    async def wait_send_all_might_not_block(self) -> None:
        await self.transport_stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.transport_stream.send_eof()

    async def aclose(self) -> None:
        await self.transport_stream.aclose()


Handler = Callable[[GuardedStream], Awaitable[None]]


def _reset(sock: trio.socket.SocketType) -> bool:
    """Whether ``sock``'s connection was reset (False where TCP_INFO is unknown)."""
    if not hasattr(socket, "TCP_INFO"):
        return False
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
    except OSError:
        return True  # closed
    return info[0] == _TCP_CLOSE


def _client_of(stream: trio.SocketStream) -> str:
    try:
        return str(stream.socket.getpeername()[0])
    except OSError:
        return ""


def _cap(value: int | None) -> float:
    return float("inf") if value is None else value


@attrs.define(eq=False)
class ConnectionGate:
    """Counts the connections open, in all and per client IP, and admits new ones."""

    #: Connections served at once; None: no cap.
    max_connections: int | None
    #: Connections served at once from one client IP address; None: no cap.
    max_connections_per_client: int | None
    #: Connections beyond the caps kept for health checks and new clients.
    reserve: int
    #: Seconds a peer may accept no bytes of a reply before it is dropped; None: forever.
    send_timeout: float | None
    #: Bytes read at most at a time (None: what the front end asks for): bounds what a
    #: front end that reads ahead in big pieces holds of a pipelining connection.
    read_size: int | None = None
    _open: int = attrs.field(init=False, default=0)
    _per_client: Counter[str] = attrs.field(init=False, factory=Counter)
    _streams: set[GuardedStream] = attrs.field(init=False, factory=set)

    def admit(self, client: str) -> Admission:
        """Decide on a connection from ``client`` (an IP address)."""
        held, total = self._per_client[client], self._open
        if total >= _cap(self.max_connections) + self.reserve:
            return Admission.CLOSE
        if held >= _cap(self.max_connections_per_client):
            return Admission.RESTRICT
        if total < _cap(self.max_connections) or held == 0:
            return Admission.SERVE
        return Admission.RESTRICT

    async def serve(
        self,
        listeners: Sequence[trio.SocketListener],
        handler: Handler,
        restricted: Handler,
        nursery: trio.Nursery,
    ) -> None:
        """Accept connections on ``listeners`` until cancelled; each admitted one is
        served in ``nursery`` by ``handler`` (or ``restricted``), on a
        :class:`GuardedStream`."""
        async with trio.open_nursery() as accepting:
            accepting.start_soon(self._sweep)
            for listener in listeners:
                accepting.start_soon(self._accept, listener, handler, restricted, nursery)

    async def _sweep(self) -> None:
        """Every second, :meth:`GuardedStream.check` each connection served."""
        while True:
            await trio.sleep(_SWEEP_SECONDS)
            now = trio.current_time()
            for stream in list(self._streams):
                stream.check(now)

    async def _accept(
        self,
        listener: trio.SocketListener,
        handler: Handler,
        restricted: Handler,
        nursery: trio.Nursery,
    ) -> None:
        """Accept on ``listener`` until cancelled (then close it, as trio.serve_listeners does)."""
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as error:
                    if error.errno not in _ACCEPT_CAPACITY_ERRORS:
                        raise
                    await trio.sleep(_ACCEPT_RETRY_SECONDS)
                    continue
                client = _client_of(stream)
                admission = self.admit(client)
                if admission is Admission.CLOSE:
                    stream.socket.close()
                    continue
                self._open += 1
                self._per_client[client] += 1
                chosen = handler if admission is Admission.SERVE else restricted
                nursery.start_soon(self._run, stream, client, chosen)

    async def _run(self, stream: trio.SocketStream, client: str, handler: Handler) -> None:
        guarded = GuardedStream(stream, self.send_timeout, self.read_size)
        self._streams.add(guarded)
        try:
            await handler(guarded)
        finally:
            self._streams.discard(guarded)
            self._open -= 1
            self._per_client[client] -= 1
            if not self._per_client[client]:
                del self._per_client[client]
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
