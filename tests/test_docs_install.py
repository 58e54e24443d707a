"""Every code block of ``docs/install.md`` runs as written, in a throw-away home folder.

The ``python`` block (``# hello.py``) is saved as that file; the ``bash`` blocks run in
order in one shell, from that folder, with ``HOME`` set to it (so the real home is never
touched) and this environment's ``mcp-actors`` first on PATH; the ``json`` block is the
shape of what was written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import TESTS

DOC = (TESTS.parent / "docs" / "install.md").read_text()
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_every_block_runs(tmp_path: Path) -> None:
    blocks = BLOCK.findall(DOC)
    assert [language for language, _ in blocks] == ["python", "bash", "json", "bash"]
    (python,), shells = (
        [c for k, c in blocks if k == "python"],
        [c for k, c in blocks if k == "bash"],
    )
    (tmp_path / python.splitlines()[0].removeprefix("# ")).write_text(python)
    env = {key: value for key, value in os.environ.items() if key != "XDG_CONFIG_HOME"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    done = subprocess.run(
        ["bash", "-e", "-c", "\n".join(shells)],
        cwd=str(tmp_path),
        env={**env, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("added 'hello'") == 2 and "nothing changed" in done.stderr
    shape = json.loads(next(c for k, c in blocks if k == "json"))
    for written, key in [(".cursor/mcp.json", "mcpServers"), (".vscode/mcp.json", "servers")]:
        entry = json.loads((tmp_path / written).read_text())[key]["hello"]
        assert Path(entry["command"]).parent == Path(sys.executable).parent  # this Python
        assert entry["args"] == [
            *shape["mcpServers"]["hello"]["args"][:3],
            str(tmp_path / "hello.py"),
        ]
