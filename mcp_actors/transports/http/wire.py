"""The HTTP/1.1 wire format of the lean front end: requests parsed, response heads written.

- **Requests** are parsed by httptools (llhttp, the C parser of uvicorn and Node.js),
  which calls back as it goes (the URL, each header, body bytes, the end of a
  message); :class:`RequestParser` gathers those calls into one :class:`Request` per
  message, queued in arrival order, and bounds a head's size as it grows — and the
  size of a chunked body's trailer fields, counted against the same limit. Input that
  cannot be served (malformed, too large, an upgrade, a transfer coding other than
  ``chunked``) is not raised: it sets the parser's :class:`Refusal`, and the requests
  parsed whole before it are still served.
- **Parsed only when needed.** A parsed request costs several times its wire size in
  Python objects (~1.5 KiB for a 300-byte ``tools/call``), so bytes read ahead of the
  request being answered (pipelined requests) are kept as they came, and parsed a
  slice at a time only once no complete request is waiting: what a connection holds is
  its raw read-ahead (bounded by the caller) plus at most one slice's worth of parsed
  requests.
- **Response heads** are serialization, not parsing: :func:`status_line` and
  :func:`header_lines`, which refuse a header name that is not a token and a value
  holding a control character (they would let the application's input split or forge
  a header).

No I/O here: :mod:`.lean` reads the socket, feeds the parser and writes.
"""

from __future__ import annotations

import re
from collections import deque
from http import HTTPStatus
from typing import Any, Final

import attrs
from httptools.parser.errors import HttpParserError, HttpParserUpgrade
from httptools.parser.parser import HttpRequestParser

#: A header name: an RFC 9110 token.
_TOKEN: Final = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
#: What a header value may not hold: control characters (CR, LF, NUL...) but HTAB.
_CONTROL: Final = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
#: What the request line adds to the URL's length (method, spaces, version, CRLF).
_REQUEST_LINE: Final = len(b"OPTIONS  HTTP/1.1\r\n")
#: Bytes handed to llhttp at a time once a request waits whole (the rest stays raw).
_SLICE: Final = 1024


@attrs.frozen
class Refusal:
    """Why the connection's input cannot be served: the status to answer, and why."""

    status: int
    reason: str


class StopParsing(Exception):
    """Raised from a parser callback to stop llhttp at once (the reason is kept aside)."""


@attrs.define(eq=False)
class Request:
    """One request as the parser reported it: its head, then its body as it arrives."""

    target: bytes = b""
    headers: list[tuple[bytes, bytes]] = attrs.field(factory=list)
    #: The request line and headers seen so far, in bytes (trailer fields too).
    head_size: int = _REQUEST_LINE
    #: Bytes of the head (or trailer section) parsed since its last whole piece (the URL,
    #: a header): a line in progress, held in httptools' buffer.
    partial: int = 0
    method: bytes = b""
    http_version: str = "1.1"
    #: Whether the connection may carry another request after this one.
    keep_alive: bool = False
    expects_continue: bool = False
    head_done: bool = False
    #: Bytes of body still due under the request's Content-Length (None: chunked or none).
    body_due: int | None = None
    #: A chunk header came and no body after it yet: the last chunk's, whose trailer
    #: fields follow (or a chunk's whose data has not arrived).
    trailing: bool = False
    #: Body bytes received and not yet handed to the application.
    body: bytearray = attrs.field(factory=bytearray)
    body_started: bool = False
    #: The whole message has been parsed; ``end``: the bytes parsed before the slice
    #: that ended it (what was received after it is pipelined requests).
    complete: bool = False
    end: int = 0


def _in_head(request: Request) -> bool:
    """Whether ``request`` is in its head or its trailer fields (both count as head)."""
    return not request.complete and (not request.head_done or request.trailing)


@attrs.define(eq=False)
class RequestParser:
    """httptools' callbacks gathered into :class:`Request` objects, queued in order.

    llhttp parses everything it is fed, requests pipelined behind the current one
    included, and calls back as it goes; nothing here raises to the caller of
    :meth:`feed`: input that cannot be served sets :attr:`refusal`, and the requests
    parsed whole before it are still served.
    """

    max_header_size: int
    #: Requests begun and not yet answered, oldest first.
    requests: deque[Request] = attrs.field(init=False, factory=deque)
    refusal: Refusal | None = attrs.field(init=False, default=None)
    #: Bytes received so far (parsed or not).
    fed: int = attrs.field(init=False, default=0)
    #: Bytes handed to llhttp so far.
    parsed: int = attrs.field(init=False, default=0)
    #: llhttp's parser (None once :meth:`close` dropped it).
    _parser: HttpRequestParser | None = attrs.field(init=False)
    _current: Request | None = attrs.field(init=False, default=None)
    #: Bytes received and not parsed yet (they follow a request that waits whole).
    _unparsed: bytearray = attrs.field(init=False, factory=bytearray)

    def __attrs_post_init__(self) -> None:
        self._parser = HttpRequestParser(self)

    def close(self) -> None:
        """The connection is over: drop llhttp's parser and what is queued. The parser
        holds this object for its callbacks, a reference cycle that the serving GC
        policy (:mod:`mcp_actors.runtime.gc_policy`) would leave for its rare full
        collection after every connection; later input is ignored."""
        self._parser = None
        self.requests.clear()
        self._unparsed.clear()
        self._current = None
        if self.refusal is None:
            self.refusal = Refusal(400, "the connection is closed")

    def feed(self, data: bytes | bytearray) -> None:
        """Take ``data`` as received; parse it unless a complete request is waiting
        (then it stays raw until :meth:`answered`)."""
        self.fed += len(data)
        if self.refusal is None:
            self._unparsed += data
            self._parse()

    @property
    def buffered(self) -> int:
        """Bytes held: received and not parsed yet, or parsed into a body not yet taken."""
        return len(self._unparsed) + sum(len(request.body) for request in self.requests)

    def _parse(self) -> None:
        """Hand llhttp what is unparsed, a slice at a time, until a complete request waits."""
        while self._unparsed and self.refusal is None:
            if any(request.complete for request in self.requests):
                return
            current = self._current
            due = current.body_due if current is not None and current.head_done else None
            size = max(_SLICE, due or 0)
            data = bytes(self._unparsed[:size])
            del self._unparsed[:size]
            self._parse_slice(data)
            self.parsed += len(data)
        if self.refusal is not None:
            self._unparsed.clear()

    def _parse_slice(self, data: bytes) -> None:
        """Parse ``data``. A head's size is counted from the callbacks (the URL, each
        header); a slice of a head (or trailer section) in which no piece of it was
        completed counts whole, as :attr:`Request.partial`, so a header that never ends
        cannot grow past the limit (by more than one slice) in httptools' buffer."""
        before = self._current
        counting = before is not None and _in_head(before)
        size_before = before.head_size if before is not None else 0
        parser = self._parser
        if parser is None:
            return
        try:
            parser.feed_data(data)
        except HttpParserUpgrade:
            self._refuse(501, "upgrades are not served here (the hypercorn front end serves them)")
        except HttpParserError as error:
            if self.refusal is None:  # else a callback stopped the parser, and said why
                self._refuse(400, f"malformed request: {error}")
        current = self._current
        if counting and current is before and current is not None and _in_head(current):
            self._count_line_in_progress(current, size_before, len(data))

    def _count_line_in_progress(self, request: Request, size_before: int, fed: int) -> None:
        """A slice of ``fed`` bytes in which no piece of ``request``'s head completed was
        all a line in progress: count it."""
        if request.head_size == size_before:
            request.partial += fed
            self._head_too_large(request)

    @property
    def next_request(self) -> Request | None:
        """The oldest request not yet answered, once its head is complete."""
        if self.requests and self.requests[0].head_done:
            return self.requests[0]
        return None

    @property
    def head_pending(self) -> bool:
        """Whether a request has begun whose head is not complete."""
        return bool(self.requests) and not self.requests[0].head_done

    def answered(self) -> None:
        """The oldest request has been answered: forget it, and parse on."""
        self.requests.popleft()
        self._parse()

    # httptools' callbacks

    def on_message_begin(self) -> None:
        self._current = Request()
        self.requests.append(self._current)

    def on_url(self, url: bytes) -> None:
        request = self._request()
        request.target += url  # the URL may come in pieces, one per read
        request.head_size += len(url)
        request.partial = 0
        if self._head_too_large(request):
            raise StopParsing

    def on_header(self, name: bytes, value: bytes) -> None:
        # Called for every header of every request: what _request() and _head_too_large()
        # do is written out here (two calls fewer per header).
        request = self._current
        assert request is not None, "llhttp calls on_message_begin first"
        request.head_size += len(name) + len(value) + 4
        request.partial = 0
        if not request.head_done:
            # llhttp drops the whitespace before a value, not after it (neither is part of it).
            name, value = name.lower(), value.rstrip(b" \t")
            request.headers.append((name, value))
            if name == b"expect" and value.lower() == b"100-continue":
                request.expects_continue = True
        # else a chunked body's trailer fields: not part of the ASGI request, but counted.
        if request.head_size > self.max_header_size and self._head_too_large(request):
            raise StopParsing

    def on_headers_complete(self) -> None:
        request, parser = self._request(), self._parser
        assert parser is not None, "llhttp calls back only while it parses"
        if parser.should_upgrade():
            return  # feed_data raises HttpParserUpgrade once the head is parsed
        headers = dict(request.headers)
        coding = headers.get(b"transfer-encoding")
        if coding is not None and coding.strip().lower() != b"chunked":
            self._refuse(501, f"unsupported Transfer-Encoding {coding.decode('latin-1')!r}")
            raise StopParsing
        length = headers.get(b"content-length")
        if coding is None and length is not None and length.isdigit():
            request.body_due = int(length)
        request.partial = 0
        request.method = parser.get_method()
        request.http_version = parser.get_http_version()
        # An HTTP/1.0 peer's keep-alive would need a "Connection: keep-alive" answer: not offered.
        request.keep_alive = request.http_version == "1.1" and parser.should_keep_alive()
        request.head_done = True

    def on_body(self, body: bytes) -> None:
        request = self._request()
        request.body += body
        request.body_started = True
        request.trailing = False
        if request.body_due is not None:
            request.body_due -= len(body)

    def on_chunk_header(self) -> None:
        self._request().trailing = True

    def on_message_complete(self) -> None:
        request = self._request()
        request.complete = True
        request.trailing = False
        request.end = self.parsed
        self._current = None

    def _request(self) -> Request:
        assert self._current is not None, "llhttp calls on_message_begin first"
        return self._current

    def _head_too_large(self, request: Request) -> bool:
        """Whether ``request``'s head is past the limit (then the input is refused)."""
        if request.head_size + request.partial <= self.max_header_size:
            return False
        if self.refusal is None:
            self._refuse(431, "request header fields too large")
        return True

    def _refuse(self, status: int, reason: str) -> None:
        """Stop: ``status`` answers the input. The request it cut short is not served,
        unless it is the oldest (perhaps being served: its exchange answers the refusal)."""
        self.refusal = Refusal(status, reason)
        current = self._current
        if current is not None and self.requests and current is not self.requests[0]:
            self.requests.remove(current)


#: The status lines of the statuses with a registered reason phrase.
_STATUS_LINES: Final = {
    status.value: b"HTTP/1.1 %d %s\r\n" % (status.value, status.phrase.encode("ascii"))
    for status in HTTPStatus
}


def status_line(status: int) -> bytes:
    return _STATUS_LINES.get(status) or b"HTTP/1.1 %d \r\n" % status


#: Header lines already checked, by (name, value): an application sends the same few
#: headers on every response. At most :data:`_LINES_KEPT`; then it starts over.
_checked_lines: dict[tuple[bytes, bytes], bytes] = {}
_LINES_KEPT: Final = 512
_FRAMING: Final = (b"content-length", b"transfer-encoding", b"connection")


def header_lines(headers: Any) -> tuple[bytes, dict[bytes, bytes]]:
    """The application's headers as ``name: value`` lines, and the values of the ones
    that say how the body is framed and whether the connection stays open. A name that
    is not a token or a value holding a control character raises :class:`ValueError`:
    it would let the application's input split or forge a header."""
    lines: list[bytes] = []
    framing: dict[bytes, bytes] = {}
    checked = _checked_lines
    for header in headers:
        line = checked.get(header) if type(header) is tuple else None
        if line is None:
            line = _checked_line(*header)
            if len(checked) >= _LINES_KEPT:
                checked.clear()
            checked[header[0], header[1]] = line
        lowered = header[0].lower()
        if lowered in _FRAMING:
            framing[lowered] = header[1].strip().lower()
        lines.append(line)
    return b"".join(lines), framing


def _checked_line(name: Any, value: Any) -> bytes:
    if not isinstance(name, bytes) or not isinstance(value, bytes):
        raise TypeError(f"ASGI header names and values are bytes: {(name, value)!r}")
    if not _TOKEN.fullmatch(name):
        raise ValueError(f"invalid HTTP header name: {name!r}")
    if _CONTROL.search(value):
        raise ValueError(f"invalid HTTP header value for {name!r}: {value!r}")
    return b"%s: %s\r\n" % (name, value)
