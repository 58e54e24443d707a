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
import time
from collections.abc import Callable
from typing import Any

import msgspec
import trio

from .wire import (
    PIPE_CAPACITY,
    BenchError,
    Incoming,
    Peer,
    StdioWire,
    WireClosed,
    answer_server_request,
    decode_loop_incoming,
)


class Budget:
    """How many calls may still start, and until when (shared by loops)."""

    def __init__(self, duration: float, max_calls: int) -> None:
        self.deadline = time.perf_counter() + duration
        self.remaining = max_calls

    def take(self, wanted: int) -> int:
        if self.remaining <= 0 or time.perf_counter() >= self.deadline:
            self.remaining = 0
            return 0
        granted = min(wanted, self.remaining)
        self.remaining -= granted
        return granted

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0 or time.perf_counter() >= self.deadline


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

    def on_response(self, message: Incoming, now: float) -> None:
        started = self.sent_at.pop(message.id, None)
        if started is None:
            return
        tally = self.tally
        tally.latencies.append(now - started)
        tally.done += 1
        if message.error:
            tally.failed(message.error)
        elif message.result and b'"isError":true' in bytes(message.result):
            tally.failed(bytes(message.result))
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
        peer = self.peer
        first = peer.next_id + 1
        peer.next_id += count
        prefix, suffix = self.prefix, self.suffix
        ids = range(first, first + count)
        data = b"".join([prefix + str(i).encode() + suffix for i in ids])
        now = time.perf_counter()
        sent_at = self.sent_at
        for i in ids:
            sent_at[i] = now
        await peer.send(data)

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
                with trio.move_on_at(
                    trio.current_time()
                    + (self.budget.deadline - time.perf_counter())
                    + drain_timeout
                ):
                    await self.finished.wait()
                nursery.cancel_scope.cancel()
        finally:
            peer.after_read = None
            peer.on_response = _ignore
        if self.sent_at:
            lost = len(self.sent_at)
            self.tally.errors += lost
            if self.tally.first_error is None:
                self.tally.first_error = (
                    f"{lost} calls unanswered {drain_timeout:g} s after the end"
                )

    async def _watch_peer(self) -> None:
        await self.peer.closed.wait()
        raise BenchError(f"{self.peer.close_reason or 'the server went away'} mid-run")


def _ignore(message: Incoming, now: float) -> None:
    pass


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
        if not count:
            return
        peer = self.peer
        first = peer.next_id + 1
        peer.next_id += count
        prefix, suffix = self.prefix, self.suffix
        ids = range(first, first + count)
        self.out += b"".join([prefix + str(i).encode() + suffix for i in ids])
        now = time.perf_counter()
        sent_at = self.sent_at
        for i in ids:
            sent_at[i] = now

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
        now = time.perf_counter()
        if self.partial:
            chunk = self.partial + chunk
            self.partial = b""
        if b"\n" not in chunk:
            self.partial = chunk
            return 0
        lines = chunk.split(b"\n")
        self.partial = lines.pop()
        completed = 0
        sent_at, tally = self.sent_at, self.tally
        latencies = tally.latencies
        for line in lines:
            if not line or line.isspace():
                continue
            try:
                message = decode_loop_incoming(line)
            except msgspec.DecodeError as error:
                raise BenchError(
                    f"the server wrote a line that is not JSON-RPC ({error}): {line[:200]!r}"
                ) from None
            if message.method is not None:
                if message.id is not None:
                    self.out += answer_server_request(message)
                continue
            started = sent_at.pop(message.id, None)
            if started is None:
                continue
            latencies.append(now - started)
            completed += 1
            if message.error:
                tally.failed(message.error)
            elif message.result is not None and message.result.is_error:
                tally.failed(line[:300])
        tally.done += completed
        return completed

    def finish(self) -> None:
        if self.partial:
            self.wire.put_back_partial(self.partial)


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
    for the whole phase; the peers' reader tasks resume afterwards.
    """
    loops = [_PipeLoop(peer, template, depth, tally) for peer in peers]
    by_fd = {}
    poller = select.poll()
    for loop in loops:
        by_fd[loop.read_fd] = loop
        by_fd[loop.write_fd] = loop
        poller.register(loop.read_fd, select.POLLIN)
    watching_out: set[int] = set()
    for loop in loops:
        loop.issue(budget.take(depth))
    hard_deadline = budget.deadline + drain_timeout
    next_tick = time.perf_counter() + 0.5
    try:
        while True:
            for loop in loops:
                if loop.out:
                    loop.flush()
                wants_out = bool(loop.out)
                if wants_out != (loop.write_fd in watching_out):
                    if wants_out:
                        poller.register(loop.write_fd, select.POLLOUT)
                        watching_out.add(loop.write_fd)
                    else:
                        poller.unregister(loop.write_fd)
                        watching_out.discard(loop.write_fd)
            if all(not loop.sent_at for loop in loops) and budget.exhausted:
                break
            now = time.perf_counter()
            if now >= hard_deadline:
                break
            if tick is not None and now >= next_tick:
                tick()
                next_tick = now + 0.5
            for fd, events in poller.poll(500):
                loop = by_fd[fd]
                if fd == loop.read_fd:
                    if events & (select.POLLIN | select.POLLHUP | select.POLLERR):
                        completed = loop.read()
                        if completed:
                            loop.issue(budget.take(completed))
                elif events & (select.POLLOUT | select.POLLERR):
                    loop.flush()
    finally:
        for loop in loops:
            loop.finish()
    lost = sum(len(loop.sent_at) for loop in loops)
    if lost:
        tally.errors += lost
        if tally.first_error is None:
            tally.first_error = f"{lost} calls unanswered {drain_timeout:g} s after the end"
