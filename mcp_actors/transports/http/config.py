"""Tunables of the HTTP server transports (Streamable HTTP and legacy HTTP+SSE)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Literal

import attrs

from ...protocol.framing import DEFAULT_MAX_MESSAGE_SIZE
from ...protocol.versions import ALL
from .event_store import EventStore


def _count(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    """Validator: a positive integer, or None (no limit)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return
    raise ValueError(f"HttpConfig.{attribute.name} must be a positive integer or None: {value!r}")


_PREFIX = re.compile(r"[A-Za-z0-9_-]{0,31}\.?")


def _session_id_prefix(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not _PREFIX.fullmatch(value):
        raise ValueError(
            "session_id_prefix: at most 32 letters, digits, '-' or '_', optionally ending"
            f" with '.'; not {value!r}"
        )


def _seconds(instance: Any, attribute: attrs.Attribute[Any], value: object) -> None:
    """Validator: a finite, positive number of seconds, or None (no limit)."""
    if value is None or (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    ):
        return
    raise ValueError(f"HttpConfig.{attribute.name} must be positive seconds or None: {value!r}")


@attrs.frozen
class HttpConfig:
    """How an HTTP server speaks MCP. Every queue is bounded; each says what overflow does."""

    #: The Streamable HTTP endpoint (POST, GET and DELETE).
    path: str = "/mcp"
    #: The legacy (2024-11-05) HTTP+SSE endpoints; ``sse_path=None`` turns them off.
    sse_path: str | None = "/sse"
    messages_path: str = "/messages"
    #: Answer requests with one ``application/json`` body instead of an event stream
    #: (related notifications and requests then travel on the GET stream).
    json_response: bool = False
    #: No sessions: every POST is served by a fresh session that ends with it; no GET,
    #: no DELETE, no resumption, no server-to-client requests.
    stateless: bool = False
    #: Seconds a session may go without a request or an open stream before it is
    #: closed (its in-flight requests cancelled); None: never.
    session_idle_timeout: float | None = attrs.field(default=30 * 60.0, validator=_seconds)
    #: Seconds a session may go without a request or an open stream before it rests:
    #: it gives up its tasks and queues (a few KiB stay) until its next request, a
    #: message the server sends it, or its end. Waking costs a task start. None: never.
    session_rest_after: float | None = attrs.field(default=5.0, validator=_seconds)
    #: Sessions at once (Streamable and legacy together). When full, a new session
    #: evicts the least recently used idle one (nothing in flight); if none is idle,
    #: it is refused with 503 and ``Retry-After`` (see :mod:`.sessions`). None: no cap.
    max_sessions: int | None = attrs.field(default=1000, validator=_count)
    #: Sessions at once from one client (peer IP address), with the same eviction
    #: among that client's own sessions. None: no cap.
    max_sessions_per_client: int | None = attrs.field(default=100, validator=_count)
    #: Requests of the 2026-07-28 era in progress at once (each is served by a session
    #: actor of its own, see :mod:`.modern`); one more is refused with
    #: 503 and ``Retry-After``. None: no cap. Open ``subscriptions/listen`` streams are
    #: not counted: the server's listen pool bounds them (``Server.max_listen_streams``).
    max_modern_requests: int | None = attrs.field(default=1000, validator=_count)
    #: Largest request body, in bytes (413 beyond).
    max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE
    #: Seconds a client has to send a whole request body; beyond it the request is
    #: abandoned (408, connection closed) and what was received dropped. None: no limit.
    body_timeout: float | None = attrs.field(default=30.0, validator=_seconds)
    #: Request bodies waiting for a session's reader. When full, the POST that
    #: delivers the next one waits: a client outrunning its session is slowed down.
    inbound_queue_size: int = 64
    #: Legacy SSE: messages waiting for the event stream. When full, the session's
    #: writer waits (the client not reading slows the session down).
    outbound_queue_size: int = 256
    #: Makes a session's event store (the only buffer of undelivered events). None:
    #: in memory, every session sharing the two bounds below (see :mod:`.event_store`).
    event_store_factory: Callable[[str], EventStore] | None = None
    #: In-memory stores: bytes of stored events, all sessions together (payload plus
    #: a fixed overhead per event). Past it the server's oldest events are dropped.
    event_store_max_bytes: int = attrs.field(
        default=64 * 1024 * 1024, validator=[attrs.validators.instance_of(int), _count]
    )
    #: In-memory stores: bytes of one stream's stored events; past it that stream's
    #: oldest events are dropped.
    event_stream_max_bytes: int = attrs.field(
        default=8 * 1024 * 1024, validator=[attrs.validators.instance_of(int), _count]
    )
    #: Seconds of silence after which an open event stream gets a ``: keep-alive`` comment.
    keepalive_interval: float | None = 15.0
    #: Reconnection delay advised to 2025-11-25 clients in each stream's priming event (ms).
    retry_interval: int | None = 1000
    #: Close a resumable (2025-11-25) event stream's connection after this many seconds
    #: so the client polls with ``Last-Event-ID``; None: connections stay open.
    poll_after: float | None = None
    #: Seconds a POST's event stream whose connection the client dropped waits for the
    #: client to resume it (GET with ``Last-Event-ID``) before the requests still
    #: unanswered on it are cancelled; None: until the session ends. A reply the client
    #: cannot resume (a JSON body, a stream it holds no event id of, stateless mode) is
    #: cancelled as soon as its connection closes.
    resume_window: float | None = attrs.field(default=10.0, validator=_seconds)
    #: Seconds the events of a response stream stay stored after its connection wrote
    #: them all and ended normally (for a client whose connection broke in that last
    #: write, which resumes after ``retry_interval``: 1 s, and the official SDKs' clients
    #: retry within 2.5 s); swept when the session's next request comes. An idle session
    #: sleeps only once they are gone, so this also sets how long it stays awake.
    #: None: until evicted or the session ends.
    finished_stream_retention: float | None = attrs.field(default=5.0, validator=_seconds)
    #: Finished response streams remembered for late resumption, per session; older
    #: ones are forgotten: a ``Last-Event-ID`` of theirs is refused, and the events of
    #: one written out to its end go at the session's next request (those of one not
    #: written out stay until acknowledged, evicted, or the session ends).
    max_finished_streams: int = 256
    #: Seconds an idle HTTP/1.1 keep-alive connection stays open before the server closes it.
    keep_alive_timeout: float = attrs.field(
        default=5.0, validator=[attrs.validators.instance_of((int, float)), _seconds]
    )
    #: Connections served at once (either front end, see :mod:`.connection_gate`): past
    #: it, a new client (an IP address holding no connection) is still served on the
    #: reserve, a request for ``health_path`` too; anything else is answered 503 with
    #: ``Retry-After`` and the connection closed. None: no cap.
    max_connections: int | None = attrs.field(default=1000, validator=_count)
    #: Connections served at once from one client (peer IP address), refused alike.
    #: None: no cap.
    max_connections_per_client: int | None = attrs.field(default=100, validator=_count)
    #: Connections kept beyond the caps for health checks and new clients; with these
    #: taken too, a new connection is closed at once, unanswered.
    connection_reserve: int = attrs.field(
        default=16, validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)]
    )
    #: Seconds a client may accept no bytes of a reply before its connection is dropped
    #: and what it was being served cancelled. None: no limit.
    send_timeout: float | None = attrs.field(default=30.0, validator=_seconds)
    #: The HTTP server: "lean" (HTTP/1.1 on trio + httptools, one task per connection, see
    #: :mod:`.lean`) or "hypercorn" (also HTTP/2 and TLS). None: the
    #: ``MCP_ACTORS_HTTP_FRONT_END`` environment variable, else "lean".
    front_end: Literal["lean", "hypercorn"] | None = attrs.field(
        default=None, validator=attrs.validators.in_((None, "lean", "hypercorn"))
    )
    #: Lean front end: bytes of a request line plus headers (431 beyond).
    max_header_size: int = attrs.field(
        default=16 * 1024, validator=[attrs.validators.instance_of(int), _count]
    )
    #: Lean front end: seconds from a request's first byte until its headers are in (408).
    header_timeout: float = attrs.field(
        default=10.0, validator=[attrs.validators.instance_of((int, float)), _seconds]
    )
    #: The health endpoint for load balancers (GET: 200 or 503 with a JSON reason; see
    #: :mod:`.app`). None: no such endpoint.
    health_path: str | None = "/healthz"
    #: A GET with ``Last-Event-ID`` for a session this server does not host replays what
    #: the event store holds after that id, then ends (instead of 404): for workers that
    #: share an ``event_store_factory`` (Redis), so a stream resumed on another worker
    #: loses no stored event. Off by default (a private store has nothing to replay).
    #: Never on a server with an auth hook: the store does not know whose stream it was.
    replay_unknown_sessions: bool = False
    #: Put before every session id this server mints (letters, digits, ``-``, ``_`` and
    #: a final ``.``; at most 32): names the worker, so that a load balancer sends a
    #: legacy session's requests back to it (``deploy/nginx.conf`` maps it to a worker).
    session_id_prefix: str = attrs.field(default="", validator=_session_id_prefix)
    #: Seconds a graceful shutdown lets requests in progress finish before cancelling them.
    graceful_timeout: float = attrs.field(
        default=5.0, validator=[attrs.validators.instance_of((int, float)), _seconds]
    )
    #: ``Host`` values accepted (``"name"``, ``"name:port"``, ``"name:*"``; ``"*"``: any).
    #: None: the loopback names for a loopback bind; any other bind refuses to start
    #: without a list (see :mod:`.security`).
    allowed_hosts: tuple[str, ...] | None = None
    #: ``Origin`` values accepted besides same-origin; None: loopback origins for a
    #: loopback bind, else none.
    allowed_origins: tuple[str, ...] | None = None
    #: The protocol versions served: the legacy ones accepted in ``MCP-Protocol-Version``
    #: after initialization, the 2026-07-28 ones a per-request POST may speak (others get
    #: -32022 naming these). ``serve_http`` puts the server's own list here.
    supported_versions: tuple[str, ...] = ALL
