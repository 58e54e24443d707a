"""What one measured phase of the bench reports, and the closed loops it measures.

:func:`closed_loops` runs one :class:`~.loops.ClosedLoop` per peer (or, for stdio
peers, :func:`~.loops.run_blocking`) under one budget, reading the server's CPU and
memory from ``/proc`` before and after (:mod:`.procstat`) and this process's CPU.
:func:`outcome` is the shape every workload's figures share: calls, errors,
seconds, calls per second, latency percentiles, CPU per call and server memory
(``None`` where a workload cannot tell). ``server_rss_kb`` is the total over the
``server_processes`` servers measured (one per session for stdio ``concurrent:N``),
each with its child processes.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import trio

from . import procstat
from .loops import Budget, ClosedLoop, Tally, percentile, run_blocking
from .stdio import StdioWire
from .ticker import Ticker
from .wire import BenchError, Peer
from .workloads import BenchConfig


def server_pids(peers: list[Peer], config: BenchConfig) -> list[int]:
    """The server processes behind ``peers`` (stdio children), else ``config.server_pid``."""
    pids = {peer.wire.pid for peer in peers if peer.wire.pid is not None}
    if not pids and config.server_pid is not None:
        pids = {config.server_pid}
    return sorted(pids)


def usage(pids: list[int]) -> procstat.Usage | None:
    """The processes' CPU and memory now (None: no process known)."""
    return procstat.usage(pids) if pids else None


def latency_fields(latencies: list[float]) -> dict[str, float | None]:
    """p50 and p99 in milliseconds (None without samples); sorts ``latencies``."""
    latencies.sort()
    if not latencies:
        return {"p50_ms": None, "p99_ms": None}
    return {
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
    }


def per_call_us(seconds: float, calls: int) -> float | None:
    """``seconds`` of CPU spread over ``calls``, in microseconds (None without calls)."""
    return round(1e6 * seconds / calls, 1) if calls else None


def outcome(tally: Tally, elapsed: float | None, *, rate_digits: int = 1) -> dict[str, Any]:
    """The figures every workload reports, from its tally and how long it ran (None: a
    workload whose rate means nothing); CPU and memory start unknown (None)."""
    rate = (
        round(tally.done / elapsed, rate_digits) if elapsed else (None if elapsed is None else 0.0)
    )
    result: dict[str, Any] = {
        "calls": tally.done,
        "errors": tally.errors,
        "seconds": None if elapsed is None else round(elapsed, 3),
        "calls_per_s": rate,
        **latency_fields(tally.latencies),
        "server_cpu_us_per_call": None,
        "client_cpu_us_per_call": None,
        "server_rss_kb": None,
    }
    if tally.first_error is not None:
        result["first_error"] = tally.first_error
    return result


async def _drive(
    peers: list[Peer],
    template: tuple[bytes, bytes],
    depth: int,
    budget: Budget,
    tally: Tally,
    config: BenchConfig,
    ticker: Ticker,
) -> None:
    """The loops themselves: the blocking engine for stdio peers (unless the config
    says not to), trio's closed loops otherwise."""
    if not (config.blocking and all(isinstance(peer.wire, StdioWire) for peer in peers)):
        async with trio.open_nursery() as nursery:
            for peer in peers:
                loop = ClosedLoop(peer, template, depth, budget, tally)
                nursery.start_soon(loop.run, config.drain_timeout)
        return
    await trio.lowlevel.checkpoint()
    run_blocking(
        peers, template, depth, budget, tally, drain_timeout=config.drain_timeout, tick=ticker.show
    )
    await trio.lowlevel.checkpoint()
    if (closed := next((p for p in peers if p.closed.is_set()), None)) is not None:
        raise BenchError(f"{closed.close_reason or 'the server went away'} mid-run")


class Meter:
    """The server's CPU and memory (``/proc``) and this process's CPU over one phase:
    read at :meth:`start`, spread over the phase's calls at :meth:`finish`."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.before: procstat.Usage | None = None
        self.cpu_before = 0.0

    def start(self) -> None:
        gc.collect()
        self.before = usage(self.pids)
        self.cpu_before = time.process_time()

    def finish(self, calls: int, elapsed: float) -> dict[str, Any]:
        """CPU per call (server and client), their shares of ``elapsed``, server memory."""
        client_cpu = time.process_time() - self.cpu_before
        after = usage(self.pids)
        found: dict[str, Any] = {
            "server_cpu_us_per_call": None,
            "client_cpu_us_per_call": per_call_us(client_cpu, calls),
            "server_rss_kb": None,
        }
        if self.before is not None and after is not None and calls:
            server_cpu = after.cpu_seconds - self.before.cpu_seconds
            found["server_cpu_us_per_call"] = per_call_us(server_cpu, calls)
            found["server_cpu_pct"] = round(100 * server_cpu / elapsed) if elapsed > 0 else None
            found["server_rss_kb"] = after.rss_kb
            found["server_processes"] = len(self.pids)
        found["client_cpu_pct"] = round(100 * client_cpu / elapsed) if elapsed > 0 else None
        return found


async def closed_loops(
    peers: list[Peer],
    template: tuple[bytes, bytes],
    depth: int,
    config: BenchConfig,
    ticker: Ticker,
    label: str,
    *,
    measure: bool = True,
    duration: float | None = None,
) -> dict[str, Any]:
    """Run one closed loop per peer with a shared budget; the measured figures
    (``measure=False``: no /proc readings, for a warm-up)."""
    duration = config.duration if duration is None else duration
    tally = Tally()
    meter = Meter(server_pids(peers, config) if measure else [])
    ticker.phase(label, tally, duration, pids=meter.pids)
    meter.start()
    start = trio.current_time()
    await _drive(peers, template, depth, Budget(duration, config.max_calls), tally, config, ticker)
    elapsed = trio.current_time() - start
    return {**outcome(tally, elapsed), **meter.finish(tally.done, elapsed)}
