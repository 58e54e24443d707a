"""Open-model load: calls sent at a fixed rate whatever the server does, as users arrive.

A closed loop (:mod:`.loops`) sends the next call when an answer comes back, so a
server that stalls for 200 ms also stops the load for 200 ms: only the one call in
flight sees the stall, and the percentiles hide it ("coordinated omission"). Real
users do not wait for each other. :class:`OpenLoop` sends call *i* at its intended
time ``start + i / rate`` and measures its latency from that time, not from when it
was written (as wrk2 does): a stall delays every call intended during it, and the
percentiles show each delay.

Calls go out in batches: each time the sender wakes up it writes every call whose
intended time has come (a late wake-up costs the measured latency, not the rate),
spread round-robin over the sessions. Latencies go to an HDR histogram
(:class:`~.histogram.Latencies`, p50 to p99.99) and per second to a
:class:`Timeline` (for the live view and the HTML report's plots).

**Limits.** At most ``max_in_flight`` calls are unanswered at once (10,000 by
default): past that the sender waits for answers, and since latency still counts
from the intended times, that wait shows in the percentiles instead of being
hidden. A run sends ``min(max_calls, duration * rate)`` calls, then waits at most
``drain_timeout`` for the last answers; calls still unanswered then are errors.
"""

from __future__ import annotations

import math
from typing import Any

import trio

from ..protocol.jsonrpc import Envelope
from .histogram import Latencies
from .loops import Tally
from .wire import BenchError, Peer, drop_response, failure


class Timeline:
    """Per-second figures of a run: calls answered, errors, p50 and p99 of that second.

    Holds one row per elapsed second and the latencies of the current second only.
    """

    def __init__(self, start: float) -> None:
        self.start = start
        self.rows: list[dict[str, Any]] = []
        self._second = 0
        self._latencies: list[float] = []
        self._errors = 0

    def record(self, now: float, latency: float, failed: bool) -> None:
        second = int(now - self.start)
        while second > self._second:
            self._close_second()
        self._latencies.append(latency)
        self._errors += failed

    def _close_second(self) -> None:
        latencies = sorted(self._latencies)
        count = len(latencies)

        def at(q: float) -> float | None:
            return round(latencies[min(count - 1, math.ceil(q * count) - 1)] * 1000, 3)

        self.rows.append(
            {
                "t": self._second + 1,
                "calls": count,
                "errors": self._errors,
                "p50_ms": at(0.5) if count else None,
                "p99_ms": at(0.99) if count else None,
            }
        )
        self._second += 1
        self._latencies, self._errors = [], 0

    def last(self) -> dict[str, Any] | None:
        """The latest whole second's row (None before the first)."""
        return self.rows[-1] if self.rows else None

    def close(self) -> list[dict[str, Any]]:
        """The rows, the last (partial) second's included if it saw any answer."""
        if self._latencies or self._errors:
            self._close_second()
        return self.rows


class OpenLoop:
    """Calls of one template sent at ``rate`` per second over ``peers`` (module docstring)."""

    def __init__(
        self,
        peers: list[Peer],
        template: tuple[bytes, bytes],
        rate: float,
        calls: int,
        *,
        max_in_flight: int = 10_000,
    ) -> None:
        if rate <= 0 or calls < 0 or max_in_flight < 1:
            raise BenchError("an open loop needs a positive rate and in-flight cap")
        self.peers = peers
        self.template = template
        self.rate = rate
        self.calls = calls
        self.max_in_flight = max_in_flight
        self.tally = Tally()
        self.latencies = Latencies()
        self.timeline = Timeline(0.0)
        self.sent = 0
        self.held_back = 0.0
        self._intended: list[dict[int, float]] = [{} for _ in peers]
        self._in_flight = 0
        self._room = trio.Event()
        self._finished = trio.Event()

    def _on_response(self, index: int) -> Any:
        intended = self._intended[index]

        def on_response(message: Envelope, now: float) -> None:
            started = intended.pop(message.id, None) if isinstance(message.id, int) else None
            if started is None:
                return
            latency = now - started
            failed = failure(message)
            tally = self.tally
            tally.done += 1
            if failed is not None:
                tally.failed(failed)
            self.latencies.record(latency)
            self.timeline.record(now, latency, failed is not None)
            self._in_flight -= 1
            self._room.set()
            if self._in_flight == 0 and self.sent == self.calls:
                self._finished.set()

        return on_response

    async def _send_due(self, start: float) -> None:
        """Write every call whose time has come, round-robin over the peers."""
        rate, prefix, suffix = self.rate, *self.template
        while self.sent < self.calls:
            now = trio.current_time()
            # (the slack: a wake-up at an intended time must find that call due)
            due = min(self.calls, int((now - start) * rate + 1e-6) + 1) - self.sent
            if due <= 0:
                await trio.sleep_until(start + self.sent / rate)
                continue
            room = self.max_in_flight - self._in_flight
            if room <= 0:
                self._room = trio.Event()
                waited = trio.current_time()
                await self._room.wait()
                self.held_back += trio.current_time() - waited
                continue
            count = min(due, room)
            batches: list[list[bytes]] = [[] for _ in self.peers]
            for i in range(self.sent, self.sent + count):
                which = i % len(self.peers)
                peer = self.peers[which]
                peer.next_id += 1
                self._intended[which][peer.next_id] = start + i / rate
                batches[which].append(prefix + str(peer.next_id).encode() + suffix)
            self.sent += count
            self._in_flight += count
            for peer, batch in zip(self.peers, batches, strict=True):
                if batch:
                    await peer.send(b"".join(batch))
            await trio.lowlevel.checkpoint()

    async def run(self, drain_timeout: float = 30.0) -> float:
        """Send every call on schedule and wait for the answers; the seconds it took
        (sending and the drain). Unanswered calls are counted as errors."""
        start = trio.current_time()
        self.timeline = Timeline(start)
        for index, peer in enumerate(self.peers):
            peer.on_response = self._on_response(index)
        try:
            async with trio.open_nursery() as nursery:
                for peer in self.peers:
                    nursery.start_soon(_watch, peer)
                await self._send_due(start)
                if self._in_flight == 0:
                    self._finished.set()
                with trio.move_on_after(drain_timeout):
                    await self._finished.wait()
                nursery.cancel_scope.cancel()
        finally:
            for peer in self.peers:
                peer.on_response = drop_response
        self.tally.unanswered(self._in_flight, drain_timeout)
        return trio.current_time() - start


async def _watch(peer: Peer) -> None:
    await peer.closed.wait()
    raise BenchError(f"{peer.close_reason or 'the server went away'} mid-run")
