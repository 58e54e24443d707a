"""``--processes N``: N load processes driven by one coordinator, so the bench is not the
bottleneck.

One Python process sends a few ten thousand calls a second at most; a server that
serves more needs more senders. The coordinator starts N copies of the same
``mcp-actors bench`` command as *load processes* (``--worker N``, hidden), each with
``--rate`` divided by N (the closed workloads run whole in each), and:

1. waits until every one has opened its first session and said ``ready`` (its
   stdout's first line; 120 s at most), so start-ups do not count;
2. writes ``go`` to each one's stdin: they start their load together;
3. reads each one's JSON report (16 MiB at most) and merges them row by row: calls
   and errors add up, calls/s is the total over the longest process's time, the
   open model's percentiles come from the processes' HDR histograms merged exactly
   (:class:`~.histogram.Latencies`), the per-second timelines add their calls and
   keep the worst process's p50/p99, and the server's figures are process 0's
   spread over every call.

A stdio target is launched by each load process (N servers); a URL is shared. A
load process that fails ends the run with its message (its stderr is ours).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import trio

from .histogram import Latencies
from .wire import BenchError

#: Seconds every load process has to open its session and say ``ready``.
READY_TIMEOUT = 120.0
#: Bytes of one load process's report read at most.
MAX_REPORT_BYTES = 16 * 1024 * 1024


def worker_argv(argv: Sequence[str]) -> list[str]:
    """The bench's own arguments without those the coordinator keeps to itself."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--processes", "--html") and "=" not in arg:
            skip = True
        elif name not in ("--processes", "--html", "--json", "--quiet"):
            kept.append(arg)
    return kept


class _Load:
    """One load process: its pipes and what it printed."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.output = bytearray()
        self.said_ready = trio.Event()

    async def read(self) -> None:
        assert self.process.stdout is not None
        async for chunk in self.process.stdout:
            self.output += chunk
            if len(self.output) > MAX_REPORT_BYTES:
                raise BenchError(f"a load process wrote more than {MAX_REPORT_BYTES} bytes")
            if not self.said_ready.is_set() and b"\n" in self.output:
                line, _, rest = bytes(self.output).partition(b"\n")
                if line.strip() != b"ready":
                    raise BenchError(f"a load process said {line[:200]!r}, not ready")
                self.output = bytearray(rest)
                self.said_ready.set()

    def report(self) -> dict[str, Any]:
        code = self.process.returncode
        if code not in (0, 1):
            raise BenchError(f"a load process failed (exit status {code}): see its stderr above")
        try:
            report: dict[str, Any] = json.loads(self.output)
        except json.JSONDecodeError as error:
            raise BenchError(f"a load process wrote no report ({error})") from None
        return report


async def run_processes(argv: Sequence[str], count: int) -> dict[str, Any]:
    """Run ``count`` load processes of ``mcp-actors bench ARGV``; the merged report."""
    command = [sys.executable, "-m", "mcp_actors.cli", "bench", *worker_argv(argv)]
    command += ["--worker", str(count), "--json", "--quiet"]
    loads: list[_Load] = []
    try:
        async with trio.open_nursery() as nursery:
            for _ in range(count):
                process = await trio.lowlevel.open_process(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
                )
                loads.append(_Load(process))
                nursery.start_soon(loads[-1].read)
            with trio.move_on_after(READY_TIMEOUT) as waiting:
                for load in loads:
                    await load.said_ready.wait()
            if waiting.cancelled_caught:
                raise BenchError(f"the load processes were not ready within {READY_TIMEOUT:g} s")
            for load in loads:
                assert load.process.stdin is not None
                await load.process.stdin.send_all(b"go\n")
            for load in loads:
                await load.process.wait()
    finally:
        for load in loads:
            if load.process.returncode is None:
                load.process.kill()
    return merge([load.report() for load in loads])


def _merge_timelines(timelines: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    seconds: dict[int, dict[str, Any]] = {}
    for timeline in timelines:
        for row in timeline:
            into = seconds.setdefault(
                row["t"], {"t": row["t"], "calls": 0, "errors": 0, "p50_ms": None, "p99_ms": None}
            )
            into["calls"] += row["calls"]
            into["errors"] += row["errors"]
            for key in ("p50_ms", "p99_ms"):
                if row[key] is not None:
                    into[key] = max(into[key] or 0.0, row[key])
    return [seconds[t] for t in sorted(seconds)]


def _merge_rows(rows: list[dict[str, Any]], processes: int) -> dict[str, Any]:
    first = dict(rows[0])
    calls = sum(row.get("calls") or 0 for row in rows)
    seconds = max(row.get("seconds") or 0.0 for row in rows)
    merged = {
        **first,
        "calls": calls,
        "errors": sum(row.get("errors") or 0 for row in rows),
        "seconds": seconds,
        "calls_per_s": round(calls / seconds, 1) if seconds else None,
        "processes": processes,
    }
    if first.get("server_cpu_us_per_call") is not None and calls:
        merged["server_cpu_us_per_call"] = round(
            first["server_cpu_us_per_call"] * (first.get("calls") or 0) / calls, 1
        )
    if first.get("rate") is not None:
        rate = merged["rate"] = round(sum(row["rate"] for row in rows), 6)
        name = first["workload"].rsplit(" @", 1)[0]  # a scenario's row: NAME @RATE/s
        merged["workload"] = f"rate:{rate:g}" if first["kind"] == "rate" else f"{name} @{rate:g}/s"
    if all(row.get("histogram") for row in rows):
        latencies = Latencies()
        for row in rows:
            latencies.add(Latencies.decode(row["histogram"].encode()))
        merged.update(latencies.fields())
        merged["distribution"] = latencies.distribution()
        del merged["histogram"]
    if any("timeline" in row for row in rows):
        merged["timeline"] = _merge_timelines([row.get("timeline", []) for row in rows])
    return merged


def merge(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The load processes' reports as one (module docstring)."""
    merged = dict(reports[0])
    counts = {len(report["workloads"]) for report in reports}
    if len(counts) != 1:
        raise BenchError("the load processes ran different workloads")
    merged["workloads"] = [
        _merge_rows([report["workloads"][i] for report in reports], len(reports))
        for i in range(counts.pop())
    ]
    merged["processes"] = len(reports)
    return merged
