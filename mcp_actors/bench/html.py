"""The bench report as one self-contained HTML page (``--html FILE``), and an A/B page.

Everything is in the file: the styles inline, the plots inline SVG drawn here
(:mod:`.svg`), no script, font, image or link to fetch, so the page opens offline,
attached to an issue or archived with the JSON. A run's page has its summary table,
then for each row that has them (``--rate`` steps, scenarios):

- latency over time: p50 and p99 of each second;
- throughput over time: calls answered each second;
- the latency percentile plot, p0 to p99.99 on the "nines" axis;

and for closed-loop workloads a calls/s chart. :func:`compare_page` puts two
reports side by side: their table with the change in each figure and their
percentile plots overlaid.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .svg import Series, line_chart, nines

_STYLE = (
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "td:first-child,th:first-child{text-align:left}"
    ".better{color:#007a3d}.worse{color:#b00020}"
    "section{margin:2em 0}svg{margin:0.5em 1em 0.5em 0}"
)
#: The table's columns: header, key.
_COLUMNS = (
    ("workload", "workload"),
    ("calls", "calls"),
    ("errors", "errors"),
    ("calls/s", "calls_per_s"),
    ("p50 ms", "p50_ms"),
    ("p99 ms", "p99_ms"),
    ("p99.99 ms", "p99_99_ms"),
    ("srv µs/call", "server_cpu_us_per_call"),
    ("srv RSS KB", "server_rss_kb"),
)
#: Figures where less is better (the others: calls/s, more is better).
_LOWER_IS_BETTER = {"p50_ms", "p99_ms", "p99_99_ms", "server_cpu_us_per_call", "server_rss_kb"}


def _page(title: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>{''.join(body)}</body></html>\n"
    )


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}" if value < 10 else f"{value:,.1f}"
    return escape(f"{value:,}" if isinstance(value, int) else str(value))


def _heading(report: dict[str, Any]) -> str:
    info = report.get("server_info") or {}
    return (
        f"<p>target <code>{escape(str(report.get('target', '')))}</code>; server"
        f" {escape(str(info.get('name', '?')))} {escape(str(info.get('version', '')))};"
        f" protocol {escape(str(report.get('protocol_version', '?')))}"
        f" ({escape(str(report.get('era', '?')))} era); {escape(str(report.get('date', '')))}</p>"
    )


def _table(rows: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{escape(header)}</th>" for header, _ in _COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{_value(row.get(key))}</td>" for _, key in _COLUMNS) + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _over_time(rows: list[dict[str, Any]]) -> list[str]:
    timed = [row for row in rows if row.get("timeline")]
    if not timed:
        return []
    latency: list[Series] = []
    throughput: list[Series] = []
    for row in timed:
        seconds = row["timeline"]
        for key in ("p50_ms", "p99_ms"):
            points = [(s["t"], s[key]) for s in seconds if s[key] is not None]
            latency.append((f"{row['workload']} {key[:3]}", points))
        throughput.append((row["workload"], [(s["t"], s["calls"]) for s in seconds]))
    return [
        line_chart(
            "latency-over-time",
            "Latency over time",
            latency,
            x_label="second",
            y_label="ms",
        ),
        line_chart(
            "throughput-over-time",
            "Throughput over time",
            throughput,
            x_label="second",
            y_label="calls answered per second",
        ),
    ]


def _percentiles(named_rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    series: list[Series] = [
        (name, [(nines(p), ms) for p, ms in row["distribution"]])
        for name, row in named_rows
        if row.get("distribution")
    ]
    if not series:
        return []
    return [
        line_chart(
            "percentiles",
            "Latency by percentile",
            series,
            x_label="percentile",
            y_label="ms",
            percentile_axis=True,
        )
    ]


def _rates(named: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    series: list[Series] = []
    for name, rows in named:
        closed = [row for row in rows if row.get("calls_per_s") and not row.get("timeline")]
        series.append((name, [(i + 1, row["calls_per_s"]) for i, row in enumerate(closed)]))
    if not any(points for _, points in series):
        return []
    return [
        line_chart(
            "calls-per-second",
            "Calls per second by workload (in table order)",
            series,
            x_label="workload",
            y_label="calls/s",
        )
    ]


def report_page(report: dict[str, Any]) -> str:
    """One run's page (module docstring)."""
    rows = report.get("workloads", [])
    title = f"mcp-actors bench: {report.get('scenario') or report.get('target', '')}"
    body = [_heading(report), _table(rows)]
    if report.get("find_max"):
        search = report["find_max"]
        body.append(
            f"<p>find-max: {_value(search.get('max_rate'))} calls/s keep p99 &lt;="
            f" {_value(search.get('bound_p99_ms'))} ms ({escape(str(search.get('stopped')))})</p>"
        )
    body += _over_time(rows)
    body += _percentiles([(row["workload"], row) for row in rows])
    body += _rates([("calls/s", rows)])
    return _page(title, [f"<section>{part}</section>" for part in body])


def changes(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """The workloads both reports have, each figure of A and B and B's change in %."""
    b_rows = {row["workload"]: row for row in b.get("workloads", [])}
    found = []
    for row in a.get("workloads", []):
        other = b_rows.get(row["workload"])
        if other is None:
            continue
        figures: dict[str, Any] = {"workload": row["workload"]}
        for _, key in _COLUMNS[1:]:
            before, after = row.get(key), other.get(key)
            change = None
            if isinstance(before, int | float) and isinstance(after, int | float) and before:
                change = round(100 * (after - before) / before, 1)
            figures[key] = (before, after, change)
        found.append(figures)
    return found


def _change_cell(key: str, figure: tuple[Any, Any, float | None]) -> str:
    before, after, change = figure
    if change is None:
        return f"<td>{_value(before)} → {_value(after)}</td>"
    better = (change < 0) == (key in _LOWER_IS_BETTER) and change != 0
    return (
        f'<td>{_value(before)} → {_value(after)} <span class="{"better" if better else "worse"}">'
        f"({change:+.1f} %)</span></td>"
    )


def compare_page(a: dict[str, Any], b: dict[str, Any], names: tuple[str, str]) -> str:
    """A/B page: both headings, the table of changes, the overlaid plots."""
    head = "".join(f"<th>{escape(header)}</th>" for header, _ in _COLUMNS)
    rows = "".join(
        f"<tr><td>{escape(row['workload'])}</td>"
        + "".join(_change_cell(key, row[key]) for _, key in _COLUMNS[1:])
        + "</tr>"
        for row in changes(a, b)
    )
    named = [(f"{names[0]} {row['workload']}", row) for row in a.get("workloads", [])] + [
        (f"{names[1]} {row['workload']}", row) for row in b.get("workloads", [])
    ]
    body = [
        f"<p>A = <code>{escape(names[0])}</code></p>{_heading(a)}",
        f"<p>B = <code>{escape(names[1])}</code></p>{_heading(b)}",
        f"<table><tr>{head}</tr>{rows}</table>",
        *_percentiles(named),
        *_rates([(names[0], a.get("workloads", [])), (names[1], b.get("workloads", []))]),
    ]
    return _page("mcp-actors bench compare", [f"<section>{part}</section>" for part in body])
