"""The live view of a bench run (on stderr): one line a second of what runs and how.

Each line shows the phase, its time, the calls done, the rate over the last second,
the errors so far, and where the phase knows them: p50/p99 of the last whole second
(open-model steps and scenarios keep a :class:`~.openloop.Timeline`) and the
server's CPU (percent of one core over the last second) and memory, read from
``/proc`` for a local server. On a terminal the line is rewritten in place; else
each is a line of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import trio

from . import procstat
from .loops import Tally

#: A phase's latest per-second figures (a Timeline row), or None yet.
Latest = Callable[[], dict[str, Any] | None]


class Ticker:
    """The live view (module docstring); ``write`` None: silent."""

    def __init__(self, write: Callable[[str], Any] | None, interval: float = 1.0) -> None:
        self.write = write
        self.interval = interval
        self.label = ""
        self.tally: Tally | None = None
        self.started = 0.0
        self.total = 0.0
        self.pids: Sequence[int] = ()
        self.latest: Latest | None = None
        self._last = (0, 0.0)
        self._cpu: float | None = None

    def phase(
        self,
        label: str,
        tally: Tally | None = None,
        total: float = 0.0,
        *,
        pids: Sequence[int] = (),
        latest: Latest | None = None,
    ) -> None:
        self.label, self.tally, self.total = label, tally, total
        self.pids, self.latest = pids, latest
        self.started = trio.current_time()
        self._last = (0, self.started)
        self._cpu = None

    async def run(self) -> None:
        if self.write is None:
            return
        while True:
            await trio.sleep(self.interval)
            self.show()

    def _server(self, now: float, last_time: float) -> str:
        """The server's CPU over the interval and its RSS ("" when not measured)."""
        found = procstat.usage(self.pids) if self.pids else None
        if found is None:
            return ""
        previous, self._cpu = self._cpu, found.cpu_seconds
        cpu = (
            f"{100 * (found.cpu_seconds - previous) / (now - last_time):4.0f}%"
            if previous is not None and now > last_time
            else "    -"
        )
        return f"  srv CPU {cpu} RSS {found.rss_kb / 1024:,.0f} MB"

    def _latency(self) -> str:
        row = self.latest() if self.latest is not None else None
        if not row or row.get("p50_ms") is None:
            return ""
        return f"  p50 {row['p50_ms']:.3f} p99 {row['p99_ms']:.3f} ms"

    def show(self) -> None:
        """Write the line now (the blocking engine calls this from its loop)."""
        if self.write is None:
            return
        now = trio.current_time()
        done = self.tally.done if self.tally is not None else 0
        errors = self.tally.errors if self.tally is not None else 0
        last_done, last_time = self._last
        rate = (
            (done - last_done) / (now - last_time) if done >= last_done and now > last_time else 0.0
        )
        self._last = (done, now)
        elapsed = now - self.started
        of = f"/{self.total:.1f}" if self.total else ""
        self.write(
            f"\r\x1b[K  {self.label:<16} {elapsed:5.1f}{of}s {done:>10,} done {rate:>9,.0f}/s"
            f" {errors:,} errors{self._latency()}{self._server(now, last_time)}"
        )

    def clear(self) -> None:
        if self.write is not None:
            self.write("\r\x1b[K")
