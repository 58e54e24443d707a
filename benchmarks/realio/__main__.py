"""``python -m benchmarks.realio COMMAND``: see ``docs/realio-benchmark.md``.

- ``install-references --upstream PATH``: install upstream's two servers from a clone;
- ``record-reference``: record their answers as ``reference.json``;
- ``run``: the side-by-side benchmark (``--sessions``, ``--rounds``, ``--servers``...);
- ``check-driver``: the driver against a fixed-reply server (nginx), its ceiling;
- ``crosscheck``: one server under wrk running the same session loop (an independent generator).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import harness, references
from .fixed_reply import check_driver


def command_line() -> argparse.ArgumentParser:
    """The commands and their options."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.realio", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install-references", help="install upstream's servers")
    install.add_argument("--upstream", type=Path, required=True, help="a clone (or git dir)")
    commands.add_parser("record-reference", help="record the reference answers")
    run = commands.add_parser("run", help="the benchmark")
    run.add_argument("--sessions", type=int, default=100_000, help="measured, per turn")
    run.add_argument("--rounds", type=int, default=3)
    run.add_argument("--warmup", type=float, default=10.0, help="seconds, per turn")
    run.add_argument("--vus", type=int, default=50)
    run.add_argument("--think-ms", type=float, default=50.0, help="pause after each iteration")
    run.add_argument("--servers", default=",".join(harness.SERVERS))
    run.add_argument("--json", type=Path, help="write the medians here")
    cross = commands.add_parser("crosscheck", help="one server: our driver, then wrk")
    cross.add_argument("--server", default="ours", choices=harness.SERVERS)
    cross.add_argument("--sessions", type=int, default=20_000)
    cross.add_argument("--seconds", type=int, default=20, help="wrk's run")
    check = commands.add_parser("check-driver", help="the driver against nginx's fixed reply")
    check.add_argument("--sessions", type=int, default=50_000)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = command_line()
    options = parser.parse_args(argv)
    if options.command == "install-references":
        references.install(options.upstream)
    elif options.command == "record-reference":
        harness.record_reference()
    elif options.command == "crosscheck":
        harness.crosscheck(options.server, harness.Settings(options.sessions), options.seconds)
    elif options.command == "check-driver":
        for think in (0.05, 0.0):
            tally = check_driver(sessions=options.sessions, think=think)
            print(
                f"think {think * 1000:.0f} ms: {tally.requests_per_second:,.0f} req/s,"
                f" {tally.sessions / tally.seconds:,.0f} sessions/s,"
                f" p99 {tally.percentile_ms(0.99):.2f} ms,"
                f" {tally.errors} errors, driver CPU {tally.driver_cpu_seconds / tally.seconds:.0%}"
            )
    elif options.command == "run":
        if options.sessions < 1 or options.rounds < 1 or options.vus < 1 or options.warmup < 0:
            parser.error("--sessions, --rounds and --vus must be >= 1, --warmup >= 0")
        names = tuple(name for name in options.servers.split(",") if name)
        unknown = set(names) - set(harness.SERVERS)
        if unknown:
            parser.error(f"unknown servers: {', '.join(sorted(unknown))}")
        settings = harness.Settings(
            options.sessions, options.rounds, options.warmup, options.vus,
            options.think_ms / 1000, names,
        )  # fmt: skip
        turns = harness.run(settings)
        if options.json is not None:
            harness.save_json(turns, names, options.json)


if __name__ == "__main__":
    main()
