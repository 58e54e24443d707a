"""docs/realio-benchmark.md: its Python runs as written, and its commands are the CLI's."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from benchmarks.realio.__main__ import command_line

from conftest import TESTS

ROOT = TESTS.parent
PAGE = (ROOT / "docs" / "realio-benchmark.md").read_text()
PYTHON = re.findall(r"^```python\n(.*?)^```$", PAGE, flags=re.MULTILINE | re.DOTALL)
BASH = re.findall(r"^```bash\n(.*?)^```$", PAGE, flags=re.MULTILINE | re.DOTALL)
PREFIX = "python -m benchmarks.realio "
COMMANDS = [
    line.split("#")[0].strip()
    for block in BASH
    for line in block.splitlines()
    if line.startswith(PREFIX)
]


@pytest.mark.parametrize("snippet", PYTHON)
def test_the_python_runs_as_written(snippet: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", snippet],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "'status': 'confirmed'" in done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_is_one_the_cli_takes(command: str) -> None:
    command_line().parse_args(shlex.split(command.removeprefix(PREFIX)))


def test_the_page_shows_the_commands() -> None:
    assert {command.split()[3] for command in COMMANDS} >= {
        "install-references", "check-driver", "run", "crosscheck",
    }  # fmt: skip
