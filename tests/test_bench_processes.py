"""``--processes N``: load processes started together, their reports merged exactly.

Against the fixed-reply server (``python -m mcp_actors.bench.fixed_reply``) and our
reference server over Streamable HTTP: the merged row has every process's calls at
the total rate, and percentiles from the merged HDR histograms, which are exactly
those of one histogram holding every latency.
"""

from __future__ import annotations

import sys

import pytest
from test_bench_defaults import REFERENCE, bench
from test_bench_scenario import http_target

from mcp_actors.bench.histogram import Latencies
from mcp_actors.bench.processes import merge, worker_argv

FIXED = f"stdio:{sys.executable} -m mcp_actors.bench.fixed_reply"


async def test_two_load_processes_share_the_rate_and_merge_their_reports() -> None:
    code, report, stderr = await bench(FIXED, "--rate", "400", "-d", "1", "--processes", "2")
    assert code == 0, stderr
    (row,) = report["workloads"]
    assert (row["workload"], row["calls"], row["errors"], row["processes"]) == (
        "rate:400",
        400,
        0,
        2,
    )
    assert row["p99_99_ms"] >= row["p99_ms"] >= row["p50_ms"] > 0
    assert "histogram" not in row
    assert sum(second["calls"] for second in row["timeline"]) == 400


@pytest.mark.parametrize("front_end", ["lean", "hypercorn"])
async def test_load_processes_share_one_http_server(front_end: str) -> None:
    async with http_target(REFERENCE, front_end) as url:
        code, report, stderr = await bench(url, "--rate", "200", "-d", "1", "--processes", "2")
    assert code == 0, stderr
    (row,) = report["workloads"]
    assert (row["calls"], row["errors"], row["processes"]) == (200, 0, 2)


def test_merged_histograms_give_the_percentiles_of_all_the_latencies() -> None:
    parts, whole = [Latencies(), Latencies()], Latencies()
    for i in range(1, 20_001):
        parts[i % 2 if i < 19_000 else 0].record(i / 1e6)
        whole.record(i / 1e6)
    reports = [
        {
            "workloads": [
                {
                    "workload": "rate:50",
                    "kind": "rate",
                    "rate": 50.0,
                    "calls": part.count,
                    "errors": 0,
                    "seconds": 1.0,
                    "histogram": part.encode().decode(),
                }
            ]
        }
        for part in parts
    ]
    (row,) = merge(reports)["workloads"]
    assert row["workload"] == "rate:100" and row["calls"] == 20_000
    assert {key: row[key] for key in whole.fields()} == whole.fields()


def test_the_coordinator_keeps_its_own_options() -> None:
    argv = ["url", "--processes", "4", "--html=x.html", "--rate", "9", "--json", "--quiet"]
    assert worker_argv(argv) == ["url", "--rate", "9"]
