"""Just enough ASGI for our HTTP transports: read a request, answer it, stream an event stream.

ASGI hands an application ``(scope, receive, send)``: ``scope`` describes the
request, ``receive()`` yields its body chunks (then ``http.disconnect`` when the
client goes away) and ``send()`` writes the response. These helpers keep the
transports free of dict plumbing; they are not a web framework.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Final, NamedTuple
from urllib.parse import parse_qs

import trio

from ...protocol.errors import INVALID_REQUEST, McpError
from ...protocol.jsonrpc import RequestId, encode_error
from ...protocol.versions import http_revision
from .auth import HttpAnswer, Principal
from .sessions import RETRY_AFTER

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON: Final = "application/json"
EVENT_STREAM: Final = "text/event-stream"
#: The scope extension in which a front end hands over a request body it received whole
#: before calling the application (a ``bytearray``, emptied by whoever takes it): the
#: body is then read with no wait, hence no timer (see :func:`read_body`). The lean
#: front end offers it; under other servers the body is read with ``receive()``.
BODY_EXTENSION: Final = "mcp_actors.body"


class BodyTooLarge(Exception):
    """The request body exceeded the limit (answer 413)."""


class BodyTimeout(Exception):
    """The client did not finish sending the request body in time (answer 408)."""


class ClientGone(Exception):
    """The client disconnected before the request body was read."""


_NONE_REPEATED: Final[frozenset[str]] = frozenset()


class Request(NamedTuple):
    """The parts of an HTTP request scope our transports look at.

    A named tuple: immutable, and made in one call (a frozen attrs class sets each of its
    ten fields through ``object.__setattr__``, about 5,000 instructions more per
    request)."""

    method: str
    path: str
    #: Header names lower-cased; repeated headers joined with ``", "``.
    headers: dict[str, str]
    query: dict[str, list[str]]
    scheme: str
    #: The peer's address (host only), if the server knows it.
    client: str | None = None
    #: Names (lower-cased) of the headers that came more than once.
    repeated: frozenset[str] = frozenset()
    #: The raw query string (no ``?``).
    query_string: str = ""
    #: Who is calling, once the auth hook admitted the request (None: no auth).
    principal: Principal | None = None
    #: The body, when the front end received it whole before calling the application
    #: (:data:`BODY_EXTENSION`); emptied once read. None: read it with ``receive()``.
    ready_body: bytearray | None = None

    @classmethod
    def from_scope(cls, scope: Scope) -> Request:
        """The request of an ASGI ``scope`` (every request's path: kept lean — ASGI
        servers give header names lower-cased already, and most requests repeat none)."""
        raw_headers = scope["headers"]
        if type(raw_headers) is not list:  # ASGI allows any iterable
            raw_headers = list(raw_headers)
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in raw_headers}
        repeated = None if len(headers) == len(raw_headers) else _joined(raw_headers, headers)
        raw_query = scope.get("query_string")
        query_string = raw_query.decode("latin-1") if raw_query else ""
        peer = scope.get("client")
        extensions = scope.get("extensions")
        return cls(
            scope["method"],
            scope["path"],
            headers,
            parse_qs(query_string) if query_string else {},
            scope.get("scheme", "http"),
            None if not peer else str(peer[0]),
            _NONE_REPEATED if repeated is None else frozenset(repeated),
            query_string,
            ready_body=None if extensions is None else extensions.get(BODY_EXTENSION),
        )

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def admitted(self, principal: Principal) -> Request:
        """This request, from ``principal`` (as the auth hook admitted it)."""
        return self._replace(principal=principal)


def _joined(raw_headers: Iterable[tuple[bytes, bytes]], headers: dict[str, str]) -> set[str]:
    """Fill ``headers`` with each repeated header's values joined by ``", "`` (in order);
    the names repeated."""
    values: dict[str, list[str]] = {}
    for raw_name, raw_value in raw_headers:
        values.setdefault(raw_name.decode("latin-1"), []).append(raw_value.decode("latin-1"))
    repeated = {name for name, parts in values.items() if len(parts) > 1}
    for name in repeated:
        headers[name] = ", ".join(values[name])
    return repeated


#: Header values up to this long have their parse remembered (clients send the same
#: ``Accept`` and ``Content-Type`` on every request); at most :data:`_PARSES_KEPT` of them.
_REMEMBERED_LENGTH: Final = 256
_PARSES_KEPT: Final = 64


def media_types(header: str | None) -> frozenset[str]:
    """The media types an ``Accept`` or ``Content-Type`` header names (parameters dropped)."""
    if not header:
        return frozenset()
    if len(header) <= _REMEMBERED_LENGTH:
        return _remembered_media_types(header)
    return _parse_media_types(header)


def _parse_media_types(header: str) -> frozenset[str]:
    return frozenset(part.split(";", 1)[0].strip().lower() for part in header.split(",")) - {""}


_remembered_media_types = functools.lru_cache(maxsize=_PARSES_KEPT)(_parse_media_types)


def accepts(header: str | None, media_type: str) -> bool:
    """Whether an ``Accept`` header admits ``media_type`` (``*/*`` and ``type/*`` count)."""
    types = media_types(header)
    if media_type in types or "*/*" in types:
        return True
    return f"{media_type.split('/', 1)[0]}/*" in types


async def read_body(
    request: Request, receive: Receive, limit: int, timeout: float | None = None
) -> bytes:
    """The whole request body; :class:`BodyTooLarge` past ``limit`` bytes,
    :class:`BodyTimeout` if it is not complete within ``timeout`` seconds (None: no limit),
    :class:`ClientGone` on EOF. Either way what was read so far is dropped. A body the
    front end already holds whole (:attr:`Request.ready_body`) is taken at once: no
    wait, so no timer (a trio cancel scope with a deadline costs ~50,000 instructions)."""
    ready = request.ready_body
    if ready is not None:
        if len(ready) > limit:
            ready.clear()
            raise BodyTooLarge
        body = bytes(ready)
        ready.clear()
        return body
    with trio.move_on_after(math.inf if timeout is None else timeout):
        return await _read_whole_body(receive, limit)
    raise BodyTimeout


async def _read_whole_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _header_list(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    *,
    content_type: str | None = None,
    headers: Iterable[tuple[str, str]] = (),
) -> None:
    """Send a complete response. A ``send`` with a ``respond_whole(status, headers,
    body)`` method (the lean front end's) writes it in one call, with no ASGI message
    built; any other is given the two messages."""
    all_headers = _header_list(headers)
    if content_type is not None:
        all_headers.append(_CONTENT_TYPES.get(content_type) or _content_type(content_type))
    all_headers.append((b"content-length", b"%d" % len(body)))
    whole = getattr(send, "respond_whole", None)
    if whole is not None:
        await whole(status, all_headers, body)
        return
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _content_type(media_type: str) -> tuple[bytes, bytes]:
    return (b"content-type", media_type.encode("latin-1"))


#: The ``Content-Type`` headers our responses carry, encoded once.
_CONTENT_TYPES: Final = {media_type: _content_type(media_type) for media_type in (JSON,)}
#: The headers every event stream starts with, encoded once.
_EVENT_STREAM_HEADERS: Final = (
    _content_type(EVENT_STREAM),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
)


async def respond_answer(send: Send, answer: HttpAnswer) -> None:
    """Write an answer the auth hook gave instead of serving the request."""
    await respond(send, answer.status, answer.body, headers=answer.headers)


async def respond_error(
    send: Send,
    status: int,
    message: str,
    *,
    code: int = INVALID_REQUEST,
    request_id: RequestId | None = None,
    headers: Iterable[tuple[str, str]] = (),
    version: str | None = None,
) -> None:
    """An HTTP error whose body is a JSON-RPC error response, as the revision ``version``
    (the request's ``MCP-Protocol-Version``; None: the HTTP default) writes one: with no
    ``request_id``, 2025-11-25 on omit ``id``, older revisions write ``"id": null``."""
    body = encode_error(request_id, McpError(code, message), http_revision(version))
    await respond(send, status, body, content_type=JSON, headers=headers)


async def respond_body_timeout(send: Send, version: str | None = None) -> None:
    """408 for a body that did not arrive in time; the connection closes with it."""
    await respond_error(
        send,
        408,
        "Request Timeout: the request body did not arrive in time",
        headers=[("connection", "close")],
        version=version,
    )


async def respond_too_many_sessions(send: Send, version: str | None = None) -> None:
    """503 for a new session the session table has no room for; ``Retry-After`` says when
    to ask again."""
    await respond_error(
        send,
        503,
        "Service Unavailable: too many sessions, try again later",
        headers=[("retry-after", str(RETRY_AFTER))],
        version=version,
    )


async def start_event_stream(
    send: Send, headers: Iterable[tuple[str, str]] = (), status: int = 200
) -> None:
    """Begin a ``text/event-stream`` response; the body follows in :func:`send_chunk` calls."""
    all_headers = [*_EVENT_STREAM_HEADERS, *_header_list(headers)]
    await send({"type": "http.response.start", "status": status, "headers": all_headers})


async def send_chunk(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def send_last(send: Send, data: bytes) -> None:
    """The final chunk of a streamed body: it ends the response too (one write fewer)."""
    await send({"type": "http.response.body", "body": data, "more_body": False})


async def end_body(send: Send) -> None:
    await send({"type": "http.response.body", "body": b"", "more_body": False})


#: Seconds an MCP POST's reply is awaited before the endpoint watches for the client leaving.
#:
#: Most replies come at once. Watching for a disconnect takes a task beside the
#: request's (a nursery, a task, its cancellation: a good part of a small call), so
#: the first ``QUICK_REPLY`` seconds are awaited without it: a client that leaves is
#: noticed (and its requests cancelled) at most this late. An event stream starts
#: when its first message (or its end) is there, or after this long: its priming
#: event and a quick answer go out in one write.
QUICK_REPLY = 0.05


async def watch_disconnect(receive: Receive, scope: trio.CancelScope) -> None:
    """Cancel ``scope`` when the client disconnects (run it beside a streaming response)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


async def lifespan(receive: Receive, send: Send) -> None:
    """Answer the server's ``lifespan`` protocol: nothing to start, nothing to stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
