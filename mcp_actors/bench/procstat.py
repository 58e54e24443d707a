"""What a local server process costs, read from ``/proc``: CPU seconds and resident memory.

A server may be a tree of processes (``npx`` starting ``node``, a shell wrapper,
``uv run``): readings sum the root and its live descendants. CPU is
``utime + stime`` from ``/proc/PID/stat`` (clock ticks, usually 10 ms, so a
phase should run for a second or more to be precise); memory is ``VmRSS`` from
``/proc/PID/status``. Where ``/proc`` is missing every reading is ``None``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import attrs

_PROC = "/proc"
try:
    _TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not Linux
    _TICKS_PER_SECOND = 100


@attrs.frozen
class Usage:
    """One reading of a process tree."""

    cpu_seconds: float
    rss_kb: int
    processes: int


def available() -> bool:
    """Whether this system has a Linux-style ``/proc``."""
    return os.path.exists(os.path.join(_PROC, "self", "stat"))


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as file:
            data = file.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ")".
    return data[data.rfind(b")") + 2 :].decode("ascii", "replace").split()


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds used so far by one process (all its threads)."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_SECOND


def rss_kb(pid: int) -> int | None:
    """Resident set size of one process, in KiB."""
    try:
        with open(f"{_PROC}/{pid}/status", "rb") as file:
            for line in file:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return 0  # a zombie has no VmRSS line


def descendants(root: int) -> list[int]:
    """``root`` and every live process below it."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return [root]
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def usage(roots: Iterable[int]) -> Usage | None:
    """Sum CPU and RSS over the trees of ``roots``; None if no root could be read."""
    cpu, rss, count = 0.0, 0, 0
    for root in roots:
        for pid in descendants(root):
            seconds = cpu_seconds(pid)
            if seconds is None:
                continue
            cpu += seconds
            rss += rss_kb(pid) or 0
            count += 1
    if count == 0:
        return None
    return Usage(cpu, rss, count)
