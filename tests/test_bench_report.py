"""The bench report's notes: what each workload kind's figures mean, under its line."""

from __future__ import annotations

from mcp_actors.bench.report import render

ROWS = [
    {"workload": "churn:2", "kind": "churn", "calls": 2},
    {"workload": "idle:2", "kind": "idle", "rss_per_session_kb": 2048, "per_process": True},
    {"workload": "idle:3", "kind": "idle", "rss_per_session_kb": 12.5, "per_process": False},
    {
        "workload": "cancel:3",
        "kind": "cancel",
        "max_ms": 1.5,
        "started_signal": {"progress": 3, "delay": 0},
        "answered_after_cancel": 1,
    },
    {"workload": "large:1", "kind": "large", "mb_per_s_each_way": 9.5},
    {"workload": "concurrent:8", "kind": "concurrent", "sessions": 8, "first_error": "boom"},
    {"workload": "ping", "kind": "ping", "failed": "timed out"},
]


def test_each_kind_gets_its_note() -> None:
    notes = render({"workloads": ROWS, "proc": True}).split("\n\n")[-1].splitlines()
    assert notes == [
        "  churn:2: sessions/s; latency = open+initialize+call+close; srv CPU per session",
        "  idle:2: 2.0 MB RSS per server process",
        "  idle:3: 12 KB RSS per session",
        "  cancel:3: notification write -> handler saw it; max 1.5 ms;"
        " start signal {'progress': 3, 'delay': 0}; 1 answered after cancellation",
        "  large:1: 9.5 MB/s each way",
        "  concurrent:8: 8 sessions; first error: boom",
        "  ping: failed: timed out",
    ]
