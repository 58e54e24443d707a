"""The cross-check: one server driven by wrk (C, Debian's) running the same loop (``session.lua``).

Our driver (:mod:`.driver`) and wrk are independent implementations of upstream's k6
loop; the same server measured by both should give req/s within a few percent (wrk's
latency figures mix every request of the loop, so only its req/s and errors compare).
``vus`` threads of one connection each, ``seconds`` long, after ``warmup`` seconds
of wrk unmeasured.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Final

SCRIPT: Final = Path(__file__).resolve().parent / "session.lua"


def wrk(port: int, *, seconds: int, vus: int = 50, think_ms: float = 50.0) -> dict[str, Any]:
    """wrk's figures for the loop against ``127.0.0.1:port`` (``req_per_s`` as k6 counts)."""
    command = ["wrk", f"-t{vus}", f"-c{vus}", f"-d{seconds}s", "--timeout", "30s"]
    command += ["-s", str(SCRIPT), f"http://127.0.0.1:{port}/mcp"]
    env = {**os.environ, "THINK_MS": str(think_ms)}
    output = subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout
    line = next(x for x in output.splitlines() if x.startswith("RESULT "))
    result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
    result["req_per_s"] = result["mcp"] / (result["duration_us"] / 1e6)
    return result
