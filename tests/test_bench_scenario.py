"""``--scenario FILE``: virtual users from TOML, over stdio and both HTTP front ends.

A weighted mix of a tool, a resource and a prompt (with generated arguments) is
called in its proportions within 2 %; the public benchmark's workload (a session
per iteration: initialize, initialized, one call, DELETE) runs as shipped; a bad
file is refused naming the key.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from test_bench_defaults import ROOT, bench

MIX_SERVER = """
import sys
from mcp_actors import Server, run_stdio

server = Server("mixed")

@server.tool(inline=True)
async def add(a: int, b: int) -> int:
    return a + b

@server.resource("demo://greeting")
async def greeting() -> str:
    return "hello"

@server.prompt()
async def greet(name: str) -> str:
    return f"Hello {name}"

if sys.argv[1:2] == ["--http"]:
    from mcp_actors.server.serve_http import run_http
    run_http(server, host="127.0.0.1", port=int(sys.argv[2]))
else:
    run_stdio(server)
"""

MIX = """
name = "mix"
users = 4
seed = 7
[[mix]]
weight = 5
tool = "add"
arguments = { a = { range = [1, 100] }, b = { csv = "numbers.csv", column = "n" } }
[[mix]]
weight = 3
resource = "demo://greeting"
[[mix]]
weight = 2
prompt = "greet"
arguments = { name = { choice = ["Ada", "Grace"] } }
"""


@pytest.fixture
def mix_files(tmp_path: Path) -> tuple[Path, Path]:
    server, scenario = tmp_path / "mix_server.py", tmp_path / "mix.toml"
    server.write_text(MIX_SERVER)
    scenario.write_text(MIX)
    (tmp_path / "numbers.csv").write_text("n\n1\n2\n3\n")
    return server, scenario


@asynccontextmanager
async def http_target(script: Path, front_end: str) -> AsyncIterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await trio.lowlevel.open_process(
        [sys.executable, str(script), "--http", str(port)],
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
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        with trio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


@asynccontextmanager
async def target(kind: str, script: Path) -> AsyncIterator[str]:
    if kind == "stdio":
        yield f"stdio:{sys.executable} {script}"
    else:
        async with http_target(script, kind) as url:
            yield url


@pytest.mark.parametrize("kind", ["stdio", "lean", "hypercorn"])
async def test_a_weighted_mix_is_called_in_its_proportions(
    kind: str, mix_files: tuple[Path, Path]
) -> None:
    server, scenario = mix_files
    async with target(kind, server) as where:
        code, report, stderr = await bench(
            where, "--scenario", str(scenario), "-d", "120", "--max-calls", "2000"
        )
    assert code == 0, stderr
    assert report["scenario"] == "mix"
    rows = {row["workload"]: row for row in report["workloads"]}
    assert rows["iterations"]["calls"] == 2000
    shares = {"tool:add": 0.5, "resource:demo://greeting": 0.3, "prompt:greet": 0.2}
    for name, share in shares.items():
        assert rows[name]["errors"] == 0, rows[name]
        assert abs(rows[name]["calls"] / 2000 - share) <= 0.02, rows[name]


@pytest.mark.parametrize("front_end", ["lean", "hypercorn"])
@pytest.mark.parametrize("model", ["closed", "open"])
async def test_the_public_benchmark_scenario_runs_as_shipped(front_end: str, model: str) -> None:
    scenario = ROOT / "benchmarks" / "scenarios" / "public-benchmark.toml"
    # closed: its 50 users for 60 calls; open: 50 sessions a second for a second
    limit = ["--max-calls", "60"] if model == "closed" else ["--rate", "50", "-d", "1"]
    suffix = "" if model == "closed" else " @50/s"
    async with http_target(ROOT / "benchmarks" / "servers" / "ours.py", front_end) as url:
        code, report, stderr = await bench(url, "--scenario", str(scenario), *limit)
    assert code == 0, stderr
    assert report["protocol_version"] == "2025-11-25"  # the scenario's era: legacy
    rows = {row["workload"]: row for row in report["workloads"]}
    expected = 60 if model == "closed" else 50
    for name in ("tool:add", "iterations"):
        assert (rows[name + suffix]["calls"], rows[name + suffix]["errors"]) == (expected, 0)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[[mix]]\ntool = 'add'\nweight = -1", "mix[0].weight: must be a number >= 0"),
        ("[[mix]]\ntool = 'add'\nresource = 'x'", "mix[0]: names exactly one of tool"),
        ("users = 2\n", "mix: give at least one [[mix]] entry"),
        ("sessions = 'x'\n[[mix]]\ntool = 'a'", "top level: unknown keys ['sessions']"),
        ("[[mix]]\ntool = 'a'\narguments = { a = { range = [3, 1] } }", "range must be"),
        ("[[mix]]\ntool = 'a'\narguments = { a = { csv = 'no.csv', column = 'n' } }", "no.csv"),
    ],
)
async def test_a_bad_scenario_is_refused_naming_the_key(
    tmp_path: Path, text: str, problem: str
) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(text)
    code, _, stderr = await bench("stdio:true", "--scenario", str(scenario))
    assert code == 2
    assert problem in stderr
