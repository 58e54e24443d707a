"""The Streamable HTTP transport, client side: every message a POST, replies as JSON or SSE.

:func:`open_streamable_http` yields a
:class:`~mcp_actors.transports.abc.MessageStream` for a client session:

- **sending** a request starts a task that POSTs it and reads the reply — one
  JSON body, or an event stream carrying related messages and then the response
  — feeding everything to the session's bounded inbox. ``send_all`` returns once
  the request body is written, so messages reach the server in the order the
  session sent them, yet a slow reply never blocks the session's writer.
  Notifications and responses are POSTed and answered ``202``;
- the ``Mcp-Session-Id`` the server gives the initialize response is sent on
  every later request, and so is ``MCP-Protocol-Version``: the transport reads
  the negotiated version from the initialize response it carries;
- after ``notifications/initialized`` it opens the GET stream for
  server-initiated messages (a 405 means the server offers none);
- every message read on a request's reply is handed to the session with that
  request's id (:meth:`receive_related`): a log message on it belongs to that call;
- a response stream that breaks before its response arrived is **resumed**: wait
  the server's ``retry`` delay, then GET with ``Last-Event-ID``; the server
  replays what was missed. A request cancelled by the session aborts its POST;
- a 404 for the session means the server forgot it (it expired, or the server
  restarted): the transport **renews** it — replays the session's ``initialize``
  and ``notifications/initialized`` to get a new session id — and sends the
  request again, so the client goes on (server-side state such as subscriptions
  and the log level is gone; a warning says so). If renewing fails, the stream
  ends and the client session closes;
- a 400/404/405 answer to the initialize POST without a JSON-RPC error in its
  body means an older server: the transport falls back to the legacy HTTP+SSE
  transport on the same URL. With a JSON-RPC error, that error is the answer;
- an HTTP error whose body is a JSON-RPC error answers the request with that
  error (``code``, ``message`` and ``data``), whatever the era;
- closing sends DELETE to end the session on the server.

A request of the modern era (2026-07-28: its ``params._meta`` names the protocol
version) stands alone: no session id, and the routing headers of
:mod:`~mcp_actors.protocol.routing_headers` — ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name`` and the ``Mcp-Param-*`` of the tool's
``x-mcp-header`` annotations, which the client teaches :attr:`tool_headers` when it
lists tools. Cancelling such a request closes its response stream (the era has no
cancellation notification over HTTP).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Literal

import httpx
import trio

from ...protocol.errors import McpError
from ...protocol.jsonrpc import RequestId
from ...protocol.modern import is_modern_refusal
from ...protocol.received import error_in_body, read_answer
from ...protocol.routing_headers import Sent, ToolHeaders, client_headers
from ..abc import MessageStream, Outgoing, TransportClosed
from .asgi import EVENT_STREAM, JSON, media_types
from .client_base import (
    Inbox,
    RequestBody,
    ResponseChunks,
    error_response,
    fresh_decoder,
    http_refusal,
    merge_headers,
    new_http_client,
    open_session,
    read_events,
    resume_stream,
    sent_of,
)
from .sse import DEFAULT_MAX_EVENT_SIZE, EventTooLarge, SSEDecoder
from .sse_client import LegacySseConnection, LegacySseError

log = logging.getLogger("mcp_actors.http.client")

_ACCEPT_BOTH = f"{JSON}, {EVENT_STREAM}"
#: Reconnection delay when the server gave no ``retry`` (milliseconds).
DEFAULT_RETRY_MS = 1000
#: Seconds to wait for a response stream to end once its responses have all arrived.
_LINGER = 1.0
_INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
#: Longest wait for the GET stream's request to be written before later messages go out (s).
GET_STREAM_HEADSTART = 2.0


class StreamableHttpClientStream(MessageStream):
    """One client session over Streamable HTTP (see the module docstring)."""

    relates_messages = True

    def __init__(
        self,
        url: str,
        client: httpx.AsyncClient,
        nursery: trio.Nursery,
        *,
        headers: Mapping[str, str] | None = None,
        legacy_fallback: bool = True,
        terminate_on_close: bool = True,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        max_reconnects: int = 5,
        inbox_size: int = 256,
        renew_expired_sessions: bool = True,
    ) -> None:
        self.url = url
        self.client = client
        self.headers = dict(headers or {})
        self.legacy_fallback = legacy_fallback
        self.terminate_on_close = terminate_on_close
        self.max_event_size = max_event_size
        self.max_reconnects = max_reconnects
        self.renew_expired_sessions = renew_expired_sessions
        #: How many times an expired session was renewed with a new initialize.
        self.renewals = 0
        self._initialize_payload: bytes | None = None
        self._renewing = trio.Lock()
        #: Set by the server's answer to initialize; sent on every later request.
        self.session_id: str | None = None
        #: The negotiated version, read from the initialize response; sent as a header.
        self.protocol_version: str | None = None
        #: "streamable", or "legacy" after a fallback to HTTP+SSE.
        self.mode: Literal["streamable", "legacy"] = "streamable"
        self.reconnects = 0
        self._nursery = nursery
        self._inbox = Inbox(inbox_size)
        self._initialize_id: RequestId | None = None
        self._in_flight: dict[RequestId, trio.CancelScope] = {}
        self._abandoned: set[RequestId] = set()
        self._listening = False
        #: Set once the GET stream's first request is written (or has failed).
        self._get_sent = trio.Event()
        self._legacy: LegacySseConnection | None = None
        self._closed = False
        #: The ``Mcp-Param-*`` headers of each tool, as the client last listed them.
        self.tool_headers: ToolHeaders = ToolHeaders()
        #: The version of the last modern (2026-07-28) request; None in the legacy era.
        self._modern_version: str | None = None
        #: Modern requests in flight: cancelling one closes its response stream.
        self._modern_requests: set[RequestId] = set()

    # -- MessageStream -------------------------------------------------------------

    def input_ready(self) -> bool:
        return self._inbox.ready()

    async def receive(self) -> bytes:
        return await self._inbox.get()

    async def receive_related(self) -> tuple[bytes, RequestId | None]:
        return await self._inbox.get_related()

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        for message in messages:
            if self._closed:
                raise TransportClosed("the Streamable HTTP client stream is closed")
            await self._send(message)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._inbox.close()
        for scope in self._in_flight.values():
            scope.cancel()
        if self.session_id is not None and self.terminate_on_close and self._legacy is None:
            with trio.CancelScope(shield=True), trio.move_on_after(2):
                try:
                    await self.client.delete(self.url, headers=self._headers())
                except httpx.HTTPError as error:
                    log.debug("DELETE of the session failed: %s", error)
        await trio.lowlevel.checkpoint()

    # -- sending ---------------------------------------------------------------------

    def _headers(self, accept: str = _ACCEPT_BOTH) -> dict[str, str]:
        headers = {**self.headers, "accept": accept}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.protocol_version is not None:
            headers["mcp-protocol-version"] = self.protocol_version
        return headers

    def _post_headers(self, kind: Sent, payload: bytes) -> dict[str, str]:
        """The headers of a POST: the legacy session's, or a modern request's routing headers."""
        headers = {"content-type": JSON, "content-length": str(len(payload))}
        version = kind.protocol_version
        if version is None and not kind.request_ids and self.session_id is None:
            version = self._modern_version  # a notification in the modern era
        if version is None or kind.method is None:
            return merge_headers(self._headers(), headers)
        routing = client_headers(kind, version, self.tool_headers)
        return merge_headers(self.headers, {"accept": _ACCEPT_BOTH}, headers, routing)

    async def _send(self, message: Outgoing) -> None:
        payload = message.payload
        kind = sent_of(message)
        if self._legacy is not None:
            await self._legacy.post(payload, kind.request_ids)
            return
        if kind.request_ids:
            if kind.method == "initialize":
                self._initialize_id = kind.request_ids[0]
                self._initialize_payload = payload
            await self._nursery.start(self._request, payload, kind)
            return
        if kind.cancels is not None and kind.cancels in self._modern_requests:
            # The modern era has no cancellation notification over HTTP: closing the
            # request's response stream is what cancels it.
            self._abandon(kind.cancels)
            return
        await self._post_quietly(payload, kind)
        if kind.cancels is not None:
            self._abandon(kind.cancels)
        initialized = kind.method == "notifications/initialized"
        if initialized and self.session_id is not None and not self._listening:
            self._listening = True
            self._nursery.start_soon(self._listen)
            # Messages sent after this one reach the server after the GET stream's
            # request: a server may deliver to whichever stream it holds at that moment.
            with trio.move_on_after(GET_STREAM_HEADSTART):
                await self._get_sent.wait()

    def _abandon(self, request_id: RequestId) -> None:
        """The session cancelled ``request_id``: stop reading its reply."""
        scope = self._in_flight.get(request_id)
        if scope is not None:
            self._abandoned.add(request_id)
            scope.cancel()

    async def _post_quietly(self, payload: bytes, kind: Sent, *, may_renew: bool = True) -> None:
        """POST a notification or response; the server answers 202."""
        headers = self._post_headers(kind, payload)
        try:
            response = await self.client.post(
                self.url, content=RequestBody(payload), headers=headers
            )
        except httpx.HTTPError as error:
            log.warning("POST of a notification failed: %s", error)
            return
        if response.status_code == 404 and self.session_id is not None:
            if may_renew and await self._renew(headers.get("mcp-session-id")):
                await self._post_quietly(payload, kind, may_renew=False)
            else:
                self._session_lost()
        elif response.status_code >= 400:
            log.warning("the server refused a notification: HTTP %s", response.status_code)

    async def _request(
        self,
        payload: bytes,
        kind: Sent,
        *,
        may_renew: bool = True,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """POST requests and read their reply; reports started once the body is written."""
        request_ids = kind.request_ids
        pending = set(request_ids)
        modern = kind.protocol_version is not None
        if modern:
            self._modern_version = kind.protocol_version
            self._modern_requests.update(request_ids)
        reported = False

        def written() -> None:
            nonlocal reported
            if not reported:
                reported = True
                task_status.started()

        headers = self._post_headers(kind, payload)
        with trio.CancelScope() as scope:
            for request_id in request_ids:
                self._in_flight[request_id] = scope
            try:
                request = self.client.build_request(
                    "POST", self.url, headers=headers, content=RequestBody(payload, written)
                )
                try:
                    response = await self.client.send(request, stream=True)
                except httpx.HTTPError as error:
                    written()
                    await self._fail(pending, f"cannot reach {self.url}: {error}")
                    return
                written()
                try:
                    session = headers.get("mcp-session-id") if may_renew else None
                    await self._reply(payload, kind, response, pending, session)
                except (httpx.HTTPError, EventTooLarge) as error:
                    await self._fail(pending, f"reading the reply failed: {error}")
                finally:
                    with trio.CancelScope(shield=True):
                        await response.aclose()
            finally:
                written()
                for request_id in request_ids:
                    if self._in_flight.get(request_id) is scope:
                        del self._in_flight[request_id]
                if modern:
                    self._modern_requests.difference_update(request_ids)
        abandoned = pending & self._abandoned
        self._abandoned -= abandoned
        await self._fail(pending - abandoned, "the server closed the response stream unanswered")

    async def _reply(
        self,
        payload: bytes,
        kind: Sent,
        response: httpx.Response,
        pending: set[RequestId],
        sent_in_session: str | None,
    ) -> None:
        status = response.status_code
        initialize = self._initialize_id in pending
        if initialize:
            if status in (400, 404, 405) and self.legacy_fallback and self.session_id is None:
                # An older server (HTTP+SSE only) refuses the POST, and the GET opens
                # its event stream. A modern server refuses with an error of its era,
                # which is the answer, not a reason to try another transport.
                refusal = error_in_body(await response.aread())
                if refusal is not None and is_modern_refusal(status, refusal):
                    await self._fail(pending, refusal)
                else:
                    await response.aclose()
                    await self._fall_back(payload, pending, refusal)
                return
            self.session_id = response.headers.get("mcp-session-id") or self.session_id
        if status == 404 and self.session_id is not None and not initialize:
            await response.aclose()
            if sent_in_session is not None and await self._renew(sent_in_session):
                # Once more, in the new session (and never renewed again for this request).
                await self._request(payload, kind, may_renew=False)
                pending.clear()
                return
            await self._fail(pending, "the session has expired (HTTP 404)")
            self._session_lost()
            return
        if status >= 400:
            found = error_in_body(await response.aread())
            await self._fail(pending, found or http_refusal(status, response.headers))
            return
        content_type = media_types(response.headers.get("content-type"))
        # What this reply carries belongs to its request (a batch's: to none in particular).
        related = kind.request_ids[0] if len(kind.request_ids) == 1 else None
        if JSON in content_type:
            await self._deliver(await response.aread(), pending, related)
        elif EVENT_STREAM in content_type:
            await self._read_stream(response, pending, related)
        elif status != 202:
            await self._fail(pending, f"unexpected reply: HTTP {status} {content_type or ''}")

    async def _fail(self, request_ids: set[RequestId], problem: McpError | str) -> None:
        """Answer ``request_ids`` with the server's error, or a transport failure in words."""
        for request_id in sorted(request_ids, key=str):
            await self._inbox.put(error_response(request_id, problem))
        request_ids.clear()

    # -- receiving -------------------------------------------------------------------

    async def _deliver(
        self, data: bytes, pending: set[RequestId], related: RequestId | None
    ) -> None:
        """Hand one received message to the session (with the request whose reply carried
        it, if any), noting which requests it answers."""
        if pending:  # (a GET stream owes no response: no need to look inside)
            answer = read_answer(data)
            if self._initialize_id is not None and self._initialize_id in answer.answers:
                self.protocol_version = answer.negotiated_version() or self.protocol_version
            pending.difference_update(answer.answers)
        # Bytes, not the decoded message: what a client stream gives its reader (a raw
        # peer's too) stays what the server wrote.
        await self._inbox.put(data, related)

    async def _read_stream(
        self, response: httpx.Response, pending: set[RequestId], related: RequestId | None
    ) -> None:
        """Read a request's event stream; resume it with ``Last-Event-ID`` if it breaks."""
        decoder = SSEDecoder(self.max_event_size)
        failures = 0
        while True:
            progressed = await self._consume(response, decoder, pending, related)
            if not pending:
                return
            if not decoder.last_event_id:
                return  # nothing to resume from: the caller fails what is pending
            failures = 0 if progressed else failures + 1
            if failures > self.max_reconnects:
                return
            await trio.sleep((decoder.retry or DEFAULT_RETRY_MS) / 1000)
            self.reconnects += 1
            decoder = fresh_decoder(decoder)
            resumed = await resume_stream(
                self.client, self.url, self._headers(EVENT_STREAM), decoder.last_event_id
            )
            if resumed is None:
                failures += 1
                continue
            if isinstance(resumed, int):
                if resumed == 404:
                    # What the old session owed is lost with it; later calls may go on.
                    expired = self.session_id
                    await self._fail(pending, "the session has expired (HTTP 404)")
                    if not await self._renew(expired):
                        self._session_lost()
                return
            response = resumed

    async def _consume(
        self,
        response: httpx.Response,
        decoder: SSEDecoder,
        pending: set[RequestId],
        related: RequestId | None,
    ) -> bool:
        """Deliver a response's events until it ends or (if it owed responses) ``pending``
        empties; returns whether any event came. ``related``: the request whose stream
        this is (None: the GET stream)."""
        progressed = False
        owed = bool(pending)
        chunks = ResponseChunks(response)
        try:
            while (events := await read_events(chunks, decoder)) is not None:
                progressed = progressed or bool(events)
                for event in events:
                    if event.event == "message" and event.data.strip():
                        await self._deliver(event.data, pending, related)
                if owed and not pending:
                    # Answered. The server ends the stream now; reading to its end lets
                    # the connection go back to the pool (a server that lingers is cut).
                    with trio.move_on_after(_LINGER):
                        while await chunks.next() is not None:
                            pass
                    break
        except (httpx.HTTPError, EventTooLarge) as error:
            log.debug("response stream broke: %s", error)
        finally:
            await chunks.aclose()
        return progressed

    async def _listen(self) -> None:
        """Keep the session's GET stream open, reconnecting (and resuming) when it drops."""
        decoder = SSEDecoder(self.max_event_size)
        failures = 0

        async def trace(event: str, info: object) -> None:  # httpcore's trace extension
            if event.endswith(".send_request_headers.complete"):
                self._get_sent.set()

        while not self._closed:
            headers = self._headers(EVENT_STREAM)
            if decoder.last_event_id:
                headers["last-event-id"] = decoder.last_event_id
            progressed = False
            try:
                async with self.client.stream(
                    "GET", self.url, headers=headers, extensions={"trace": trace}
                ) as response:
                    self._get_sent.set()
                    content_type = media_types(response.headers.get("content-type"))
                    if response.status_code == 405:
                        return  # the server offers no GET stream
                    if response.status_code == 404:
                        if not await self._renew(headers.get("mcp-session-id")):
                            self._session_lost()
                            return
                        decoder = SSEDecoder(self.max_event_size)  # a new session's stream
                        continue
                    if response.status_code == 200 and EVENT_STREAM in content_type:
                        progressed = await self._consume(response, decoder, set(), None)
            except httpx.HTTPError as error:
                log.debug("GET stream failed: %s", error)
            finally:
                self._get_sent.set()
            failures = 0 if progressed else failures + 1
            if failures > self.max_reconnects:
                log.warning("giving up on the GET stream after %d failures", failures)
                return
            await trio.sleep((decoder.retry or DEFAULT_RETRY_MS) / 1000)
            decoder = fresh_decoder(decoder)

    async def _renew(self, expired: str | None) -> bool:
        """Replace the expired session ``expired`` with a new one; whether that worked.

        Replays the session's own ``initialize`` and ``notifications/initialized``.
        Concurrent requests that met the same 404 wait for one renewal and share it.
        """
        if not self.renew_expired_sessions or self._initialize_payload is None or self._closed:
            return False
        async with self._renewing:
            if self.session_id != expired:
                return self.session_id is not None  # another request renewed it already
            self.session_id = None
            new_id = await open_session(
                self.client, self.url, self._headers(), self._initialize_payload
            )
            if new_id is None:
                return False
            self.session_id = new_id
            self.renewals += 1
            log.warning(
                "the server forgot session %s; renewed it as %s (server-side state such as"
                " subscriptions and the log level was lost)",
                (expired or "")[:8],
                new_id[:8],
            )
        initialized = Sent(method="notifications/initialized")
        await self._post_quietly(_INITIALIZED, initialized, may_renew=False)
        return True

    def _session_lost(self) -> None:
        """The server forgot the session: end the stream so the client session closes."""
        log.info("the server ended the session %s", (self.session_id or "")[:8])
        self.session_id = None
        self._inbox.close()

    # -- legacy fallback -------------------------------------------------------------

    async def _fall_back(
        self, payload: bytes, pending: set[RequestId], refusal: McpError | None
    ) -> None:
        """Speak HTTP+SSE (2024-11-05) to this server from now on, starting with ``payload``.

        If the server is no HTTP+SSE server either, the request fails with the error
        the server gave the POST (``refusal``), when it gave one: that says why.
        """
        legacy = LegacySseConnection(
            self.client,
            self.url,
            self._inbox,
            headers=self.headers,
            max_event_size=self.max_event_size,
        )
        try:
            await self._nursery.start(legacy.run)
        except LegacySseError as error:
            if refusal is None:
                await self._fail(pending, f"neither Streamable HTTP nor HTTP+SSE: {error}")
            else:
                log.info("no HTTP+SSE fallback at %s either: %s", self.url, error)
                await self._fail(pending, refusal)
            return
        log.info("%s speaks the legacy HTTP+SSE transport; falling back", self.url)
        self._legacy = legacy
        self.mode = "legacy"
        request_ids = tuple(pending)
        pending.clear()
        await legacy.post(payload, request_ids)


@asynccontextmanager
async def open_streamable_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    timeout: float = 30.0,
    auth: httpx.Auth | None = None,
    legacy_fallback: bool = True,
    terminate_on_close: bool = True,
    max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    max_reconnects: int = 5,
    renew_expired_sessions: bool = True,
) -> AsyncIterator[StreamableHttpClientStream]:
    """Connect to a Streamable HTTP endpoint such as ``http://127.0.0.1:8000/mcp``.

    ``headers`` go on every request (e.g. ``Authorization``); ``auth`` (an
    ``httpx.Auth``, such as :class:`mcp_actors.auth.client.OAuthClient`) runs on every
    request; ``http_client`` lets you bring your own ``httpx.AsyncClient`` (kept open
    on exit; give it its ``auth`` yourself). Leaving the block
    DELETEs the session (``terminate_on_close``) and stops every background read.
    With ``renew_expired_sessions``, a session the server forgot (HTTP 404) is
    replaced by a new one (a fresh ``initialize``) and the request sent again.
    """
    async with AsyncExitStack() as stack:
        client = http_client
        if client is None:
            client = await stack.enter_async_context(new_http_client(timeout, auth))
        nursery = await stack.enter_async_context(trio.open_nursery())
        stream = StreamableHttpClientStream(
            url,
            client,
            nursery,
            headers=headers,
            legacy_fallback=legacy_fallback,
            terminate_on_close=terminate_on_close,
            max_event_size=max_event_size,
            max_reconnects=max_reconnects,
            renew_expired_sessions=renew_expired_sessions,
        )
        try:
            yield stream
        finally:
            with trio.CancelScope(shield=True):  # an error leaving the block must not be
                await stream.aclose()  # replaced by the Cancelled of a cancelled caller
            nursery.cancel_scope.cancel()
