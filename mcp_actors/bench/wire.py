"""The load generator's client: a lean JSON-RPC peer over a *wire*, and connectors to open one.

The harness does not use :func:`~mcp_actors.open_client`: its per-call cost (an
outbound-call actor, a deadline, a Struct encoded and a result decoded and
validated) would be what we measure. A :class:`Peer` writes pre-encoded requests
(``prefix + id + suffix``), decodes each response's envelope only (the result stays
:class:`msgspec.Raw`; the loops look at its ``isError`` alone) and hands it to a
callback, so the server is what is measured.

A :class:`Wire` moves newline-framed JSON-RPC bytes:

- :class:`~.stdio.StdioWire` (in :mod:`.stdio`) launches the server and talks raw
  newline-delimited JSON over its pipes; it knows the server's pid for ``/proc``;
- :class:`StreamWire` adapts any :class:`~mcp_actors.transports.abc.MessageStream`,
  which is how URL targets (``http://``, ``ws://``) are reached: through
  :func:`mcp_actors.client.targets.connect`, as soon as a transport for the scheme exists.

A *connector* is a zero-argument function returning an async context manager of a
wire: one call, one session (:func:`mcp_actors.bench.targets.connector_for` makes one
from a target string).

The peer speaks the protocol package's vocabulary: every message it reads is a
:class:`~mcp_actors.protocol.jsonrpc.Envelope` (``params`` and ``result`` left
encoded), and what it writes is built from :mod:`mcp_actors.protocol.types` and
:mod:`mcp_actors.protocol.jsonrpc` Structs; only the hot loops' requests are
pre-encoded templates (:func:`request_template`).
"""

from __future__ import annotations

import abc
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import msgspec
import trio
from msgspec import UNSET

from ..protocol.errors import METHOD_NOT_FOUND
from ..protocol.jsonrpc import (
    JSONRPC_VERSION,
    UNDECODABLE,
    Envelope,
    ErrorMessage,
    ErrorObject,
    NotificationMessage,
    ResultMessage,
    peek,
)
from ..protocol.modern import SERVER_INFO_KEY, request_meta
from ..protocol.types import (
    ClientCapabilities,
    EmptyResult,
    Implementation,
    InitializeParams,
    ListRootsResult,
    ProgressParams,
)
from ..protocol.versions import MODERN, SUPPORTED
from ..transports.abc import MessageStream, Outgoing, TransportClosed, encode_inbound

CLIENT_INFO: Final = Implementation(name="mcp-actors-bench", version="1")
READ_SIZE: Final = 1 << 16
#: A pipe's buffer on Linux (its default): what decides when writes may come from the reader.
PIPE_CAPACITY: Final = 65536


class BenchError(Exception):
    """The benchmark cannot go on (the server died, a call failed, a bad option)."""


class WireClosed(BenchError):
    """The server closed its end."""


class Wire(abc.ABC):
    """Newline-framed JSON-RPC bytes to and from one server session."""

    #: The local server process, when this wire launched it (for /proc readings).
    pid: int | None = None
    #: Whether a write can never wait for the server to write (so the reader may write):
    #: true for a pipe while the bytes in flight fit its buffer.
    buffered_writes: bool = False

    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write one or more complete messages, each ending in ``\\n``."""

    @abc.abstractmethod
    async def receive(self) -> list[bytes]:
        """The next messages available (at least one); raises :class:`WireClosed` at the end."""

    #: Whether the session on this wire speaks the modern era (:meth:`agreed`).
    modern: bool = False

    def agreed(self, version: str, *, modern: bool) -> None:
        """The session's era and version are settled (a wire that mirrors them in
        headers, as Streamable HTTP does, takes note of the version too)."""
        self.modern = modern

    async def explain(self, reason: str) -> str:
        """``reason`` (why the wire closed) with what the wire knows of the server's end."""
        return reason

    async def send_stamped(self, data: bytes) -> float:
        """Write like :meth:`send`; return ``time.monotonic()`` read as the bytes leave.

        The clock of a latency that starts at a write (the ``cancel`` workload's). Here,
        the upper bound any wire can give: read before :meth:`send` starts; a wire that
        writes to the OS itself reads it just before the syscall.
        """
        sent = time.monotonic()
        await self.send(data)
        return sent


class StreamWire(Wire):
    """Any :class:`MessageStream` (e.g. a URL target's transport) as a wire."""

    def __init__(self, stream: MessageStream, pid: int | None = None) -> None:
        self.stream = stream
        self.pid = pid

    async def send(self, data: bytes) -> None:
        messages = [Outgoing(line) for line in data.split(b"\n") if line]
        try:
            await self.stream.send_all(messages)
        except TransportClosed as error:
            raise WireClosed(f"the server closed the connection ({error})") from None

    async def receive(self) -> list[bytes]:
        try:
            return [encode_inbound(await self.stream.receive())]
        except TransportClosed as error:
            raise WireClosed(f"the server closed the connection ({error})") from None


Connector = Callable[[], AbstractAsyncContextManager[Wire]]


def cut_short(error: BaseException) -> bool:
    """Whether ``error`` ending a session is a cancellation (a deadline cut it): then
    the session is closed at once, not politely, so that the deadline holds."""
    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(trio.Cancelled) is not None
    return isinstance(error, trio.Cancelled)


def stream_connector(target: str, *, pid: int | None = None) -> Connector:
    """Each call opens ``target`` with :func:`mcp_actors.client.targets.connect`."""
    from ..client.targets import connect as connect_target

    @asynccontextmanager
    async def connect() -> AsyncIterator[Wire]:
        async with trio.open_nursery() as nursery:
            async with connect_target(target, nursery) as stream:
                try:
                    yield StreamWire(stream, pid)
                finally:
                    with trio.CancelScope(shield=True):
                        await stream.aclose()
            nursery.cancel_scope.cancel()

    return connect


# -- the peer ---------------------------------------------------------------------------


class _ToolOutcome(msgspec.Struct, rename="camel"):
    """Of a result, only whether it reports a failed tool call (``isError``)."""

    is_error: bool = False


ResponseCallback = Callable[[Envelope, float], None]
_decode_message: Final = msgspec.json.Decoder(Envelope).decode
_decode_outcome: Final = msgspec.json.Decoder(_ToolOutcome)
_decode_progress: Final = msgspec.json.Decoder(ProgressParams)
_encode: Final = msgspec.json.Encoder().encode


def failure(response: Envelope) -> bytes | None:
    """What went wrong with a call, from its response: the error, or the result of a
    tool call that failed (``isError: true``); None for a success.

    Only ``isError`` of the result is decoded (and no copy of it is kept), so a large
    result costs one more scan, not a second decode into objects.
    """
    if response.error is not UNSET:
        return _encode(response.error)
    if response.result is not UNSET:
        outcome = peek(_decode_outcome, response.result)
        if outcome is not None and outcome.is_error:
            return bytes(response.result)[:300]
    return None


def decode_line(line: bytes) -> Envelope:
    """One message the server wrote; :class:`BenchError` if it is not JSON-RPC."""
    try:
        return _decode_message(line)
    except UNDECODABLE as error:  # too deep a nesting is a RecursionError, not a DecodeError
        raise BenchError(
            f"the server wrote a line that is not JSON-RPC ({error}): {line[:200]!r}"
        ) from None


def request_template(method: str, params: Any = None) -> tuple[bytes, bytes]:
    """Pre-encoded ``prefix`` and ``suffix``: a request is ``prefix + str(id) + suffix``."""
    body: dict[str, Any] = {"method": method}
    if params is not None:
        body["params"] = params
    encoded = _encode(body)
    return b'{"jsonrpc":"2.0","id":', b"," + encoded[1:] + b"\n"


def answer_server_request(request: Envelope) -> bytes:
    """What the client says to a server->client request: the minimum that is true
    (an empty result to ``ping``, no roots to ``roots/list``, else -32601)."""
    assert isinstance(request.id, (int, str)) and isinstance(request.method, str)
    if request.method == "ping":
        result: Any = EmptyResult()
    elif request.method == "roots/list":
        result = ListRootsResult(roots=[])
    else:
        text = f"the benchmark client does not do {request.method}"
        error = ErrorObject(METHOD_NOT_FOUND, text)
        return _encode(ErrorMessage(JSONRPC_VERSION, request.id, error)) + b"\n"
    return _encode(ResultMessage(JSONRPC_VERSION, request.id, result)) + b"\n"


#: How the bench picks the protocol era (see :meth:`Peer.negotiate`).
ERAS: Final = ("auto", "modern", "legacy")


class Peer:
    """One MCP session on a wire, as a benchmark client: handshake, then raw requests.

    The era is negotiated as a real client does (:meth:`negotiate`): ``server/discover``
    first, and a server that answers it with a modern version we speak is spoken to in
    the modern era (2026-07-28: no handshake, every request's ``params._meta`` says the
    version and capabilities, which :meth:`template` stamps on); any other answer
    means ``initialize``, the legacy era.

    :meth:`read_loop` must run in a task. Responses go to :attr:`on_response`
    (``(message, trio.current_time() at arrival)``), called from the reader; after each
    read :attr:`after_read` may write (e.g. the next requests of a closed loop).
    Progress notifications go to :attr:`on_progress`; requests from the server are
    answered at once (``ping``, empty ``roots/list``, else -32601).
    """

    def __init__(self, wire: Wire, protocol_version: str = "2025-11-25") -> None:
        self.wire = wire
        self.protocol_version = protocol_version
        self.next_id = 0
        self.on_response: ResponseCallback = drop_response
        self.on_progress: Callable[[ProgressParams], None] | None = None
        self.after_read: Callable[[], Any] | None = None
        self.closed = trio.Event()
        self.close_reason: str | None = None
        self.initialize_result: dict[str, Any] = {}
        #: What every modern request carries in ``params._meta`` (None: legacy era).
        self.modern_meta: dict[str, Any] | None = None
        self._write_lock = trio.Lock()
        #: The calls of :meth:`call` awaiting their answer, by id: the event set when it
        #: comes (or the wire closes), and the list it is put in. Several may be pending.
        self._pending: dict[int, tuple[trio.Event, list[Envelope]]] = {}

    @property
    def era(self) -> str:
        return "legacy" if self.modern_meta is None else "modern"

    def stamp(self, params: Any) -> Any:
        """``params`` with the modern era's ``_meta`` added (unchanged in the legacy era)."""
        if self.modern_meta is None:
            return params
        values = {} if params is None else dict(msgspec.to_builtins(params))
        given = values.get("_meta")
        values["_meta"] = {**(given if isinstance(given, dict) else {}), **self.modern_meta}
        return values

    def template(self, method: str, params: Any = None) -> tuple[bytes, bytes]:
        """:func:`request_template` of a request of this session's era."""
        return request_template(method, self.stamp(params))

    async def send(self, data: bytes) -> None:
        async with self._write_lock:
            await self.wire.send(data)

    async def send_stamped(self, data: bytes) -> float:
        """Send ``data``; ``time.monotonic()`` as it was written (:meth:`Wire.send_stamped`)."""
        async with self._write_lock:
            return await self.wire.send_stamped(data)

    async def read_loop(self) -> None:
        receive = self.wire.receive
        try:
            while True:
                lines = await receive()
                now = trio.current_time()
                on_response = self.on_response
                replies: list[bytes] = []
                for line in lines:
                    if not line or line.isspace():
                        continue
                    message = decode_line(line)
                    if message.method is UNSET:
                        key = message.id
                        pending = self._pending.pop(key, None) if isinstance(key, int) else None
                        if pending is None:
                            on_response(message, now)
                        else:
                            pending[1].append(message)
                            pending[0].set()
                    elif message.id is not UNSET and message.id is not None:
                        replies.append(answer_server_request(message))
                    elif message.method == "notifications/progress" and self.on_progress:
                        # a malformed progress notification tells nothing: it is skipped
                        params = message.params
                        progress = None if params is UNSET else peek(_decode_progress, params)
                        if progress is not None:
                            self.on_progress(progress)
                if replies:
                    await self.send(b"".join(replies))
                if self.after_read is not None:
                    await self.after_read()
        except WireClosed as closed:
            self.close_reason = str(closed)
        finally:
            self.closed.set()
            for arrived, _ in self._pending.values():
                arrived.set()

    async def call(self, method: str, params: Any = None, *, timeout: float = 30.0) -> msgspec.Raw:
        """One request outside the measured loops: its raw result (raises on error/timeout)."""
        self.next_id += 1
        request_id = self.next_id
        arrived = trio.Event()
        got: list[Envelope] = []
        self._pending[request_id] = (arrived, got)
        try:
            prefix, suffix = self.template(method, params)
            await self.send(prefix + str(request_id).encode() + suffix)
            if self.closed.is_set():
                arrived.set()
            with trio.move_on_after(timeout) as scope:
                await arrived.wait()
        finally:
            self._pending.pop(request_id, None)
        if not got and self.closed.is_set():
            reason = self.close_reason or "the server went away"
            raise WireClosed(f"{reason} (waiting for {method})")
        if scope.cancelled_caught:
            raise BenchError(f"no answer to {method} within {timeout:g} s")
        response = got[0]
        if response.error is not UNSET:
            raise BenchError(f"{method} failed: {_encode(response.error).decode()}")
        if response.result is UNSET:
            raise BenchError(f"the answer to {method} has neither a result nor an error")
        return response.result

    async def negotiate(self, era: str = "auto", timeout: float = 60.0) -> None:
        """Find the era as a real client does, then open the session in it.

        ``auto``: ``server/discover`` at the modern version first; a result listing a
        modern version we speak means the modern era, anything else (an error, no
        answer within ``timeout``) the legacy handshake. ``modern`` never falls back
        (:class:`BenchError` if the server is legacy); ``legacy`` goes straight to
        ``initialize`` at :attr:`protocol_version`. :attr:`initialize_result` then holds
        ``protocolVersion``, ``serverInfo`` and ``capabilities`` in either era.
        """
        if era not in ERAS:
            raise BenchError(f"era must be one of {', '.join(ERAS)}, not {era!r}")
        if era != "legacy":
            refusal = await self._discover(timeout)
            if refusal is None:
                return
            if era == "modern":
                raise BenchError(f"the server does not speak the modern era ({refusal})")
        await self.handshake(timeout)

    async def _discover(self, timeout: float) -> str | None:
        """Probe with ``server/discover``: None once the session is modern, else why not."""
        version = self.protocol_version if self.protocol_version in MODERN else MODERN[0]
        self.modern_meta = request_meta(version, ClientCapabilities(), CLIENT_INFO)
        try:
            found = msgspec.json.decode(await self.call("server/discover", timeout=timeout))
        except BenchError as error:
            if isinstance(error, WireClosed):
                raise
            self.modern_meta = None
            return str(error)
        offered = found.get("supportedVersions") if isinstance(found, dict) else None
        shared = [v for v in (version, *MODERN) if isinstance(offered, list) and v in offered]
        if not shared:
            self.modern_meta = None
            return f"server/discover lists no version of ours: {offered}"
        self.modern_meta = request_meta(shared[0], ClientCapabilities(), CLIENT_INFO)
        self.modern_meta = msgspec.to_builtins(self.modern_meta)
        self.protocol_version = shared[0]
        meta = found.get("_meta") or {}
        self.initialize_result = {
            "protocolVersion": shared[0],
            "serverInfo": meta.get(SERVER_INFO_KEY) or found.get("serverInfo"),
            "capabilities": found.get("capabilities", {}),
        }
        self.wire.agreed(shared[0], modern=True)
        return None

    async def handshake(self, timeout: float = 30.0) -> None:
        """The legacy era's ``initialize`` + ``notifications/initialized``."""
        version = self.protocol_version if self.protocol_version in SUPPORTED else SUPPORTED[0]
        params = InitializeParams(
            protocol_version=version,
            capabilities=ClientCapabilities(),
            client_info=CLIENT_INFO,
        )
        result = await self.call("initialize", params, timeout=timeout)
        self.initialize_result = msgspec.json.decode(result)
        agreed = self.initialize_result.get("protocolVersion")
        self.protocol_version = agreed if isinstance(agreed, str) else version
        self.wire.agreed(self.protocol_version, modern=False)
        initialized = NotificationMessage(JSONRPC_VERSION, "notifications/initialized")
        await self.send(_encode(initialized) + b"\n")

    async def call_tool(self, name: str, arguments: Any, *, timeout: float = 30.0) -> Any:
        """Call a tool; its decoded result (raises if it is an ``isError`` result)."""
        raw = await self.call("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)
        result = msgspec.json.decode(raw)
        if result.get("isError"):
            raise BenchError(f"tool {name} returned an error: {result}")
        return result

    async def list_tools(self) -> list[str]:
        names: list[str] = []
        cursor = None
        for _ in range(100):
            params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            page = msgspec.json.decode(await self.call("tools/list", params))
            names.extend(tool["name"] for tool in page.get("tools", []))
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return names


def drop_response(message: Envelope, now: float) -> None:
    """A :data:`ResponseCallback` that ignores the response."""


@asynccontextmanager
async def open_peer(
    connect: Connector,
    *,
    protocol_version: str = SUPPORTED[0],
    era: str | None = "auto",
    timeout: float = 60.0,
) -> AsyncIterator[Peer]:
    """Connect, start the peer's reader, and open the session in ``era``
    (:meth:`Peer.negotiate`; None: no handshake at all).

    ``timeout`` bounds the handshake (a server process's start-up included). A server
    that goes away during it is a :class:`BenchError` saying what the wire knows of
    why (a stdio server's exit status and the end of its stderr).
    """
    async with connect() as wire, trio.open_nursery() as nursery:
        peer = Peer(wire, protocol_version)
        nursery.start_soon(peer.read_loop)
        try:
            if era is not None:
                with trio.move_on_after(timeout) as scope:
                    try:
                        await peer.negotiate(era, timeout)
                    except WireClosed as closed:
                        raise BenchError(await wire.explain(str(closed))) from None
                if scope.cancelled_caught:
                    raise BenchError(f"no answer to the handshake within {timeout:g} s")
            yield peer
        finally:
            nursery.cancel_scope.cancel()


@asynccontextmanager
async def open_peers(
    connect: Connector,
    count: int,
    *,
    protocol_version: str = SUPPORTED[0],
    era: str | None = "auto",
    timeout: float = 60.0,
) -> AsyncIterator[tuple[list[Peer], list[str]]]:
    """Open ``count`` sessions at once, each held by its own task; yields (peers, failures)."""
    peers: list[Peer] = []
    failures: list[str] = []
    release = trio.Event()
    settled = trio.Event()

    async def hold() -> None:
        try:
            async with open_peer(
                connect, protocol_version=protocol_version, era=era, timeout=timeout
            ) as peer:
                peers.append(peer)
                if len(peers) + len(failures) == count:
                    settled.set()
                await release.wait()
        except BenchError as error:
            failures.append(str(error))
            if len(peers) + len(failures) == count:
                settled.set()

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(hold)
        with trio.move_on_after(timeout + 5):
            await settled.wait()
        try:
            yield peers, failures
        finally:
            release.set()
            nursery.cancel_scope.deadline = trio.current_time() + 30


def structured(result: dict[str, Any]) -> Any:
    """A tool result's structured content, else its first text block parsed as JSON."""
    if "structuredContent" in result:
        return result["structuredContent"]
    for block in result.get("content", []):
        if block.get("type") == "text":
            try:
                return msgspec.json.decode(block["text"])
            except msgspec.DecodeError:
                return block["text"]
    return None
