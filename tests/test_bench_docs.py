"""Every mode of ``mcp-actors bench`` has an example in ``--help`` and a section in
benchmarks/README.md, and the shipped scenarios load."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from test_bench_defaults import ROOT

from mcp_actors.bench.scenario import load_scenario

README = (ROOT / "benchmarks" / "README.md").read_text()
MODES = ["--rate", "--find-max", "--scenario", "--processes", "--html", "compare", "--era"]


@pytest.fixture(scope="module")
def examples() -> str:
    result = subprocess.run(
        [sys.executable, "-m", "mcp_actors.cli", "bench", "--help"],
        capture_output=True,
        check=True,
        text=True,
        timeout=60,
    )
    return result.stdout.split("examples", 1)[1]


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_has_an_example_in_the_help_and_the_readme(examples: str, mode: str) -> None:
    assert f" {mode}" in examples
    assert f"mcp-actors bench {mode}" in README or f" {mode} " in README


@pytest.mark.parametrize("name", ["public-benchmark", "mixed"])
def test_the_shipped_scenarios_load(name: str) -> None:
    scenario = load_scenario(ROOT / "benchmarks" / "scenarios" / f"{name}.toml")
    assert scenario.name == name and scenario.mix


DOCS = (ROOT / "docs" / "bench.md").read_text()
SNIPPETS = re.findall(r"^```python\n(.*?)^```$", DOCS, flags=re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_each_snippet_of_the_bench_page_runs(snippet: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", snippet],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
