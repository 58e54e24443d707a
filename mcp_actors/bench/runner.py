"""The workloads, and :func:`run_bench`, which runs a list of them against one target.

Each workload is named ``kind[:N]``:

================  =========================================================  ==========
kind              what it does                                               N (default)
================  =========================================================  ==========
``sequential``    one ``tools/call`` at a time on one session                 -
``pipelined``     N ``tools/call`` in flight on one session                   100
``concurrent``    N sessions, each calling sequentially                       8
``ping``          ``ping`` round trips, N in flight                           1
``large``         the large-payload tool call (~100 KB each way), N in flight  1
``churn``         new session: initialize + one call + close, N at most       20
``idle``          N sessions held open: server memory per session            10
``cancel``        N cancellations of ``cancellation_probe``: how long until   20
                  the handler sees ``notifications/cancelled``
================  =========================================================  ==========

Server CPU and memory come from ``/proc`` when the server is a local process
(a stdio child, or ``server_pid`` for a URL target); client CPU is this process's.

**The cancellation contract** (any server can take part): a tool
``cancellation_probe(token: str, seconds: float)`` reports progress once when it
starts (if the call carries a ``progressToken``), then waits ``seconds``; when it
is cancelled — at any point after it started, the progress report included — it
records the host's monotonic clock (Python's ``time.monotonic()``, Linux
``CLOCK_MONOTONIC``, in seconds) under ``token``. A tool
``last_cancellation(token: str)`` returns ``{"token": token, "observed": seconds}``
(``observed`` null until then) as structured content or as JSON text. The harness
records the same clock just before writing ``notifications/cancelled``
(:meth:`~.wire.Wire.send_stamped`), and polls at once;
the difference is the latency (it includes the transport and the server's wake-up,
so it bounds from above the time from the server reading the notification to the
handler stopping).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

import trio

from . import procstat
from .cancel import measure_cancellations
from .loops import Tally
from .measure import Meter, closed_loops, outcome, per_call_us, server_pids, usage
from .openloop import OpenLoop
from .scenario import Scenario
from .scenario_run import ScenarioRun
from .search import find_max
from .stdio import StdioWire
from .ticker import Ticker
from .wire import (
    BenchError,
    Connector,
    Peer,
    drop_response,
    open_peer,
    open_peers,
)
from .workloads import DEFAULT_WORKLOADS, BenchConfig, Workload, parse_workloads

__all__ = ["DEFAULT_WORKLOADS", "BenchConfig", "Workload", "parse_workloads", "run_bench"]


class _Skipped(Exception):
    """The server lacks what a workload calls: the workload is reported as skipped."""


class _Bench:
    """One run: the target, the main session (opened lazily, reopened if it dies), the report."""

    def __init__(self, connect: Connector, config: BenchConfig, ticker: Ticker) -> None:
        self.connect = connect
        self.config = config
        self.ticker = ticker
        self.stack = AsyncExitStack()
        self.main: Peer | None = None
        self.tools: list[str] | None = None
        self.warmed: set[tuple[bytes, bytes]] = set()
        #: The era and version the first session settled on; later sessions speak them.
        self.era: str = config.era
        self.protocol_version = config.protocol_version

    async def open(self) -> Peer:
        return await self.stack.enter_async_context(self.session())

    def session(self) -> AbstractAsyncContextManager[Peer]:
        """One new initialized session with the target, closed on leaving."""
        config = self.config
        return open_peer(
            self.connect,
            protocol_version=self.protocol_version,
            era=self.era,
            timeout=config.open_timeout,
        )

    def sessions(self, count: int) -> AbstractAsyncContextManager[tuple[list[Peer], list[str]]]:
        """``count`` new sessions opened at once: those that opened, and why others did not."""
        config = self.config
        return open_peers(
            self.connect,
            count,
            protocol_version=self.protocol_version,
            era=self.era,
            timeout=config.open_timeout,
        )

    async def main_peer(self) -> Peer:
        if self.main is None or self.main.closed.is_set():
            self.ticker.phase("connecting")
            self.main = await self.open()
            self.era, self.protocol_version = self.main.era, self.main.protocol_version
            self.warmed.clear()
            if self.tools is None:
                capabilities = self.main.initialize_result.get("capabilities", {})
                self.tools = await self.main.list_tools() if "tools" in capabilities else []
        return self.main

    async def require(self, *tools: str) -> Peer:
        """The main session, once it is known to list ``tools`` (:class:`_Skipped` if not)."""
        peer = await self.main_peer()
        absent = [tool for tool in tools if self.tools is not None and tool not in self.tools]
        if absent:
            raise _Skipped(f"the server has no tool {', '.join(absent)}")
        return peer

    async def calling(self, tool: str, arguments: Any) -> tuple[Peer, tuple[bytes, bytes]]:
        """The main session and the template of a call of ``tool``, after one checked call
        (a wrong tool or wrong arguments fail loudly, not a million times)."""
        peer = await self.require(tool)
        await peer.call_tool(tool, arguments)
        return peer, _call_template(peer, tool, arguments)

    async def warm_up(self, peers: list[Peer], template: tuple[bytes, bytes], depth: int) -> None:
        """Run the loops unmeasured for ``config.warmup`` seconds (if any)."""
        if self.config.warmup > 0:
            await closed_loops(
                peers,
                template,
                depth,
                self.config,
                self.ticker,
                "warm-up",
                measure=False,
                duration=self.config.warmup,
            )

    # -- workloads ------------------------------------------------------------------------

    async def load(self, workload: Workload) -> dict[str, Any]:
        """sequential, pipelined, ping, large: closed loops on the main session."""
        config = self.config
        if workload.kind == "ping":
            peer = await self.main_peer()
            if peer.era == "modern":
                raise _Skipped("the modern era has no ping")
            template = peer.template("ping")
            await peer.call("ping")
        elif workload.kind == "large":
            peer, template = await self.calling(config.large_tool, config.large_call_arguments())
        else:
            peer, template = await self.calling(config.tool, config.arguments)
        if template not in self.warmed:  # once per template and session
            self.warmed.add(template)
            await self.warm_up([peer], template, min(workload.n, 100))
        result = await closed_loops(
            [peer], template, workload.n, config, self.ticker, workload.name
        )
        if workload.kind == "large" and result["seconds"]:
            size = len(template[0]) + len(template[1])
            result["mb_per_s_each_way"] = round(result["calls"] * size / result["seconds"] / 1e6, 1)
        return result

    async def concurrent(self, workload: Workload) -> dict[str, Any]:
        """N sessions, each calling sequentially."""
        config = self.config
        main = await self.require(config.tool)
        template = _call_template(main, config.tool, config.arguments)
        self.ticker.phase(f"opening {workload.n}")
        async with self.sessions(workload.n) as (peers, failures):
            if failures or len(peers) < workload.n:
                raise BenchError(
                    f"opened {len(peers)} of {workload.n} sessions: {failures[:1] or 'timed out'}"
                )
            for peer in peers:
                await peer.call_tool(config.tool, config.arguments)
            await self.warm_up(peers, template, 1)
            result = await closed_loops(peers, template, 1, config, self.ticker, workload.name)
        result["sessions"] = workload.n
        return result

    async def churn(self, workload: Workload) -> dict[str, Any]:
        """New sessions one after another: open, one call, close; until ``duration``
        is up (a hard limit: the session in progress then is cut, and not counted)."""
        config = self.config
        await self.require(config.tool)
        tally = Tally()
        self.ticker.phase(workload.name, tally, config.duration)
        stdio_cpu: list[float] = []
        url_pids = [config.server_pid] if config.server_pid is not None else []
        before = usage(url_pids)
        cpu_before = time.process_time()
        start = trio.current_time()
        with trio.move_on_at(start + config.duration):
            while tally.done < workload.n:
                await self.one_session(tally, stdio_cpu)
        elapsed = trio.current_time() - start
        if not tally.done:
            raise BenchError(
                f"no session opened, called and closed within --duration {config.duration:g} s"
                " (the server starts slower than that: give a longer --duration)"
            )
        after = usage(url_pids)
        sessions = tally.done
        result = outcome(tally, elapsed, rate_digits=2)
        result["client_cpu_us_per_call"] = per_call_us(time.process_time() - cpu_before, sessions)
        if stdio_cpu:
            # A stdio session is a process: its CPU from start-up to the close (start-up included).
            result["server_cpu_us_per_call"] = round(1e6 * statistics.fmean(stdio_cpu), 1)
        elif before is not None and after is not None:
            server_cpu = after.cpu_seconds - before.cpu_seconds
            result["server_cpu_us_per_call"] = per_call_us(server_cpu, sessions)
        return result

    async def one_session(self, tally: Tally, stdio_cpu: list[float]) -> None:
        """Open a session, make one call, close it; a stdio server's CPU goes to ``stdio_cpu``."""
        config = self.config
        began = trio.current_time()
        try:
            with trio.fail_after(config.open_timeout + 30):
                async with self.session() as peer:
                    await peer.call_tool(config.tool, config.arguments)
                    if isinstance(peer.wire, StdioWire):
                        seconds = procstat.cpu_seconds(peer.wire.pid)
                        if seconds is not None:
                            stdio_cpu.append(seconds)
        except (BenchError, trio.TooSlowError) as error:
            tally.failed(str(error) or type(error).__name__)
        else:
            tally.latencies.append(trio.current_time() - began)
        tally.done += 1

    async def idle(self, workload: Workload) -> dict[str, Any]:
        """N sessions held open: the server's memory per session."""
        config = self.config
        if _sessionless(await self.main_peer()):
            raise _Skipped("over HTTP the modern era has no sessions to hold")
        tally = Tally()
        self.ticker.phase(f"opening {workload.n}", tally)
        url_pids = [config.server_pid] if config.server_pid is not None else []
        before = usage(url_pids)
        start = trio.current_time()
        async with self.sessions(workload.n) as (peers, failures):
            tally.done = len(peers)
            opened = trio.current_time() - start
            self.ticker.phase(f"holding {workload.n}", tally)
            await trio.sleep(min(1.0, config.duration))
            memory = _held_memory(peers, url_pids, before)
        tally.errors = workload.n - len(peers)
        result = outcome(tally, opened, rate_digits=2)
        if failures:
            result["first_error"] = failures[0]
        return {**result, "sessions": len(peers), **memory}

    async def run_one(self, workload: Workload) -> dict[str, Any]:
        runner = {
            "concurrent": self.concurrent,
            "churn": self.churn,
            "idle": self.idle,
            "cancel": self.cancel,
        }.get(workload.kind, self.load)
        try:
            result = await runner(workload)
        except _Skipped as skipped:
            return {"workload": workload.name, "skipped": str(skipped)}
        except BenchError as error:
            result = {"failed": str(error)}
        except trio.TooSlowError:
            result = {"failed": "timed out"}
        finally:
            if self.main is not None:
                self.main.on_progress = None
                self.main.on_response = drop_response
        return {"workload": workload.name, "kind": workload.kind, "n": workload.n, **result}

    async def open_model(self, rate: float) -> dict[str, Any]:
        """One open-model step: the tool called at ``rate`` per second (:mod:`.openloop`)."""
        config = self.config
        peer, template = await self.calling(config.tool, config.arguments)
        calls = min(config.max_calls, math.ceil(config.duration * rate))
        loop = OpenLoop([peer], template, rate, calls, max_in_flight=config.max_in_flight)
        label = f"rate:{rate:g}"
        pids = server_pids([peer], config)
        self.ticker.phase(
            label, loop.tally, config.duration, pids=pids, latest=lambda: loop.timeline.last()
        )
        meter = Meter(pids)
        meter.start()
        elapsed = await loop.run(config.drain_timeout)
        tally = loop.tally
        return {
            "workload": label,
            "kind": "rate",
            "rate": rate,
            **outcome(tally, elapsed),
            **loop.latencies.fields(),
            **meter.finish(tally.done, elapsed),
            "held_back_s": round(loop.held_back, 3),
            "timeline": loop.timeline.close(),
            "distribution": loop.latencies.distribution(),
            **({"histogram": loop.latencies.encode().decode()} if config.histograms else {}),
        }

    async def open_models(self, report: dict[str, Any]) -> None:
        """The ``rates`` steps, or the ``--find-max`` search among them."""
        config = self.config
        bound = config.find_max_p99_ms
        if bound is None:
            for rate in config.rates:
                report["workloads"].append(await self.open_model(rate))
            return
        search = await find_max(self.open_model, config.rates[0], config.rates[-1], bound)
        report["workloads"] += search.pop("probes")
        report["find_max"] = search

    async def scenario(self, scenario: Scenario, report: dict[str, Any]) -> None:
        """The scenario's run, once per ``rates`` step (once, closed, without)."""
        report["scenario"] = scenario.name
        rates: list[float | None] = [*self.config.rates] or [None]
        for rate in rates:
            run = ScenarioRun(self.connect, scenario, self.config, self.ticker)
            found = await run.run(rate)
            for row in found["rows"]:
                if rate is not None:
                    row["workload"] += f" @{rate:g}/s"
                    row["rate"] = rate
                report["workloads"].append(row)

    async def cancel(self, workload: Workload) -> dict[str, Any]:
        """Cancellation latency (:mod:`.cancel`)."""
        config = self.config
        peer = await self.require(config.cancel_tool, config.cancel_result_tool)
        if _sessionless(peer):
            raise _Skipped(
                "over HTTP the modern era cancels a call by closing its response,"
                " not with notifications/cancelled"
            )
        return await measure_cancellations(peer, config, self.ticker, workload)


def _sessionless(peer: Peer) -> bool:
    """Whether ``peer`` speaks the modern era over a network wire: each request on its
    own (over stdio the process is still the session)."""
    return peer.era == "modern" and not isinstance(peer.wire, StdioWire)


def _call_template(peer: Peer, tool: str, arguments: Any) -> tuple[bytes, bytes]:
    """The request template of a ``tools/call`` of ``tool`` with ``arguments`` in the
    era of ``peer``'s session."""
    return peer.template("tools/call", {"name": tool, "arguments": arguments})


def _stdio_rss(peers: list[Peer]) -> list[int] | None:
    """The memory (kB) of each stdio server process behind ``peers`` that /proc can
    read; None when no peer is a stdio session."""
    pids = sorted({p.wire.pid for p in peers if isinstance(p.wire, StdioWire)})
    if not pids:
        return None
    return [u.rss_kb for u in (procstat.usage([pid]) for pid in pids) if u is not None]


def _held_memory(
    peers: list[Peer], url_pids: list[int], before: procstat.Usage | None
) -> dict[str, Any]:
    """The server's memory with ``peers`` open: per stdio process (one per session), else
    the URL server's growth since ``before`` spread over the sessions."""
    rss = _stdio_rss(peers)
    if rss:
        return {
            "per_process": True,
            "server_rss_kb": sum(rss),
            "rss_per_session_kb": round(statistics.fmean(rss)),
        }
    after = usage(url_pids) if rss is None else None
    total = after.rss_kb if after is not None else 0
    if before is not None and peers:
        return {
            "per_process": False,
            "server_rss_kb": total,
            "rss_per_session_kb": round((total - before.rss_kb) / len(peers), 1),
        }
    return {"server_rss_kb": None, "rss_per_session_kb": None}


async def run_bench(
    connect: Connector,
    config: BenchConfig,
    *,
    progress: Callable[[str], Any] | None = None,
    target: str = "",
    ready: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """Run ``config.workloads`` against the server ``connect`` reaches; the report as a dict.

    ``connect`` is a :data:`~mcp_actors.bench.wire.Connector`: any function opening
    one session's wire (stdio child, URL, or a test's own). ``progress`` receives
    the live ticker's text (e.g. ``sys.stderr.write``). ``ready`` is awaited once the
    first session is open, before any load (a load process of ``--processes`` waits
    there for the others).
    """
    ticker = Ticker(progress)
    report: dict[str, Any] = {
        "target": target,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "tool": config.tool,
        "arguments": config.arguments,
        "duration": config.duration,
        "proc": procstat.available(),
        "workloads": [],
        "skipped": [],
    }
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticker.run)
        bench = _Bench(connect, config, ticker)
        try:
            async with bench.stack:
                started = trio.current_time()
                main = await bench.main_peer()
                report["startup_s"] = round(trio.current_time() - started, 3)
                info = main.initialize_result
                report["protocol_version"] = info.get("protocolVersion")
                report["era"] = main.era
                report["server_info"] = info.get("serverInfo")
                report["server_tools"] = bench.tools
                if ready is not None:
                    await ready()
                if config.scenario is not None:
                    await bench.scenario(config.scenario, report)
                elif config.rates:
                    await bench.open_models(report)
                for workload in [] if config.rates or config.scenario else config.workloads:
                    row = await bench.run_one(workload)
                    report["skipped" if "skipped" in row else "workloads"].append(row)
        finally:
            ticker.clear()
            nursery.cancel_scope.cancel()
    return report
