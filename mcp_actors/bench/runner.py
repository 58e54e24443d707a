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

import gc
import statistics
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import attrs
import trio

from ..protocol.jsonrpc import encode_cancellation
from . import procstat
from .loops import Budget, ClosedLoop, Tally, percentile, run_blocking
from .wire import (
    BenchError,
    Connector,
    Peer,
    StdioWire,
    drop_response,
    open_peer,
    open_peers,
    request_template,
    structured,
)

DEFAULTS: dict[str, int] = {
    "sequential": 1,
    "pipelined": 100,
    "concurrent": 8,
    "ping": 1,
    "large": 1,
    "churn": 20,
    "idle": 10,
    "cancel": 20,
}
DEFAULT_WORKLOADS = "sequential,pipelined:100,concurrent:8,ping,large,churn,idle,cancel"


@attrs.frozen
class Workload:
    kind: str
    n: int

    @property
    def name(self) -> str:
        return self.kind if self.kind == "sequential" else f"{self.kind}:{self.n}"


def parse_workloads(spec: str) -> list[Workload]:
    """``"sequential,pipelined:100,idle:5"`` -> workloads (raises BenchError if unknown)."""
    workloads = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        kind, _, count = item.partition(":")
        if kind not in DEFAULTS:
            raise BenchError(f"unknown workload {kind!r}; known: {', '.join(DEFAULTS)}")
        try:
            n = int(count) if count else DEFAULTS[kind]
        except ValueError:
            raise BenchError(f"{item!r}: the count after ':' must be an integer") from None
        if n < 1 or (kind == "sequential" and n != 1):
            raise BenchError(f"{item!r}: the count must be positive (sequential takes none)")
        workloads.append(Workload(kind, n))
    if not workloads:
        raise BenchError("no workloads given")
    return workloads


@attrs.define
class BenchConfig:
    """What to run and how long. Every loop stops at ``duration`` or ``max_calls``."""

    workloads: list[Workload] = attrs.field(factory=lambda: parse_workloads(DEFAULT_WORKLOADS))
    duration: float = 2.0
    max_calls: int = 1_000_000
    warmup: float = 0.3
    tool: str = "add"
    arguments: dict[str, Any] = attrs.field(factory=lambda: {"a": 1, "b": 2})
    large_tool: str = "echo"
    #: Arguments of the large call; by default ``{large_arg: "x" * large_bytes}``.
    large_arguments: dict[str, Any] | None = None
    large_arg: str = "text"
    large_bytes: int = 100_000
    cancel_tool: str = "cancellation_probe"
    cancel_result_tool: str = "last_cancellation"
    protocol_version: str = "2025-11-25"
    #: The server process of a URL target, for /proc readings (a stdio server's is known).
    server_pid: int | None = None
    #: Seconds to wait for a phase's last answers after its deadline.
    drain_timeout: float = 30.0
    #: Seconds allowed to open one session (a server process's start-up included).
    open_timeout: float = 60.0
    #: Drive stdio servers with the blocking engine (``loops.run_blocking``): a few µs of
    #: client CPU per round trip instead of tens. False: the trio client, as for URLs.
    blocking: bool = True

    def large_call_arguments(self) -> dict[str, Any]:
        if self.large_arguments is not None:
            return self.large_arguments
        return {self.large_arg: "x" * self.large_bytes}


class Ticker:
    """The live one-line progress display (stderr): what runs, for how long, how fast."""

    def __init__(self, write: Callable[[str], Any] | None, interval: float = 0.5) -> None:
        self.write = write
        self.interval = interval
        self.label = ""
        self.tally: Tally | None = None
        self.started = 0.0
        self.total = 0.0
        self._last = (0, 0.0)

    def phase(self, label: str, tally: Tally | None = None, total: float = 0.0) -> None:
        self.label, self.tally, self.total = label, tally, total
        self.started = time.perf_counter()
        self._last = (0, self.started)

    async def run(self) -> None:
        if self.write is None:
            return
        while True:
            await trio.sleep(self.interval)
            self.show()

    def show(self) -> None:
        """Write the line now (the blocking engine calls this from its loop)."""
        if self.write is None:
            return
        now = time.perf_counter()
        done = self.tally.done if self.tally is not None else 0
        last_done, last_time = self._last
        rate = (
            (done - last_done) / (now - last_time) if done >= last_done and now > last_time else 0.0
        )
        self._last = (done, now)
        elapsed = now - self.started
        of = f"/{self.total:.1f}" if self.total else ""
        self.write(
            f"\r\x1b[K  {self.label:<16} {elapsed:5.1f}{of}s {done:>10,} done {rate:>11,.0f}/s"
        )

    def clear(self) -> None:
        if self.write is not None:
            self.write("\r\x1b[K")


def _server_pids(peers: list[Peer], config: BenchConfig) -> list[int]:
    pids = {peer.wire.pid for peer in peers if peer.wire.pid is not None}
    if not pids and config.server_pid is not None:
        pids = {config.server_pid}
    return sorted(pids)


def _usage(pids: list[int]) -> procstat.Usage | None:
    return procstat.usage(pids) if pids else None


def _latency_fields(latencies: list[float]) -> dict[str, float | None]:
    latencies.sort()
    if not latencies:
        return {"p50_ms": None, "p99_ms": None}
    return {
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
    }


async def _closed_loops(
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
    """Run one closed loop per peer with a shared budget; the measured figures."""
    duration = config.duration if duration is None else duration
    tally = Tally()
    ticker.phase(label, tally, duration)
    pids = _server_pids(peers, config)
    gc.collect()
    before = _usage(pids) if measure else None
    cpu_before = time.process_time()
    start = time.perf_counter()
    budget = Budget(duration, config.max_calls)
    if config.blocking and all(isinstance(peer.wire, StdioWire) for peer in peers):
        await trio.lowlevel.checkpoint()
        run_blocking(
            peers,
            template,
            depth,
            budget,
            tally,
            drain_timeout=config.drain_timeout,
            tick=ticker.show,
        )
        await trio.lowlevel.checkpoint()
        if (closed := next((p for p in peers if p.closed.is_set()), None)) is not None:
            raise BenchError(f"{closed.close_reason or 'the server went away'} mid-run")
    else:
        loops = [ClosedLoop(peer, template, depth, budget, tally) for peer in peers]
        async with trio.open_nursery() as nursery:
            for loop in loops:
                nursery.start_soon(loop.run, config.drain_timeout)
    elapsed = time.perf_counter() - start
    client_cpu = time.process_time() - cpu_before
    after = _usage(pids) if measure else None
    result: dict[str, Any] = {
        "calls": tally.done,
        "errors": tally.errors,
        "seconds": round(elapsed, 3),
        "calls_per_s": round(tally.done / elapsed, 1) if elapsed > 0 else 0.0,
        **_latency_fields(tally.latencies),
        "server_cpu_us_per_call": None,
        "client_cpu_us_per_call": round(1e6 * client_cpu / tally.done, 1) if tally.done else None,
        "server_rss_kb": None,
    }
    if before is not None and after is not None and tally.done:
        result["server_cpu_us_per_call"] = round(
            1e6 * (after.cpu_seconds - before.cpu_seconds) / tally.done, 1
        )
        result["server_cpu_pct"] = round(100 * (after.cpu_seconds - before.cpu_seconds) / elapsed)
        result["server_rss_kb"] = after.rss_kb
    result["client_cpu_pct"] = round(100 * client_cpu / elapsed) if elapsed > 0 else None
    if tally.first_error is not None:
        result["first_error"] = tally.first_error
    return result


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

    async def open(self) -> Peer:
        return await self.stack.enter_async_context(
            open_peer(
                self.connect,
                protocol_version=self.config.protocol_version,
                timeout=self.config.open_timeout,
            )
        )

    async def main_peer(self) -> Peer:
        if self.main is None or self.main.closed.is_set():
            self.ticker.phase("connecting")
            self.main = await self.open()
            self.warmed.clear()
            if self.tools is None:
                capabilities = self.main.initialize_result.get("capabilities", {})
                self.tools = await self.main.list_tools() if "tools" in capabilities else []
        return self.main

    def missing(self, *tools: str) -> str | None:
        absent = [tool for tool in tools if self.tools is not None and tool not in self.tools]
        return f"the server has no tool {', '.join(absent)}" if absent else None

    async def check_call(self, peer: Peer, tool: str, arguments: Any) -> None:
        """One checked call first: a wrong tool or wrong arguments fail loudly, not 1M times."""
        await peer.call_tool(tool, arguments)

    async def warm(self, peer: Peer, template: tuple[bytes, bytes], depth: int) -> None:
        if self.config.warmup > 0 and (template not in self.warmed):
            self.warmed.add(template)
            await _closed_loops(
                [peer],
                template,
                min(depth, 100),
                self.config,
                self.ticker,
                "warm-up",
                measure=False,
                duration=self.config.warmup,
            )

    # -- workloads ------------------------------------------------------------------------

    async def load(self, workload: Workload) -> dict[str, Any]:
        config = self.config
        peer = await self.main_peer()
        if workload.kind == "ping":
            template = request_template("ping")
            await peer.call("ping")
        elif workload.kind == "large":
            if reason := self.missing(config.large_tool):
                return {"skipped": reason}
            arguments = config.large_call_arguments()
            template = request_template(
                "tools/call", {"name": config.large_tool, "arguments": arguments}
            )
            await self.check_call(peer, config.large_tool, arguments)
        else:
            if reason := self.missing(config.tool):
                return {"skipped": reason}
            params = {"name": config.tool, "arguments": config.arguments}
            template = request_template("tools/call", params)
            await self.check_call(peer, config.tool, config.arguments)
        await self.warm(peer, template, workload.n)
        result = await _closed_loops(
            [peer], template, workload.n, config, self.ticker, workload.name
        )
        if workload.kind == "large" and result["seconds"]:
            size = len(template[0]) + len(template[1])
            result["mb_per_s_each_way"] = round(result["calls"] * size / result["seconds"] / 1e6, 1)
        return result

    async def concurrent(self, workload: Workload) -> dict[str, Any]:
        config = self.config
        await self.main_peer()
        if reason := self.missing(config.tool):
            return {"skipped": reason}
        template = request_template(
            "tools/call", {"name": config.tool, "arguments": config.arguments}
        )
        self.ticker.phase(f"opening {workload.n}")
        async with open_peers(
            self.connect,
            workload.n,
            protocol_version=config.protocol_version,
            timeout=config.open_timeout,
        ) as (peers, failures):
            if failures or len(peers) < workload.n:
                raise BenchError(
                    f"opened {len(peers)} of {workload.n} sessions: {failures[:1] or 'timed out'}"
                )
            for peer in peers:
                await peer.call_tool(config.tool, config.arguments)
            if config.warmup > 0:
                await _closed_loops(
                    peers,
                    template,
                    1,
                    config,
                    self.ticker,
                    "warm-up",
                    measure=False,
                    duration=config.warmup,
                )
            result = await _closed_loops(peers, template, 1, config, self.ticker, workload.name)
        result["sessions"] = workload.n
        return result

    async def churn(self, workload: Workload) -> dict[str, Any]:
        config = self.config
        await self.main_peer()
        if reason := self.missing(config.tool):
            return {"skipped": reason}
        tally = Tally()
        self.ticker.phase(workload.name, tally, config.duration)
        stdio_cpu: list[float] = []
        url_pids = [config.server_pid] if config.server_pid is not None else []
        before = _usage(url_pids)
        cpu_before = time.process_time()
        start = time.perf_counter()
        deadline = start + config.duration
        # Bounded by count and time, but a few sessions at least (a slow start-up is the point).
        hard_deadline = start + max(60.0, config.duration)
        while tally.done < workload.n and (
            time.perf_counter() < deadline
            or (tally.done < 3 and time.perf_counter() < hard_deadline)
        ):
            began = time.perf_counter()
            try:
                with trio.fail_after(config.open_timeout + 30):
                    async with open_peer(
                        self.connect,
                        protocol_version=config.protocol_version,
                        timeout=config.open_timeout,
                    ) as peer:
                        await peer.call_tool(config.tool, config.arguments)
                        if isinstance(peer.wire, StdioWire):
                            seconds = procstat.cpu_seconds(peer.wire.pid)
                            if seconds is not None:
                                stdio_cpu.append(seconds)
            except (BenchError, trio.TooSlowError) as error:
                tally.failed(str(error) or type(error).__name__)
                tally.done += 1
                continue
            tally.latencies.append(time.perf_counter() - began)
            tally.done += 1
        elapsed = time.perf_counter() - start
        after = _usage(url_pids)
        sessions = tally.done
        result: dict[str, Any] = {
            "calls": sessions,
            "errors": tally.errors,
            "seconds": round(elapsed, 3),
            "calls_per_s": round(sessions / elapsed, 2) if elapsed else 0.0,
            **_latency_fields(tally.latencies),
            "server_cpu_us_per_call": None,
            "client_cpu_us_per_call": round(1e6 * (time.process_time() - cpu_before) / sessions, 1)
            if sessions
            else None,
            "server_rss_kb": None,
        }
        if stdio_cpu:
            # A stdio session is a process: its CPU from start-up to the close (start-up included).
            result["server_cpu_us_per_call"] = round(1e6 * statistics.fmean(stdio_cpu), 1)
        elif before is not None and after is not None and sessions:
            result["server_cpu_us_per_call"] = round(
                1e6 * (after.cpu_seconds - before.cpu_seconds) / sessions, 1
            )
        if tally.first_error is not None:
            result["first_error"] = tally.first_error
        return result

    async def idle(self, workload: Workload) -> dict[str, Any]:
        config = self.config
        await self.main_peer()
        tally = Tally()
        self.ticker.phase(f"opening {workload.n}", tally)
        url_pids = [config.server_pid] if config.server_pid is not None else []
        before = _usage(url_pids)
        start = time.perf_counter()
        async with open_peers(
            self.connect,
            workload.n,
            protocol_version=config.protocol_version,
            timeout=config.open_timeout,
        ) as (peers, failures):
            tally.done = len(peers)
            opened = time.perf_counter() - start
            self.ticker.phase(f"holding {workload.n}", tally)
            await trio.sleep(min(1.0, config.duration))
            stdio_pids = sorted({p.wire.pid for p in peers if isinstance(p.wire, StdioWire)})
            if stdio_pids:
                per_process = [procstat.usage([pid]) for pid in stdio_pids]
                rss = [u.rss_kb for u in per_process if u is not None]
                after_total = sum(rss)
            else:
                after = _usage(url_pids)
                rss = []
                after_total = after.rss_kb if after is not None else 0
        result: dict[str, Any] = {
            "calls": len(peers),
            "errors": workload.n - len(peers),
            **({"first_error": failures[0]} if failures else {}),
            "seconds": round(opened, 3),
            "calls_per_s": round(len(peers) / opened, 2) if opened else 0.0,
            "p50_ms": None,
            "p99_ms": None,
            "server_cpu_us_per_call": None,
            "client_cpu_us_per_call": None,
            "sessions": len(peers),
        }
        if rss:
            result["per_process"] = True
            result["server_rss_kb"] = after_total
            result["rss_per_session_kb"] = round(statistics.fmean(rss))
        elif before is not None and peers:
            result["per_process"] = False
            result["server_rss_kb"] = after_total
            result["rss_per_session_kb"] = round((after_total - before.rss_kb) / len(peers), 1)
        else:
            result["server_rss_kb"] = None
            result["rss_per_session_kb"] = None
        return result

    async def cancel(self, workload: Workload) -> dict[str, Any]:
        config = self.config
        peer = await self.main_peer()
        if reason := self.missing(config.cancel_tool, config.cancel_result_tool):
            return {"skipped": reason}
        tally = Tally()
        self.ticker.phase(workload.name, tally, config.duration)
        signals = {"progress": 0, "delay": 0}
        answered = 0
        deadline = time.perf_counter() + max(config.duration, 1.0)
        run = f"{time.monotonic_ns():x}"
        while tally.done < workload.n and time.perf_counter() < deadline:
            token = f"bench-{run}-{tally.done}"
            started = trio.Event()
            progress_token = f"probe-{token}"

            def on_progress(
                progress: Any, token: str = progress_token, ev: trio.Event = started
            ) -> None:
                if progress.progress_token == token:
                    ev.set()

            peer.on_progress = on_progress
            got_response: list[Any] = []

            def on_response(message: Any, now: float, box: list[Any] = got_response) -> None:
                box.append(message)

            peer.on_response = on_response
            peer.next_id += 1
            request_id = peer.next_id
            prefix, suffix = request_template(
                "tools/call",
                {
                    "name": config.cancel_tool,
                    "arguments": {"token": token, "seconds": 30},
                    "_meta": {"progressToken": progress_token},
                },
            )
            await peer.send(prefix + str(request_id).encode() + suffix)
            with trio.move_on_after(0.2):
                await started.wait()
            if started.is_set():
                signals["progress"] += 1
            else:
                signals["delay"] += 1  # no progress from the probe: it has had 200 ms to start
            cancelled = encode_cancellation(request_id, "benchmark")
            sent = await peer.send_stamped(cancelled + b"\n")
            observed = None
            with trio.move_on_after(2.0):
                while observed is None:
                    result = await peer.call_tool(config.cancel_result_tool, {"token": token})
                    value = structured(result)
                    if isinstance(value, dict):
                        observed = value.get("observed")
                    if observed is None:
                        await trio.sleep(0.005)
            peer.on_progress = None
            answered += len([m for m in got_response if m.id == request_id])
            tally.done += 1
            if observed is None:
                tally.failed(f"{config.cancel_tool} never saw the cancellation (token {token})")
            else:
                tally.latencies.append(float(observed) - sent)
        result = {
            "calls": tally.done,
            "errors": tally.errors,
            "seconds": None,
            "calls_per_s": None,
            **_latency_fields(tally.latencies),
            "max_ms": round(max(tally.latencies) * 1000, 3) if tally.latencies else None,
            "server_cpu_us_per_call": None,
            "client_cpu_us_per_call": None,
            "server_rss_kb": None,
            "started_signal": signals,
            "answered_after_cancel": answered,
        }
        if tally.first_error is not None:
            result["first_error"] = tally.first_error
        return result

    async def run_one(self, workload: Workload) -> dict[str, Any]:
        runner = {
            "concurrent": self.concurrent,
            "churn": self.churn,
            "idle": self.idle,
            "cancel": self.cancel,
        }.get(workload.kind, self.load)
        try:
            result = await runner(workload)
        except BenchError as error:
            result = {"failed": str(error)}
        except trio.TooSlowError:
            result = {"failed": "timed out"}
        finally:
            if self.main is not None:
                self.main.on_progress = None
                self.main.on_response = drop_response
        return {"workload": workload.name, "kind": workload.kind, "n": workload.n, **result}


async def run_bench(
    connect: Connector,
    config: BenchConfig,
    *,
    progress: Callable[[str], Any] | None = None,
    target: str = "",
) -> dict[str, Any]:
    """Run ``config.workloads`` against the server ``connect`` reaches; the report as a dict.

    ``connect`` is a :data:`~mcp_actors.bench.wire.Connector`: any function opening
    one session's wire (stdio child, URL, or a test's own). ``progress`` receives
    the live ticker's text (e.g. ``sys.stderr.write``).
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
    }
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticker.run)
        bench = _Bench(connect, config, ticker)
        try:
            async with bench.stack:
                started = time.perf_counter()
                main = await bench.main_peer()
                report["startup_s"] = round(time.perf_counter() - started, 3)
                info = main.initialize_result
                report["protocol_version"] = info.get("protocolVersion")
                report["server_info"] = info.get("serverInfo")
                report["server_tools"] = bench.tools
                for workload in config.workloads:
                    report["workloads"].append(await bench.run_one(workload))
        finally:
            ticker.clear()
            nursery.cancel_scope.cancel()
    return report
