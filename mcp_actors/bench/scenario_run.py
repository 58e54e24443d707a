"""Running a scenario (:mod:`.scenario`): virtual users, closed or open model.

**Closed model** (no ``--rate``): ``users`` tasks (the most any stage asks for) each
run iterations back to back, ``think_time`` apart; with ``[[stages]]`` a controller
moves the number of active users linearly to each stage's ``users`` over its
``duration`` (users above the current count wait), and the run lasts the stages'
total, else ``--duration``.

**Open model** (``--rate N``): iteration *i* starts at ``i / N`` seconds whatever the
server does (sessions per second for ``per-iteration`` scenarios), each in a task of
its own, for ``--duration`` seconds (the stages are the closed model's); at most
``--max-in-flight`` at once (then the start waits, and the wait counts in the
iteration's latency, measured from its intended start). A ``long-lived`` scenario
shares ``users`` sessions among the iterations, round-robin.
A ``long-lived`` scenario's sessions are opened before the clock starts.

An iteration of a ``per-iteration`` scenario opens a session (``initialize`` and
``notifications/initialized`` in the legacy era), makes its calls and closes it (a
``DELETE`` over Streamable HTTP); a ``long-lived`` one uses the user's session.
Each call picks a ``[[mix]]`` entry by weight. Rows: one per entry (its calls, errors
and latency from the call's send), one for the iterations.

**Limits.** The run stops at its duration (hard: iterations in progress are cut and
not counted) or after ``--max-calls`` calls. Latencies go to HDR histograms
(:mod:`.histogram`), constant memory whatever the run's length.
"""

from __future__ import annotations

import math
import random
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

import msgspec
import trio

from .histogram import Latencies
from .loops import Tally
from .openloop import Timeline
from .scenario import Action, Scenario
from .ticker import Ticker
from .wire import BenchError, Connector, Peer, open_peer
from .workloads import BenchConfig

#: How often a ramp's controller moves the number of active users.
RAMP_STEP = 0.1


class _Figures:
    """One row's counts and latencies."""

    def __init__(self) -> None:
        self.tally = Tally()
        self.latencies = Latencies()

    def record(self, latency: float, error: str | None) -> None:
        self.tally.done += 1
        self.latencies.record(latency)
        if error is not None:
            self.tally.failed(error)

    def row(
        self, name: str, kind: str, elapsed: float, *, histogram: bool = False
    ) -> dict[str, Any]:
        tally = self.tally
        row: dict[str, Any] = {
            "workload": name,
            "kind": kind,
            "calls": tally.done,
            "errors": tally.errors,
            "seconds": round(elapsed, 3),
            "calls_per_s": round(tally.done / elapsed, 1) if elapsed > 0 else None,
            **self.latencies.fields(),
        }
        if tally.first_error is not None:
            row["first_error"] = tally.first_error
        if histogram:
            row["histogram"] = self.latencies.encode().decode()
        return row


class ScenarioRun:
    """One run of ``scenario`` against the server ``connect`` reaches."""

    def __init__(
        self, connect: Connector, scenario: Scenario, config: BenchConfig, ticker: Ticker
    ) -> None:
        self.connect = connect
        self.scenario = scenario
        self.config = config
        self.ticker = ticker
        self.rng = random.Random(scenario.seed)
        self.actions = {action.name: _Figures() for action in scenario.mix}
        self.iterations = _Figures()
        self.calls = Tally()  # every call: the live view's count
        self.calls_left = config.max_calls
        self.picks = 0
        self.active = float(scenario.users if not scenario.stages else 0)
        self.changed = trio.Event()
        self.timeline = Timeline(0.0)

    def duration(self, rate: float | None) -> float:
        """The stages' total in the closed model (if any), else ``--duration``."""
        stages = self.scenario.stages
        if stages and not rate:
            return sum(stage.duration for stage in stages)
        return self.config.duration

    def pick(self) -> Action:
        """The next call's ``[[mix]]`` entry (:meth:`~.scenario.Scenario.pick`)."""
        self.picks += 1
        return self.scenario.pick(self.picks)

    def session(self) -> AbstractAsyncContextManager[Peer]:
        return open_peer(
            self.connect,
            era=self.scenario.era,
            timeout=self.config.open_timeout,
        )

    async def call(self, peer: Peer, action: Action) -> None:
        """One call of ``action``'s kind; its latency and outcome in its row."""
        params = action.params(self.rng)
        began = trio.current_time()
        error: str | None = None
        try:
            raw = await peer.call(action.method, params, timeout=self.config.drain_timeout)
            if action.method == "tools/call" and msgspec.json.decode(raw).get("isError"):
                error = f"{action.target} returned an error: {bytes(raw)[:200]!r}"
        except BenchError as failed:
            error = str(failed)
        now = trio.current_time()
        self.actions[action.name].record(now - began, error)
        self.calls.done += 1
        self.timeline.record(now, now - began, error is not None)

    async def iterate(self, peer: Peer | None, intended: float) -> None:
        """One iteration: a session of its own unless ``peer`` is given, its calls."""
        calls = min(self.scenario.calls_per_iteration, self.calls_left)
        if calls <= 0:
            return
        self.calls_left -= calls  # taken now: no other iteration may start on them
        async with AsyncExitStack() as stack:
            error: str | None = None
            try:
                session = (
                    peer if peer is not None else await stack.enter_async_context(self.session())
                )
                for _ in range(calls):
                    await self.call(session, self.pick())
            except BenchError as failed:
                error = str(failed)
        self.iterations.record(trio.current_time() - intended, error)

    # -- closed model -----------------------------------------------------------------

    async def user(self, index: int, peer: Peer | None, deadline: float) -> None:
        while self.calls_left > 0 and trio.current_time() < deadline:
            if index >= self.active:
                await self.changed.wait()
                continue
            await self.iterate(peer, trio.current_time())
            if self.scenario.think_time:
                await trio.sleep(self.scenario.think_time)
        self._set_active(self.active)  # wake the waiting users: the calls may be spent

    async def ramp(self) -> None:
        """Move the active user count through the stages, linearly."""
        begin = 0.0
        for stage in self.scenario.stages:
            start = trio.current_time()
            while (elapsed := trio.current_time() - start) < stage.duration:
                if self.calls_left <= 0:
                    return
                self._set_active(begin + (stage.users - begin) * elapsed / stage.duration)
                await trio.sleep(RAMP_STEP)
            begin = stage.users
            self._set_active(begin)

    def _set_active(self, users: float) -> None:
        self.active = users
        self.changed.set()
        self.changed = trio.Event()

    # -- open model -------------------------------------------------------------------

    async def arrivals(self, rate: float, peers: list[Peer], nursery: trio.Nursery) -> None:
        """Start iteration *i* at ``i / rate`` s, each in a task, the in-flight cap kept."""
        start = trio.current_time()
        room = trio.Semaphore(self.config.max_in_flight)
        total = math.ceil(self.duration(rate) * rate)
        for i in range(total):
            if self.calls_left <= 0:
                return
            intended = start + i / rate
            await trio.sleep_until(intended)
            await room.acquire()
            peer = peers[i % len(peers)] if peers else None
            nursery.start_soon(self._release_after, room, peer, intended)

    async def _release_after(self, room: trio.Semaphore, peer: Peer | None, at: float) -> None:
        try:
            await self.iterate(peer, at)
        finally:
            room.release()

    # -- the run ----------------------------------------------------------------------

    async def run(self, rate: float | None) -> dict[str, Any]:
        """Run the scenario; its rows (one per mix entry, then the iterations)."""
        scenario = self.scenario
        async with AsyncExitStack() as stack:
            peers: list[Peer] = []
            if scenario.session == "long-lived":  # opened before the clock starts
                self.ticker.phase(f"opening {scenario.max_users}")
                for _ in range(scenario.max_users):
                    peers.append(await stack.enter_async_context(self.session()))
            label = f"{scenario.name}" + (f" @{rate:g}/s" if rate else "")
            start = trio.current_time()
            self.timeline = Timeline(start)
            pids = [self.config.server_pid] if self.config.server_pid is not None else []
            self.ticker.phase(
                label, self.calls, self.duration(rate), pids=pids, latest=self.timeline.last
            )
            deadline = start + self.duration(rate)
            with trio.move_on_at(deadline + (self.config.drain_timeout if rate else 0)):
                async with trio.open_nursery() as nursery:
                    if rate:
                        await self.arrivals(rate, peers, nursery)
                    else:
                        nursery.start_soon(self.ramp)
                        for index in range(scenario.max_users):
                            peer = peers[index] if peers else None
                            nursery.start_soon(self.user, index, peer, deadline)
        elapsed = trio.current_time() - start
        keep = self.config.histograms
        rows = [
            figures.row(name, "scenario", elapsed, histogram=keep)
            for name, figures in self.actions.items()
        ]
        total = sum(row["calls"] for row in rows)
        for row in rows:
            row["share"] = round(row["calls"] / total, 4) if total else None
        iterations = self.iterations.row("iterations", "iteration", elapsed, histogram=keep)
        iterations["timeline"] = self.timeline.close()
        iterations["distribution"] = self.iterations.latencies.distribution()
        return {"rows": [*rows, iterations], "rate": rate}
