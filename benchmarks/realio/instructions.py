"""Our server's CPU instructions per session of the benchmark's loop, counted by callgrind.

CPU time per session moves with whatever else the machine runs; instruction counts do
not. This starts Redis and the API (:func:`.harness.stack`), our server with one worker
under ``valgrind --tool=callgrind``, warms it with ``--warmup`` sessions of the loop
(one user, no pause), zeroes the counters, runs ``--sessions`` more, dumps the
counters and prints the server's instructions per session (the helpers of
``benchmarks/http_instructions.py`` read them). Read the dump by function with
``callgrind_annotate --inclusive=yes`` (``--keep DIR``).

Run: ``python -m benchmarks.realio.instructions --sessions 400``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from . import harness, processes
from .driver import Driver
from .references import Launch


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="keep the callgrind dumps here")
    options = parser.parse_args(argv)
    # benchmarks/http_instructions.py is a script importing its siblings by name.
    sys.path.insert(0, str(processes.ROOT / "benchmarks"))
    from http_instructions import control, total_instructions

    directory = options.keep or Path(tempfile.mkdtemp(prefix="realio-cg-"))
    directory.mkdir(parents=True, exist_ok=True)
    with harness.stack() as backends:
        harness.seed(backends.redis_url)
        port = processes.free_port()
        plain = processes.ours(port, backends.redis_url, backends.api.url, workers=1)
        valgrind = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={directory}/callgrind.out.%p",
        ]
        launch = Launch([*valgrind, *plain.argv], plain.cwd, plain.env)
        with processes.started(launch, port, start_timeout=300) as server:
            driver = Driver("127.0.0.1", port, vus=1, think=0.0, timeout=120)
            driver.run(warmup=0, sessions=options.warmup)
            control(server.pid, "--zero")
            tally = Driver("127.0.0.1", port, vus=1, think=0.0, timeout=120).run(
                warmup=0, sessions=options.sessions
            )
            control(server.pid, "--dump")
            instructions, dump = total_instructions(directory, server.pid)
    if tally.errors:
        raise SystemExit(f"{tally.errors} errors: {tally.error_samples}")
    print(
        f"{instructions / tally.sessions:,.0f} instructions per session"
        f" ({instructions / tally.http_requests:,.0f} per HTTP request;"
        f" {tally.sessions} sessions; dump {dump})"
    )


if __name__ == "__main__":
    main()
