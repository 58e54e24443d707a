"""Newline-delimited message framing, as the stdio transport specifies it, without I/O.

Bytes go in with :meth:`LineFramer.feed`; complete messages come out of
:meth:`LineFramer.next_message`. A line longer than ``max_message_size`` is not
buffered: its bytes are dropped as they arrive and a single :class:`Oversized`
marker takes its place, so one huge message costs neither memory nor the session.
"""

from __future__ import annotations

from collections import deque
from typing import Final

import attrs

DEFAULT_MAX_MESSAGE_SIZE: Final = 4 * 1024 * 1024


@attrs.frozen(slots=True)
class Oversized:
    """Stands in for a discarded message: how many bytes it had when given up on."""

    size: int
    limit: int


@attrs.define(slots=True)
class LineFramer:
    """Splits a byte stream on ``\\n`` into messages (``\\r\\n`` tolerated, blank lines skipped)."""

    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    _buffer: bytearray = attrs.field(init=False, factory=bytearray)
    _ready: deque[bytes | Oversized] = attrs.field(init=False, factory=deque)
    _discarding: int = attrs.field(init=False, default=0)

    def feed(self, data: bytes | bytearray) -> None:
        """Add bytes received from the peer."""
        start = 0
        if self._discarding:
            newline = data.find(b"\n")
            if newline < 0:
                self._discarding += len(data)
                return
            self._discarding = 0
            start = newline + 1
        buffer = self._buffer
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                break
            if buffer:
                buffer += data[start:newline]
                self._emit(bytes(buffer))
                buffer.clear()
            else:
                self._emit(data[start:newline])
            start = newline + 1
        rest = len(data) - start
        if rest:
            if len(buffer) + rest > self.max_message_size:
                self._discarding = len(buffer) + rest
                buffer.clear()
                self._ready.append(Oversized(self._discarding, self.max_message_size))
            else:
                buffer += data[start:] if start else data

    def _emit(self, line: bytes | bytearray) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_message_size:
            self._ready.append(Oversized(len(line), self.max_message_size))
        elif line and not line.isspace():  # skip blank lines without copying the line
            self._ready.append(line if isinstance(line, bytes) else bytes(line))

    def next_message(self) -> bytes | Oversized | None:
        """The next message, an :class:`Oversized` marker, or None if more bytes are needed."""
        return self._ready.popleft() if self._ready else None

    def has_message(self) -> bool:
        """Whether :meth:`next_message` has something to return now."""
        return bool(self._ready)

    @property
    def pending_bytes(self) -> int:
        """Bytes of an incomplete message held in the buffer."""
        return len(self._buffer)


def frame(payload: bytes) -> bytes:
    """Frame one encoded message for a newline-delimited stream."""
    return payload + b"\n"
