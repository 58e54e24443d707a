"""The one command: everything started on loopback, every server driven the same way, side by side.

``python -m benchmarks.realio run`` starts a private Redis (Debian's), our product API
(:mod:`.api_service`) and the servers: ``ours`` (2 workers), ``ours-1w`` (1 worker),
``fastmcp`` and ``node`` (upstream's, unchanged: :mod:`.references`). Then, in each of
``--rounds`` rounds, the servers take turns (the order rotates every round); each turn:

1. Redis is emptied and seeded again (upstream reseeds before each server);
2. the server's answers to :data:`.reference.CASES` must equal the reference (a server
   that answers differently is not measured);
3. Redis is seeded again, and :class:`.driver.Driver` runs upstream's k6 loop
   (50 users, ``--warmup`` seconds unmeasured, then ``--sessions`` sessions).

Printed per server (medians over rounds; errors summed): req/s as k6 counts them,
sessions/s, the ``tools/call`` p50/p99, errors, the server's CPU per session (its
whole process tree, from ``/proc``), the API's and Redis's CPU per session (they serve
every server alike: not the bottleneck if small), the driver's own CPU share, the
server's RSS after the turn (all its processes), and upstream's published figures.
The load average is printed before and after: read figures taken on a busy machine
as such.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import attrs
import trio

from mcp_actors.bench import procstat
from mcp_actors.shared.redis_client import open_redis

from . import processes, reference, references
from .driver import Driver, Tally
from .seed import reseed

#: Upstream's published figures (README, mean of 3 runs: req/s, average latency ms).
PUBLISHED: Final = {"fastmcp": (259, 251.62), "node": (423, 123.50), "rust": (4845, 5.09)}
SERVERS: Final = ("ours", "ours-1w", "fastmcp", "node")


@attrs.frozen
class Turn:
    """One server's measured turn."""

    server: str
    tally: Tally
    server_cpu: float
    backend_cpu: float
    rss_kb: int


@attrs.frozen
class Settings:
    sessions: int = 100_000
    rounds: int = 3
    warmup: float = 10.0
    vus: int = 50
    think: float = 0.05
    servers: tuple[str, ...] = SERVERS


def _launch(name: str, port: int, redis_url: str, api_url: str) -> references.Launch:
    if name == "ours":
        return processes.ours(port, redis_url, api_url, workers=2)
    if name == "ours-1w":
        return processes.ours(port, redis_url, api_url, workers=1)
    if name == "fastmcp":
        return references.fastmcp(port, redis_url, api_url)
    if name == "node":
        return references.node(port, redis_url, api_url)
    raise ValueError(f"unknown server {name!r} (known: {', '.join(SERVERS)})")


def seed(redis_url: str) -> None:
    """Empty Redis and seed it (:func:`.seed.reseed`)."""

    async def run() -> None:
        async with open_redis(redis_url) as redis:
            await reseed(redis)

    trio.run(run)


@attrs.frozen
class Stack:
    """Redis and the API, running."""

    redis: processes.Running
    api: processes.Running

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis.port}/0"

    def backend_cpu(self) -> float:
        reading = procstat.usage([self.redis.pid, self.api.pid])
        return reading.cpu_seconds if reading else 0.0


@contextlib.contextmanager
def stack() -> Iterator[Stack]:
    """Redis and the API on free ports, for the duration of the block."""
    redis_port, api_port = processes.free_port(), processes.free_port()
    with (
        processes.started(processes.redis(redis_port), redis_port) as redis,
        processes.started(processes.api_service(api_port), api_port) as api,
    ):
        yield Stack(redis, api)


@contextlib.contextmanager
def servers(names: tuple[str, ...], backends: Stack) -> Iterator[dict[str, processes.Running]]:
    """The named servers on free ports, for the duration of the block."""
    with contextlib.ExitStack() as exits:
        running = {}
        for name in names:
            port = processes.free_port()
            launch = _launch(name, port, backends.redis_url, backends.api.url)
            running[name] = exits.enter_context(processes.started(launch, port))
        yield running


def check_answers(name: str, port: int, redis_url: str) -> None:
    """Raise :class:`.reference.Mismatch` unless the server answers as the reference."""
    seed(redis_url)
    reference.compare(reference.answers(port), reference.recorded(), name)


def measure(name: str, server: processes.Running, backends: Stack, settings: Settings) -> Turn:
    """One turn of ``server`` (see the module docstring)."""
    check_answers(name, server.port, backends.redis_url)
    seed(backends.redis_url)
    driver = Driver("127.0.0.1", server.port, vus=settings.vus, think=settings.think)
    edges: list[tuple[procstat.Usage | None, float]] = []  # the measured window's

    def read_cpu() -> None:
        edges.append((procstat.usage([server.pid]), backends.backend_cpu()))

    tally = driver.run(warmup=settings.warmup, sessions=settings.sessions, at_edge=read_cpu)
    (before, backend_before), (after, backend_after) = edges
    assert before is not None and after is not None, "no /proc: cannot read CPU"
    return Turn(
        name,
        tally,
        after.cpu_seconds - before.cpu_seconds,
        backend_after - backend_before,
        after.rss_kb,
    )


def run(settings: Settings, report: Callable[[str], None] = print) -> list[Turn]:
    """Every round of every server; prints as it goes, then the table."""
    if {"fastmcp", "node"} & set(settings.servers):
        references.check_installed()
    if "fastmcp" in settings.servers:
        references.check_same_interpreter()
    report(f"load average before: {_load()}")
    report(f"interpreter (ours, FastMCP, the driver, the API): {references.interpreter()}")
    turns: list[Turn] = []
    with stack() as backends, servers(settings.servers, backends) as running:
        order = list(settings.servers)
        for number in range(settings.rounds):
            for name in order:
                turn = measure(name, running[name], backends, settings)
                turns.append(turn)
                report(f"round {number + 1} {name}: {_row(turn)}")
            order = order[1:] + order[:1]
    report(f"load average after: {_load()}")
    report(table(turns, settings.servers))
    return turns


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _row(turn: Turn) -> str:
    t = turn.tally
    return (
        f"{t.requests_per_second:,.0f} req/s, p50 {t.percentile_ms(0.5):.2f} ms,"
        f" p99 {t.percentile_ms(0.99):.2f} ms, {t.errors} errors"
        + (f" (first: {t.error_samples[0]})" if t.error_samples else "")
    )


def summary(turns: list[Turn], name: str) -> dict[str, float]:
    """Medians over ``name``'s turns (errors and sessions summed)."""
    mine = [turn for turn in turns if turn.server == name]

    def median(value: Callable[[Turn], float]) -> float:
        return statistics.median(value(turn) for turn in mine)

    return {
        "req_per_s": median(lambda t: t.tally.requests_per_second),
        "sessions_per_s": median(lambda t: t.tally.sessions / t.tally.seconds),
        "p50_ms": median(lambda t: t.tally.percentile_ms(0.5)),
        "p99_ms": median(lambda t: t.tally.percentile_ms(0.99)),
        "errors": sum(turn.tally.errors for turn in mine),
        "sessions": sum(turn.tally.sessions for turn in mine),
        "server_cpu_us_per_session": median(lambda t: t.server_cpu / t.tally.sessions * 1e6),
        "backend_cpu_us_per_session": median(lambda t: t.backend_cpu / t.tally.sessions * 1e6),
        "driver_cpu_share": median(lambda t: t.tally.driver_cpu_seconds / t.tally.seconds),
        "rss_mb": median(lambda t: t.rss_kb / 1024),
    }


def table(turns: list[Turn], names: tuple[str, ...]) -> str:
    """The side-by-side table, ratios of ours to each reference, and the published figures."""
    rows = {name: summary(turns, name) for name in names}
    lines = [
        "| server | req/s | sessions/s | p50 ms | p99 ms | errors/sessions | server CPU µs/session"
        " | API+Redis CPU µs/session | driver CPU | RSS MB | published req/s (avg ms) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        published = PUBLISHED.get(name)
        cited = f"{published[0]:,} ({published[1]})" if published else "-"
        lines.append(
            f"| {name} | {row['req_per_s']:,.0f} | {row['sessions_per_s']:,.0f}"
            f" | {row['p50_ms']:.2f} | {row['p99_ms']:.2f}"
            f" | {row['errors']:.0f}/{row['sessions']:,.0f}"
            f" | {row['server_cpu_us_per_session']:,.0f} | {row['backend_cpu_us_per_session']:,.0f}"
            f" | {row['driver_cpu_share']:.0%} | {row['rss_mb']:.0f} | {cited} |"
        )
    for ours in ("ours", "ours-1w"):
        for other in ("fastmcp", "node"):
            if ours in rows and other in rows:
                mine, theirs = rows[ours], rows[other]
                lines.append(
                    f"{ours} / {other}: {mine['req_per_s'] / theirs['req_per_s']:.1f}x req/s,"
                    f" p99 {mine['p99_ms'] / theirs['p99_ms']:.3f} of theirs"
                )
    return "\n".join(lines)


def save_json(turns: list[Turn], names: tuple[str, ...], path: Path) -> None:
    """The medians, as JSON."""
    path.write_text(json.dumps({name: summary(turns, name) for name in names}, indent=1) + "\n")


def record_reference() -> None:
    """Run upstream's two servers through :data:`.reference.CASES`; they must agree;
    save the FastMCP server's answers as ``reference.json``."""
    references.check_installed()
    with stack() as backends, servers(("fastmcp", "node"), backends) as running:
        got = {}
        for name, server in running.items():
            seed(backends.redis_url)
            got[name] = reference.answers(server.port)
        reference.compare(got["node"], got["fastmcp"], "node (against fastmcp)")
    reference.save(
        got["fastmcp"],
        f"Answers of upstream's FastMCP server ({references.REPOSITORY} at"
        f" {references.COMMIT[:12]}), which its Node server matched; recorded by"
        " python -m benchmarks.realio record-reference.",
    )


def crosscheck(
    name: str, settings: Settings, seconds: int, report: Callable[[str], None] = print
) -> None:
    """``name`` measured by our driver, then by wrk running the same loop (:mod:`.crosscheck`)."""
    from .crosscheck import wrk

    with stack() as backends, servers((name,), backends) as running:
        turn = measure(name, running[name], backends, settings)
        report(f"driver: {_row(turn)}")
        seed(backends.redis_url)
        figures = wrk(
            running[name].port, seconds=seconds, vus=settings.vus, think_ms=settings.think * 1000
        )
        report(
            f"wrk:    {figures['req_per_s']:,.0f} req/s, {figures['errors']} errors,"
            f" {figures['socket_errors']} socket errors"
            f" ({figures['sessions']:,} sessions in {seconds}s)"
        )
