"""Fuzz an MCP server over stdio, Streamable HTTP or WebSocket, and say what broke.

    python benchmarks/fuzz.py --transport all --messages 100000 --seed 1
    python benchmarks/fuzz.py --transport http,ws --messages 20000 --seed 7 --findings out.jsonl

Each transport (``stdio``, ``http`` on the lean front end, ``http-hypercorn``,
``ws``; ``all`` is every one, one after another) gets its own server process
(``mcp-actors run SERVER``, default the ``everything`` plugin;
``servers.sample:server`` and the like resolve from ``tests/``) and
``--messages`` fuzz cases drawn from ``--seed`` (see ``tests/fuzzing/``):
valid-shaped requests and notifications of every client method from the
official schemas of both eras (legacy sessions, and 2026-07-28 requests with
their ``_meta`` and HTTP routing headers, MRTR retries, tasks requests), mutated,
and byte-level abuse. After every ``--ping-every`` cases a ping (modern: a
``server/discover``) must be answered. The table counts cases sent,
replies, and each failure: crashes (the process died), sessions lost (a session
or connection dropped by the server), unanswered pings, schema-invalid replies,
non-JSON-RPC output, Python tracebacks on the wire, HTTP 5xx. Below it, the
culprit categories and a sample of each finding; ``--findings FILE`` writes them
all as JSON lines. Exit status: 0 no failure, 1 failures, 2 the run could not start.

Bounded: ``--messages`` and ``--time-limit`` (seconds per transport) stop it;
everything is on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
from pathlib import Path

import trio

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from fuzzing.cases import WEIGHTS  # noqa: E402
from fuzzing.checks import FAILURES, Report  # noqa: E402
from fuzzing.run import fuzz  # noqa: E402
from fuzzing.targets import TRANSPORTS, make_target  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--transport", default="stdio", help=f"{', '.join(TRANSPORTS)}, a comma list, or all"
    )
    parser.add_argument("--messages", type=int, default=10_000, help="fuzz cases per transport")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--server", default="everything", help="MODULE:ATTR or plugin name")
    parser.add_argument("--ping-every", type=int, default=20, help="cases between pings")
    parser.add_argument("--session-messages", type=int, default=2000, help="cases per session")
    parser.add_argument("--ping-timeout", type=float, default=10.0, help="seconds")
    parser.add_argument("--time-limit", type=float, default=3600.0, help="seconds per transport")
    parser.add_argument("--max-triage", type=int, default=30, help="failing windows replayed")
    parser.add_argument(
        "--oversized-bytes", type=int, default=4 * 1024 * 1024 + 1024, help="oversized case size"
    )
    parser.add_argument(
        "--exclude",
        default="",
        help=f"categories not to send, comma-separated (of: {', '.join(WEIGHTS)})",
    )
    parser.add_argument("--findings", type=Path, default=None, help="write findings (JSON lines)")
    return parser


def table(reports: list[Report]) -> str:
    """The summary: one column per transport."""
    rows: list[tuple[str, list[str]]] = [
        ("messages sent", [f"{r.messages:,}" for r in reports]),
        ("pings answered", [f"{r.pings:,}" for r in reports]),
        ("replies checked", [f"{r.replies:,}" for r in reports]),
        ("sessions", [f"{r.sessions:,}" for r in reports]),
        ("  of them 2026-07-28", [f"{r.modern_sessions:,}" for r in reports]),
        ("server requests answered", [f"{r.server_requests_answered:,}" for r in reports]),
        ("ws closes with a proper code", [f"{r.proper_closes:,}" for r in reports]),
        *(
            (name.replace("_", " "), [f"{getattr(r, name):,}" for r in reports])
            for name in FAILURES
        ),
        ("tracebacks on stderr (not wire)", [f"{r.stderr_tracebacks:,}" for r in reports]),
        ("windows triaged", [f"{r.triaged:,}" for r in reports]),
        ("wall time s", [f"{r.wall:.1f}" for r in reports]),
        ("messages/s", [f"{r.rate:,.0f}" for r in reports]),
        ("FAILURES", [f"{r.failures:,}" for r in reports]),
    ]
    width = max(len(name) for name, _ in rows)
    header = f"{'':<{width}}  " + "  ".join(f"{r.transport:>14}" for r in reports)
    lines = [header, "-" * len(header)]
    lines += [f"{name:<{width}}  " + "  ".join(f"{v:>14}" for v in values) for name, values in rows]
    return "\n".join(lines)


def details(report: Report) -> str:
    lines = [f"\n== {report.transport}: findings by culprit (seed {report.seed})"]
    for (kind, culprit), count in sorted(report.culprits.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {count:>7,}  {kind:<15} {culprit}")
    if report.stderr_exceptions:
        shown = ", ".join(f"{n} x{c}" for n, c in report.stderr_exceptions.most_common(8))
        lines.append(f"  server stderr exceptions: {shown}")
    for crash in report.crash_reports[:3]:
        lines.append("  server process died: " + crash.replace("\n", "\n    "))
    for finding in report.findings[:40]:
        lines.append(f"  - {finding.kind} [{finding.culprit}] {finding.sample}")
        lines.append(f"      {finding.detail[:300]!r}")
    return "\n".join(lines)


def main() -> int:
    options = _parser().parse_args()
    # Terminated like Ctrl-C, so the server processes we started are stopped too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    transports = [t.strip() for t in options.transport.split(",") if t.strip()]
    if transports == ["all"]:
        transports = list(TRANSPORTS)
    if unknown := set(transports) - set(TRANSPORTS):
        print(f"fuzz: unknown transport(s) {sorted(unknown)}", file=sys.stderr)
        return 2
    excluded = {c.strip() for c in options.exclude.split(",") if c.strip()}
    if unknown := excluded - set(WEIGHTS):
        print(f"fuzz: unknown categories {sorted(unknown)}", file=sys.stderr)
        return 2
    weights = {c: w for c, w in WEIGHTS.items() if c not in excluded}
    reports: list[Report] = []
    for transport in transports:
        target = make_target(transport, options.server, cwd=TESTS)
        print(
            f"fuzz: {transport}, {options.messages:,} messages, seed {options.seed}...",
            file=sys.stderr,
        )
        try:
            report = trio.run(
                lambda target=target: fuzz(  # type: ignore[misc]
                    target,
                    messages=options.messages,
                    seed=options.seed,
                    ping_every=options.ping_every,
                    session_messages=options.session_messages,
                    ping_timeout=options.ping_timeout,
                    time_limit=options.time_limit,
                    max_triage=options.max_triage,
                    oversized_bytes=options.oversized_bytes,
                    weights=weights,
                )
            )
        except (RuntimeError, OSError) as error:
            print(f"fuzz: {transport}: could not run: {error}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"fuzz: {transport}: interrupted", file=sys.stderr)
            return 130
        reports.append(report)
        print(details(report))
        print(table([report]), flush=True)  # (each transport's counts as soon as it ends)
    print()
    print(table(reports))
    if options.findings is not None:
        with options.findings.open("w") as out:
            for report in reports:
                for finding in report.findings:
                    record = {"transport": report.transport, "seed": report.seed}
                    out.write(json.dumps({**record, **dataclasses.asdict(finding)}) + "\n")
    return 1 if any(r.failures for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
