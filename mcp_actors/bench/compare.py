"""``mcp-actors bench compare A.json B.json [--html FILE]``: two runs (or targets) side by side.

Each report is the JSON a run printed with ``--json``. The comparison covers the
workloads both have (by name), each figure of A and B and B's change in percent;
``--html`` writes the same as a page with the percentile plots overlaid
(:func:`~.html.compare_page`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .html import changes
from .wire import BenchError

_SHOWN = (("calls/s", "calls_per_s"), ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms"))


def load_report(path: str) -> dict[str, Any]:
    """A ``--json`` report; :class:`BenchError` if the file is not one."""
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BenchError(f"{path}: not a bench report ({error})") from None
    if not isinstance(report, dict) or not isinstance(report.get("workloads"), list):
        raise BenchError(f"{path}: not a bench report (no workloads list)")
    return report


def render_compare(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str]) -> str:
    """The comparison as text: one line per workload both reports have."""
    lines = [f"A = {names[0]}", f"B = {names[1]}", ""]
    found = changes(a, b)
    if not found:
        return "\n".join([*lines, "no workload in common"])
    width = max(len(row["workload"]) for row in found) + 2
    for row in found:
        cells = []
        for header, key in _SHOWN:
            before, after, change = row[key]
            delta = "" if change is None else f" ({change:+.1f} %)"
            cells.append(f"{header} {before} -> {after}{delta}")
        lines.append(f"{row['workload']:<{width}}" + "   ".join(cells))
    return "\n".join(lines)
