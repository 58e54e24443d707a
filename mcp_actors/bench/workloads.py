"""What ``mcp-actors bench`` runs: the workloads by name, and the run's settings.

A workload is ``kind[:N]`` (the kinds and what N means: :mod:`.runner`); a list of
them is comma-separated, and a bad one is a :class:`~.wire.BenchError` naming it.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..protocol.versions import SUPPORTED
from .scenario import Scenario
from .wire import ERAS, BenchError

DEFAULTS: dict[str, int] = {
    "sequential": 1,
    "pipelined": 100,
    "concurrent": 8,
    "ping": 1,
    "large": 1,
    "churn": 20,
    "idle": 10,
    "cancel": 20,
}
DEFAULT_WORKLOADS = "sequential,pipelined:100,concurrent:8,ping,large,churn,idle,cancel"


@attrs.frozen
class Workload:
    """One workload: its kind and its N (see :mod:`.runner`)."""

    kind: str
    n: int

    @property
    def name(self) -> str:
        return self.kind if self.kind == "sequential" else f"{self.kind}:{self.n}"


def parse_workloads(spec: str) -> list[Workload]:
    """``"sequential,pipelined:100,idle:5"`` -> workloads (raises BenchError if unknown)."""
    workloads = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        kind, _, count = item.partition(":")
        if kind not in DEFAULTS:
            raise BenchError(f"unknown workload {kind!r}; known: {', '.join(DEFAULTS)}")
        try:
            n = int(count) if count else DEFAULTS[kind]
        except ValueError:
            raise BenchError(f"{item!r}: the count after ':' must be an integer") from None
        if n < 1 or (kind == "sequential" and n != 1):
            raise BenchError(f"{item!r}: the count must be positive (sequential takes none)")
        workloads.append(Workload(kind, n))
    if not workloads:
        raise BenchError("no workloads given")
    return workloads


def parse_rates(spec: str) -> list[float]:
    """``"500"`` -> [500.0]; ``"100:1000:100"`` (first:last:step) -> 100, 200 ... 1000."""
    try:
        parts = [float(part) for part in spec.split(":")]
    except ValueError:
        raise BenchError(f"--rate {spec!r}: give N or FIRST:LAST:STEP (calls per second)") from None
    if len(parts) not in (1, 3) or any(part <= 0 for part in parts):
        raise BenchError(f"--rate {spec!r}: give N or FIRST:LAST:STEP, all positive")
    if len(parts) == 1:
        return parts
    first, last, step = parts
    if last < first:
        raise BenchError(f"--rate {spec!r}: LAST is below FIRST")
    count = int((last - first) / step + 1e-9) + 1
    if count > MAX_STEPS:
        raise BenchError(f"--rate {spec!r}: {count} steps; {MAX_STEPS} at most")
    return [round(first + i * step, 6) for i in range(count)]


#: Steps of a ``--rate FIRST:LAST:STEP`` run at most.
MAX_STEPS = 1000


def _positive(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not value > 0:
        raise BenchError(f"{attribute.name} must be positive, not {value!r}")


@attrs.define
class BenchConfig:
    """What to run and how long. Every loop stops at ``duration`` or ``max_calls``."""

    workloads: list[Workload] = attrs.field(factory=lambda: parse_workloads(DEFAULT_WORKLOADS))
    duration: float = 2.0
    max_calls: int = 1_000_000
    warmup: float = 0.3
    tool: str = "add"
    arguments: dict[str, Any] = attrs.field(factory=lambda: {"a": 1, "b": 2})
    large_tool: str = "echo"
    #: Arguments of the large call; by default ``{large_arg: "x" * large_bytes}``.
    large_arguments: dict[str, Any] | None = None
    large_arg: str = "text"
    large_bytes: int = 100_000
    cancel_tool: str = "cancellation_probe"
    cancel_result_tool: str = "last_cancellation"
    #: ``auto`` (``server/discover`` first, as a real client), ``modern`` or ``legacy``.
    era: str = attrs.field(default="auto", validator=attrs.validators.in_(ERAS))
    #: The version to offer first (its era's newest when it is of the other era).
    protocol_version: str = SUPPORTED[0]
    #: The server process of a URL target, for /proc readings (a stdio server's is known).
    server_pid: int | None = None
    #: ``--scenario``: virtual users (:mod:`.scenario_run`) instead of the workloads.
    scenario: Scenario | None = None
    #: Open-model load (:mod:`.openloop`): calls per second of each step, one step
    #: (``duration`` long) per rate; empty: the closed-loop ``workloads``.
    rates: list[float] = attrs.field(factory=list)
    #: ``--find-max``: the highest rate (between the first and last of ``rates``) at
    #: which p99 stays under this many milliseconds (:mod:`.search`).
    find_max_p99_ms: float | None = attrs.field(default=None, validator=_positive)
    #: Rows of the open model carry their latency histogram, encoded (the load processes
    #: of ``--processes`` send theirs to the coordinator, which merges them).
    histograms: bool = False
    #: Open model: calls unanswered at once at most (the sender waits past it).
    max_in_flight: int = attrs.field(default=10_000, validator=_positive)
    #: Seconds to wait for a phase's last answers after its deadline.
    drain_timeout: float = 30.0
    #: Seconds allowed to open one session (a server process's start-up included).
    open_timeout: float = 60.0
    #: Drive stdio servers with the blocking engine (``loops.run_blocking``): a few µs of
    #: client CPU per round trip instead of tens. False: the trio client, as for URLs.
    blocking: bool = True

    def large_call_arguments(self) -> dict[str, Any]:
        if self.large_arguments is not None:
            return self.large_arguments
        return {self.large_arg: "x" * self.large_bytes}
