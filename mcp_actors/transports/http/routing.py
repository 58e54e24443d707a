"""The Streamable HTTP endpoint's decisions, as pure functions: no sockets, no awaiting.

The endpoint (:mod:`.endpoint`) does the I/O — reads a body, opens a session,
writes a reply — around these. Each takes what a request said (its method, its
headers, the facts of its decoded body: :class:`~mcp_actors.protocol.received.Post`)
and returns what to do: a :class:`Refusal` (the HTTP status and JSON-RPC error to
answer), or the way to go on. Every status code and error message the endpoint
answers of its own is decided here, and tested without a server
(``tests/test_http_routing.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final

import attrs

from ...protocol.errors import INVALID_REQUEST
from ...protocol.jsonrpc import RequestId
from ...protocol.received import Post
from ...protocol.versions import HTTP_DEFAULT, REVISIONS
from .asgi import EVENT_STREAM, JSON, accepts, media_types

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
#: The longest ``Last-Event-ID`` we look up; ours are a few characters.
MAX_EVENT_ID_LENGTH = 128


@attrs.frozen
class Refusal:
    """An HTTP error the endpoint answers itself: its body a JSON-RPC error with ``code``."""

    status: int
    message: str
    code: int = INVALID_REQUEST
    request_id: RequestId | None = None
    headers: tuple[tuple[str, str], ...] = ()


STATELESS_405 = Refusal(405, "Method Not Allowed: stateless server", headers=(("allow", "POST"),))


@attrs.frozen
class ReplyMode:
    """How a POST's reply may be written, by its ``Accept`` header and the configuration."""

    #: The client accepts ``application/json``.
    json_ok: bool
    #: The reply is one JSON body (else an event stream).
    json: bool


def is_handshake_version(version: str) -> bool:
    """Whether ``version`` names a revision opened by ``initialize`` (2024-11-05 …
    2025-11-25). Any other value — 2026-07-28, or one we have never heard of — asks
    for the per-request era, whose ladder then accepts it or says which versions it
    serves."""
    revision = REVISIONS.get(version)
    return revision is not None and revision.handshake


def modern_header(headers: Mapping[str, str]) -> bool:
    """Whether a request's ``MCP-Protocol-Version`` routes it to the 2026-07-28 era: any
    value but a handshake revision's (an unknown one gets that era's -32022)."""
    version = headers.get(VERSION_HEADER)
    return version is not None and not is_handshake_version(version)


def modern_without_header(post: Post, headers: Mapping[str, str]) -> bool:
    """A 2026-07-28 request (other than ``initialize``) that lacks its required
    ``MCP-Protocol-Version`` header: that era's ladder says so (-32020)."""
    return post.modern and not post.initialize and VERSION_HEADER not in headers


def refuse_method(method: str, headers: Mapping[str, str], *, stateless: bool) -> Refusal | None:
    """405 for what the endpoint does not serve: anything but POST in the 2026-07-28 era,
    GET and DELETE on a stateless server, any method but GET, POST and DELETE."""
    if method == "POST":
        return None
    if modern_header(headers):
        revision = headers.get(VERSION_HEADER)
        return Refusal(
            405,
            f"Method Not Allowed: {method} (protocol revision {revision} speaks POST only)",
            headers=(("allow", "POST"),),
        )
    if method in ("GET", "DELETE"):
        return STATELESS_405 if stateless else None
    allow = "POST" if stateless else "GET, POST, DELETE"
    return Refusal(405, f"Method Not Allowed: {method}", headers=(("allow", allow),))


#: :func:`reply_mode` remembers its answers (a client sends the same ``Accept`` and
#: ``Content-Type`` on every POST), as :func:`.asgi.media_types` does its parses: for the
#: last :data:`_MODES_KEPT` pairs of values of at most :data:`_MODE_KEY_LENGTH`
#: characters together (longer ones are worked out each time).
_MODES_KEPT: Final = 64
_MODE_KEY_LENGTH: Final = 512


def reply_mode(headers: Mapping[str, str], *, json_response: bool) -> ReplyMode | Refusal:
    """How a POST may be answered, or 406 (an ``Accept`` admitting neither reply) or
    415 (a body that is not ``application/json``)."""
    accept, content_type = headers.get("accept"), headers.get("content-type")
    if len(accept or "") + len(content_type or "") <= _MODE_KEY_LENGTH:
        return _remembered_reply_mode(accept, content_type, json_response)
    return _reply_mode(accept, content_type, json_response)


def _reply_mode(
    accept: str | None, content_type: str | None, json_response: bool
) -> ReplyMode | Refusal:
    sse_ok, json_ok = accepts(accept, EVENT_STREAM), accepts(accept, JSON)
    if not (sse_ok or json_ok):
        return Refusal(
            406, "Not Acceptable: Accept must list application/json and text/event-stream"
        )
    if JSON not in media_types(content_type):
        return Refusal(415, "Unsupported Media Type: send application/json")
    return ReplyMode(json_ok, not sse_ok or (json_response and json_ok))


_remembered_reply_mode = functools.lru_cache(maxsize=_MODES_KEPT)(_reply_mode)


def too_large(limit: int) -> Refusal:
    return Refusal(413, f"Payload Too Large: the limit is {limit} bytes")


NO_SESSION_ID = Refusal(400, "Bad Request: Mcp-Session-Id header is required")
UNKNOWN_SESSION = Refusal(404, "Not Found: unknown or expired session")
SESSION_ENDED = Refusal(404, "Not Found: the session has ended")
GET_STREAM_TAKEN = Refusal(409, "Conflict: the session's GET stream is already open")
GET_NOT_ACCEPTABLE = Refusal(406, "Not Acceptable: Accept must list text/event-stream")


def unsupported_version(
    headers: Mapping[str, str], supported: tuple[str, ...], *, default: str | None = None
) -> Refusal | None:
    """400 for an ``MCP-Protocol-Version`` we do not serve (``default``: the version a
    request without the header speaks; None: such a request is not checked)."""
    version = headers.get(VERSION_HEADER) or default
    if version is None or version in supported:
        return None
    return Refusal(400, f"Bad Request: unsupported protocol version {version}")


def refuse_batch(post: Post, negotiated: str | None, headers: Mapping[str, str]) -> Refusal | None:
    """400 for a batch the session's revision (else the header's, else the HTTP default)
    does not allow."""
    if not post.batch:
        return None
    version = negotiated or headers.get(VERSION_HEADER) or HTTP_DEFAULT
    revision = REVISIONS.get(version)
    if revision is not None and revision.batches:
        return None
    return Refusal(400, f"Invalid request: JSON-RPC batches are not allowed in {version}")


def id_in_use(request_id: RequestId) -> Refusal:
    return Refusal(
        400, f"Invalid request: request id {request_id!r} is already in use", request_id=request_id
    )


def event_id_shape(event_id: str) -> bool:
    """Whether a ``Last-Event-ID`` may be an event id at all (short, visible ASCII), so
    that the event store only ever parses ids of a sane shape; anything else is unknown."""
    return len(event_id) <= MAX_EVENT_ID_LENGTH and event_id.isascii() and event_id.isprintable()


def unknown_event_id(event_id: str) -> Refusal:
    return Refusal(400, f"Bad Request: unknown Last-Event-ID {event_id!r}")
