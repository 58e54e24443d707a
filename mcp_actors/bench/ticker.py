"""The live one-line progress display of a bench run (on stderr)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from .loops import Tally


class Ticker:
    """The live one-line progress display (stderr): what runs, for how long, how fast."""

    def __init__(self, write: Callable[[str], Any] | None, interval: float = 0.5) -> None:
        self.write = write
        self.interval = interval
        self.label = ""
        self.tally: Tally | None = None
        self.started = 0.0
        self.total = 0.0
        self._last = (0, 0.0)

    def phase(self, label: str, tally: Tally | None = None, total: float = 0.0) -> None:
        self.label, self.tally, self.total = label, tally, total
        self.started = trio.current_time()
        self._last = (0, self.started)

    async def run(self) -> None:
        if self.write is None:
            return
        while True:
            await trio.sleep(self.interval)
            self.show()

    def show(self) -> None:
        """Write the line now (the blocking engine calls this from its loop)."""
        if self.write is None:
            return
        now = trio.current_time()
        done = self.tally.done if self.tally is not None else 0
        last_done, last_time = self._last
        rate = (
            (done - last_done) / (now - last_time) if done >= last_done and now > last_time else 0.0
        )
        self._last = (done, now)
        elapsed = now - self.started
        of = f"/{self.total:.1f}" if self.total else ""
        self.write(
            f"\r\x1b[K  {self.label:<16} {elapsed:5.1f}{of}s {done:>10,} done {rate:>11,.0f}/s"
        )

    def clear(self) -> None:
        if self.write is not None:
            self.write("\r\x1b[K")
