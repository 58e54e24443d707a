"""The protocol engine: one MCP connection as a state machine, bytes in, events out, no I/O.

Modelled on h11's ``Connection``: the engine never reads or writes anything. The
runtime hands it each message it receives (:meth:`Engine.receive`, or
:meth:`Engine.receive_message` for one a transport decoded to route it: either way
the message is decoded once) and gets back an event saying what happened (see
:mod:`.events`); whatever the runtime sends, the engine encodes
(:meth:`Engine.send_request`, :meth:`Engine.respond`, ...), checking first that the
protocol allows it. So everything that is protocol lives here, in one place a test
can drive with plain bytes:

- **the lifecycle of both eras** — the :class:`~.lifecycle.SessionState` and its
  legacy handshake on both sides: a server answers ``initialize`` itself (the
  content of its answer comes from a :class:`DescribeServer` callback) and moves to
  operating on ``notifications/initialized``; a client records the server's answer
  when it reads the ``initialize`` result (:meth:`Engine.read_result`). A request of
  the modern era (2026-07-28: its ``_meta`` names the revision) needs no handshake:
  it climbs its own ladder (:func:`~.modern.admit`) and is served with a state of
  its own, whatever the connection's phase;
- **the id tables, both ways** — the peer's requests in flight (a duplicate id or
  one request too many is refused), our own requests waiting for a response, and
  the progress tokens we handed out, and which of our requests want their log
  messages. The tables hold the runtime's own objects: an
  inbound request is whatever ``open_request`` makes of it (a request actor), an
  outbound one whatever the runtime passed to :meth:`Engine.send_request`; events
  give them back, so that cancellation, progress and logs reach the right one;
- **which call a log message belongs to** — the wire names none, but a transport
  may know the stream it came on (:meth:`Engine.receive`'s ``related_to``: over
  Streamable HTTP, the response stream of one of our requests; in the 2026-07-28
  era a log message always belongs to the request that set its level). Without that,
  it goes to our one request that wants logs when exactly one does, and otherwise to
  the dispatcher, as a notification for the whole connection;
- **batches** (2025-03-26 only), and **which error a bad message gets**: a parse
  error, an invalid request, an unknown method, a method the session may not serve
  yet, a duplicate id, too many requests, an oversized message — each is answered
  with a :class:`~.events.Reply` and the connection goes on;
- **encoding** every outgoing message.

The contract with the runtime is small: every :class:`~.events.RequestReceived` is
ended with :meth:`Engine.finished` (after the answer, or when it was cancelled),
every :meth:`Engine.send_request` with :meth:`Engine.call_finished`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, Generic

import attrs
import msgspec
from msgspec import UNSET, UnsetType

from . import errors
from . import types as t
from .errors import ConnectionClosed, McpError
from .events import (
    BatchReceived,
    CancelRequested,
    Event,
    In,
    LogReceived,
    NotificationReceived,
    Out,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from .fit import LACKING_REVISIONS, fit
from .jsonrpc import (
    JSONRPC_VERSION,
    UNDECODABLE,
    BatchItem,
    Envelope,
    InvalidMessage,
    InvalidPayload,
    Message,
    NotificationMessage,
    RequestId,
    RequestMessage,
    ResultMessage,
    decode,
    decode_payload,
    encode_cancellation,
    encode_error,
)
from .lifecycle import DescribeServer, Phase, SessionState
from .methods import METHODS, MethodSpec
from .modern import (
    CLIENT_CAPABILITIES_KEY,
    MODERN_ONLY_METHODS,
    PROTOCOL_VERSION_KEY,
    AdmittedRequest,
    ModernRequest,
    RequestMeta,
    admit,
    find_modern_marker,
    is_modern_request,
)
from .versions import Revision

_encode: Final = msgspec.json.Encoder().encode
_EMPTY_RESULT: Final = msgspec.Raw(b"{}")
_NO_PARAMS: Final = b"{}"
RawParams = msgspec.Raw | UnsetType
Meta = RequestMeta | None
#: Params the engine has not decoded (a modern request's: its own method table decides).
NOT_DECODED: Final[Any] = object()
#: Makes the runtime's object for a request that may run: (id, method, its row in
#: the method table, the raw params, for a modern request its ``_meta`` and state, and
#: the params decoded, or :data:`NOT_DECODED`).
OpenRequest = Callable[
    [RequestId, str, MethodSpec, msgspec.Raw | UnsetType, ModernRequest | None, Any], In
]


def _closed(*_: Any, **__: Any) -> Any:
    """What a closed engine's callbacks became: it opens no request, describes nothing."""
    raise RuntimeError("the engine is closed")


@attrs.define(eq=False)
class Engine(Generic[In, Out]):
    """One side of one MCP connection: what has been said, and what may be said next.

    ``open_request`` makes the runtime's handle of each request that may run;
    ``describe_server`` (servers only) gives the content of the ``initialize`` answer;
    ``max_in_flight`` bounds the peer's requests running at once (beyond it a request
    is answered with a -32000 error and never runs).
    """

    state: SessionState
    open_request: OpenRequest[In]
    describe_server: DescribeServer | None = None
    max_in_flight: int = 4096
    #: Every request is of the 2026-07-28 era (a server's transport that carries no
    #: other, say one modern HTTP exchange): it climbs that era's ladder directly,
    #: without first being refused by the legacy lifecycle it does not belong to.
    modern_only: bool = False
    #: Our next request's id (see ``MessageStream.first_request_id`` for the first).
    _next_id: int = attrs.field(default=1, kw_only=True, alias="first_request_id")
    _inbound: dict[RequestId, In] = attrs.field(init=False, factory=dict)
    _outbound: dict[RequestId, Out] = attrs.field(init=False, factory=dict)
    _progress: dict[t.ProgressToken, Out] = attrs.field(init=False, factory=dict)
    #: Our requests in flight that want their log messages (see :meth:`send_request`).
    _logs: dict[RequestId, Out] = attrs.field(init=False, factory=dict)
    _peer_gone: bool = attrs.field(init=False, default=False)
    #: ``state.check_inbound`` per method, valid for ``_checked_for`` (see _check_inbound).
    _checked: dict[str, MethodSpec] = attrs.field(init=False, factory=dict)
    _checked_for: tuple[object, object] | None = attrs.field(init=False, default=None)

    # -- receiving ---------------------------------------------------------------------

    def receive(self, data: bytes, related_to: RequestId | None = None) -> Event[In, Out] | None:
        """Take one inbound message; the event it makes, or None if nothing is to be done.

        ``related_to``: the request of ours on whose response stream the transport got
        it, if the transport can tell (a log message then goes to that call).
        """
        try:
            message = decode(data)
        except InvalidMessage as invalid:
            return self._refuse(invalid.request_id, invalid)
        return self.receive_message(message, related_to)

    def receive_message(
        self, envelope: Message | AdmittedRequest, related_to: RequestId | None = None
    ) -> Event[In, Out] | None:  # (``envelope``: one, or a batch)
        """:meth:`receive` for a message a transport has decoded already (see :mod:`.received`),
        or admitted already (:class:`~.modern.AdmittedRequest`: its ``_meta`` is not read again)."""
        if isinstance(envelope, list):
            return self._receive_batch(envelope)
        if isinstance(envelope, AdmittedRequest):
            params, meta = envelope.envelope.params, envelope.meta
            return self._receive_modern(envelope.request_id, envelope.method, params, meta)
        # One message (this is every message's path: no call of its own).
        method = envelope.method
        if method is UNSET:
            return self._receive_response(envelope)
        request_id = envelope.id
        if request_id is UNSET:
            return self._receive_notification(method, envelope.params, related_to)
        assert request_id is not None  # decode() refuses a request with a null id
        params = envelope.params
        serves_modern = self.describe_server is not None  # a server serves both eras
        if serves_modern and (self.modern_only or method in MODERN_ONLY_METHODS):
            return self._receive_modern(request_id, method, params)
        if method == "ping" or method == "initialize":
            if serves_modern and _marked_modern(params):  # a modern ping is -32601
                return self._receive_modern(request_id, method, params)
            if method == "ping":  # allowed in every phase: answered at once, never in flight
                return Reply(self.respond(request_id, _EMPTY_RESULT), request_id)
            return self._receive_initialize(request_id, params)
        return self._receive_request(request_id, method, params, serves_modern)

    def receive_oversized(self, description: str, limit: int) -> Reply:
        """The transport discarded a message over its size ``limit``: the error to answer."""
        error = McpError(errors.INVALID_REQUEST, description, {"limit": limit})
        return self._refuse(None, error)

    def peer_closed(self) -> None:
        """The peer stopped sending: nothing we ask can be answered any more."""
        self._peer_gone = True

    def close(self) -> None:
        """The connection is over: the lifecycle ends. The engine lets go of the
        runtime's callbacks (they point back at the session that owns the engine: a
        reference cycle would outlive the session) and opens no request any more."""
        self._peer_gone = True
        self.state.close()
        self.open_request = _closed
        if self.describe_server is not None:
            self.describe_server = _closed

    def _receive_request(
        self,
        request_id: RequestId,
        method: str,
        raw_params: msgspec.Raw | UnsetType,
        serves_modern: bool,
    ) -> RequestReceived[In] | Reply:
        """A request of the session's era, unless its ``_meta`` says it is modern.

        Its params are decoded here, once, and the era read from the decoded ``_meta``:
        a large request is not scanned for the modern ``_meta`` keys a second time.
        Params that do not decode (their error is answered when the request runs) and
        a request the session refuses are looked at as raw bytes instead.
        """
        try:  # _admit, inline: this is every request's path
            spec = self._check_inbound(method)
            if request_id in self._inbound or len(self._inbound) >= self.max_in_flight:
                self._check_room(request_id)  # raises the error to answer
        except McpError as error:
            if serves_modern and _marked_modern(raw_params):
                return self._receive_modern(request_id, method, raw_params)
            return self._refuse(request_id, error)
        params: Any = NOT_DECODED
        try:
            params = spec.params_decoder.decode(raw_params if raw_params is not UNSET else b"{}")
        except UNDECODABLE:
            if serves_modern and _marked_modern(raw_params):
                return self._receive_modern(request_id, method, raw_params)
        else:
            if serves_modern:
                meta = getattr(params, "meta", None)
                if meta and (PROTOCOL_VERSION_KEY in meta or CLIENT_CAPABILITIES_KEY in meta):
                    return self._receive_modern(request_id, method, raw_params)
        request = self.open_request(request_id, method, spec, raw_params, None, params)
        self._inbound[request_id] = request
        return RequestReceived(request)

    def _admit(self, request_id: RequestId, method: str) -> MethodSpec:
        """The method's row if a request may run now; raises the McpError to answer if not."""
        spec = self._check_inbound(method)
        if request_id in self._inbound or len(self._inbound) >= self.max_in_flight:
            self._check_room(request_id)  # raises the error to answer
        return spec

    def _check_room(self, request_id: RequestId) -> None:
        """Raise the McpError to answer if ``request_id`` is in use or no room is left."""
        if request_id in self._inbound:
            raise errors.invalid_request(f"request id {request_id!r} is already in use")
        if len(self._inbound) >= self.max_in_flight:
            raise McpError(
                errors.REQUEST_REJECTED, f"too many requests in flight (limit {self.max_in_flight})"
            )

    def _check_inbound(self, method: str) -> MethodSpec:
        """``state.check_inbound``, remembered per method once the session is operating
        (its answer then depends only on the negotiated revision and capabilities)."""
        state = self.state
        if state.phase is not Phase.OPERATING:
            return state.check_inbound(method)
        checked_for = self._checked_for
        if (
            checked_for is None
            or checked_for[0] is not state.revision
            or checked_for[1] is not state.local_capabilities
        ):
            self._checked.clear()
            self._checked_for = (state.revision, state.local_capabilities)
        spec = self._checked.get(method)
        if spec is None:
            spec = self._checked[method] = state.check_inbound(method)
        return spec

    # -- the modern era (2026-07-28): each request on its own ----------------------------

    def _receive_modern(  # (``meta``: the request's, when a transport read it already)
        self, request_id: RequestId, method: str, raw_params: RawParams, meta: Meta = None
    ) -> RequestReceived[In] | Reply:
        """A modern request (its ``_meta`` or its method says so) climbs its ladder
        (``protocol.modern.admit``), then the connection's limits; it is served with a
        state of its own.

        One endpoint serves both eras and a connection is never locked into one: a
        modern request is served whatever the legacy session's phase. Only a server
        (an engine that can describe itself) takes requests for modern.
        """
        describe = self.describe_server
        assert describe is not None
        stateless = not self.state.back_channel

        def capabilities(revision: Revision) -> t.ServerCapabilities:
            return describe(revision, stateless=stateless).capabilities

        try:
            spec, modern = admit(
                method,
                raw_params,
                supported=self.state.supported_versions,
                local_capabilities=capabilities,
                meta=meta,
            )
            self._check_room(request_id)
        except McpError as error:
            return self._refuse(request_id, error)
        request = self.open_request(request_id, method, spec, raw_params, modern, NOT_DECODED)
        self._inbound[request_id] = request
        return RequestReceived(request)

    # -- the legacy handshake, and everything else ---------------------------------------

    def _receive_initialize(
        self, request_id: RequestId, raw_params: msgspec.Raw | UnsetType
    ) -> Reply:
        """A server answers ``initialize`` itself: negotiate, then describe the server."""
        state = self.state
        try:
            spec = self._admit(request_id, "initialize")
            params = decode_payload(
                spec.params_decoder, raw_params if raw_params is not UNSET else _NO_PARAMS
            )
            if self.describe_server is None:
                raise errors.method_not_found("initialize")
            revision = state.receive_initialize(params)
        except McpError as error:
            return self._refuse(request_id, error)
        description = self.describe_server(revision, stateless=not state.back_channel)
        state.local_capabilities = description.capabilities
        instructions = description.instructions
        result = t.InitializeResult(
            protocol_version=revision.name,
            capabilities=description.capabilities,
            server_info=description.server_info,
            instructions=instructions if instructions is not None else UNSET,
        )
        if revision.name in LACKING_REVISIONS:  # what an older revision lacks is left out
            result = fit(result, revision)
        return Reply(self.respond(request_id, result), request_id, version=revision.name)

    def _receive_response(self, envelope: Envelope) -> ResponseReceived[Out] | None:
        request_id = envelope.id
        call = self._outbound.pop(request_id, None)  # type: ignore[arg-type]
        if call is None:
            return None  # to a request we never sent, or gave up on: dropped
        self._progress.pop(request_id, None)  # type: ignore[arg-type]
        if self._logs:
            self._logs.pop(request_id, None)  # type: ignore[arg-type]
        return ResponseReceived(call, envelope)

    def _receive_notification(
        self,
        method: str,
        raw_params: msgspec.Raw | UnsetType,
        related_to: RequestId | None = None,
    ) -> Event[In, Out] | None:
        """Route one notification; one the session may not get, or with bad params, is dropped
        (a notification has no answer to carry an error). ``related_to``: see :meth:`receive`."""
        state = self.state
        try:
            spec = state.check_inbound(method)
            params = decode_payload(
                spec.params_decoder, raw_params if raw_params is not UNSET else _NO_PARAMS
            )
        except McpError:
            return None
        if method == "notifications/cancelled":
            request = self._inbound.get(params.request_id)
            return None if request is None else CancelRequested(request, params.reason or None)
        if method == "notifications/progress":
            call = self._progress.get(params.progress_token)
            return None if call is None else ProgressReceived(call, params)
        if method == "notifications/message" and self._logs:
            call = self._log_receiver(related_to)
            if call is not None:
                return LogReceived(call, params)
        if method == "notifications/initialized":
            state.receive_initialized()
        return NotificationReceived(method, params)

    def _log_receiver(self, related_to: RequestId | None) -> Out | None:
        """Our request a log message belongs to: the one whose stream carried it, else the
        only one that wants logs (None: no request of ours wants it)."""
        logs = self._logs
        if related_to is not None:
            return logs.get(related_to)
        if len(logs) == 1:
            return next(iter(logs.values()))
        return None

    def _receive_batch(self, items: list[BatchItem]) -> Event[In, Out]:
        """A batch: an event per element, or one error if the revision has no batches.

        Every element that cannot run is answered inside the batch's array: an
        invalid element, an ``initialize`` (it must stand alone), a request refused.
        """
        if not self.state.revision.batches:
            return self._refuse(
                None,
                errors.invalid_request(
                    f"JSON-RPC batches are not allowed in protocol revision {self.state.revision}"
                ),
            )
        events: list[Event[In, Out]] = []
        for item in items:
            event: Event[In, Out] | None
            if isinstance(item, InvalidMessage):
                event = self._refuse(item.request_id, item)
            elif item.method is UNSET:
                event = self._receive_response(item)
            elif item.id is UNSET:
                event = self._receive_notification(item.method, item.params)
            elif item.method == "initialize":
                refusal = errors.invalid_request("initialize must not be batched")
                event = self._refuse(item.id, refusal)
            elif item.method == "ping":
                event = self._receive_ping_in_batch(item.id)
            else:
                assert item.id is not None  # decode() refuses a request with a null id
                event = self._receive_request(item.id, item.method, item.params, False)
            if event is not None:
                events.append(event)
        return BatchReceived(events)

    def _receive_ping_in_batch(self, request_id: RequestId | None) -> Reply:
        assert request_id is not None  # decode() refuses a request with a null id
        try:
            self._admit(request_id, "ping")
        except McpError as error:
            return self._refuse(request_id, error)
        return Reply(self.respond(request_id, _EMPTY_RESULT), request_id)

    def _refuse(self, request_id: RequestId | None, error: McpError) -> Reply:
        return Reply(self.respond_error(request_id, error), request_id, error.code)

    # -- answering the peer's requests -------------------------------------------------

    def respond(self, request_id: RequestId, result: Any) -> bytes:
        """The result of the peer's request ``request_id``, encoded."""
        return _encode(ResultMessage(JSONRPC_VERSION, request_id, result))

    def respond_error(self, request_id: RequestId | None, error: McpError) -> bytes:
        """The error answering ``request_id``, as the session's revision writes it."""
        return encode_error(request_id, error, self.state.revision)

    def encode_batch(self, answers: list[bytes]) -> bytes:
        """The one array answering a batch."""
        return b"[" + b",".join(answers) + b"]"

    def finished(self, request_id: RequestId) -> None:
        """The peer's request ``request_id`` is over (answered or cancelled): its id is free."""
        self._inbound.pop(request_id, None)

    # -- our requests and notifications ------------------------------------------------

    def send_request(
        self, method: str, params: Any, call: Out, *, progress: bool = False, logs: bool = False
    ) -> tuple[RequestId, bytes]:
        """Start one request of ours; its id and bytes. ``call`` is handed back with its
        response (and its progress, with ``progress``: a ``progressToken`` is added; and
        the log messages that belong to it, with ``logs``: see the module docstring).

        Raises :class:`~.errors.ProtocolViolation` if we may not send ``method`` now, and
        :class:`ConnectionClosed` once the peer is gone (no response could arrive).
        """
        self.state.check_outbound(method)
        if self._peer_gone:
            raise ConnectionClosed(method)
        if params is None:
            params = t.EmptyParams()
        request_id = self._next_id
        self._next_id += 1
        if progress:
            _set_meta(params, "progressToken", request_id)
            self._progress[request_id] = call
        if logs:
            self._logs[request_id] = call
        self._outbound[request_id] = call
        return request_id, _encode(RequestMessage(JSONRPC_VERSION, request_id, method, params))

    def read_result(self, method: str, response: Envelope, result_type: Any = None) -> Any:
        """The result of our request ``method`` (decoded into ``result_type``, by default the
        method's result type), or the peer's error raised as :class:`McpError`.

        A result that does not decode raises McpError -32603 ("Invalid result of ...").
        The result of our ``initialize`` completes a client's side of the handshake
        (and raises if we do not speak the revision the server chose).
        """
        error = response.error
        if error is not UNSET:
            raise McpError(error.code, error.message, error.data)
        spec = METHODS.get(method)
        decoder_type = result_type or (spec.result if spec is not None else None)
        if spec is not None and decoder_type is spec.result and spec.result_decoder is not None:
            decoder = spec.result_decoder
        else:
            decoder = _result_decoder(decoder_type)
        raw = response.result
        assert raw is not UNSET
        try:
            result = decode_payload(decoder, raw)
        except InvalidPayload as invalid:
            # The peer's fault, not our caller's params: -32603 whatever the decode said.
            raise McpError(
                errors.INTERNAL_ERROR, f"Invalid result of {method}: {invalid.detail}"
            ) from None
        if method == "initialize" and self.state.role == "client":
            self.state.receive_initialize_result(result)
        return result

    def cancel_request(self, request_id: RequestId, method: str, reason: str) -> bytes | None:
        """We gave up on our request: the ``notifications/cancelled`` to send, if any
        (never for ``initialize``, nor once the session is closed). A late response is dropped."""
        self.call_finished(request_id)
        if method == "initialize" or self.state.phase is Phase.CLOSED:
            return None
        return encode_cancellation(request_id, reason)

    def call_finished(self, request_id: RequestId) -> None:
        """Our request ``request_id`` is over: forget it, its progress token, its logs."""
        self._outbound.pop(request_id, None)
        self._progress.pop(request_id, None)
        if self._logs:
            self._logs.pop(request_id, None)

    def send_notification(
        self, method: str, params: Any = None, state: SessionState | None = None
    ) -> bytes:
        """A notification of ours, encoded; raises ProtocolViolation if we may not send it
        (checked against ``state``: by default the connection's, else a modern request's)."""
        (state or self.state).check_outbound(method)
        return self.encode_notification(method, params)

    def encode_notification(self, method: str, params: Any = None) -> bytes:
        """A notification, encoded without checks (for progress, already vetted)."""
        message = NotificationMessage(
            JSONRPC_VERSION, method, t.EmptyParams() if params is None else params
        )
        return _encode(message)

    # -- what is in flight -------------------------------------------------------------

    @property
    def inbound(self) -> list[In]:
        """The peer's requests in flight."""
        return list(self._inbound.values())

    @property
    def outbound(self) -> list[Out]:
        """Our requests waiting for a response."""
        return list(self._outbound.values())

    @property
    def peer_gone(self) -> bool:
        """Whether the peer stopped sending: a request of ours could get no answer."""
        return self._peer_gone

    @property
    def inbound_count(self) -> int:
        return len(self._inbound)

    @property
    def outbound_count(self) -> int:
        return len(self._outbound)


def _marked_modern(raw_params: msgspec.Raw | UnsetType) -> bool:
    """Whether raw ``params`` carry a modern ``_meta`` (a C search first: no copy)."""
    return (
        raw_params is not UNSET
        and find_modern_marker(raw_params) is not None
        and is_modern_request(raw_params)
    )


@functools.lru_cache(maxsize=64)
def _result_decoder(result_type: Any) -> msgspec.json.Decoder[Any]:
    """A decoder for a caller's own result type (``Any`` when None), built once per type."""
    return msgspec.json.Decoder(Any if result_type is None else result_type)


def _set_meta(params: Any, key: str, value: Any) -> None:
    if isinstance(params, dict):
        params.setdefault("_meta", {})[key] = value
        return
    meta = params.meta
    params.meta = {key: value} if meta is UNSET or meta is None else {**meta, key: value}
