"""The benchmark report as a table for people (the JSON form is the report dict itself)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_COLUMNS = (
    # header, key, width, format
    ("workload", "workload", 15, "{}"),
    ("calls", "calls", 9, "{:,}"),
    ("calls/s", "calls_per_s", 10, "{:,.0f}"),
    ("p50 ms", "p50_ms", 9, "ms"),
    ("p99 ms", "p99_ms", 9, "ms"),
    ("srv µs/call", "server_cpu_us_per_call", 12, "{:,.1f}"),
    ("cli µs/call", "client_cpu_us_per_call", 12, "{:,.1f}"),
    ("srv RSS MB", "server_rss_kb", 11, "{:,.1f}"),  # the total: see _rss_notes
    ("errors", "errors", 7, "{}"),
)


def _cell(value: Any, key: str, fmt: str) -> str:
    if value is None:
        return "-"
    if key == "server_rss_kb":
        value = value / 1024
    if key == "calls_per_s" and value < 100:
        return f"{value:.2f}"
    if fmt == "ms":
        return (
            f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.3f}"
        )
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def _idle_notes(row: dict[str, Any]) -> list[str]:
    kb = row.get("rss_per_session_kb")
    if kb is None:
        return []
    what = "per server process" if row.get("per_process") else "per session"
    return [f"{kb / 1024:.1f} MB RSS {what}" if kb >= 1024 else f"{kb:.0f} KB RSS {what}"]


def _cancel_notes(row: dict[str, Any]) -> list[str]:
    notes = [
        f"notification write -> handler saw it; max {row.get('max_ms')} ms;"
        f" start signal {row.get('started_signal')}"
    ]
    if row.get("answered_after_cancel"):
        notes.append(f"{row['answered_after_cancel']} answered after cancellation")
    return notes


def _rss_notes(row: dict[str, Any]) -> list[str]:
    """Say so when the RSS column is a total over several server processes."""
    count, kb = row.get("server_processes") or 0, row.get("server_rss_kb")
    if count < 2 or kb is None or row.get("kind") == "idle":
        return []
    return [f"srv RSS is the total of {count} server processes ({kb / count / 1024:.1f} MB each)"]


def _rate_notes(row: dict[str, Any]) -> list[str]:
    """An open-model step: its intended rate and the tail of its latencies."""
    tail = ", ".join(
        f"{name} {_cell(row.get(key), key, 'ms')}"
        for name, key in (("p90", "p90_ms"), ("p99.9", "p99_9_ms"), ("p99.99", "p99_99_ms"))
    )
    notes = [
        f"open model at {row.get('rate', 0):,g}/s, latency from the intended send times;"
        f" {tail}, max {_cell(row.get('max_ms'), 'max_ms', 'ms')} ms"
    ]
    if row.get("held_back_s"):
        notes.append(f"sender held back {row['held_back_s']} s by --max-in-flight")
    if "passed" in row:
        notes.append("within the bound" if row["passed"] else "over the bound")
    return notes


def _find_max_line(search: dict[str, Any]) -> str:
    rate = search.get("max_rate")
    found = "no rate given" if rate is None else f"{rate:,g} calls/s"
    return (
        f"  find-max: {found} keep p99 <= {search.get('bound_p99_ms')} ms ({search.get('stopped')})"
    )


#: What the report says under a workload of each kind, from its row.
_KIND_NOTES: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "churn": lambda row: ["sessions/s; latency = open+initialize+call+close; srv CPU per session"],
    "idle": _idle_notes,
    "cancel": _cancel_notes,
    "large": lambda row: (
        [f"{row['mb_per_s_each_way']} MB/s each way"] if "mb_per_s_each_way" in row else []
    ),
    "concurrent": lambda row: [f"{row.get('sessions')} sessions"],
    "rate": _rate_notes,
}


def _notes(row: dict[str, Any]) -> str:
    """The note under a workload's line: why it failed or was skipped, else what its
    kind's figures mean, and its first error."""
    if "failed" in row:
        return f"failed: {row['failed']}"
    kind_notes = _KIND_NOTES.get(row.get("kind", ""))
    notes = kind_notes(row) if kind_notes is not None else []
    notes += _rss_notes(row)
    if row.get("first_error"):
        notes.append(f"first error: {row['first_error']}")
    return "; ".join(notes)


def render(report: dict[str, Any]) -> str:
    """The report as a fixed-width table with one line per workload and notes below."""
    info = report.get("server_info") or {}
    lines = [
        f"target:   {report.get('target', '')}",
        f"server:   {info.get('name', '?')} {info.get('version', '')}   protocol"
        f" {report.get('protocol_version', '?')} ({report.get('era', '?')} era)"
        f"   start-up {report.get('startup_s', '?')} s",
        f"tool:     {report.get('tool')} "
        f"{json.dumps(report.get('arguments'), separators=(',', ':'))}"
        f"   {report.get('duration')} s per workload   {report.get('date', '')}",
        "",
        "".join(
            f"{header:<{width}}" if i == 0 else f"{header:>{width}}"
            for i, (header, _, width, _) in enumerate(_COLUMNS)
        ),
    ]
    notes = []
    rows = report.get("workloads", [])
    first = max([_COLUMNS[0][2], *(len(row["workload"]) + 2 for row in rows)])
    lines[-1] = f"{'workload':<{first}}" + lines[-1][_COLUMNS[0][2] :]
    for row in rows:
        cells = []
        for i, (_, key, width, fmt) in enumerate(_COLUMNS):
            width = first if i == 0 else width
            text = _cell(row.get(key), key, fmt)
            cells.append(f"{text:<{width}}" if i == 0 else f"{text:>{width}}")
        lines.append("".join(cells))
        note = _notes(row)
        if note:
            notes.append(f"  {row['workload']}: {note}")
    if notes:
        lines += ["", *notes]
    if report.get("find_max"):
        lines += ["", _find_max_line(report["find_max"])]
    skipped = report.get("skipped") or []
    if skipped:
        reasons = "; ".join(f"{row['workload']} ({row['skipped']})" for row in skipped)
        lines += ["", f"  skipped: {reasons}"]
    if not report.get("proc"):
        lines.append("  (no /proc here: server CPU and memory are not measured)")
    return "\n".join(lines)
