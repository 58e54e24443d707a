"""Every code block of ``docs/opentelemetry.md`` runs as written: the ``pip`` line names
packages this environment has (the test extra installs them), ``traced.py`` runs and its
console spans are what the page says — one trace, a CLIENT span parent of a SERVER span."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from conftest import TESTS

DOC = (TESTS.parent / "docs" / "opentelemetry.md").read_text()
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def spans(output: str) -> list[dict[str, Any]]:
    """The JSON objects the console exporter printed, one after another."""
    decoder, found, position = json.JSONDecoder(), [], 0
    while position < len(output):
        if output[position].isspace():
            position += 1
            continue
        span, position = decoder.raw_decode(output, position)
        found.append(span)
    return found


def test_the_documented_program_prints_one_trace(tmp_path: Path) -> None:
    blocks = BLOCK.findall(DOC)
    assert [language for language, _ in blocks] == ["bash", "python", "bash"]
    install, program, run = (code.strip() for _, code in blocks)
    assert install == "pip install 'mcp-actors[otel]' opentelemetry-sdk"
    assert version("opentelemetry-api") and version("opentelemetry-sdk")  # installed here
    (tmp_path / "traced.py").write_text(program)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-e", "-c", run], cwd=str(tmp_path), env=env, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls = {span["kind"]: span for span in spans(done.stdout) if span["name"] == "tools/call add"}
    client, server = calls["SpanKind.CLIENT"], calls["SpanKind.SERVER"]
    assert client["context"]["trace_id"] == server["context"]["trace_id"]
    assert server["parent_id"] == client["context"]["span_id"]
    assert server["attributes"]["gen_ai.tool.name"] == "add"
    assert {"mcp.method.name", "jsonrpc.request.id", "mcp.protocol.version"} <= set(
        server["attributes"]
    )
    assert server["resource"]["attributes"]["service.name"] == "notes-demo"
