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


@pytest.mark.parametrize("plain", [False, True], ids=["inline-tool", "plain-tool"])
@pytest.mark.parametrize("workload", ["modern", "stateless", "seq"])
def test_each_workload_is_answered_with_a_result(workload: str, plain: bool) -> None:
    options = ["--plain"] if plain else []
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--uncounted", "-w", workload, "--calls", "20", *options],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"{workload}: 20 calls answered" in result.stdout


LAYERS_SCRIPT = SCRIPT.with_name("app_layers.py")


@pytest.mark.parametrize("plain", [False, True], ids=["inline-tool", "plain-tool"])
def test_the_layers_of_a_call_add_up_to_its_bytecodes(plain: bool) -> None:
    """``app_layers.py`` charges each bytecode of a call to one layer: the layers' figures
    add up to the total, and the layers a 2026-07-28 call crosses all show (the tool's
    own function too, whichever tool is called)."""
    options = ["--plain"] if plain else []
    result = subprocess.run(
        [sys.executable, str(LAYERS_SCRIPT), "-w", "modern", "--calls", "20", *options],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.strip().splitlines()
    assert header.startswith("modern: ") and header.endswith("bytecodes per call (20 calls)")
    total = int(header.split()[1].replace(",", ""))
    per_layer = {row.split()[0]: int(row.split()[1].replace(",", "")) for row in rows}
    assert list(per_layer) == ["http", "session", "protocol", "server", "tool", "trio", "other"]
    assert abs(sum(per_layer.values()) - total) <= len(per_layer)  # each figure rounded
    for layer in ("http", "session", "protocol", "server", "tool"):
        assert per_layer[layer] > 0, layer


def test_attrs_generated_code_is_charged_to_its_class_layer() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from app_layers import layer_of  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(SCRIPT.parent))
    session = "<attrs generated methods mcp_actors.runtime.session.Session>"
    assert layer_of(session) == "session"
    assert layer_of("/x/site-packages/mcp_actors/transports/http/endpoint.py") == "http"
    assert layer_of("/x/mcp_actors/transports/stdio.py") == "other"
    assert layer_of("/x/site-packages/trio/_core/_run.py") == "trio"
    assert layer_of("/repo/benchmarks/servers/ours.py") == "tool"
