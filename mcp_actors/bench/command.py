"""``mcp-actors bench TARGET``: the command-line face of the benchmark harness."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import attrs
import trio

from ..client.header_options import add_header_options, headers_of
from ..client.headers import HeaderError
from ..protocol.versions import MODERN, SUPPORTED
from .compare import load_report, render_compare
from .html import compare_page, report_page
from .processes import run_processes
from .report import render
from .runner import DEFAULT_WORKLOADS, BenchConfig, parse_workloads, run_bench
from .scenario import load_scenario
from .targets import connector_for
from .wire import ERAS, BenchError
from .workloads import parse_rates

EXAMPLES = """\
examples (benchmarks/README.md has the details):
  closed loops      mcp-actors bench "stdio:python server.py" -w sequential,pipelined:100
  a URL             mcp-actors bench http://127.0.0.1:8765/mcp --server-pid PID
  open model        mcp-actors bench URL --rate 2000 -d 10
  stepped rates     mcp-actors bench URL --rate 500:5000:500 -d 5
  saturation        mcp-actors bench URL --rate 100:20000 --find-max 10
  scenario          mcp-actors bench URL --scenario benchmarks/scenarios/public-benchmark.toml
  scenario at rate  mcp-actors bench URL --scenario mixed.toml --rate 200 -d 30
  load processes    mcp-actors bench "stdio:python -m mcp_actors.bench.fixed_reply" \\
                        --rate 20000 -d 10 --processes 4
  era               mcp-actors bench URL --era legacy   (auto: modern if the server speaks it)
  reports           mcp-actors bench URL --rate 1000 --json --html a.html > a.json
  A/B               mcp-actors bench compare a.json b.json --html ab.html
"""

EXIT_ERRORS = 1
EXIT_FAILURE = 2


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``bench`` sub-command to the CLI's sub-parsers."""
    bench = commands.add_parser(
        "bench",
        help="measure a server: calls/s, latency, server CPU and memory",
        description="Benchmark any MCP server with a lean client. Every workload is bounded"
        " by --duration and --max-calls. Progress goes to stderr, the table (or --json) to"
        " stdout.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument(
        "target",
        metavar="TARGET",
        help="stdio:COMMAND ARGS... or a URL; or the word compare, then two --json reports",
    )
    bench.add_argument("reports", nargs="*", metavar="REPORT", help=argparse.SUPPRESS)
    bench.add_argument(
        "-w",
        "--workloads",
        default=DEFAULT_WORKLOADS,
        help="comma-separated kind[:N]: sequential, pipelined:N, concurrent:N, ping[:N],"
        f" large[:N], churn[:N], idle[:N], cancel[:N] (default {DEFAULT_WORKLOADS})",
    )
    bench.add_argument(
        "--rate",
        default=None,
        metavar="N|FIRST:LAST:STEP",
        help="open-model load instead of the workloads: the tool called N times a second"
        " whatever the server does, latency from each call's intended send time, p50 to"
        " p99.99; FIRST:LAST:STEP runs one --duration step per rate",
    )
    bench.add_argument(
        "--find-max",
        type=float,
        default=None,
        metavar="P99_MS",
        help="with --rate FIRST:LAST[:STEP]: bisect for the highest rate whose p99 stays"
        " under P99_MS milliseconds without errors",
    )
    bench.add_argument(
        "--max-in-flight",
        type=int,
        default=10_000,
        help="open model: calls unanswered at once at most (the sender waits past it)",
    )
    bench.add_argument(
        "--scenario",
        default=None,
        metavar="FILE",
        help="virtual users from a TOML scenario (session shape, weighted mix of tools,"
        " resources and prompts, argument generators, think time, era, auth, ramp stages;"
        " see benchmarks/scenarios/) instead of the workloads; with --rate N, N iterations"
        " a second",
    )
    bench.add_argument("-d", "--duration", type=float, default=2.0, help="seconds per workload")
    bench.add_argument("--max-calls", type=int, default=1_000_000, help="cap on calls per workload")
    bench.add_argument("--warmup", type=float, default=0.3, help="unmeasured seconds first")
    bench.add_argument("--tool", default="add", help="tool of the call workloads (default add)")
    bench.add_argument("--args", dest="arguments", default='{"a": 1, "b": 2}', help="its arguments")
    bench.add_argument("--large-tool", default="echo", help="tool of the large workload")
    bench.add_argument(
        "--large-arg", default="text", help="its string argument that carries the payload"
    )
    bench.add_argument("--large-bytes", type=int, default=100_000, help="payload size")
    bench.add_argument(
        "--large-args", default=None, help="explicit JSON arguments for the large tool instead"
    )
    bench.add_argument(
        "--cancel-tool", default="cancellation_probe", help="the probe of the cancel workload"
    )
    bench.add_argument(
        "--era",
        choices=ERAS,
        default="auto",
        help="auto (default): server/discover first and the modern era (2026-07-28) if the"
        " server speaks it, else initialize, as a real client; modern; legacy",
    )
    bench.add_argument(
        "--protocol-version",
        choices=[*MODERN, *SUPPORTED],
        default=None,
        metavar="VERSION",
        help="offer exactly this version (and speak its era)",
    )
    bench.add_argument(
        "--server-pid", type=int, default=None, help="a URL target's server process, for /proc"
    )
    bench.add_argument(
        "--full-client",
        action="store_true",
        help="reach http:// targets with mcp_actors' own client transport instead of the lean"
        " raw HTTP/1.1 one (heavier: it measures that client too)",
    )
    bench.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="N",
        help="N load processes started together, --rate divided among them, their reports"
        " merged (latency histograms exactly): for servers faster than one process can load",
    )
    bench.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    bench.add_argument("--json", action="store_true", help="print the report as JSON")
    bench.add_argument(
        "--html",
        default=None,
        metavar="FILE",
        help="also write the report (or the comparison) as one self-contained HTML page:"
        " latency and throughput over time, percentile plots",
    )
    bench.add_argument("--quiet", action="store_true", help="no live progress on stderr")
    bench.add_argument("--server-stderr", action="store_true", help="show the server's stderr")
    add_header_options(bench)
    bench.set_defaults(action=main)
    parser: argparse.ArgumentParser = bench
    return parser


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise BenchError(f"{option} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise BenchError(f"{option} must be a JSON object")
    return value


def _era(options: argparse.Namespace) -> tuple[str, str]:
    """The era and first version to offer, from ``--era`` and ``--protocol-version``."""
    version = options.protocol_version
    if version is None:
        return options.era, SUPPORTED[0]
    pinned = "modern" if version in MODERN else "legacy"
    if options.era not in ("auto", pinned):
        raise BenchError(f"--protocol-version {version} is of the {pinned} era, not {options.era}")
    return pinned, version


def _rates(options: argparse.Namespace) -> list[float]:
    """The open-model rates of ``--rate`` (``--find-max`` searches between two)."""
    if options.rate is None:
        if options.find_max is not None:
            raise BenchError("--find-max needs --rate FIRST:LAST (the range to search)")
        return []
    if options.find_max is None:
        return parse_rates(options.rate)
    bounds = options.rate.split(":")[:2]  # a step does not matter to a search
    if len(bounds) < 2:
        raise BenchError("--find-max needs --rate FIRST:LAST (the range to search)")
    return [parse_rates(bound)[0] for bound in bounds]


def config_from(options: argparse.Namespace) -> BenchConfig:
    if options.duration <= 0 or options.max_calls < 1:
        raise BenchError("--duration and --max-calls must be positive")
    era, version = _era(options)
    rates = _rates(options)
    if options.processes < 1:
        raise BenchError("--processes must be at least 1")
    if options.processes > 1 and options.find_max is not None:
        raise BenchError("--find-max runs in one process (it probes one rate at a time)")
    if options.worker:  # a load process of --processes: its share of the rate
        rates = [rate / options.worker for rate in rates]
    scenario = load_scenario(options.scenario) if options.scenario else None
    if scenario is not None:
        era = scenario.era if options.era == "auto" and options.protocol_version is None else era
        scenario = attrs.evolve(scenario, era=era)
        if options.find_max is not None:
            raise BenchError("--find-max searches the tool's rate, not a scenario's")
    return BenchConfig(
        scenario=scenario,
        rates=rates,
        find_max_p99_ms=options.find_max,
        max_in_flight=options.max_in_flight,
        histograms=bool(options.worker),
        workloads=parse_workloads(options.workloads),
        duration=options.duration,
        max_calls=options.max_calls,
        warmup=options.warmup,
        tool=options.tool,
        arguments=_json_object(options.arguments, "--args"),
        large_tool=options.large_tool,
        large_arg=options.large_arg,
        large_bytes=options.large_bytes,
        large_arguments=(
            _json_object(options.large_args, "--large-args") if options.large_args else None
        ),
        cancel_tool=options.cancel_tool,
        era=era,
        protocol_version=version,
        server_pid=options.server_pid,
    )


def _compare(options: argparse.Namespace) -> int:
    """``bench compare A.json B.json``: the comparison on stdout (and ``--html``)."""
    if len(options.reports) != 2:
        raise BenchError("compare takes two --json reports: compare A.json B.json")
    names = (options.reports[0], options.reports[1])
    a, b = load_report(names[0]), load_report(names[1])
    print(render_compare(a, b, names))
    if options.html:
        _write(options.html, compare_page(a, b, names))
    return 0


def _write(path: str, page: str) -> None:
    try:
        Path(path).write_text(page)
    except OSError as error:
        raise BenchError(f"cannot write {path}: {error}") from None


def main(options: argparse.Namespace) -> int:
    """Run the benchmark: exit 0 if every call succeeded, 1 if some failed, 2 if it cannot run."""
    try:
        if options.target == "compare":
            return _compare(options)
        if options.reports:
            raise BenchError(f"one TARGET only (extra: {' '.join(options.reports)}); quote it")
        config = config_from(options)
        if options.processes > 1:
            report = trio.run(run_processes, _own_arguments(), options.processes)
        else:
            report = _run(options, config)
    except BaseException as error:
        reason = _reason(error)
        if reason is None:
            raise
        print(f"mcp-actors bench: {reason}", file=sys.stderr)
        return EXIT_FAILURE
    return _output(options, report)


def _headers(options: argparse.Namespace) -> dict[str, str] | None:
    """``--bearer`` and ``--header``, for an ``http://`` target's every request."""
    try:
        return headers_of(options, url=options.target.startswith("http://"))
    except HeaderError as error:
        raise BenchError(str(error)) from None


def _own_arguments() -> list[str]:
    """This command's arguments, after the word ``bench`` (what load processes get)."""
    argv = sys.argv[1:]
    return argv[argv.index("bench") + 1 :] if "bench" in argv else argv


async def _worker_ready() -> None:
    """A load process's start line: say ``ready``, wait for the coordinator's ``go``."""
    print("ready", flush=True)
    stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    async with stdin:
        line = b""
        while b"\n" not in line:
            chunk = await stdin.receive_some(64)
            if not chunk:
                raise BenchError("the coordinator went away before go")
            line += chunk


def _run(options: argparse.Namespace, config: BenchConfig) -> dict[str, Any]:
    """One process's run: the report."""
    connect = connector_for(
        options.target,
        bearer=config.scenario.bearer if config.scenario is not None else None,
        headers=_headers(options),
        server_pid=options.server_pid,
        quiet=not options.server_stderr,
        lean_http=not options.full_client,
        protocol_version=config.protocol_version,
    )
    progress = None if options.quiet else _stderr_writer()
    ready = _worker_ready if options.worker else None
    report: dict[str, Any] = trio.run(
        lambda: run_bench(connect, config, progress=progress, target=options.target, ready=ready)
    )
    return report


def _output(options: argparse.Namespace, report: dict[str, Any]) -> int:
    """Print the report (and write ``--html``); the exit status."""
    if options.json:
        print(json.dumps(report, indent=2))
    else:
        print(render(report))
    if options.html:
        try:
            _write(options.html, report_page(report))
        except BenchError as error:
            print(f"mcp-actors bench: {error}", file=sys.stderr)
            return EXIT_FAILURE
    failed = any(row.get("errors") or "failed" in row for row in report["workloads"])
    return EXIT_ERRORS if failed else 0


def _stderr_writer() -> Any:
    stream = sys.stderr
    interactive = stream.isatty()

    def write(text: str) -> None:
        if interactive:
            stream.write(text)
        elif text.strip("\r\x1b[K"):
            stream.write(text.replace("\r\x1b[K", "") + "\n")
        stream.flush()

    return write


def _reason(error: BaseException) -> str | None:
    """The message of a harness failure (None for a bug), looking inside exception groups."""
    if isinstance(error, BaseExceptionGroup):
        reasons = [_reason(inner) for inner in error.exceptions]
        if any(reason is None for reason in reasons):
            return None
        return reasons[0]
    if isinstance(error, trio.TooSlowError):
        return "timed out waiting for the server"
    if isinstance(error, BenchError | OSError):
        return str(error) or type(error).__name__
    return None
