"""``mcp-actors status [REDIS_URL]``: the workers of a deployment sharing state through Redis.

Every worker started with ``--redis-url`` reports itself to Redis each heartbeat
(:mod:`mcp_actors.shared.fleet`); this command reads those reports and prints one
table: each worker (host, pid), whether it is alive (its report refreshed within
three heartbeats), its legacy sessions, parked MRTR continuations, tasks held and
running, open ``subscriptions/listen`` streams, and what its change bus sent,
received, dropped and missed; then the task records by state, and how Redis
answers (round trip, version, memory; a Cluster's state). ``--json`` prints the
same as one JSON object.

The URL is the deployment's Redis (any ``--redis-url`` form: :mod:`.shared.redis_urls`),
by default ``[shared] redis_url`` of ``--config`` or ``MCP_ACTORS_SHARED_REDIS_URL``;
``--prefix`` its key prefix (default ``[shared] key_prefix``). Exit status 0 when
Redis answered (whatever the workers' state), 2 when it did not.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import attrs
import msgspec
import trio

from .cli_errors import EXIT_FAILURE, CliFailure

#: The table's columns: header, and the report field it shows.
COLUMNS = (
    ("sessions", "sessions"),
    ("parked", "continuations_parked"),
    ("tasks", "tasks_live"),
    ("running", "tasks_running"),
    ("listens", "listen_streams"),
    ("bus sent", "bus_sent"),
    ("received", "bus_received"),
    ("dropped", "bus_dropped"),
    ("missed", "bus_missed"),
    ("redis errors", "redis_errors"),
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``status`` sub-command to the CLI's sub-parsers."""
    status: argparse.ArgumentParser = commands.add_parser(
        "status",
        help="show the workers sharing state through Redis: sessions, continuations,"
        " tasks, listen streams, Redis health",
    )
    status.add_argument(
        "url", nargs="?", default=None, metavar="REDIS_URL", help="default: [shared] redis_url"
    )
    status.add_argument("--config", type=Path, default=None, help="TOML file with [shared]")
    status.add_argument("--prefix", default=None, help="key prefix (default: [shared] key_prefix)")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(action=run)
    return status


def run(options: argparse.Namespace) -> int:
    from .shared.settings import load_shared_settings  # imports coredis

    settings = load_shared_settings(options.config)
    url = options.url or settings.redis_url
    if url is None:
        raise CliFailure(
            EXIT_FAILURE, "status needs the deployment's Redis: REDIS_URL or [shared] redis_url"
        )
    if url.startswith(("http://", "https://")):
        raise CliFailure(
            EXIT_FAILURE,
            f"{url} is a server's URL; status reads the deployment's Redis (redis://...)",
        )
    settings = settings.with_redis_url(url)
    prefix = options.prefix or settings.key_prefix
    found = trio.run(_gather, url, prefix)
    print(json.dumps(found, indent=2) if options.json else "\n".join(table(found)))
    return 0


async def _gather(url: str, prefix: str) -> dict[str, Any]:
    from .shared.fleet import read_fleet, redis_health, tasks_by_state
    from .shared.redis_client import RedisError, open_redis
    from .shared.settings import SharedStateUnavailable

    problem: RedisError | None = None
    async with open_redis(url) as redis:
        try:
            health = await redis_health(redis)
            workers = await read_fleet(redis, f"{prefix}:fleet")
            tasks, more = await tasks_by_state(redis, prefix)
        except RedisError as error:
            problem = error
    if problem is not None:  # raised out of coredis's block, plain
        raise SharedStateUnavailable(f"Redis does not answer at {url}: {problem}")
    return {
        "redis": {"url": url, **attrs.asdict(health)},
        "workers": [{"alive": w.alive, **msgspec.to_builtins(w.report)} for w in workers],
        "tasks": {"by_state": tasks, "more": more},
    }


def table(found: dict[str, Any]) -> list[str]:
    """The plain-text report of what :func:`_gather` found."""
    redis = found["redis"]
    mode = redis["mode"]
    if redis["cluster_state"]:
        mode += f", cluster_state {redis['cluster_state']}"
    lines = [
        f"Redis {redis['url']}: answers in {redis['latency_ms']:.1f} ms; version"
        f" {redis['version']} ({mode}); memory {redis['used_memory']}"
        f" (maxmemory {redis['maxmemory']})",
    ]
    workers = found["workers"]
    alive = sum(1 for worker in workers if worker["alive"])
    lines.append(f"workers: {alive} alive, {len(workers) - alive} dead")
    header = ["worker", "host", "pid", "state", *(name for name, _ in COLUMNS)]
    rows = [
        [
            worker["worker"],
            worker["host"],
            str(worker["pid"]),
            "alive" if worker["alive"] else "dead",
            *(str(worker[field]) for _, field in COLUMNS),
        ]
        for worker in workers
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        lines.append("  ".join(cells).rstrip())
    by_state = found["tasks"]["by_state"]
    states = ", ".join(f"{state} {count}" for state, count in by_state.items()) or "none"
    more = " (and more: only 10,000 read)" if found["tasks"]["more"] else ""
    lines.append(f"tasks by state: {states}{more}")
    return lines
