"""``benchmarks/app_instructions.py`` drives the HTTP application it counts: each
workload's calls are answered with a result (no valgrind here: ``--uncounted``).

Never a speed assertion; the counts themselves are in benchmarks/README.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "app_instructions.py"


@pytest.mark.parametrize("workload", ["modern", "stateless", "seq"])
def test_each_workload_is_answered_with_a_result(workload: str) -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--uncounted", "-w", workload, "--calls", "20"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"{workload}: 20 calls answered" in result.stdout
