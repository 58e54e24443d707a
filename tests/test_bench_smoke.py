"""``mcp-actors bench`` works: a second or so against real stdio servers, JSON out, no errors.

Never a speed assertion: CI machines are shared and slow. The figures themselves
are in benchmarks/README.md.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
DEMO = f"stdio:{sys.executable} -m mcp_actors.cli run mcp_actors.examples.demo:server"
REFERENCE = f"stdio:{sys.executable} {ROOT / 'benchmarks' / 'servers' / 'ours.py'}"
FIELDS = {
    "workload",
    "kind",
    "calls",
    "errors",
    "seconds",
    "calls_per_s",
    "p50_ms",
    "p99_ms",
    "server_cpu_us_per_call",
    "client_cpu_us_per_call",
    "server_rss_kb",
}


async def bench(*args: str) -> tuple[int, dict[str, Any], bytes]:
    with trio.fail_after(120):
        result = await trio.run_process(
            [sys.executable, "-m", "mcp_actors.cli", "bench", *args, "--json", "--quiet"],
            cwd=str(ROOT),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    report = json.loads(result.stdout) if result.stdout else {}
    return result.returncode, report, result.stderr


def rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["workload"]: row for row in report["workloads"]}


async def test_bench_against_the_demo_server_reports_every_field() -> None:
    code, report, stderr = await bench(
        DEMO,
        "-w",
        "sequential,pipelined:10,ping",
        "--duration",
        "0.3",
        "--warmup",
        "0.05",
        "--era",
        "legacy",  # the modern era has no ping
    )
    assert code == 0, stderr
    assert report["server_info"]["name"] == "mcp-actors-demo"
    assert "add" in report["server_tools"]
    found = rows(report)
    assert set(found) == {"sequential", "pipelined:10", "ping:1"}
    for row in found.values():
        assert set(row) >= FIELDS, row
        assert row["calls"] > 0
        assert row["errors"] == 0
        assert row["calls_per_s"] > 0
        assert row["p50_ms"] is not None and row["p99_ms"] >= row["p50_ms"]
        if report["proc"]:
            assert row["server_cpu_us_per_call"] is not None
            assert row["server_rss_kb"] > 0


async def test_bench_every_workload_against_the_reference_server() -> None:
    workloads = "concurrent:2,large:2,churn:2,idle:2,cancel:3"
    # churn's sessions must start within --duration (a hard limit); --max-calls keeps
    # the other workloads short
    code, report, stderr = await bench(
        REFERENCE,
        "-w",
        workloads,
        "--duration",
        "20",
        "--max-calls",
        "300",
        "--warmup",
        "0.05",
        "--large-bytes",
        "4096",
    )
    assert code == 0, stderr
    found = rows(report)
    assert set(found) == {"concurrent:2", "large:2", "churn:2", "idle:2", "cancel:3"}
    for row in found.values():
        assert "failed" not in row and "skipped" not in row, row
        assert row["calls"] > 0 and row["errors"] == 0, row
    assert found["cancel:3"]["p50_ms"] is not None  # the handler saw the cancellation
    assert found["cancel:3"]["answered_after_cancel"] == 0
    assert found["idle:2"]["sessions"] == 2
    if report["proc"]:
        assert found["idle:2"]["rss_per_session_kb"] > 0


async def test_a_missing_tool_is_skipped_and_a_dead_target_fails_clearly() -> None:
    code, report, _ = await bench(DEMO, "-w", "large,cancel", "--duration", "0.2")
    assert code == 0
    assert report["workloads"] == []
    assert [row["workload"] for row in report["skipped"]] == ["large:1", "cancel:20"]
    code, report, stderr = await bench(f"stdio:{sys.executable} -c pass", "-w", "sequential")
    assert code == 2
    assert b"mcp-actors bench:" in stderr


def test_bench_refuses_an_in_process_target() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", "bench", "mcp_actors.examples.demo:server"],
        capture_output=True,
        check=False,
        cwd=str(ROOT),
        timeout=60,
    )
    assert result.returncode == 2
    assert b"needs a server of its own" in result.stderr


async def test_bench_over_streamable_http_with_the_lean_client() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ROOT / "benchmarks" / "servers" / "ours.py"
    process = await trio.lowlevel.open_process(
        [sys.executable, str(server), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(60):
            while True:
                try:
                    await (await trio.open_tcp_stream("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await trio.sleep(0.1)
        code, report, stderr = await bench(
            f"http://127.0.0.1:{port}/mcp",
            "--server-pid",
            str(process.pid),
            "-w",
            "sequential,pipelined:4,idle:3,cancel:2",
            "--duration",
            "0.3",
            "--warmup",
            "0.05",
            "--era",
            "legacy",  # sessions to hold, notifications/cancelled
        )
    finally:
        process.terminate()
        with trio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert code == 0, stderr
    found = rows(report)
    for row in found.values():
        assert "failed" not in row and row["errors"] == 0, row
        assert row["calls"] > 0
    if report["proc"]:
        assert found["sequential"]["server_cpu_us_per_call"] is not None
        assert found["idle:3"]["per_process"] is False
