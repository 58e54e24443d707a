"""Tunables of a session actor: timeouts, queue bounds and what happens when they fill."""

from __future__ import annotations

import attrs

from ..protocol.framing import DEFAULT_MAX_MESSAGE_SIZE


@attrs.frozen
class SessionConfig:
    """Limits and timeouts of one session. Every queue is bounded; each says what overflow does."""

    #: Seconds an outbound request may wait for its response (None: forever).
    request_timeout: float | None = 60.0
    #: Hard ceiling on an outbound request, however much progress resets its timeout.
    max_request_timeout: float | None = 600.0
    #: Whether a progress notification restarts ``request_timeout`` (up to the ceiling).
    reset_timeout_on_progress: bool = True
    #: Encoded messages waiting for the writer. When full, whoever sends waits: the
    #: peer not reading its input slows us down instead of growing memory.
    outbound_queue_size: int = 256
    #: Inbound requests running at once in one session. Beyond it a request is
    #: answered at once with a -32000 "too many requests" error and never runs.
    max_in_flight: int = 4096
    #: Notifications waiting for user handlers (client side). When full the newest
    #: one is dropped and counted in ``statistics().dropped_notifications``.
    notification_queue_size: int = 1024
    #: Largest inbound message, in bytes; larger ones are discarded and answered
    #: with a -32600 error (the session goes on).
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    #: Seconds the requests in flight when the peer stops sending may still take to be
    #: answered, over a transport whose peer can still read then (stdio: a client that
    #: closes stdin may read stdout to the end); after it they are cancelled. 0: at once.
    #: Kept below the 2 s an official SDK client waits for a server to exit after
    #: closing its stdin, before it sends SIGTERM.
    eof_grace: float = attrs.field(default=1.0, validator=attrs.validators.ge(0.0))
