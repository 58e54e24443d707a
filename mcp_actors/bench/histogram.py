"""Latency percentiles to p99.99 in constant memory: an HDR histogram (``hdrhistogram``).

A sorted list of every latency is exact but grows with the run (a million calls a
second is a million floats a second); an HDR (high dynamic range) histogram counts
values in buckets whose width grows with the value, so that every value from 1 µs
to an hour is kept to 3 significant digits (a relative error of 0.1 % at most) in a
fixed ~200 KiB, and two histograms merge exactly (the load processes of
``--processes`` each send theirs to the coordinator, encoded). :class:`Latencies`
records seconds as whole microseconds (below 1 µs counts as 1 µs).
"""

from __future__ import annotations

from typing import Any, Final

from hdrh.histogram import HdrHistogram

#: Latencies recorded, in microseconds: from 1 µs ...
LOWEST_US: Final = 1
#: ... to an hour (a longer one is recorded as an hour).
HIGHEST_US: Final = 3_600_000_000
#: Significant decimal digits kept of every value.
DIGITS: Final = 3
#: The percentiles a report gives, and their keys.
PERCENTILES: Final = (
    ("p50_ms", 50.0),
    ("p90_ms", 90.0),
    ("p99_ms", 99.0),
    ("p99_9_ms", 99.9),
    ("p99_99_ms", 99.99),
)


class Latencies:
    """An HDR histogram of latencies, in seconds in and milliseconds out."""

    def __init__(self) -> None:
        self._histogram = HdrHistogram(LOWEST_US, HIGHEST_US, DIGITS)

    @property
    def count(self) -> int:
        return int(self._histogram.get_total_count())

    def record(self, seconds: float) -> None:
        micros = min(HIGHEST_US, max(LOWEST_US, round(seconds * 1e6)))
        self._histogram.record_value(micros)

    def add(self, other: Latencies) -> None:
        """Count ``other``'s values here too (exact: the buckets are the same)."""
        self.add_encoded(other.encode())

    def add_encoded(self, data: bytes) -> None:
        """Count the values of a histogram in the form :meth:`encode` gives here too."""
        self._histogram.decode_and_add(data)

    def encode(self) -> bytes:
        """The compressed form (HdrHistogram's own), for another process to :meth:`decode`."""
        return bytes(self._histogram.encode())

    @classmethod
    def decode(cls, data: bytes) -> Latencies:
        latencies = cls()
        latencies.add_encoded(data)
        return latencies

    def percentile_ms(self, percentile: float) -> float | None:
        """The value at ``percentile`` (0-100) in ms; None without values."""
        if not self.count:
            return None
        return float(self._histogram.get_value_at_percentile(percentile)) / 1000

    def fields(self) -> dict[str, Any]:
        """p50 to p99.99 and the maximum, in ms (None without values)."""
        found: dict[str, Any] = {key: self.percentile_ms(p) for key, p in PERCENTILES}
        found["max_ms"] = float(self._histogram.get_max_value()) / 1000 if self.count else None
        return found

    def distribution(self) -> list[tuple[float, float]]:
        """(percentile, ms) points of the whole distribution, for a percentile plot."""
        if not self.count:
            return []
        return [
            (item.percentile_level_iterated_to, item.value_iterated_to / 1000)
            for item in self._histogram.get_percentile_iterator(5)
        ]
