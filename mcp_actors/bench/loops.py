"""Closed-loop load: keep N requests in flight on a peer until a deadline or a call budget.

Requests are written in batches: when a read brings back k responses, k new
requests go out in one write. With ``depth=1`` that is the classic sequential
round trip; with ``depth=100`` it is a pipelined session. Several loops may share
one :class:`Budget` and one :class:`Tally` (N sessions each calling in a loop).

Where a write can never wait on the server (a pipe whose buffer holds every
request in flight) the reader writes the next batch itself; otherwise (large
payloads, network transports) a writer task does, so that a client blocked
writing can never deadlock with a server blocked writing to it.

Stdio servers get :func:`run_blocking` instead: the same loop on raw pipe fds
with ``poll``, no event loop, because trio's per-wake-up cost (tens of
microseconds) would otherwise be a large part of a sequential round trip.
"""

from __future__ import annotations

import math
import os
import select
from collections.abc import Callable
from typing import Any

import trio
from msgspec import UNSET

from ..protocol.jsonrpc import Envelope
from .stdio import StdioWire
from .wire import (
    PIPE_CAPACITY,
    BenchError,
    Peer,
    WireClosed,
    answer_server_request,
    decode_line,
    drop_response,
    failure,
)


class Budget:
    """How many calls may still start, and until when (shared by loops).

    Every clock of the bench is trio's (:func:`trio.current_time`): the real one in a
    run, a :class:`trio.testing.MockClock` in a test, so that a workload's timing can
    be checked against a server with a known service time.
    """

    def __init__(self, duration: float, max_calls: int) -> None:
        self.deadline = trio.current_time() + duration
        self.remaining = max_calls

    def take(self, wanted: int) -> int:
        if self.remaining <= 0 or trio.current_time() >= self.deadline:
            self.remaining = 0
            return 0
        granted = min(wanted, self.remaining)
        self.remaining -= granted
        return granted

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0 or trio.current_time() >= self.deadline


class Tally:
    """Completed calls, their latencies (seconds) and failures."""

    def __init__(self) -> None:
        self.done = 0
        self.errors = 0
        self.first_error: str | None = None
        self.latencies: list[float] = []

    def failed(self, detail: bytes | str) -> None:
        self.errors += 1
        if self.first_error is None:
            text = detail if isinstance(detail, str) else detail.decode(errors="replace")
            self.first_error = text[:300]

    def unanswered(self, lost: int, drain_timeout: float) -> None:
        """Count the calls still in flight when the drain ran out as failures."""
        if not lost:
            return
        self.errors += lost
        if self.first_error is None:
            self.first_error = f"{lost} calls unanswered {drain_timeout:g} s after the end"


class ClosedLoop:
    """``depth`` requests of one template in flight on ``peer``."""

    def __init__(
        self,
        peer: Peer,
        template: tuple[bytes, bytes],
        depth: int,
        budget: Budget,
        tally: Tally,
    ) -> None:
        self.peer = peer
        self.prefix, self.suffix = template
        self.depth = depth
        self.budget = budget
        self.tally = tally
        self.sent_at: dict[Any, float] = {}
        self.refill = 0
        self.finished = trio.Event()
        request_size = len(self.prefix) + len(self.suffix) + 12
        self.direct = peer.wire.buffered_writes and request_size * depth <= PIPE_CAPACITY // 2
        self._wakeup = trio.Event()

    def on_response(self, message: Envelope, now: float) -> None:
        started = self.sent_at.pop(message.id, None)
        if started is None:
            return
        tally = self.tally
        tally.latencies.append(now - started)
        tally.done += 1
        if (detail := failure(message)) is not None:
            tally.failed(detail)
        self.refill += 1

    async def after_read(self) -> None:
        if self.refill:
            if self.direct:
                await self._issue()
            else:
                self._wakeup.set()
        self._finish_if_done()

    def _finish_if_done(self) -> None:
        """The loop is over once the budget is spent and no call is in flight.

        Checked after every read and after every issue that sent nothing: with a
        writer task the budget may run out between the two, and then no read is
        left to notice it.
        """
        if not self.sent_at and self.budget.exhausted:
            self.finished.set()

    async def _issue(self) -> None:
        count = self.budget.take(self.refill)
        self.refill = 0
        if not count:
            self._finish_if_done()
            return
        await self.peer.send(
            stamp_batch(self.peer, (self.prefix, self.suffix), count, self.sent_at)
        )

    async def _writer(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup = trio.Event()
            await self._issue()

    async def run(self, drain_timeout: float = 30.0) -> None:
        """Run until the budget is spent and every call answered (or the drain times out)."""
        peer = self.peer
        peer.on_response = self.on_response
        peer.after_read = self.after_read
        try:
            async with trio.open_nursery() as nursery:
                if not self.direct:
                    nursery.start_soon(self._writer)
                nursery.start_soon(self._watch_peer)
                self.refill = self.depth
                await self._issue()
                with trio.move_on_at(self.budget.deadline + drain_timeout):
                    await self.finished.wait()
                nursery.cancel_scope.cancel()
        finally:
            peer.after_read = None
            peer.on_response = drop_response
        self.tally.unanswered(len(self.sent_at), drain_timeout)

    async def _watch_peer(self) -> None:
        await self.peer.closed.wait()
        raise BenchError(f"{self.peer.close_reason or 'the server went away'} mid-run")


def stamp_batch(
    peer: Peer, template: tuple[bytes, bytes], count: int, sent_at: dict[Any, float]
) -> bytes:
    """``count`` requests of ``template`` under the peer's next ids, each noted in
    ``sent_at`` as sent now; the bytes to write."""
    first = peer.next_id + 1
    peer.next_id += count
    prefix, suffix = template
    ids = range(first, first + count)
    now = trio.current_time()
    for i in ids:
        sent_at[i] = now
    return b"".join([prefix + str(i).encode() + suffix for i in ids])


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list (NaN when empty)."""
    if not sorted_values:
        return math.nan
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


# -- the blocking engine for local pipes ----------------------------------------------------


class _PipeLoop:
    """One stdio session's closed loop for :func:`run_blocking`: raw fds, no event loop."""

    def __init__(self, peer: Peer, template: tuple[bytes, bytes], depth: int, tally: Tally) -> None:
        wire = peer.wire
        assert isinstance(wire, StdioWire)
        self.peer = peer
        self.wire = wire
        self.read_fd, self.write_fd = wire.fds()
        self.prefix, self.suffix = template
        self.depth = depth
        self.tally = tally
        self.sent_at: dict[Any, float] = {}
        self.out = bytearray()
        self.partial = b"".join(wire.take_partial())

    def issue(self, count: int) -> None:
        if count:
            self.out += stamp_batch(self.peer, (self.prefix, self.suffix), count, self.sent_at)

    def flush(self) -> None:
        """Write what the pipe takes now; the rest waits for POLLOUT."""
        out = self.out
        while out:
            try:
                written = os.write(self.write_fd, out)
            except BlockingIOError:
                return
            except OSError as error:
                raise WireClosed(f"the server closed its stdin ({error})") from None
            del out[:written]

    def read(self) -> int:
        """Read what arrived; the number of calls it completed."""
        try:
            chunk = os.read(self.read_fd, 1 << 16)
        except BlockingIOError:
            return 0
        except OSError:
            chunk = b""
        if not chunk:
            raise WireClosed("the server closed its stdout")
        now = trio.current_time()
        if self.partial:
            chunk = self.partial + chunk
            self.partial = b""
        if b"\n" not in chunk:
            self.partial = chunk
            return 0
        lines = chunk.split(b"\n")
        self.partial = lines.pop()
        completed = sum(self._on_line(line, now) for line in lines if line and not line.isspace())
        self.tally.done += completed
        return completed

    def _on_line(self, line: bytes, now: float) -> bool:
        """Take one message the server sent; whether it completed one of our calls.

        A request of the server's is answered (in the next write); a notification
        or an answer to no call in flight is dropped.
        """
        message = decode_line(line)
        if message.method is not UNSET:
            if message.id is not UNSET and message.id is not None:
                self.out += answer_server_request(message)
            return False
        started = self.sent_at.pop(message.id, None)
        if started is None:
            return False
        self.tally.latencies.append(now - started)
        if (detail := failure(message)) is not None:
            self.tally.failed(detail)
        return True

    def finish(self) -> None:
        if self.partial:
            self.wire.put_back_partial(self.partial)


class _PipePoll:
    """The pipes of several :class:`_PipeLoop` under one ``poll``: every read end always,
    a write end only while bytes wait to go out on it."""

    _READABLE = select.POLLIN | select.POLLHUP | select.POLLERR
    _WRITABLE = select.POLLOUT | select.POLLERR

    def __init__(self, loops: list[_PipeLoop]) -> None:
        self.loops = loops
        self._poller = select.poll()
        self._by_fd: dict[int, _PipeLoop] = {}
        self._watching_out: set[int] = set()
        for loop in loops:
            self._by_fd[loop.read_fd] = self._by_fd[loop.write_fd] = loop
            self._poller.register(loop.read_fd, select.POLLIN)

    def in_flight(self) -> int:
        """The calls sent and not answered yet, over every loop."""
        return sum(len(loop.sent_at) for loop in self.loops)

    def flush(self) -> None:
        """Write what each pipe takes now; watch a pipe for room while bytes remain."""
        for loop in self.loops:
            if loop.out:
                loop.flush()
            self._watch_out(loop.write_fd, bool(loop.out))

    def _watch_out(self, fd: int, wanted: bool) -> None:
        if wanted == (fd in self._watching_out):
            return
        if wanted:
            self._poller.register(fd, select.POLLOUT)
            self._watching_out.add(fd)
        else:
            self._poller.unregister(fd)
            self._watching_out.discard(fd)

    def serve(self, budget: Budget, *, timeout_ms: int) -> None:
        """Wait up to ``timeout_ms`` for pipes to be ready, then read what came in
        (each completed call starts the next one the budget grants) and write what
        fits."""
        for fd, events in self._poller.poll(timeout_ms):
            loop = self._by_fd[fd]
            if fd != loop.read_fd:
                if events & self._WRITABLE:
                    loop.flush()
            elif events & self._READABLE and (completed := loop.read()):
                loop.issue(budget.take(completed))


def run_blocking(
    peers: list[Peer],
    template: tuple[bytes, bytes],
    depth: int,
    budget: Budget,
    tally: Tally,
    *,
    drain_timeout: float = 30.0,
    tick: Callable[[], None] | None = None,
) -> None:
    """The closed loop of :class:`ClosedLoop`, for stdio peers, without an event loop.

    Blocking ``poll``/``read``/``write`` on the pipes cost the client a few
    microseconds per round trip where an event loop costs tens, so even one call
    at a time measures the server. It blocks the calling thread (the trio loop)
    for the whole phase; the peers' reader tasks resume afterwards. ``tick`` is
    called about every half second (progress output).
    """
    loops = [_PipeLoop(peer, template, depth, tally) for peer in peers]
    pipes = _PipePoll(loops)
    for loop in loops:
        loop.issue(budget.take(depth))
    hard_deadline = budget.deadline + drain_timeout
    next_tick = trio.current_time() + 0.5
    try:
        while True:
            pipes.flush()
            now = trio.current_time()
            if (budget.exhausted and not pipes.in_flight()) or now >= hard_deadline:
                break
            if tick is not None and now >= next_tick:
                tick()
                next_tick = now + 0.5
            pipes.serve(budget, timeout_ms=500)
    finally:
        for loop in loops:
            loop.finish()
    tally.unanswered(pipes.in_flight(), drain_timeout)
