"""The ``text/event-stream`` codec (Server-Sent Events), sans-IO: bytes in, events out.

An event stream is lines of ``field: value``; a blank line ends an event::

    id: p1/4
    retry: 500
    data: {"jsonrpc":"2.0","id":1,"result":{}}

    : a comment line (a keep-alive) is ignored

:func:`encode_event` and :func:`encode_comment` write it; :class:`SSEDecoder`
reads it incrementally as the WHATWG HTML spec says ("event stream
interpretation"): lines may end with CRLF, LF or CR (even split across chunks),
``data`` lines of one event are joined with ``\\n``, ``id`` and ``retry`` persist
across events, and an event with no ``data`` line is not dispatched — yet its
``id`` still moves :attr:`SSEDecoder.last_event_id`. (A 2025-11-25 "priming"
event, an id with one empty ``data`` line, is dispatched with empty data, which
MCP readers skip.) One event's size is bounded so a
peer that never sends a blank line cannot grow our memory.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

#: Largest event :class:`SSEDecoder` accepts by default (data plus framing), in bytes.
DEFAULT_MAX_EVENT_SIZE: Final = 4 * 1024 * 1024

_LINE_END: Final = re.compile(rb"\r\n|\r|\n")


@attrs.frozen(slots=True)
class ServerSentEvent:
    """One dispatched event: ``data`` as raw bytes (one JSON-RPC message, for MCP)."""

    data: bytes
    event: str = "message"
    #: The stream's last event id when this event was dispatched ("" if none yet).
    id: str = ""


class EventTooLarge(Exception):
    """An event grew beyond the decoder's limit; the stream cannot be trusted any more."""


def encode_event(
    data: bytes,
    *,
    id: str | None = None,
    event: str | None = None,
    retry: int | None = None,
) -> bytes:
    """One event, ready to write. ``data`` may hold newlines (each line gets a ``data:``)."""
    return b"".join(encode_event_parts(data, id=id, event=event, retry=retry))


def encode_event_parts(
    data: bytes,
    *,
    id: str | None = None,
    event: str | None = None,
    retry: int | None = None,
) -> tuple[bytes, ...]:
    """:func:`encode_event` in parts whose concatenation is the event. Single-line ``data``
    (any compact JSON) is one of the parts as it is: written part by part, a large
    message is not copied."""
    head = b""
    if id is not None:
        head += b"id: " + id.encode() + b"\n"
    if event is not None:
        head += b"event: " + event.encode() + b"\n"
    if retry is not None:
        head += b"retry: " + str(retry).encode() + b"\n"
    if b"\n" in data or b"\r" in data:
        lines = _LINE_END.split(data)
        return (head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n",)
    return (head + b"data: ", data, b"\n\n")


def encode_comment(text: str = "") -> bytes:
    """A comment line plus blank line: ignored by readers, keeps idle connections alive."""
    return b": " + text.encode() + b"\n\n"


class SSEDecoder:
    """Incremental event-stream parser. Feed it chunks; it returns complete events.

    >>> decoder = SSEDecoder()
    >>> decoder.feed(b"id: 7\\ndata: {}\\n\\ndata: [1")
    [ServerSentEvent(data=b'{}', event='message', id='7')]
    >>> decoder.feed(b"]\\n\\n")
    [ServerSentEvent(data=b'[1]', event='message', id='7')]

    To resume after a broken connection, start a new decoder with the old one's
    ``last_event_id`` and ``retry`` (a partial event must not carry over).
    """

    def __init__(
        self,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        *,
        last_event_id: str = "",
        retry: int | None = None,
    ) -> None:
        self.max_event_size = max_event_size
        #: The id of the last *complete* event (dispatched or not): what ``Last-Event-ID``
        #: resumes from. An ``id`` line takes effect only at the blank line ending its event,
        #: so a connection cut in the middle of an event resumes before it.
        self.last_event_id = last_event_id
        self._id_buffer = last_event_id
        #: The server's reconnection delay, in milliseconds, once it sent a ``retry`` field.
        self.retry = retry
        self._buffer = bytearray()
        self._data: list[bytes] = []
        self._size = 0
        self._event = ""
        self._skip_lf = False

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Parse ``chunk``; returns the events it completed (often none, sometimes many)."""
        buffer = self._buffer
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        scan = len(buffer)  # what is left from earlier chunks holds no line end
        buffer += chunk
        events: list[ServerSentEvent] = []
        start = 0
        search = _LINE_END.search
        while (match := search(buffer, scan)) is not None:
            line = bytes(buffer[start : match.start()])
            start = scan = match.end()
            if match.group() == b"\r" and start == len(buffer):
                self._skip_lf = True  # a CRLF may be split across two chunks
            event = self._line(line)
            if event is not None:
                events.append(event)
        del buffer[:start]
        if len(buffer) + self._size > self.max_event_size:
            raise EventTooLarge(f"an SSE event exceeds the {self.max_event_size}-byte limit")
        return events

    def _line(self, line: bytes) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line[:1] == b":":
            return None
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
            self._size += len(value) + 1
            if self._size > self.max_event_size:
                raise EventTooLarge(f"an SSE event exceeds the {self.max_event_size}-byte limit")
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:
                self._id_buffer = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        self.last_event_id = self._id_buffer
        data, event = self._data, self._event
        self._data, self._size, self._event = [], 0, ""
        if not data:
            return None
        joined = data[0] if len(data) == 1 else b"\n".join(data)
        return ServerSentEvent(joined, event or "message", self.last_event_id)
