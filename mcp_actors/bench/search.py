"""``--find-max``: the highest rate at which the server keeps p99 under a bound.

A rate *passes* when every call of its step succeeded and the step's p99 (from the
intended send times, see :mod:`.openloop`) is at most the bound. The search probes
the last rate given first (it passes: the server does at least that, and the answer
says so), then the first (it fails: no rate given passes), then bisects between the
highest rate known to pass and the lowest known to fail until they are within
``precision`` (2 %) of each other, ``max_probes`` (20) steps at most. Each probe is
one open-model step of ``--duration`` seconds, reported as a row.

Bisection assumes a server that passes below its capacity and fails above it; a
noisy server can make it settle on a rate a second run would not confirm: run that
rate again with ``--rate``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

#: A probe: run one open-model step at a rate, return its row.
Probe = Callable[[float], Awaitable[dict[str, Any]]]


def passes(row: dict[str, Any], bound_ms: float) -> bool:
    """Whether a step kept p99 within ``bound_ms`` without an error."""
    p99 = row.get("p99_ms")
    return not row.get("errors") and "failed" not in row and p99 is not None and p99 <= bound_ms


async def find_max(
    probe: Probe,
    low: float,
    high: float,
    bound_ms: float,
    *,
    precision: float = 0.02,
    max_probes: int = 20,
) -> dict[str, Any]:
    """Search ``[low, high]`` (module docstring): ``max_rate`` (None if even ``low``
    fails), why the search stopped, and every probe's row in order."""
    rows: list[dict[str, Any]] = []

    async def run(rate: float) -> bool:
        row = await probe(rate)
        row["passed"] = passes(row, bound_ms)
        rows.append(row)
        return bool(row["passed"])

    found: dict[str, Any] = {"bound_p99_ms": bound_ms, "probes": rows}
    if await run(high):
        return {**found, "max_rate": high, "stopped": "the last rate given passes"}
    if low >= high or not await run(low):
        return {**found, "max_rate": None, "stopped": "the first rate given fails"}
    while high - low > precision * low and len(rows) < max_probes:
        middle = round((low + high) / 2, 3)
        if await run(middle):
            low = middle
        else:
            high = middle
    stopped = "within precision" if high - low <= precision * low else "probe limit reached"
    return {**found, "max_rate": low, "lowest_failing_rate": high, "stopped": stopped}
