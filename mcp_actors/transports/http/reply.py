"""Writing a reply of the Streamable HTTP endpoint from a session's response stream.

The endpoint (:mod:`.endpoint`) decides what a request gets; this writes it: a POST's
reply — an event stream from its first change on, or one JSON body once every
request of the POST is answered (:func:`reply`) — and the carrying of any stream
(a POST's, a GET's) onto one HTTP response (:func:`carry`) until it is done, the
client leaves (a stream it cannot resume then cancels its requests, see
:func:`_abandoned`) or the access token expires. :func:`refuse` writes a
:class:`~.routing.Refusal`.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from functools import partial

import trio

from ...protocol.received import Post
from .asgi import (
    JSON,
    QUICK_REPLY,
    Receive,
    Request,
    Send,
    end_body,
    respond,
    respond_error,
    send_chunk,
    send_last,
    start_event_stream,
    watch_disconnect,
)
from .routing import SESSION_ENDED, VERSION_HEADER, Refusal
from .session_stream import HttpSessionStream, ResponseStream

log = logging.getLogger("mcp_actors.http")


async def reply(
    transport: HttpSessionStream,
    stream: ResponseStream,
    post: Post,
    json_mode: bool,
    receive: Receive,
    send: Send,
    headers: list[tuple[str, str]],
    deadline: float,
    resume_window: float | None,
) -> None:
    """Write the reply of a POST carrying requests: an event stream from its first
    change on, or (``json_mode``) one JSON body once every request is answered."""
    if not json_mode:
        await _first_change(transport, stream)
        await start_event_stream(send, headers)
        await carry(transport, stream, None, receive, send, deadline, resume_window)
        return
    if not await wait_finished(transport, stream, receive):
        if transport.closed.is_set():
            await refuse(send, SESSION_ENDED, version=transport.version)
        else:  # the client left: a JSON body cannot be resumed
            await transport.abandon(stream)
        return
    if not stream.responses:  # every request was cancelled
        await respond(send, 202, headers=headers)
        return
    await respond(
        send, 200, _json_body(stream.responses, post.batch), content_type=JSON, headers=headers
    )


async def wait_finished(
    transport: HttpSessionStream, stream: ResponseStream, receive: Receive
) -> bool:
    """Wait until every request of the POST is answered; False if the client or session left.

    Stateless, the first :data:`QUICK_REPLY` seconds are awaited without watching the
    client (see there): no other stream of the session (there is none) carries
    messages that must reach the client before this reply. With a session, the
    standalone stream may: the watcher's task is kept there (the order it happens
    to give is what keeps a request's progress on GET ahead of its JSON reply).
    """
    if transport.stateless:
        if not (stream.finished or transport.closed.is_set()):
            await trio.lowlevel.checkpoint()  # as in _first_change
        if not (stream.finished or transport.closed.is_set()):
            with trio.move_on_after(QUICK_REPLY):
                await _settled(transport, stream)
        if stream.finished or transport.closed.is_set():
            return stream.finished
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_disconnect, receive, nursery.cancel_scope)
        await _settled(transport, stream)
        nursery.cancel_scope.cancel()
    return stream.finished


async def carry(
    transport: HttpSessionStream,
    stream: ResponseStream,
    after: str | None,
    receive: Receive,
    send: Send,
    deadline: float,
    resume_window: float | None,
) -> None:
    """Write ``stream`` on this response until it is done, the client goes away, or
    ``deadline`` (the trio time the request's access token expires, see
    :func:`~.auth.token_deadline`) passes: then the response ends and the
    requests still unanswered on a request's stream are cancelled at once. (Not
    after a ``resume_window`` as for a client that left: its connection is still
    open, and its next request on it must not wait behind this one.)

    A stream already finished is written out in one go, without a disconnect
    watcher: nothing is left to wait for but the writes, which fail by themselves
    once the client has gone.
    """
    if stream.finished:
        ended = await transport.pump(
            stream, partial(send_chunk, send), after, partial(send_last, send)
        )
        if not ended:
            with suppress(Exception):  # the connection may be gone
                await end_body(send)
        return
    ended = pumped = False
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_disconnect, receive, nursery.cancel_scope)
        with trio.move_on_at(deadline) as expiry:
            ended = await transport.pump(
                stream, partial(send_chunk, send), after, partial(send_last_shielded, send)
            )
            pumped = True
        nursery.cancel_scope.cancel()
    if ended:
        return
    expired = expiry.cancelled_caught
    if pumped or expired or stream is transport.standalone:
        with suppress(Exception):  # the connection may be gone; nothing to tell anyone
            await end_body(send)
    if pumped or stream is transport.standalone:
        return
    if expired:
        await transport.abandon(stream)
    else:
        await _abandoned(transport, stream, resume_window)


async def _abandoned(
    transport: HttpSessionStream, stream: ResponseStream, window: float | None
) -> None:
    """The client closed the connection of a request's reply stream before it finished.

    Is that a cancellation? The 2026-07-28 transport page says so outright (closing
    the response stream *is* the cancellation). The 2024-11-05 … 2025-11-25 pages say
    a disconnection SHOULD NOT be taken as one, because the client may resume the
    stream with ``Last-Event-ID`` and get the response. We follow both where each
    can hold: a stream the client can resume (it has one of its event ids, and
    there is a session to come back to) waits ``resume_window`` seconds for a new
    connection; if none takes it over, or the client could not resume it at all,
    the requests still unanswered on it are cancelled — a vanished client does not
    keep handlers running.
    """
    if transport.can_resume(stream):
        # What it may come back for must be readable by whichever worker it reaches
        # (later events are written as they come: see HttpSessionStream._append).
        try:
            await transport.store.flush()
        except Exception as error:  # a shared store that cannot write: still abandon below
            log.warning("the events of a stream its client left were not written: %r", error)
        if window is None:
            return
        with trio.move_on_after(window):
            await transport.wait_taken_over(stream)
    if stream.connection is None and not stream.finished:
        await transport.abandon(stream)


async def _settled(transport: HttpSessionStream, stream: ResponseStream) -> None:
    """Return once every request of ``stream`` is answered, or the session has ended."""
    while not stream.finished and not transport.closed.is_set():
        await stream.changed.wait()


async def _first_change(transport: HttpSessionStream, stream: ResponseStream) -> None:
    """Wait (at most :data:`QUICK_REPLY` seconds) until a new response stream has
    something to write beyond its priming event, or is finished."""
    if not _changed(transport, stream):
        # The session was woken by the POST's body; if it runs later in this pass of the
        # scheduler, it answers there and then: a yield is cheaper than a timed wait.
        await trio.lowlevel.checkpoint()
        if not _changed(transport, stream):
            with trio.move_on_after(QUICK_REPLY):
                await stream.changed.wait()


def _changed(transport: HttpSessionStream, stream: ResponseStream) -> bool:
    return bool(stream.changes) or stream.finished or transport.closed.is_set()


async def send_last_shielded(send: Send, data: bytes) -> None:
    """End a streamed body with its last chunk, safe from the disconnect watcher beside it.

    Ending the body makes hypercorn finish the request there and then, inside this
    ``send``: it tells the application the exchange is over (``http.disconnect``,
    which wakes :func:`watch_disconnect`) and then closes the connection
    (``Connection: close``) or arms its keep-alive timer. Cancelled midway by the
    watcher, it would do neither, leaving the connection open forever.
    """
    with trio.CancelScope(shield=True):
        await send_last(send, data)


async def refuse(
    send: Send, refusal: Refusal, request: Request | None = None, *, version: str | None = None
) -> None:
    """Answer ``refusal``, its JSON-RPC error written as the request's revision writes it
    (its ``MCP-Protocol-Version``; or ``version``, the session's)."""
    await respond_error(
        send,
        refusal.status,
        refusal.message,
        code=refusal.code,
        request_id=refusal.request_id,
        headers=refusal.headers,
        version=request.header(VERSION_HEADER) if request is not None else version,
    )


def _json_body(responses: list[bytes], batch: bool) -> bytes:
    if not batch and len(responses) == 1:
        return responses[0]
    parts = [r.strip()[1:-1] if r.lstrip()[:1] == b"[" else r for r in responses]
    return b"[" + b",".join(parts) + b"]"
