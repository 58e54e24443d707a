"""``mcp-actors bench`` is right by default, as a new user would run it.

- ``--duration`` is a hard limit, churn included (it used to go on until three
  sessions were done, however slowly the server started);
- a workload the server cannot run is said once, under the table, not as a row;
- the RSS of several server processes is labelled a total;
- the era is negotiated as a real client does: the modern one (2026-07-28) with a
  server that speaks it, over stdio and over both HTTP front ends; the legacy one
  with a server that does not;
- a stdio server that dies at start shows why (its stderr), not only "closed".
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from mcp_actors.bench import BenchConfig, parse_workloads, run_bench
from mcp_actors.bench.report import render
from mcp_actors.bench.wire import Wire

ROOT = Path(__file__).resolve().parent.parent
DEMO = f"stdio:{sys.executable} -m mcp_actors.cli run mcp_actors.examples.demo:server"
REFERENCE = ROOT / "benchmarks" / "servers" / "ours.py"
LEGACY_SERVER = """
from mcp_actors import Server, run_stdio
from mcp_actors.protocol.versions import SUPPORTED

server = Server("legacy-only", supported_versions=SUPPORTED)

@server.tool(inline=True)
async def add(a: int, b: int) -> int:
    return a + b

run_stdio(server)
"""


async def bench(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    """Run the command as a user would: its exit status, JSON report and stderr."""
    with trio.fail_after(120):  # a hang guard
        result = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "bench", *args, "--json", "--quiet"],
            cwd=str(ROOT),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=env,
        )
    report = json.loads(result.stdout) if result.stdout else {}
    return result.returncode, report, result.stderr.decode()


class SlowStartWire(Wire):
    """A server in memory that takes ``start`` seconds (trio's clock) to answer its
    first request, then answers at once: discover, tools/list, tools/call."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.answered = 0
        self._send, self._receive = trio.open_memory_channel[bytes](100)

    async def send(self, data: bytes) -> None:
        for line in data.splitlines():
            message = json.loads(line)
            if "id" not in message:
                continue
            if not self.answered:
                await trio.sleep(self.start)
            self.answered += 1
            result: dict[str, Any] = {"content": []}
            if message["method"] == "server/discover":
                result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
            elif message["method"] == "tools/list":
                result = {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]}
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            self._send.send_nowait(json.dumps(reply).encode())

    async def receive(self) -> list[bytes]:
        return [await self._receive.receive()]


def slow_start_connector(start: float) -> Any:
    @asynccontextmanager
    async def connect() -> AsyncIterator[Wire]:
        yield SlowStartWire(start)

    return connect


@pytest.mark.parametrize(("start", "sessions"), [(0.3, 6), (5.0, 0)])
async def test_churn_stops_at_its_duration_however_slowly_the_server_starts(
    autojump_clock: trio.testing.MockClock, start: float, sessions: int
) -> None:
    config = BenchConfig(workloads=parse_workloads("churn:20"), duration=2.0, warmup=0)
    began = trio.current_time()
    report = await run_bench(slow_start_connector(start), config)
    took = trio.current_time() - began
    # the main session's start-up, then churn for 2 s at most (on the mock clock)
    assert took <= start + 2.0 + 1e-6, report
    (row,) = report["workloads"]
    if sessions:
        assert (row["calls"], row["errors"], row["seconds"]) == (sessions, 0, 2.0)
    else:
        assert "within --duration 2 s" in row["failed"]


async def test_workloads_the_server_cannot_run_are_said_once_not_as_rows() -> None:
    code, report, stderr = await bench(
        DEMO, "-w", "sequential,large,cancel", "-d", "0.2", "--warmup", "0"
    )
    assert code == 0, stderr
    assert [row["workload"] for row in report["workloads"]] == ["sequential"]
    assert [row["workload"] for row in report["skipped"]] == ["large:1", "cancel:20"]
    table = render(report)
    assert table.count("skipped") == 1
    assert "large:1 (the server has no tool echo)" in table


async def test_the_rss_of_several_server_processes_is_labelled_a_total() -> None:
    code, report, stderr = await bench(DEMO, "-w", "concurrent:2", "-d", "0.2", "--warmup", "0")
    assert code == 0, stderr
    (row,) = report["workloads"]
    if report["proc"]:
        assert row["server_processes"] == 2
        assert "srv RSS is the total of 2 server processes" in render(report)


async def test_the_modern_era_is_spoken_to_a_server_that_speaks_it_over_stdio() -> None:
    code, report, stderr = await bench(
        f"stdio:{sys.executable} {REFERENCE}", "-w", "sequential,ping", "-d", "0.2"
    )
    assert code == 0, stderr
    assert (report["protocol_version"], report["era"]) == ("2026-07-28", "modern")
    (row,) = report["workloads"]
    assert row["calls"] > 0 and row["errors"] == 0
    assert report["skipped"] == [{"workload": "ping:1", "skipped": "the modern era has no ping"}]


async def test_the_legacy_era_is_spoken_to_a_server_that_does_not_speak_the_modern_one(
    tmp_path: Path,
) -> None:
    script = tmp_path / "legacy_server.py"
    script.write_text(LEGACY_SERVER)
    code, report, stderr = await bench(f"stdio:{sys.executable} {script}", "-w", "sequential")
    assert code == 0, stderr
    assert (report["protocol_version"], report["era"]) == ("2025-11-25", "legacy")
    assert report["workloads"][0]["errors"] == 0
    code, _, stderr = await bench(f"stdio:{sys.executable} {script}", "--era", "modern")
    assert code == 2
    assert "does not speak the modern era" in stderr


@asynccontextmanager
async def http_server(front_end: str) -> AsyncIterator[tuple[str, int]]:
    """The reference server over Streamable HTTP on ``front_end``: its URL and pid."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await trio.lowlevel.open_process(
        [sys.executable, str(REFERENCE), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MCP_ACTORS_HTTP_FRONT_END": front_end},
    )
    try:
        with trio.fail_after(60):
            while True:
                try:
                    await (await trio.open_tcp_stream("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await trio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        process.terminate()
        with trio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize("front_end", ["lean", "hypercorn"])
async def test_the_modern_era_over_streamable_http(front_end: str) -> None:
    async with http_server(front_end) as (url, _):
        code, report, stderr = await bench(url, "-w", "sequential,pipelined:4,churn:2", "-d", "1")
    assert code == 0, stderr
    assert (report["protocol_version"], report["era"]) == ("2026-07-28", "modern")
    for row in report["workloads"]:
        assert row["calls"] > 0 and row["errors"] == 0, row


async def test_a_stdio_server_that_dies_at_start_shows_its_stderr() -> None:
    code, report, stderr = await bench(
        f"stdio:{sys.executable} -c 'import no_such_module_for_the_bench'", "-w", "sequential"
    )
    assert (code, report) == (2, {})
    assert "the server exited with status 1" in stderr
    assert "ModuleNotFoundError: No module named 'no_such_module_for_the_bench'" in stderr
